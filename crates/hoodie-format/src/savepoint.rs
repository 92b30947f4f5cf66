//! Savepoints and restores. A savepoint of commit `T` is the instant `T.savepoint` (after
//! `T.savepoint.inflight`; `T_C.savepoint` on table versions 8 and 9), whose Avro metadata names the base files a
//! read as of `T` needs; the cleaner keeps them. A restore to it rolls back every write after
//! `T`, newest first, as one `R.restore` instant (plan `R.restore.requested`, the rollback of
//! each instant in its metadata), as Java's restore does.

use std::collections::{BTreeMap, HashSet};

use crate::avro::rollback::{rollback_metadata_record, RolledBackInstant};
use crate::avro::savepoint::{
    parse_savepoint_files, restore_metadata_avro, restore_plan_avro, savepoint_metadata_avro,
};
use crate::error::{FormatError, Result};
use crate::fs_view::FileSystemView;
use crate::refusal::TimelineRefusal;
use crate::table::HudiTable;
use crate::timeline::instant::{new_instant_time, Action, Instant, State};
use crate::timeline::Timeline;
use crate::write::rollback::{begin_instant, files_of_completed, remove_write, retract};

/// The completed savepoints of the active timeline, oldest first.
pub fn savepoints(timeline: &Timeline) -> Vec<String> {
    timeline.savepoint_times()
}

/// The base file names every savepoint keeps (the cleaner never deletes them).
pub async fn savepointed_files(table: &HudiTable, timeline: &Timeline) -> Result<HashSet<String>> {
    let mut out = HashSet::new();
    let layout = timeline.writer_layout();
    let done = timeline
        .instants()
        .iter()
        .filter(|i| i.action == Action::Savepoint && i.state == State::Completed);
    for savepoint in done {
        let rel = layout.path(savepoint);
        let files = parse_savepoint_files(&table.storage().get(&rel).await?, &rel)?;
        out.extend(files.into_values().flatten());
    }
    Ok(out)
}

/// Savepoints completed commit `commit` (`CALL create_savepoint`): the base files of the
/// table as of it are kept until the savepoint is deleted.
pub(crate) async fn create_savepoint(
    table: &HudiTable,
    commit: &str,
    user: &str,
    comments: &str,
) -> Result<()> {
    let timeline = table.timeline().await?;
    if !timeline.completed_writes().any(|i| i.timestamp == commit) {
        return Err(TimelineRefusal::SavepointOfMissingCommit {
            instant: commit.to_string(),
        }
        .into());
    }
    if savepoints(&timeline).iter().any(|s| s == commit) {
        return Err(TimelineRefusal::AlreadySavepointed {
            instant: commit.to_string(),
        }
        .into());
    }
    if let Some(kept) = crate::history::earliest_commit_kept(table.storage(), &timeline).await? {
        if commit < kept.as_str() {
            return Err(TimelineRefusal::BeyondCleanedWindow {
                instant: commit.to_string(),
                kept: kept.to_string(),
            }
            .into());
        }
    }
    let view = FileSystemView::load(table.storage(), &timeline, Some(commit)).await?;
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for s in view.slices() {
        let names = files.entry(s.partition_path.clone()).or_default();
        if let Some(b) = &s.base_file {
            names.push(
                b.rel_path
                    .rsplit('/')
                    .next()
                    .unwrap_or(&b.rel_path)
                    .to_string(),
            );
        }
    }
    let layout = timeline.writer_layout();
    let inflight = layout.pending_path(commit, Action::Savepoint, State::Inflight);
    let completed =
        layout.path(&layout.completing(commit, Action::Savepoint, timeline.latest_time()));
    let at = chrono::Utc::now().timestamp();
    let bytes = savepoint_metadata_avro(user, comments, at, &files, &completed)?;
    let storage = table.storage();
    storage.put_if_absent(&inflight, Vec::<u8>::new()).await?;
    storage.put_if_absent(&completed, bytes).await
}

/// Deletes savepoint `instant` (`CALL delete_savepoint`); its files are then the cleaner's.
pub(crate) async fn delete_savepoint(table: &HudiTable, instant: &str) -> Result<()> {
    let timeline = table.timeline().await?;
    if !savepoints(&timeline).iter().any(|s| s == instant) {
        return Err(TimelineRefusal::NoSuchSavepoint {
            instant: instant.to_string(),
            savepoints: savepoints(&timeline),
        }
        .into());
    }
    let layout = timeline.writer_layout();
    // the completed file first: a delete that stops half-way leaves no savepoint
    let mut files: Vec<&Instant> = timeline
        .files()
        .iter()
        .filter(|i| i.action == Action::Savepoint && i.timestamp == instant)
        .collect();
    files.sort_by_key(|i| std::cmp::Reverse(i.state));
    for f in files {
        table.storage().delete(&layout.path(f)).await?;
    }
    Ok(())
}

/// Restores the table to savepoint `instant` (`CALL rollback_to_savepoint`): every write after
/// it, newest first, taken off the timeline and its files deleted, recorded as one restore.
/// Returns the restore's instant time. Failed writes are rolled back first as `concurrency`'s
/// failed-writes policy says (under optimistic concurrency: only expired ones; the caller holds
/// the table lock).
pub(crate) async fn restore_to_savepoint(
    table: &HudiTable,
    instant: &str,
    concurrency: &crate::concurrency::ConcurrencySpec,
) -> Result<String> {
    let timeline = table.timeline().await?;
    if !savepoints(&timeline).iter().any(|s| s == instant) {
        return Err(TimelineRefusal::NoSavepointToRestore {
            instant: instant.to_string(),
            savepoints: savepoints(&timeline),
        }
        .into());
    }
    crate::write::rollback::rollback_stale_writes(table, &timeline, concurrency).await?;
    let timeline = table.timeline().await?;
    let mut later: Vec<Instant> = timeline
        .completed_writes()
        .filter(|i| i.timestamp.as_str() > instant)
        .cloned()
        .collect();
    later.reverse();
    let mut all_files = Vec::with_capacity(later.len());
    for target in &later {
        all_files.push(files_of_completed(table, &timeline, target, false).await?);
    }
    let restore = new_instant_time(timeline.last_instant_time());
    let layout = timeline.writer_layout();
    let plan: Vec<(String, String)> = later
        .iter()
        .map(|i| (i.timestamp.clone(), i.action.as_str().to_string()))
        .collect();
    let storage = table.storage();
    let requested = layout.pending_path(&restore, Action::Restore, State::Requested);
    let plan = restore_plan_avro(&plan, instant, &requested)?;
    begin_instant(table, &timeline, &restore, Action::Restore, plan).await?;
    let started = std::time::Instant::now();
    let mut rolled = Vec::with_capacity(later.len());
    for (target, files) in later.iter().zip(&all_files) {
        retract(table, &timeline, target, files).await?;
        let parts = remove_write(table, &timeline, target, files).await?;
        let _ = storage
            .delete(&format!(".hoodie/.temp/{}", target.timestamp))
            .await;
        let info = RolledBackInstant {
            instant_time: target.timestamp.clone(),
            action: target.action.as_str().to_string(),
            state: "COMPLETED".into(),
        };
        let record =
            rollback_metadata_record(&restore, &restore, 0, &info, &parts, files.len() as i64)
                .map_err(|e| FormatError::Corrupt {
                    path: requested.clone(),
                    reason: e.to_string(),
                })?;
        rolled.push((info.instant_time, info.action, record));
        for f in files {
            let marker = format!(
                "{}/{f}.marker.CREATE",
                crate::write::transaction::marker_dir(&target.timestamp)
            );
            storage.delete(&marker).await?;
        }
    }
    let completed =
        layout.path(&layout.completing(&restore, Action::Restore, timeline.latest_time()));
    let meta = restore_metadata_avro(
        &restore,
        started.elapsed().as_millis() as i64,
        rolled,
        &completed,
    )?;
    storage.put_if_absent(&completed, meta).await?;
    Ok(restore)
}
