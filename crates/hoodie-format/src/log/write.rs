//! New log files: an AVRO_DATA (or PARQUET_DATA) block of full rows, then a DELETE block, as
//! Hudi 1.x's append handle writes them (headers `INSTANT_TIME` and `SCHEMA` only).

use arrow::record_batch::RecordBatch;

use super::block::{encode_block, header, BlockType};
use super::delete::{encode_deletes, DeleteRecord};
use crate::avro::datum::RowEncoder;
use crate::error::{FormatError, Result};
use crate::write::FileSpec;

/// How the records of a log file are encoded (`hoodie.logfile.data.block.format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DataBlockFormat {
    /// AVRO_DATA blocks (Hudi's default).
    #[default]
    Avro,
    /// PARQUET_DATA blocks: each block's content is a Parquet file of its records.
    Parquet,
}

impl DataBlockFormat {
    /// The format `hoodie.logfile.data.block.format` names for a write that sees `options`.
    pub fn resolve(options: &crate::write::WriteOptions) -> Result<Self> {
        let key = &crate::config::LOGFILE_DATA_BLOCK_FORMAT;
        let value = options.get(key).unwrap_or_default();
        key.check(&value).map_err(FormatError::from)?;
        Ok(match value.trim().eq_ignore_ascii_case("parquet") {
            true => Self::Parquet,
            false => Self::Avro,
        })
    }
}

/// Bytes of Avro records per data block at most (`hoodie.logfile.data.block.max.size`).
pub(crate) const MAX_DATA_BLOCK_BYTES: usize = 256 * 1024 * 1024;

/// The bytes of a new log file of `instant`: `rows` (table rows, meta columns first, in
/// storage types) as data blocks of `files.data_blocks`' format, then `deletes` as one DELETE
/// block. `schema_json` is the Avro schema with the meta fields
/// (`crate::schema::avro_schema_with_meta`).
pub fn log_file_bytes(
    instant: &str,
    schema_json: &str,
    rows: Option<&RecordBatch>,
    deletes: &[DeleteRecord],
    files: &FileSpec,
) -> Result<Vec<u8>> {
    let head = [
        (header::INSTANT_TIME, instant),
        (header::SCHEMA, schema_json),
    ];
    let mut out = Vec::new();
    if let Some(rows) = rows.filter(|r| r.num_rows() > 0) {
        match files.data_blocks {
            DataBlockFormat::Avro => avro_blocks(rows, &head, &mut out)?,
            DataBlockFormat::Parquet => {
                let content = parquet_content(rows, files)?;
                encode_block(BlockType::ParquetData, &head, &content, &mut out);
            }
        }
    }
    if !deletes.is_empty() {
        encode_block(BlockType::Delete, &head, &encode_deletes(deletes), &mut out);
    }
    Ok(out)
}

/// `rows` as AVRO_DATA blocks of at most [`MAX_DATA_BLOCK_BYTES`] of records each.
fn avro_blocks(rows: &RecordBatch, head: &[(u32, &str)], out: &mut Vec<u8>) -> Result<()> {
    let encoder = RowEncoder::new(rows)?;
    let mut records: Vec<u8> = Vec::new();
    let mut count = 0i32;
    let mut datum = Vec::new();
    for r in 0..rows.num_rows() {
        datum.clear();
        encoder.encode(r, &mut datum);
        records.extend_from_slice(&(datum.len() as i32).to_be_bytes());
        records.extend_from_slice(&datum);
        count += 1;
        if records.len() >= MAX_DATA_BLOCK_BYTES {
            data_block(BlockType::AvroData, head, count, &records, out);
            records.clear();
            count = 0;
        }
    }
    if count > 0 {
        data_block(BlockType::AvroData, head, count, &records, out);
    }
    Ok(())
}

/// The content of a PARQUET_DATA block of `rows`: a whole Parquet file, written as base files
/// are (`files`' codec), as Hudi's `HoodieParquetDataBlock` holds one.
fn parquet_content(rows: &RecordBatch, files: &FileSpec) -> Result<Vec<u8>> {
    let props = crate::write::writer::writer_properties(files)?;
    let damaged = |e| FormatError::parquet("a PARQUET_DATA log block", e);
    let mut writer = parquet::arrow::ArrowWriter::try_new(Vec::new(), rows.schema(), Some(props))
        .map_err(damaged)?;
    writer.write(rows).map_err(damaged)?;
    writer.into_inner().map_err(damaged)
}

/// Appends an Avro-encoded block of `count` length-prefixed `records` (content version 3).
pub(crate) fn data_block(
    block_type: BlockType,
    head: &[(u32, &str)],
    count: i32,
    records: &[u8],
    out: &mut Vec<u8>,
) {
    let mut content = Vec::with_capacity(records.len() + 8);
    content.extend_from_slice(&3i32.to_be_bytes());
    content.extend_from_slice(&count.to_be_bytes());
    content.extend_from_slice(records);
    encode_block(block_type, head, &content, out);
}

/// The name of a log file: `.<fileId>_<instant>.log.<version>_<writeToken>`.
pub fn log_file_name(file_id: &str, instant: &str, version: u32, token: &str) -> String {
    format!(".{file_id}_{instant}.log.{version}_{token}")
}
