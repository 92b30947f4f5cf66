//! The records of the archived timeline (table version 6): each archived instant file becomes a
//! `HoodieArchivedMetaEntry` (time, action, state and the file's content in one of its payload
//! fields), written as AVRO_DATA blocks of a `.commits_.archive.N_<token>` log file under
//! `.hoodie/archived/`, as Java's timeline archiver writes them.
//!
//! A block's schema header names only the fields its records use: the payload's own schema is
//! the one its timeline file was written with (Avro files) or Hudi's `HoodieCommitMetadata`
//! (JSON commits). Java reads a block with the writer schema of its header and resolves it to
//! its `HoodieArchivedMetaEntry` by field name, where every payload defaults to null, so a
//! narrower writer schema reads the same.

use std::collections::HashMap;

use apache_avro::types::Value;
use apache_avro::Schema;

use bytes::Bytes;

use crate::error::{FormatError, Result};
use crate::log::block::{encode_block, header, parse_blocks, BlockType};
use crate::timeline::instant::{Action, Instant, State};

/// Hudi's `HoodieWriteStat` as `HoodieCommitMetadata.avsc` defines it: (field, is a string).
const WRITE_STAT_FIELDS: &[(&str, bool)] = &[
    ("fileId", true),
    ("path", true),
    ("prevCommit", true),
    ("prevFilePathOverwritten", true),
    ("numWrites", false),
    ("numDeletes", false),
    ("numUpdateWrites", false),
    ("totalWriteBytes", false),
    ("totalWriteErrors", false),
    ("partitionPath", true),
    ("totalLogRecords", false),
    ("totalLogFiles", false),
    ("totalUpdatedRecordsCompacted", false),
    ("numInserts", false),
    ("totalLogBlocks", false),
    ("totalCorruptLogBlock", false),
    ("totalRollbackBlocks", false),
    ("fileSizeInBytes", false),
];

/// The extra-metadata key Java blanks when it archives a commit (`HoodieRollingStatMetadata`).
const ROLLING_STAT_KEY: &str = "ROLLING_STAT";

fn write_stat_schema() -> String {
    let fields: Vec<String> = WRITE_STAT_FIELDS
        .iter()
        .map(|(name, text)| {
            let t = if *text { "string" } else { "long" };
            format!(r#"{{"name":"{name}","type":["null","{t}"],"default":null}}"#)
        })
        .collect();
    format!(
        r#"{{"name":"HoodieWriteStat","type":"record","fields":[{}]}}"#,
        fields.join(",")
    )
}

/// `HoodieCommitMetadata.avsc`, or `HoodieReplaceCommitMetadata.avsc` when `replace`.
fn commit_metadata_schema(replace: bool) -> String {
    let name = if replace {
        "HoodieReplaceCommitMetadata"
    } else {
        "HoodieCommitMetadata"
    };
    let replaced = if replace {
        r#",{"name":"partitionToReplaceFileIds","type":["null",{"type":"map","values":{"type":"array","items":"string"}}],"default":null}"#
    } else {
        ""
    };
    format!(
        r#"{{"namespace":"org.apache.hudi.avro.model","type":"record","name":"{name}","fields":[
 {{"name":"partitionToWriteStats","type":["null",{{"type":"map","values":{{"type":"array","items":{}}}}}],"default":null}},
 {{"name":"extraMetadata","type":["null",{{"type":"map","values":"string"}}],"default":null}},
 {{"name":"version","type":["int","null"],"default":1}},
 {{"name":"operationType","type":["null","string"],"default":null}}{replaced}]}}"#,
        write_stat_schema()
    )
}

fn some(v: Value) -> Value {
    Value::Union(1, Box::new(v))
}

fn none() -> Value {
    Value::Union(0, Box::new(Value::Null))
}

fn text_of(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::Null => None,
        serde_json::Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

fn write_stat(stat: &serde_json::Value) -> Value {
    let fields = WRITE_STAT_FIELDS
        .iter()
        .map(|(name, text)| {
            let v = stat.get(*name);
            let value = if *text {
                v.and_then(text_of).map(|s| some(Value::String(s)))
            } else {
                v.and_then(serde_json::Value::as_i64)
                    .map(|n| some(Value::Long(n)))
            };
            (name.to_string(), value.unwrap_or_else(none))
        })
        .collect();
    Value::Record(fields)
}

fn string_map(v: Option<&serde_json::Value>) -> HashMap<String, Value> {
    v.and_then(serde_json::Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), Value::String(text_of(v)?))))
                .collect()
        })
        .unwrap_or_default()
}

/// A JSON commit's metadata as Java's `convertCommitMetadata` turns it into Avro: the write
/// stats' Avro fields, the rolling stats blanked, `COMPACT` for compactions.
fn commit_metadata_value(json: &serde_json::Value, replace: bool) -> Value {
    let stats: HashMap<String, Value> = json
        .get("partitionToWriteStats")
        .and_then(serde_json::Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(p, list)| {
                    let items = list.as_array().into_iter().flatten().map(write_stat);
                    (p.clone(), Value::Array(items.collect()))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut extra = string_map(json.get("extraMetadata"));
    extra.insert(ROLLING_STAT_KEY.into(), Value::String(String::new()));
    let compacted = json.get("compacted").and_then(serde_json::Value::as_bool) == Some(true);
    let operation = if compacted {
        Some("COMPACT".to_string())
    } else {
        json.get("operationType").and_then(text_of)
    };
    let mut fields = vec![
        ("partitionToWriteStats".to_string(), some(Value::Map(stats))),
        ("extraMetadata".to_string(), some(Value::Map(extra))),
        (
            "version".to_string(),
            Value::Union(0, Box::new(Value::Int(1))),
        ),
        (
            "operationType".to_string(),
            operation
                .map(|o| some(Value::String(o)))
                .unwrap_or_else(none),
        ),
    ];
    if replace {
        let replaced: HashMap<String, Value> = json
            .get("partitionToReplaceFileIds")
            .and_then(serde_json::Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(p, ids)| {
                        let ids = ids.as_array().into_iter().flatten().filter_map(text_of);
                        (p.clone(), Value::Array(ids.map(Value::String).collect()))
                    })
                    .collect()
            })
            .unwrap_or_default();
        fields.push((
            "partitionToReplaceFileIds".into(),
            some(Value::Map(replaced)),
        ));
    }
    Value::Record(fields)
}

/// What an instant file's content becomes in its archived entry: (payload field, its schema
/// JSON, its value).
type Payload = (&'static str, String, Value);

fn corrupt(path: &str, reason: impl ToString) -> FormatError {
    FormatError::Corrupt {
        path: path.to_string(),
        reason: reason.to_string(),
    }
}

fn json_payload(field: &'static str, content: &[u8], replace: bool, path: &str) -> Result<Payload> {
    // table versions 8 and 9 keep commit metadata as Avro, which their history holds as is
    if content.starts_with(b"Obj\x01") {
        return avro_payload(field, content, path);
    }
    let json: serde_json::Value = serde_json::from_slice(content)
        .map_err(|e| corrupt(path, format!("commit metadata is not valid JSON: {e}")))?;
    Ok((
        field,
        commit_metadata_schema(replace),
        commit_metadata_value(&json, replace),
    ))
}

fn avro_payload(field: &'static str, content: &[u8], path: &str) -> Result<Payload> {
    let mut reader = apache_avro::Reader::new(content).map_err(|e| corrupt(path, e))?;
    let schema = serde_json::to_string(reader.writer_schema()).map_err(|e| corrupt(path, e))?;
    let value = reader
        .next()
        .ok_or_else(|| corrupt(path, "no record in the Avro file"))?
        .map_err(|e| corrupt(path, e))?;
    Ok((field, schema, value))
}

/// The payload of an instant file, as Java's `MetadataConversionUtils.createMetaWrapper` picks
/// it; `None` where Java stores none (empty files, pending rollbacks). A compaction's plan is
/// read from its requested file, which the caller passes as `content` for every state.
fn payload(instant: &Instant, content: &[u8], path: &str) -> Result<Option<Payload>> {
    if content.is_empty() {
        return Ok(None);
    }
    let p = match (&instant.action, instant.state) {
        (Action::Commit | Action::DeltaCommit, _) => {
            json_payload("hoodieCommitMetadata", content, false, path)?
        }
        (Action::ReplaceCommit, State::Completed) => {
            json_payload("hoodieReplaceCommitMetadata", content, true, path)?
        }
        (Action::ReplaceCommit, State::Inflight) => {
            json_payload("hoodieInflightReplaceMetadata", content, false, path)?
        }
        (Action::ReplaceCommit | Action::Clustering, _) => {
            avro_payload("hoodieRequestedReplaceMetadata", content, path)?
        }
        (Action::Clean, State::Completed) => avro_payload("hoodieCleanMetadata", content, path)?,
        (Action::Clean, _) => avro_payload("hoodieCleanerPlan", content, path)?,
        (Action::Rollback, State::Completed) => {
            avro_payload("hoodieRollbackMetadata", content, path)?
        }
        (Action::Compaction, _) => avro_payload("hoodieCompactionPlan", content, path)?,
        (Action::Savepoint, State::Completed) => {
            avro_payload("hoodieSavePointMetadata", content, path)?
        }
        _ => return Ok(None),
    };
    Ok(Some(p))
}

fn state_name(state: State) -> &'static str {
    match state {
        State::Requested => "REQUESTED",
        State::Inflight => "INFLIGHT",
        State::Completed => "COMPLETED",
    }
}

/// One archived entry, encoded: the block schema it needs and its Avro datum.
pub struct ArchivedRecord {
    /// The `HoodieArchivedMetaEntry` writer schema (JSON) of the record.
    pub schema: String,
    /// The record as an Avro datum of that schema.
    pub datum: Vec<u8>,
}

/// Encodes the archived entry of one instant file with content `content` (`path` names it in
/// errors), with `transition` (the file's modification time as an instant time, as Java's
/// archiver records it) as its `stateTransitionTime`: Hudi 1.x's upgrade takes it for the
/// completion time of the action (and fails without one).
pub fn archived_record(
    instant: &Instant,
    content: &[u8],
    path: &str,
    transition: Option<&str>,
) -> Result<ArchivedRecord> {
    let payload = payload(instant, content, path)?;
    let text = |s: &str| some(Value::String(s.to_string()));
    let mut fields = vec![
        ("commitTime".to_string(), text(&instant.timestamp)),
        ("actionType".to_string(), text(instant.action.as_str())),
        ("actionState".to_string(), text(state_name(instant.state))),
        (
            "version".to_string(),
            Value::Union(0, Box::new(Value::Int(1))),
        ),
    ];
    let mut schema_fields = vec![
        r#"{"name":"commitTime","type":["null","string"],"default":null}"#.to_string(),
        r#"{"name":"actionType","type":["null","string"],"default":null}"#.to_string(),
        r#"{"name":"actionState","type":["null","string"],"default":null}"#.to_string(),
        r#"{"name":"version","type":["int","null"],"default":1}"#.to_string(),
    ];
    if let Some(t) = transition {
        schema_fields.push(
            // a Java String (not Avro's Utf8): Hudi's reader casts it
            r#"{"name":"stateTransitionTime","type":["null",{"type":"string","avro.java.string":"String"}],"default":null}"#
                .to_string(),
        );
        fields.push(("stateTransitionTime".to_string(), text(t)));
    }
    if let Some((field, schema, value)) = payload {
        schema_fields.push(format!(
            r#"{{"name":"{field}","type":["null",{schema}],"default":null}}"#
        ));
        fields.push((field.to_string(), some(value)));
    }
    let schema = format!(
        r#"{{"type":"record","name":"HoodieArchivedMetaEntry","namespace":"org.apache.hudi.avro.model","fields":[{}]}}"#,
        schema_fields.join(",")
    );
    let parsed = Schema::parse_str(&schema).map_err(|e| corrupt(path, e))?;
    let datum =
        apache_avro::to_avro_datum(&parsed, Value::Record(fields)).map_err(|e| corrupt(path, e))?;
    Ok(ArchivedRecord { schema, datum })
}

/// The bytes of an archive log file holding `records` in their order: a run of records of one
/// schema shares an AVRO_DATA block (header `SCHEMA` only, as the archiver writes), at most
/// `batch` a block. The order is kept because Hudi 1.x's upgrade reads the states of one
/// instant as consecutive records (its completed state among them).
pub fn archive_file_bytes(records: &[ArchivedRecord], batch: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < records.len() {
        let schema = records[start].schema.as_str();
        let run = records[start..]
            .iter()
            .take(batch.max(1))
            .take_while(|r| r.schema == schema)
            .count();
        let chunk = &records[start..start + run];
        let mut content = Vec::new();
        content.extend_from_slice(&3i32.to_be_bytes());
        content.extend_from_slice(&(chunk.len() as i32).to_be_bytes());
        for r in chunk {
            content.extend_from_slice(&(r.datum.len() as i32).to_be_bytes());
            content.extend_from_slice(&r.datum);
        }
        encode_block(
            BlockType::AvroData,
            &[(header::SCHEMA, schema)],
            &content,
            &mut out,
        );
        start += run;
    }
    out
}

/// One entry of the archived timeline, as read back.
#[derive(Debug, Clone)]
pub struct ArchivedEntry {
    /// The instant (its time, action and state).
    pub instant: Instant,
    /// The `HoodieArchivedMetaEntry` record, every field as written.
    pub record: Value,
}

impl ArchivedEntry {
    /// The commit metadata of an archived commit, deltacommit or replacecommit, in the JSON
    /// form the active timeline holds (what Avro does not keep is absent).
    pub fn commit_metadata_json(&self) -> Option<Vec<u8>> {
        let v = ["hoodieCommitMetadata", "hoodieReplaceCommitMetadata"]
            .iter()
            .find_map(|f| super::value::field(&self.record, f))
            .filter(|v| !matches!(v, Value::Null))?;
        serde_json::to_vec(&crate::timeline::commit_metadata::avro_to_json(v.clone())).ok()
    }

    /// The instants an archived completed rollback rolled back.
    pub fn rolled_back(&self) -> Option<Vec<String>> {
        let m = self.payload("hoodieRollbackMetadata")?;
        match super::value::field(m, "commitsRollback") {
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .filter_map(|v| super::value::string(Some(v)))
                    .collect(),
            ),
            _ => Some(Vec::new()),
        }
    }

    /// How many operations an archived compaction's plan held (`None` when the entry has no
    /// compaction plan).
    pub fn compaction_operations(&self) -> Option<usize> {
        fn count(v: &Value) -> usize {
            match v {
                Value::Union(_, inner) => count(inner),
                Value::Array(items) => items.len(),
                _ => 0,
            }
        }
        let plan = self.payload("hoodieCompactionPlan")?;
        Some(super::value::field(plan, "operations").map_or(0, count))
    }

    /// The metadata of an archived completed clean.
    pub fn clean_metadata(&self) -> Option<super::clean::CleanMetadata> {
        self.payload("hoodieCleanMetadata")
            .map(super::clean::clean_metadata_of)
    }

    /// The payload record in field `name`, if the entry has one.
    pub(crate) fn payload(&self, name: &str) -> Option<&Value> {
        super::value::field(&self.record, name).filter(|v| !matches!(v, Value::Null))
    }
}

/// The archived entry of `instant` whose file held `content` (a row of the LSM history of
/// table versions 8 and 9, read as the entry version 6's archive would hold for it).
pub(crate) fn archived_entry(
    instant: Instant,
    content: &[u8],
    path: &str,
) -> Result<ArchivedEntry> {
    let text = |s: &str| some(Value::String(s.to_string()));
    let mut fields = vec![
        ("commitTime".to_string(), text(&instant.timestamp)),
        ("actionType".to_string(), text(instant.action.as_str())),
        ("actionState".to_string(), text(state_name(instant.state))),
    ];
    if let Some((field, _, value)) = payload(&instant, content, path)? {
        fields.push((field.to_string(), some(value)));
    }
    Ok(ArchivedEntry {
        instant,
        record: Value::Record(fields),
    })
}

fn entry_of(record: Value) -> Option<ArchivedEntry> {
    use super::value::{field, string};
    let ts = string(field(&record, "commitTime"))?;
    let action = Action::parse(&string(field(&record, "actionType"))?);
    let state = match string(field(&record, "actionState")).as_deref() {
        Some("REQUESTED") => State::Requested,
        Some("INFLIGHT") => State::Inflight,
        _ => State::Completed,
    };
    let mut instant = Instant::new(ts, action, state);
    if state == State::Completed {
        // when Java's archiver (and hoodie's) recorded it: the completed file's modification time
        instant.completion_time =
            string(field(&record, "stateTransitionTime")).filter(|t| !t.is_empty());
    }
    Some(ArchivedEntry { instant, record })
}

/// The entries of an archive log file (any writer's: each block is read with the schema of
/// its header).
pub fn parse_archive_file(bytes: &Bytes, path: &str) -> Result<Vec<ArchivedEntry>> {
    let mut out = Vec::new();
    for block in parse_blocks(bytes, path)? {
        if block.block_type != BlockType::AvroData {
            continue;
        }
        let schema_text = block
            .header(header::SCHEMA)
            .ok_or_else(|| corrupt(path, "an archive block has no schema"))?;
        let schema = Schema::parse_str(schema_text).map_err(|e| corrupt(path, e))?;
        let c = block.content.as_ref();
        let int = |at: usize| -> Result<usize> {
            c.get(at..at + 4)
                .map(|b| i32::from_be_bytes(b.try_into().expect("4 bytes")).max(0) as usize)
                .ok_or_else(|| corrupt(path, "an archive block is cut short"))
        };
        if int(0)? < 3 {
            return Err(FormatError::Unsupported {
                feature: format!("archive blocks of content version {} ({path})", int(0)?),
            });
        }
        let count = int(4)?;
        let mut at = 8;
        for _ in 0..count {
            let len = int(at)?;
            let mut datum = c
                .get(at + 4..at + 4 + len)
                .ok_or_else(|| corrupt(path, "an archive record is cut short"))?;
            at += 4 + len;
            let record = apache_avro::from_avro_datum(&schema, &mut datum, None)
                .map_err(|e| corrupt(path, e))?;
            out.extend(entry_of(record));
        }
    }
    Ok(out)
}

#[cfg(test)]
#[path = "archive_tests.rs"]
mod tests;
