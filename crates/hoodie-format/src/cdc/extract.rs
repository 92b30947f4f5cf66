//! Which files a CDC read of a window uses (Hudi's `HoodieCDCExtractor`): per completed write
//! whose requested time is in `(begin, end]` and whose operation can yield changes, and per
//! file group it wrote or replaced, one [`CdcSplit`] saying how its changes are found.

use crate::error::{FormatError, Result};
use crate::file_name::LogFileName;
use crate::fs_view::{FileSlice, TableListing};
use crate::storage::TableStorage;
use crate::timeline::commit_metadata::WriteStat;
use crate::timeline::Timeline;

use crate::log::slice::SliceFiles;

/// The operations whose commits can yield changes (`WriteOperationType.yieldChanges`):
/// compaction, clustering and prepped inserts rewrite records without changing them.
const YIELD_CHANGES: [&str; 10] = [
    "INSERT",
    "UPSERT",
    "UPSERT_PREPPED",
    "DELETE",
    "DELETE_PREPPED",
    "BULK_INSERT",
    "DELETE_PARTITION",
    "INSERT_OVERWRITE",
    "INSERT_OVERWRITE_TABLE",
    "BOOTSTRAP",
];

/// How one file group's changes by one commit are found (`HoodieCDCInferenceCase`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Inference {
    /// AS_IS: the commit logged them to `.cdc` files. `after` is the new base file (it gives
    /// the after images the DATA_BEFORE and OP_KEY_ONLY modes leave out), `before` the slice it
    /// replaced (the before images OP_KEY_ONLY leaves out).
    Logged {
        /// The `.cdc` logs (paths relative to the table).
        cdc_files: Vec<String>,
        /// The new file slice.
        after: SliceFiles,
        /// The file slice before the commit.
        before: SliceFiles,
    },
    /// BASE_FILE_INSERT and BASE_FILE_DELETE: a rewrite that kept no stored record. Every
    /// record of `inserted` is an insert, every record of `deleted` a delete.
    BaseFile {
        /// The new base file, when it holds records.
        inserted: Option<SliceFiles>,
        /// The slice the commit emptied, when it deleted records.
        deleted: Option<SliceFiles>,
    },
    /// LOG_FILE (merge-on-read): the changes are the difference between the slice without
    /// and with the commit's log blocks, for the keys its log files hold.
    LogFile {
        /// The slice the log files belong to, up to the commit.
        slice: SliceFiles,
        /// The commit's log files.
        logs: Vec<String>,
    },
    /// REPLACE_COMMIT: every record of the replaced file group's last slice is deleted.
    Replaced {
        /// That slice.
        before: SliceFiles,
    },
}

/// One file group's changes by one commit; as JSON, for a reader in another process.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CdcSplit {
    /// The commit's requested time (the change rows' `ts_ms`).
    pub instant: String,
    /// Partition path of the file group.
    pub partition_path: String,
    /// File group id.
    pub file_id: String,
    /// How its changes are found.
    pub inference: Inference,
}

fn files_of(slice: Option<FileSlice>) -> SliceFiles {
    slice.map_or_else(SliceFiles::default, |s| SliceFiles {
        base: s.base_file.map(|b| b.rel_path),
        logs: s.log_files,
    })
}

/// The splits of the window `(begin, end]` on requested time (`begin` all zeros: from the
/// first commit; `end` `None`: to the latest), in commit order.
pub async fn cdc_splits(
    storage: &TableStorage,
    timeline: &Timeline,
    begin: &str,
    end: Option<&str>,
) -> Result<Vec<CdcSplit>> {
    let open_start = begin.bytes().all(|b| b == b'0');
    let listing = TableListing::read(storage).await?;
    let mut splits = Vec::new();
    for instant in timeline.completed_writes() {
        let t = instant.timestamp.as_str();
        if !(open_start || t > begin) || end.is_some_and(|e| t > e) {
            continue;
        }
        let metadata = timeline.read_commit_metadata(storage, instant).await?;
        if metadata
            .operation_type
            .as_deref()
            .is_some_and(|op| !YIELD_CHANGES.contains(&op.to_ascii_uppercase().as_str()))
        {
            continue;
        }
        let before = |p: &str, id: &str| listing.slice(timeline, p, id, &|i: &str| i < t);
        let upto = |p: &str, id: &str| listing.slice(timeline, p, id, &|i: &str| i <= t);
        let mut logs_by_group: std::collections::BTreeMap<(String, String), Vec<String>> =
            Default::default();
        for stat in metadata.write_stats() {
            let (Some(file_id), Some(path)) = (&stat.file_id, &stat.path) else {
                continue;
            };
            let partition = stat.partition_path.clone().unwrap_or_default();
            check_kept(&listing, t, &partition, file_id, stat)?;
            let name = path.rsplit('/').next().unwrap_or(path);
            if stat.cdc_stats.as_ref().is_none_or(|c| c.is_empty())
                && LogFileName::parse(name).is_some()
            {
                logs_by_group
                    .entry((partition, file_id.clone()))
                    .or_default()
                    .push(path.clone());
                continue;
            }
            let inference = base_file_inference(
                t,
                &partition,
                file_id,
                stat,
                files_of(before(&partition, file_id)),
            )?;
            splits.push(CdcSplit {
                instant: t.to_string(),
                partition_path: partition,
                file_id: file_id.clone(),
                inference,
            });
        }
        for ((partition, file_id), logs) in logs_by_group {
            splits.push(CdcSplit {
                instant: t.to_string(),
                inference: Inference::LogFile {
                    slice: files_of(upto(&partition, &file_id)),
                    logs,
                },
                partition_path: partition,
                file_id,
            });
        }
        for (partition, file_id) in metadata.replaced_file_ids() {
            let Some(slice) = before(partition, file_id) else {
                // a replacecommit names the groups it replaced: gone, they were cleaned
                return Err(FormatError::CdcFilesCleaned {
                    instant: t.to_string(),
                    what: format!("the file group {partition}/{file_id} it replaced"),
                });
            };
            splits.push(CdcSplit {
                instant: t.to_string(),
                partition_path: partition.to_string(),
                file_id: file_id.to_string(),
                inference: Inference::Replaced {
                    before: files_of(Some(slice)),
                },
            });
        }
    }
    Ok(splits)
}

/// Fails when the cleaner deleted a file the changes of `stat` are read from: the file it
/// wrote, its `.cdc` logs, or the version of the file group it changed (`prevCommit`), which
/// the before images come from. A read from the listing's remaining files would otherwise
/// infer the wrong changes (an update as an insert) without a word.
fn check_kept(
    listing: &TableListing,
    instant: &str,
    partition: &str,
    file_id: &str,
    stat: &WriteStat,
) -> Result<()> {
    let gone = |what: String| FormatError::CdcFilesCleaned {
        instant: instant.to_string(),
        what,
    };
    let written = stat
        .path
        .iter()
        .chain(stat.cdc_stats.iter().flat_map(|c| c.keys()));
    for rel in written {
        if !listing.has_file(partition, file_id, rel) {
            return Err(gone(rel.clone()));
        }
    }
    let prev = stat
        .prev_commit
        .as_deref()
        .filter(|p| !p.is_empty() && *p != "null");
    if let Some(prev) = prev {
        if !listing.has_version(partition, file_id, prev) {
            return Err(gone(format!(
                "the {prev} version of file group {partition}/{file_id} it changed"
            )));
        }
    }
    Ok(())
}

/// The inference of a write stat of a base file (`before`: the group's slice before it).
fn base_file_inference(
    instant: &str,
    partition: &str,
    file_id: &str,
    stat: &WriteStat,
    before: SliceFiles,
) -> Result<Inference> {
    let path = stat.path.clone().unwrap_or_default();
    if let Some(cdc) = stat.cdc_stats.as_ref().filter(|c| !c.is_empty()) {
        return Ok(Inference::Logged {
            cdc_files: cdc.keys().cloned().collect(),
            after: SliceFiles::base_only(&path),
            before,
        });
    }
    // without a log, the rewrite kept no stored record: every written one is an insert and
    // every record before it is gone (Hudi infers the inserts alone, and the deletes only
    // when nothing was written)
    if stat.num_update_writes == 0 && stat.num_writes == stat.num_inserts {
        let has_before = before.base.is_some() || !before.logs.is_empty();
        return Ok(Inference::BaseFile {
            inserted: (stat.num_writes > 0).then(|| SliceFiles::base_only(&path)),
            deleted: (stat.num_deletes > 0 && has_before).then_some(before),
        });
    }
    Err(FormatError::CdcLogMissing {
        instant: instant.to_string(),
        file_group: format!("{partition}/{file_id}"),
        updates: stat.num_update_writes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(writes: i64, inserts: i64, updates: i64, deletes: i64) -> WriteStat {
        WriteStat {
            file_id: Some("f1".into()),
            path: Some("p/f1_0-1-2_002.parquet".into()),
            num_writes: writes,
            num_inserts: inserts,
            num_update_writes: updates,
            num_deletes: deletes,
            ..Default::default()
        }
    }

    fn before() -> SliceFiles {
        SliceFiles::base_only("p/f1_0-1-2_001.parquet")
    }

    #[test]
    fn a_rewrite_without_a_log_is_inferred_from_its_files() {
        let new_group = base_file_inference("002", "p", "f1", &stat(3, 3, 0, 0), before()).unwrap();
        assert_eq!(
            new_group,
            Inference::BaseFile {
                inserted: Some(SliceFiles::base_only("p/f1_0-1-2_002.parquet")),
                deleted: None
            }
        );
        let emptied = base_file_inference("002", "p", "f1", &stat(0, 0, 0, 2), before()).unwrap();
        assert_eq!(
            emptied,
            Inference::BaseFile {
                inserted: None,
                deleted: Some(before())
            }
        );
        let e = base_file_inference("002", "p", "f1", &stat(3, 1, 2, 0), before()).unwrap_err();
        assert!(
            e.to_string().contains("There should be a cdc log file"),
            "{e}"
        );
    }

    #[test]
    fn a_logged_rewrite_is_as_is() {
        let mut s = stat(3, 1, 2, 0);
        s.cdc_stats = Some([("p/.f1_002.log.1_0-1-2.cdc".to_string(), 10)].into());
        let got = base_file_inference("002", "p", "f1", &s, before()).unwrap();
        assert!(
            matches!(got, Inference::Logged { cdc_files, .. } if cdc_files == ["p/.f1_002.log.1_0-1-2.cdc"])
        );
    }
}
