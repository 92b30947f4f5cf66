//! Archival: moving the oldest instants out of the active timeline into the archived timeline
//! (`.hoodie/archived/.commits_.archive.N_<token>` on table version 6, the LSM history of
//! [`history`] on 8 and 9), so listing and planning cost what the retention keeps, not what the
//! table's age adds up to.
//!
//! An archival writes one new archive file (create-if-absent, so a half-written one never
//! exists), then deletes the archived instants' requested and inflight files, then their
//! completed files oldest first: at every step the active timeline has no holes and no
//! completed instant looks pending. One stopped after the archive file is written leaves its
//! instants in both timelines; the next archival archives them again and readers of the
//! archive keep one entry per instant state.

pub(crate) mod history;
pub(crate) mod lsm;
pub(crate) mod select;

pub use history::HistorySpec;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use crate::avro::archive::{
    archive_file_bytes, archived_record, parse_archive_file, ArchivedEntry,
};
use crate::avro::clean::parse_cleaner_plan;
use crate::clean::{earliest_commit_to_retain_at, CleanSpec};
use crate::config::{self, ConfigKey};
use crate::error::{FormatError, Result};
use crate::table::HudiTable;
use crate::timeline::instant::{Action, Instant, State};
use crate::timeline::Timeline;

use select::{comparable, instants_to_archive, SelectInput};

/// The write token of archive files (Java's default log write token).
const ARCHIVE_WRITE_TOKEN: &str = "1-0-1";

/// When and how far a table's timeline is archived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveSpec {
    /// Archive after every commit (`hoodie.archive.automatic`).
    pub automatic: bool,
    /// `hoodie.keep.min.commits`.
    pub min_commits: usize,
    /// `hoodie.keep.max.commits`.
    pub max_commits: usize,
    /// `hoodie.commits.archival.batch`.
    pub batch: usize,
    /// `hoodie.archive.beyond.savepoint`.
    pub beyond_savepoint: bool,
    /// Merge-on-read tables: the deltacommits a compaction is triggered by
    /// (`hoodie.compact.inline.max.delta.commits`), which archival leaves on the timeline.
    pub compaction_delta_commits: Option<usize>,
    /// Table versions 8 and 9: how the LSM history is compacted and cleaned.
    pub history: HistorySpec,
}

/// The keys an archival reads.
pub const ARCHIVE_KEYS: &[ConfigKey] = &[
    config::ARCHIVE_AUTOMATIC,
    config::ARCHIVE_ASYNC,
    config::KEEP_MIN_COMMITS,
    config::KEEP_MAX_COMMITS,
    config::COMMITS_ARCHIVAL_BATCH,
    config::TIMELINE_COMPACTION_BATCH_SIZE,
    config::TIMELINE_MANIFEST_RETAINED_VERSIONS,
    config::ARCHIVE_BEYOND_SAVEPOINT,
];

impl ArchiveSpec {
    /// The spec from `get` (the value a key has, set or its default) for a table that is
    /// merge-on-read or not; a value a key does not take, or a max not above the min, is an
    /// error with Hudi's message.
    pub fn resolve(
        get: impl Fn(&ConfigKey) -> Option<String>,
        merge_on_read: bool,
    ) -> Result<Self> {
        let value = |key: &ConfigKey| get(key).or(key.default.map(str::to_string));
        let number = |key: &ConfigKey| -> Result<usize> {
            let v = value(key).unwrap_or_default();
            key.check(&v)?;
            Ok(v.trim().parse::<usize>().unwrap_or(usize::MAX))
        };
        let flag = |key: &ConfigKey| -> Result<bool> {
            let v = value(key).unwrap_or_default();
            key.check(&v)?;
            Ok(v.trim().eq_ignore_ascii_case("true"))
        };
        flag(&config::ARCHIVE_ASYNC)?;
        let spec = Self {
            automatic: flag(&config::ARCHIVE_AUTOMATIC)?,
            min_commits: number(&config::KEEP_MIN_COMMITS)?,
            max_commits: number(&config::KEEP_MAX_COMMITS)?,
            batch: number(&config::COMMITS_ARCHIVAL_BATCH)?,
            beyond_savepoint: flag(&config::ARCHIVE_BEYOND_SAVEPOINT)?,
            compaction_delta_commits: if merge_on_read {
                Some(number(&config::COMPACT_INLINE_MAX_DELTA_COMMITS)?)
            } else {
                None
            },
            history: HistorySpec {
                compaction_batch: number(&config::TIMELINE_COMPACTION_BATCH_SIZE)?,
                retained_versions: number(&config::TIMELINE_MANIFEST_RETAINED_VERSIONS)?,
            },
        };
        if spec.max_commits <= spec.min_commits {
            return Err(crate::refusal::OptionConflict::ArchiveBounds {
                max_key: config::KEEP_MAX_COMMITS.key,
                max: spec.max_commits,
                min_key: config::KEEP_MIN_COMMITS.key,
                min: spec.min_commits,
            }
            .into());
        }
        Ok(spec)
    }
}

/// The archive folder relative to the table base (`hoodie.archivelog.folder` under `.hoodie`).
fn archive_dir(table: &HudiTable) -> String {
    let folder = table
        .config()
        .get(&config::ARCHIVELOG_FOLDER)
        .unwrap_or("archived");
    format!(".hoodie/{folder}")
}

/// The version of an archive file name `.commits_.archive.N_<token>`.
fn archive_version(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(".commits_.archive.")?;
    rest.split('_').next()?.parse().ok()
}

/// The archive files of a table, oldest first: (relative path, version).
async fn archive_files(table: &HudiTable) -> Result<Vec<(String, u32)>> {
    let dir = archive_dir(table);
    let mut files: Vec<(String, u32)> = table
        .storage()
        .list_dir(&dir)
        .await?
        .iter()
        .filter_map(|m| {
            let name = m.location.filename()?;
            Some((format!("{dir}/{name}"), archive_version(name)?))
        })
        .collect();
    files.sort_by_key(|(_, v)| *v);
    Ok(files)
}

/// The archived timeline: every archived instant state once, oldest first (on table versions
/// 8 and 9 each action's completed state, and a clean's or compaction's plan as its requested
/// state).
pub async fn archived_entries(table: &HudiTable) -> Result<Vec<ArchivedEntry>> {
    if table.config().version()? >= 8 {
        return history::history_entries(table).await;
    }
    let mut by_state: BTreeMap<(String, String, State), ArchivedEntry> = BTreeMap::new();
    for (rel, _) in archive_files(table).await? {
        let bytes = table.storage().get(&rel).await?;
        for e in parse_archive_file(&bytes, &rel)? {
            let key = (
                e.instant.timestamp.clone(),
                e.instant.action.as_str().to_string(),
                e.instant.state,
            );
            by_state.insert(key, e);
        }
    }
    Ok(by_state.into_values().collect())
}

/// The completed writes (commits, deltacommits, replacecommits) of the archived timeline of a
/// table of version 8 or 9, with their completion times and commit metadata, oldest first
/// (none on version 6, whose readers do not cover archived writes).
pub async fn archived_writes(
    table: &HudiTable,
) -> Result<Vec<(Instant, crate::timeline::CommitMetadata)>> {
    if table.config().version()? < 8 {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for e in history::history_entries(table).await? {
        if e.instant.state != State::Completed || !e.instant.action.is_write() {
            continue;
        }
        let json = e.commit_metadata_json().unwrap_or_default();
        let metadata = crate::timeline::CommitMetadata::parse(&json, "archived commit metadata")?;
        out.push((e.instant, metadata));
    }
    Ok(out)
}

/// Fails as Hudi does when a CDC read from `begin` starts before the last archived instant:
/// the changes of archived commits are not read.
pub async fn check_cdc_start(table: &HudiTable, timeline: &Timeline, begin: &str) -> Result<()> {
    let archived = if table.config().version()? >= 8 {
        history::has_history(table).await?
    } else {
        !archive_files(table).await?.is_empty()
    };
    if !archived {
        return Ok(());
    }
    let last = archived_entries(table)
        .await?
        .into_iter()
        .map(|e| e.instant.timestamp)
        .max();
    match last {
        Some(last) if last.as_str() > begin => Err(FormatError::CdcStartArchived {
            begin: begin.to_string(),
            first_active: timeline
                .instants()
                .first()
                .map(|i| i.timestamp.clone())
                .unwrap_or_default(),
        }),
        _ => Ok(()),
    }
}

/// The latest clean past planning and the earliest instant its plan kept.
async fn latest_clean(
    table: &HudiTable,
    timeline: &Timeline,
) -> Result<Option<(String, Option<String>)>> {
    let Some(clean) = timeline
        .instants()
        .iter()
        .rev()
        .find(|i| i.action == Action::Clean && i.state != State::Requested)
    else {
        return Ok(None);
    };
    let rel = format!(
        "{}/{}",
        timeline.dir(),
        Instant::new(&clean.timestamp, Action::Clean, State::Requested).file_name(1)
    );
    let plan = parse_cleaner_plan(&table.storage().get(&rel).await?, &rel)?;
    Ok(Some((
        clean.timestamp.clone(),
        plan.earliest_instant_to_retain.map(|(t, _)| t),
    )))
}

/// Archives `table` under `spec` and the cleaner's `clean`: when its active timeline holds more than the max commits,
/// the oldest instants down to the min that nothing still needs move to a new archive file.
/// Returns the instant files archived (none when nothing was due).
pub(crate) async fn run_archive(
    table: &HudiTable,
    spec: &ArchiveSpec,
    clean: &CleanSpec,
) -> Result<Vec<Instant>> {
    run_archive_on(table, spec, clean, table.timeline().await?).await
}

/// [`run_archive`] on `timeline`, the table's current timeline as the caller knows it (a
/// writer right after its commit and clean), so that it is not listed again.
pub async fn run_archive_on(
    table: &HudiTable,
    spec: &ArchiveSpec,
    clean: &CleanSpec,
    timeline: Timeline,
) -> Result<Vec<Instant>> {
    let history = table.config().version()? >= 8;
    let input = SelectInput {
        min_commits: spec.min_commits,
        max_commits: spec.max_commits,
        beyond_savepoint: spec.beyond_savepoint,
        // (Hudi's archival counts the clean's hours back from the latest commit)
        earliest_commit_to_retain: earliest_commit_to_retain_at(clean, &timeline, None)
            .map(|i| i.timestamp.clone()),
        latest_clean: latest_clean(table, &timeline).await?,
        compaction_delta_commits: spec.compaction_delta_commits,
        history,
    };
    let chosen: HashSet<(String, Action)> =
        instants_to_archive(&timeline, &input).into_iter().collect();
    if chosen.is_empty() {
        return Ok(Vec::new());
    }
    let mut files: Vec<Instant> = timeline
        .files()
        .iter()
        .filter(|i| chosen.contains(&(i.timestamp.clone(), comparable(&i.action))))
        .cloned()
        .collect();
    files.sort_by(|a, b| (&a.timestamp, a.state).cmp(&(&b.timestamp, b.state)));
    if history {
        history::write_history(table, &timeline, &files, &spec.history).await?;
    } else {
        write_archive(table, &timeline, &files, spec.batch).await?;
    }
    delete_archived(table, &timeline, &files).await?;
    // no data file changed: the kept listing stands for the shorter timeline too
    let after = timeline.without_files(&files);
    table.advance_listing(&timeline, &after, &crate::fs_view::FileChange::default());
    Ok(files)
}

/// The content an archived entry is made from: the instant's file, except that a compaction's
/// plan is in its requested file whatever its state.
async fn content_of(
    table: &HudiTable,
    timeline: &Timeline,
    i: &Instant,
) -> Result<(String, bytes::Bytes)> {
    let source = if i.action == Action::Compaction {
        Instant::new(&i.timestamp, Action::Compaction, State::Requested)
    } else {
        i.clone()
    };
    let rel = format!("{}/{}", timeline.dir(), source.file_name(timeline.layout()));
    Ok((rel.clone(), table.storage().get(&rel).await?))
}

async fn write_archive(
    table: &HudiTable,
    timeline: &Timeline,
    files: &[Instant],
    batch: usize,
) -> Result<()> {
    // each file's modification time, its state transition time as Java's archiver records it
    let modified: HashMap<String, i64> = table
        .storage()
        .list_dir(timeline.dir())
        .await?
        .into_iter()
        .filter_map(|m| {
            let name = m.location.filename()?.to_string();
            Some((name, m.last_modified.timestamp_millis()))
        })
        .collect();
    let mut records = Vec::with_capacity(files.len());
    for i in files {
        let (rel, bytes) = content_of(table, timeline, i).await?;
        let transition = modified
            .get(&i.file_name(timeline.layout()))
            .map(|ms| crate::timeline::instant::millis_to_instant(*ms));
        records.push(archived_record(i, &bytes, &rel, transition.as_deref())?);
    }
    let bytes = archive_file_bytes(&records, batch);
    let dir = archive_dir(table);
    let mut version = archive_files(table).await?.last().map_or(1, |(_, v)| v + 1);
    loop {
        let rel = format!("{dir}/.commits_.archive.{version}_{ARCHIVE_WRITE_TOKEN}");
        match table.storage().put_if_absent(&rel, bytes.clone()).await {
            Err(FormatError::AlreadyExists { .. }) => version += 1,
            other => return other,
        }
    }
}

/// Deletes the archived instants' files: pending states first, then completed ones oldest
/// first (Java's order), and any marker folder they left.
async fn delete_archived(table: &HudiTable, timeline: &Timeline, files: &[Instant]) -> Result<()> {
    let storage = table.storage();
    let (pending, completed): (Vec<&Instant>, Vec<&Instant>) =
        files.iter().partition(|i| i.state != State::Completed);
    for i in pending.into_iter().chain(completed) {
        storage
            .delete(&format!(
                "{}/{}",
                timeline.dir(),
                i.file_name(timeline.layout())
            ))
            .await?;
    }
    let times: BTreeSet<&str> = files.iter().map(|i| i.timestamp.as_str()).collect();
    for m in storage.list_all(".hoodie/.temp").await? {
        let rel = storage.relative(&m.location);
        let instant = rel.trim_start_matches(".hoodie/.temp/").split('/').next();
        if instant.is_some_and(|t| times.contains(t)) {
            storage.delete(&rel).await?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archive_file_versions_parse() {
        assert_eq!(archive_version(".commits_.archive.12_1-0-1"), Some(12));
        assert_eq!(archive_version(".commits_.archive.1_1-0-1"), Some(1));
        assert_eq!(archive_version("20240101.commit"), None);
        assert_eq!(archive_version(".commits_.archive.x_1-0-1"), None);
    }

    #[test]
    fn a_max_not_above_the_min_is_refused_with_hudis_message() {
        let get = |min: &'static str, max: &'static str| {
            move |k: &ConfigKey| match k.key {
                "hoodie.keep.min.commits" => Some(min.to_string()),
                "hoodie.keep.max.commits" => Some(max.to_string()),
                _ => None,
            }
        };
        let err = ArchiveSpec::resolve(get("30", "30"), false)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "Increase hoodie.keep.max.commits=30 to be greater than hoodie.keep.min.commits=30."
        );
        assert!(ArchiveSpec::resolve(get("x", "30"), false).is_err());
        let spec = ArchiveSpec::resolve(get("2", "3"), true).unwrap();
        assert_eq!(spec.compaction_delta_commits, Some(5));
        assert_eq!(
            spec.history,
            HistorySpec {
                compaction_batch: 10,
                retained_versions: 3
            }
        );
        assert_eq!((spec.min_commits, spec.max_commits, spec.batch), (2, 3, 10));
        assert!(spec.automatic && !spec.beyond_savepoint);
    }
}
