//! Whether a table's listing holds the files its timeline says the latest file slices are made
//! of. Without Hudi's metadata table, a reader learns a table's files by listing it; a base or
//! log file deleted by accident would then silently give way to the file group's previous
//! version, and the next write would make that loss permanent. The commits of the active
//! timeline name every file they wrote, so the newest base file each of them names for a file
//! group, and the log files written after it, must be listed.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::error::{FormatError, MissingDataFile, Result};
use crate::file_name::LogFileName;
use crate::fs_view::listing::{in_partitions, TableListing};
use crate::storage::TableStorage;
use crate::timeline::Timeline;

/// How many commit files are read at once.
const READ_AHEAD: usize = 8;

/// One file a commit wrote.
struct Written {
    /// The commit's instant time.
    instant: String,
    /// The file, relative to the table.
    path: String,
    /// A log file (appended to by later commits) rather than a base file.
    is_log: bool,
    /// Its size when the commit completed (0: not recorded).
    size: u64,
}

/// Fails with [`FormatError::MissingDataFile`] on the first file of a latest file slice that
/// a completed commit of `timeline` wrote and `listing` lacks or holds shorter than written.
/// `listing` is of the whole table, or of the partitions `scope` names.
pub async fn check_latest_files(
    storage: &TableStorage,
    timeline: &Timeline,
    listing: &TableListing,
    scope: Option<&BTreeSet<String>>,
) -> Result<()> {
    let instants: Vec<_> = timeline.completed_writes().cloned().collect();
    let mut metadata = Vec::with_capacity(instants.len());
    for chunk in instants.chunks(READ_AHEAD) {
        let read = chunk.iter().map(|i| async move {
            match timeline.read_commit_metadata(storage, i).await {
                Ok(m) => Ok(Some(m)),
                // archived or rolled back since the timeline was read: it names no file
                // the table must still hold
                Err(FormatError::Storage {
                    source: object_store::Error::NotFound { .. },
                    ..
                }) => Ok(None),
                Err(e) => Err(e),
            }
        });
        metadata.extend(futures::future::try_join_all(read).await?);
    }
    let mut written: BTreeMap<(String, String), Vec<Written>> = BTreeMap::new();
    let mut replaced: HashSet<(String, String)> = HashSet::new();
    for (instant, m) in instants.iter().zip(&metadata) {
        let Some(m) = m else {
            continue;
        };
        for (p, id) in m.replaced_file_ids() {
            replaced.insert((p.to_string(), id.to_string()));
        }
        for stat in m.write_stats() {
            let (Some(path), Some(id)) = (stat.path.as_deref(), stat.file_id.as_deref()) else {
                continue;
            };
            if path.is_empty() {
                continue;
            }
            // the partition as a listing finds it: the folder the file is in
            let (partition, name) = path.rsplit_once('/').unwrap_or(("", path));
            written
                .entry((partition.to_string(), id.to_string()))
                .or_default()
                .push(Written {
                    instant: instant.timestamp.clone(),
                    path: path.to_string(),
                    is_log: LogFileName::parse(name).is_some(),
                    size: stat.file_size_in_bytes.max(0) as u64,
                });
        }
    }
    for (group, files) in &written {
        if replaced.contains(group) || scope.is_some_and(|p| !in_partitions(&group.0, p)) {
            continue;
        }
        let newest_base = files
            .iter()
            .filter(|w| !w.is_log)
            .max_by(|a, b| a.instant.cmp(&b.instant));
        let since = newest_base.map(|w| w.instant.as_str());
        let latest = newest_base.into_iter().chain(
            files
                .iter()
                .filter(|w| w.is_log && since.is_none_or(|s| w.instant.as_str() >= s)),
        );
        for w in latest {
            check_file(storage, listing, group, w)?;
        }
    }
    Ok(())
}

/// Fails if `w`, a file of the latest slice of `group`, is not listed, or is shorter than its
/// commit wrote it (a base file never changes; a log file only grows, by later appends).
fn check_file(
    storage: &TableStorage,
    listing: &TableListing,
    group: &(String, String),
    w: &Written,
) -> Result<()> {
    let damaged = |reason: String| {
        FormatError::MissingDataFile(Box::new(MissingDataFile {
            location: storage.location().to_string(),
            path: w.path.clone(),
            instant: w.instant.clone(),
            reason,
        }))
    };
    let Some(size) = listing.listed_size(&group.0, &group.1, &w.path) else {
        return Err(damaged("is missing".into()));
    };
    let cut = if w.is_log {
        size < w.size
    } else {
        size != w.size
    };
    if w.size > 0 && cut {
        return Err(damaged(format!(
            "is damaged ({size} bytes where its commit wrote {})",
            w.size
        )));
    }
    Ok(())
}
