//! The compaction plan a `C.compaction.requested` file holds: an Avro object container file
//! with one `HoodieCompactionPlan` record (version 2: file names relative to the partition),
//! the writer schema as Java's generated class declares it.

use std::collections::{BTreeMap, HashMap};

use apache_avro::types::Value;

use super::value::{field, first_record, string};
use crate::error::{FormatError, Result};

/// The plan version hoodie writes (paths relative to the partition).
pub const COMPACTION_PLAN_VERSION: i32 = 2;

pub(crate) const PLAN_SCHEMA: &str = r#"{"type":"record","name":"HoodieCompactionPlan","namespace":"org.apache.hudi.avro.model","fields":[
{"name":"operations","type":["null",{"type":"array","items":{"type":"record","name":"HoodieCompactionOperation","fields":[
 {"name":"baseInstantTime","type":["null",{"type":"string","avro.java.string":"String"}]},
 {"name":"deltaFilePaths","type":["null",{"type":"array","items":{"type":"string","avro.java.string":"String"}}],"default":null},
 {"name":"dataFilePath","type":["null",{"type":"string","avro.java.string":"String"}],"default":null},
 {"name":"fileId","type":["null",{"type":"string","avro.java.string":"String"}]},
 {"name":"partitionPath","type":["null",{"type":"string","avro.java.string":"String"}],"default":null},
 {"name":"metrics","type":["null",{"type":"map","values":"double","avro.java.string":"String"}],"default":null},
 {"name":"bootstrapFilePath","type":["null",{"type":"string","avro.java.string":"String"}],"default":null}]}}],"default":null},
{"name":"extraMetadata","type":["null",{"type":"map","values":{"type":"string","avro.java.string":"String"},"avro.java.string":"String"}],"default":null},
{"name":"version","type":["int","null"],"default":1},
{"name":"strategy","type":["null",{"type":"record","name":"HoodieCompactionStrategy","fields":[
 {"name":"compactorClassName","type":["null",{"type":"string","avro.java.string":"String"}],"default":null},
 {"name":"strategyParams","type":["null",{"type":"map","values":{"type":"string","avro.java.string":"String"},"avro.java.string":"String"}],"default":null},
 {"name":"version","type":["int","null"],"default":1}]}],"default":null},
{"name":"preserveHoodieMetadata","type":["boolean","null"],"default":false},
{"name":"missingSchedulePartitions","type":["null",{"type":"array","items":{"type":"string","avro.java.string":"String"}}],"default":null}]}"#;

/// One file slice to compact.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionOperation {
    /// The slice's base instant.
    pub base_instant_time: String,
    /// Its log file names, in order.
    pub delta_file_paths: Vec<String>,
    /// Its base file name (`None` for a log-only group).
    pub data_file_path: Option<String>,
    /// The file group.
    pub file_id: String,
    /// The partition path.
    pub partition_path: String,
    /// Sizes and counts (`TOTAL_LOG_FILES`, `TOTAL_IO_MB`, ...).
    pub metrics: BTreeMap<String, f64>,
}

/// A compaction plan.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CompactionPlan {
    /// The slices to compact.
    pub operations: Vec<CompactionOperation>,
    /// Extra metadata.
    pub extra_metadata: BTreeMap<String, String>,
    /// The plan version (1: absolute paths; 2: names).
    pub version: i32,
}

fn bad(reason: String) -> FormatError {
    FormatError::Corrupt {
        path: "compaction plan".into(),
        reason,
    }
}

fn opt_string(v: Option<String>) -> Value {
    match v {
        Some(s) => Value::Union(1, Box::new(Value::String(s))),
        None => Value::Union(0, Box::new(Value::Null)),
    }
}

/// Encodes `plan` as the content of a `.compaction.requested` file.
pub fn compaction_plan_avro(plan: &CompactionPlan) -> Result<Vec<u8>> {
    let ops: Vec<Value> = plan
        .operations
        .iter()
        .map(|o| {
            Value::Record(vec![
                (
                    "baseInstantTime".into(),
                    opt_string(Some(o.base_instant_time.clone())),
                ),
                (
                    "deltaFilePaths".into(),
                    Value::Union(
                        1,
                        Box::new(Value::Array(
                            o.delta_file_paths
                                .iter()
                                .map(|p| Value::String(p.clone()))
                                .collect(),
                        )),
                    ),
                ),
                ("dataFilePath".into(), opt_string(o.data_file_path.clone())),
                ("fileId".into(), opt_string(Some(o.file_id.clone()))),
                (
                    "partitionPath".into(),
                    opt_string(Some(o.partition_path.clone())),
                ),
                (
                    "metrics".into(),
                    Value::Union(
                        1,
                        Box::new(Value::Map(
                            o.metrics
                                .iter()
                                .map(|(k, v)| (k.clone(), Value::Double(*v)))
                                .collect(),
                        )),
                    ),
                ),
                ("bootstrapFilePath".into(), opt_string(None)),
            ])
        })
        .collect();
    let extra: HashMap<String, Value> = plan
        .extra_metadata
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let value = Value::Record(vec![
        (
            "operations".into(),
            Value::Union(1, Box::new(Value::Array(ops))),
        ),
        (
            "extraMetadata".into(),
            Value::Union(1, Box::new(Value::Map(extra))),
        ),
        (
            "version".into(),
            Value::Union(0, Box::new(Value::Int(plan.version))),
        ),
        ("strategy".into(), Value::Union(0, Box::new(Value::Null))),
        (
            "preserveHoodieMetadata".into(),
            Value::Union(0, Box::new(Value::Boolean(false))),
        ),
        (
            "missingSchedulePartitions".into(),
            Value::Union(1, Box::new(Value::Array(vec![]))),
        ),
    ]);
    crate::avro::rollback::encode_container("HoodieCompactionPlan", PLAN_SCHEMA, value)
        .map_err(|e| bad(e.to_string()))
}

/// Decodes a `.compaction.requested` file (either plan version; version 1 paths are reduced
/// to file names).
pub fn parse_compaction_plan(bytes: &[u8], path: &str) -> Result<CompactionPlan> {
    let corrupt = |reason: String| FormatError::Corrupt {
        path: path.to_string(),
        reason,
    };
    let value = first_record(bytes, path, "plan")?;
    let name = |p: String| p.rsplit('/').next().unwrap_or(&p).to_string();
    let mut operations = Vec::new();
    if let Some(Value::Array(ops)) = field(&value, "operations") {
        for o in ops {
            let metrics = match field(o, "metrics") {
                Some(Value::Map(m)) => m
                    .iter()
                    .filter_map(|(k, v)| match v {
                        Value::Double(d) => Some((k.clone(), *d)),
                        _ => None,
                    })
                    .collect(),
                _ => BTreeMap::new(),
            };
            let deltas = match field(o, "deltaFilePaths") {
                Some(Value::Array(a)) => {
                    a.iter().filter_map(|v| string(Some(v))).map(name).collect()
                }
                _ => Vec::new(),
            };
            operations.push(CompactionOperation {
                base_instant_time: string(field(o, "baseInstantTime")).unwrap_or_default(),
                delta_file_paths: deltas,
                data_file_path: string(field(o, "dataFilePath")).map(name),
                file_id: string(field(o, "fileId"))
                    .ok_or_else(|| corrupt("an operation without a file id".into()))?,
                partition_path: string(field(o, "partitionPath")).unwrap_or_default(),
                metrics,
            });
        }
    }
    let extra_metadata = match field(&value, "extraMetadata") {
        Some(Value::Map(m)) => m
            .iter()
            .filter_map(|(k, v)| string(Some(v)).map(|s| (k.clone(), s)))
            .collect(),
        _ => BTreeMap::new(),
    };
    let version = match field(&value, "version") {
        Some(Value::Int(v)) => *v,
        _ => 1,
    };
    Ok(CompactionPlan {
        operations,
        extra_metadata,
        version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_round_trip() {
        let plan = CompactionPlan {
            operations: vec![CompactionOperation {
                base_instant_time: "20251220210108078".into(),
                delta_file_paths: vec![".f-0_20251220210108078.log.1_0-1-1".into()],
                data_file_path: Some("f-0_0-1-1_20251220210108078.parquet".into()),
                file_id: "f-0".into(),
                partition_path: "city=chennai".into(),
                metrics: BTreeMap::from([("TOTAL_LOG_FILES".into(), 1.0)]),
            }],
            extra_metadata: BTreeMap::new(),
            version: COMPACTION_PLAN_VERSION,
        };
        let bytes = compaction_plan_avro(&plan).unwrap();
        assert_eq!(parse_compaction_plan(&bytes, "p").unwrap(), plan);
    }
}
