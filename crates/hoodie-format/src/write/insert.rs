//! The insert and bulk-insert write paths: new records into new file groups.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, StringArray, UInt32Array};
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use arrow::row::{RowConverter, SortField};

use crate::error::Result;
use crate::file_name::{new_file_id, write_token};
use crate::keygen::{generated_key, KeyGenerator};
use crate::meta::{with_meta_columns, MetaValues};
use crate::precedence::newer_wins;
use crate::tasks::FastMap;
use crate::timeline::commit_metadata::WriteStat;
use crate::write::incoming::{Incoming, Interned};
use crate::write::spec::WriteSpec;
use crate::write::status::{FileGroupWriter, OpenedFile};
use crate::write::writer::FileSpec;

/// What an insert wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InsertResult {
    /// Rows written.
    pub rows: u64,
    /// Base files written.
    pub files: usize,
}

/// Keeps, for each record key, the row with the greatest value of `field` (ties: the last
/// seen, as Hudi's payloads pre-combine: the later record wins unless the earlier one's
/// ordering value is greater). Returns the indices of the surviving rows in input order.
/// (The writes pre-combine through [`precombine_values`]; this names the column, for tests.)
#[cfg(test)]
fn precombine(batch: &RecordBatch, keys: &StringArray, field: &str) -> Result<Vec<u32>> {
    precombine_by(batch, |i| keys.value(i), field)
}

/// [`precombine`] with the record of row `i` identified by `key(i)` (e.g. a partition path and
/// a key), for `batch.num_rows()` rows.
#[cfg(test)]
fn precombine_by<'a, K: std::hash::Hash + Eq>(
    batch: &RecordBatch,
    key: impl Fn(usize) -> K + 'a,
    field: &str,
) -> Result<Vec<u32>> {
    let idx = batch
        .schema()
        .fields()
        .iter()
        .position(|f| f.name().eq_ignore_ascii_case(field))
        .ok_or_else(|| crate::error::FormatError::MissingColumn {
            column: field.to_string(),
        })?;
    precombine_values(batch.column(idx), batch.num_rows(), key)
}

/// Keeps, for each record `key(i)` of rows `0..n`, the row with the greatest value in
/// `ordering` (ties: the last seen). Returns the surviving rows in input order.
pub fn precombine_values<K: std::hash::Hash + Eq>(
    ordering: &ArrayRef,
    n: usize,
    key: impl Fn(usize) -> K,
) -> Result<Vec<u32>> {
    let converter = RowConverter::new(vec![SortField::new(ordering.data_type().clone())])?;
    let rows = converter.convert_columns(std::slice::from_ref(ordering))?;
    let mut best: FastMap<K, u32> = FastMap::with_capacity_and_hasher(n, Default::default());
    for i in 0..n {
        match best.entry(key(i)) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(i as u32);
            }
            std::collections::hash_map::Entry::Occupied(mut o) => {
                // the later row is the newer version
                if newer_wins(Some(rows.row(i).cmp(&rows.row(*o.get() as usize)))) {
                    o.insert(i as u32);
                }
            }
        }
    }
    let mut keep: Vec<u32> = best.into_values().collect();
    keep.sort_unstable();
    Ok(keep)
}

/// Keeps the last row of each record (commit-time ordering without an ordering field).
pub fn keep_last_by<K: std::hash::Hash + Eq>(n: usize, key: impl Fn(usize) -> K) -> Vec<u32> {
    let mut last: FastMap<K, u32> = FastMap::with_capacity_and_hasher(n, Default::default());
    for i in 0..n {
        last.insert(key(i), i as u32);
    }
    let mut keep: Vec<u32> = last.into_values().collect();
    keep.sort_unstable();
    keep
}

/// Writes `incoming` (table schema: meta columns first, their values ignored; built with
/// [`KeySource::Keep`] and the ordering field when pre-combining, else [`KeySource::Validate`])
/// as new file groups of `txn`, one or more per partition path, a wave of files at a time.
///
/// [`KeySource::Keep`]: crate::write::incoming::KeySource::Keep
/// [`KeySource::Validate`]: crate::write::incoming::KeySource::Validate
pub async fn write_inserts(
    txn: &mut FileGroupWriter,
    keygen: &KeyGenerator,
    table_schema: &SchemaRef,
    mut incoming: Incoming,
    options: &WriteSpec,
) -> Result<InsertResult> {
    let n = incoming.num_rows();
    if n == 0 {
        return Ok(InsertResult::default());
    }
    let keys = incoming.keys().cloned();
    let paths = incoming.paths();
    let keep = rows_kept(&incoming, keys.as_ref(), paths, options)?;
    let mut by_partition: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for &i in &keep {
        by_partition
            .entry(paths.value(i as usize))
            .or_default()
            .push(i);
    }
    // split into files of at most about max_file_size bytes, estimated from the in-memory
    // size: snappy Parquet of mixed columns takes 1.3-3x less than Arrow (1.35x for the
    // benchmark's rows), so assuming 1.5x keeps files under the target rather than over it
    let mut groups: Vec<GroupRows> = Vec::new();
    if let (Some(spec), Some(k)) = (&options.bucket, &keys) {
        for (partition, rows) in &by_partition {
            let mut by_bucket: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
            for &r in rows {
                by_bucket
                    .entry(spec.bucket_of(k.value(r as usize)))
                    .or_default()
                    .push(r);
            }
            for (b, rows) in by_bucket {
                groups.push(GroupRows {
                    partition: partition.to_string(),
                    rows,
                    file_id: Some(crate::bucket::new_bucket_file_id(b)),
                });
            }
        }
        by_partition.clear();
    }
    for (partition, rows) in by_partition {
        let mem = incoming.estimate_bytes(rows.len()).max(1);
        let files = (mem * 2)
            .div_ceil(options.files.max_file_size.max(1) as usize * 3)
            .max(1);
        let per_file = rows.len().div_ceil(files);
        for chunk in rows.chunks(per_file) {
            groups.push(GroupRows::new(partition.to_string(), chunk.to_vec()));
        }
    }
    drop(keep);
    let rows_written = write_groups_in_waves(
        txn,
        &mut incoming,
        &groups,
        0,
        table_schema,
        &options.files,
        |txn, task, rows, pieces| match &keys {
            Some(k) => Ok(
                arrow::compute::take(k, &UInt32Array::from(rows.to_vec()), None)?
                    .as_string::<i32>()
                    .clone(),
            ),
            None if keygen.has_generated_keys() => Ok(StringArray::from_iter_values(
                (0..rows.len() as u64).map(|r| generated_key(txn.instant(), task, r)),
            )),
            None => {
                let keys = pieces
                    .iter()
                    .map(|p| keygen.record_keys(p))
                    .collect::<Result<Vec<_>>>()?;
                let refs: Vec<&dyn arrow::array::Array> =
                    keys.iter().map(|k| k as &dyn arrow::array::Array).collect();
                Ok(arrow::compute::concat(&refs)?.as_string::<i32>().clone())
            }
        },
    )
    .await?;
    Ok(InsertResult {
        rows: rows_written,
        files: groups.len(),
    })
}

/// Writes `groups` (a partition path and the rows of `incoming` of one new file each) as new
/// file groups of `txn`, a wave at a time (as many as the memory budget holds), with task
/// numbers from `first_task` on. `keys(txn, task, rows, pieces)` gives a file's record keys.
/// Returns the rows written.
/// The rows of one new file group: its partition, the rows, and the file id it must get (a
/// bucket's), if any.
pub(crate) struct GroupRows {
    pub(crate) partition: String,
    pub(crate) rows: Vec<u32>,
    pub(crate) file_id: Option<String>,
}

impl GroupRows {
    /// A group with a new file id.
    pub(crate) fn new(partition: String, rows: Vec<u32>) -> Self {
        Self {
            partition,
            rows,
            file_id: None,
        }
    }
}

pub(crate) async fn write_groups_in_waves(
    txn: &mut FileGroupWriter,
    incoming: &mut Incoming,
    groups: &[GroupRows],
    first_task: usize,
    schema: &SchemaRef,
    settings: &FileSpec,
    keys: impl Fn(&FileGroupWriter, usize, &[u32], &[RecordBatch]) -> Result<StringArray>,
) -> Result<u64> {
    let sizes: Vec<usize> = groups.iter().map(|g| g.rows.len()).collect();
    let mut written = 0;
    let mut done = 0;
    while done < groups.len() {
        let wave = incoming.plan_wave(&sizes, done)?;
        let refs: Vec<&[u32]> = groups[done..done + wave]
            .iter()
            .map(|g| g.rows.as_slice())
            .collect();
        let gathered = incoming.gather(&refs, done + wave == groups.len())?;
        let mut wave_groups = Vec::with_capacity(wave);
        for (i, (group, pieces)) in groups[done..done + wave].iter().zip(gathered).enumerate() {
            wave_groups.push(NewGroup {
                partition: group.partition.clone(),
                keys: keys(txn, first_task + done + i, &group.rows, &pieces)?,
                rows: pieces,
                file_id: group.file_id.clone(),
            });
        }
        written +=
            write_new_file_groups(txn, wave_groups, first_task + done, schema, settings).await?;
        incoming.end_wave();
        done += wave;
    }
    Ok(written)
}

/// One new file group to write: its partition path, rows (table schema, in pieces; meta
/// columns are computed) and record keys (one per row, across the pieces).
pub(crate) struct NewGroup {
    pub(crate) partition: String,
    pub(crate) rows: Vec<RecordBatch>,
    pub(crate) keys: StringArray,
    /// The file id to use (a bucket's); `None`: a new one.
    pub(crate) file_id: Option<String>,
}

/// Rows per batch handed to a new file's encoder (its meta columns are built per batch).
const NEW_FILE_BATCH_ROWS: usize = 64 * 1024;

/// Writes `groups` as new file groups of `txn` (task numbers from `first_task` on) and returns
/// the rows written. The files are opened in order (markers, partition metadata); encoding runs
/// on tasks, as many at once as there are cores; the write stats are recorded in order.
pub(crate) async fn write_new_file_groups(
    txn: &mut FileGroupWriter,
    groups: Vec<NewGroup>,
    first_task: usize,
    schema: &SchemaRef,
    settings: &FileSpec,
) -> Result<u64> {
    // open every file first (markers in order), then encode on tasks
    let mut opened = Vec::with_capacity(groups.len());
    for (i, group) in groups.into_iter().enumerate() {
        let task = first_task + i;
        let file_id = group.file_id.clone().unwrap_or_else(new_file_id);
        let OpenedFile { writer, name } = txn
            .new_base_file(
                &group.partition,
                &file_id,
                &write_token(task),
                schema.clone(),
                settings,
            )
            .await?;
        opened.push((group, task, file_id, writer, name.name()));
    }
    let permits = Arc::new(tokio::sync::Semaphore::new(crate::tasks::parallelism()));
    let mut handles = Vec::with_capacity(opened.len());
    for (group, task, file_id, writer, name) in opened {
        let what = format!("{}/{file_id}", group.partition);
        let (instant, schema, permits) =
            (txn.instant().to_string(), schema.clone(), permits.clone());
        let handle = tokio::spawn(async move {
            let _permit = permits.acquire_owned().await;
            fill_new_file_group(writer, &name, file_id, group, task, &instant, &schema).await
        });
        handles.push((what, handle));
    }
    let mut rows = 0;
    for stat in crate::tasks::join_writers(handles).await? {
        rows += stat.num_writes as u64;
        txn.record_stat(stat);
    }
    Ok(rows)
}

/// Writes a new file group's rows through `writer`, batch by batch, and returns its stat.
async fn fill_new_file_group(
    mut writer: crate::write::writer::BaseFileWriter,
    file_name: &str,
    file_id: String,
    group: NewGroup,
    task: usize,
    instant: &str,
    schema: &SchemaRef,
) -> Result<WriteStat> {
    let mut offset = 0; // rows written so far
    for piece in &group.rows {
        let n = piece.num_rows();
        let mut at = 0;
        while at < n {
            let len = NEW_FILE_BATCH_ROWS.min(n - at);
            let meta = MetaValues {
                instant,
                task_partition_id: task,
                first_row: offset as u64,
                file_name,
                partition_path: &group.partition,
            };
            let rows = piece.slice(at, len);
            let keys = group.keys.slice(offset, len);
            writer
                .write(&with_meta_columns(&rows, &keys, &meta, schema)?)
                .await?;
            at += len;
            offset += len;
        }
    }
    let written = writer.close().await?;
    Ok(WriteStat {
        file_id: Some(file_id),
        path: Some(written.rel_path.clone()),
        prev_commit: Some("null".into()),
        num_writes: written.rows as i64,
        num_inserts: written.rows as i64,
        total_write_bytes: written.size as i64,
        file_size_in_bytes: written.size as i64,
        partition_path: Some(group.partition),
        ..Default::default()
    })
}

/// The rows of `incoming` an insert writes: with pre-combining (`hoodie.combine.before.insert`,
/// a table with a key), one row per record, the greatest ordering value under event-time
/// ordering (ties: the later row), else the later row; without, every row.
fn rows_kept(
    incoming: &Incoming,
    keys: Option<&StringArray>,
    paths: &Interned,
    options: &WriteSpec,
) -> Result<Vec<u32>> {
    let n = incoming.num_rows();
    // (under commit-time ordering the later row wins whatever its ordering value)
    let event_time = options.merge_mode == crate::table_config::MergeMode::EventTimeOrdering;
    // (without an ordering field, pre-combining keeps the later row of a record too)
    let ordered = options.precombine_field().is_some() && event_time;
    Ok(match (keys, options.precombine, incoming.ordering()) {
        (Some(k), true, Some(col)) if ordered && options.global_index => {
            precombine_values(col, n, |i| k.value(i))?
        }
        (Some(k), true, Some(col)) if ordered => {
            precombine_values(col, n, |i| (paths.id(i), k.value(i)))?
        }
        (Some(k), true, _) if options.global_index => keep_last_by(n, |i| k.value(i)),
        (Some(k), true, _) => keep_last_by(n, |i| (paths.id(i), k.value(i))),
        _ => (0..n as u32).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int64Array;
    use arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;

    #[test]
    fn precombine_keeps_greatest_then_last() {
        let b = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("ts", DataType::Int64, true)])),
            vec![Arc::new(Int64Array::from(vec![
                Some(1),
                Some(5),
                Some(5),
                Some(2),
                None,
            ]))],
        )
        .unwrap();
        let keys = StringArray::from(vec!["a", "a", "a", "b", "b"]);
        // a: rows 1 and 2 tie at 5 -> the later (2), as Spark with Hudi 1.2 keeps; b: 2 beats
        // null
        assert_eq!(precombine(&b, &keys, "ts").unwrap(), vec![2, 3]);
        assert!(matches!(
            precombine(&b, &keys, "nope"),
            Err(crate::error::FormatError::MissingColumn { .. })
        ));
    }
}
