//! Incremental windows: the commits a read of "what changed between two instants" covers, as
//! Hudi 1.2 picks them (`(begin, end]`, on requested times for table version 6 and on
//! completion times for versions 8 and 9).

use std::collections::{HashMap, HashSet};

use crate::error::{FormatError, Result};
use crate::fs_view::FileSlice;
use crate::storage::TableStorage;
use crate::timeline::commit_metadata::CommitMetadata;
use crate::timeline::instant::Instant;
use crate::timeline::Timeline;

/// The commits of an incremental window and the file groups they wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IncrementalWindow {
    /// Requested times of the completed writes in the window, in time order.
    pub instants: Vec<String>,
    /// The file groups those writes wrote, as (partition path, file id).
    pub file_groups: HashSet<(String, String)>,
    /// Per file group, the file the window's last write to it wrote (relative path) and that
    /// write's instant: the slice the read takes must still hold it.
    pub last_written: HashMap<(String, String), (String, String)>,
    /// A full table scan (`(begin, end]` on commit time over the latest snapshot) in place of
    /// the window's commits.
    pub full_scan: Option<(String, Option<String>)>,
    /// The window holds archived writes (table versions 8 and 9): Spark with Hudi 1.2 reads
    /// such a window as the latest snapshot's records whose commit time is one of its writes,
    /// not as the slices as of its end.
    pub from_archived: bool,
}

/// The time an instant is ranged on: its requested time on table version 6, its completion
/// time on later versions (an instant without one, older than layout 2, by its requested time).
fn range_time(instant: &Instant, table_version: u32) -> &str {
    if table_version >= 8 {
        instant
            .completion_time
            .as_deref()
            .unwrap_or(&instant.timestamp)
    } else {
        &instant.timestamp
    }
}

impl IncrementalWindow {
    /// The window `(begin, end]` of `timeline` (`begin` `000`: from the first commit; `end`
    /// `None`: to the latest), normalised instants as
    /// [`incremental_instant`](super::incremental_instant) gives them, over the active
    /// timeline's writes and `archived` (the archived writes with their metadata, which Hudi
    /// 1.x's reader of table versions 8 and 9 covers; none on version 6, whose reader covers
    /// the active timeline's commits alone: see [`IncrementalWindow::reaches_archived`] and
    /// [`IncrementalWindow::full_table_scan`]).
    pub async fn load(
        storage: &TableStorage,
        timeline: &Timeline,
        table_version: u32,
        (begin, end): (&str, Option<&str>),
        archived: &[(Instant, CommitMetadata)],
    ) -> Result<Self> {
        let open_start = begin.bytes().all(|b| b == b'0');
        let in_window = |i: &Instant| {
            let t = range_time(i, table_version);
            (open_start || t > begin) && end.is_none_or(|e| t <= e)
        };
        let mut window = Self::default();
        let active: HashSet<&str> = timeline
            .completed_writes()
            .map(|i| i.timestamp.as_str())
            .collect();
        let mut archived: Vec<&(Instant, CommitMetadata)> = archived
            .iter()
            .filter(|(i, _)| in_window(i) && !active.contains(i.timestamp.as_str()))
            .collect();
        archived.sort_by(|a, b| a.0.timestamp.cmp(&b.0.timestamp));
        for (i, metadata) in archived {
            window.add(&i.timestamp, metadata);
            window.from_archived = true;
        }
        for i in timeline.completed_writes().filter(|i| in_window(i)) {
            let metadata = timeline.read_commit_metadata(storage, i).await?;
            window.add(&i.timestamp, &metadata);
        }
        window.instants.sort();
        Ok(window)
    }

    /// Whether `(begin, end]` starts before the active timeline's first write on table version
    /// 8 or 9, so that its archived writes are in it.
    pub fn needs_archived(timeline: &Timeline, table_version: u32, begin: &str) -> bool {
        if table_version < 8 {
            return false;
        }
        match timeline.completed_writes().next() {
            Some(first) => begin < range_time(first, table_version),
            None => true,
        }
    }

    /// Hudi's full table scan in place of a window (`hoodie.datasource.read.incr.fallback.fulltablescan.enable`):
    /// the latest snapshot's records whose commit time is in `(begin, end]`.
    pub fn full_table_scan(begin: &str, end: Option<&str>) -> Self {
        Self {
            full_scan: Some((begin.to_string(), end.map(str::to_string))),
            ..Default::default()
        }
    }

    /// Whether `(begin, end]` starts or ends before the active timeline's first write (its
    /// commits there are archived), as Hudi's reader of table version 6 decides to fall back
    /// to a full table scan. Never on versions 8 and 9: their window covers the archived
    /// writes too (Hudi 1.x's reader loads the archived timeline).
    pub fn reaches_archived(
        timeline: &Timeline,
        table_version: u32,
        begin: &str,
        end: Option<&str>,
    ) -> bool {
        let Some(first) = timeline.earliest_instant_time() else {
            return false;
        };
        if table_version >= 8 {
            return false;
        }
        begin < first || end.is_some_and(|e| e < first)
    }

    /// Adds the write at `instant` (in time order) with what it wrote.
    fn add(&mut self, instant: &str, metadata: &CommitMetadata) {
        for stat in metadata.write_stats() {
            if let Some(id) = &stat.file_id {
                let partition = stat.partition_path.clone().unwrap_or_default();
                let group = (partition, id.clone());
                if let Some(path) = stat.path.as_ref().filter(|p| !p.is_empty()) {
                    let written = (path.clone(), instant.to_string());
                    self.last_written.insert(group.clone(), written);
                }
                self.file_groups.insert(group);
            }
        }
        self.instants.push(instant.to_string());
    }

    /// Fails as Hudi's incremental relation does when the files the window's commits wrote
    /// were deleted by the cleaner (the read would otherwise silently miss their records):
    /// for each file group, the file its last write in the window wrote must be in the slice
    /// `slices` holds for it, or at least still exist.
    pub async fn check_files(&self, storage: &TableStorage, slices: &[FileSlice]) -> Result<()> {
        if self.full_scan.is_some() || self.from_archived {
            return Ok(());
        }
        let held: HashSet<&str> = slices
            .iter()
            .flat_map(|s| {
                s.base_file
                    .iter()
                    .map(|b| b.rel_path.as_str())
                    .chain(s.log_files.iter().map(String::as_str))
            })
            .collect();
        for (path, instant) in self.last_written.values() {
            if held.contains(path.as_str()) || storage.exists(path).await? {
                continue;
            }
            return Err(FormatError::IncrementalFilesCleaned {
                instant: instant.clone(),
                file: path.clone(),
            });
        }
        Ok(())
    }

    /// The latest requested time in the window: the read is of the table as of it.
    pub fn last(&self) -> Option<&str> {
        self.instants.last().map(String::as_str)
    }

    /// Whether a record written at `commit_time` is in the window.
    pub fn contains(&self, commit_time: &str) -> bool {
        if let Some((begin, end)) = &self.full_scan {
            let open = begin.bytes().all(|b| b == b'0');
            return (open || commit_time > begin.as_str())
                && end.as_deref().is_none_or(|e| commit_time <= e);
        }
        self.instants
            .binary_search_by(|i| i.as_str().cmp(commit_time))
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::instant::{Action, State};

    fn completed(ts: &str, completion: &str) -> Instant {
        Instant {
            timestamp: ts.into(),
            action: Action::Commit,
            state: State::Completed,
            completion_time: Some(completion.into()),
        }
    }

    #[test]
    fn ranges_on_requested_or_completion_time() {
        // requested 1 < 2, completed 2 before 1
        let a = completed("20240101000000001", "20240101000000009");
        let b = completed("20240101000000002", "20240101000000005");
        assert_eq!(range_time(&a, 6), "20240101000000001");
        assert_eq!(range_time(&a, 8), "20240101000000009");
        assert_eq!(range_time(&b, 9), "20240101000000005");
        let w = IncrementalWindow {
            instants: vec!["20240101000000001".into(), "20240101000000002".into()],
            file_groups: HashSet::new(),
            last_written: HashMap::new(),
            full_scan: None,
            from_archived: false,
        };
        assert!(w.contains("20240101000000002"));
        assert!(!w.contains("20240101000000003"));
        assert_eq!(w.last(), Some("20240101000000002"));
        let full = IncrementalWindow::full_table_scan("20240101000000001", None);
        assert!(!full.contains("20240101000000001"));
        assert!(full.contains("20240101000000007"));
        let open = IncrementalWindow::full_table_scan("000", Some("20240101000000005"));
        assert!(open.contains("20240101000000001") && !open.contains("20240101000000006"));
    }

    #[test]
    fn only_version_6_reaches_archived_commits() {
        let timeline = Timeline::from_files(
            vec![completed("20240101000000003", "20240101000000004")],
            2,
            ".hoodie/timeline".into(),
        );
        let reaches = |v, begin, end| IncrementalWindow::reaches_archived(&timeline, v, begin, end);
        assert!(reaches(6, "000", None));
        assert!(reaches(6, "20240101000000001", None));
        assert!(reaches(6, "000", Some("20240101000000002")));
        assert!(!reaches(6, "20240101000000003", None));
        // versions 8 and 9 read the archived writes in the window instead
        assert!(!reaches(9, "000", None));
        assert!(!reaches(9, "20240101000000001", None));
        assert!(IncrementalWindow::needs_archived(&timeline, 9, "000"));
        assert!(IncrementalWindow::needs_archived(
            &timeline,
            9,
            "20240101000000003"
        ));
        assert!(!IncrementalWindow::needs_archived(
            &timeline,
            9,
            "20240101000000004"
        ));
        assert!(!IncrementalWindow::needs_archived(&timeline, 6, "000"));
    }

    #[tokio::test]
    async fn a_window_of_version_9_covers_the_archived_writes_by_completion_time() {
        let tmp = tempfile::tempdir().unwrap();
        let storage = TableStorage::local(tmp.path()).unwrap();
        let timeline = Timeline::from_files(Vec::new(), 2, ".hoodie/timeline".into());
        let write = |t: &str, c: &str, file: &str| {
            let i = completed(t, c);
            let json = format!(
                r#"{{"partitionToWriteStats":{{"p":[{{"fileId":"{file}","path":"p/{file}_{t}.parquet","partitionPath":"p"}}]}}}}"#
            );
            (i, CommitMetadata::from_json(json.as_bytes(), "x").unwrap())
        };
        // requested 1, completed 5; requested 2, completed 3
        let archived = [
            write("20240101000000001", "20240101000000005", "f1"),
            write("20240101000000002", "20240101000000003", "f2"),
        ];
        let load = |begin: &'static str, end: Option<&'static str>| {
            let (storage, timeline, archived) = (&storage, &timeline, &archived);
            async move {
                IncrementalWindow::load(storage, timeline, 9, (begin, end), archived)
                    .await
                    .unwrap()
            }
        };
        let all = load("000", None).await;
        assert_eq!(all.instants, ["20240101000000001", "20240101000000002"]);
        assert!(all.from_archived);
        assert_eq!(all.file_groups.len(), 2);
        // (3, 5] by completion time: the write requested first but completed last
        let later = load("20240101000000003", Some("20240101000000005")).await;
        assert_eq!(later.instants, ["20240101000000001"]);
        assert!(later
            .file_groups
            .contains(&("p".to_string(), "f1".to_string())));
        assert!(load("20240101000000005", None).await.instants.is_empty());
    }
}
