//! Copy-on-write rewrites that keep every stored row where it is (a file group that takes
//! updates and inserts but no deletes): only the columns that change (those the statement
//! assigns, or those whose values differ, see [`crate::write::column_diff`]) and the meta columns a
//! rewrite restamps are decoded and encoded again; every other column chunk is copied from the
//! old file byte for byte. Inserts follow as a row group of their own.
//!
//! The new file has the old file's row groups and rows, then the inserts; its key index is the
//! old one (the same keys in the same order) extended by the inserted keys. It holds what a
//! full rewrite would write, except that the copied chunks keep the old file's encoding.

use std::sync::Arc;

use arrow::array::{make_comparator, Array, ArrayRef, AsArray, StringArray};
use arrow::compute::interleave;
use arrow::compute::kernels::sort::SortOptions;
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use bytes::Bytes;
use futures::StreamExt;
use object_store::ObjectStoreExt;
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnWriter, ArrowRowGroupWriterFactory};
use parquet::arrow::{add_encoded_arrow_schema_to_metadata, ArrowSchemaConverter};
use parquet::column::writer::ColumnCloseResult;
use parquet::file::metadata::{KeyValue, ParquetMetaData};
use parquet::file::reader::{ChunkReader, Length};
use parquet::file::writer::SerializedFileWriter;
use tokio::io::AsyncWriteExt;

use crate::bloom::{self, BloomFilterType, HoodieBloomFilter};
use crate::error::{FormatError, Result};
use crate::field_path::FieldPath;
use crate::meta::{MetaValues, COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, RECORD_KEY};
use crate::storage::TableStorage;
use crate::write::upload::Upload;
use crate::write::writer::{writer_properties, FileSpec};

/// What a spliced rewrite is given.
pub(crate) struct SpliceInput<'a> {
    /// The table's storage.
    pub storage: &'a TableStorage,
    /// The table schema (meta columns first).
    pub schema: &'a SchemaRef,
    /// The change set and its record keys.
    pub incoming: &'a RecordBatch,
    /// Record keys of `incoming`.
    pub incoming_keys: &'a StringArray,
    /// Incoming row per stored key routed to this file group (updates only).
    pub updates: &'a crate::tasks::FastMap<&'a str, u32>,
    /// Incoming rows new to this file group: appended as a row group of their own.
    pub inserts: &'a [u32],
    /// The ordering field under event-time ordering.
    pub ordering: Option<&'a FieldPath>,
    /// Data columns the statement may change; all others are equal in `incoming` and stored.
    /// `None`: unknown (an upsert, `UPDATE SET *`): the updated rows are compared with the
    /// stored ones to find out ([`crate::write::column_diff`]).
    pub changed: Option<&'a [String]>,
    /// Base file settings (the re-encoded chunks use them).
    pub settings: &'a FileSpec,
    /// The old base file.
    pub old_rel: &'a str,
    /// The new base file.
    pub new_rel: &'a str,
    /// Whether to hand back the stored rows of the updated keys when they are read anyway (a
    /// CDC table's before images).
    pub keep_stored: bool,
}

/// What a spliced rewrite wrote.
#[derive(Debug, Default)]
pub(crate) struct Spliced {
    /// Bytes of the new file.
    pub size: u64,
    /// Rows of the new file.
    pub rows: u64,
    /// Stored rows replaced by incoming ones.
    pub updated: u64,
    /// Incoming rows appended.
    pub inserted: u64,
    /// Incoming rows older than the stored ones (event-time ordering), not written.
    pub dropped: u64,
    /// With `keep_stored`, the stored rows of the updated keys (their key and data columns), if
    /// the splice read them to find the changed columns.
    pub stored: Option<Vec<RecordBatch>>,
}

/// Footer entries of the key index, carried over unchanged.
const KEY_INDEX_ENTRIES: [&str; 4] = [
    bloom::BLOOM_FILTER_FOOTER_KEY,
    bloom::BLOOM_FILTER_TYPE_CODE_KEY,
    bloom::MIN_RECORD_KEY_FOOTER_KEY,
    bloom::MAX_RECORD_KEY_FOOTER_KEY,
];

/// Rewrites `old_rel` as `new_rel`, re-encoding only the changed columns and the meta columns
/// a rewrite restamps. `None` when the old file cannot be spliced (its Parquet schema is not
/// the one this writer writes, it has nested columns, a page index on some columns only, or no
/// key index in its footer): the caller then rewrites it whole. Nothing is written then.
/// `meta` gives the new file's meta column values (`first_row` advances with each updated row).
pub(crate) async fn splice_rewrite(
    input: SpliceInput<'_>,
    mut meta: MetaValues<'_>,
) -> Result<Option<Spliced>> {
    let footer = crate::footer::read_footer_with_page_index(input.storage, input.old_rel).await?;
    let mut props = writer_properties(input.settings)?;
    add_encoded_arrow_schema_to_metadata(input.schema, &mut props);
    let parquet_schema = ArrowSchemaConverter::new()
        .with_coerce_types(props.coerce_types())
        .convert(input.schema)
        .map_err(|e| FormatError::parquet(input.new_rel, e))?;
    let Some(mut key_index) = compatible(input.schema, &footer, &parquet_schema) else {
        return Ok(None);
    };
    // inserts extend the key index: the old bloom filter must be one that can be resumed
    let dynamic = BloomFilterType::DynamicV0.as_code().to_string();
    if !input.inserts.is_empty()
        && !key_index
            .iter()
            .any(|(k, v)| *k == bloom::BLOOM_FILTER_TYPE_CODE_KEY && *v == dynamic)
    {
        return Ok(None);
    }
    let detected: Vec<String>;
    let mut stored = None;
    let changed: &[String] = match input.changed {
        Some(changed) => changed,
        None if input.updates.is_empty() => &[],
        None => {
            let fields = input.schema.fields();
            let candidates: Vec<usize> = (0..fields.len())
                .filter(|&c| !crate::schema::is_meta_column(fields[c].name()))
                .collect();
            let differing = crate::write::column_diff::differing_columns(
                input.storage,
                input.old_rel,
                footer.clone(),
                input.schema,
                input.incoming,
                input.updates,
                &candidates,
                input.keep_stored,
            )
            .await?;
            stored = Some(differing.1);
            let differing = differing.0;
            detected = differing
                .iter()
                .map(|&c| fields[c].name().clone())
                .collect();
            &detected
        }
    };
    let plan = SplicePlan::new(&input, changed);

    let unsent = Pending::default();
    let mut file = SerializedFileWriter::new(
        unsent.clone(),
        parquet_schema.root_schema_ptr(),
        Arc::new(props),
    )
    .map_err(|e| FormatError::parquet(input.new_rel, e))?;
    let factory = ArrowRowGroupWriterFactory::new(&file, input.schema.clone());
    let mut out = Upload::new(input.storage, input.new_rel);
    let mut done = Spliced {
        stored,
        ..Default::default()
    };
    let mut stream = crate::base_file::stream_leaves(
        input.storage,
        input.old_rel,
        footer.clone(),
        plan.decoded.clone(),
        None,
    )?;
    // a batch that reaches into the next row group is split; its tail is kept here
    let mut pending: Option<RecordBatch> = None;
    for g in 0..footer.num_row_groups() {
        let mut writers = column_writers(&factory, g, &plan.reencoded, input.new_rel)?;
        let mut left = footer.row_group(g).num_rows() as usize;
        while left > 0 {
            let batch = match pending.take() {
                Some(b) => b,
                None => match stream.next().await {
                    Some(b) => b?,
                    None => {
                        return Err(FormatError::Corrupt {
                            path: input.old_rel.to_string(),
                            reason: "fewer rows than its footer says".into(),
                        })
                    }
                },
            };
            let batch = if batch.num_rows() > left {
                pending = Some(batch.slice(left, batch.num_rows() - left));
                batch.slice(0, left)
            } else {
                batch
            };
            left -= batch.num_rows();
            let columns = merge_batch(&input, &plan, &batch, &mut meta, &mut done)?;
            for (writer, (field, col)) in writers.iter_mut().zip(&columns) {
                let Some(writer) = writer else { continue };
                for leaf in compute_leaves(field, col)
                    .map_err(|e| FormatError::parquet(input.new_rel, e))?
                {
                    writer
                        .write(&leaf)
                        .map_err(|e| FormatError::parquet(input.new_rel, e))?;
                }
            }
            done.rows += batch.num_rows() as u64;
        }
        let old = OldFile {
            storage: input.storage,
            rel: input.old_rel,
            footer: &footer,
        };
        append_row_group(
            &old,
            &mut file,
            g,
            writers,
            input.new_rel,
            &unsent,
            &mut out,
        )
        .await?;
    }
    if !input.inserts.is_empty() {
        let inserted = crate::meta::take_with_meta(
            input.incoming,
            input.incoming_keys,
            input.inserts,
            &meta,
            input.schema,
        )?;
        append_inserts(
            &mut file,
            &factory,
            footer.num_row_groups(),
            &inserted,
            input.new_rel,
        )?;
        unsent
            .upload(&mut out, input.storage, input.new_rel)
            .await?;
        extend_key_index(
            &mut key_index,
            crate::meta::record_keys(&inserted),
            input.settings.bloom_max_entries,
            input.old_rel,
        )?;
        done.rows += inserted.num_rows() as u64;
        done.inserted = inserted.num_rows() as u64;
    }
    for (key, value) in key_index {
        file.append_key_value_metadata(KeyValue::new(key.to_string(), value));
    }
    file.finish()
        .map_err(|e| FormatError::parquet(input.new_rel, e))?;
    done.size = file.bytes_written() as u64;
    unsent
        .upload(&mut out, input.storage, input.new_rel)
        .await?;
    out.shutdown().await.map_err(|e| {
        FormatError::parquet(
            input.new_rel,
            parquet::errors::ParquetError::External(Box::new(e)),
        )
    })?;
    Ok(Some(done))
}

/// Writes `rows` (new to the file group, in the table schema) as one more row group.
fn append_inserts(
    file: &mut SerializedFileWriter<Pending>,
    factory: &ArrowRowGroupWriterFactory,
    g: usize,
    rows: &RecordBatch,
    rel: &str,
) -> Result<()> {
    let err = |e| FormatError::parquet(rel, e);
    let writers = factory.create_column_writers(g).map_err(err)?;
    let mut chunks = Vec::with_capacity(writers.len());
    // flat columns (checked by `compatible`): one writer per column
    for (mut writer, (field, col)) in writers
        .into_iter()
        .zip(rows.schema().fields().iter().zip(rows.columns()))
    {
        for leaf in compute_leaves(field, col).map_err(err)? {
            writer.write(&leaf).map_err(err)?;
        }
        chunks.push(writer.close().map_err(err)?);
    }
    let mut row_group = file.next_row_group().map_err(err)?;
    for chunk in chunks {
        chunk.append_to_row_group(&mut row_group).map_err(err)?;
    }
    row_group.close().map_err(err)?;
    Ok(())
}

/// Adds `keys` to the carried key index: the resumed `DYNAMIC_V0` bloom filter (the same bits
/// as a filter built from all keys) and the min/max record keys.
fn extend_key_index(
    key_index: &mut [(&'static str, String)],
    keys: &StringArray,
    max_entries: usize,
    rel: &str,
) -> Result<()> {
    use arrow::array::Array;
    for (key, value) in key_index.iter_mut() {
        match *key {
            bloom::BLOOM_FILTER_FOOTER_KEY => {
                let mut filter =
                    HoodieBloomFilter::resume_dynamic(value, max_entries).map_err(|e| {
                        FormatError::Bloom {
                            path: rel.to_string(),
                            source: e,
                        }
                    })?;
                filter.add_all(keys.iter().flatten());
                *value = filter.to_base64();
            }
            bloom::MIN_RECORD_KEY_FOOTER_KEY | bloom::MAX_RECORD_KEY_FOOTER_KEY => {
                let want = if *key == bloom::MIN_RECORD_KEY_FOOTER_KEY {
                    std::cmp::Ordering::Less
                } else {
                    std::cmp::Ordering::Greater
                };
                for i in 0..keys.len() {
                    if !keys.is_null(i) && bloom::java_string_cmp(keys.value(i), value) == want {
                        *value = keys.value(i).to_string();
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Which columns a splice decodes and which it encodes again.
struct SplicePlan {
    /// Leaf (= column) indices read from the old file, in file order.
    decoded: Vec<usize>,
    /// Per table column: encoded again (true) or copied (false).
    reencoded: Vec<bool>,
    /// Per table column: its position among the decoded columns.
    decoded_pos: Vec<Option<usize>>,
}

/// The old footer's key index entries when the old file can be spliced: flat columns only, its
/// Parquet schema exactly the one this writer writes (a copied chunk must be what this writer
/// would have encoded for the column's type), a page index on every column or none, and a key
/// index in the footer.
fn compatible(
    schema: &SchemaRef,
    footer: &ParquetMetaData,
    parquet_schema: &parquet::schema::types::SchemaDescriptor,
) -> Option<Vec<(&'static str, String)>> {
    let fields = schema.fields();
    let old = footer.file_metadata().schema_descr();
    if parquet_schema.num_columns() != fields.len()
        || old.num_columns() != fields.len()
        || (0..fields.len()).any(|c| old.column(c) != parquet_schema.column(c))
    {
        return None;
    }
    // a partial page index would not be read back
    let indexed = |ix: Option<usize>| ix == Some(footer.num_row_groups()) || ix.is_none();
    if !indexed(footer.offset_index().map(|o| o.len()))
        || !indexed(footer.column_index().map(|c| c.len()))
    {
        return None;
    }
    let mut key_index = Vec::with_capacity(KEY_INDEX_ENTRIES.len());
    for key in KEY_INDEX_ENTRIES {
        key_index.push((key, crate::footer::footer_value(footer, key)?.to_string()));
    }
    Some(key_index)
}

impl SplicePlan {
    fn new(input: &SpliceInput<'_>, changed_columns: &[String]) -> Self {
        let fields = input.schema.fields();
        let ordering = input.ordering.map(|p| fields[p.top()].name().as_str());
        let mut decoded = Vec::new();
        let mut reencoded = Vec::with_capacity(fields.len());
        let mut decoded_pos = Vec::with_capacity(fields.len());
        for (c, f) in fields.iter().enumerate() {
            let name = f.name().as_str();
            let changed = changed_columns.iter().any(|c| c == name);
            let restamped = name == COMMIT_TIME || name == COMMIT_SEQNO || name == FILE_NAME;
            reencoded.push(changed || restamped);
            // the file name is the new one on every row: nothing to read
            let read = changed
                || name == COMMIT_TIME
                || name == COMMIT_SEQNO
                || name == RECORD_KEY
                || ordering == Some(name);
            decoded_pos.push(read.then(|| {
                decoded.push(c);
                decoded.len() - 1
            }));
        }
        Self {
            decoded,
            reencoded,
            decoded_pos,
        }
    }
}

/// Column writers of row group `g` for the re-encoded columns (None for copied ones).
fn column_writers(
    factory: &ArrowRowGroupWriterFactory,
    g: usize,
    reencoded: &[bool],
    rel: &str,
) -> Result<Vec<Option<ArrowColumnWriter>>> {
    let writers = factory
        .create_column_writers(g)
        .map_err(|e| FormatError::parquet(rel, e))?;
    Ok(writers
        .into_iter()
        .zip(reencoded)
        .map(|(w, &re)| re.then_some(w))
        .collect())
}

/// The re-encoded columns of one old batch, with the updated rows' values and meta columns
/// (copied columns get a placeholder and are skipped by the caller).
fn merge_batch(
    input: &SpliceInput<'_>,
    plan: &SplicePlan,
    old: &RecordBatch,
    meta: &mut MetaValues<'_>,
    done: &mut Spliced,
) -> Result<Vec<(arrow::datatypes::FieldRef, ArrayRef)>> {
    let fields = input.schema.fields();
    // a decoded column in the table's type (the file's Arrow type hint may differ, e.g. a
    // LargeUtf8 for a string: the Parquet column, and so a copied chunk, is the same)
    let column = |c: usize| -> Result<Option<ArrayRef>> {
        let Some(p) = plan.decoded_pos[c] else {
            return Ok(None);
        };
        let col = old.column(p);
        Ok(Some(if col.data_type() == fields[c].data_type() {
            col.clone()
        } else {
            arrow::compute::cast(col, fields[c].data_type())?
        }))
    };
    let keys =
        column(crate::meta::RECORD_KEY_INDEX)?.ok_or_else(|| FormatError::MissingColumn {
            column: RECORD_KEY.into(),
        })?;
    let keys = keys.as_string::<i32>();
    let ordering = match input.ordering {
        Some(path) => {
            let stored = column(path.top())?.ok_or_else(|| FormatError::MissingColumn {
                column: path.name().to_string(),
            })?;
            Some(make_comparator(
                path.values(input.incoming.column(path.top()))?.as_ref(),
                path.values(&stored)?.as_ref(),
                SortOptions::default(),
            )?)
        }
        None => None,
    };
    // (source, row): 0 = stored, 1 = incoming (position among this batch's updated rows)
    let mut positions: Vec<(usize, usize)> = Vec::with_capacity(old.num_rows());
    let mut incoming_idx: Vec<u32> = Vec::new();
    for r in 0..old.num_rows() {
        match input.updates.get(keys.value(r)) {
            Some(&i)
                if ordering
                    .as_ref()
                    .is_none_or(|cmp| cmp(i as usize, r).is_ge()) =>
            {
                positions.push((1, incoming_idx.len()));
                incoming_idx.push(i);
            }
            Some(_) => {
                positions.push((0, r));
                done.dropped += 1;
            }
            None => positions.push((0, r)),
        }
    }
    done.updated += incoming_idx.len() as u64;
    let inc = if incoming_idx.is_empty() {
        None
    } else {
        let inc = crate::meta::take_with_meta(
            input.incoming,
            input.incoming_keys,
            &incoming_idx,
            meta,
            input.schema,
        )?;
        meta.first_row += incoming_idx.len() as u64;
        Some(inc)
    };
    let mut out = Vec::with_capacity(fields.len());
    for (c, field) in fields.iter().enumerate() {
        let col: ArrayRef = if !plan.reencoded[c] {
            arrow::array::new_null_array(field.data_type(), 0)
        } else if field.name() == FILE_NAME {
            Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
                meta.file_name,
                old.num_rows(),
            )))
        } else {
            let stored = column(c)?.ok_or_else(|| FormatError::MissingColumn {
                column: field.name().clone(),
            })?;
            match &inc {
                None => stored,
                Some(inc) => interleave(&[stored.as_ref(), inc.column(c).as_ref()], &positions)?,
            }
        };
        out.push((field.clone(), col));
    }
    Ok(out)
}

mod chunks;

use chunks::*;

#[cfg(test)]
mod tests;
