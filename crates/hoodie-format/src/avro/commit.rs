//! Commit metadata as table versions 8 and 9 write it: one `HoodieCommitMetadata` record in an
//! Avro object container file without codec (Java's `CommitMetadataSerDeV2`), in completed
//! commits, deltacommits and replacecommits and in their inflight files. The schema is the
//! one Spark 1.1+ writes into those files (read off the Spark-written fixtures), so Java reads
//! every field back under its own names.

use std::collections::HashMap;

use apache_avro::types::Value;

use super::rollback::encode_container;
use crate::error::{FormatError, Result};
use crate::timeline::{CommitMetadata, WriteStat};

const COMMIT_METADATA_SCHEMA: &str = r#"{"type":"record","name":"HoodieCommitMetadata","namespace":"org.apache.hudi.avro.model","fields":[
 {"name":"partitionToWriteStats","type":["null",{"type":"map","values":{"type":"array","items":{"type":"record","name":"HoodieWriteStat","fields":[
  {"name":"fileId","type":["null","string"],"default":null},
  {"name":"path","type":["null","string"],"default":null},
  {"name":"prevCommit","type":["null","string"],"default":null},
  {"name":"numWrites","type":["null","long"],"default":null},
  {"name":"numDeletes","type":["null","long"],"default":null},
  {"name":"numUpdateWrites","type":["null","long"],"default":null},
  {"name":"totalWriteBytes","type":["null","long"],"default":null},
  {"name":"totalWriteErrors","type":["null","long"],"default":null},
  {"name":"partitionPath","type":["null","string"],"default":null},
  {"name":"totalLogRecords","type":["null","long"],"default":null},
  {"name":"totalLogFiles","type":["null","long"],"default":null},
  {"name":"totalUpdatedRecordsCompacted","type":["null","long"],"default":null},
  {"name":"numInserts","type":["null","long"],"default":null},
  {"name":"totalLogBlocks","type":["null","long"],"default":null},
  {"name":"totalCorruptLogBlock","type":["null","long"],"default":null},
  {"name":"totalRollbackBlocks","type":["null","long"],"default":null},
  {"name":"fileSizeInBytes","type":["null","long"],"default":null},
  {"name":"logVersion","type":["null","int"],"default":null},
  {"name":"logOffset","type":["null","long"],"default":null},
  {"name":"baseFile","type":["null","string"],"default":null},
  {"name":"logFiles","type":["null",{"type":"array","items":"string"}],"default":null},
  {"name":"cdcStats","type":["null",{"type":"map","values":"long"}],"default":null},
  {"name":"prevBaseFile","type":["null","string"],"default":null},
  {"name":"minEventTime","type":["null","long"],"default":null},
  {"name":"maxEventTime","type":["null","long"],"default":null},
  {"name":"runtimeStats","type":["null",{"type":"record","name":"HoodieRuntimeStats","fields":[
   {"name":"totalScanTime","type":["null","long"],"default":null},
   {"name":"totalCreateTime","type":["null","long"],"default":null},
   {"name":"totalUpsertTime","type":["null","long"],"default":null}]}],"default":null},
  {"name":"totalLogFilesCompacted","type":["null","long"],"default":null},
  {"name":"totalLogReadTimeMs","type":["null","long"],"default":null},
  {"name":"totalLogSizeCompacted","type":["null","long"],"default":null},
  {"name":"tempPath","type":["null","string"],"default":null},
  {"name":"numUpdates","type":["null","long"],"default":null}]}}}],"default":null},
 {"name":"compacted","type":["null","boolean"],"default":null},
 {"name":"extraMetadata","type":["null",{"type":"map","values":"string"}],"default":null},
 {"name":"version","type":["int","null"],"default":1},
 {"name":"operationType","type":["null","string"],"default":null}]}"#;

/// The record of a replacecommit: the commit's fields plus the replaced file groups
/// (Java's `HoodieReplaceCommitMetadata.avsc`).
fn replace_commit_metadata_schema() -> String {
    let fields_end = COMMIT_METADATA_SCHEMA
        .rfind("]}")
        .unwrap_or(COMMIT_METADATA_SCHEMA.len());
    COMMIT_METADATA_SCHEMA[..fields_end].replacen(
        "\"name\":\"HoodieCommitMetadata\"",
        "\"name\":\"HoodieReplaceCommitMetadata\"",
        1,
    ) + r#",
 {"name":"partitionToReplaceFileIds","type":["null",{"type":"map","values":{"type":"array","items":"string"}}],"default":null}]}"#
}

fn some(v: Value) -> Value {
    Value::Union(1, Box::new(v))
}

fn null() -> Value {
    Value::Union(0, Box::new(Value::Null))
}

fn text(s: &Option<String>) -> Value {
    s.as_ref()
        .map_or_else(null, |s| some(Value::String(s.clone())))
}

fn long(v: i64) -> Value {
    some(Value::Long(v))
}

fn write_stat(s: &WriteStat) -> Value {
    let optional_long = |v: Option<i64>| v.map_or_else(null, long);
    Value::Record(vec![
        ("fileId".into(), text(&s.file_id)),
        ("path".into(), text(&s.path)),
        ("prevCommit".into(), text(&s.prev_commit)),
        ("numWrites".into(), long(s.num_writes)),
        ("numDeletes".into(), long(s.num_deletes)),
        ("numUpdateWrites".into(), long(s.num_update_writes)),
        ("totalWriteBytes".into(), long(s.total_write_bytes)),
        ("totalWriteErrors".into(), long(s.total_write_errors)),
        ("partitionPath".into(), text(&s.partition_path)),
        ("totalLogRecords".into(), long(s.total_log_records)),
        (
            "totalLogFiles".into(),
            long(s.log_files.as_ref().map_or(0, |l| l.len() as i64)),
        ),
        (
            "totalUpdatedRecordsCompacted".into(),
            long(s.total_updated_records_compacted),
        ),
        ("numInserts".into(), long(s.num_inserts)),
        ("totalLogBlocks".into(), long(s.total_log_blocks)),
        (
            "totalCorruptLogBlock".into(),
            long(s.total_corrupt_log_block),
        ),
        ("totalRollbackBlocks".into(), long(s.total_rollback_blocks)),
        ("fileSizeInBytes".into(), long(s.file_size_in_bytes)),
        (
            "logVersion".into(),
            s.log_version
                .map_or_else(null, |v| some(Value::Int(v as i32))),
        ),
        ("logOffset".into(), optional_long(s.log_offset)),
        ("baseFile".into(), text(&s.base_file)),
        (
            "logFiles".into(),
            s.log_files.as_ref().map_or_else(null, |l| {
                some(Value::Array(
                    l.iter().map(|f| Value::String(f.clone())).collect(),
                ))
            }),
        ),
        (
            "cdcStats".into(),
            s.cdc_stats.as_ref().map_or_else(null, |m| {
                some(Value::Map(
                    m.iter()
                        .map(|(k, v)| (k.clone(), Value::Long(*v)))
                        .collect(),
                ))
            }),
        ),
        ("prevBaseFile".into(), text(&s.prev_base_file)),
        ("minEventTime".into(), optional_long(s.min_event_time)),
        ("maxEventTime".into(), optional_long(s.max_event_time)),
        ("runtimeStats".into(), null()),
        (
            "totalLogFilesCompacted".into(),
            long(s.total_log_files_compacted),
        ),
        ("totalLogReadTimeMs".into(), long(0)),
        (
            "totalLogSizeCompacted".into(),
            long(s.total_log_size_compacted),
        ),
        ("tempPath".into(), text(&s.temp_path)),
        ("numUpdates".into(), null()),
    ])
}

/// Encodes commit metadata as table versions 8 and 9 write it; a replacecommit's (one with
/// replaced file groups) as `HoodieReplaceCommitMetadata`.
pub(crate) fn commit_metadata_avro(m: &CommitMetadata, path: &str) -> Result<Vec<u8>> {
    let stats: HashMap<String, Value> = m
        .partition_to_write_stats
        .iter()
        .map(|(p, stats)| {
            (
                p.clone(),
                Value::Array(stats.iter().map(write_stat).collect()),
            )
        })
        .collect();
    let extra: HashMap<String, Value> = m
        .extra_metadata
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let mut fields = vec![
        ("partitionToWriteStats".into(), some(Value::Map(stats))),
        ("compacted".into(), some(Value::Boolean(m.compacted))),
        ("extraMetadata".into(), some(Value::Map(extra))),
        ("version".into(), Value::Union(0, Box::new(Value::Int(1)))),
        ("operationType".into(), text(&m.operation_type)),
    ];
    let encoded = match &m.partition_to_replace_file_ids {
        None => encode_container(
            "HoodieCommitMetadata",
            COMMIT_METADATA_SCHEMA,
            Value::Record(fields),
        ),
        Some(replaced) => {
            let replaced: HashMap<String, Value> = replaced
                .iter()
                .map(|(p, ids)| {
                    let ids = ids.iter().map(|i| Value::String(i.clone())).collect();
                    (p.clone(), Value::Array(ids))
                })
                .collect();
            fields.push((
                "partitionToReplaceFileIds".into(),
                some(Value::Map(replaced)),
            ));
            encode_container(
                "HoodieReplaceCommitMetadata",
                &replace_commit_metadata_schema(),
                Value::Record(fields),
            )
        }
    };
    encoded.map_err(|e| FormatError::Corrupt {
        path: path.to_string(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn metadata() -> CommitMetadata {
        let stat = WriteStat {
            file_id: Some("f-0".into()),
            path: Some("dt=a/f-0_0-1-2_20260101000000000.parquet".into()),
            prev_commit: Some("null".into()),
            num_writes: 3,
            num_inserts: 2,
            num_update_writes: 1,
            file_size_in_bytes: 4321,
            total_write_bytes: 4321,
            partition_path: Some("dt=a".into()),
            log_files: Some(vec![".f-0_20260101000000000.log.1_0-1-2".into()]),
            log_version: Some(1),
            ..Default::default()
        };
        let mut extra = BTreeMap::new();
        extra.insert("schema".to_string(), "{\"type\":\"record\"}".to_string());
        CommitMetadata {
            partition_to_write_stats: BTreeMap::from([("dt=a".to_string(), vec![stat])]),
            partition_to_replace_file_ids: None,
            compacted: false,
            extra_metadata: extra,
            operation_type: Some("UPSERT".into()),
        }
    }

    #[test]
    fn commit_metadata_round_trips_through_avro() {
        let m = metadata();
        let bytes = commit_metadata_avro(&m, "x").unwrap();
        assert!(bytes.starts_with(b"Obj\x01"));
        let back = CommitMetadata::parse(&bytes, "x").unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn replace_commit_metadata_keeps_the_replaced_file_groups() {
        let mut m = metadata();
        m.partition_to_replace_file_ids = Some(BTreeMap::from([(
            "dt=a".to_string(),
            vec!["old-0".to_string()],
        )]));
        let bytes = commit_metadata_avro(&m, "x").unwrap();
        let back = CommitMetadata::parse(&bytes, "x").unwrap();
        assert_eq!(
            back.replaced_file_ids().collect::<Vec<_>>(),
            vec![("dt=a", "old-0")]
        );
        assert_eq!(back.write_stats().next(), m.write_stats().next());
    }
}
