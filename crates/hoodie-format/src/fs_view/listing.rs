//! A table's data files by file group, as one listing finds them, and the file slices cut
//! from it as of any instant.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use crate::error::{FormatError, Result};
use crate::file_name::{BaseFileName, LogFileName, PARTITION_METADATA_FILE};
use crate::storage::TableStorage;
use crate::timeline::instant::Action;
use crate::timeline::Timeline;

/// A base file of a file slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseFile {
    /// Path relative to the table base.
    pub rel_path: String,
    /// Parsed name.
    pub name: BaseFileName,
    /// Size in bytes.
    pub size: u64,
}

/// The files of one file group as of one base instant. As JSON (a task or a scan sent to
/// another process), its base file is its path and size, the name parsed again when read.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "SliceJson", try_from = "SliceJson")]
pub struct FileSlice {
    /// Partition path (`""` for non-partitioned tables).
    pub partition_path: String,
    /// File group id.
    pub file_id: String,
    /// Instant of the base file (or of the first log for log-only slices).
    pub base_instant: String,
    /// The base file, if any.
    pub base_file: Option<BaseFile>,
    /// Committed log files (relative paths) of the slice.
    pub log_files: Vec<String>,
    /// The slice's `.cdc` logs (relative paths), which no snapshot reads: a new log file's
    /// version counts them, as Java's slices do.
    pub cdc_logs: Vec<String>,
}

/// A file slice as JSON.
#[derive(serde::Serialize, serde::Deserialize)]
struct SliceJson {
    partition_path: String,
    file_id: String,
    base_instant: String,
    base_file: Option<(String, u64)>,
    log_files: Vec<String>,
    cdc_logs: Vec<String>,
}

impl From<FileSlice> for SliceJson {
    fn from(s: FileSlice) -> Self {
        Self {
            partition_path: s.partition_path,
            file_id: s.file_id,
            base_instant: s.base_instant,
            base_file: s.base_file.map(|b| (b.rel_path, b.size)),
            log_files: s.log_files,
            cdc_logs: s.cdc_logs,
        }
    }
}

impl TryFrom<SliceJson> for FileSlice {
    type Error = FormatError;

    fn try_from(s: SliceJson) -> std::result::Result<Self, FormatError> {
        let base_file = match s.base_file {
            Some((rel_path, size)) => {
                let name = rel_path.rsplit('/').next().unwrap_or(&rel_path);
                Some(BaseFile {
                    name: BaseFileName::parse(name)?,
                    rel_path,
                    size,
                })
            }
            None => None,
        };
        Ok(FileSlice {
            base_file,
            partition_path: s.partition_path,
            file_id: s.file_id,
            base_instant: s.base_instant,
            log_files: s.log_files,
            cdc_logs: s.cdc_logs,
        })
    }
}

/// (partition path, file id)
type GroupKey = (String, String);

/// The files of one file group: base files, and log files (relative path, parsed name),
/// `.cdc` logs left out.
#[derive(Debug, Clone, Default)]
pub struct GroupFiles {
    bases: Vec<BaseFile>,
    logs: Vec<(String, LogFileName)>,
    cdc_logs: Vec<(String, LogFileName)>,
    /// The sizes of `logs`, by path (checked against what the commits wrote).
    log_sizes: BTreeMap<String, u64>,
}

fn is_hidden_dir(rel: &str) -> bool {
    rel.starts_with(".hoodie/")
        || rel.starts_with("__MACOSX/")
        || rel
            .split('/')
            .any(|p| p.starts_with("._") || p == ".DS_Store")
}

/// Every data file of a table, by file group: one listing that slices as of any instant are
/// cut from.
#[derive(Debug, Clone, Default)]
pub struct TableListing {
    groups: BTreeMap<GroupKey, GroupFiles>,
}

impl TableListing {
    /// Lists the table's data files (`.cdc` logs apart: no snapshot reads them).
    pub async fn read(storage: &TableStorage) -> Result<Self> {
        let mut listing = Self::default();
        for meta in storage.list_all("").await? {
            listing.add(storage, &meta)?;
        }
        Ok(listing)
    }

    /// Lists the data files of `partitions` alone (one listing per partition; `""`, the
    /// partition of a table without partitions, is the whole table).
    pub async fn read_partitions<'a>(
        storage: &TableStorage,
        partitions: impl IntoIterator<Item = &'a String>,
    ) -> Result<Self> {
        let mut listing = Self::default();
        for p in partitions {
            for meta in storage.list_all(p).await? {
                listing.add(storage, &meta)?;
            }
        }
        Ok(listing)
    }

    fn add(&mut self, storage: &TableStorage, meta: &object_store::ObjectMeta) -> Result<()> {
        self.add_file(storage.relative(&meta.location), meta.size)
    }

    /// Adds the file at `rel` (relative to the table) of `size` bytes, as a listing that
    /// found it would; a file already listed is not added twice (a log appended to).
    pub(crate) fn add_file(&mut self, rel: String, size: u64) -> Result<()> {
        if is_hidden_dir(&rel) {
            return Ok(());
        }
        let (partition, name) = match rel.rsplit_once('/') {
            Some((p, n)) => (p.to_string(), n.to_string()),
            None => (String::new(), rel.clone()),
        };
        if name.starts_with(PARTITION_METADATA_FILE) {
            return Ok(());
        }
        if let Some(log) = LogFileName::parse(&name) {
            let group = self
                .groups
                .entry((partition, log.file_id.clone()))
                .or_default();
            if !log.is_cdc {
                group.log_sizes.insert(rel.clone(), size);
            }
            let logs = match log.is_cdc {
                true => &mut group.cdc_logs,
                false => &mut group.logs,
            };
            if !logs.iter().any(|(r, _)| *r == rel) {
                logs.push((rel, log));
            }
            return Ok(());
        }
        if name.starts_with('.') || !name.contains('_') {
            return Ok(());
        }
        let ext = name.rsplit('.').next().unwrap_or_default();
        if !matches!(ext, "parquet" | "orc" | "hfile" | "lance") {
            return Ok(());
        }
        let parsed = BaseFileName::parse(&name)?;
        if ext != "parquet" {
            return Err(FormatError::Unsupported {
                feature: format!("{ext} base files ({rel})"),
            });
        }
        let bases = &mut self
            .groups
            .entry((partition, parsed.file_id.clone()))
            .or_default()
            .bases;
        bases.retain(|b| b.rel_path != rel);
        bases.push(BaseFile {
            rel_path: rel,
            name: parsed,
            size,
        });
        Ok(())
    }

    /// Takes the file at `rel` out of the listing (a file a clean deleted).
    pub(crate) fn remove_file(&mut self, rel: &str) {
        let partition = rel.rsplit_once('/').map(|(p, _)| p).unwrap_or_default();
        for ((p, _), g) in self.groups.iter_mut() {
            if p == partition {
                g.bases.retain(|b| b.rel_path != rel);
                g.logs.retain(|(r, _)| r != rel);
                g.log_sizes.remove(rel);
                g.cdc_logs.retain(|(r, _)| r != rel);
            }
        }
        self.groups
            .retain(|_, g| !(g.bases.is_empty() && g.logs.is_empty() && g.cdc_logs.is_empty()));
    }

    /// The part of this listing that [`TableListing::read_partitions`] of `partitions` would
    /// find: the file groups in those partitions or folders below them (`""` is all).
    pub fn of_partitions(&self, partitions: &BTreeSet<String>) -> Self {
        Self {
            groups: self
                .groups
                .iter()
                .filter(|((p, _), _)| in_partitions(p, partitions))
                .map(|(k, g)| (k.clone(), g.clone()))
                .collect(),
        }
    }

    /// Every file listed, as (path relative to the table, size; 0 for logs), sorted: what
    /// two listings of the same files agree on.
    pub fn files(&self) -> Vec<(String, u64)> {
        let mut files: Vec<(String, u64)> = self
            .groups
            .values()
            .flat_map(|g| {
                let bases = g.bases.iter().map(|b| (b.rel_path.clone(), b.size));
                let logs = g
                    .logs
                    .iter()
                    .chain(&g.cdc_logs)
                    .map(|(r, _)| (r.clone(), 0));
                bases.chain(logs)
            })
            .collect();
        files.sort();
        files
    }

    /// The file groups listed, as (partition path, file id).
    pub fn groups(&self) -> impl Iterator<Item = &(String, String)> {
        self.groups.keys()
    }

    /// The slice of file group `file_id` in `partition` that a reader seeing the instants
    /// `visible` accepts (committed ones, up to some instant) reads: its latest visible base
    /// file and the logs after it. `None` when the group has no such file.
    pub fn slice<'a>(
        &'a self,
        timeline: &Timeline,
        partition: &str,
        file_id: &str,
        visible: &dyn Fn(&str) -> bool,
    ) -> Option<FileSlice> {
        let files = self
            .groups
            .get(&(partition.to_string(), file_id.to_string()))?;
        let base = files
            .bases
            .iter()
            .filter(|b| visible(&b.name.instant) && timeline.is_committed(&b.name.instant))
            .max_by(|a, b| a.name.instant.cmp(&b.name.instant))
            .cloned();
        let base_instant = base.as_ref().map(|b| b.name.instant.clone());
        // committed logs of the latest slice
        let of_slice = |logs: &'a [(String, LogFileName)]| -> Vec<&'a (String, LogFileName)> {
            let mut kept: Vec<&(String, LogFileName)> = logs
                .iter()
                .filter(|(_, l)| {
                    let after_base = base_instant
                        .as_deref()
                        .is_none_or(|b| in_slice_of(timeline, l, b));
                    let committed = if timeline.layout() >= 2 {
                        visible(&l.instant) && timeline.is_committed(&l.instant)
                    } else {
                        visible(&l.instant)
                    };
                    after_base && committed
                })
                .collect();
            kept.sort_by(|a, b| (&a.1.instant, a.1.version).cmp(&(&b.1.instant, b.1.version)));
            kept
        };
        let log_files = of_slice(&files.logs);
        let cdc_logs = of_slice(&files.cdc_logs);
        if base.is_none() && log_files.is_empty() {
            return None;
        }
        let base_instant = base_instant
            .or_else(|| log_files.first().map(|l| l.1.instant.clone()))
            .unwrap_or_default();
        Some(FileSlice {
            partition_path: partition.to_string(),
            file_id: file_id.to_string(),
            base_instant,
            base_file: base,
            log_files: log_files.into_iter().map(|(r, _)| r.clone()).collect(),
            cdc_logs: cdc_logs.into_iter().map(|(r, _)| r.clone()).collect(),
        })
    }
}

impl TableListing {
    /// Whether file group `file_id` of `partition` still holds a file of the version that
    /// instant `base` began (its base file, or a log file of that base instant).
    pub fn has_version(&self, partition: &str, file_id: &str, base: &str) -> bool {
        self.groups
            .get(&(partition.to_string(), file_id.to_string()))
            .is_some_and(|g| {
                g.bases.iter().any(|b| b.name.instant == base)
                    || g.logs.iter().any(|(_, l)| l.instant == base)
            })
    }

    /// Whether file group `file_id` of `partition` holds the file at `rel` (relative to the
    /// table).
    pub fn has_file(&self, partition: &str, file_id: &str, rel: &str) -> bool {
        self.groups
            .get(&(partition.to_string(), file_id.to_string()))
            .is_some_and(|g| {
                g.bases.iter().any(|b| b.rel_path == rel)
                    || g.logs.iter().chain(&g.cdc_logs).any(|(r, _)| r == rel)
            })
    }

    /// The size the listing found of file `rel` (relative to the table) of file group
    /// `file_id` in `partition`: a base file or a log file; `None` if it is not listed.
    pub fn listed_size(&self, partition: &str, file_id: &str, rel: &str) -> Option<u64> {
        let g = self
            .groups
            .get(&(partition.to_string(), file_id.to_string()))?;
        g.bases
            .iter()
            .find(|b| b.rel_path == rel)
            .map(|b| b.size)
            .or_else(|| g.log_sizes.get(rel).copied())
    }

    /// Every committed slice of file group `file_id` in `partition`, newest first (Hudi's
    /// `HoodieFileGroup.getAllFileSlices`): one per committed base file, holding the logs
    /// (and `.cdc` logs) from its instant up to the next base file's, then, for a group whose
    /// oldest logs precede every base file, a log-only slice. The cleaner picks old ones.
    pub fn all_slices(
        &self,
        timeline: &Timeline,
        partition: &str,
        file_id: &str,
    ) -> Vec<FileSlice> {
        let Some(files) = self
            .groups
            .get(&(partition.to_string(), file_id.to_string()))
        else {
            return Vec::new();
        };
        let mut bases: Vec<&BaseFile> = files
            .bases
            .iter()
            .filter(|b| timeline.is_committed(&b.name.instant))
            .collect();
        bases.sort_by(|a, b| b.name.instant.cmp(&a.name.instant));
        let committed =
            |l: &LogFileName| timeline.layout() < 2 || timeline.is_committed(&l.instant);
        let in_range = |logs: &[(String, LogFileName)], from: Option<&str>, to: Option<&str>| {
            let mut kept: Vec<&(String, LogFileName)> = logs
                .iter()
                .filter(|(_, l)| {
                    committed(l)
                        && from.is_none_or(|f| in_slice_of(timeline, l, f))
                        && to.is_none_or(|t| !in_slice_of(timeline, l, t))
                })
                .collect();
            kept.sort_by(|a, b| (&a.1.instant, a.1.version).cmp(&(&b.1.instant, b.1.version)));
            kept.into_iter().map(|(r, _)| r.clone()).collect::<Vec<_>>()
        };
        let mut slices = Vec::with_capacity(bases.len() + 1);
        let mut next: Option<&str> = None;
        for b in &bases {
            let from = Some(b.name.instant.as_str());
            slices.push(FileSlice {
                partition_path: partition.to_string(),
                file_id: file_id.to_string(),
                base_instant: b.name.instant.clone(),
                base_file: Some((*b).clone()),
                log_files: in_range(&files.logs, from, next),
                cdc_logs: in_range(&files.cdc_logs, from, next),
            });
            next = from;
        }
        let log_files = in_range(&files.logs, None, next);
        if !log_files.is_empty() {
            let first = files
                .logs
                .iter()
                .filter(|(_, l)| committed(l) && next.is_none_or(|t| !in_slice_of(timeline, l, t)))
                .map(|(_, l)| l.instant.clone())
                .min()
                .unwrap_or_default();
            slices.push(FileSlice {
                partition_path: partition.to_string(),
                file_id: file_id.to_string(),
                base_instant: first,
                base_file: None,
                log_files,
                cdc_logs: in_range(&files.cdc_logs, None, next),
            });
        }
        slices
    }
}

/// Whether log file `log` belongs to a slice that began at `base` or later, not to an older
/// one. On timeline layout 2 (Hudi 1.x) a log is sliced by the completion time of the
/// deltacommit that wrote it, its file named by that deltacommit's requested time: a
/// deltacommit that started before a compaction was planned and completed after it logged
/// what that compaction could not hold, so its log belongs to the compaction's slice. On
/// layout 1 a log's name holds its slice's base instant.
fn in_slice_of(timeline: &Timeline, log: &LogFileName, base: &str) -> bool {
    log.instant.as_str() >= base
        || (timeline.layout() >= 2
            && timeline
                .completion_time(&log.instant)
                .is_some_and(|c| c >= base))
}

/// Whether partition path `p` is one of `partitions` or in a folder below one (`""` is all).
pub fn in_partitions(p: &str, partitions: &BTreeSet<String>) -> bool {
    partitions.iter().any(|q| {
        q.is_empty()
            || p == q
            || p.strip_prefix(q.as_str())
                .is_some_and(|r| r.starts_with('/'))
    })
}

/// The file groups replacecommits of `timeline` replaced, up to `as_of` (`None`: all).
pub async fn replaced_file_groups(
    storage: &TableStorage,
    timeline: &Timeline,
    as_of: Option<&str>,
) -> Result<HashSet<(String, String)>> {
    let mut replaced = HashSet::new();
    for i in timeline.completed_writes() {
        if i.action == Action::ReplaceCommit && as_of.is_none_or(|a| i.timestamp.as_str() <= a) {
            let m = timeline.read_commit_metadata(storage, i).await?;
            for (p, id) in m.replaced_file_ids() {
                replaced.insert((p.to_string(), id.to_string()));
            }
        }
    }
    Ok(replaced)
}
