//! Encoders for the two Avro files a Hudi rollback writes on the timeline.
//!
//! When a write fails half-way, the next writer rolls it back: it deletes the data files of the
//! failed instant and records the rollback on the timeline as three files in `.hoodie/` (table
//! version 6, timeline layout 1):
//!
//! * `R.rollback.requested`: an Avro object container file holding one `HoodieRollbackPlan`
//!   record ([`rollback_plan_avro`]);
//! * `R.rollback.inflight`: empty;
//! * `R.rollback`: an Avro object container file holding one `HoodieRollbackMetadata` record
//!   ([`rollback_metadata_avro`]).
//!
//! Apache Hudi (Java) writes these with `TimelineMetadataUtils.serializeAvroMetadata`: a
//! `DataFileWriter` over the record's `SpecificRecord` schema, no codec (`avro.codec` is
//! `null`), exactly one record, one block. Java reads them back with its own generated schema as
//! the reader schema and the writer schema from the container header, so the header schema must
//! resolve against the Java classes: same full names (`org.apache.hudi.avro.model.*`), same field
//! names and order, same union branch order. The schemas below are the `.avsc` files of
//! `hudi-common/src/main/avro/` (Hudi 0.14 and later, which is what table version 6 writers use)
//! with the types they reference from sibling files (`HoodieInstantInfo`) defined in place at
//! first use, as in the Java classes' `SCHEMA$`.

use std::collections::HashMap;

use apache_avro::types::Value;
use apache_avro::{Codec, Schema, Writer};

/// The version Java writes into `HoodieRollbackPlan.version`
/// (`BaseRollbackPlanActionExecutor.LATEST_ROLLBACK_PLAN_VERSION`).
const ROLLBACK_PLAN_VERSION: i32 = 1;

/// The version Java writes into `HoodieRollbackMetadata.version`
/// (`TimelineMetadataUtils.DEFAULT_VERSION`).
const ROLLBACK_METADATA_VERSION: i32 = 1;

/// Writer schema of `R.rollback.requested`: Hudi's `HoodieRollbackPlan.avsc`, with
/// `HoodieInstantInfo.avsc` defined in place of its first (only) reference.
pub const ROLLBACK_PLAN_SCHEMA: &str = r#"{
  "namespace": "org.apache.hudi.avro.model",
  "type": "record",
  "name": "HoodieRollbackPlan",
  "fields": [
    {
      "name": "instantToRollback",
      "doc": "Hoodie instant that needs to be rolled back",
      "type": ["null", {
        "namespace": "org.apache.hudi.avro.model",
        "type": "record",
        "name": "HoodieInstantInfo",
        "fields": [
          {"name": "commitTime", "type": "string"},
          {"name": "action", "type": "string"}
        ]
      }],
      "default": null
    },
    {
      "name": "RollbackRequests",
      "type": ["null", {
        "type": "array",
        "items": {
          "type": "record",
          "name": "HoodieRollbackRequest",
          "fields": [
            {"name": "partitionPath", "type": "string"},
            {"name": "fileId", "type": ["null", "string"], "default": null},
            {"name": "latestBaseInstant", "type": ["null", "string"], "default": null},
            {"name": "filesToBeDeleted",
             "default": [],
             "type": {"type": "array", "default": [], "items": "string"}
            },
            {"name": "logBlocksToBeDeleted",
             "type": ["null", {
               "type": "map",
               "doc": "Log blocks that need to be deleted as part of the rollback",
               "values": {"type": "long", "doc": "Size of this file/block in bytes"}
             }],
             "default": null
            }
          ]
        }
      }],
      "default": null
    },
    {
      "name": "version",
      "type": ["int", "null"],
      "default": 1
    }
  ]
}"#;

/// Writer schema of `R.rollback`: Hudi's `HoodieRollbackMetadata.avsc` (which defines
/// `HoodieRollbackPartitionMetadata` inline), with `HoodieInstantInfo.avsc` defined in place of
/// its first (only) reference.
pub const ROLLBACK_METADATA_SCHEMA: &str = r#"{
  "namespace": "org.apache.hudi.avro.model",
  "type": "record",
  "name": "HoodieRollbackMetadata",
  "fields": [
    {"name": "startRollbackTime", "type": "string"},
    {"name": "timeTakenInMillis", "type": "long"},
    {"name": "totalFilesDeleted", "type": "int"},
    {"name": "commitsRollback", "type": {"type": "array", "items": "string"}},
    {"name": "partitionMetadata", "type": {
      "type": "map",
      "values": {
        "type": "record",
        "name": "HoodieRollbackPartitionMetadata",
        "fields": [
          {"name": "partitionPath", "type": "string"},
          {"name": "successDeleteFiles", "type": {"type": "array", "items": "string"}},
          {"name": "failedDeleteFiles", "type": {"type": "array", "items": "string"}},
          {"name": "rollbackLogFiles", "type": ["null", {
            "type": "map",
            "doc": "Files to which append blocks were written to capture rollback commit",
            "values": {"type": "long", "doc": "Size of this file in bytes"}
          }], "default": null},
          {"name": "logFilesFromFailedCommit", "type": ["null", {
            "type": "map",
            "doc": "Log files from the failed commit(commit to be rolled back)",
            "values": {"type": "long", "doc": "Size of this file in bytes"}
          }], "default": null}
        ]
      }
    }},
    {
      "name": "version",
      "type": ["int", "null"],
      "default": 1
    },
    {
      "name": "instantsRollback",
      "default": [],
      "type": {
        "type": "array",
        "default": [],
        "items": {
          "namespace": "org.apache.hudi.avro.model",
          "type": "record",
          "name": "HoodieInstantInfo",
          "fields": [
            {"name": "commitTime", "type": "string"},
            {"name": "action", "type": "string"}
          ]
        }
      }
    }
  ]
}"#;

/// The instant a rollback undoes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolledBackInstant {
    /// The instant time of the failed write, e.g. `20240908172221775`.
    pub instant_time: String,
    /// Its action: `commit`, `deltacommit` or `replacecommit`. Written verbatim into
    /// `HoodieInstantInfo.action` of both files.
    pub action: String,
    /// Its state when the rollback was planned: `REQUESTED` or `INFLIGHT`.
    ///
    /// Neither Avro file records the state (`HoodieInstantInfo` holds only the time and the
    /// action). Java uses it when planning: for a `REQUESTED` instant it plans no rollback
    /// requests at all (nothing can have been written yet), so callers should pass no partitions
    /// to [`rollback_plan_avro`] for such an instant.
    pub state: String,
}

/// What the rollback did in one partition; one entry of `HoodieRollbackMetadata.partitionMetadata`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RollbackPartition {
    /// The partition path relative to the table base path (`""` for a non-partitioned table).
    /// It is both the map key and `HoodieRollbackPartitionMetadata.partitionPath`.
    pub partition_path: String,
    /// Files the rollback deleted (`successDeleteFiles`). Java records the full path it deleted,
    /// i.e. the same string as in the plan's `filesToBeDeleted`; readers such as the metadata
    /// table sync only use the file name part.
    pub deleted_files: Vec<String>,
    /// Files the rollback tried and failed to delete (`failedDeleteFiles`), full paths as above.
    pub failed_delete_files: Vec<String>,
}

/// Why a rollback file could not be encoded.
#[derive(Debug, thiserror::Error)]
pub enum RollbackAvroError {
    /// One of the schemas embedded in this module does not parse (a bug in hoodie).
    #[error("the embedded Avro schema of {record} does not parse: {source}")]
    Schema {
        /// The record the schema describes, e.g. `HoodieRollbackPlan`.
        record: &'static str,
        /// The parser's error.
        #[source]
        source: apache_avro::Error,
    },
    /// The record does not match its schema or the container could not be written.
    #[error("encoding {record} as an Avro object container file failed: {source}")]
    Encode {
        /// The record being encoded, e.g. `HoodieRollbackMetadata`.
        record: &'static str,
        /// The encoder's error.
        #[source]
        source: apache_avro::Error,
    },
    /// `totalFilesDeleted` is an Avro `int` in Hudi's schema; the count given does not fit.
    #[error(
        "totalFilesDeleted {count} does not fit the 32-bit int field of HoodieRollbackMetadata"
    )]
    TotalFilesDeletedOutOfRange {
        /// The count given.
        count: i64,
    },
    /// `startRollbackTime` must be the rollback's own instant time: every Java writer puts the
    /// rollback instant there, and Hudi's tests and CLI read it as such.
    #[error(
        "startRollbackTime {start_rollback_time:?} differs from the rollback instant \
         {rollback_instant:?}; Hudi records the rollback's own instant time as its start time, \
         pass the same string for both"
    )]
    StartTimeMismatch {
        /// The rollback instant time (the `R` of `R.rollback`).
        rollback_instant: String,
        /// The start time given.
        start_rollback_time: String,
    },
}

/// Encodes `R.rollback.requested`: one `HoodieRollbackPlan` record in an Avro object container
/// file, as Java's `BaseRollbackPlanActionExecutor.requestRollback` writes it.
///
/// * `instantToRollback` is `{commitTime: to_rollback.instant_time, action: to_rollback.action}`.
/// * `RollbackRequests` holds one `HoodieRollbackRequest` per `(partition, files)` entry, in the
///   order given: `partitionPath` is the partition (relative, `""` if non-partitioned), `fileId`
///   and `latestBaseInstant` are the empty string (Java's `EMPTY_STRING`, as in
///   `ListingBasedRollbackStrategy`'s delete requests), `filesToBeDeleted` is the file list and
///   `logBlocksToBeDeleted` is an empty map. An empty `partitions` gives an empty (not null) list,
///   as Java writes for a `REQUESTED` instant.
/// * `version` is 1.
///
/// The file paths should be absolute (`s3a://bucket/table/p/f.parquet`, `/data/table/p/f.parquet`):
/// a Java writer that finds this plan pending re-executes it with `new Path(file)`, which would
/// resolve a relative path against its working directory.
pub fn rollback_plan_avro(
    to_rollback: &RolledBackInstant,
    partitions: &[(String, Vec<String>)],
) -> Result<Vec<u8>, RollbackAvroError> {
    const RECORD: &str = "HoodieRollbackPlan";
    let requests = partitions
        .iter()
        .map(|(partition, files)| {
            Value::Record(vec![
                ("partitionPath".into(), Value::String(partition.clone())),
                ("fileId".into(), string_union(String::new())),
                ("latestBaseInstant".into(), string_union(String::new())),
                ("filesToBeDeleted".into(), string_array(files)),
                (
                    "logBlocksToBeDeleted".into(),
                    Value::Union(1, Box::new(Value::Map(HashMap::new()))),
                ),
            ])
        })
        .collect();
    let plan = Value::Record(vec![
        (
            "instantToRollback".into(),
            Value::Union(1, Box::new(instant_info(to_rollback))),
        ),
        (
            "RollbackRequests".into(),
            Value::Union(1, Box::new(Value::Array(requests))),
        ),
        (
            "version".into(),
            Value::Union(0, Box::new(Value::Int(ROLLBACK_PLAN_VERSION))),
        ),
    ]);
    encode_container(RECORD, ROLLBACK_PLAN_SCHEMA, plan)
}

/// Encodes `R.rollback`: one `HoodieRollbackMetadata` record in an Avro object container file,
/// as Java's `TimelineMetadataUtils.convertRollbackMetadata` fills it for a single rolled-back
/// instant.
///
/// * `startRollbackTime` is `start_rollback_time`, which must equal `rollback_instant` (Java
///   writes the rollback's own instant time there); otherwise
///   [`RollbackAvroError::StartTimeMismatch`].
/// * `timeTakenInMillis` is `time_taken_ms` (Java: the duration of the execute phase).
/// * `totalFilesDeleted` is `total_files_deleted` (Java: the sum of the `successDeleteFiles`
///   counts); it must fit an `int`.
/// * `commitsRollback` is `[to_rollback.instant_time]` and `instantsRollback` is
///   `[{commitTime, action}]` of the same instant.
/// * `partitionMetadata` maps each partition path to its `HoodieRollbackPartitionMetadata`:
///   `successDeleteFiles`, `failedDeleteFiles`, and empty (not null) `rollbackLogFiles` and
///   `logFilesFromFailedCommit` maps (no log blocks are appended by a delete-only rollback).
///   Entries with the same partition path are merged by concatenating their file lists, as
///   Java's `RollbackUtils.mergeRollbackStat` does before converting.
/// * `version` is 1.
pub fn rollback_metadata_avro(
    rollback_instant: &str,
    start_rollback_time: &str,
    time_taken_ms: i64,
    to_rollback: &RolledBackInstant,
    partitions: &[RollbackPartition],
    total_files_deleted: i64,
) -> Result<Vec<u8>, RollbackAvroError> {
    let metadata = rollback_metadata_record(
        rollback_instant,
        start_rollback_time,
        time_taken_ms,
        to_rollback,
        partitions,
        total_files_deleted,
    )?;
    encode_container("HoodieRollbackMetadata", ROLLBACK_METADATA_SCHEMA, metadata)
}

/// The `HoodieRollbackMetadata` record [`rollback_metadata_avro`] encodes, for embedding in
/// a restore's metadata.
pub fn rollback_metadata_record(
    rollback_instant: &str,
    start_rollback_time: &str,
    time_taken_ms: i64,
    to_rollback: &RolledBackInstant,
    partitions: &[RollbackPartition],
    total_files_deleted: i64,
) -> Result<Value, RollbackAvroError> {
    if start_rollback_time != rollback_instant {
        return Err(RollbackAvroError::StartTimeMismatch {
            rollback_instant: rollback_instant.to_string(),
            start_rollback_time: start_rollback_time.to_string(),
        });
    }
    let total = i32::try_from(total_files_deleted).map_err(|_| {
        RollbackAvroError::TotalFilesDeletedOutOfRange {
            count: total_files_deleted,
        }
    })?;

    // Merge entries of the same partition, keeping first-seen order of the files.
    let mut merged: HashMap<&str, (Vec<&String>, Vec<&String>)> = HashMap::new();
    for partition in partitions {
        let entry = merged.entry(partition.partition_path.as_str()).or_default();
        entry.0.extend(&partition.deleted_files);
        entry.1.extend(&partition.failed_delete_files);
    }
    let partition_metadata = merged
        .into_iter()
        .map(|(path, (deleted, failed))| {
            let record = Value::Record(vec![
                ("partitionPath".into(), Value::String(path.to_string())),
                ("successDeleteFiles".into(), string_array(deleted)),
                ("failedDeleteFiles".into(), string_array(failed)),
                (
                    "rollbackLogFiles".into(),
                    Value::Union(1, Box::new(Value::Map(HashMap::new()))),
                ),
                (
                    "logFilesFromFailedCommit".into(),
                    Value::Union(1, Box::new(Value::Map(HashMap::new()))),
                ),
            ]);
            (path.to_string(), record)
        })
        .collect();

    let metadata = Value::Record(vec![
        (
            "startRollbackTime".into(),
            Value::String(start_rollback_time.to_string()),
        ),
        ("timeTakenInMillis".into(), Value::Long(time_taken_ms)),
        ("totalFilesDeleted".into(), Value::Int(total)),
        (
            "commitsRollback".into(),
            Value::Array(vec![Value::String(to_rollback.instant_time.clone())]),
        ),
        ("partitionMetadata".into(), Value::Map(partition_metadata)),
        (
            "version".into(),
            Value::Union(0, Box::new(Value::Int(ROLLBACK_METADATA_VERSION))),
        ),
        (
            "instantsRollback".into(),
            Value::Array(vec![instant_info(to_rollback)]),
        ),
    ]);
    Ok(metadata)
}

/// The instants a completed rollback rolled back (`commitsRollback` of its metadata).
pub fn rolled_back_instants(bytes: &[u8], path: &str) -> crate::error::Result<Vec<String>> {
    let value = super::value::first_record(bytes, path, "rollback metadata")?;
    Ok(match super::value::field(&value, "commitsRollback") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| super::value::string(Some(i)))
            .collect(),
        _ => Vec::new(),
    })
}

/// A `HoodieInstantInfo` record.
fn instant_info(instant: &RolledBackInstant) -> Value {
    Value::Record(vec![
        (
            "commitTime".into(),
            Value::String(instant.instant_time.clone()),
        ),
        ("action".into(), Value::String(instant.action.clone())),
    ])
}

/// The `string` branch of a `["null", "string"]` union.
fn string_union(value: String) -> Value {
    Value::Union(1, Box::new(Value::String(value)))
}

/// An Avro `array<string>`.
fn string_array<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> Value {
    Value::Array(
        items
            .into_iter()
            .map(|s| Value::String(s.as_ref().to_string()))
            .collect(),
    )
}

/// Writes `value` as the single record of an Avro object container file with no codec, as Java's
/// `DataFileWriter` does in `TimelineMetadataUtils.serializeAvroMetadata`.
pub(crate) fn encode_container(
    record: &'static str,
    schema_json: &str,
    value: Value,
) -> Result<Vec<u8>, RollbackAvroError> {
    let schema = Schema::parse_str(schema_json)
        .map_err(|source| RollbackAvroError::Schema { record, source })?;
    let encode = |source| RollbackAvroError::Encode { record, source };
    let mut writer = Writer::with_codec(&schema, Vec::new(), Codec::Null);
    writer.append(value).map_err(encode)?;
    writer.into_inner().map_err(encode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use apache_avro::Reader;

    fn failed_commit() -> RolledBackInstant {
        RolledBackInstant {
            instant_time: "20240908172221775".into(),
            action: "commit".into(),
            state: "INFLIGHT".into(),
        }
    }

    /// Decodes a container file, returning its writer schema's JSON and its single record.
    fn decode(bytes: &[u8]) -> (Schema, serde_json::Value, Value) {
        let reader = Reader::new(bytes).unwrap();
        let schema = reader.writer_schema().clone();
        let schema_json = serde_json::to_value(&schema).unwrap();
        let records: Vec<Value> = reader.map(Result::unwrap).collect();
        assert_eq!(records.len(), 1, "exactly one record per file");
        (schema, schema_json, records.into_iter().next().unwrap())
    }

    fn fields(value: &Value) -> HashMap<&str, &Value> {
        match value {
            Value::Record(fields) => fields.iter().map(|(k, v)| (k.as_str(), v)).collect(),
            other => panic!("not a record: {other:?}"),
        }
    }

    fn strings(value: &Value) -> Vec<String> {
        match value {
            Value::Array(items) => items
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => panic!("not a string: {other:?}"),
                })
                .collect(),
            other => panic!("not an array: {other:?}"),
        }
    }

    fn unwrap_union(value: &Value) -> (u32, &Value) {
        match value {
            Value::Union(i, v) => (*i, v),
            other => panic!("not a union: {other:?}"),
        }
    }

    fn codec(bytes: &[u8]) -> Vec<u8> {
        // The header's metadata map is plain: find "avro.codec" and read the bytes value after it.
        let key = b"avro.codec";
        let at = bytes
            .windows(key.len())
            .position(|w| w == key)
            .expect("avro.codec in header")
            + key.len();
        let len = (bytes[at] >> 1) as usize; // zig-zag varint, small positive length
        bytes[at + 1..at + 1 + len].to_vec()
    }

    #[test]
    fn rollback_plan_round_trips() {
        let partitions = vec![
            (
                "2024/09/08".to_string(),
                vec![
                    "s3a://bucket/t/2024/09/08/f1-0_0-1-2_20240908172221775.parquet".to_string(),
                    "s3a://bucket/t/2024/09/08/f2-0_1-1-3_20240908172221775.parquet".to_string(),
                ],
            ),
            (
                "2024/09/09".to_string(),
                vec!["s3a://bucket/t/2024/09/09/f3-0_2-1-4_20240908172221775.parquet".to_string()],
            ),
        ];
        let bytes = rollback_plan_avro(&failed_commit(), &partitions).unwrap();
        assert_eq!(&bytes[..4], b"Obj\x01");
        assert_eq!(codec(&bytes), b"null");

        let (schema, schema_json, record) = decode(&bytes);
        match &schema {
            Schema::Record(r) => {
                assert_eq!(
                    r.name.fullname(None),
                    "org.apache.hudi.avro.model.HoodieRollbackPlan"
                )
            }
            other => panic!("writer schema is not a record: {other:?}"),
        }
        let field_names: Vec<&str> = schema_json["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            field_names,
            ["instantToRollback", "RollbackRequests", "version"]
        );
        // The writer schema must match the Java one after a round trip through the header.
        assert_eq!(
            schema.canonical_form(),
            Schema::parse_str(ROLLBACK_PLAN_SCHEMA)
                .unwrap()
                .canonical_form()
        );
        assert!(schema
            .canonical_form()
            .contains("org.apache.hudi.avro.model.HoodieInstantInfo"));
        assert!(schema
            .canonical_form()
            .contains("org.apache.hudi.avro.model.HoodieRollbackRequest"));

        let plan = fields(&record);
        let (branch, instant) = unwrap_union(plan["instantToRollback"]);
        assert_eq!(branch, 1);
        let instant = fields(instant);
        assert_eq!(
            instant["commitTime"],
            &Value::String("20240908172221775".into())
        );
        assert_eq!(instant["action"], &Value::String("commit".into()));
        assert_eq!(plan["version"], &Value::Union(0, Box::new(Value::Int(1))));

        let (branch, requests) = unwrap_union(plan["RollbackRequests"]);
        assert_eq!(branch, 1);
        let Value::Array(requests) = requests else {
            panic!("RollbackRequests is not an array")
        };
        assert_eq!(requests.len(), 2);
        for (request, (partition, files)) in requests.iter().zip(&partitions) {
            let request = fields(request);
            assert_eq!(request["partitionPath"], &Value::String(partition.clone()));
            assert_eq!(
                request["fileId"],
                &Value::Union(1, Box::new(Value::String(String::new())))
            );
            assert_eq!(
                request["latestBaseInstant"],
                &Value::Union(1, Box::new(Value::String(String::new())))
            );
            assert_eq!(&strings(request["filesToBeDeleted"]), files);
            assert_eq!(
                request["logBlocksToBeDeleted"],
                &Value::Union(1, Box::new(Value::Map(HashMap::new())))
            );
        }
    }

    #[test]
    fn rollback_plan_of_requested_instant_has_empty_request_list() {
        let instant = RolledBackInstant {
            instant_time: "20240908172221775".into(),
            action: "deltacommit".into(),
            state: "REQUESTED".into(),
        };
        let bytes = rollback_plan_avro(&instant, &[]).unwrap();
        let (_, _, record) = decode(&bytes);
        let plan = fields(&record);
        assert_eq!(
            plan["RollbackRequests"],
            &Value::Union(1, Box::new(Value::Array(Vec::new())))
        );
        let (_, info) = unwrap_union(plan["instantToRollback"]);
        assert_eq!(fields(info)["action"], &Value::String("deltacommit".into()));
    }

    #[test]
    fn rollback_metadata_round_trips() {
        let partitions = vec![
            RollbackPartition {
                partition_path: "2024/09/08".into(),
                deleted_files: vec![
                    "s3a://bucket/t/2024/09/08/f1-0_0-1-2_20240908172221775.parquet".into(),
                ],
                failed_delete_files: vec![
                    "s3a://bucket/t/2024/09/08/f2-0_1-1-3_20240908172221775.parquet".into(),
                ],
            },
            RollbackPartition {
                partition_path: "".into(),
                deleted_files: vec!["/data/t/f3-0_2-1-4_20240908172221775.parquet".into()],
                failed_delete_files: vec![],
            },
            // A second entry for the first partition is merged into it.
            RollbackPartition {
                partition_path: "2024/09/08".into(),
                deleted_files: vec![
                    "s3a://bucket/t/2024/09/08/f4-0_3-1-5_20240908172221775.parquet".into(),
                ],
                failed_delete_files: vec![],
            },
        ];
        let rollback = "20240908172320090";
        let bytes =
            rollback_metadata_avro(rollback, rollback, 1234, &failed_commit(), &partitions, 3)
                .unwrap();
        assert_eq!(&bytes[..4], b"Obj\x01");
        assert_eq!(codec(&bytes), b"null");

        let (schema, schema_json, record) = decode(&bytes);
        match &schema {
            Schema::Record(r) => assert_eq!(
                r.name.fullname(None),
                "org.apache.hudi.avro.model.HoodieRollbackMetadata"
            ),
            other => panic!("writer schema is not a record: {other:?}"),
        }
        let field_names: Vec<&str> = schema_json["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            field_names,
            [
                "startRollbackTime",
                "timeTakenInMillis",
                "totalFilesDeleted",
                "commitsRollback",
                "partitionMetadata",
                "version",
                "instantsRollback"
            ]
        );
        assert_eq!(
            schema.canonical_form(),
            Schema::parse_str(ROLLBACK_METADATA_SCHEMA)
                .unwrap()
                .canonical_form()
        );
        assert!(schema
            .canonical_form()
            .contains("org.apache.hudi.avro.model.HoodieRollbackPartitionMetadata"));

        let metadata = fields(&record);
        assert_eq!(
            metadata["startRollbackTime"],
            &Value::String(rollback.into())
        );
        assert_eq!(metadata["timeTakenInMillis"], &Value::Long(1234));
        assert_eq!(metadata["totalFilesDeleted"], &Value::Int(3));
        assert_eq!(strings(metadata["commitsRollback"]), ["20240908172221775"]);
        assert_eq!(
            metadata["version"],
            &Value::Union(0, Box::new(Value::Int(1)))
        );
        let Value::Array(instants) = metadata["instantsRollback"] else {
            panic!("instantsRollback is not an array")
        };
        assert_eq!(instants.len(), 1);
        let instant = fields(&instants[0]);
        assert_eq!(
            instant["commitTime"],
            &Value::String("20240908172221775".into())
        );
        assert_eq!(instant["action"], &Value::String("commit".into()));

        let Value::Map(by_partition) = metadata["partitionMetadata"] else {
            panic!("partitionMetadata is not a map")
        };
        assert_eq!(by_partition.len(), 2);
        let dated = fields(&by_partition["2024/09/08"]);
        assert_eq!(dated["partitionPath"], &Value::String("2024/09/08".into()));
        assert_eq!(
            strings(dated["successDeleteFiles"]),
            [
                "s3a://bucket/t/2024/09/08/f1-0_0-1-2_20240908172221775.parquet",
                "s3a://bucket/t/2024/09/08/f4-0_3-1-5_20240908172221775.parquet"
            ]
        );
        assert_eq!(
            strings(dated["failedDeleteFiles"]),
            ["s3a://bucket/t/2024/09/08/f2-0_1-1-3_20240908172221775.parquet"]
        );
        let empty_map = Value::Union(1, Box::new(Value::Map(HashMap::new())));
        assert_eq!(dated["rollbackLogFiles"], &empty_map);
        assert_eq!(dated["logFilesFromFailedCommit"], &empty_map);
        let unpartitioned = fields(&by_partition[""]);
        assert_eq!(unpartitioned["partitionPath"], &Value::String("".into()));
        assert_eq!(
            strings(unpartitioned["successDeleteFiles"]),
            ["/data/t/f3-0_2-1-4_20240908172221775.parquet"]
        );
        assert!(strings(unpartitioned["failedDeleteFiles"]).is_empty());
    }

    #[test]
    fn rollback_metadata_rejects_mismatched_start_time() {
        let err = rollback_metadata_avro(
            "20240908172320090",
            "2024-09-08T17:23:20Z",
            1,
            &failed_commit(),
            &[],
            0,
        )
        .unwrap_err();
        assert!(matches!(err, RollbackAvroError::StartTimeMismatch { .. }));
    }

    #[test]
    fn rollback_metadata_rejects_total_beyond_int() {
        let err = rollback_metadata_avro(
            "20240908172320090",
            "20240908172320090",
            1,
            &failed_commit(),
            &[],
            i64::from(i32::MAX) + 1,
        )
        .unwrap_err();
        assert!(matches!(
            err,
            RollbackAvroError::TotalFilesDeletedOutOfRange { .. }
        ));
    }

    #[test]
    fn embedded_schemas_parse() {
        for json in [ROLLBACK_PLAN_SCHEMA, ROLLBACK_METADATA_SCHEMA] {
            Schema::parse_str(json).unwrap();
        }
    }
}
