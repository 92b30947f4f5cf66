//! The Avro files of savepoints and restores on the timeline (table version 6): `T.savepoint`
//! holds a `HoodieSavepointMetadata` (the base files a read as of `T` needs), `R.restore.requested`
//! a `HoodieRestorePlan` (the instants a restore rolls back) and `R.restore` a
//! `HoodieRestoreMetadata` (a `HoodieRollbackMetadata` per instant rolled back). Each is the
//! single record of an object container file without codec, with Hudi's `.avsc` schemas and
//! the records they reference defined in place at first use.

use std::collections::{BTreeMap, HashMap};

use apache_avro::types::Value;

use super::rollback::{encode_container, ROLLBACK_METADATA_SCHEMA};
use super::value::{field, first_record, string};
use crate::error::{FormatError, Result};

pub(crate) const SAVEPOINT_SCHEMA: &str = r#"{"namespace":"org.apache.hudi.avro.model","type":"record","name":"HoodieSavepointMetadata","fields":[
 {"name":"savepointedBy","type":"string"},
 {"name":"savepointedAt","type":"long"},
 {"name":"comments","type":"string"},
 {"name":"partitionMetadata","type":{"type":"map","values":{"type":"record","name":"HoodieSavepointPartitionMetadata","fields":[
   {"name":"partitionPath","type":"string"},
   {"name":"savepointDataFile","type":{"type":"array","items":"string"}}]}}},
 {"name":"version","type":["int","null"],"default":1}]}"#;

const RESTORE_PLAN_SCHEMA: &str = r#"{"namespace":"org.apache.hudi.avro.model","type":"record","name":"HoodieRestorePlan","fields":[
 {"name":"instantsToRollback","default":[],"type":{"type":"array","items":{"type":"record","name":"HoodieInstantInfo","fields":[
   {"name":"commitTime","type":"string"},{"name":"action","type":"string"}]}}},
 {"name":"version","type":["int","null"],"default":2},
 {"name":"savepointToRestoreTimestamp","type":["string","null"],"default":null}]}"#;

/// The restore metadata schema: Hudi's `HoodieRestoreMetadata.avsc` with
/// `HoodieRollbackMetadata` (which defines `HoodieInstantInfo`) in place of its first use.
fn restore_metadata_schema() -> String {
    format!(
        r#"{{"namespace":"org.apache.hudi.avro.model","type":"record","name":"HoodieRestoreMetadata","fields":[
 {{"name":"startRestoreTime","type":"string"}},
 {{"name":"timeTakenInMillis","type":"long"}},
 {{"name":"instantsToRollback","type":{{"type":"array","items":"string"}}}},
 {{"name":"hoodieRestoreMetadata","type":{{"type":"map","values":{{"type":"array","items":["null",{ROLLBACK_METADATA_SCHEMA}]}}}}}},
 {{"name":"version","type":["int","null"],"default":1}},
 {{"name":"restoreInstantInfo","default":[],"type":{{"type":"array","items":"HoodieInstantInfo"}}}},
 {{"name":"extraMetadata","type":["null",{{"type":"map","values":"string"}}],"default":null}}]}}"#
    )
}

fn corrupt(path: &str, e: impl ToString) -> FormatError {
    FormatError::Corrupt {
        path: path.to_string(),
        reason: e.to_string(),
    }
}

fn instant_info(ts: &str, action: &str) -> Value {
    Value::Record(vec![
        ("commitTime".into(), Value::String(ts.to_string())),
        ("action".into(), Value::String(action.to_string())),
    ])
}

/// Encodes `T.savepoint`: who and when, and per partition the base file names it keeps.
pub fn savepoint_metadata_avro(
    user: &str,
    comments: &str,
    at_epoch_seconds: i64,
    files: &BTreeMap<String, Vec<String>>,
    path: &str,
) -> Result<Vec<u8>> {
    let partitions: HashMap<String, Value> = files
        .iter()
        .map(|(p, names)| {
            let record = Value::Record(vec![
                ("partitionPath".into(), Value::String(p.clone())),
                (
                    "savepointDataFile".into(),
                    Value::Array(names.iter().map(|n| Value::String(n.clone())).collect()),
                ),
            ]);
            (p.clone(), record)
        })
        .collect();
    let value = Value::Record(vec![
        ("savepointedBy".into(), Value::String(user.to_string())),
        ("savepointedAt".into(), Value::Long(at_epoch_seconds)),
        ("comments".into(), Value::String(comments.to_string())),
        ("partitionMetadata".into(), Value::Map(partitions)),
        ("version".into(), Value::Union(0, Box::new(Value::Int(1)))),
    ]);
    encode_container("HoodieSavepointMetadata", SAVEPOINT_SCHEMA, value)
        .map_err(|e| corrupt(path, e))
}

/// The base file names a `T.savepoint` keeps, by partition.
pub fn parse_savepoint_files(bytes: &[u8], path: &str) -> Result<BTreeMap<String, Vec<String>>> {
    let value = first_record(bytes, path, "savepoint metadata")?;
    let mut out = BTreeMap::new();
    if let Some(Value::Map(m)) = field(&value, "partitionMetadata") {
        for (p, pm) in m {
            let names = match field(pm, "savepointDataFile") {
                Some(Value::Array(items)) => items.iter().filter_map(|i| string(Some(i))).collect(),
                _ => Vec::new(),
            };
            out.insert(p.clone(), names);
        }
    }
    Ok(out)
}

/// Encodes `R.restore.requested`: the instants (time, action) to roll back, newest first, and
/// the savepoint restored to.
pub fn restore_plan_avro(
    instants: &[(String, String)],
    savepoint: &str,
    path: &str,
) -> Result<Vec<u8>> {
    let value = Value::Record(vec![
        (
            "instantsToRollback".into(),
            Value::Array(instants.iter().map(|(t, a)| instant_info(t, a)).collect()),
        ),
        ("version".into(), Value::Union(0, Box::new(Value::Int(2)))),
        (
            "savepointToRestoreTimestamp".into(),
            Value::Union(0, Box::new(Value::String(savepoint.to_string()))),
        ),
    ]);
    encode_container("HoodieRestorePlan", RESTORE_PLAN_SCHEMA, value).map_err(|e| corrupt(path, e))
}

/// Encodes `R.restore`: the instants rolled back (time, action), each with its
/// `HoodieRollbackMetadata` record.
pub fn restore_metadata_avro(
    restore_time: &str,
    time_taken_ms: i64,
    rolled_back: Vec<(String, String, Value)>,
    path: &str,
) -> Result<Vec<u8>> {
    let times = rolled_back
        .iter()
        .map(|(t, _, _)| Value::String(t.clone()))
        .collect();
    let infos = rolled_back
        .iter()
        .map(|(t, a, _)| instant_info(t, a))
        .collect();
    let by_instant: HashMap<String, Value> = rolled_back
        .into_iter()
        .map(|(t, _, m)| (t, Value::Array(vec![Value::Union(1, Box::new(m))])))
        .collect();
    let value = Value::Record(vec![
        (
            "startRestoreTime".into(),
            Value::String(restore_time.to_string()),
        ),
        ("timeTakenInMillis".into(), Value::Long(time_taken_ms)),
        ("instantsToRollback".into(), Value::Array(times)),
        ("hoodieRestoreMetadata".into(), Value::Map(by_instant)),
        ("version".into(), Value::Union(0, Box::new(Value::Int(1)))),
        ("restoreInstantInfo".into(), Value::Array(infos)),
        (
            "extraMetadata".into(),
            Value::Union(0, Box::new(Value::Null)),
        ),
    ]);
    encode_container("HoodieRestoreMetadata", &restore_metadata_schema(), value)
        .map_err(|e| corrupt(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::avro::rollback::{rollback_metadata_record, RollbackPartition, RolledBackInstant};

    #[test]
    fn savepoint_files_round_trip() {
        let files = BTreeMap::from([
            ("dt=x".to_string(), vec!["a_0-1-0_001.parquet".to_string()]),
            (String::new(), vec![]),
        ]);
        let bytes = savepoint_metadata_avro("hoodie", "before the job", 1_700_000_000, &files, "s")
            .unwrap();
        assert_eq!(parse_savepoint_files(&bytes, "s").unwrap(), files);
        assert!(parse_savepoint_files(b"junk", "s").is_err());
    }

    #[test]
    fn restore_files_encode_with_javas_records() {
        let plan = restore_plan_avro(&[("002".into(), "commit".into())], "001", "p").unwrap();
        let reader = apache_avro::Reader::new(plan.as_slice()).unwrap();
        assert_eq!(reader.count(), 1);
        let rolled = RolledBackInstant {
            instant_time: "002".into(),
            action: "commit".into(),
            state: "COMPLETED".into(),
        };
        let parts = [RollbackPartition {
            partition_path: "dt=x".into(),
            deleted_files: vec!["/t/dt=x/a_0-1-0_002.parquet".into()],
            failed_delete_files: vec![],
        }];
        let record = rollback_metadata_record("003", "003", 1, &rolled, &parts, 1).unwrap();
        let meta =
            restore_metadata_avro("003", 5, vec![("002".into(), "commit".into(), record)], "m")
                .unwrap();
        let reader = apache_avro::Reader::new(meta.as_slice()).unwrap();
        let schema = serde_json::to_value(reader.writer_schema()).unwrap();
        assert_eq!(schema["name"], "HoodieRestoreMetadata");
        let records: Vec<Value> = reader.map(Result::unwrap).collect();
        let Some(Value::Array(times)) = field(&records[0], "instantsToRollback") else {
            panic!("{records:?}")
        };
        assert_eq!(times, &vec![Value::String("002".into())]);
    }
}
