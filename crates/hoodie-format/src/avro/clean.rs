//! The Avro files of a clean on the timeline (table version 6): `C.clean.requested` (and
//! `C.clean.inflight`) hold a `HoodieCleanerPlan`, `C.clean` a `HoodieCleanMetadata`, each the
//! single record of an object container file without codec, as Java's
//! `TimelineMetadataUtils.serializeAvroMetadata` writes them. The schemas are Hudi's `.avsc`
//! files (`HoodieCleanerPlan`, `HoodieCleanMetadata`, `HoodieCleanPartitionMetadata`) with the
//! records they reference defined in place at first use, as in the Java classes' `SCHEMA$`.

use std::collections::{BTreeMap, HashMap};

use apache_avro::types::Value;

use super::value::{field, first_record, string};
use crate::error::{FormatError, Result};

/// The plan version Java writes (`CleanPlanner.LATEST_CLEAN_PLAN_VERSION`).
pub const CLEAN_PLAN_VERSION: i32 = 2;
/// The metadata version Java writes (`CleanerUtils.LATEST_CLEAN_METADATA_VERSION`).
pub const CLEAN_METADATA_VERSION: i32 = 2;

const PLAN_SCHEMA: &str = r#"{"namespace":"org.apache.hudi.avro.model","type":"record","name":"HoodieCleanerPlan","fields":[
 {"name":"earliestInstantToRetain","type":["null",{"type":"record","name":"HoodieActionInstant","fields":[
   {"name":"timestamp","type":"string"},{"name":"action","type":"string"},{"name":"state","type":"string"}]}],"default":null},
 {"name":"lastCompletedCommitTimestamp","type":"string","default":""},
 {"name":"policy","type":"string"},
 {"name":"filesToBeDeletedPerPartition","type":["null",{"type":"map","values":{"type":"array","items":"string"}}],"default":null},
 {"name":"version","type":["int","null"],"default":1},
 {"name":"filePathsToBeDeletedPerPartition","type":["null",{"type":"map","values":{"type":"array","items":{"name":"HoodieCleanFileInfo","type":"record","fields":[
   {"name":"filePath","type":["null","string"],"default":null},{"name":"isBootstrapBaseFile","type":["null","boolean"],"default":null}]}}}],"default":null},
 {"name":"partitionsToBeDeleted","type":["null",{"type":"array","items":"string"}],"default":null},
 {"name":"extraMetadata","type":["null",{"type":"map","values":"string"}],"default":null}]}"#;

const METADATA_SCHEMA: &str = r#"{"namespace":"org.apache.hudi.avro.model","type":"record","name":"HoodieCleanMetadata","fields":[
 {"name":"policy","type":"string","default":""},
 {"name":"startCleanTime","type":"string"},
 {"name":"timeTakenInMillis","type":"long"},
 {"name":"totalFilesDeleted","type":"int"},
 {"name":"earliestCommitToRetain","type":"string"},
 {"name":"lastCompletedCommitTimestamp","type":"string","default":""},
 {"name":"partitionMetadata","type":{"type":"map","values":{"type":"record","name":"HoodieCleanPartitionMetadata","fields":[
   {"name":"partitionPath","type":"string"},{"name":"policy","type":"string"},
   {"name":"deletePathPatterns","type":{"type":"array","items":"string"}},
   {"name":"successDeleteFiles","type":{"type":"array","items":"string"}},
   {"name":"failedDeleteFiles","type":{"type":"array","items":"string"}},
   {"name":"isPartitionDeleted","type":["null","boolean"],"default":null}]}}},
 {"name":"version","type":["int","null"],"default":1},
 {"name":"bootstrapPartitionMetadata","type":["null",{"type":"map","values":"HoodieCleanPartitionMetadata"}],"default":null}]}"#;

/// What a clean plans to delete (`HoodieCleanerPlan`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CleanerPlan {
    /// The earliest commit the clean keeps (instant time, action); `None` under
    /// `KEEP_LATEST_FILE_VERSIONS`.
    pub earliest_instant_to_retain: Option<(String, String)>,
    /// The latest completed commit when the clean was planned.
    pub last_completed_commit: String,
    /// The policy's name (`KEEP_LATEST_COMMITS`, ...).
    pub policy: String,
    /// Partition path to the absolute paths of the files to delete.
    pub files: BTreeMap<String, Vec<String>>,
    /// Partitions deleted whole (none: hoodie never plans this).
    pub partitions_to_delete: Vec<String>,
}

/// One partition of a completed clean (`HoodieCleanPartitionMetadata`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CleanPartition {
    /// File names the clean tried to delete.
    pub delete_path_patterns: Vec<String>,
    /// File names it deleted (or found gone).
    pub success_delete_files: Vec<String>,
    /// File names it could not delete.
    pub failed_delete_files: Vec<String>,
}

/// A completed clean (`HoodieCleanMetadata`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CleanMetadata {
    /// The policy's name.
    pub policy: String,
    /// The clean's instant time.
    pub start_clean_time: String,
    /// How long deleting took.
    pub time_taken_ms: i64,
    /// Files deleted.
    pub total_files_deleted: i32,
    /// The earliest commit kept (`""` under `KEEP_LATEST_FILE_VERSIONS`).
    pub earliest_commit_to_retain: String,
    /// The latest completed commit when the clean was planned.
    pub last_completed_commit: String,
    /// Per partition.
    pub partitions: BTreeMap<String, CleanPartition>,
    /// The metadata version.
    pub version: i32,
}

fn corrupt(path: &str, reason: impl Into<String>) -> FormatError {
    FormatError::Corrupt {
        path: path.to_string(),
        reason: reason.into(),
    }
}

fn strings(items: &[String]) -> Value {
    Value::Array(items.iter().map(|s| Value::String(s.clone())).collect())
}

fn union<T>(branch: u32, v: T) -> Value
where
    Value: From<T>,
{
    Value::Union(branch, Box::new(Value::from(v)))
}

/// Encodes a `C.clean.requested` file.
pub fn cleaner_plan_avro(plan: &CleanerPlan, path: &str) -> Result<Vec<u8>> {
    let ectr = match &plan.earliest_instant_to_retain {
        Some((ts, action)) => Value::Union(
            1,
            Box::new(Value::Record(vec![
                ("timestamp".into(), Value::String(ts.clone())),
                ("action".into(), Value::String(action.clone())),
                ("state".into(), Value::String("COMPLETED".into())),
            ])),
        ),
        None => Value::Union(0, Box::new(Value::Null)),
    };
    let files: HashMap<String, Value> = plan
        .files
        .iter()
        .map(|(p, fs)| {
            let infos = fs
                .iter()
                .map(|f| {
                    Value::Record(vec![
                        ("filePath".into(), union(1, Value::String(f.clone()))),
                        ("isBootstrapBaseFile".into(), union(1, false)),
                    ])
                })
                .collect();
            (p.clone(), Value::Array(infos))
        })
        .collect();
    let value = Value::Record(vec![
        ("earliestInstantToRetain".into(), ectr),
        (
            "lastCompletedCommitTimestamp".into(),
            Value::String(plan.last_completed_commit.clone()),
        ),
        ("policy".into(), Value::String(plan.policy.clone())),
        (
            "filesToBeDeletedPerPartition".into(),
            union(1, Value::Map(HashMap::new())),
        ),
        ("version".into(), union(0, CLEAN_PLAN_VERSION)),
        (
            "filePathsToBeDeletedPerPartition".into(),
            union(1, Value::Map(files)),
        ),
        (
            "partitionsToBeDeleted".into(),
            union(1, strings(&plan.partitions_to_delete)),
        ),
        ("extraMetadata".into(), union(1, Value::Map(HashMap::new()))),
    ]);
    super::rollback::encode_container("HoodieCleanerPlan", PLAN_SCHEMA, value)
        .map_err(|e| corrupt(path, e.to_string()))
}

fn string_list(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(items)) => items.iter().filter_map(|i| string(Some(i))).collect(),
        _ => Vec::new(),
    }
}

/// Decodes a `C.clean.requested` file (plan version 1's file names are taken as given).
pub fn parse_cleaner_plan(bytes: &[u8], path: &str) -> Result<CleanerPlan> {
    let value = first_record(bytes, path, "cleaner plan")?;
    let earliest = field(&value, "earliestInstantToRetain").and_then(|i| {
        Some((
            string(field(i, "timestamp"))?,
            string(field(i, "action")).unwrap_or_default(),
        ))
    });
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    if let Some(Value::Map(m)) = field(&value, "filePathsToBeDeletedPerPartition") {
        for (p, infos) in m {
            let Value::Array(infos) = infos else {
                return Err(corrupt(path, "filePathsToBeDeletedPerPartition"));
            };
            let paths = infos.iter().filter_map(|i| string(field(i, "filePath")));
            files.entry(p.clone()).or_default().extend(paths);
        }
    }
    if let Some(Value::Map(m)) = field(&value, "filesToBeDeletedPerPartition") {
        for (p, names) in m {
            files
                .entry(p.clone())
                .or_default()
                .extend(string_list(Some(names)));
        }
    }
    Ok(CleanerPlan {
        earliest_instant_to_retain: earliest,
        last_completed_commit: string(field(&value, "lastCompletedCommitTimestamp"))
            .unwrap_or_default(),
        policy: string(field(&value, "policy")).unwrap_or_default(),
        files,
        partitions_to_delete: string_list(field(&value, "partitionsToBeDeleted")),
    })
}

/// Encodes a `C.clean` file.
pub fn clean_metadata_avro(meta: &CleanMetadata, path: &str) -> Result<Vec<u8>> {
    let partitions: HashMap<String, Value> = meta
        .partitions
        .iter()
        .map(|(p, m)| {
            let record = Value::Record(vec![
                ("partitionPath".into(), Value::String(p.clone())),
                ("policy".into(), Value::String(meta.policy.clone())),
                (
                    "deletePathPatterns".into(),
                    strings(&m.delete_path_patterns),
                ),
                (
                    "successDeleteFiles".into(),
                    strings(&m.success_delete_files),
                ),
                ("failedDeleteFiles".into(), strings(&m.failed_delete_files)),
                ("isPartitionDeleted".into(), union(1, false)),
            ]);
            (p.clone(), record)
        })
        .collect();
    let value = Value::Record(vec![
        ("policy".into(), Value::String(meta.policy.clone())),
        (
            "startCleanTime".into(),
            Value::String(meta.start_clean_time.clone()),
        ),
        ("timeTakenInMillis".into(), Value::Long(meta.time_taken_ms)),
        (
            "totalFilesDeleted".into(),
            Value::Int(meta.total_files_deleted),
        ),
        (
            "earliestCommitToRetain".into(),
            Value::String(meta.earliest_commit_to_retain.clone()),
        ),
        (
            "lastCompletedCommitTimestamp".into(),
            Value::String(meta.last_completed_commit.clone()),
        ),
        ("partitionMetadata".into(), Value::Map(partitions)),
        ("version".into(), union(0, meta.version)),
        (
            "bootstrapPartitionMetadata".into(),
            union(1, Value::Map(HashMap::new())),
        ),
    ]);
    super::rollback::encode_container("HoodieCleanMetadata", METADATA_SCHEMA, value)
        .map_err(|e| corrupt(path, e.to_string()))
}

/// Decodes a `C.clean` file (any metadata version; missing fields read as empty).
pub fn parse_clean_metadata(bytes: &[u8], path: &str) -> Result<CleanMetadata> {
    Ok(clean_metadata_of(&first_record(
        bytes,
        path,
        "clean metadata",
    )?))
}

/// A `HoodieCleanMetadata` record (from a `C.clean` file or an archived entry).
pub fn clean_metadata_of(value: &Value) -> CleanMetadata {
    let value = value.clone();
    let number = |name: &str| match field(&value, name) {
        Some(Value::Long(n)) => *n,
        Some(Value::Int(n)) => i64::from(*n),
        _ => 0,
    };
    let mut partitions = BTreeMap::new();
    if let Some(Value::Map(m)) = field(&value, "partitionMetadata") {
        for (p, pm) in m {
            partitions.insert(
                p.clone(),
                CleanPartition {
                    delete_path_patterns: string_list(field(pm, "deletePathPatterns")),
                    success_delete_files: string_list(field(pm, "successDeleteFiles")),
                    failed_delete_files: string_list(field(pm, "failedDeleteFiles")),
                },
            );
        }
    }
    CleanMetadata {
        policy: string(field(&value, "policy")).unwrap_or_default(),
        start_clean_time: string(field(&value, "startCleanTime")).unwrap_or_default(),
        time_taken_ms: number("timeTakenInMillis"),
        total_files_deleted: number("totalFilesDeleted") as i32,
        earliest_commit_to_retain: string(field(&value, "earliestCommitToRetain"))
            .unwrap_or_default(),
        last_completed_commit: string(field(&value, "lastCompletedCommitTimestamp"))
            .unwrap_or_default(),
        partitions,
        version: number("version") as i32,
    }
}

/// `earliestCommitToRetain` of a completed clean (`None` when empty: a clean that keeps file
/// versions rather than commits), which bounds how far back a time-travel read can go.
pub fn earliest_commit_to_retain(bytes: &[u8], path: &str) -> Result<Option<String>> {
    let value = first_record(bytes, path, "clean metadata")?;
    Ok(string(field(&value, "earliestCommitToRetain")).filter(|s| !s.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD_SCHEMA: &str = r#"{"type":"record","name":"HoodieCleanMetadata","namespace":"org.apache.hudi.avro.model","fields":[
        {"name":"startCleanTime","type":"string"},
        {"name":"timeTakenInMillis","type":"long"},
        {"name":"totalFilesDeleted","type":"int"},
        {"name":"earliestCommitToRetain","type":"string"},
        {"name":"version","type":["int","null"],"default":1}]}"#;

    fn old_clean(ectr: &str) -> Vec<u8> {
        let value = Value::Record(vec![
            (
                "startCleanTime".into(),
                Value::String("20240101000000000".into()),
            ),
            ("timeTakenInMillis".into(), Value::Long(5)),
            ("totalFilesDeleted".into(), Value::Int(2)),
            ("earliestCommitToRetain".into(), Value::String(ectr.into())),
            ("version".into(), Value::Union(0, Box::new(Value::Int(2)))),
        ]);
        crate::avro::rollback::encode_container("HoodieCleanMetadata", OLD_SCHEMA, value).unwrap()
    }

    #[test]
    fn reads_the_earliest_commit_kept() {
        assert_eq!(
            earliest_commit_to_retain(&old_clean("20231231000000000"), "c").unwrap(),
            Some("20231231000000000".to_string())
        );
        assert_eq!(
            earliest_commit_to_retain(&old_clean(""), "c").unwrap(),
            None
        );
        assert!(earliest_commit_to_retain(b"junk", "c").is_err());
        // an older writer's metadata, without the fields later versions added
        let m = parse_clean_metadata(&old_clean("20231231000000000"), "c").unwrap();
        assert_eq!((m.total_files_deleted, m.version), (2, 2));
        assert_eq!(m.policy, "");
    }

    #[test]
    fn plan_round_trips_with_java_field_names() {
        let plan = CleanerPlan {
            earliest_instant_to_retain: Some(("20240101000000001".into(), "commit".into())),
            last_completed_commit: "20240101000000009".into(),
            policy: "KEEP_LATEST_COMMITS".into(),
            files: BTreeMap::from([(
                "dt=1".to_string(),
                vec!["/t/dt=1/f1_0-1-0_20240101000000000.parquet".to_string()],
            )]),
            partitions_to_delete: vec![],
        };
        let bytes = cleaner_plan_avro(&plan, "p").unwrap();
        assert_eq!(parse_cleaner_plan(&bytes, "p").unwrap(), plan);
        let reader = apache_avro::Reader::new(bytes.as_slice()).unwrap();
        let schema = serde_json::to_value(reader.writer_schema()).unwrap();
        assert_eq!(schema["name"], "HoodieCleanerPlan");
        assert_eq!(schema["namespace"], "org.apache.hudi.avro.model");
        let names: Vec<_> = schema["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "earliestInstantToRetain",
                "lastCompletedCommitTimestamp",
                "policy",
                "filesToBeDeletedPerPartition",
                "version",
                "filePathsToBeDeletedPerPartition",
                "partitionsToBeDeleted",
                "extraMetadata"
            ]
        );
        // a plan of the file-versions policy keeps no commit
        let versions = CleanerPlan {
            earliest_instant_to_retain: None,
            ..plan
        };
        let bytes = cleaner_plan_avro(&versions, "p").unwrap();
        assert_eq!(parse_cleaner_plan(&bytes, "p").unwrap(), versions);
        assert!(parse_cleaner_plan(b"junk", "p").is_err());
    }

    #[test]
    fn metadata_round_trips() {
        let meta = CleanMetadata {
            policy: "KEEP_LATEST_FILE_VERSIONS".into(),
            start_clean_time: "20240101000000010".into(),
            time_taken_ms: 12,
            total_files_deleted: 1,
            earliest_commit_to_retain: String::new(),
            last_completed_commit: "20240101000000009".into(),
            partitions: BTreeMap::from([(
                String::new(),
                CleanPartition {
                    delete_path_patterns: vec!["a.parquet".into()],
                    success_delete_files: vec!["a.parquet".into()],
                    failed_delete_files: vec![],
                },
            )]),
            version: CLEAN_METADATA_VERSION,
        };
        let bytes = clean_metadata_avro(&meta, "m").unwrap();
        assert_eq!(parse_clean_metadata(&bytes, "m").unwrap(), meta);
        assert_eq!(earliest_commit_to_retain(&bytes, "m").unwrap(), None);
    }
}
