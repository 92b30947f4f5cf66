//! File-system view: the latest committed file slice of every file group, as of an instant.

use std::collections::{BTreeMap, HashSet};

use crate::error::{FormatError, Result};
use crate::file_name::{BaseFileName, LogFileName, PARTITION_METADATA_FILE};
use crate::storage::TableStorage;
use crate::timeline::instant::{Action, State};
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

/// The files of one file group as of one base instant.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

/// Builds file slices from a listing of the table.
#[derive(Debug, Clone)]
pub struct FileSystemView {
    slices: Vec<FileSlice>,
}

/// (partition path, file id)
type GroupKey = (String, String);
/// base files and (relative path, parsed name) of log files of one file group
type GroupFiles = (Vec<BaseFile>, Vec<(String, LogFileName)>);

fn is_hidden_dir(rel: &str) -> bool {
    rel.starts_with(".hoodie/")
        || rel.starts_with("__MACOSX/")
        || rel
            .split('/')
            .any(|p| p.starts_with("._") || p == ".DS_Store")
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
        let visible = |instant: &str| -> bool {
            as_of.is_none_or(|a| instant <= a) && timeline.is_committed(instant)
        };
        // file groups replaced as of `as_of`
        let mut replaced: HashSet<(String, String)> = HashSet::new();
        for i in timeline.completed_writes() {
            if i.action == Action::ReplaceCommit && as_of.is_none_or(|a| i.timestamp.as_str() <= a)
            {
                let m = timeline.read_commit_metadata(storage, i).await?;
                for (p, id) in m.replaced_file_ids() {
                    replaced.insert((p.to_string(), id.to_string()));
                }
            }
        }
        // group files by (partition, file id)
        let mut groups: BTreeMap<GroupKey, GroupFiles> = BTreeMap::new();
        for meta in storage.list_all("").await? {
            let rel = storage.relative(&meta.location);
            if is_hidden_dir(&rel) {
                continue;
            }
            let (partition, name) = match rel.rsplit_once('/') {
                Some((p, n)) => (p.to_string(), n.to_string()),
                None => (String::new(), rel.clone()),
            };
            if name.starts_with(PARTITION_METADATA_FILE) {
                continue;
            }
            if let Some(log) = LogFileName::parse(&name) {
                if !log.is_cdc {
                    groups
                        .entry((partition, log.file_id.clone()))
                        .or_default()
                        .1
                        .push((rel, log));
                }
                continue;
            }
            if name.starts_with('.') || !name.contains('_') {
                continue;
            }
            let ext = name.rsplit('.').next().unwrap_or_default();
            if !matches!(ext, "parquet" | "orc" | "hfile" | "lance") {
                continue;
            }
            let parsed = BaseFileName::parse(&name)?;
            if ext != "parquet" {
                return Err(FormatError::Unsupported {
                    feature: format!("{ext} base files ({rel})"),
                });
            }
            if !visible(&parsed.instant) {
                continue;
            }
            groups
                .entry((partition, parsed.file_id.clone()))
                .or_default()
                .0
                .push(BaseFile {
                    rel_path: rel,
                    name: parsed,
                    size: meta.size,
                });
        }
        let mut slices = Vec::new();
        for ((partition, file_id), (mut bases, logs)) in groups {
            if replaced.contains(&(partition.clone(), file_id.clone())) {
                continue;
            }
            bases.sort_by(|a, b| a.name.instant.cmp(&b.name.instant));
            let base = bases.pop();
            let base_instant = base.as_ref().map(|b| b.name.instant.clone());
            // committed logs of the latest slice
            let mut log_files: Vec<&(String, LogFileName)> = logs
                .iter()
                .filter(|(_, l)| {
                    let after_base = base_instant
                        .as_deref()
                        .is_none_or(|b| l.instant.as_str() >= b);
                    let committed = if timeline.layout() >= 2 {
                        visible(&l.instant)
                    } else {
                        as_of.is_none_or(|a| l.instant.as_str() <= a)
                    };
                    after_base && committed
                })
                .collect();
            log_files.sort_by(|a, b| (&a.1.instant, a.1.version).cmp(&(&b.1.instant, b.1.version)));
            if base.is_none() && log_files.is_empty() {
                continue;
            }
            let base_instant = base_instant
                .or_else(|| log_files.first().map(|l| l.1.instant.clone()))
                .unwrap_or_default();
            slices.push(FileSlice {
                partition_path: partition,
                file_id,
                base_instant,
                base_file: base,
                log_files: log_files.into_iter().map(|(r, _)| r.clone()).collect(),
            });
        }
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
