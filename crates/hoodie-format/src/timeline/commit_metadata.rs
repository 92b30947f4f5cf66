//! Commit metadata: what a completed commit, deltacommit or replacecommit records.
//!
//! Table version 6 writes it as JSON; versions 8 and 9 as an Avro object container file with the
//! same fields. Both decode into [`CommitMetadata`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{FormatError, Result};

/// Per-file statistics of one write (Java `HoodieWriteStat`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WriteStat {
    /// File group id.
    pub file_id: Option<String>,
    /// Path of the written file relative to the table base.
    pub path: Option<String>,
    /// CDC log files written for this file group.
    pub cdc_stats: Option<BTreeMap<String, i64>>,
    /// Instant of the previous file slice (`"null"` for a new file group, as Spark writes).
    pub prev_commit: Option<String>,
    /// Records written.
    pub num_writes: i64,
    /// Records deleted.
    pub num_deletes: i64,
    /// Records updated.
    pub num_update_writes: i64,
    /// Records inserted.
    pub num_inserts: i64,
    /// Bytes written.
    pub total_write_bytes: i64,
    /// Write errors.
    pub total_write_errors: i64,
    /// Temporary path (unused).
    pub temp_path: Option<String>,
    /// Partition path.
    pub partition_path: Option<String>,
    /// Log records (MOR).
    pub total_log_records: i64,
    /// Log files compacted.
    pub total_log_files_compacted: i64,
    /// Log bytes compacted.
    pub total_log_size_compacted: i64,
    /// Records updated by compaction.
    pub total_updated_records_compacted: i64,
    /// Log blocks.
    pub total_log_blocks: i64,
    /// Corrupt log blocks.
    pub total_corrupt_log_block: i64,
    /// Rollback blocks.
    pub total_rollback_blocks: i64,
    /// Size of the written file.
    pub file_size_in_bytes: i64,
    /// Base file name (MOR delta writes).
    pub base_file: Option<String>,
    /// Log file names (MOR delta writes).
    pub log_files: Option<Vec<String>>,
    /// Version of the written log file (MOR delta writes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_version: Option<i64>,
    /// Offset of the first block written into the log file (MOR delta writes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_offset: Option<i64>,
    /// Previous base file name.
    pub prev_base_file: Option<String>,
    /// Smallest event time seen.
    pub min_event_time: Option<i64>,
    /// Largest event time seen.
    pub max_event_time: Option<i64>,
    /// Timings.
    pub runtime_stats: Option<serde_json::Value>,
}

/// Java `HoodieCommitMetadata` / `HoodieReplaceCommitMetadata`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CommitMetadata {
    /// Write statistics per partition path.
    pub partition_to_write_stats: BTreeMap<String, Vec<WriteStat>>,
    /// File groups replaced per partition (replacecommits only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition_to_replace_file_ids: Option<BTreeMap<String, Vec<String>>>,
    /// True for compaction commits.
    pub compacted: bool,
    /// Extra metadata; `schema` holds the Avro schema of the table (no meta fields).
    pub extra_metadata: BTreeMap<String, String>,
    /// Java `WriteOperationType` name (`INSERT`, `UPSERT`, `BULK_INSERT`, ...).
    pub operation_type: Option<String>,
}

impl CommitMetadata {
    /// Parses the JSON form (table version 6).
    pub fn from_json(bytes: &[u8], path: &str) -> Result<Self> {
        if bytes.is_empty() {
            return Ok(Self::default());
        }
        serde_json::from_slice(bytes).map_err(|e| FormatError::Corrupt {
            path: path.to_string(),
            reason: format!("commit metadata is not valid JSON: {e}"),
        })
    }

    /// Parses the Avro object container form (table versions 8 and 9).
    pub fn from_avro(bytes: &[u8], path: &str) -> Result<Self> {
        if bytes.is_empty() {
            return Ok(Self::default());
        }
        let corrupt = |reason: String| FormatError::Corrupt {
            path: path.to_string(),
            reason,
        };
        let reader = apache_avro::Reader::new(bytes).map_err(|e| corrupt(e.to_string()))?;
        let record = reader
            .into_iter()
            .next()
            .ok_or_else(|| corrupt("empty Avro container".into()))?
            .map_err(|e| corrupt(e.to_string()))?;
        let json = avro_to_json(record);
        serde_json::from_value(json)
            .map_err(|e| corrupt(format!("unexpected commit metadata: {e}")))
    }

    /// Parses either form, by looking at the magic bytes.
    pub fn parse(bytes: &[u8], path: &str) -> Result<Self> {
        if bytes.starts_with(b"Obj\x01") {
            Self::from_avro(bytes, path)
        } else {
            Self::from_json(bytes, path)
        }
    }

    /// The JSON form, pretty-printed as Java writes it.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(self).unwrap_or_default()
    }

    /// The Avro schema of the table recorded with this commit.
    pub fn schema(&self) -> Option<&str> {
        self.extra_metadata.get("schema").map(String::as_str)
    }

    /// Every write stat.
    pub fn write_stats(&self) -> impl Iterator<Item = &WriteStat> {
        self.partition_to_write_stats.values().flatten()
    }

    /// File ids this commit replaced, as (partition, file id).
    pub fn replaced_file_ids(&self) -> impl Iterator<Item = (&str, &str)> {
        self.partition_to_replace_file_ids
            .iter()
            .flatten()
            .flat_map(|(p, ids)| ids.iter().map(move |id| (p.as_str(), id.as_str())))
    }
}

/// An Avro value as JSON: unions unwrapped, record fields that are null left out (so the
/// JSON form's defaults apply).
pub(crate) fn avro_to_json(v: apache_avro::types::Value) -> serde_json::Value {
    use apache_avro::types::Value as A;
    use serde_json::Value as J;
    match v {
        A::Null => J::Null,
        A::Boolean(b) => J::Bool(b),
        A::Int(i) | A::Date(i) | A::TimeMillis(i) => J::from(i),
        A::Long(i)
        | A::TimeMicros(i)
        | A::TimestampMillis(i)
        | A::TimestampMicros(i)
        | A::LocalTimestampMillis(i)
        | A::LocalTimestampMicros(i) => J::from(i),
        A::Float(f) => J::from(f),
        A::Double(f) => J::from(f),
        A::String(s) | A::Enum(_, s) => J::String(s),
        A::Bytes(b) | A::Fixed(_, b) => J::String(String::from_utf8_lossy(&b).into_owned()),
        A::Union(_, inner) => avro_to_json(*inner),
        A::Array(items) => J::Array(items.into_iter().map(avro_to_json).collect()),
        A::Map(m) => J::Object(m.into_iter().map(|(k, v)| (k, avro_to_json(v))).collect()),
        A::Record(fields) => J::Object(
            fields
                .into_iter()
                .map(|(k, v)| (k, avro_to_json(v)))
                .filter(|(_, v)| !v.is_null())
                .collect(),
        ),
        other => J::String(format!("{other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_spark_v6_json() {
        let json = br#"{
          "partitionToWriteStats": { "city=sf": [{
            "fileId": "5a226868-2934-4f84-a16f-55124630c68d-0",
            "path": "city=sf/5a226868-2934-4f84-a16f-55124630c68d-0_0-0-0_20240402144910683.parquet",
            "prevCommit": "null", "partitionPath": "city=sf", "numWrites": 3, "numInserts": 3,
            "numUpdateWrites": 0, "numDeletes": 0, "totalWriteBytes": 441382,
            "fileSizeInBytes": 441382, "totalWriteErrors": 0, "someNewField": 1 }] },
          "compacted": false,
          "extraMetadata": { "schema": "{}" },
          "operationType": "INSERT" }"#;
        let m = CommitMetadata::parse(json, "x").unwrap();
        let s = m.write_stats().next().unwrap();
        assert_eq!(s.num_inserts, 3);
        assert_eq!(s.file_size_in_bytes, 441382);
        assert_eq!(m.operation_type.as_deref(), Some("INSERT"));
        assert_eq!(m.schema(), Some("{}"));
        let again = CommitMetadata::parse(&m.to_json(), "x").unwrap();
        assert_eq!(again, m);
    }
}
