//! File-system view: the latest committed file slice of every file group, as of an instant.
//! The table's [`listing`] (its data files by file group) is held against the commits that
//! wrote them ([`integrity`]) when it is taken, and kept between statements by the [`cache`].

pub(crate) mod cache;
pub(crate) mod integrity;
pub(crate) mod listing;

pub use cache::{FileChange, ListingCache};
pub use listing::{
    in_partitions, replaced_file_groups, BaseFile, FileSlice, GroupFiles, TableListing,
};

use crate::error::Result;
use crate::storage::TableStorage;
use crate::timeline::instant::State;
use crate::timeline::Timeline;

/// Builds file slices from a listing of the table.
#[derive(Debug, Clone)]
pub struct FileSystemView {
    slices: Vec<FileSlice>,
}

impl FileSystemView {
    /// The latest committed slice of every file group as of `as_of` (an instant time; `None` =
    /// the latest completed write). Files of instants that never completed are invisible;
    /// file groups replaced by a completed replacecommit are left out.
    pub async fn load(
        storage: &TableStorage,
        timeline: &Timeline,
        as_of: Option<&str>,
    ) -> Result<Self> {
        Self::load_cached(storage, timeline, as_of, &ListingCache::default()).await
    }

    /// [`FileSystemView::load`], listing the table through `cache`.
    pub async fn load_cached(
        storage: &TableStorage,
        timeline: &Timeline,
        as_of: Option<&str>,
        cache: &ListingCache,
    ) -> Result<Self> {
        let replaced = replaced_file_groups(storage, timeline, as_of).await?;
        let listing = cache.listing(storage, timeline).await?;
        let visible = |instant: &str| as_of.is_none_or(|a| instant <= a);
        let slices = listing
            .groups()
            .filter(|g| !replaced.contains(*g))
            .filter_map(|(p, id)| listing.slice(timeline, p, id, &visible))
            .collect();
        Ok(Self { slices })
    }

    /// The slices.
    pub fn slices(&self) -> &[FileSlice] {
        &self.slices
    }

    /// Consumes the view into its slices.
    pub fn into_slices(self) -> Vec<FileSlice> {
        self.slices
    }
}

/// True if `timeline` has a pending instant in state `state` at `ts` (used in tests).
pub fn has_state(timeline: &Timeline, ts: &str, state: State) -> bool {
    timeline
        .instants()
        .iter()
        .any(|i| i.timestamp == ts && i.state == state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::instant::Action;
    use crate::timeline::instant::Instant;
    use object_store::memory::InMemory;
    use std::collections::BTreeSet;
    use std::sync::Arc;

    fn timeline(completed: &[&str]) -> Timeline {
        let files = completed
            .iter()
            .map(|t| Instant::new(*t, Action::Commit, State::Completed))
            .collect();
        Timeline::from_files(files, 1, ".hoodie".into())
    }

    /// The base file of file group `id` in partition `p`, written by commit `t`.
    fn base(id: &str, t: &str) -> String {
        format!("p/{id}_0-0-0_{t}.parquet")
    }

    /// An in-memory table whose one base file (`f1`) commit 20240101000000001 wrote.
    async fn one_base_file() -> TableStorage {
        let storage = TableStorage::new(Arc::new(InMemory::new()), "t".into(), "memory://t");
        storage
            .put(&base("f1", "20240101000000001"), vec![1u8])
            .await
            .unwrap();
        storage
    }

    /// A deltacommit that began before a compaction was planned and completed after it logged
    /// what the compaction could not hold: on layout 2 its log belongs to the compaction's
    /// slice (sliced by completion time, as Hudi 1.x), so a read after the compaction merges
    /// it and the cleaner does not take it with the old slice.
    #[tokio::test]
    async fn on_layout_2_a_log_belongs_to_the_slice_its_deltacommit_completed_in() {
        let storage = TableStorage::new(Arc::new(InMemory::new()), "t".into(), "memory://t");
        let (first, delta, compaction) = (
            "20240101000000001",
            "20240101000000003",
            "20240101000000005",
        );
        let log = format!("p/.f1_{delta}.log.1_0-0-0");
        for f in [base("f1", first), base("f1", compaction), log.clone()] {
            storage.put(&f, vec![1u8]).await.unwrap();
        }
        let listing = TableListing::read(&storage).await.unwrap();
        let instant = |t: &str, action, done: &str| Instant {
            completion_time: Some(done.to_string()),
            ..Instant::new(t, action, State::Completed)
        };
        let timeline = |delta_done: &str| {
            let files = vec![
                instant(first, Action::Commit, "20240101000000002"),
                instant(delta, Action::DeltaCommit, delta_done),
                instant(compaction, Action::Commit, "20240101000000006"),
            ];
            Timeline::from_files(files, 2, ".hoodie/timeline".into())
        };
        let all = |_: &str| true;
        // completed after the compaction was planned: the compacted slice's log
        let late = timeline("20240101000000009");
        let slice = listing.slice(&late, "p", "f1", &all).unwrap();
        assert_eq!(slice.base_instant, compaction);
        assert_eq!(slice.log_files, std::slice::from_ref(&log));
        let slices = listing.all_slices(&late, "p", "f1");
        let logs: Vec<_> = slices.iter().map(|s| s.log_files.clone()).collect();
        assert_eq!(logs, [vec![log.clone()], vec![]]);
        // completed before: the compaction planned it, the old slice's log
        let early = timeline("20240101000000004");
        let slice = listing.slice(&early, "p", "f1", &all).unwrap();
        assert!(slice.log_files.is_empty(), "{slice:?}");
        let slices = listing.all_slices(&early, "p", "f1");
        let logs: Vec<_> = slices.iter().map(|s| s.log_files.clone()).collect();
        assert_eq!(logs, [vec![], vec![log]]);
    }

    #[tokio::test]
    async fn a_listing_is_reused_until_an_instant_completes() {
        let storage = one_base_file().await;
        let cache = ListingCache::default();
        let one = timeline(&["20240101000000001"]);
        assert_eq!(
            cache
                .listing(&storage, &one)
                .await
                .unwrap()
                .groups()
                .count(),
            1
        );
        // a pending write's file appears: under the same completed timeline the listing is kept
        storage
            .put(&base("f2", "20240101000000002"), vec![1u8])
            .await
            .unwrap();
        let again = timeline(&["20240101000000001"]);
        assert_eq!(
            cache
                .listing(&storage, &again)
                .await
                .unwrap()
                .groups()
                .count(),
            1
        );
        // the write completes: the table is listed again
        let two = timeline(&["20240101000000001", "20240101000000002"]);
        assert_eq!(
            cache
                .listing(&storage, &two)
                .await
                .unwrap()
                .groups()
                .count(),
            2
        );
        assert_ne!(one.completed_fingerprint(), two.completed_fingerprint());
        assert_eq!(one.completed_fingerprint(), again.completed_fingerprint());
    }

    #[tokio::test]
    async fn part_of_a_listing_is_what_listing_those_partitions_finds() {
        let storage = TableStorage::new(Arc::new(InMemory::new()), "t".into(), "memory://t");
        for p in ["a", "a/b", "ab", "c"] {
            storage
                .put(
                    &format!("{p}/f-{}_0-0-0_20240101000000001.parquet", p.len()),
                    vec![1u8],
                )
                .await
                .unwrap();
        }
        let whole = TableListing::read(&storage).await.unwrap();
        for wanted in [vec!["a"], vec!["ab", "c"], vec![""], vec![]] {
            let set: BTreeSet<String> = wanted.iter().map(|p| p.to_string()).collect();
            let listed = TableListing::read_partitions(&storage, &set).await.unwrap();
            assert_eq!(
                whole.of_partitions(&set).files(),
                listed.files(),
                "{wanted:?}"
            );
        }
        assert_eq!(
            whole.of_partitions(&["a".to_string()].into()).files().len(),
            2
        );
    }

    #[tokio::test]
    async fn a_listing_is_carried_across_an_instant_only_from_the_timeline_it_was_taken_under() {
        let storage = one_base_file().await;
        let cache = ListingCache::default();
        let one = timeline(&["20240101000000001"]);
        cache.listing(&storage, &one).await.unwrap();
        let two = timeline(&["20240101000000001", "20240101000000002"]);
        let change = FileChange {
            added: vec![(base("f2", "20240101000000002"), 7)],
            removed: vec![base("f1", "20240101000000001")],
        };
        // from another timeline (another writer's instant in between): nothing carried
        let other = timeline(&["20240101000000000"]);
        cache.advance(&other, &two, &change);
        assert!(cache.current(&two).is_none());
        assert!(cache.current(&one).is_some());
        // from its own: the change made, under the timeline after
        cache.advance(&one, &two, &change);
        assert!(cache.current(&one).is_none());
        assert_eq!(
            cache.current(&two).unwrap().files(),
            [(base("f2", "20240101000000002"), 7)]
        );
        // the same completed instants listed in another order are the same timeline
        let reversed = timeline(&["20240101000000002", "20240101000000001"]);
        assert_eq!(
            reversed.completed_fingerprint(),
            two.completed_fingerprint()
        );
        cache.forget();
        assert!(cache.current(&two).is_none());
    }
}
