//! New log files: AVRO_DATA (or PARQUET_DATA) blocks of whole or partial records, then a DELETE
//! block, as Hudi 1.x's append handle writes them (headers `INSTANT_TIME` and `SCHEMA`; record
//! positions and `IS_PARTIAL` where they apply).

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

/// What the record positions of a new log file's blocks count rows of (table versions 8 and 9, see
/// [`super::positions`]): the instant of the slice's base file, and the `RECORD_POSITIONS`
/// header of the delete block (its records in the order of their positions); each data
/// block's are its own ([`DataRows::positions`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockPositions {
    /// The instant of the slice's base file.
    pub base_instant: String,
    /// The delete block's positions, if every deleted key has one.
    pub deletes: Option<String>,
}

/// The records of one data block of a new log file.
#[derive(Debug, Clone, Copy)]
pub struct DataRows<'a> {
    /// Table rows, meta columns first, in storage types; a partial block's hold the meta
    /// columns and the data columns it sets, in the table's order.
    pub rows: &'a RecordBatch,
    /// A partial-update block's own Avro schema (its `SCHEMA` header, with `IS_PARTIAL`), the
    /// meta fields and the columns of `rows`; `None`: a block of whole records, of the file's
    /// schema.
    pub partial_schema: Option<&'a str>,
    /// The block's `RECORD_POSITIONS` (its records in their order), if every record has its
    /// row in the base file; written when the file has [`BlockPositions`].
    pub positions: Option<&'a str>,
}

#[cfg(test)]
impl<'a> DataRows<'a> {
    /// A block of whole records, without record positions.
    pub(crate) fn whole(rows: &'a RecordBatch) -> Self {
        Self {
            rows,
            partial_schema: None,
            positions: None,
        }
    }
}

/// The bytes of a new log file of `instant`: the `data` blocks (each in `files.data_blocks`'
/// format), then `deletes` as one DELETE block, each with its record positions when
/// `positions` has them. `schema_json` is the Avro schema with the meta fields
/// (`crate::schema::avro_schema_with_meta`) of whole records and of the delete block.
pub fn log_file_bytes(
    instant: &str,
    schema_json: &str,
    data: &[DataRows<'_>],
    deletes: &[DeleteRecord],
    files: &FileSpec,
    positions: Option<&BlockPositions>,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for block in data.iter().filter(|d| d.rows.num_rows() > 0) {
        let schema = block.partial_schema.unwrap_or(schema_json);
        let mut head = block_head(instant, schema, positions.zip(block.positions));
        if block.partial_schema.is_some() {
            head.push((header::IS_PARTIAL, "true"));
        }
        match files.data_blocks {
            DataBlockFormat::Avro => avro_blocks(block.rows, &head, &mut out)?,
            DataBlockFormat::Parquet => {
                let content = parquet_content(block.rows, files)?;
                encode_block(BlockType::ParquetData, &head, &content, &mut out);
            }
        }
    }
    if !deletes.is_empty() {
        let deleted = positions.and_then(|p| p.deletes.as_deref());
        let head = block_head(instant, schema_json, positions.zip(deleted));
        encode_block(BlockType::Delete, &head, &encode_deletes(deletes), &mut out);
    }
    Ok(out)
}

/// The headers of a block of `instant` and `schema`, with its record positions if it has them.
fn block_head<'h>(
    instant: &'h str,
    schema: &'h str,
    positions: Option<(&'h BlockPositions, &'h str)>,
) -> Vec<(u32, &'h str)> {
    let mut head = vec![(header::INSTANT_TIME, instant), (header::SCHEMA, schema)];
    if let Some((p, rows)) = positions {
        head.push((header::RECORD_POSITIONS, rows));
        head.push((
            header::BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS,
            p.base_instant.as_str(),
        ));
    }
    head
}

/// `rows` as AVRO_DATA blocks of at most [`MAX_DATA_BLOCK_BYTES`] of records each; rows that
/// take more than one block are written without record positions (each block's positions
/// would have to be its own).
fn avro_blocks(rows: &RecordBatch, head: &[(u32, &str)], out: &mut Vec<u8>) -> Result<()> {
    let encoder = RowEncoder::new(rows)?;
    let mut blocks: Vec<(i32, Vec<u8>)> = vec![(0, Vec::new())];
    let mut datum = Vec::new();
    for r in 0..rows.num_rows() {
        datum.clear();
        encoder.encode(r, &mut datum);
        let (count, records) = blocks.last_mut().expect("a block");
        records.extend_from_slice(&(datum.len() as i32).to_be_bytes());
        records.extend_from_slice(&datum);
        *count += 1;
        if records.len() >= MAX_DATA_BLOCK_BYTES {
            blocks.push((0, Vec::new()));
        }
    }
    blocks.retain(|(count, _)| *count > 0);
    let unpositioned: Vec<(u32, &str)> = head
        .iter()
        .filter(|(k, _)| *k != header::RECORD_POSITIONS)
        .filter(|(k, _)| *k != header::BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS)
        .copied()
        .collect();
    let head = if blocks.len() > 1 {
        &unpositioned[..]
    } else {
        head
    };
    for (count, records) in &blocks {
        data_block(BlockType::AvroData, head, *count, records, out);
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
