//! Copy-on-write rewrites that keep every stored row where it is (a file group that takes
//! updates and inserts but no deletes): only the columns that change (those the statement
//! assigns, or those whose values differ, see [`crate::column_diff`]) and the meta columns a
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
use object_store::buffered::BufWriter;
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
use crate::writer::{writer_properties, BaseFileSettings};

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
    /// stored ones to find out ([`crate::column_diff`]).
    pub changed: Option<&'a [String]>,
    /// Base file settings (the re-encoded chunks use them).
    pub settings: &'a BaseFileSettings,
    /// The old base file.
    pub old_rel: &'a str,
    /// The new base file.
    pub new_rel: &'a str,
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
    let footer =
        Arc::new(crate::footer::read_footer_with_page_index(input.storage, input.old_rel).await?);
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
    let changed: &[String] = match input.changed {
        Some(changed) => changed,
        None if input.updates.is_empty() => &[],
        None => {
            let fields = input.schema.fields();
            let candidates: Vec<usize> = (0..fields.len())
                .filter(|&c| !crate::schema::is_meta_column(fields[c].name()))
                .collect();
            let differing = crate::column_diff::differing_columns(
                input.storage,
                input.old_rel,
                footer.clone(),
                input.schema,
                input.incoming,
                input.updates,
                &candidates,
            )
            .await?;
            detected = differing
                .iter()
                .map(|&c| fields[c].name().clone())
                .collect();
            &detected
        }
    };
    let plan = SplicePlan::new(&input, changed);

    let mut file = SerializedFileWriter::new(
        Vec::new(),
        parquet_schema.root_schema_ptr(),
        Arc::new(props),
    )
    .map_err(|e| FormatError::parquet(input.new_rel, e))?;
    let factory = ArrowRowGroupWriterFactory::new(&file, input.schema.clone());
    let mut out = BufWriter::new(
        input.storage.store().clone(),
        input.storage.path(input.new_rel),
    );
    let mut done = Spliced::default();
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
        append_row_group(
            input.storage,
            input.old_rel,
            &mut file,
            &footer,
            g,
            writers,
            input.new_rel,
        )
        .await?;
        let bytes = std::mem::take(file.inner_mut());
        out.put(Bytes::from(bytes))
            .await
            .map_err(|e| FormatError::storage(input.storage.path(input.new_rel), e))?;
    }
    if !input.inserts.is_empty() {
        let inserted = crate::upsert::take_incoming(
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
        let bytes = std::mem::take(file.inner_mut());
        out.put(Bytes::from(bytes))
            .await
            .map_err(|e| FormatError::storage(input.storage.path(input.new_rel), e))?;
        extend_key_index(
            &mut key_index,
            inserted.column(2).as_string::<i32>(),
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
    let bytes = std::mem::take(file.inner_mut());
    let path = input.storage.path(input.new_rel);
    out.put(Bytes::from(bytes))
        .await
        .map_err(|e| FormatError::storage(&path, e))?;
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
    file: &mut SerializedFileWriter<Vec<u8>>,
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
    let keys = column(2)?.ok_or_else(|| FormatError::MissingColumn {
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
        let inc = crate::upsert::take_incoming(
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

/// Closes the re-encoded chunks of row group `g` and writes the row group: those chunks and the
/// copied ones, in column order, with the old chunks' statistics and page index. A copied chunk
/// is fetched from the old file just before it is appended.
async fn append_row_group(
    storage: &TableStorage,
    old_rel: &str,
    file: &mut SerializedFileWriter<Vec<u8>>,
    footer: &ParquetMetaData,
    g: usize,
    writers: Vec<Option<ArrowColumnWriter>>,
    rel: &str,
) -> Result<()> {
    let err = |e| FormatError::parquet(rel, e);
    let rg = footer.row_group(g);
    // the row group is assembled in memory: size the buffer once (re-encoded chunks come out
    // about as large as the old ones)
    file.inner_mut()
        .reserve(rg.compressed_size() as usize + (1 << 20));
    let mut row_group = file.next_row_group().map_err(err)?;
    for (c, writer) in writers.into_iter().enumerate() {
        match writer {
            Some(w) => w
                .close()
                .map_err(err)?
                .append_to_row_group(&mut row_group)
                .map_err(err)?,
            None => {
                let chunk = rg.column(c);
                let (start, len) = chunk.byte_range();
                let path = storage.path(old_rel);
                let bytes = storage
                    .store()
                    .get_range(&path, start..start + len)
                    .await
                    .map_err(|e| FormatError::storage(&path, e))?;
                let close = ColumnCloseResult {
                    bytes_written: chunk.compressed_size() as u64,
                    rows_written: rg.num_rows() as u64,
                    metadata: chunk.clone(),
                    bloom_filter: None,
                    column_index: footer.column_index().map(|ix| ix[g][c].clone()),
                    offset_index: footer.offset_index().map(|ix| ix[g][c].clone()),
                };
                let source = ChunkBytes {
                    parts: vec![(start, bytes)],
                };
                row_group.append_column(&source, close).map_err(err)?;
            }
        }
    }
    row_group.close().map_err(err)?;
    Ok(())
}

/// Column chunks fetched from the old file, addressed by their offsets in it.
struct ChunkBytes {
    parts: Vec<(u64, Bytes)>,
}

impl ChunkBytes {
    fn slice(&self, start: u64, len: Option<usize>) -> parquet::errors::Result<Bytes> {
        for (offset, bytes) in &self.parts {
            let end = offset + bytes.len() as u64;
            if (*offset..end).contains(&start) {
                let from = (start - offset) as usize;
                let to = len.map_or(bytes.len(), |l| from + l);
                if to <= bytes.len() {
                    return Ok(bytes.slice(from..to));
                }
            }
        }
        Err(parquet::errors::ParquetError::General(format!(
            "column chunk bytes at {start} were not fetched"
        )))
    }
}

impl Length for ChunkBytes {
    fn len(&self) -> u64 {
        self.parts
            .iter()
            .map(|(o, b)| o + b.len() as u64)
            .max()
            .unwrap_or(0)
    }
}

impl ChunkReader for ChunkBytes {
    type T = bytes::buf::Reader<Bytes>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        use bytes::Buf;
        Ok(self.slice(start, None)?.reader())
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        self.slice(start, Some(length))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Float64Array, Int64Array};
    use arrow::datatypes::{DataType, Field, Schema};
    use parquet::arrow::ArrowWriter;
    use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader};

    const ROWS: usize = 50_000;
    const OLD: &str = "p=1/old.parquet";
    const NEW: &str = "p=1/new.parquet";

    fn schema(note: DataType, id: DataType) -> SchemaRef {
        let mut fields: Vec<Field> = crate::meta::META_COLUMNS
            .iter()
            .map(|n| Field::new(*n, DataType::Utf8, true))
            .collect();
        fields.push(Field::new("id", id, true));
        fields.push(Field::new("note", note, true));
        fields.push(Field::new("price", DataType::Float64, true));
        fields.push(Field::new("ts", DataType::Int64, true));
        Arc::new(Schema::new(fields))
    }

    fn strings(f: impl Fn(usize) -> String, n: usize) -> ArrayRef {
        Arc::new(StringArray::from_iter_values((0..n).map(f)))
    }

    /// The stored file: 50,000 rows in row groups of 7,000 (the last one short), with a key index.
    fn write_old(dir: &std::path::Path, schema: &SchemaRef) -> RecordBatch {
        write_old_with(
            dir,
            schema,
            key_index((0..ROWS).map(|i| format!("k{i:05}"))),
        )
    }

    /// The stored file with `footer` as its key/value metadata.
    fn write_old_with(
        dir: &std::path::Path,
        schema: &SchemaRef,
        footer: Vec<KeyValue>,
    ) -> RecordBatch {
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                strings(|_| "100".into(), ROWS),
                strings(|i| format!("100_0_{i}"), ROWS),
                strings(|i| format!("k{i:05}"), ROWS),
                strings(|_| "p=1".into(), ROWS),
                strings(|_| "old.parquet".into(), ROWS),
                arrow::compute::cast(
                    &(Arc::new(Int64Array::from_iter_values(0..ROWS as i64)) as ArrayRef),
                    schema.field(5).data_type(),
                )
                .unwrap(),
                arrow::compute::cast(
                    &strings(|i| format!("note of row {i} {}", "x".repeat(i % 37)), ROWS),
                    schema.field(6).data_type(),
                )
                .unwrap(),
                Arc::new(Float64Array::from_iter_values((0..ROWS).map(|i| i as f64))),
                Arc::new(Int64Array::from_iter_values(
                    (0..ROWS).map(|i| i as i64 % 10),
                )),
            ],
        )
        .unwrap();
        let props = writer_properties(&BaseFileSettings::default())
            .unwrap()
            .into_builder()
            .set_max_row_group_row_count(Some(7_000))
            .set_key_value_metadata(Some(footer))
            .build();
        std::fs::create_dir_all(dir.join("p=1")).unwrap();
        let file = std::fs::File::create(dir.join(OLD)).unwrap();
        let mut writer = ArrowWriter::try_new(file, schema.clone(), Some(props)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        batch
    }

    /// The footer entries a writer gives a file of `keys` (in order).
    fn key_index(keys: impl Iterator<Item = String>) -> Vec<KeyValue> {
        let s = BaseFileSettings::default();
        let mut filter =
            HoodieBloomFilter::new_dynamic(s.bloom_num_entries, s.bloom_fpp, s.bloom_max_entries);
        let keys: Vec<String> = keys.collect();
        filter.add_all(keys.iter().map(String::as_str));
        let (min, max) = (keys.iter().min().unwrap(), keys.iter().max().unwrap());
        vec![
            KeyValue::new(bloom::BLOOM_FILTER_FOOTER_KEY.into(), filter.to_base64()),
            KeyValue::new(
                bloom::BLOOM_FILTER_TYPE_CODE_KEY.into(),
                BloomFilterType::DynamicV0.as_code().to_string(),
            ),
            KeyValue::new(bloom::MIN_RECORD_KEY_FOOTER_KEY.into(), min.clone()),
            KeyValue::new(bloom::MAX_RECORD_KEY_FOOTER_KEY.into(), max.clone()),
        ]
    }

    /// An UPDATE's change set for rows `rows`: new price and ts, the other data columns NULL
    /// (not carried), meta columns of the stored rows.
    fn change_set(schema: &SchemaRef, rows: &[usize], ts: i64) -> RecordBatch {
        let n = rows.len();
        let mut cols: Vec<ArrayRef> = vec![
            Arc::new(StringArray::new_null(n)),
            Arc::new(StringArray::new_null(n)),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|i| format!("k{i:05}")),
            )),
            strings(|_| "p=1".into(), n),
            strings(|_| "old.parquet".into(), n),
            arrow::array::new_null_array(schema.field(5).data_type(), n),
            arrow::array::new_null_array(schema.field(6).data_type(), n),
        ];
        cols.push(Arc::new(Float64Array::from_iter_values(
            rows.iter().map(|_| -1.0),
        )));
        cols.push(Arc::new(Int64Array::from_iter_values(
            rows.iter().map(|_| ts),
        )));
        RecordBatch::try_new(schema.clone(), cols).unwrap()
    }

    async fn splice(
        storage: &TableStorage,
        schema: &SchemaRef,
        incoming: &RecordBatch,
        ordering_idx: Option<usize>,
    ) -> Option<Spliced> {
        splice_with_inserts(storage, schema, incoming, ordering_idx, &[]).await
    }

    /// Splices with the incoming rows `inserts` new to the file group (the others update).
    async fn splice_with_inserts(
        storage: &TableStorage,
        schema: &SchemaRef,
        incoming: &RecordBatch,
        ordering_idx: Option<usize>,
        inserts: &[u32],
    ) -> Option<Spliced> {
        let keys = incoming.column(2).as_string::<i32>().clone();
        let updates: crate::tasks::FastMap<&str, u32> = (0..keys.len() as u32)
            .filter(|i| !inserts.contains(i))
            .map(|i| (keys.value(i as usize), i))
            .collect();
        let changed = ["price".to_string(), "ts".to_string()];
        let ordering = ordering_idx.map(|i| {
            crate::field_path::FieldPath::resolve(schema, schema.field(i).name()).unwrap()
        });
        let input = SpliceInput {
            storage,
            schema,
            incoming,
            incoming_keys: &keys,
            updates: &updates,
            ordering: ordering.as_ref(),
            changed: Some(&changed),
            inserts,
            settings: &BaseFileSettings::default(),
            old_rel: OLD,
            new_rel: NEW,
        };
        let meta = MetaValues {
            instant: "200",
            task_partition_id: 3,
            first_row: 0,
            file_name: "new.parquet",
            partition_path: "p=1",
        };
        splice_rewrite(input, meta).await.unwrap()
    }

    fn read(dir: &std::path::Path, rel: &str) -> (ParquetMetaData, RecordBatch) {
        let bytes = Bytes::from(std::fs::read(dir.join(rel)).unwrap());
        let meta = ParquetMetaDataReader::new()
            .with_page_index_policy(PageIndexPolicy::Required)
            .parse_and_finish(&bytes)
            .unwrap();
        let reader =
            parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(bytes, 100_000)
                .unwrap();
        let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
        let batch = arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
        (meta, batch)
    }

    fn chunk_bytes(
        dir: &std::path::Path,
        rel: &str,
        meta: &ParquetMetaData,
        g: usize,
        c: usize,
    ) -> Vec<u8> {
        let (start, len) = meta.row_group(g).column(c).byte_range();
        std::fs::read(dir.join(rel)).unwrap()[start as usize..(start + len) as usize].to_vec()
    }

    #[tokio::test]
    async fn splice_reencodes_only_changed_and_restamped_columns() {
        let tmp = tempfile::tempdir().unwrap();
        let storage = TableStorage::local(tmp.path()).unwrap();
        let schema = schema(DataType::Utf8, DataType::Int64);
        let old = write_old(tmp.path(), &schema);
        // rows at row group and batch edges: 6999 | 7000, 16383 | 16384 (a read batch), the last
        let rows = [0usize, 6_999, 7_000, 16_383, 16_384, 49_999];
        let incoming = change_set(&schema, &rows, 5);
        let done = splice(&storage, &schema, &incoming, None)
            .await
            .expect("spliced");
        assert_eq!((done.rows, done.updated, done.dropped), (ROWS as u64, 6, 0));

        let (old_meta, _) = read(tmp.path(), OLD);
        let (new_meta, new) = read(tmp.path(), NEW);
        assert_eq!(
            done.size,
            std::fs::metadata(tmp.path().join(NEW)).unwrap().len()
        );
        assert_eq!(new_meta.num_row_groups(), 8);
        for g in 0..8 {
            assert_eq!(
                new_meta.row_group(g).num_rows(),
                old_meta.row_group(g).num_rows()
            );
            // record key, partition path, id and note are copied byte for byte
            for c in [2, 3, 5, 6] {
                assert_eq!(
                    chunk_bytes(tmp.path(), NEW, &new_meta, g, c),
                    chunk_bytes(tmp.path(), OLD, &old_meta, g, c),
                    "row group {g} column {c}"
                );
            }
        }
        // a page index on every column, copied ones included
        assert!(new_meta
            .offset_index()
            .is_some_and(|ix| ix.iter().all(|rg| rg.len() == 9)));
        for key in KEY_INDEX_ENTRIES {
            let old_value = crate::footer::footer_value(&old_meta, key);
            assert!(old_value.is_some());
            assert_eq!(
                crate::footer::footer_value(&new_meta, key),
                old_value,
                "{key}"
            );
        }

        let col = |b: &RecordBatch, c: usize| b.column(c).clone();
        let s = |a: &ArrayRef, i: usize| a.as_string::<i32>().value(i).to_string();
        let mut seq = 0;
        for i in 0..ROWS {
            let updated = rows.contains(&i);
            let price = col(&new, 7);
            let price = price
                .as_primitive::<arrow::datatypes::Float64Type>()
                .value(i);
            assert_eq!(price, if updated { -1.0 } else { i as f64 }, "row {i}");
            assert_eq!(s(&col(&new, 6), i), s(&col(&old, 6), i));
            assert_eq!(s(&col(&new, 2), i), s(&col(&old, 2), i));
            assert_eq!(s(&col(&new, 4), i), "new.parquet");
            if updated {
                assert_eq!(s(&col(&new, 0), i), "200");
                assert_eq!(s(&col(&new, 1), i), format!("200_3_{seq}"));
                seq += 1;
            } else {
                assert_eq!(s(&col(&new, 0), i), "100");
                assert_eq!(s(&col(&new, 1), i), s(&col(&old, 1), i));
            }
        }
    }

    #[tokio::test]
    async fn event_time_ordering_keeps_newer_stored_rows() {
        let tmp = tempfile::tempdir().unwrap();
        let storage = TableStorage::local(tmp.path()).unwrap();
        let schema = schema(DataType::Utf8, DataType::Int64);
        write_old(tmp.path(), &schema);
        // stored ts is i % 10: rows 3 and 9 hold 3 and 9, the incoming 5 wins only over 3
        let incoming = change_set(&schema, &[3, 9], 5);
        let done = splice(&storage, &schema, &incoming, Some(8))
            .await
            .expect("spliced");
        assert_eq!((done.updated, done.dropped), (1, 1));
        let (_, new) = read(tmp.path(), NEW);
        let ts = new.column(8).as_primitive::<arrow::datatypes::Int64Type>();
        assert_eq!((ts.value(3), ts.value(9)), (5, 9));
    }

    #[tokio::test]
    async fn a_file_of_another_parquet_schema_is_not_spliced() {
        let tmp = tempfile::tempdir().unwrap();
        let storage = TableStorage::local(tmp.path()).unwrap();
        // id stored as INT32: a copied chunk would not be what the table's INT64 writer encodes
        write_old(tmp.path(), &schema(DataType::Utf8, DataType::Int32));
        let table = schema(DataType::Utf8, DataType::Int64);
        let incoming = change_set(&table, &[1], 5);
        assert!(splice(&storage, &table, &incoming, None).await.is_none());
        assert!(!tmp.path().join(NEW).exists(), "nothing is written");
    }

    #[tokio::test]
    async fn an_arrow_type_hint_that_differs_still_splices() {
        let tmp = tempfile::tempdir().unwrap();
        let storage = TableStorage::local(tmp.path()).unwrap();
        // LargeUtf8 and Utf8 are the same Parquet column: the chunk is copied as is
        write_old(tmp.path(), &schema(DataType::LargeUtf8, DataType::Int64));
        let table = schema(DataType::Utf8, DataType::Int64);
        let incoming = change_set(&table, &[1], 5);
        let done = splice(&storage, &table, &incoming, None)
            .await
            .expect("spliced");
        assert_eq!(done.updated, 1);
        let (_, new) = read(tmp.path(), NEW);
        assert_eq!(new.num_rows(), ROWS);
    }

    #[tokio::test]
    async fn inserts_follow_as_a_row_group_and_extend_the_key_index() {
        let tmp = tempfile::tempdir().unwrap();
        let storage = TableStorage::local(tmp.path()).unwrap();
        let schema = schema(DataType::Utf8, DataType::Int64);
        write_old(tmp.path(), &schema);
        // rows 5 and 7 update; "k99999" and "a-first" are new keys (one below the old minimum)
        let mut incoming = change_set(&schema, &[5, 7, 99_999, 0], 5);
        let mut keys: Vec<ArrayRef> = incoming.columns().to_vec();
        keys[2] = Arc::new(StringArray::from(vec![
            "k00005", "k00007", "k99999", "a-first",
        ]));
        keys[6] = strings(|i| format!("new note {i}"), 4);
        incoming = RecordBatch::try_new(schema.clone(), keys).unwrap();
        let done = splice_with_inserts(&storage, &schema, &incoming, None, &[2, 3])
            .await
            .expect("spliced");
        assert_eq!(
            (done.rows, done.updated, done.inserted),
            (ROWS as u64 + 2, 2, 2)
        );

        let (old_meta, _) = read(tmp.path(), OLD);
        let (new_meta, new) = read(tmp.path(), NEW);
        assert_eq!(new_meta.num_row_groups(), 9);
        assert_eq!(new_meta.row_group(8).num_rows(), 2);
        assert_eq!(
            chunk_bytes(tmp.path(), NEW, &new_meta, 3, 6),
            chunk_bytes(tmp.path(), OLD, &old_meta, 3, 6)
        );
        let s = |c: usize, i: usize| new.column(c).as_string::<i32>().value(i).to_string();
        assert_eq!(
            (s(2, ROWS), s(6, ROWS)),
            ("k99999".to_string(), "new note 2".to_string())
        );
        assert_eq!(
            (s(1, ROWS), s(1, ROWS + 1)),
            ("200_3_2".to_string(), "200_3_3".to_string())
        );
        // the key index is the one a writer builds from every key in file order
        let all = (0..ROWS)
            .map(|i| format!("k{i:05}"))
            .chain(["k99999".into(), "a-first".into()]);
        for kv in key_index(all) {
            let got = crate::footer::footer_value(&new_meta, &kv.key);
            assert_eq!(got, kv.value.as_deref(), "{}", kv.key);
        }
    }

    #[tokio::test]
    async fn a_file_without_a_resumable_key_index_is_not_spliced_where_it_needs_one() {
        let tmp = tempfile::tempdir().unwrap();
        let storage = TableStorage::local(tmp.path()).unwrap();
        let schema = schema(DataType::Utf8, DataType::Int64);
        let keys = || (0..ROWS).map(|i| format!("k{i:05}"));
        let updates = change_set(&schema, &[5], 5);
        let with_insert = change_set(&schema, &[5, 0], 5);
        let mut cols = with_insert.columns().to_vec();
        cols[2] = Arc::new(StringArray::from(vec!["k00005", "k99999"]));
        let with_insert = RecordBatch::try_new(schema.clone(), cols).unwrap();

        // no key index at all: nothing to carry over
        write_old_with(tmp.path(), &schema, vec![]);
        assert!(splice(&storage, &schema, &updates, None).await.is_none());
        assert!(!tmp.path().join(NEW).exists(), "nothing is written");

        // a SIMPLE bloom filter carries over unchanged, but cannot take the inserted keys
        let mut simple = key_index(keys());
        simple[1].value = Some(BloomFilterType::Simple.as_code().to_string());
        write_old_with(tmp.path(), &schema, simple);
        let inserting = splice_with_inserts(&storage, &schema, &with_insert, None, &[1]);
        assert!(inserting.await.is_none());
        assert!(!tmp.path().join(NEW).exists(), "nothing is written");
        let done = splice(&storage, &schema, &updates, None)
            .await
            .expect("spliced");
        assert_eq!(done.updated, 1);
    }
}
