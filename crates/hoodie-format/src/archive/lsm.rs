//! The files of Hudi 1.x's archived timeline (table versions 8 and 9), an LSM tree under
//! `.hoodie/timeline/history/`: Parquet files `<min>_<max>_<level>.parquet` of
//! `HoodieLSMTimelineInstant` rows (one per archived instant: its times, action, completed
//! metadata and plan, as bytes of the active timeline's files), the manifests `manifest_<N>`
//! naming the files of snapshot N, and `_version_` naming the latest snapshot.
//!
//! A reader takes `_version_` (or, when it is missing or unreadable, the greatest manifest
//! listed) and reads the files its manifest names, so a writer stopped before it wrote the
//! version file leaves the previous snapshot visible; a data file no manifest names is not
//! part of the timeline.

use std::sync::Arc;

use arrow::array::{Array, BinaryArray, Int32Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use serde::{Deserialize, Serialize};

use crate::error::{FormatError, Result};
use crate::storage::TableStorage;

/// The file naming the latest snapshot version.
const VERSION_FILE: &str = "_version_";
/// The prefix of manifest files (`manifest_<N>`).
const MANIFEST_PREFIX: &str = "manifest_";
/// `HoodieLSMTimelineInstant.version` of the rows Hudi 1.x writes.
const INSTANT_VERSION: i32 = 1;

/// The Avro schema of the rows (`HoodieLSMTimelineInstant.avsc`), kept in the Parquet footer
/// as `parquet.avro.schema`, as Java's Avro Parquet writer keeps it.
const AVRO_SCHEMA: &str = r#"{"type":"record","name":"HoodieLSMTimelineInstant","namespace":"org.apache.hudi.avro.model","fields":[{"name":"instantTime","type":["null","string"],"default":null},{"name":"completionTime","type":["null","string"],"default":null},{"name":"action","type":["null","string"],"default":null},{"name":"metadata","type":["null","bytes"],"default":null},{"name":"plan","type":["null","bytes"],"default":null},{"name":"version","type":"int","default":1}]}"#;

/// One archived instant: a row of a history file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LsmInstant {
    /// The requested time.
    pub instant_time: String,
    /// The completion time.
    pub completion_time: Option<String>,
    /// The completed instant's action (a compaction's is `commit`).
    pub action: String,
    /// The completed instant file's bytes (none when it was empty).
    pub metadata: Option<Vec<u8>>,
    /// The plan: a clean's or compaction's requested file, a replacecommit's requested (or,
    /// when not empty, inflight) file.
    pub plan: Option<Vec<u8>>,
}

/// A manifest entry: a data file of the snapshot and its length.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileEntry {
    pub file_name: String,
    pub file_len: u64,
}

/// A manifest (`HoodieLSMTimelineManifest`): the data files of one snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Manifest {
    #[serde(default)]
    pub files: Vec<FileEntry>,
}

/// A data file's name: the requested times it spans and its level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DataFileName {
    pub min: String,
    pub max: String,
    pub level: u32,
}

impl DataFileName {
    /// Parses `<min>_<max>_<level>.parquet` (digits only, as Java's pattern).
    pub fn parse(name: &str) -> Option<Self> {
        let stem = name.strip_suffix(".parquet")?;
        let mut parts = stem.split('_');
        let (min, max, level) = (parts.next()?, parts.next()?, parts.next()?);
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if parts.next().is_some() || !digits(min) || !digits(max) || !digits(level) {
            return None;
        }
        Some(Self {
            min: min.to_string(),
            max: max.to_string(),
            level: level.parse().ok()?,
        })
    }

    /// The file name.
    pub fn name(&self) -> String {
        format!("{}_{}_{}.parquet", self.min, self.max, self.level)
    }
}

fn corrupt(path: &str, reason: impl ToString) -> FormatError {
    FormatError::Corrupt {
        path: path.to_string(),
        reason: reason.to_string(),
    }
}

fn manifest_version(name: &str) -> Option<u32> {
    let n = name.strip_prefix(MANIFEST_PREFIX)?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

/// The history folder of one table and the snapshot it is at.
pub(crate) struct History<'a> {
    storage: &'a TableStorage,
    dir: String,
}

impl<'a> History<'a> {
    /// The history at `dir` (relative to the table base).
    pub fn new(storage: &'a TableStorage, dir: String) -> Self {
        Self { storage, dir }
    }

    fn path(&self, name: &str) -> String {
        format!("{}/{name}", self.dir)
    }

    /// Every manifest version in the folder.
    pub async fn manifest_versions(&self) -> Result<Vec<u32>> {
        let mut versions: Vec<u32> = self
            .storage
            .list_dir(&self.dir)
            .await?
            .iter()
            .filter_map(|m| manifest_version(m.location.filename()?))
            .collect();
        versions.sort_unstable();
        Ok(versions)
    }

    /// The latest snapshot version: `_version_`'s, or the greatest manifest's when it is
    /// missing or unreadable (a writer stopped between the two); none for an empty history.
    pub async fn latest_version(&self) -> Result<Option<u32>> {
        let versions = self.manifest_versions().await?;
        if versions.is_empty() {
            return Ok(None);
        }
        let named = match self.storage.get(&self.path(VERSION_FILE)).await {
            Ok(bytes) => std::str::from_utf8(&bytes)
                .ok()
                .and_then(|s| s.trim().parse::<u32>().ok())
                .filter(|v| versions.contains(v)),
            Err(_) => None,
        };
        Ok(named.or(versions.last().copied()))
    }

    /// The manifest of snapshot `version` (empty for none).
    pub async fn manifest(&self, version: Option<u32>) -> Result<Manifest> {
        let Some(v) = version else {
            return Ok(Manifest::default());
        };
        let rel = self.path(&format!("{MANIFEST_PREFIX}{v}"));
        let bytes = self.storage.get(&rel).await?;
        if bytes.is_empty() {
            return Ok(Manifest::default());
        }
        serde_json::from_slice(&bytes).map_err(|e| corrupt(&rel, format!("manifest: {e}")))
    }

    /// The latest snapshot's manifest.
    pub async fn latest(&self) -> Result<(Option<u32>, Manifest)> {
        let v = self.latest_version().await?;
        Ok((v, self.manifest(v).await?))
    }

    /// Writes snapshot `latest + 1` with `files`, then points `_version_` at it (a manifest
    /// left by a writer stopped before its version file is replaced).
    pub async fn publish(&self, latest: Option<u32>, files: Vec<FileEntry>) -> Result<u32> {
        let version = latest.map_or(1, |v| v + 1);
        let text = manifest_json(&Manifest { files });
        self.storage
            .put(&self.path(&format!("{MANIFEST_PREFIX}{version}")), text)
            .await?;
        self.storage
            .put(&self.path(VERSION_FILE), version.to_string())
            .await?;
        Ok(version)
    }

    /// Writes data file `name` holding `rows`; returns its manifest entry.
    pub async fn write_file(&self, name: &str, rows: &[LsmInstant]) -> Result<FileEntry> {
        let rel = self.path(name);
        let bytes = encode(rows, &rel)?;
        let len = bytes.len() as u64;
        self.storage.put(&rel, bytes).await?;
        Ok(FileEntry {
            file_name: name.to_string(),
            file_len: len,
        })
    }

    /// The rows of data file `name`.
    pub async fn read_file(&self, name: &str) -> Result<Vec<LsmInstant>> {
        let rel = self.path(name);
        decode(self.storage.get(&rel).await?, &rel)
    }

    /// Deletes the file `name` of the folder.
    pub async fn delete(&self, name: &str) -> Result<()> {
        self.storage.delete(&self.path(name)).await
    }

    /// The names of every file in the folder.
    pub async fn names(&self) -> Result<Vec<String>> {
        Ok(self
            .storage
            .list_dir(&self.dir)
            .await?
            .iter()
            .filter_map(|m| m.location.filename().map(str::to_string))
            .collect())
    }
}

/// A manifest as Java's Jackson pretty printer writes it.
fn manifest_json(m: &Manifest) -> String {
    if m.files.is_empty() {
        return "{\n  \"files\" : [ ]\n}".to_string();
    }
    let entries: Vec<String> = m
        .files
        .iter()
        .map(|f| {
            format!(
                "{{\n    \"fileName\" : {},\n    \"fileLen\" : {}\n  }}",
                serde_json::Value::String(f.file_name.clone()),
                f.file_len
            )
        })
        .collect();
    format!("{{\n  \"files\" : [ {} ]\n}}", entries.join(", "))
}

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("instantTime", DataType::Utf8, true),
        Field::new("completionTime", DataType::Utf8, true),
        Field::new("action", DataType::Utf8, true),
        Field::new("metadata", DataType::Binary, true),
        Field::new("plan", DataType::Binary, true),
        Field::new("version", DataType::Int32, false),
    ]))
}

/// The Parquet bytes of a history file holding `rows`.
pub(crate) fn encode(rows: &[LsmInstant], path: &str) -> Result<Vec<u8>> {
    let batch = RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(StringArray::from_iter(
                rows.iter().map(|r| Some(r.instant_time.as_str())),
            )),
            Arc::new(StringArray::from_iter(
                rows.iter().map(|r| r.completion_time.as_deref()),
            )),
            Arc::new(StringArray::from_iter(
                rows.iter().map(|r| Some(r.action.as_str())),
            )),
            Arc::new(BinaryArray::from_iter(
                rows.iter().map(|r| r.metadata.as_deref()),
            )),
            Arc::new(BinaryArray::from_iter(
                rows.iter().map(|r| r.plan.as_deref()),
            )),
            Arc::new(Int32Array::from(vec![INSTANT_VERSION; rows.len()])),
        ],
    )
    .map_err(|e| corrupt(path, e))?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_key_value_metadata(Some(vec![KeyValue::new(
            "parquet.avro.schema".to_string(),
            AVRO_SCHEMA.to_string(),
        )]))
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props))
        .map_err(|e| corrupt(path, e))?;
    w.write(&batch).map_err(|e| corrupt(path, e))?;
    w.close().map_err(|e| corrupt(path, e))?;
    Ok(out)
}

fn text_column<'b>(batch: &'b RecordBatch, name: &str, path: &str) -> Result<&'b StringArray> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
        .ok_or_else(|| corrupt(path, format!("a history file without a text column {name}")))
}

fn bytes_column<'b>(batch: &'b RecordBatch, name: &str) -> Option<&'b BinaryArray> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<BinaryArray>())
}

/// The rows of a history file (any writer's: columns are found by name).
pub(crate) fn decode(bytes: Bytes, path: &str) -> Result<Vec<LsmInstant>> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .and_then(|b| b.build())
        .map_err(|e| corrupt(path, e))?;
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| corrupt(path, e))?;
        let times = text_column(&batch, "instantTime", path)?;
        let completions = text_column(&batch, "completionTime", path)?;
        let actions = text_column(&batch, "action", path)?;
        let (metadata, plan) = (
            bytes_column(&batch, "metadata"),
            bytes_column(&batch, "plan"),
        );
        let blob = |a: Option<&BinaryArray>, i: usize| {
            a.filter(|a| a.is_valid(i)).map(|a| a.value(i).to_vec())
        };
        for i in 0..batch.num_rows() {
            if times.is_null(i) || actions.is_null(i) {
                return Err(corrupt(
                    path,
                    "an archived instant without a time or action",
                ));
            }
            out.push(LsmInstant {
                instant_time: times.value(i).to_string(),
                completion_time: completions
                    .is_valid(i)
                    .then(|| completions.value(i).to_string()),
                action: actions.value(i).to_string(),
                metadata: blob(metadata, i),
                plan: blob(plan, i),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: &str, action: &str, plan: Option<&[u8]>) -> LsmInstant {
        LsmInstant {
            instant_time: t.to_string(),
            completion_time: Some(format!("{t}9")),
            action: action.to_string(),
            metadata: Some(b"Obj\x01meta".to_vec()),
            plan: plan.map(<[u8]>::to_vec),
        }
    }

    #[test]
    fn rows_round_trip_through_parquet_with_the_avro_schema_in_the_footer() {
        let rows = vec![
            row("20260101000000000", "commit", None),
            row("20260101000000001", "clean", Some(b"plan")),
            LsmInstant {
                completion_time: None,
                metadata: None,
                ..row("20260101000000002", "rollback", None)
            },
        ];
        let bytes = Bytes::from(encode(&rows, "x").unwrap());
        assert_eq!(decode(bytes.clone(), "x").unwrap(), rows);
        let meta = ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
        let kv = meta
            .metadata()
            .file_metadata()
            .key_value_metadata()
            .unwrap();
        let avro = kv.iter().find(|k| k.key == "parquet.avro.schema").unwrap();
        assert!(avro
            .value
            .as_deref()
            .unwrap()
            .contains("HoodieLSMTimelineInstant"));
        let schema = meta.parquet_schema();
        let version = schema
            .columns()
            .iter()
            .find(|c| c.name() == "version")
            .unwrap();
        assert_eq!(
            version.max_def_level(),
            0,
            "version is required, as Java's int"
        );
    }

    #[test]
    fn data_file_names_parse_as_javas_pattern() {
        let n = DataFileName::parse("20260101_20260102_1.parquet").unwrap();
        assert_eq!(
            (n.min.as_str(), n.max.as_str(), n.level),
            ("20260101", "20260102", 1)
        );
        assert_eq!(n.name(), "20260101_20260102_1.parquet");
        assert!(DataFileName::parse("manifest_1").is_none());
        assert!(DataFileName::parse("a_b_0.parquet").is_none());
        assert!(DataFileName::parse("1_2_0_3.parquet").is_none());
        assert_eq!(manifest_version("manifest_12"), Some(12));
        assert_eq!(manifest_version("manifest_"), None);
        assert_eq!(manifest_version("_version_"), None);
    }

    #[test]
    fn manifests_are_written_as_jacksons_pretty_printer_and_read_back() {
        let m = Manifest {
            files: vec![
                FileEntry {
                    file_name: "1_2_0.parquet".into(),
                    file_len: 10,
                },
                FileEntry {
                    file_name: "3_4_0.parquet".into(),
                    file_len: 20,
                },
            ],
        };
        let text = manifest_json(&m);
        assert_eq!(
            text,
            "{\n  \"files\" : [ {\n    \"fileName\" : \"1_2_0.parquet\",\n    \"fileLen\" : 10\n  }, {\n    \"fileName\" : \"3_4_0.parquet\",\n    \"fileLen\" : 20\n  } ]\n}"
        );
        assert_eq!(serde_json::from_str::<Manifest>(&text).unwrap(), m);
        let empty = manifest_json(&Manifest::default());
        assert_eq!(
            serde_json::from_str::<Manifest>(&empty).unwrap(),
            Manifest::default()
        );
    }
}
