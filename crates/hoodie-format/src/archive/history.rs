//! Archival into the LSM history of table versions 8 and 9 (Hudi's timeline archiver V2 and
//! `LSMTimelineWriter`), and the archived timeline read back from it.
//!
//! An archival writes one level-0 file of the instants it archives and publishes a snapshot
//! naming it, then deletes the instants' files from the active timeline (as on version 6).
//! Once a level holds `hoodie.timeline.compaction.batch.size` files, the oldest of them are
//! merged into one file of the next level; snapshots beyond
//! `hoodie.timeline.manifest.retained.versions` (plus one per level compacted) are removed with
//! the files only they named. A stop at any step leaves a readable history: a file no snapshot
//! names is not read, and instants both archived and still active are archived again by the
//! next archival (the file it would write is already published: it is not written twice).

use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::avro::archive::{archived_entry, ArchivedEntry};
use crate::config;
use crate::error::Result;
use crate::table::HudiTable;
use crate::timeline::instant::{Action, Instant, State};
use crate::timeline::Timeline;

use super::lsm::{DataFileName, FileEntry, History, LsmInstant};
use super::select::comparable;

/// Java's `hoodie.timeline.compaction.target.file.max.bytes` bound on a compaction's input.
const COMPACTION_MAX_BYTES: u64 = 1 << 30;

/// How the LSM history is compacted and cleaned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistorySpec {
    /// `hoodie.timeline.compaction.batch.size`: the files of a level merged at once.
    pub compaction_batch: usize,
    /// `hoodie.timeline.manifest.retained.versions`: the snapshots kept for readers.
    pub retained_versions: usize,
}

/// The history folder of `table`: `.hoodie/<hoodie.timeline.path>/<hoodie.timeline.history.path>`.
pub(crate) fn history_dir(table: &HudiTable) -> String {
    let get = |k: &config::ConfigKey| {
        table
            .config()
            .get(k)
            .or(k.default)
            .unwrap_or_default()
            .to_string()
    };
    format!(
        ".hoodie/{}/{}",
        get(&config::TIMELINE_PATH),
        get(&config::TIMELINE_HISTORY_PATH)
    )
}

fn history(table: &HudiTable) -> History<'_> {
    History::new(table.storage(), history_dir(table))
}

async fn content(table: &HudiTable, timeline: &Timeline, i: &Instant) -> Result<Vec<u8>> {
    let rel = format!("{}/{}", timeline.dir(), i.file_name(timeline.layout()));
    Ok(table.storage().get(&rel).await?.to_vec())
}

fn non_empty(bytes: Vec<u8>) -> Option<Vec<u8>> {
    (!bytes.is_empty()).then_some(bytes)
}

/// The row of one archived action from its instant files (Java
/// `MetadataConversionUtils.createLSMTimelineInstant`); none for an action not completed.
async fn row_of(
    table: &HudiTable,
    timeline: &Timeline,
    states: &[&Instant],
) -> Result<Option<LsmInstant>> {
    let Some(completed) = states.iter().find(|i| i.state == State::Completed) else {
        return Ok(None);
    };
    let pending = |s: State| states.iter().find(|i| i.state == s).copied();
    let pending_action = pending(State::Requested)
        .or(pending(State::Inflight))
        .map(|i| i.action.clone());
    let plan = match pending_action {
        Some(Action::Clean) | Some(Action::Compaction) => match pending(State::Requested) {
            Some(r) => non_empty(content(table, timeline, r).await?),
            None => None,
        },
        Some(Action::ReplaceCommit) | Some(Action::Clustering) => {
            let inflight = match pending(State::Inflight) {
                Some(i) => non_empty(content(table, timeline, i).await?),
                None => None,
            };
            match (inflight, pending(State::Requested)) {
                (Some(i), _) => Some(i),
                (None, Some(r)) => non_empty(content(table, timeline, r).await?),
                (None, None) => None,
            }
        }
        _ => None,
    };
    Ok(Some(LsmInstant {
        instant_time: completed.timestamp.clone(),
        completion_time: completed.completion_time.clone(),
        action: completed.action.as_str().to_string(),
        metadata: non_empty(content(table, timeline, completed).await?),
        plan,
    }))
}

/// Writes the completed actions among `files` (every state of each) as a level-0 file of the
/// history and publishes it; then compacts and cleans the history under `spec`.
pub(crate) async fn write_history(
    table: &HudiTable,
    timeline: &Timeline,
    files: &[Instant],
    spec: &HistorySpec,
) -> Result<()> {
    let mut groups: BTreeMap<(String, String), Vec<&Instant>> = BTreeMap::new();
    for i in files {
        let key = (
            i.timestamp.clone(),
            comparable(&i.action).as_str().to_string(),
        );
        groups.entry(key).or_default().push(i);
    }
    let mut rows = Vec::with_capacity(groups.len());
    for states in groups.values() {
        rows.extend(row_of(table, timeline, states).await?);
    }
    write_rows(table, rows, spec).await
}

/// Writes `rows` as one level-0 file of the history and publishes it (unless a snapshot names
/// it already); then compacts and cleans the history under `spec`.
pub(crate) async fn write_rows(
    table: &HudiTable,
    mut rows: Vec<LsmInstant>,
    spec: &HistorySpec,
) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    rows.sort_by(|a, b| a.instant_time.cmp(&b.instant_time));
    let name = DataFileName {
        min: rows[0].instant_time.clone(),
        max: rows[rows.len() - 1].instant_time.clone(),
        level: 0,
    }
    .name();
    let history = history(table);
    let (latest, manifest) = history.latest().await?;
    // a file an earlier archival published before it stopped is not written twice
    if !manifest.files.iter().any(|f| f.file_name == name) {
        let entry = history.write_file(&name, &rows).await?;
        let mut files = manifest.files;
        files.push(entry);
        history.publish(latest, files).await?;
    }
    compact_and_clean(&history, spec).await
}

/// The oldest files of a level that one compaction merges: at most `batch`, at least two,
/// consecutive, and (past two) not above Java's size bound.
fn candidates(level_files: &[(DataFileName, &FileEntry)], batch: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut total = 0u64;
    for (_, f) in level_files {
        total += f.file_len;
        out.push(f.file_name.clone());
        if out.len() >= batch {
            break;
        }
        if total > COMPACTION_MAX_BYTES {
            if out.len() < 2 {
                total = 0;
                out.clear();
            } else {
                break;
            }
        }
    }
    out
}

/// Merges full levels into the next one, level by level, then cleans.
async fn compact_and_clean(history: &History<'_>, spec: &HistorySpec) -> Result<()> {
    let (mut latest, mut manifest) = history.latest().await?;
    let mut level = 0u32;
    loop {
        let mut level_files: Vec<(DataFileName, &FileEntry)> = manifest
            .files
            .iter()
            .filter_map(|f| Some((DataFileName::parse(&f.file_name)?, f)))
            .filter(|(n, _)| n.level == level)
            .collect();
        if level_files.len() < spec.compaction_batch.max(2) {
            break;
        }
        level_files.sort_by(|a, b| a.1.file_name.cmp(&b.1.file_name));
        let inputs = candidates(&level_files, spec.compaction_batch.max(2));
        if inputs.len() < 2 {
            break;
        }
        let parsed: Vec<DataFileName> = inputs
            .iter()
            .filter_map(|n| DataFileName::parse(n))
            .collect();
        let merged = DataFileName {
            min: parsed
                .iter()
                .map(|n| n.min.clone())
                .min()
                .unwrap_or_default(),
            max: parsed
                .iter()
                .map(|n| n.max.clone())
                .max()
                .unwrap_or_default(),
            level: level + 1,
        }
        .name();
        let mut rows = Vec::new();
        for name in &inputs {
            rows.extend(history.read_file(name).await?);
        }
        let entry = history.write_file(&merged, &rows).await?;
        let gone: HashSet<&String> = inputs.iter().collect();
        let mut files: Vec<FileEntry> = manifest
            .files
            .iter()
            .filter(|f| !gone.contains(&f.file_name))
            .cloned()
            .collect();
        files.push(entry);
        latest = Some(history.publish(latest, files.clone()).await?);
        manifest.files = files;
        level += 1;
    }
    clean(history, spec.retained_versions + level as usize).await
}

/// Keeps the latest `keep` snapshots: older manifests go first, then every data file no kept
/// snapshot names.
async fn clean(history: &History<'_>, keep: usize) -> Result<()> {
    let versions = history.manifest_versions().await?;
    if versions.len() <= keep {
        return Ok(());
    }
    let (old, kept) = versions.split_at(versions.len() - keep);
    let mut needed: BTreeSet<String> = BTreeSet::new();
    for v in kept {
        needed.extend(
            history
                .manifest(Some(*v))
                .await?
                .files
                .into_iter()
                .map(|f| f.file_name),
        );
    }
    for v in old {
        history.delete(&format!("manifest_{v}")).await?;
    }
    for name in history.names().await? {
        if name.ends_with(".parquet") && !needed.contains(&name) {
            history.delete(&name).await?;
        }
    }
    Ok(())
}

/// The archived timeline of a table of version 8 or 9: every archived action's completed
/// state (and, for a clean or compaction, its requested state with the plan), oldest first.
/// An action archived twice (an archival stopped before it deleted the active files) is read
/// once.
pub(crate) async fn history_entries(table: &HudiTable) -> Result<Vec<ArchivedEntry>> {
    let history = history(table);
    let (_, manifest) = history.latest().await?;
    let mut names: Vec<&str> = manifest
        .files
        .iter()
        .map(|f| f.file_name.as_str())
        .collect();
    names.sort_unstable();
    let mut by_key: BTreeMap<(String, String, State), ArchivedEntry> = BTreeMap::new();
    for name in names {
        let path = format!("{}/{name}", history_dir(table));
        for row in history.read_file(name).await? {
            for e in entries_of(&row, &path)? {
                let key = (
                    e.instant.timestamp.clone(),
                    e.instant.action.as_str().to_string(),
                    e.instant.state,
                );
                by_key.entry(key).or_insert(e);
            }
        }
    }
    Ok(by_key.into_values().collect())
}

/// The archived entries one history row stands for.
fn entries_of(row: &LsmInstant, path: &str) -> Result<Vec<ArchivedEntry>> {
    let action = Action::parse(&row.action);
    let mut completed = Instant::new(&row.instant_time, action.clone(), State::Completed);
    completed.completion_time = row.completion_time.clone();
    let mut out = vec![archived_entry(
        completed,
        row.metadata.as_deref().unwrap_or_default(),
        path,
    )?];
    // a completed compaction is a commit whose row carries the plan
    let planned = match action {
        Action::Clean => Some(Action::Clean),
        Action::Commit => Some(Action::Compaction),
        _ => None,
    };
    if let (Some(plan), Some(a)) = (&row.plan, planned) {
        let requested = Instant::new(&row.instant_time, a, State::Requested);
        out.push(archived_entry(requested, plan, path)?);
    }
    Ok(out)
}

/// Whether the history holds any archived instant.
pub(crate) async fn has_history(table: &HudiTable) -> Result<bool> {
    Ok(!history(table).latest().await?.1.files.is_empty())
}
