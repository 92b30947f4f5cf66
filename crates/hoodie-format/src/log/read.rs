//! Reading the log files of a file slice: the records and deletes of the blocks a reader
//! admits, in the order they were written.

use std::collections::HashSet;

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use super::block::{header, parse_blocks, BlockType, LogBlock};
use super::delete::{decode_deletes, DeleteRecord};
use super::partial::{decoding_schema, split_partial, PartialRows};
use crate::avro::datum::RowDecoder;
use crate::error::{FormatError, Result};
use crate::storage::TableStorage;

/// Which instants' log blocks a reader admits: completed instants (any action: a rollback's
/// command blocks count too), and those older than the active timeline (archived, so
/// completed), up to an as-of instant.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Admission {
    completed: HashSet<String>,
    archived_before: Option<String>,
    as_of: Option<String>,
}

impl Admission {
    /// The admission of `timeline` as of `as_of` (`None`: its latest state).
    pub fn of(timeline: &crate::timeline::Timeline, as_of: Option<&str>) -> Self {
        use crate::timeline::instant::State;
        Self {
            completed: timeline
                .instants()
                .iter()
                .filter(|i| i.state == State::Completed)
                .map(|i| i.timestamp.clone())
                .collect(),
            archived_before: timeline.earliest_instant_time().map(str::to_string),
            as_of: as_of.map(str::to_string),
        }
    }

    /// Whether blocks written by `instant` are read.
    pub fn admits(&self, instant: &str) -> bool {
        self.as_of.as_deref().is_none_or(|a| instant <= a)
            && (self.completed.contains(instant)
                || self.archived_before.as_deref().is_some_and(|e| instant < e))
    }
}

/// What one admitted data or delete block holds.
#[derive(Debug, Clone)]
pub enum LogContent {
    /// Records (full rows in the reader's schema).
    Rows(RecordBatch),
    /// Partial records: the columns a partial-update block sets, and their keys.
    Partial(PartialRows),
    /// Deleted keys.
    Deletes(Vec<DeleteRecord>),
}

/// The rows of a slice's base file that a block's records change, from its
/// `RECORD_POSITIONS` header (table version 8 and later).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Positioned {
    /// The instant of the base file the rows are counted in
    /// (`BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS`).
    pub base_instant: String,
    /// The rows, ascending: the block's i-th record changes row `rows[i]`.
    pub rows: Vec<u64>,
}

impl Positioned {
    /// The positions of `block`, when it has both headers and they decode (positions that do
    /// not decode are not used, as Java skips them: the merge then goes by key).
    fn of(block: &LogBlock) -> Option<Self> {
        let base_instant = block.header(header::BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS)?;
        let rows = super::positions::decode_positions(block.header(header::RECORD_POSITIONS)?);
        Some(Self {
            base_instant: base_instant.to_string(),
            rows: rows.ok().filter(|r| !r.is_empty())?,
        })
    }
}

/// The admitted content of a slice's log files, oldest first.
#[derive(Debug, Clone, Default)]
pub struct SliceLogs {
    /// Blocks' contents in write order.
    pub contents: Vec<LogContent>,
    /// Each block's record positions, if it has them (one entry per entry of `contents`).
    pub positioned: Vec<Option<Positioned>>,
    /// Log files read.
    pub files: usize,
    /// Bytes read.
    pub bytes: u64,
    /// Blocks admitted.
    pub blocks: usize,
    /// Rollback command blocks seen.
    pub rollback_blocks: usize,
}

impl SliceLogs {
    /// Records plus delete entries.
    pub fn records(&self) -> usize {
        self.contents.iter().map(LogContent::records).sum()
    }
}

impl LogContent {
    /// Records or delete entries.
    pub fn records(&self) -> usize {
        match self {
            LogContent::Rows(b) => b.num_rows(),
            LogContent::Partial(p) => p.rows.num_rows(),
            LogContent::Deletes(d) => d.len(),
        }
    }

    /// Whether the block holds partial records.
    pub fn is_partial(&self) -> bool {
        matches!(self, LogContent::Partial(_))
    }
}

/// Reads the log files `log_files` (paths relative to the table, in slice order) into rows of
/// `schema` (columns by name; missing ones NULL; a partial-update block's records as
/// [`LogContent::Partial`]). A block is admitted when `admits` accepts its instant (a completed
/// write, not after the as-of instant) and no admitted rollback command block targets that
/// instant. CDC and corrupt blocks are skipped.
pub async fn read_slice_logs(
    storage: &TableStorage,
    log_files: &[String],
    admits: &(dyn Fn(&str) -> bool + Send + Sync),
    schema: &SchemaRef,
) -> Result<SliceLogs> {
    let mut out = SliceLogs::default();
    let mut blocks: Vec<(String, LogBlock)> = Vec::new();
    let mut rolled_back: HashSet<String> = HashSet::new();
    for rel in log_files {
        let bytes = match storage.get(rel).await {
            Ok(b) => b,
            // a log file listed with the slice and gone since: another writer rolled back the
            // pending write that created it (a completed write's logs go only with its slice)
            Err(e) if e.is_not_found() => continue,
            Err(e) => return Err(e),
        };
        out.files += 1;
        out.bytes += bytes.len() as u64;
        for block in parse_blocks(&bytes, rel)? {
            let Some(instant) = block.header(header::INSTANT_TIME).map(str::to_string) else {
                continue;
            };
            if !admits(&instant) {
                continue;
            }
            match block.block_type {
                BlockType::Command => {
                    out.rollback_blocks += 1;
                    if let Some(t) = block.header(header::TARGET_INSTANT_TIME) {
                        rolled_back.insert(t.to_string());
                    }
                }
                BlockType::AvroData | BlockType::ParquetData | BlockType::Delete => {
                    blocks.push((rel.clone(), block))
                }
                BlockType::HFileData => {
                    return Err(FormatError::Unsupported {
                        feature: format!("HFile log blocks ({rel})"),
                    })
                }
                BlockType::Corrupt | BlockType::CdcData => {}
            }
        }
    }
    for (rel, block) in blocks {
        let instant = block.header(header::INSTANT_TIME).unwrap_or_default();
        if rolled_back.contains(instant) {
            continue;
        }
        out.blocks += 1;
        out.contents.push(decode_block(&block, schema, &rel)?);
        out.positioned.push(Positioned::of(&block));
    }
    Ok(out)
}

/// The content of an admitted data or delete block in `schema`.
fn decode_block(block: &LogBlock, schema: &SchemaRef, rel: &str) -> Result<LogContent> {
    if block.block_type == BlockType::Delete {
        return Ok(LogContent::Deletes(decode_deletes(&block.content)?));
    }
    let partial = block.is_partial();
    let target = match partial {
        true => decoding_schema(schema),
        false => schema.clone(),
    };
    let (batch, filled) = match block.block_type {
        BlockType::AvroData => decode_avro_rows(block, &target, rel)?,
        _ => decode_parquet_block(block, &target, rel)?,
    };
    Ok(match partial {
        true => LogContent::Partial(split_partial(schema, batch, &filled, rel)?),
        false => LogContent::Rows(batch),
    })
}

/// The records of an Avro data block (AVRO_DATA, or CDC_DATA, which Hudi encodes alike) in
/// `schema`, by the writer schema of the block's SCHEMA header.
pub(crate) fn decode_avro_block(
    block: &LogBlock,
    schema: &SchemaRef,
    rel: &str,
) -> Result<RecordBatch> {
    Ok(decode_avro_rows(block, schema, rel)?.0)
}

/// The records of an Avro data block in `schema`, and per column of `schema` whether the
/// block's writer schema has it.
fn decode_avro_rows(
    block: &LogBlock,
    schema: &SchemaRef,
    rel: &str,
) -> Result<(RecordBatch, Vec<bool>)> {
    let corrupt = |reason: &str| FormatError::Corrupt {
        path: rel.to_string(),
        reason: reason.to_string(),
    };
    let writer = block
        .header(header::SCHEMA)
        .ok_or_else(|| corrupt("an Avro data block without a SCHEMA header"))?;
    let mut decoder = RowDecoder::new(writer, schema.clone())?;
    let c = block.content.as_ref();
    let int = |at: usize| -> Result<usize> {
        c.get(at..at + 4)
            .map(|b| i32::from_be_bytes(b.try_into().expect("4 bytes")) as usize)
            .ok_or_else(|| corrupt("an Avro data block cut short"))
    };
    if int(0)? != 3 {
        return Err(corrupt(
            "an Avro data block of a content version other than 3",
        ));
    }
    let count = int(4)?;
    let mut at = 8;
    for _ in 0..count {
        let len = int(at)?;
        let datum = c
            .get(at + 4..at + 4 + len)
            .ok_or_else(|| corrupt("an Avro data block cut short"))?;
        decoder
            .push(datum)
            .map_err(|_| corrupt("a record does not match the block's schema"))?;
        at += 4 + len;
    }
    let filled = decoder.filled();
    Ok((decoder.finish()?, filled))
}

/// The records of a Parquet data block in `schema` (columns by name, cast to the reader's
/// types), and per column of `schema` whether the block's file has it.
fn decode_parquet_block(
    block: &LogBlock,
    schema: &SchemaRef,
    rel: &str,
) -> Result<(RecordBatch, Vec<bool>)> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::arrow::ProjectionMask;
    let builder = ParquetRecordBatchReaderBuilder::try_new(block.content.clone())
        .map_err(|e| FormatError::damaged(rel, e))?;
    let filled: Vec<bool> = schema
        .fields()
        .iter()
        .map(|f| builder.schema().index_of(f.name()).is_ok())
        .collect();
    // only the reader's columns are decoded: a scan of a few columns skips the rest of the
    // block's column chunks, which Avro blocks cannot
    let roots: Vec<usize> = (0..builder.schema().fields().len())
        .filter(|&i| schema.index_of(builder.schema().field(i).name()).is_ok())
        .collect();
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
    let reader = builder
        .with_projection(mask)
        .build()
        .map_err(|e| FormatError::parquet(rel, e))?;
    let mut parts = Vec::new();
    for b in reader {
        let b = b?;
        let n = b.num_rows();
        let mut cols = Vec::with_capacity(schema.fields().len());
        for f in schema.fields() {
            cols.push(match b.column_by_name(f.name()) {
                Some(c) if c.data_type() == f.data_type() => c.clone(),
                Some(c) => arrow::compute::cast(c, f.data_type())?,
                None => arrow::array::new_null_array(f.data_type(), n),
            });
        }
        let opts = arrow::record_batch::RecordBatchOptions::new().with_row_count(Some(n));
        parts.push(RecordBatch::try_new_with_options(
            schema.clone(),
            cols,
            &opts,
        )?);
    }
    Ok((arrow::compute::concat_batches(schema, &parts)?, filled))
}
