//! The listing a process keeps of a table between statements, and the changes its own
//! instants make to it.

use crate::error::Result;
use crate::fs_view::integrity::check_latest_files;
use crate::fs_view::listing::TableListing;
use crate::storage::TableStorage;
use crate::timeline::Timeline;

/// A table's last listing and the completed timeline it was taken under. The committed files
/// it shows are the same while no instant completes (a write, clean, rollback or archival
/// completes one; files that uncompleted writes add or lose are invisible either way), so a
/// listing under the same completed timeline is reused instead of listing the table again.
#[derive(Debug, Clone, Default)]
pub struct ListingCache {
    last: std::sync::Arc<std::sync::Mutex<Option<KeyedListing>>>,
}

/// A listing and the fingerprint of the completed timeline it was taken under.
type KeyedListing = (u64, std::sync::Arc<TableListing>);

impl ListingCache {
    /// The table's listing under `timeline`: the last one if it was taken under the same
    /// completed instants, else a new one.
    pub async fn listing(
        &self,
        storage: &TableStorage,
        timeline: &Timeline,
    ) -> Result<std::sync::Arc<TableListing>> {
        let key = timeline.completed_fingerprint();
        let cached = self
            .last
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .filter(|(k, _)| *k == key)
            .map(|(_, l)| l.clone());
        if let Some(l) = cached {
            return Ok(l);
        }
        let fresh = TableListing::read(storage).await?;
        // a fresh listing is held against the commits once; one carried across this
        // process's own commits (`advance`) holds what they wrote
        check_latest_files(storage, timeline, &fresh, None).await?;
        let fresh = std::sync::Arc::new(fresh);
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some((key, fresh.clone()));
        Ok(fresh)
    }

    /// Drops the kept listing: files went that no completed instant accounts for yet (a clean
    /// that stopped half-way), so the next read lists the table.
    pub fn forget(&self) {
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// The kept listing if it was taken under `timeline`'s completed instants.
    pub fn current(&self, timeline: &Timeline) -> Option<std::sync::Arc<TableListing>> {
        let key = timeline.completed_fingerprint();
        self.last
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .filter(|(k, _)| *k == key)
            .map(|(_, l)| l.clone())
    }

    /// Carries the kept listing across an instant this process completed: if it was taken
    /// under `before`'s completed instants, it becomes the listing under `after`'s (the same
    /// instants and the one completed) with `change` made to it, so the services after a
    /// commit and the next statement do not list the table again. Another writer's commit
    /// between the two makes the table's timeline differ from `after`, and so misses.
    pub fn advance(&self, before: &Timeline, after: &Timeline, change: &FileChange) {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        let Some((key, listing)) = last.take() else {
            return;
        };
        if key != before.completed_fingerprint() {
            *last = Some((key, listing));
            return;
        }
        let mut listing = std::sync::Arc::unwrap_or_clone(listing);
        for rel in &change.removed {
            listing.remove_file(rel);
        }
        for (rel, size) in &change.added {
            // a file the listing cannot take is left to a real listing to report
            if listing.add_file(rel.clone(), *size).is_err() {
                return;
            }
        }
        *last = Some((after.completed_fingerprint(), std::sync::Arc::new(listing)));
    }
}

/// The data files an instant added and deleted, relative to the table.
#[derive(Debug, Clone, Default)]
pub struct FileChange {
    /// Files written, with their sizes.
    pub added: Vec<(String, u64)>,
    /// Files deleted.
    pub removed: Vec<String>,
}

impl FileChange {
    /// The files a commit's write stats name: its base and log files and its `.cdc` logs.
    pub fn of_commit(metadata: &crate::timeline::commit_metadata::CommitMetadata) -> Self {
        let mut added = Vec::new();
        for stat in metadata.write_stats() {
            if let Some(path) = stat.path.as_deref().filter(|p| !p.is_empty()) {
                added.push((path.to_string(), stat.file_size_in_bytes.max(0) as u64));
            }
            for (path, size) in stat.cdc_stats.iter().flatten() {
                added.push((path.clone(), (*size).max(0) as u64));
            }
        }
        Self {
            added,
            removed: Vec::new(),
        }
    }
}
