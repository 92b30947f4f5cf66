//! Rollback: undoing a write. A write that started and never completed is rolled back by the
//! next writer (`rollback_failed_writes`); a completed one by `CALL rollback_to_instant`
//! (`rollback_completed`). Either way its data files are deleted and a rollback instant is
//! recorded as Java writes it: `R.rollback.requested` (the Avro plan), `R.rollback.inflight`,
//! then `R.rollback` (the Avro metadata), and the rolled-back instant's files are removed.

use std::collections::BTreeMap;

use crate::avro::rollback::{self, RollbackPartition, RolledBackInstant};
use crate::concurrency::heartbeat;
use crate::concurrency::{ConcurrencySpec, FailedWritesPolicy};
use crate::error::{FormatError, Result};
use crate::file_name::BaseFileName;
use crate::fs_view::TableListing;
use crate::refusal::TimelineRefusal;
use crate::table::HudiTable;
use crate::timeline::instant::{new_instant_time, Action, Instant, State};
use crate::timeline::Timeline;
use crate::write::markers::{delete_prefix, marker_dir};

/// Rolls back every write that started but never completed: deletes its data files (found
/// through its markers, or by listing when it left none), records a rollback instant, and
/// removes its instant files. Returns the time of the last rollback instant, if any.
///
/// This is single-writer (EAGER) cleaning: every pending instant is taken as failed.
pub async fn rollback_failed_writes(
    table: &HudiTable,
    timeline: &Timeline,
) -> Result<Option<String>> {
    let pending: Vec<Instant> = timeline
        .pending_writes()
        .into_iter()
        .filter(|i| i.action.is_write())
        .cloned()
        .collect();
    rollback_each(table, timeline, pending).await
}

/// Rolls back the failed writes `concurrency`'s failed-writes policy says to: every pending
/// one (EAGER), those whose heartbeat expired (LAZY), or none (NEVER). Under optimistic
/// concurrency the caller holds the table lock and read `timeline` inside it, so a write
/// another writer completed meanwhile is not taken for failed.
pub(crate) async fn rollback_stale_writes(
    table: &HudiTable,
    timeline: &Timeline,
    concurrency: &ConcurrencySpec,
) -> Result<Option<String>> {
    match concurrency.failed_writes {
        FailedWritesPolicy::Eager => rollback_failed_writes(table, timeline).await,
        FailedWritesPolicy::Never => Ok(None),
        FailedWritesPolicy::Lazy => {
            let stale = expired_writes(table, timeline, concurrency).await?;
            rollback_each(table, timeline, stale).await
        }
    }
}

/// The pending writes of `timeline` whose heartbeat expired.
async fn expired_writes(
    table: &HudiTable,
    timeline: &Timeline,
    concurrency: &ConcurrencySpec,
) -> Result<Vec<Instant>> {
    let mut stale = Vec::new();
    for i in timeline.pending_writes() {
        if i.action.is_write()
            && heartbeat::is_expired(table.storage(), &i.timestamp, concurrency.heartbeat_expiry)
                .await?
        {
            stale.push(i.clone());
        }
    }
    Ok(stale)
}

/// Rolls back this writer's own pending write `target` (a write that lost a conflict).
pub(crate) async fn rollback_own(
    table: &HudiTable,
    timeline: &Timeline,
    target: &Instant,
) -> Result<String> {
    let rolled = rollback_each(table, timeline, vec![target.clone()]).await?;
    Ok(rolled.unwrap_or_default())
}

async fn rollback_each(
    table: &HudiTable,
    timeline: &Timeline,
    pending: Vec<Instant>,
) -> Result<Option<String>> {
    let mut last: Option<String> = None;
    for target in pending {
        let files = files_of_failed(table, &target.timestamp).await?;
        let state = if target.state == State::Requested {
            "REQUESTED"
        } else {
            "INFLIGHT"
        };
        let after = timeline
            .last_instant_time()
            .unwrap_or("0")
            .max(last.as_deref().unwrap_or("0"))
            .to_string();
        last = Some(record_rollback(table, timeline, &target, state, &files, &after).await?);
        // a LAZY writer's heartbeat outlives its failure; it goes with the rollback
        table
            .storage()
            .delete(&heartbeat::heartbeat_path(&target.timestamp))
            .await?;
    }
    Ok(last)
}

/// The data files a failed write left: by its markers, or, when it left none, the base files
/// and `.cdc` logs named with its instant.
async fn files_of_failed(table: &HudiTable, ts: &str) -> Result<Vec<String>> {
    let storage = table.storage();
    let mut files: Vec<String> = storage
        .list_all(&marker_dir(ts))
        .await?
        .iter()
        .filter_map(|m| {
            let rel = storage.relative(&m.location);
            let data = rel.strip_prefix(&format!("{}/", marker_dir(ts)))?;
            let data = data.rsplit_once(".marker.").map(|(d, _)| d)?;
            Some(data.to_string())
        })
        .collect();
    if files.is_empty() {
        for m in storage.list_all("").await? {
            let rel = storage.relative(&m.location);
            if rel.starts_with(".hoodie/") {
                continue;
            }
            let name = rel.rsplit('/').next().unwrap_or_default();
            let cdc_log = crate::file_name::LogFileName::parse(name)
                .is_some_and(|l| l.is_cdc && l.instant == ts);
            if cdc_log || BaseFileName::parse(name).is_ok_and(|b| b.instant == ts) {
                files.push(rel);
            }
        }
    }
    Ok(files)
}

/// Rolls `target` back: `R.rollback.requested` (its plan: `files`), `R.rollback.inflight`, the
/// files deleted, the instant's own files removed, then `R.rollback`; `R` is after `after`.
/// Returns `R`.
async fn record_rollback(
    table: &HudiTable,
    timeline: &Timeline,
    target: &Instant,
    state: &str,
    files: &[String],
    after: &str,
) -> Result<String> {
    let storage = table.storage();
    let ts = &target.timestamp;
    let mut by_partition: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in files {
        let p = f
            .rsplit_once('/')
            .map(|(p, _)| p.to_string())
            .unwrap_or_default();
        by_partition.entry(p).or_default().push(f.clone());
    }
    let rollback_time = new_instant_time(Some(after));
    let rolled = RolledBackInstant {
        instant_time: ts.clone(),
        action: target.action.as_str().to_string(),
        state: state.into(),
    };
    let full = |f: &String| format!("{}/{}", storage.location().trim_end_matches('/'), f);
    let plan_parts: Vec<(String, Vec<String>)> = by_partition
        .iter()
        .map(|(p, fs)| (p.clone(), fs.iter().map(full).collect()))
        .collect();
    let corrupt = |path: String, e: rollback::RollbackAvroError| FormatError::Corrupt {
        path,
        reason: e.to_string(),
    };
    let plan = rollback::rollback_plan_avro(&rolled, &plan_parts)
        .map_err(|e| corrupt(format!("{ts}.rollback.requested"), e))?;
    begin_instant(table, timeline, &rollback_time, Action::Rollback, plan).await?;
    let started = std::time::Instant::now();
    let parts = remove_write(table, timeline, target, files).await?;
    let meta = rollback::rollback_metadata_avro(
        &rollback_time,
        &rollback_time,
        started.elapsed().as_millis() as i64,
        &rolled,
        &parts,
        files.len() as i64,
    )
    .map_err(|e| corrupt(format!("{rollback_time}.rollback"), e))?;
    let layout = timeline.writer_layout();
    let done = layout.completing(&rollback_time, Action::Rollback, timeline.latest_time());
    storage.put_if_absent(&layout.path(&done), meta).await?;
    let _ = delete_prefix(storage, &marker_dir(ts)).await;
    Ok(rollback_time)
}

/// Deletes `files` (a write's data files) and the instant files of `target`; the deleted
/// files by partition, as a rollback's metadata records them (absolute paths).
pub(crate) async fn remove_write(
    table: &HudiTable,
    timeline: &Timeline,
    target: &Instant,
    files: &[String],
) -> Result<Vec<RollbackPartition>> {
    let storage = table.storage();
    let mut by_partition: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in files {
        storage.delete(f).await?;
        let p = f
            .rsplit_once('/')
            .map(|(p, _)| p.to_string())
            .unwrap_or_default();
        let full = format!("{}/{f}", storage.location().trim_end_matches('/'));
        by_partition.entry(p).or_default().push(full);
    }
    for f in timeline.files_of(&target.timestamp) {
        storage.delete(&f).await?;
    }
    Ok(by_partition
        .into_iter()
        .map(|(p, fs)| RollbackPartition {
            partition_path: p,
            deleted_files: fs,
            failed_delete_files: vec![],
        })
        .collect())
}

/// Rolls back the completed write `instant` (`CALL rollback_to_instant`), as Java's rollback
/// of a commit does: it must be the latest completed write (Hudi: roll greater commits back
/// first); its data files (base files, the log files it created, `.cdc` logs) are deleted and a
/// rollback instant recorded. The file groups it rewrote read as before it, and those a
/// replacecommit replaced come back.
///
/// Markers are written for its files first and its completed instant file deleted next, so a
/// rollback that stops half-way leaves a failed write the next writer rolls back. Refused:
/// compactions, deltacommits that appended to a log file another commit created (Java's v6
/// appends; hoodie never does), and writes whose file groups' previous versions the cleaner
/// deleted (rolling back would lose those records).
pub async fn rollback_completed(table: &HudiTable, instant: &str) -> Result<String> {
    let timeline = table.timeline().await?;
    let writes: Vec<&Instant> = timeline.completed_writes().collect();
    let Some(target) = writes.iter().find(|i| i.timestamp == instant).copied() else {
        let times: Vec<&str> = writes.iter().map(|i| i.timestamp.as_str()).collect();
        return Err(TimelineRefusal::NoSuchCommit {
            instant: instant.to_string(),
            table: table.storage().location().to_string(),
            commits: times.iter().map(|t| t.to_string()).collect(),
        }
        .into());
    };
    if writes.last().is_some_and(|l| l.timestamp != instant) {
        return Err(TimelineRefusal::LaterCommits {
            instant: instant.to_string(),
        }
        .into());
    }
    if timeline.savepoint_times().iter().any(|s| s == instant) {
        return Err(TimelineRefusal::Savepointed {
            instant: instant.to_string(),
        }
        .into());
    }
    let files = files_of_completed(table, &timeline, target, true).await?;
    retract(table, &timeline, target, &files).await?;
    let after = timeline.last_instant_time().unwrap_or("0").to_string();
    record_rollback(table, &timeline, target, "COMPLETED", &files, &after).await
}

/// The data files completed write `target` wrote (its write stats: base files, log files,
/// `.cdc` logs). Refused: a deltacommit that appended to another commit's log file, and, when
/// `strict` (a rollback of one write rather than a restore of everything after a savepoint),
/// a compaction and a write whose file groups' previous versions the cleaner deleted.
pub(crate) async fn files_of_completed(
    table: &HudiTable,
    timeline: &Timeline,
    target: &Instant,
    strict: bool,
) -> Result<Vec<String>> {
    let instant = &target.timestamp;
    let metadata = timeline
        .read_commit_metadata(table.storage(), target)
        .await?;
    let refuse = |why: String| FormatError::Unsupported {
        feature: format!("rolling back {instant}: {why}"),
    };
    if strict && metadata.operation_type.as_deref() == Some("COMPACT") {
        return Err(refuse("a compaction".into()));
    }
    let listing = TableListing::read(table.storage()).await?;
    let mut files = Vec::new();
    for stat in metadata.write_stats() {
        if stat.log_offset.is_some_and(|o| o > 0) {
            return Err(refuse(format!(
                "it appended to the log file {} another commit created",
                stat.path.as_deref().unwrap_or_default()
            )));
        }
        let prev = stat
            .prev_commit
            .as_deref()
            .filter(|p| !p.is_empty() && *p != "null");
        let group = (
            stat.partition_path.as_deref().unwrap_or_default(),
            stat.file_id.as_deref(),
        );
        if let (true, Some(prev), (partition, Some(id))) = (strict, prev, group) {
            if !listing.has_version(partition, id, prev) && stat.log_offset.is_none() {
                return Err(refuse(format!(
                    "the cleaner deleted the {prev} version of file group {partition}/{id} it replaced"
                )));
            }
        }
        files.extend(stat.path.iter().cloned());
        files.extend(stat.cdc_stats.iter().flat_map(|c| c.keys().cloned()));
    }
    files.retain(|f| !f.is_empty());
    Ok(files)
}

/// Takes completed write `target` off the timeline so readers stop seeing it: markers for
/// `files` first, then its completed instant file deleted. A rollback that stops after this
/// leaves a failed write, which the next writer rolls back by those markers.
pub(crate) async fn retract(
    table: &HudiTable,
    timeline: &Timeline,
    target: &Instant,
    files: &[String],
) -> Result<()> {
    let storage = table.storage();
    for f in files {
        let marker = format!("{}/{f}.marker.CREATE", marker_dir(&target.timestamp));
        storage.put(&marker, Vec::<u8>::new()).await?;
    }
    storage.delete(&timeline.writer_layout().path(target)).await
}

/// Writes `T.<action>.requested` (holding `plan`) and an empty `T.<action>.inflight`
/// (create-if-absent, in the timeline's layout): an instant of a table service begins.
pub(crate) async fn begin_instant(
    table: &HudiTable,
    timeline: &Timeline,
    time: &str,
    action: Action,
    plan: Vec<u8>,
) -> Result<()> {
    let storage = table.storage();
    let layout = timeline.writer_layout();
    let requested = layout.pending_path(time, action.clone(), State::Requested);
    storage.put_if_absent(&requested, plan).await?;
    let inflight = layout.pending_path(time, action, State::Inflight);
    storage.put_if_absent(&inflight, Vec::<u8>::new()).await
}
