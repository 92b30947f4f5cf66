//! The splice of one old base file into a new one, whatever decides its rows (a write's
//! updates, or a compaction's logs): the old row groups in order, each with its re-encoded
//! chunks and the ones copied byte for byte, then the appended rows as a row group of their
//! own, and the old key index carried over and extended by the appended keys.

use super::*;

/// The old and the new file of a splice.
pub(crate) struct SpliceFiles<'a> {
    /// The table's storage.
    pub storage: &'a TableStorage,
    /// The table schema (meta columns first).
    pub schema: &'a SchemaRef,
    /// Base file settings (the re-encoded chunks use them).
    pub settings: &'a FileSpec,
    /// The old base file.
    pub old_rel: &'a str,
    /// The new base file.
    pub new_rel: &'a str,
}

/// An old file that can be spliced, with what the new file is written with.
pub(crate) struct Spliceable {
    /// The old file's footer, with its page index.
    pub footer: Arc<ParquetMetaData>,
    props: parquet::file::properties::WriterProperties,
    parquet_schema: parquet::schema::types::SchemaDescriptor,
    key_index: Vec<(&'static str, String)>,
}

/// Footer entries of the key index, carried over unchanged.
pub(super) const KEY_INDEX_ENTRIES: [&str; 4] = [
    bloom::BLOOM_FILTER_FOOTER_KEY,
    bloom::BLOOM_FILTER_TYPE_CODE_KEY,
    bloom::MIN_RECORD_KEY_FOOTER_KEY,
    bloom::MAX_RECORD_KEY_FOOTER_KEY,
];

impl Spliceable {
    /// The old file of `files` if it can be spliced: flat columns only, its Parquet schema
    /// exactly the one this writer writes (a copied chunk must be what this writer would have
    /// encoded for the column's type), a page index on every column or none, and a key index
    /// in the footer. `None` otherwise: the caller then rewrites the file whole.
    pub(crate) async fn open(files: &SpliceFiles<'_>) -> Result<Option<Self>> {
        let footer =
            crate::footer::read_footer_with_page_index(files.storage, files.old_rel).await?;
        let mut props =
            plain_where_dictionaries_overflowed(writer_properties(files.settings)?, &footer);
        add_encoded_arrow_schema_to_metadata(files.schema, &mut props);
        let parquet_schema = ArrowSchemaConverter::new()
            .with_coerce_types(props.coerce_types())
            .convert(files.schema)
            .map_err(|e| FormatError::parquet(files.new_rel, e))?;
        let Some(key_index) = compatible(files.schema, &footer, &parquet_schema) else {
            return Ok(None);
        };
        Ok(Some(Self {
            footer,
            props,
            parquet_schema,
            key_index,
        }))
    }

    /// Whether keys can be added to the carried key index: its bloom filter is a
    /// `DYNAMIC_V0` one, which can be resumed.
    pub(crate) fn extendable(&self) -> bool {
        let dynamic = BloomFilterType::DynamicV0.as_code().to_string();
        self.key_index
            .iter()
            .any(|(k, v)| *k == bloom::BLOOM_FILTER_TYPE_CODE_KEY && *v == dynamic)
    }
}

/// `props` with the dictionary turned off for each column whose every old chunk fell back from
/// dictionary to plain encoding (its distinct values too many for a dictionary page): the
/// re-encoded chunk, or the appended rows' chunk, starts plain, as the old one ended up, instead
/// of interning values into a dictionary that overflows again.
fn plain_where_dictionaries_overflowed(
    props: parquet::file::properties::WriterProperties,
    footer: &ParquetMetaData,
) -> parquet::file::properties::WriterProperties {
    let descr = footer.file_metadata().schema_descr();
    let mut builder = props.into_builder();
    for c in 0..descr.num_columns() {
        let overflowed = footer.num_row_groups() > 0
            && footer.row_groups().iter().all(|rg| {
                let chunk = rg.column(c);
                chunk.dictionary_page_offset().is_some()
                    && chunk
                        .page_encoding_stats_mask()
                        .is_some_and(|m| m.is_set(parquet::basic::Encoding::PLAIN))
            });
        if overflowed {
            builder = builder.set_column_dictionary_enabled(descr.column(c).path().clone(), false);
        }
    }
    builder.build()
}

/// What decides the rows of a splice.
pub(crate) trait SpliceRows {
    /// The re-encoded columns of one batch of the old file's decoded columns (see
    /// [`SplicePlan`]), in table order, one row per old row; copied columns get a placeholder.
    fn merge(
        &mut self,
        plan: &SplicePlan,
        old: &RecordBatch,
    ) -> Result<Vec<(arrow::datatypes::FieldRef, ArrayRef)>>;

    /// The rows to append after the old ones (in the table schema, meta columns filled), if
    /// any; asked once every old row went through [`SpliceRows::merge`].
    fn appended(&mut self) -> Result<Option<RecordBatch>>;
}

/// Which columns a splice decodes and which it encodes again.
pub(crate) struct SplicePlan {
    /// Leaf (= column) indices read from the old file, in file order.
    decoded: Vec<usize>,
    /// Per table column: encoded again (true) or copied (false).
    pub(crate) reencoded: Vec<bool>,
    /// Per table column: its position among the decoded columns.
    decoded_pos: Vec<Option<usize>>,
}

impl SplicePlan {
    /// Re-encodes the `changed` columns and the meta columns a rewrite restamps (commit time,
    /// sequence number, file name); decodes those (but the file name, new on every row) and
    /// the columns in `read`.
    pub(crate) fn new(schema: &SchemaRef, changed: &[String], read: &[&str]) -> Self {
        let fields = schema.fields();
        let mut decoded = Vec::new();
        let mut reencoded = Vec::with_capacity(fields.len());
        let mut decoded_pos = Vec::with_capacity(fields.len());
        for (c, f) in fields.iter().enumerate() {
            let name = f.name().as_str();
            let changed = changed.iter().any(|c| c == name);
            let restamped = name == COMMIT_TIME || name == COMMIT_SEQNO || name == FILE_NAME;
            reencoded.push(changed || restamped);
            let decode =
                changed || name == COMMIT_TIME || name == COMMIT_SEQNO || read.contains(&name);
            decoded_pos.push(decode.then(|| {
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

    /// Decoded table column `c` of `old` in the table's type (the file's Arrow type hint may
    /// differ, e.g. a LargeUtf8 for a string: the Parquet column, and so a copied chunk, is
    /// the same); `None` if the plan does not decode it.
    pub(crate) fn column(
        &self,
        schema: &SchemaRef,
        old: &RecordBatch,
        c: usize,
    ) -> Result<Option<ArrayRef>> {
        let Some(p) = self.decoded_pos[c] else {
            return Ok(None);
        };
        let col = old.column(p);
        let want = schema.field(c).data_type();
        Ok(Some(if col.data_type() == want {
            col.clone()
        } else {
            arrow::compute::cast(col, want)?
        }))
    }

    /// The re-encoded columns of the decoded batch `old` in table order, placeholders for the
    /// copied ones: `_hoodie_file_name` is `file_name` on every row, every other column the
    /// stored values but where `replaced` = (rows, positions) says otherwise (per old row,
    /// `(0, r)` stored row `r`, `(1, i)` row `i` of rows, which are in the table schema).
    pub(crate) fn columns(
        &self,
        schema: &SchemaRef,
        old: &RecordBatch,
        file_name: &str,
        replaced: Option<(&RecordBatch, &[(usize, usize)])>,
    ) -> Result<Vec<(arrow::datatypes::FieldRef, ArrayRef)>> {
        let mut out = Vec::with_capacity(schema.fields().len());
        for (c, field) in schema.fields().iter().enumerate() {
            let col: ArrayRef = if !self.reencoded[c] {
                arrow::array::new_null_array(field.data_type(), 0)
            } else if field.name() == FILE_NAME {
                Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
                    file_name,
                    old.num_rows(),
                )))
            } else {
                let stored = self.decoded(schema, old, c)?;
                match replaced {
                    None => stored,
                    Some((rows, p)) => interleave(&[stored.as_ref(), rows.column(c).as_ref()], p)?,
                }
            };
            out.push((field.clone(), col));
        }
        Ok(out)
    }

    /// [`SplicePlan::column`] of a column the plan decodes.
    pub(crate) fn decoded(
        &self,
        schema: &SchemaRef,
        old: &RecordBatch,
        c: usize,
    ) -> Result<ArrayRef> {
        self.column(schema, old, c)?
            .ok_or_else(|| FormatError::MissingColumn {
                column: schema.field(c).name().clone(),
            })
    }
}

/// What a splice wrote.
pub(crate) struct SplicedFile {
    /// Bytes of the new file.
    pub size: u64,
    /// Rows of the new file.
    pub rows: u64,
    /// Rows appended after the old ones.
    pub appended: u64,
}

/// Writes the new file of `files` from the old one, `rows` deciding each row, the `plan`'s
/// columns re-encoded and every other chunk copied. Appended rows need a key index that can
/// be extended ([`Spliceable::extendable`]).
pub(crate) async fn splice_file(
    files: &SpliceFiles<'_>,
    old: Spliceable,
    plan: &SplicePlan,
    rows: &mut (dyn SpliceRows + Send),
) -> Result<SplicedFile> {
    let Spliceable {
        footer,
        props,
        parquet_schema,
        mut key_index,
    } = old;
    let per_group = rows_per_group(
        &footer,
        files.settings.block_size,
        props.max_row_group_row_count(),
    );
    let unsent = Pending::default();
    let mut file = SerializedFileWriter::new(
        unsent.clone(),
        parquet_schema.root_schema_ptr(),
        Arc::new(props),
    )
    .map_err(|e| FormatError::parquet(files.new_rel, e))?;
    let factory = ArrowRowGroupWriterFactory::new(&file, files.schema.clone());
    let mut out = Upload::new(files.storage, files.new_rel);
    let mut done = SplicedFile {
        size: 0,
        rows: 0,
        appended: 0,
    };
    let stream = crate::base_file::stream_leaves(
        files.storage,
        files.old_rel,
        footer.clone(),
        plan.decoded.clone(),
        None,
    )?;
    let mut stream = std::pin::pin!(stream);
    let old_file = OldFile {
        storage: files.storage,
        rel: files.old_rel,
        footer: &footer,
    };
    let mut old_rows = OldRows {
        stream: &mut stream,
        pending: None,
        rel: files.old_rel,
    };
    for g in 0..footer.num_row_groups() {
        let mut writers = column_writers(&factory, g, &plan.reencoded, files.new_rel)?;
        let mut left = footer.row_group(g).num_rows() as usize;
        while left > 0 {
            let batch = old_rows.next_up_to(left).await?;
            left -= batch.num_rows();
            write_leaves(&mut writers, &rows.merge(plan, &batch)?, files.new_rel)?;
            done.rows += batch.num_rows() as u64;
        }
        append_row_group(
            &old_file,
            &mut file,
            g,
            writers,
            files.new_rel,
            &unsent,
            &mut out,
        )
        .await?;
    }
    if let Some(appended) = rows.appended()?.filter(|b| b.num_rows() > 0) {
        // the appended rows as row groups of their own, after the old ones
        let starts = (0..appended.num_rows()).step_by(per_group);
        for (g, at) in (footer.num_row_groups()..).zip(starts) {
            let part = appended.slice(at, per_group.min(appended.num_rows() - at));
            append_inserts(&mut file, &factory, g, &part, files.new_rel)?;
            unsent.upload(&mut out, &old_file, files.new_rel).await?;
        }
        let keys = crate::meta::record_keys(&appended);
        let max_entries = files.settings.bloom_max_entries;
        extend_key_index(&mut key_index, keys, max_entries, files.old_rel)?;
        done.rows += appended.num_rows() as u64;
        done.appended = appended.num_rows() as u64;
    }
    for (key, value) in key_index {
        file.append_key_value_metadata(KeyValue::new(key.to_string(), value));
    }
    file.finish()
        .map_err(|e| FormatError::parquet(files.new_rel, e))?;
    done.size = file.bytes_written() as u64;
    unsent.upload(&mut out, &old_file, files.new_rel).await?;
    out.shutdown().await.map_err(|e| {
        FormatError::parquet(
            files.new_rel,
            parquet::errors::ParquetError::External(Box::new(e)),
        )
    })?;
    Ok(done)
}

/// The old file's rows, in batches cut at its row groups' ends.
struct OldRows<'a, S> {
    stream: S,
    /// The tail of a batch that reached into the next row group.
    pending: Option<RecordBatch>,
    /// The old file, for messages.
    rel: &'a str,
}

impl<S: futures::Stream<Item = Result<RecordBatch>> + Unpin> OldRows<'_, S> {
    /// The next rows of the old file, at most `left` of them.
    async fn next_up_to(&mut self, left: usize) -> Result<RecordBatch> {
        let batch = match self.pending.take() {
            Some(b) => b,
            None => match self.stream.next().await {
                Some(b) => b?,
                None => {
                    return Err(FormatError::Corrupt {
                        path: self.rel.to_string(),
                        reason: "fewer rows than its footer says".into(),
                    })
                }
            },
        };
        if batch.num_rows() <= left {
            return Ok(batch);
        }
        self.pending = Some(batch.slice(left, batch.num_rows() - left));
        Ok(batch.slice(0, left))
    }
}

/// Writes `columns` (one batch, in table order) through the writers of the re-encoded
/// columns (`None`: a column whose chunk is copied).
fn write_leaves(
    writers: &mut [Option<ArrowColumnWriter>],
    columns: &[(arrow::datatypes::FieldRef, ArrayRef)],
    rel: &str,
) -> Result<()> {
    for (writer, (field, col)) in writers.iter_mut().zip(columns) {
        let Some(writer) = writer else { continue };
        for leaf in compute_leaves(field, col).map_err(|e| FormatError::parquet(rel, e))? {
            writer
                .write(&leaf)
                .map_err(|e| FormatError::parquet(rel, e))?;
        }
    }
    Ok(())
}

/// How many appended rows make one row group: the block size over the old file's encoded
/// bytes a row (the rows of a file group are alike), within the writer's cap on rows.
pub(super) fn rows_per_group(
    footer: &ParquetMetaData,
    block_size: u64,
    row_cap: Option<usize>,
) -> usize {
    let rows = footer.file_metadata().num_rows().max(0) as u128;
    let bytes: i64 = footer
        .row_groups()
        .iter()
        .map(|g| g.compressed_size())
        .sum();
    let by_size = match bytes {
        b if b > 0 && rows > 0 => (block_size as u128 * rows / b as u128).min(usize::MAX as u128),
        _ => usize::MAX as u128,
    } as usize;
    by_size.min(row_cap.unwrap_or(usize::MAX)).max(1)
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
