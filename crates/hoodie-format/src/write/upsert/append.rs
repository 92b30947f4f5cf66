//! A keyed write's changes to an existing merge-on-read file group, appended as one new log
//! file (Hudi's append handle): the updated records, whole, as an AVRO_DATA block, then the
//! deleted keys as a DELETE block. The base file is not rewritten.
//!
//! When the write must know the stored state of its keys (event-time ordering of an upsert,
//! or a slice whose logs may have deleted keys), the slice's key and ordering columns are read
//! and merged with its logs first: an update that loses to the stored ordering value is
//! dropped, an update of a key the logs deleted is an insert, a delete of such a key a no-op.

use super::rewrite::MergeCounts;
use super::*;
use crate::log::delete::{DeleteRecord, OrderingValue};
use crate::log::merge::{LogMerger, MergeRules};
use crate::log::read::{read_slice_logs, Admission};
use crate::log::write::{log_file_bytes, log_file_name};
use crate::meta::RECORD_KEY;

/// What every append of one write shares.
pub(super) struct AppendContext {
    pub(super) storage: crate::storage::TableStorage,
    pub(super) schema: SchemaRef,
    /// The Avro schema of the records, meta fields included (the blocks' SCHEMA header).
    pub(super) schema_json: String,
    pub(super) admission: Admission,
    pub(super) options: WriteSpec,
    pub(super) instant: String,
}

/// One file group to append to.
pub(super) struct AppendJob {
    pub(super) slice: FileSlice,
    /// Rows of `incoming`.
    pub(super) bucket: Bucket,
    pub(super) incoming: RecordBatch,
    pub(super) keys: StringArray,
    pub(super) task: usize,
}

/// The log file version a new log of `slice` takes: one above its latest.
fn next_version(slice: &FileSlice) -> u32 {
    slice
        .log_files
        .iter()
        .filter_map(|l| crate::file_name::LogFileName::parse(l.rsplit('/').next().unwrap_or(l)))
        .map(|l| l.version)
        .max()
        .unwrap_or(0)
        + 1
}

/// The stored records of `wanted` keys in `slice` as merged from its base file and logs:
/// their key and ordering columns, and the row of each key.
async fn stored_state(
    ctx: &AppendContext,
    slice: &FileSlice,
    wanted: &FastMap<&str, ()>,
) -> Result<(RecordBatch, FastMap<String, u32>)> {
    use futures::StreamExt;
    let schema = &ctx.schema;
    let mut cols = vec![schema.index_of(RECORD_KEY)?];
    if let Some(o) = &ctx.options.ordering_field {
        cols.push(schema.index_of(o.split('.').next().unwrap_or(o))?);
    }
    if let Ok(i) = schema.index_of("_hoodie_is_deleted") {
        cols.push(i);
    }
    cols.sort_unstable();
    cols.dedup();
    let proj = Arc::new(schema.project(&cols)?);
    let admits = |i: &str| ctx.admission.admits(i);
    let logs = read_slice_logs(&ctx.storage, &slice.log_files, &admits, &proj).await?;
    let rules = MergeRules::new(
        &proj,
        ctx.options.merge_mode,
        ctx.options.ordering_field.as_deref(),
    );
    let keys_of = |b: &RecordBatch| Ok(crate::meta::record_keys_by_name(b)?.clone());
    let mut merger = LogMerger::new(&proj, logs.contents, &keys_of, rules)?;
    let mut parts: Vec<RecordBatch> = Vec::new();
    let keep = |b: RecordBatch, parts: &mut Vec<RecordBatch>| -> Result<()> {
        let keys = crate::meta::record_keys_by_name(&b)?;
        let rows: Vec<u32> = (0..b.num_rows())
            .filter(|&r| wanted.contains_key(keys.value(r)))
            .map(|r| r as u32)
            .collect();
        if !rows.is_empty() {
            parts.push(take_record_batch(&b, &UInt32Array::from(rows))?);
        }
        Ok(())
    };
    if let Some(base) = &slice.base_file {
        let (mut stream, _) = stream_base_file(
            &ctx.storage,
            &base.rel_path,
            &proj,
            &ctx.options.dropped_columns,
        )
        .await?;
        while let Some(b) = stream.next().await {
            let b = b?;
            let keys = crate::meta::record_keys_by_name(&b)?.clone();
            keep(merger.merge_base(&b, &keys)?, &mut parts)?;
        }
    }
    if let Some(rest) = merger.remaining()? {
        keep(rest, &mut parts)?;
    }
    let stored = arrow::compute::concat_batches(&proj, &parts)?;
    let keys = crate::meta::record_keys_by_name(&stored)?;
    let rows = (0..stored.num_rows())
        .map(|r| (keys.value(r).to_string(), r as u32))
        .collect();
    Ok((stored, rows))
}

/// Appends one file group's changes as a new log file.
pub(super) async fn append_file_group(
    ctx: Arc<AppendContext>,
    job: AppendJob,
) -> Result<(WriteStat, MergeCounts)> {
    let AppendJob {
        slice,
        bucket,
        incoming,
        keys,
        task,
    } = job;
    let options = &ctx.options;
    let event_time =
        options.merge_mode == MergeMode::EventTimeOrdering && options.ordering_field.is_some();
    let needs_state = !options.prepped() && (event_time || !slice.log_files.is_empty());
    let mut counts = MergeCounts::default();
    let (mut writes, mut deletes): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    if needs_state {
        let wanted: FastMap<&str, ()> = bucket
            .rows()
            .iter()
            .map(|&i| (keys.value(i as usize), ()))
            .collect();
        let (stored, row_of) = stored_state(&ctx, &slice, &wanted).await?;
        let ordering = match (&options.ordering_field, event_time) {
            (Some(f), true) => {
                let path = FieldPath::resolve(&ctx.schema, f)?;
                let stored_path = FieldPath::resolve(&stored.schema(), f)?;
                Some(make_comparator(
                    path.values(incoming.column(path.top()))?.as_ref(),
                    stored_path
                        .values(stored.column(stored_path.top()))?
                        .as_ref(),
                    SortOptions::default(),
                )?)
            }
            _ => None,
        };
        for &i in bucket.updates.iter().chain(&bucket.inserts) {
            match row_of.get(keys.value(i as usize)) {
                None => {
                    counts.inserted += 1;
                    writes.push(i);
                }
                Some(&s)
                    if ordering
                        .as_ref()
                        .is_none_or(|c| c(i as usize, s as usize).is_ge()) =>
                {
                    counts.updated += 1;
                    writes.push(i);
                }
                Some(_) => counts.dropped += 1,
            }
        }
        for &i in &bucket.deletes {
            if row_of.contains_key(keys.value(i as usize)) {
                counts.deleted += 1;
                deletes.push(i);
            }
        }
    } else {
        counts.updated = bucket.updates.len() as u64;
        counts.inserted = bucket.inserts.len() as u64;
        counts.deleted = bucket.deletes.len() as u64;
        writes.extend(bucket.updates.iter().chain(&bucket.inserts));
        deletes.extend(&bucket.deletes);
    }
    writes.sort_unstable();
    let meta = MetaValues {
        instant: &ctx.instant,
        task_partition_id: task,
        first_row: 0,
        // a log record names its file group, not a file
        file_name: &slice.file_id,
        partition_path: &slice.partition_path,
    };
    let rows = if writes.is_empty() {
        None
    } else {
        Some(crate::meta::take_with_meta(
            &incoming,
            &keys,
            &writes,
            &meta,
            &ctx.schema,
        )?)
    };
    let delete_records = delete_records(&incoming, &keys, &deletes, &slice, options)?;
    if rows.is_none() && delete_records.is_empty() {
        return Ok((WriteStat::default(), counts));
    }
    let bytes = log_file_bytes(
        &ctx.instant,
        &ctx.schema_json,
        rows.as_ref(),
        &delete_records,
    )?;
    let size = bytes.len() as u64;
    let (name, version) = put_log_file(&ctx, &slice, task, bytes).await?;
    let stat = append_stat(
        &slice,
        &name,
        version,
        size,
        rows.as_ref().map_or(0, |r| r.num_rows()),
        &counts,
    );
    Ok((stat, counts))
}

/// The delete entries of rows `deletes`: a statement's deletes carry the default ordering
/// value (they always win, as Spark's DELETE writes them); an upsert's deleted records carry
/// their own ordering value under event-time ordering.
fn delete_records(
    incoming: &RecordBatch,
    keys: &StringArray,
    deletes: &[u32],
    slice: &FileSlice,
    options: &WriteSpec,
) -> Result<Vec<DeleteRecord>> {
    let ordering = match (
        &options.ordering_field,
        options.merge_mode,
        options.prepped(),
    ) {
        (Some(f), MergeMode::EventTimeOrdering, false) => {
            let path = FieldPath::resolve(&incoming.schema(), f)?;
            Some(path.values(incoming.column(path.top()))?)
        }
        _ => None,
    };
    Ok(deletes
        .iter()
        .map(|&i| DeleteRecord {
            record_key: keys.value(i as usize).to_string(),
            partition_path: slice.partition_path.clone(),
            ordering: ordering.as_ref().map_or(OrderingValue::Int(0), |o| {
                OrderingValue::of_array(o.as_ref(), i as usize)
            }),
        })
        .collect())
}

/// Writes the log file under a fresh version (after its marker): a name another writer took
/// meanwhile moves to the next version.
async fn put_log_file(
    ctx: &AppendContext,
    slice: &FileSlice,
    task: usize,
    bytes: Vec<u8>,
) -> Result<(String, u32)> {
    let bytes = bytes::Bytes::from(bytes);
    let mut version = next_version(slice);
    loop {
        let name = log_file_name(
            &slice.file_id,
            &slice.base_instant,
            version,
            &write_token(task),
        );
        let rel = if slice.partition_path.is_empty() {
            name.clone()
        } else {
            format!("{}/{name}", slice.partition_path)
        };
        let marker = format!(
            "{}/{rel}.marker.APPEND",
            crate::write::transaction::marker_dir(&ctx.instant)
        );
        ctx.storage.put(&marker, Vec::<u8>::new()).await?;
        match ctx.storage.put_if_absent(&rel, bytes.clone()).await {
            Ok(()) => return Ok((name, version)),
            Err(FormatError::AlreadyExists { .. }) => version += 1,
            Err(e) => return Err(e),
        }
    }
}

/// The delta write stat of a new log file (table version 6: the slice's base instant and
/// file, its logs with the new one).
fn append_stat(
    slice: &FileSlice,
    name: &str,
    version: u32,
    size: u64,
    rows: usize,
    counts: &MergeCounts,
) -> WriteStat {
    let path = if slice.partition_path.is_empty() {
        name.to_string()
    } else {
        format!("{}/{name}", slice.partition_path)
    };
    let mut logs: Vec<String> = slice
        .log_files
        .iter()
        .map(|l| l.rsplit('/').next().unwrap_or(l).to_string())
        .collect();
    logs.push(name.to_string());
    WriteStat {
        file_id: Some(slice.file_id.clone()),
        path: Some(path),
        prev_commit: Some(slice.base_instant.clone()),
        num_writes: rows as i64,
        num_deletes: counts.deleted as i64,
        num_update_writes: counts.updated as i64,
        num_inserts: counts.inserted as i64,
        total_write_bytes: size as i64,
        file_size_in_bytes: size as i64,
        partition_path: Some(slice.partition_path.clone()),
        base_file: Some(
            slice
                .base_file
                .as_ref()
                .map(|b| b.name.name())
                .unwrap_or_default(),
        ),
        log_files: Some(logs),
        log_version: Some(version as i64),
        log_offset: Some(0),
        ..Default::default()
    }
}
