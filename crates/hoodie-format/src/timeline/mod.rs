//! The active timeline: which instants exist and in which state.

pub(crate) mod commit_metadata;
pub(crate) mod instant;
pub mod layout;

use std::collections::{BTreeMap, HashSet};

use crate::error::Result;
use crate::storage::TableStorage;
use crate::table_config::TableConfig;

pub use commit_metadata::{CommitMetadata, WriteStat};
pub use instant::{instant_to_millis, millis_to_instant, Action, Instant, State};
pub use layout::TimelineLayout;

/// A snapshot of the table's active timeline.
#[derive(Debug, Clone)]
pub struct Timeline {
    /// The latest state of every instant, sorted by instant time.
    instants: Vec<Instant>,
    /// Every instant file found (all states), for cleanup.
    files: Vec<Instant>,
    layout: u32,
    dir: String,
    /// When and at which [`TableStorage::timeline_generation`] the folder was listed (`None`:
    /// built from files).
    listed: Option<(std::time::Instant, u64)>,
}

impl Timeline {
    /// Loads the active timeline of a table.
    pub async fn load(storage: &TableStorage, config: &TableConfig) -> Result<Self> {
        let layout = config.timeline_layout_version()?;
        let dir = config.timeline_dir()?;
        let listed = (std::time::Instant::now(), storage.timeline_generation());
        let mut files = Vec::new();
        for meta in storage.list_dir(&dir).await? {
            let name = meta.location.filename().unwrap_or_default();
            if let Some(i) = Instant::parse_file_name(name) {
                // layout 1 has no completion times in names; layout 2 requires them.
                if layout < 2 && i.completion_time.is_some() {
                    continue;
                }
                files.push(i);
            }
        }
        let mut timeline = Self::from_files(files, layout, dir);
        timeline.listed = Some(listed);
        Ok(timeline)
    }

    /// Whether this timeline can stand for a new listing of the table for a writer that is
    /// the table's only one (single-writer mode): it was listed less than `max_age` ago,
    /// nothing in this process wrote under `.hoodie/` since, and no instant was pending (a
    /// pending one may have completed since, or be a failed write to roll back).
    pub fn is_current(&self, storage: &TableStorage, max_age: std::time::Duration) -> bool {
        let Some((at, generation)) = self.listed else {
            return false;
        };
        at.elapsed() < max_age
            && generation == storage.timeline_generation()
            && self.instants.iter().all(|i| i.state == State::Completed)
    }

    /// Builds a timeline from instant files (any order, any states).
    pub fn from_files(files: Vec<Instant>, layout: u32, dir: String) -> Self {
        // The latest state per timestamp; a completed compaction/clustering shows as
        // commit/replacecommit. A savepoint has its commit's timestamp and is an instant of
        // its own, after the commit.
        let mut latest: BTreeMap<(String, bool), Instant> = BTreeMap::new();
        for i in &files {
            let key = (i.timestamp.clone(), i.action == Action::Savepoint);
            match latest.get(&key) {
                Some(cur) if cur.state >= i.state => {}
                _ => {
                    latest.insert(key, i.clone());
                }
            }
        }
        Self {
            instants: latest.into_values().collect(),
            files,
            layout,
            dir,
            listed: None,
        }
    }

    /// This timeline with `more` instant files added: what a writer knows it wrote since the
    /// timeline was listed, without listing the folder again.
    pub fn with_files(&self, more: impl IntoIterator<Item = Instant>) -> Self {
        let mut files = self.files.clone();
        files.extend(more);
        Self::from_files(files, self.layout, self.dir.clone())
    }

    /// This timeline without the instant files `gone` (what an archival took off it).
    pub fn without_files(&self, gone: &[Instant]) -> Self {
        let files = self
            .files
            .iter()
            .filter(|i| !gone.contains(i))
            .cloned()
            .collect();
        Self::from_files(files, self.layout, self.dir.clone())
    }

    /// Every instant file (each state of each instant).
    pub fn files(&self) -> &[Instant] {
        &self.files
    }

    /// Timeline layout version.
    pub fn layout(&self) -> u32 {
        self.layout
    }

    /// The timeline folder relative to the table base.
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// The folder and layout its instant files are written in.
    pub fn writer_layout(&self) -> TimelineLayout {
        TimelineLayout::new(self.layout, self.dir.clone())
    }

    /// The latest time on the timeline, completion times included: a completion time taken
    /// after it is after every instant the timeline holds.
    pub fn latest_time(&self) -> Option<&str> {
        self.files
            .iter()
            .flat_map(|i| std::iter::once(i.timestamp.as_str()).chain(i.completion_time.as_deref()))
            .max()
    }

    /// Every instant in its latest state, in time order.
    pub fn instants(&self) -> &[Instant] {
        &self.instants
    }

    /// Completed commits, deltacommits and replacecommits, in time order.
    pub fn completed_writes(&self) -> impl Iterator<Item = &Instant> {
        self.instants
            .iter()
            .filter(|i| i.state == State::Completed && i.action.is_write())
    }

    /// The latest completed write.
    pub fn last_completed_write(&self) -> Option<&Instant> {
        self.completed_writes().last()
    }

    /// The time of the latest instant in any state.
    pub fn last_instant_time(&self) -> Option<&str> {
        self.instants.last().map(|i| i.timestamp.as_str())
    }

    /// Writes that started but never completed (failed or still running).
    pub fn pending_writes(&self) -> Vec<&Instant> {
        self.instants
            .iter()
            .filter(|i| {
                i.state != State::Completed
                    && (i.action.is_write()
                        || matches!(i.action, Action::Compaction | Action::Clustering))
            })
            .collect()
    }

    /// Every instant file of `timestamp` (all states), for deleting a rolled-back instant; a
    /// savepoint of the same time is not the instant's.
    pub fn files_of(&self, timestamp: &str) -> Vec<String> {
        self.files
            .iter()
            .filter(|i| i.timestamp == timestamp && i.action != Action::Savepoint)
            .map(|i| format!("{}/{}", self.dir, i.file_name(self.layout)))
            .collect()
    }

    /// The times of the completed savepoints, oldest first.
    pub fn savepoint_times(&self) -> Vec<String> {
        self.instants
            .iter()
            .filter(|i| i.action == Action::Savepoint && i.state == State::Completed)
            .map(|i| i.timestamp.clone())
            .collect()
    }

    /// The set of completed write instant times (requested times).
    pub fn completed_write_times(&self) -> HashSet<&str> {
        self.completed_writes()
            .map(|i| i.timestamp.as_str())
            .collect()
    }

    /// The earliest write instant (commit, deltacommit, replacecommit; any state) of the active
    /// timeline; data files older than it belong to archived (hence completed) commits. Cleans
    /// and rollbacks are archived apart from commits, so an older one may still be active: it
    /// does not count, as hudi-rs, whose timeline holds only the write actions.
    pub fn earliest_instant_time(&self) -> Option<&str> {
        self.instants
            .iter()
            .find(|i| i.action.is_write())
            .map(|i| i.timestamp.as_str())
    }

    /// The completion time of the completed write `instant`, where the active timeline holds it
    /// (layout 2 names completed instants with theirs).
    pub fn completion_time(&self, instant: &str) -> Option<&str> {
        self.completed_writes()
            .find(|i| i.timestamp == instant)
            .and_then(|i| i.completion_time.as_deref())
    }

    /// True if a data file written at `instant` is committed (as of the whole timeline).
    pub fn is_committed(&self, instant: &str) -> bool {
        self.completed_writes().any(|i| i.timestamp == instant)
            || self.earliest_instant_time().is_some_and(|e| instant < e)
    }

    /// A digest of the completed instants (every action): equal for two loads of the timeline
    /// between which no instant completed or was removed.
    pub fn completed_fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        // in name order: a listing returns the files in any order, and a timeline a writer
        // extends with what it wrote has them in the order written
        let mut completed: Vec<(&str, &str)> = self
            .files
            .iter()
            .filter(|i| i.state == State::Completed)
            .map(|i| (i.timestamp.as_str(), i.action.as_str()))
            .collect();
        completed.sort_unstable();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        completed.hash(&mut h);
        h.finish()
    }

    /// Reads the metadata of a completed instant.
    pub async fn read_commit_metadata(
        &self,
        storage: &TableStorage,
        instant: &Instant,
    ) -> Result<CommitMetadata> {
        let rel = format!("{}/{}", self.dir, instant.file_name(self.layout));
        let bytes = storage.get(&rel).await?;
        CommitMetadata::parse(&bytes, &rel)
    }

    /// The instants a completed rollback rolled back.
    pub async fn read_rolled_back(
        &self,
        storage: &TableStorage,
        rollback: &Instant,
    ) -> Result<Vec<String>> {
        let rel = format!("{}/{}", self.dir, rollback.file_name(self.layout));
        let bytes = storage.get(&rel).await?;
        crate::avro::rollback::rolled_back_instants(&bytes, &rel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(name: &str) -> Instant {
        Instant::parse_file_name(name).unwrap()
    }

    #[test]
    fn a_savepoint_is_an_instant_apart_from_its_commit() {
        let files = [
            "001.commit.requested",
            "001.inflight",
            "001.commit",
            "001.savepoint.inflight",
            "001.savepoint",
            "002.commit",
        ]
        .map(|n| inst(&format!("20240101000000{n}")))
        .to_vec();
        let t = Timeline::from_files(files, 1, ".hoodie".into());
        let writes: Vec<&str> = t.completed_writes().map(|i| i.timestamp.as_str()).collect();
        assert_eq!(writes, ["20240101000000001", "20240101000000002"]);
        assert!(t
            .instants()
            .iter()
            .any(|i| i.action == Action::Savepoint && i.state == State::Completed));
        // the commit's files leave its savepoint's alone
        let of = t.files_of("20240101000000001");
        assert_eq!(of.len(), 3, "{of:?}");
        assert!(of.iter().all(|f| !f.contains("savepoint")));
    }

    #[test]
    fn added_files_are_seen_as_a_listing_would_see_them() {
        let listed = ["001.commit", "002.commit.requested", "002.inflight"]
            .map(|n| inst(&format!("20240101000000{n}")))
            .to_vec();
        let t = Timeline::from_files(listed, 1, ".hoodie".into());
        assert_eq!(t.pending_writes().len(), 1);
        let after = t.with_files([inst("20240101000000002.commit")]);
        let writes: Vec<&str> = after
            .completed_writes()
            .map(|i| i.timestamp.as_str())
            .collect();
        assert_eq!(writes, ["20240101000000001", "20240101000000002"]);
        assert!(after.pending_writes().is_empty());
        assert_eq!(after.files().len(), 4);
        assert_ne!(after.completed_fingerprint(), t.completed_fingerprint());
        // the listed timeline is left as it was
        assert_eq!(t.pending_writes().len(), 1);
    }

    #[test]
    fn latest_state_and_pending() {
        let files = vec![
            inst(
                "001.commit.requested"
                    .replace("001", "20240101000000001")
                    .as_str(),
            ),
            inst("20240101000000001.inflight"),
            inst("20240101000000001.commit"),
            inst("20240101000000002.commit.requested"),
            inst("20240101000000002.inflight"),
            inst("20240101000000003.rollback"),
        ];
        let t = Timeline::from_files(files, 1, ".hoodie".into());
        assert_eq!(t.completed_writes().count(), 1);
        assert_eq!(t.pending_writes().len(), 1);
        assert_eq!(t.pending_writes()[0].timestamp, "20240101000000002");
        assert!(t.is_committed("20240101000000001"));
        assert!(!t.is_committed("20240101000000002"));
        assert!(
            t.is_committed("20231231000000000"),
            "older than the active timeline: archived"
        );
        assert_eq!(t.files_of("20240101000000002").len(), 2);
    }

    #[tokio::test]
    async fn a_listing_is_current_until_this_process_writes_the_timeline() {
        use std::time::Duration;
        let store = std::sync::Arc::new(object_store::memory::InMemory::new());
        let storage = TableStorage::new(store, "wh/current".into(), "memory://wh/current");
        let config = TableConfig::parse(b"hoodie.table.name=t\nhoodie.table.version=6\n").unwrap();
        storage
            .put(".hoodie/20240101000000001.commit", Vec::<u8>::new())
            .await
            .unwrap();
        let age = Duration::from_secs(60);
        let t = Timeline::load(&storage, &config).await.unwrap();
        assert!(t.is_current(&storage, age));
        assert!(!t.is_current(&storage, Duration::ZERO), "too old");
        assert!(
            !t.with_files([inst("20240101000000002.commit")])
                .is_current(&storage, age),
            "built from files, not listed"
        );
        // a write outside the timeline folder leaves it current
        storage.put("p/f.parquet", vec![1u8]).await.unwrap();
        assert!(t.is_current(&storage, age));
        // any write under .hoodie/, even a delete of nothing, makes it old
        storage.delete(".hoodie/none").await.unwrap();
        assert!(!t.is_current(&storage, age));
        // a pending instant on the listing: never current
        storage
            .put(".hoodie/20240101000000002.inflight", Vec::<u8>::new())
            .await
            .unwrap();
        let pending = Timeline::load(&storage, &config).await.unwrap();
        assert!(!pending.is_current(&storage, age));
        // another table's writes do not count against this one
        let other = TableStorage::new(
            storage.store().clone(),
            "wh/other".into(),
            "memory://wh/other",
        );
        storage
            .delete(".hoodie/20240101000000002.inflight")
            .await
            .unwrap();
        let fresh = Timeline::load(&storage, &config).await.unwrap();
        other
            .put(".hoodie/20240101000000009.commit", Vec::<u8>::new())
            .await
            .unwrap();
        assert!(fresh.is_current(&storage, age));
    }
}
