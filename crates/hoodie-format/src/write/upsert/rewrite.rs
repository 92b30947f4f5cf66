//! The rewrite of one file group by a keyed write: its stored records merged with the
//! incoming ones routed to it (updates, deletes, inserts), streamed batch by batch.

use super::*;
use crate::merge_rule::incoming_wins;

/// What one rewrite did.
#[derive(Default)]
pub(super) struct MergeCounts {
    pub(super) updated: u64,
    pub(super) deleted: u64,
    pub(super) inserted: u64,
    pub(super) dropped: u64,
}

/// Rewrites one file group: old records merged with the incoming ones routed to it. Runs on
/// its own task and streams the old base file batch by batch, so it holds one batch of the old
/// file (plus the encoder's open row group) at a time.
pub(super) async fn merge_file_group(
    storage: &crate::storage::TableStorage,
    schema: &SchemaRef,
    job: MergeJob,
    options: &WriteSpec,
    instant: &str,
) -> Result<(WriteStat, MergeCounts)> {
    use futures::StreamExt;
    let MergeJob {
        slice,
        base_path,
        bucket,
        incoming,
        keys,
        mut writer,
        file_name,
        task,
    } = job;
    let (incoming, incoming_keys) = (&incoming, &keys);
    let mut counts = MergeCounts::default();
    let mut by_key: FastMap<&str, (u32, bool)> = FastMap::default(); // incoming row, is delete
    for &i in &bucket.updates {
        by_key.insert(incoming_keys.value(i as usize), (i, false));
    }
    for &i in &bucket.deletes {
        by_key.insert(incoming_keys.value(i as usize), (i, true));
    }
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
            incoming,
            incoming_keys,
            by_key: &by_key,
            inserts: &bucket.inserts,
            ordering: ordering_path.as_ref(),
            changed: options.changed_columns.as_deref(),
            partition_path: &slice.partition_path,
            file_id: &slice.file_id,
            token: &token,
            stored: None,
        });
    let mut meta = MetaValues {
        instant,
        task_partition_id: task,
        first_row: 0,
        file_name: &file_name,
        partition_path: &slice.partition_path,
    };
    // a file group that takes no deletes keeps its row groups: only the columns that change
    // are encoded again (those the statement assigns, else those whose values differ), and
    // its inserts follow as a row group of their own
    // (the splice copies column chunks by their place in the table schema, which a file
    // without its partition columns does not keep)
    if bucket.deletes.is_empty()
        && options.dropped_columns.is_empty()
        && !(bucket.updates.is_empty() && bucket.inserts.is_empty())
    {
        let data_columns = schema
            .fields()
            .iter()
            .filter(|f| !crate::schema::is_meta_column(f.name()))
            .count();
        let changed = options
            .changed_columns
            .as_deref()
            .filter(|c| c.len() < data_columns);
        let updates: FastMap<&str, u32> = by_key.iter().map(|(k, v)| (*k, v.0)).collect();
        let input = crate::write::splice::SpliceInput {
            storage,
            schema,
            incoming,
            incoming_keys,
            updates: &updates,
            inserts: &bucket.inserts,
            ordering: ordering_path.as_ref(),
            changed,
            settings: &options.files,
            old_rel: &base_path,
            new_rel: writer.rel_path(),
            keep_stored: changes.is_some(),
        };
        if let Some(mut done) = crate::write::splice::splice_rewrite(input, meta.clone()).await? {
            counts.updated = done.updated;
            counts.dropped = done.dropped;
            counts.inserted = done.inserted;
            let written = crate::write::writer::WrittenFile {
                rel_path: writer.rel_path().to_string(),
                size: done.size,
                rows: done.rows,
            };
            let mut stat = rewrite_stat(&slice, &written, &counts);
            if let Some(c) = changes.as_mut() {
                c.stored = done.stored.take();
            }
            stat.cdc_stats = log_changes(&changes, &written, &counts).await?;
            return Ok((stat, counts));
        }
    }
    // decode the old file on its own task, a couple of batches ahead: decoding overlaps merging
    // and encoding, which matters when one file group is all there is to rewrite
    let (mut old_stream, footer) =
        stream_base_file(storage, &base_path, schema, &options.dropped_columns).await?;
    // every stored key stays, in order, when nothing is deleted: the old file's bloom filter and
    // key range only need the inserts added (the same filter, bit for bit, as rehashing all)
    let known_keys = bucket.deletes.is_empty() && resume_key_index(&mut writer, &footer, options);
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
    while let Some(old) = rx.recv().await {
        let old = old?;
        let old_keys = crate::meta::record_keys(&old);
        let ordering = ordering_path
            .as_ref()
            .map(|path| -> Result<_> {
                Ok(make_comparator(
                    path.values(incoming.column(path.top()))?.as_ref(),
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
            match by_key.get(old_keys.value(r)) {
                None => positions.push((0, r)),
                Some(&(_, true)) => {
                    counts.deleted += 1;
                    continue;
                }
                Some(&(i, false)) => {
                    if incoming_wins(ordering.as_ref(), i as usize, r) {
                        positions.push((1, incoming_idx.len()));
                        incoming_idx.push(i);
                        counts.updated += 1;
                    } else {
                        positions.push((0, r));
                        counts.dropped += 1;
                    }
                }
            }
            stored_rows.push(r as u32);
        }
        if positions.is_empty() {
            continue;
        }
        // kept rows keep their meta columns but point at the new file
        let old_renamed = set_column(
            &old,
            FILE_NAME,
            Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
                file_name.as_str(),
                old.num_rows(),
            ))),
        )?;
        let merged = if incoming_idx.is_empty() {
            if positions.len() == old.num_rows() {
                old_renamed
            } else {
                let keep: Vec<u32> = positions.iter().map(|p| p.1 as u32).collect();
                take_record_batch(&old_renamed, &UInt32Array::from(keep))?
            }
        } else {
            // incoming rows get fresh meta columns
            let inc =
                crate::meta::take_with_meta(incoming, incoming_keys, &incoming_idx, &meta, schema)?;
            meta.first_row += incoming_idx.len() as u64;
            let merged = interleave_record_batch(&[&old_renamed, &inc], &positions)?;
            match &options.changed_columns {
                Some(changed) => keep_stored_columns(&merged, &old_renamed, &stored_rows, changed)?,
                None => merged,
            }
        };
        if known_keys {
            writer.write_known_keys(&merged).await?;
        } else {
            writer.write(&merged).await?;
        }
    }
    if !bucket.inserts.is_empty() {
        let inc =
            crate::meta::take_with_meta(incoming, incoming_keys, &bucket.inserts, &meta, schema)?;
        writer.write(&inc).await?;
    }
    let written = writer.close().await?;
    counts.inserted = bucket.inserts.len() as u64;
    let mut stat = rewrite_stat(&slice, &written, &counts);
    stat.cdc_stats = log_changes(&changes, &written, &counts).await?;
    Ok((stat, counts))
}

/// A CDC table's `.cdc` log of a rewrite, and the write stat's `cdcStats` naming it (`None`
/// when the table logs no changes, or Hudi would log none for this rewrite).
async fn log_changes(
    changes: &Option<crate::write::cdc_log::RewriteChanges<'_>>,
    written: &crate::write::writer::WrittenFile,
    counts: &MergeCounts,
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
    counts: &MergeCounts,
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
