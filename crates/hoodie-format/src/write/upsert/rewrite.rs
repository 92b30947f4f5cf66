//! The rewrite of one file group by a keyed write: its stored records merged with the
//! incoming ones routed to it (updates, deletes, inserts), streamed batch by batch.

use super::*;
use crate::precedence::incoming_wins;

/// What one rewrite did.
#[derive(Default)]
pub(super) struct ApplyCounts {
    pub(super) updated: u64,
    pub(super) deleted: u64,
    pub(super) inserted: u64,
    pub(super) dropped: u64,
}

impl ApplyCounts {
    /// Adds these counts to a writer's row counts.
    pub(super) fn add_to(&self, rows: &mut crate::write::status::RowCounts) {
        rows.updated += self.updated;
        rows.deleted += self.deleted;
        rows.inserted += self.inserted;
        rows.dropped += self.dropped;
    }
}

/// Rewrites one file group: old records merged with the incoming ones routed to it. Runs on
/// its own task and streams the old base file batch by batch, so it holds one batch of the old
/// file (plus the encoder's open row group) at a time.
pub(super) async fn rewrite_file_group(
    storage: &crate::storage::TableStorage,
    schema: &SchemaRef,
    job: RewriteJob,
    options: &WriteSpec,
    instant: &str,
) -> Result<(WriteStat, ApplyCounts)> {
    let RewriteJob {
        slice,
        base_path,
        bucket,
        incoming,
        keys,
        writer,
        file_name,
        task,
    } = job;
    let by_key = incoming_by_key(&bucket, &keys);
    let ordering_path = match (&options.ordering_field, options.merge_mode) {
        (Some(f), MergeMode::EventTimeOrdering) => Some(FieldPath::resolve(schema, f)?),
        _ => None,
    };
    let token = write_token(task);
    let mut changes = options
        .cdc
        .as_ref()
        .map(|spec| crate::write::cdc_log::RewriteChanges {
            storage,
            schema,
            spec,
            instant,
            old_rel: &base_path,
            dropped: &options.dropped_columns,
            incoming: &incoming,
            incoming_keys: &keys,
            by_key: &by_key,
            inserts: &bucket.inserts,
            ordering: ordering_path.as_ref(),
            changed: options.changed_columns.as_deref(),
            partition_path: &slice.partition_path,
            file_id: &slice.file_id,
            token: &token,
            stored: None,
        });
    let meta = MetaValues {
        instant,
        task_partition_id: task,
        first_row: 0,
        file_name: &file_name,
        partition_path: &slice.partition_path,
    };
    let merge = BatchRewrite {
        schema,
        incoming: &incoming,
        incoming_keys: &keys,
        by_key: &by_key,
        ordering: ordering_path.as_ref(),
        changed: options.changed_columns.as_deref(),
    };
    let group = GroupRewrite {
        storage,
        options,
        base_path: &base_path,
        bucket: &bucket,
        merge,
    };
    let new_rel = writer.rel_path().to_string();
    let (written, counts) = match group
        .splice(&new_rel, meta.clone(), changes.is_some())
        .await?
    {
        Some((written, counts, stored)) => {
            if let Some(c) = changes.as_mut() {
                c.stored = stored;
            }
            (written, counts)
        }
        None => group.stream(writer, meta).await?,
    };
    let mut stat = rewrite_stat(&slice, &written, &counts);
    stat.cdc_stats = log_changes(&changes, &written, &counts).await?;
    Ok((stat, counts))
}

/// The incoming row of each key a rewrite updates or deletes, and whether it deletes.
fn incoming_by_key<'a>(bucket: &Bucket, keys: &'a StringArray) -> FastMap<&'a str, (u32, bool)> {
    let mut by_key = FastMap::default();
    for &i in &bucket.updates {
        by_key.insert(keys.value(i as usize), (i, false));
    }
    for &i in &bucket.deletes {
        by_key.insert(keys.value(i as usize), (i, true));
    }
    by_key
}

/// One file group's rewrite: where its old file is, what it takes, and how its batches merge.
struct GroupRewrite<'a> {
    storage: &'a crate::storage::TableStorage,
    options: &'a WriteSpec,
    base_path: &'a str,
    bucket: &'a Bucket,
    merge: BatchRewrite<'a>,
}

/// A rewrite's file and counts, and the stored rows a CDC log needs (splice only).
type SplicedGroup = (
    crate::write::writer::WrittenFile,
    ApplyCounts,
    Option<Vec<RecordBatch>>,
);

impl GroupRewrite<'_> {
    /// The rewrite as a splice into `new_rel`, when it applies: a file group that takes no deletes keeps its
    /// row groups, only the columns that change are encoded again (those the statement
    /// assigns, else those whose values differ), and its inserts follow as a row group of
    /// their own. (The splice copies column chunks by their place in the table schema, which
    /// a file without its partition columns does not keep.) None: rewrite it row by row.
    async fn splice(
        &self,
        new_rel: &str,
        meta: MetaValues<'_>,
        keep_stored: bool,
    ) -> Result<Option<SplicedGroup>> {
        let (bucket, options, schema) = (self.bucket, self.options, self.merge.schema);
        if !bucket.deletes.is_empty()
            || !options.dropped_columns.is_empty()
            || (bucket.updates.is_empty() && bucket.inserts.is_empty())
        {
            return Ok(None);
        }
        let data_columns = schema
            .fields()
            .iter()
            .filter(|f| !crate::schema::is_meta_column(f.name()))
            .count();
        let changed = options
            .changed_columns
            .as_deref()
            .filter(|c| c.len() < data_columns);
        let updates: FastMap<&str, u32> =
            self.merge.by_key.iter().map(|(k, v)| (*k, v.0)).collect();
        let input = crate::write::splice::SpliceInput {
            storage: self.storage,
            schema,
            incoming: self.merge.incoming,
            incoming_keys: self.merge.incoming_keys,
            updates: &updates,
            inserts: &bucket.inserts,
            ordering: self.merge.ordering,
            changed,
            settings: &options.files,
            old_rel: self.base_path,
            new_rel,
            keep_stored,
        };
        let Some(mut done) = crate::write::splice::splice_rewrite(input, meta).await? else {
            return Ok(None);
        };
        let counts = ApplyCounts {
            updated: done.updated,
            dropped: done.dropped,
            inserted: done.inserted,
            deleted: 0,
        };
        let written = crate::write::writer::WrittenFile {
            rel_path: new_rel.to_string(),
            size: done.size,
            rows: done.rows,
        };
        Ok(Some((written, counts, done.stored.take())))
    }

    /// The rewrite row by row: the old file decoded on its own task, a couple of batches
    /// ahead (decoding overlaps merging and encoding, which matters when one file group is
    /// all there is to rewrite), each batch merged, then the inserts.
    async fn stream(
        &self,
        mut writer: crate::write::writer::BaseFileWriter,
        mut meta: MetaValues<'_>,
    ) -> Result<(crate::write::writer::WrittenFile, ApplyCounts)> {
        use futures::StreamExt;
        let (bucket, options, merge) = (self.bucket, self.options, &self.merge);
        let (mut old_stream, footer) = stream_base_file(
            self.storage,
            self.base_path,
            merge.schema,
            &options.dropped_columns,
        )
        .await?;
        // every stored key stays, in order, when nothing is deleted: the old file's bloom
        // filter and key range only need the inserts added (the same filter, bit for bit, as
        // rehashing all)
        let known_keys =
            bucket.deletes.is_empty() && resume_key_index(&mut writer, &footer, options);
        let (tx, mut rx) = tokio::sync::mpsc::channel::<Result<RecordBatch>>(2);
        let reader = tokio::spawn(async move {
            while let Some(b) = old_stream.next().await {
                let failed = b.is_err();
                if tx.send(b).await.is_err() || failed {
                    break;
                }
            }
        });
        let _stop_reader = AbortOnDrop(reader);
        let mut counts = ApplyCounts::default();
        while let Some(old) = rx.recv().await {
            let Some(merged) = merge.merge(&old?, &mut meta, &mut counts)? else {
                continue;
            };
            if known_keys {
                writer.write_known_keys(&merged).await?;
            } else {
                writer.write(&merged).await?;
            }
        }
        if !bucket.inserts.is_empty() {
            let inc = crate::meta::take_with_meta(
                merge.incoming,
                merge.incoming_keys,
                &bucket.inserts,
                &meta,
                merge.schema,
            )?;
            writer.write(&inc).await?;
        }
        let written = writer.close().await?;
        counts.inserted = bucket.inserts.len() as u64;
        Ok((written, counts))
    }
}

/// How a batch of a file group's stored rows merges with the incoming rows routed to it.
struct BatchRewrite<'a> {
    /// The table's columns (meta columns first).
    schema: &'a SchemaRef,
    incoming: &'a RecordBatch,
    incoming_keys: &'a StringArray,
    /// The incoming row of each key updated or deleted, and whether it deletes.
    by_key: &'a FastMap<&'a str, (u32, bool)>,
    /// The ordering field under event-time ordering.
    ordering: Option<&'a FieldPath>,
    /// The data columns a change set assigns (the others keep their stored values).
    changed: Option<&'a [String]>,
}

impl BatchRewrite<'_> {
    /// `old` (stored rows, in file order) with each updated record replaced by its incoming
    /// row where that wins ([`incoming_wins`]), deleted ones left out; kept rows keep their
    /// meta columns but name the new file, incoming rows get fresh ones from `meta` (its
    /// sequence numbers advance). None when no row stays.
    fn merge(
        &self,
        old: &RecordBatch,
        meta: &mut MetaValues<'_>,
        counts: &mut ApplyCounts,
    ) -> Result<Option<RecordBatch>> {
        let old_keys = crate::meta::record_keys(old);
        let ordering = self
            .ordering
            .map(|path| -> Result<_> {
                Ok(make_comparator(
                    path.values(self.incoming.column(path.top()))?.as_ref(),
                    path.values(old.column(path.top()))?.as_ref(),
                    SortOptions::default(),
                )?)
            })
            .transpose()?;
        // (source, row): 0 = old, 1 = incoming (position among this batch's incoming rows)
        let mut positions: Vec<(usize, usize)> = Vec::with_capacity(old.num_rows());
        // the stored row behind each position (an update replaces one)
        let mut stored_rows: Vec<u32> = Vec::with_capacity(old.num_rows());
        let mut incoming_idx: Vec<u32> = Vec::new();
        for r in 0..old.num_rows() {
            match self.by_key.get(old_keys.value(r)) {
                None => positions.push((0, r)),
                Some(&(_, true)) => {
                    counts.deleted += 1;
                    continue;
                }
                Some(&(i, false)) if incoming_wins(ordering.as_ref(), i as usize, r) => {
                    positions.push((1, incoming_idx.len()));
                    incoming_idx.push(i);
                    counts.updated += 1;
                }
                Some(_) => {
                    positions.push((0, r));
                    counts.dropped += 1;
                }
            }
            stored_rows.push(r as u32);
        }
        if positions.is_empty() {
            return Ok(None);
        }
        let old_renamed = set_column(
            old,
            FILE_NAME,
            Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
                meta.file_name,
                old.num_rows(),
            ))),
        )?;
        if incoming_idx.is_empty() {
            if positions.len() == old.num_rows() {
                return Ok(Some(old_renamed));
            }
            let keep: Vec<u32> = positions.iter().map(|p| p.1 as u32).collect();
            return Ok(Some(take_record_batch(
                &old_renamed,
                &UInt32Array::from(keep),
            )?));
        }
        let inc = crate::meta::take_with_meta(
            self.incoming,
            self.incoming_keys,
            &incoming_idx,
            meta,
            self.schema,
        )?;
        meta.first_row += incoming_idx.len() as u64;
        let merged = interleave_record_batch(&[&old_renamed, &inc], &positions)?;
        Ok(Some(match self.changed {
            Some(changed) => keep_stored_columns(&merged, &old_renamed, &stored_rows, changed)?,
            None => merged,
        }))
    }
}

/// A CDC table's `.cdc` log of a rewrite, and the write stat's `cdcStats` naming it (`None`
/// when the table logs no changes, or Hudi would log none for this rewrite).
async fn log_changes(
    changes: &Option<crate::write::cdc_log::RewriteChanges<'_>>,
    written: &crate::write::writer::WrittenFile,
    counts: &ApplyCounts,
) -> Result<Option<BTreeMap<String, i64>>> {
    match changes {
        Some(c) if crate::write::cdc_log::needs_log(written.rows, counts.inserted) => {
            Ok(Some(c.write().await?))
        }
        _ => Ok(None),
    }
}

/// The write stat of a file group rewritten from `slice` as `written`.
fn rewrite_stat(
    slice: &FileSlice,
    written: &crate::write::writer::WrittenFile,
    counts: &ApplyCounts,
) -> WriteStat {
    WriteStat {
        file_id: Some(slice.file_id.clone()),
        path: Some(written.rel_path.clone()),
        prev_commit: Some(slice.base_instant.clone()),
        num_writes: written.rows as i64,
        num_inserts: counts.inserted as i64,
        num_update_writes: counts.updated as i64,
        num_deletes: counts.deleted as i64,
        total_write_bytes: written.size as i64,
        file_size_in_bytes: written.size as i64,
        partition_path: Some(slice.partition_path.clone()),
        prev_base_file: slice.base_file.as_ref().map(|b| b.name.name()),
        ..Default::default()
    }
}

/// Seeds `writer`'s key index from the old file's footer when it has a `DYNAMIC_V0` bloom
/// filter and a key range; false when it has not (then every key is indexed again).
fn resume_key_index(
    writer: &mut crate::write::writer::BaseFileWriter,
    footer: &parquet::file::metadata::ParquetMetaData,
    options: &WriteSpec,
) -> bool {
    use crate::bloom::{self, BloomFilterType, HoodieBloomFilter};
    use crate::footer::footer_value;
    let dynamic = footer_value(footer, bloom::BLOOM_FILTER_TYPE_CODE_KEY)
        .is_some_and(|c| c == BloomFilterType::DynamicV0.as_code());
    let (Some(b64), Some(min), Some(max), true) = (
        footer_value(footer, bloom::BLOOM_FILTER_FOOTER_KEY),
        footer_value(footer, bloom::MIN_RECORD_KEY_FOOTER_KEY),
        footer_value(footer, bloom::MAX_RECORD_KEY_FOOTER_KEY),
        dynamic,
    ) else {
        return false;
    };
    match HoodieBloomFilter::resume_dynamic(b64, options.files.bloom_max_entries) {
        Ok(filter) => {
            writer.resume_key_index(filter, min, max);
            true
        }
        Err(_) => false, // an unreadable filter is rebuilt from the keys
    }
}

/// Aborts a spawned task when dropped (a failed rewrite stops its reader).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// `merged` with every data column outside `changed` taken from the stored rows
/// (`stored_rows` of `old`, one per merged row): the change set of an UPDATE carries only the
/// columns it assigns.
fn keep_stored_columns(
    merged: &RecordBatch,
    old: &RecordBatch,
    stored_rows: &[u32],
    changed: &[String],
) -> Result<RecordBatch> {
    let rows = UInt32Array::from(stored_rows.to_vec());
    let mut cols = merged.columns().to_vec();
    for (c, field) in merged.schema().fields().iter().enumerate() {
        if crate::schema::is_meta_column(field.name()) || changed.iter().any(|n| n == field.name())
        {
            continue;
        }
        cols[c] = arrow::compute::take(old.column(c).as_ref(), &rows, None)?;
    }
    Ok(RecordBatch::try_new(merged.schema(), cols)?)
}

fn set_column(batch: &RecordBatch, name: &str, col: ArrayRef) -> Result<RecordBatch> {
    let idx = batch.schema().index_of(name)?;
    let mut cols = batch.columns().to_vec();
    cols[idx] = col;
    Ok(RecordBatch::try_new(batch.schema(), cols)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, StringArray as Strs};
    use arrow::datatypes::{DataType, Field, Schema};

    fn schema() -> SchemaRef {
        crate::schema::table_schema(&Schema::new(vec![
            Field::new("v", DataType::Utf8, true),
            Field::new("ts", DataType::Int64, true),
        ]))
        .unwrap()
    }

    /// Rows of the table: `meta` the five meta columns' values of every row (None: null),
    /// then keys, values and ordering values.
    fn rows(meta: [Option<&str>; 2], keys: &[&str], v: &[&str], ts: &[i64]) -> RecordBatch {
        let n = keys.len();
        let same = |x: Option<&str>| -> ArrayRef { Arc::new(Strs::from(vec![x; n])) };
        let key_col: ArrayRef = match meta[0] {
            Some(_) => Arc::new(Strs::from(keys.to_vec())),
            None => Arc::new(Strs::from(vec![None::<&str>; n])),
        };
        RecordBatch::try_new(
            schema(),
            vec![
                same(meta[0]),
                same(meta[0]),
                key_col,
                same(meta[0].map(|_| "")),
                same(meta[1]),
                Arc::new(Strs::from(v.to_vec())),
                Arc::new(Int64Array::from(ts.to_vec())),
            ],
        )
        .unwrap()
    }

    fn column<'a>(b: &'a RecordBatch, name: &str) -> Vec<Option<&'a str>> {
        b.column(b.schema().index_of(name).unwrap())
            .as_string::<i32>()
            .iter()
            .collect()
    }

    /// Stored rows 1-4; incoming: 2 newer (wins), 3 older (loses under event time), 4 a delete.
    fn case() -> (RecordBatch, RecordBatch, Strs) {
        let old = rows(
            [Some("c0"), Some("old.parquet")],
            &["1", "2", "3", "4"],
            &["a", "b", "c", "d"],
            &[1, 1, 1, 1],
        );
        let incoming = rows([None, None], &["2", "3", "4"], &["B", "C", "D"], &[5, 0, 9]);
        (old, incoming, Strs::from(vec!["2", "3", "4"]))
    }

    fn merge(
        ordering: Option<&FieldPath>,
        changed: Option<&[String]>,
    ) -> (RecordBatch, ApplyCounts, u64) {
        let (old, incoming, keys) = case();
        let schema = schema();
        let by_key: FastMap<&str, (u32, bool)> =
            [("2", (0, false)), ("3", (1, false)), ("4", (2, true))]
                .into_iter()
                .collect();
        let merge = BatchRewrite {
            schema: &schema,
            incoming: &incoming,
            incoming_keys: &keys,
            by_key: &by_key,
            ordering,
            changed,
        };
        let mut meta = MetaValues {
            instant: "c1",
            task_partition_id: 0,
            first_row: 0,
            file_name: "new.parquet",
            partition_path: "",
        };
        let mut counts = ApplyCounts::default();
        let out = merge.merge(&old, &mut meta, &mut counts).unwrap().unwrap();
        (out, counts, meta.first_row)
    }

    #[test]
    fn a_newer_update_replaces_its_record_an_older_one_is_dropped_a_delete_removes_it() {
        let ts = FieldPath::resolve(&schema(), "ts").unwrap();
        let (out, counts, next_row) = merge(Some(&ts), None);
        assert_eq!(
            column(&out, crate::meta::RECORD_KEY),
            vec![Some("1"), Some("2"), Some("3")]
        );
        assert_eq!(column(&out, "v"), vec![Some("a"), Some("B"), Some("c")]);
        // kept rows keep their commit time and name the new file; the update is restamped
        assert_eq!(
            column(&out, crate::meta::COMMIT_TIME),
            vec![Some("c0"), Some("c1"), Some("c0")]
        );
        assert_eq!(column(&out, FILE_NAME), vec![Some("new.parquet"); 3]);
        assert_eq!((counts.updated, counts.dropped, counts.deleted), (1, 1, 1));
        assert_eq!(next_row, 1);
    }

    #[test]
    fn under_commit_time_ordering_every_update_wins() {
        let (out, counts, _) = merge(None, None);
        assert_eq!(column(&out, "v"), vec![Some("a"), Some("B"), Some("C")]);
        assert_eq!((counts.updated, counts.dropped), (2, 0));
    }

    #[test]
    fn a_change_set_of_some_columns_keeps_the_others_stored() {
        let changed = vec!["v".to_string()];
        let (out, _, _) = merge(None, Some(&changed));
        assert_eq!(column(&out, "v"), vec![Some("a"), Some("B"), Some("C")]);
        let ts: Vec<i64> = out
            .column(out.schema().index_of("ts").unwrap())
            .as_primitive::<arrow::datatypes::Int64Type>()
            .values()
            .to_vec();
        assert_eq!(ts, vec![1, 1, 1]);
    }
}
