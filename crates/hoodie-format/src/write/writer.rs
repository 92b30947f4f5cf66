//! Writing base files: Parquet with the meta columns and Hudi's footer (bloom filter, min/max
//! record keys).

use crate::write::upload::Upload;
use arrow::array::Array;
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use parquet::arrow::async_writer::AsyncArrowWriter;
use parquet::basic::{Compression, GzipLevel, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::schema::types::ColumnPath;

use crate::bloom::{self, BloomFilterType, HoodieBloomFilter};
use crate::error::{FormatError, Result};
use crate::storage::TableStorage;

/// Settings of base files.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSpec {
    /// Compression codec name (`snappy`, `gzip`, `zstd`, `uncompressed`).
    pub codec: String,
    /// Bloom filter sizing: expected entries.
    pub bloom_num_entries: usize,
    /// Bloom filter false positive probability.
    pub bloom_fpp: f64,
    /// Dynamic bloom filter maximum entries.
    pub bloom_max_entries: usize,
    /// Target size of a base file in bytes.
    pub max_file_size: u64,
    /// Row group size of a base file in bytes (encoded).
    pub block_size: u64,
    /// Base files smaller than this take new inserts (bytes; 0 turns it off).
    pub small_file_limit: u64,
    /// How many small files per partition are considered for new inserts.
    pub small_file_candidates: usize,
    /// Record size assumed when a partition has no file to estimate it from (bytes).
    pub record_size_estimate: u64,
    /// How the records of a merge-on-read log file are encoded.
    pub data_blocks: crate::log::write::DataBlockFormat,
    /// Whether log blocks carry record positions (table versions 8 and 9).
    pub record_positions: bool,
}

impl Default for FileSpec {
    /// The defaults of the keys in [`crate::config`].
    fn default() -> Self {
        let n = |k: crate::config::ConfigKey| {
            k.default
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or_default()
        };
        use crate::config as c;
        Self {
            codec: "snappy".into(),
            bloom_num_entries: n(c::BLOOM_NUM_ENTRIES) as usize,
            bloom_fpp: c::BLOOM_FPP
                .default
                .and_then(|v| v.parse().ok())
                .unwrap_or(1e-9),
            bloom_max_entries: n(c::BLOOM_MAX_ENTRIES) as usize,
            max_file_size: n(c::PARQUET_MAX_FILE_SIZE),
            block_size: n(c::PARQUET_BLOCK_SIZE),
            small_file_limit: n(c::PARQUET_SMALL_FILE_LIMIT),
            small_file_candidates: n(c::PARQUET_SMALL_FILE_CANDIDATES) as usize,
            record_size_estimate: n(c::RECORD_SIZE_ESTIMATE),
            data_blocks: Default::default(),
            record_positions: true,
        }
    }
}

impl FileSpec {
    /// The base-file settings of a write that sees `options`.
    pub fn resolve(options: &crate::write::WriteOptions) -> Result<Self> {
        use crate::config as c;
        Ok(Self {
            codec: options
                .get(&c::PARQUET_COMPRESSION_CODEC)
                .unwrap_or_else(|| "snappy".into()),
            bloom_num_entries: options.get_usize(&c::BLOOM_NUM_ENTRIES)?,
            bloom_fpp: options.get_f64(&c::BLOOM_FPP)?,
            bloom_max_entries: options.get_usize(&c::BLOOM_MAX_ENTRIES)?,
            max_file_size: options.get_usize(&c::PARQUET_MAX_FILE_SIZE)? as u64,
            block_size: options.get_usize(&c::PARQUET_BLOCK_SIZE)? as u64,
            small_file_limit: options.get_usize(&c::PARQUET_SMALL_FILE_LIMIT)? as u64,
            small_file_candidates: options.get_usize(&c::PARQUET_SMALL_FILE_CANDIDATES)?,
            record_size_estimate: options.get_usize(&c::RECORD_SIZE_ESTIMATE)? as u64,
            data_blocks: crate::log::write::DataBlockFormat::resolve(options)?,
            record_positions: options.get_bool(&c::WRITE_RECORD_POSITIONS)?,
        })
    }

    fn compression(&self) -> Result<Compression> {
        Ok(match self.codec.to_ascii_lowercase().as_str() {
            "snappy" => Compression::SNAPPY,
            "gzip" => Compression::GZIP(GzipLevel::default()),
            "zstd" => Compression::ZSTD(ZstdLevel::default()),
            "lz4" | "lz4_raw" => Compression::LZ4_RAW,
            "uncompressed" | "none" => Compression::UNCOMPRESSED,
            other => {
                return Err(FormatError::InvalidProperty {
                    key: crate::config::PARQUET_COMPRESSION_CODEC.key.into(),
                    value: other.into(),
                    reason: "expected snappy, gzip, zstd, lz4 or uncompressed".into(),
                })
            }
        })
    }
}

/// What a finished base file holds.
#[derive(Debug, Clone)]
pub struct WrittenFile {
    /// Path relative to the table base.
    pub rel_path: String,
    /// Bytes written.
    pub size: u64,
    /// Rows written.
    pub rows: u64,
}

/// Writes one base file. Batches must be in the table schema (meta columns first).
pub struct BaseFileWriter {
    /// The columns of the table schema the file holds (`None`: all; the partition columns are
    /// left out when the table drops them).
    kept: Option<Vec<usize>>,
    rel_path: String,
    writer: AsyncArrowWriter<Upload>,
    bloom: HoodieBloomFilter,
    min_key: Option<String>,
    max_key: Option<String>,
    rows: u64,
}

/// Java `String.compareTo`: UTF-16 code unit order.
fn java_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    if a.is_ascii() && b.is_ascii() {
        a.cmp(b)
    } else {
        a.encode_utf16().cmp(b.encode_utf16())
    }
}

/// Rows a base file writer is given at a time (see [`BaseFileWriter::write_known_keys`]).
const BLOCK_CHECK_ROWS: usize = 8192;

/// The Parquet writer properties of base files (also used by [`crate::write::splice`], whose
/// re-encoded column chunks must match the ones a full rewrite writes).
pub(crate) fn writer_properties(settings: &FileSpec) -> Result<WriterProperties> {
    Ok(WriterProperties::builder()
        .set_compression(settings.compression()?)
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_created_by("hoodie".into())
        // sequence ids and record keys are unique per row: a dictionary never pays off and
        // interning every value before falling back costs a tenth of a rewrite
        .set_column_dictionary_enabled(ColumnPath::from(crate::meta::COMMIT_SEQNO), false)
        .set_column_dictionary_enabled(ColumnPath::from(crate::meta::RECORD_KEY), false)
        .set_max_row_group_bytes(Some(settings.block_size.max(1) as usize))
        .build())
}

impl BaseFileWriter {
    /// The new file's path, relative to the table base.
    pub fn rel_path(&self) -> &str {
        &self.rel_path
    }

    /// Starts writing `rel_path` in `storage`.
    pub fn try_new(
        storage: &TableStorage,
        rel_path: &str,
        schema: SchemaRef,
        settings: &FileSpec,
        dropped: &[String],
    ) -> Result<Self> {
        let props = writer_properties(settings)?;
        let object_writer = Upload::new(storage, rel_path);
        let kept: Vec<usize> = (0..schema.fields().len())
            .filter(|&i| !dropped.iter().any(|d| d == schema.field(i).name()))
            .collect();
        let (file_schema, kept) = if kept.len() == schema.fields().len() {
            (schema, None)
        } else {
            (std::sync::Arc::new(schema.project(&kept)?), Some(kept))
        };
        let writer = AsyncArrowWriter::try_new(object_writer, file_schema, Some(props))
            .map_err(|e| FormatError::parquet(rel_path, e))?;
        Ok(Self {
            kept,
            rel_path: rel_path.to_string(),
            writer,
            bloom: HoodieBloomFilter::new_dynamic(
                settings.bloom_num_entries,
                settings.bloom_fpp,
                settings.bloom_max_entries,
            ),
            min_key: None,
            max_key: None,
            rows: 0,
        })
    }

    /// Continues the key index of a file whose keys this file keeps, in order: `bloom` (resumed
    /// with [`HoodieBloomFilter::resume_dynamic`]) and the old min/max keys. Batches of the old
    /// keys then go through [`Self::write_known_keys`]; new keys through [`Self::write`].
    pub fn resume_key_index(&mut self, bloom: HoodieBloomFilter, min_key: &str, max_key: &str) {
        self.bloom = bloom;
        self.min_key = Some(min_key.to_string());
        self.max_key = Some(max_key.to_string());
    }

    /// Writes a batch whose record keys are already in the key index (see
    /// [`Self::resume_key_index`]): the bloom filter and min/max keys are left as they are.
    pub async fn write_known_keys(&mut self, batch: &RecordBatch) -> Result<()> {
        self.rows += batch.num_rows() as u64;
        let batch = match &self.kept {
            Some(kept) => batch.project(kept)?,
            None => batch.clone(),
        };
        // the writer measures a row group's size between the slices it is given, so a large
        // batch goes in pieces for `hoodie.parquet.block.size` to close a row group inside it
        // (a multiple of the writer's own batch size, so pages come out the same)
        for at in (0..batch.num_rows()).step_by(BLOCK_CHECK_ROWS) {
            let piece = batch.slice(at, BLOCK_CHECK_ROWS.min(batch.num_rows() - at));
            self.writer
                .write(&piece)
                .await
                .map_err(|e| FormatError::parquet(&self.rel_path, e))?;
        }
        Ok(())
    }

    /// Writes a batch (table schema, meta columns first).
    pub async fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        let keys = crate::meta::record_keys(batch);
        // the batched path hashes several keys side by side (same bits as one by one)
        self.bloom.add_all(keys.iter().flatten());
        for i in 0..keys.len() {
            if keys.is_null(i) {
                continue;
            }
            let k = keys.value(i);
            if self
                .min_key
                .as_deref()
                .is_none_or(|m| java_cmp(k, m).is_lt())
            {
                self.min_key = Some(k.to_string());
            }
            if self
                .max_key
                .as_deref()
                .is_none_or(|m| java_cmp(k, m).is_gt())
            {
                self.max_key = Some(k.to_string());
            }
        }
        self.write_known_keys(batch).await
    }

    /// Bytes written so far (an estimate until closed).
    pub fn bytes_written(&self) -> usize {
        self.writer.bytes_written() + self.writer.in_progress_size()
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Adds the footer and finishes the file.
    pub async fn close(mut self) -> Result<WrittenFile> {
        self.writer.append_key_value_metadata(KeyValue::new(
            bloom::BLOOM_FILTER_FOOTER_KEY.into(),
            self.bloom.to_base64(),
        ));
        self.writer.append_key_value_metadata(KeyValue::new(
            bloom::BLOOM_FILTER_TYPE_CODE_KEY.into(),
            BloomFilterType::DynamicV0.as_code().to_string(),
        ));
        if let (Some(min), Some(max)) = (self.min_key.take(), self.max_key.take()) {
            self.writer.append_key_value_metadata(KeyValue::new(
                bloom::MIN_RECORD_KEY_FOOTER_KEY.into(),
                min,
            ));
            self.writer.append_key_value_metadata(KeyValue::new(
                bloom::MAX_RECORD_KEY_FOOTER_KEY.into(),
                max,
            ));
        }
        let rel_path = self.rel_path.clone();
        let rows = self.rows;
        self.writer
            .finish()
            .await
            .map_err(|e| FormatError::parquet(&rel_path, e))?;
        let size = self.writer.bytes_written() as u64;
        Ok(WrittenFile {
            rel_path,
            size,
            rows,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use parquet::file::metadata::ParquetMetaDataReader;

    use super::*;

    /// One batch of 20,000 rows (table schema: meta columns, then `id`, with NULLs) written
    /// with `settings`; the row counts of the file's row groups.
    async fn row_groups(settings: &FileSpec) -> Vec<i64> {
        let tmp = tempfile::tempdir().unwrap();
        let storage = TableStorage::local(tmp.path()).unwrap();
        let mut fields: Vec<Field> = crate::meta::META_COLUMNS
            .iter()
            .map(|n| Field::new(*n, DataType::Utf8, true))
            .collect();
        fields.push(Field::new("id", DataType::Int64, true));
        let n = 20_000;
        let text = |f: &dyn Fn(usize) -> String| -> ArrayRef {
            Arc::new(StringArray::from_iter_values((0..n).map(f)))
        };
        let mut cols: Vec<ArrayRef> = vec![
            text(&|_| "1".into()),
            text(&|i| format!("1_0_{i}")),
            text(&|i| format!("{i}")),
            text(&|_| "".into()),
            text(&|_| "f.parquet".into()),
        ];
        cols.push(Arc::new(Int64Array::from_iter(
            (0..n as i64).map(|i| (i % 7 != 0).then_some(i * 31)),
        )));
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), cols).unwrap();
        let mut w =
            BaseFileWriter::try_new(&storage, "f.parquet", batch.schema(), settings, &[]).unwrap();
        w.write(&batch).await.unwrap();
        let done = w.close().await.unwrap();
        assert_eq!(done.rows, n as u64);
        let bytes = bytes::Bytes::from(std::fs::read(tmp.path().join("f.parquet")).unwrap());
        let meta = ParquetMetaDataReader::new()
            .parse_and_finish(&bytes)
            .unwrap();
        meta.row_groups().iter().map(|g| g.num_rows()).collect()
    }

    #[tokio::test]
    async fn one_large_batch_is_cut_into_row_groups_of_the_block_size() {
        // a block far below the batch's size: a row group closes after each measured piece
        let small = FileSpec {
            block_size: 4096,
            ..FileSpec::default()
        };
        assert_eq!(row_groups(&small).await, vec![8192, 8192, 3616]);
        // the default block holds the whole batch
        assert_eq!(row_groups(&FileSpec::default()).await, vec![20_000]);
    }
}
