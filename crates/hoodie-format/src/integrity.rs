//! Whether a table's listing holds the files its timeline says the latest file slices are made
//! of. Without Hudi's metadata table, a reader learns a table's files by listing it; a base or
//! log file deleted by accident would then silently give way to the file group's previous
//! version, and the next write would make that loss permanent. The commits of the active
//! timeline name every file they wrote, so the newest base file each of them names for a file
//! group, and the log files written after it, must be listed.

use std::collections::{BTreeMap, HashSet};

use crate::error::{FormatError, Result};
use crate::file_name::LogFileName;
use crate::fs_view::TableListing;
use crate::storage::TableStorage;
use crate::timeline::Timeline;

/// How many commit files are read at once.
const READ_AHEAD: usize = 8;

/// One file a commit wrote: (instant time, path relative to the table, is a log file).
type Written = (String, String, bool);

/// Fails with [`FormatError::MissingDataFile`] on the first file of a latest file slice that
/// a completed commit of `timeline` wrote and `listing` (of the whole table) lacks.
pub async fn check_latest_files(
    storage: &TableStorage,
    timeline: &Timeline,
    listing: &TableListing,
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
            let is_log = LogFileName::parse(name).is_some();
            written
                .entry((partition.to_string(), id.to_string()))
                .or_default()
                .push((instant.timestamp.clone(), path.to_string(), is_log));
        }
    }
    for (group, files) in &written {
        if replaced.contains(group) {
            continue;
        }
        let newest_base = files
            .iter()
            .filter(|(_, _, log)| !log)
            .max_by(|a, b| a.0.cmp(&b.0));
        let since = newest_base.map(|(t, _, _)| t.as_str());
        let latest = newest_base.into_iter().chain(
            files
                .iter()
                .filter(|(t, _, log)| *log && since.is_none_or(|s| t.as_str() >= s)),
        );
        for (instant, path, _) in latest {
            if !listing.has_file(&group.0, &group.1, path) {
                return Err(FormatError::MissingDataFile {
                    location: storage.location().to_string(),
                    path: path.clone(),
                    instant: instant.clone(),
                });
            }
        }
    }
    Ok(())
}
