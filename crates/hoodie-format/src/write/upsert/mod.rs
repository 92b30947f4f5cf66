//! The keyed write path: upsert (and insert with a duplicate policy) of a batch of records.
//!
//! 1. record keys and partition paths of the incoming rows; pre-combine duplicate keys,
//! 2. tag location: which file group holds each key (only the partitions the input touches,
//!    or every partition with a global index),
//! 3. per touched file group: merge old and incoming records by the ordering rules and write a
//!    new base file (copy-on-write); untouched file groups keep their files,
//! 4. inserts fill small files of their partition first, then open new file groups.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use arrow::array::{make_comparator, Array, ArrayRef, AsArray, StringArray, UInt32Array};
use arrow::compute::kernels::sort::SortOptions;
use arrow::compute::{interleave_record_batch, take_record_batch};
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;

use crate::base_file::stream_base_file;
use crate::bucket::BucketSpec;
use crate::error::{FormatError, Result};
use crate::field_path::FieldPath;
use crate::file_name::write_token;
use crate::footer::read_footer_sized;
use crate::fs_view::FileSlice;
use crate::index::{tag_locations, LookupStats};
use crate::meta::{MetaValues, FILE_NAME};
use crate::table_config::MergeMode;
use crate::tasks::FastMap;
use crate::timeline::commit_metadata::WriteStat;
use crate::write::incoming::{Incoming, Interned};
use crate::write::insert::{keep_last_by, precombine_values, write_groups_in_waves, GroupRows};
use crate::write::spec::{DupPolicy, WriteSpec};
use crate::write::transaction::Transaction;

/// What a keyed write did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpsertResult {
    /// Records inserted.
    pub inserted: u64,
    /// Records updated (replaced or merged).
    pub updated: u64,
    /// Records deleted.
    pub deleted: u64,
    /// Incoming records dropped (dup policy drop, or older than the stored record).
    pub dropped: u64,
    /// Existing file groups rewritten.
    pub rewritten_file_groups: usize,
    /// Existing file groups whose changes went to a new log file (merge-on-read).
    pub logged_file_groups: usize,
    /// New file groups.
    pub new_file_groups: usize,
    /// The index lookup.
    pub lookup: LookupStats,
}

impl UpsertResult {
    /// Rows the statement affected (inserted + updated + deleted).
    pub fn affected(&self) -> u64 {
        self.inserted + self.updated + self.deleted
    }

    fn add(&mut self, counts: &MergeCounts) {
        self.updated += counts.updated;
        self.deleted += counts.deleted;
        self.inserted += counts.inserted;
        self.dropped += counts.dropped;
    }
}

/// Whether a merge-on-read file group takes `bucket` as a new log file rather than a rewrite:
/// always, except a base-only group that inserts fill (a small file), which Hudi rewrites.
fn appends_to_logs(slice: &FileSlice, bucket: &Bucket, options: &WriteSpec) -> bool {
    bucket.inserts.is_empty()
        || !slice.log_files.is_empty()
        || slice.base_file.is_none()
        || options.bucket.is_some()
}

/// Runs the appends of one wave on tasks, as many at once as `permits` lets.
async fn run_append_jobs(
    ctx: &Arc<append::AppendContext>,
    jobs: Vec<append::AppendJob>,
    permits: &Arc<tokio::sync::Semaphore>,
) -> Result<Vec<(WriteStat, MergeCounts)>> {
    let mut handles = Vec::with_capacity(jobs.len());
    for job in jobs {
        let (ctx, permits) = (ctx.clone(), permits.clone());
        let what = format!("{}/{}", job.slice.partition_path, job.slice.file_id);
        handles.push((
            what,
            tokio::spawn(async move {
                let _permit = permits.acquire_owned().await;
                append::append_file_group(ctx, job).await
            }),
        ));
    }
    crate::tasks::join_writers(handles).await
}

/// The incoming rows one file group takes.
#[derive(Default)]
struct Bucket {
    updates: Vec<u32>,
    inserts: Vec<u32>,
    deletes: Vec<u32>,
    /// The deletes that remove the old copy of a record moving to another partition.
    moves: Vec<u32>,
}

impl Bucket {
    fn len(&self) -> usize {
        self.updates.len() + self.deletes.len() + self.inserts.len()
    }

    /// Every row, ascending (so they are gathered without reordering).
    fn rows(&self) -> Vec<u32> {
        let mut rows = Vec::with_capacity(self.len());
        rows.extend_from_slice(&self.updates);
        rows.extend_from_slice(&self.deletes);
        rows.extend_from_slice(&self.inserts);
        rows.sort_unstable();
        rows
    }

    /// The same bucket over `rows` (from [`Bucket::rows`]): positions instead of row numbers.
    fn local(&self, rows: &[u32]) -> Bucket {
        let at = |v: &Vec<u32>| -> Vec<u32> {
            v.iter()
                .map(|r| rows.binary_search(r).expect("a row of the bucket") as u32)
                .collect()
        };
        Bucket {
            updates: at(&self.updates),
            deletes: at(&self.deletes),
            inserts: at(&self.inserts),
            moves: at(&self.moves),
        }
    }
}

/// Refuses an upsert whose input holds a record with a NULL ordering value under event-time
/// ordering, before anything is written: Hudi 1.2 fails such a write too (it has no ordering
/// value to compare), with this message. Change sets (UPDATE, MERGE) carry the stored ordering
/// value of the rows they do not reorder and are not checked.
pub fn check_ordering_values(incoming: &Incoming, options: &WriteSpec) -> Result<()> {
    let (Some(field), Some(ordering)) = (&options.ordering_field, incoming.ordering()) else {
        return Ok(());
    };
    // an `insert` with a duplicate policy runs here too, but it is no upsert: it keeps the
    // rules of inserts
    if options.prepped()
        || options.insert_dup_policy.is_some()
        || options.inserts_only
        || options.merge_mode != MergeMode::EventTimeOrdering
        || ordering.null_count() == 0
    {
        return Ok(());
    }
    let row = (0..ordering.len())
        .find(|&i| ordering.is_null(i) && !incoming.is_delete(i))
        .map(|i| {
            incoming
                .keys()
                .map(|k| k.value(i).to_string())
                .unwrap_or_default()
        });
    match row {
        Some(key) => Err(FormatError::NullOrderingValue {
            field: field.clone(),
            key,
        }),
        None => Ok(()),
    }
}

/// Refuses a change set that changes (deletes or updates) a stored record and inserts a new row
/// for the same record (key and partition path): only a MERGE with a `WHEN NOT MATCHED BY
/// SOURCE` clause and an INSERT clause gets there, and one row per record is all a write keeps.
/// Checked before anything is written.
pub fn check_change_set(incoming: &Incoming, options: &WriteSpec) -> Result<()> {
    let (Some(files), Some(keys)) = (incoming.base_files(), incoming.keys()) else {
        return Ok(());
    };
    if !options.prepped() || options.global_index {
        return Ok(());
    }
    let paths = incoming.paths();
    let inserted: Vec<usize> = (0..incoming.num_rows())
        .filter(|&i| files.id(i) == u32::MAX)
        .collect();
    if inserted.is_empty() {
        return Ok(());
    }
    let stored: HashSet<(u32, &str)> = (0..incoming.num_rows())
        .filter(|&i| files.id(i) != u32::MAX)
        .map(|i| (paths.id(i), keys.value(i)))
        .collect();
    match inserted
        .into_iter()
        .find(|&i| stored.contains(&(paths.id(i), keys.value(i))))
    {
        Some(i) => Err(FormatError::Unsupported {
            feature: format!(
                "a MERGE that deletes or updates the record with key {} in partition {:?} and inserts it again (a NOT MATCHED BY SOURCE clause changes it, an INSERT clause adds a row with the same key and partition); write one of the two",
                keys.value(i),
                paths.value(i)
            ),
        }),
        None => Ok(()),
    }
}

/// Writes `incoming` (built with [`KeySource::Keep`], or [`KeySource::Prepped`] for a change
/// set, and with the ordering field when there is one) as one keyed write of `txn`.
///
/// [`KeySource::Keep`]: crate::write::incoming::KeySource::Keep
/// [`KeySource::Prepped`]: crate::write::incoming::KeySource::Prepped
pub async fn write_upserts(
    txn: &mut Transaction,
    schema: &SchemaRef,
    mut incoming: Incoming,
    options: &WriteSpec,
) -> Result<UpsertResult> {
    let mut result = UpsertResult::default();
    if incoming.num_rows() == 0 {
        return Ok(result);
    }
    if options.prepped() {
        incoming.fill_generated_keys(txn.instant());
    }
    let Some(keys) = incoming.keys().cloned() else {
        return Err(FormatError::Unsupported {
            feature:
                "upserts into a table without a primary key (its keys are generated per write)"
                    .into(),
        });
    };
    // pre-combine: one row per record (greatest ordering value, ties last; commit-time: last).
    // Without a global index a key may live in several partitions: there a record is
    // (partition path, key), as Hudi's HoodieKey, so rows for different partitions stay apart.
    let n = incoming.num_rows();
    let paths = incoming.paths();
    // under commit-time ordering the later row wins whatever its ordering value, as Hudi's
    // OverwriteWithLatest payload pre-combines
    let ordering = incoming
        .ordering()
        .filter(|_| options.merge_mode == MergeMode::EventTimeOrdering);
    let keep: Vec<u32> = if !options.precombine {
        // an insert that keeps duplicate keys (a bucket table's, or one with a dup policy)
        (0..n as u32).collect()
    } else if options.inserts_only {
        match (&options.ordering_field, ordering) {
            (Some(_), Some(col)) => precombine_values(col, n, |i| (paths.id(i), keys.value(i)))?,
            (Some(_), None) => keep_last_by(n, |i| (paths.id(i), keys.value(i))),
            _ => (0..n as u32).collect(),
        }
    } else if !options.global_index {
        let record = |i: usize| (paths.id(i), keys.value(i));
        match (&options.ordering_field, ordering) {
            (Some(_), Some(col)) => precombine_values(col, n, record)?,
            _ => keep_last_by(n, record),
        }
    } else {
        match (&options.ordering_field, ordering) {
            (Some(_), Some(col)) => precombine_values(col, n, |i| keys.value(i))?,
            _ => keep_last_by(n, |i| keys.value(i)),
        }
    };

    // the latest slices of the partitions to look in
    let table = txn.table().clone();
    let timeline = txn.timeline().await?;
    let all_slices = table.file_slices(&timeline, None).await?;
    let touched: HashSet<&str> = keep.iter().map(|&i| paths.value(i as usize)).collect();
    let slices: Vec<FileSlice> = all_slices
        .into_iter()
        .filter(|s| options.global_index || touched.contains(s.partition_path.as_str()))
        .collect();
    // a merge-on-read table appends a file group's changes to a new log file
    let mor = match table.config().table_type()? {
        crate::TableType::MergeOnRead => Some(Arc::new(append::AppendContext {
            storage: table.storage().clone(),
            schema: schema.clone(),
            schema_json: crate::schema::avro_schema_with_meta(table.config().name(), schema)?
                .to_string(),
            admission: crate::log::read::Admission::of(&timeline, None),
            options: options.clone(),
            instant: txn.instant().to_string(),
        })),
        crate::TableType::CopyOnWrite => None,
    };
    let mut states = HashMap::new();
    // the slice holding each kept row's record: for rows read from the table, the file group
    // their meta columns name; otherwise by index lookup, in the row's own partition (a
    // non-global index keeps keys unique per partition only), or anywhere with a global index
    let row_slice: Vec<Option<usize>> = if options.inserts_only {
        vec![None; keep.len()]
    } else if options.prepped() {
        let files = incoming
            .base_files()
            .expect("a change set keeps its base file names");
        let rows = locate_prepped(&keep, paths, files, &slices)?;
        if let Some(ctx) = &mor {
            states = merged_state::prepped_states(ctx, &slices, &incoming, &keep, &rows).await?;
        }
        rows
    } else {
        let mut sorted_keys: Vec<u32> = keep.clone();
        let key = |i: &u32| keys.value(*i as usize);
        sorted_keys.sort_by(|a, b| crate::bloom::java_string_cmp(key(a), key(b)));
        sorted_keys.dedup_by(|a, b| key(a) == key(b));
        let (mut located, lookup) =
            tag_locations(table.storage(), &slices, &keys, Arc::new(sorted_keys)).await?;
        result.lookup = lookup;
        if let Some(ctx) = &mor {
            if let Some(spec) = &options.bucket {
                merged_state::bucket_log_candidates(
                    spec,
                    &slices,
                    &keep,
                    &keys,
                    paths,
                    &mut located,
                );
            }
            states = merged_state::live_locations(ctx, &slices, &mut located).await?;
        }
        keep.iter()
            .map(|&i| {
                let i = i as usize;
                located.get(keys.value(i)).and_then(|found| {
                    found
                        .iter()
                        .copied()
                        .find(|&s| slices[s].partition_path == paths.value(i))
                        .or_else(|| options.global_index.then(|| found[0]))
                })
            })
            .collect()
    };

    // route every kept row
    let mut moved = 0u64; // records whose partition changed: a delete plus an insert, counted as updates
    let mut buckets: BTreeMap<usize, Bucket> = BTreeMap::new();
    let mut inserts: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for (&row, slice) in keep.iter().zip(row_slice) {
        let i = row as usize;
        let path = paths.value(i);
        match slice {
            Some(s) => {
                if let Some(policy) = options.insert_dup_policy {
                    match policy {
                        DupPolicy::Fail => {
                            return Err(FormatError::DuplicateKey {
                                key: keys.value(i).to_string(),
                            })
                        }
                        DupPolicy::Drop => {
                            result.dropped += 1;
                            continue;
                        }
                        DupPolicy::None => {}
                    }
                }
                let partition_changed = slices[s].partition_path != path;
                if incoming.is_delete(i) {
                    buckets.entry(s).or_default().deletes.push(row);
                } else if partition_changed && options.update_partition_path {
                    // delete from the old partition, insert into the new one
                    let b = buckets.entry(s).or_default();
                    b.deletes.push(row);
                    b.moves.push(row);
                    inserts.entry(path.to_string()).or_default().push(row);
                    moved += 1;
                } else {
                    buckets.entry(s).or_default().updates.push(row);
                }
            }
            None if incoming.is_delete(i) => {} // deleting a missing key is a no-op
            None => inserts.entry(path.to_string()).or_default().push(row),
        }
    }
    drop(keep);

    let mut new_groups: Vec<GroupRows> = Vec::new(); // partition, rows of one file
    if let Some(spec) = &options.bucket {
        route_to_buckets(spec, inserts, &keys, &slices, &mut buckets, &mut new_groups);
        let mor = mor.map(|ctx| (ctx, states));
        return finish_upserts(
            txn, schema, incoming, options, &table, slices, buckets, new_groups, keys, moved,
            result, mor,
        )
        .await;
    }
    // inserts fill small files of their partition first
    for (partition, rows) in inserts {
        let mut rows = rows.as_slice();
        let mut candidates: Vec<(usize, u64, u64)> = Vec::new(); // slice idx, size, row count
        for (i, s) in slices.iter().enumerate() {
            if s.partition_path != partition {
                continue;
            }
            // a slice with logs is never padded (Hudi's small-file rule for indexes that do
            // not index log files)
            if let (Some(b), true) = (&s.base_file, s.log_files.is_empty()) {
                if b.size < options.files.small_file_limit {
                    let meta = read_footer_sized(table.storage(), &b.rel_path, b.size).await?;
                    candidates.push((i, b.size, meta.file_metadata().num_rows().max(0) as u64));
                }
            }
        }
        candidates.sort_by_key(|c| c.1);
        let avg = partition_record_size(&candidates, options.files.small_file_limit)
            .unwrap_or(options.files.record_size_estimate)
            .max(1);
        for (i, size, _) in candidates
            .into_iter()
            .take(options.files.small_file_candidates)
        {
            if rows.is_empty() {
                break;
            }
            let room = (options.files.max_file_size.saturating_sub(size) / avg) as usize;
            let n = room.min(rows.len());
            if n > 0 {
                buckets
                    .entry(i)
                    .or_default()
                    .inserts
                    .extend_from_slice(&rows[..n]);
                rows = &rows[n..];
            }
        }
        let per_file = (options.files.max_file_size / avg).max(1) as usize;
        for chunk in rows.chunks(per_file) {
            new_groups.push(GroupRows::new(partition.clone(), chunk.to_vec()));
        }
    }
    let mor = mor.map(|ctx| (ctx, states));
    finish_upserts(
        txn, schema, incoming, options, &table, slices, buckets, new_groups, keys, moved, result,
        mor,
    )
    .await
}

/// A merge-on-read write's shared context and the merged state of the slices it read.
type MorWrite = (
    Arc<append::AppendContext>,
    HashMap<usize, Arc<merged_state::StoredState>>,
);

/// Each insert to the file group of its bucket in its partition: an existing group takes it as
/// an insert of its rewrite, otherwise one new group per (partition, bucket) with the bucket's
/// file id.
fn route_to_buckets(
    spec: &BucketSpec,
    inserts: BTreeMap<String, Vec<u32>>,
    keys: &StringArray,
    slices: &[FileSlice],
    buckets: &mut BTreeMap<usize, Bucket>,
    new_groups: &mut Vec<GroupRows>,
) {
    // the file group of each (partition, bucket) there is
    let groups: HashMap<(&str, u32), usize> = slices
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            crate::bucket::bucket_of_file_id(&s.file_id)
                .map(|b| ((s.partition_path.as_str(), b), i))
        })
        .collect();
    for (partition, rows) in inserts {
        let mut fresh: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for row in rows {
            let b = spec.bucket_of(keys.value(row as usize));
            match groups.get(&(partition.as_str(), b)).copied() {
                Some(s) => buckets.entry(s).or_default().inserts.push(row),
                None => fresh.entry(b).or_default().push(row),
            }
        }
        for (b, rows) in fresh {
            new_groups.push(GroupRows {
                partition: partition.clone(),
                rows,
                file_id: Some(crate::bucket::new_bucket_file_id(b)),
            });
        }
    }
}

/// Rewrites the touched file groups and writes the new ones (the last steps of
/// [`write_upserts`]).
#[allow(clippy::too_many_arguments)]
async fn finish_upserts(
    txn: &mut Transaction,
    schema: &SchemaRef,
    mut incoming: Incoming,
    options: &WriteSpec,
    table: &crate::HudiTable,
    slices: Vec<FileSlice>,
    buckets: BTreeMap<usize, Bucket>,
    new_groups: Vec<GroupRows>,
    keys: StringArray,
    moved: u64,
    mut result: UpsertResult,
    mor: Option<MorWrite>,
) -> Result<UpsertResult> {
    // rewrite touched file groups, a wave at a time: markers and writers in order, the heavy
    // work in parallel
    let buckets: Vec<(usize, Bucket)> = buckets.into_iter().collect();
    let sizes: Vec<usize> = buckets.iter().map(|(_, b)| b.len()).collect();
    let mut buckets = buckets.into_iter();
    let mut task = 0usize;
    let mut done = 0;
    while done < sizes.len() {
        let wave = incoming.plan_wave(&sizes, done)?;
        let wave_buckets: Vec<(usize, Bucket)> = buckets.by_ref().take(wave).collect();
        let rows: Vec<Vec<u32>> = wave_buckets.iter().map(|(_, b)| b.rows()).collect();
        let refs: Vec<&[u32]> = rows.iter().map(Vec::as_slice).collect();
        let last = done + wave == sizes.len() && new_groups.is_empty();
        let gathered = incoming.gather(&refs, last)?;
        let mut jobs = Vec::with_capacity(wave);
        let mut appends = Vec::new();
        for (((s, bucket), rows), pieces) in wave_buckets.into_iter().zip(&rows).zip(gathered) {
            let batch = match pieces.len() {
                1 => pieces.into_iter().next().expect("one piece"),
                _ => arrow::compute::concat_batches(schema, &pieces)?,
            };
            let slice = slices[s].clone();
            if let Some((_, states)) = &mor {
                if appends_to_logs(&slice, &bucket, options) {
                    appends.push(append::AppendJob {
                        slice,
                        bucket: bucket.local(rows),
                        incoming: batch,
                        keys: take_keys(&keys, rows)?,
                        task,
                        state: states.get(&s).cloned(),
                    });
                    task += 1;
                    continue;
                }
            }
            let base = slice
                .base_file
                .clone()
                .ok_or_else(|| FormatError::Unsupported {
                    feature: "log-only file groups".into(),
                })?;
            let (writer, name) = txn
                .new_base_file(
                    &slice.partition_path,
                    &slice.file_id,
                    &write_token(task),
                    schema.clone(),
                    &options.files,
                )
                .await?;
            let keys = take_keys(&keys, rows)?;
            jobs.push(MergeJob {
                slice,
                base_path: base.rel_path,
                bucket: bucket.local(rows),
                incoming: batch,
                keys,
                writer,
                file_name: name.name(),
                task,
            });
            task += 1;
        }
        // the rewrites and the appends share the cores: a rewrite (often one, the small file
        // inserts fill) runs beside the appends, not before them; both end before either's
        // error is returned, so no writer outlives a failed write
        let permits = Arc::new(tokio::sync::Semaphore::new(crate::tasks::parallelism()));
        let merges = run_merge_jobs(table, schema, jobs, options, txn.instant(), &permits);
        let logs = async {
            match &mor {
                Some((ctx, _)) => run_append_jobs(ctx, appends, &permits).await,
                None => Ok(Vec::new()),
            }
        };
        let (merged, logged) = futures::future::join(merges, logs).await;
        let (merged, logged) = (merged?, logged?);
        for (stat, counts) in merged {
            txn.record_stat(stat);
            result.add(&counts);
            result.rewritten_file_groups += 1;
        }
        if mor.is_some() {
            for (stat, counts) in logged {
                if stat.path.is_some() {
                    txn.record_stat(stat);
                    result.logged_file_groups += 1;
                }
                result.add(&counts);
            }
        }
        incoming.end_wave();
        done += wave;
    }
    // new file groups, a wave at a time
    result.inserted += write_groups_in_waves(
        txn.files(),
        &mut incoming,
        &new_groups,
        task,
        schema,
        &options.files,
        |_, _, rows, _| take_keys(&keys, rows),
    )
    .await?;
    result.new_file_groups = new_groups.len();
    result.deleted = result.deleted.saturating_sub(moved);
    result.inserted = result.inserted.saturating_sub(moved);
    result.updated += moved;
    Ok(result)
}

/// The record keys of rows `rows`.
fn take_keys(keys: &StringArray, rows: &[u32]) -> Result<StringArray> {
    Ok(
        arrow::compute::take(keys, &UInt32Array::from(rows.to_vec()), None)?
            .as_string::<i32>()
            .clone(),
    )
}

/// Runs the rewrites of one wave on tasks, as many at once as `permits` lets.
async fn run_merge_jobs(
    table: &crate::table::HudiTable,
    schema: &SchemaRef,
    jobs: Vec<MergeJob>,
    options: &WriteSpec,
    instant: &str,
    permits: &Arc<tokio::sync::Semaphore>,
) -> Result<Vec<(WriteStat, MergeCounts)>> {
    let mut handles = Vec::with_capacity(jobs.len());
    for job in jobs {
        let (storage, schema, options, permits) = (
            table.storage().clone(),
            schema.clone(),
            options.clone(),
            permits.clone(),
        );
        let instant = instant.to_string();
        let what = format!("{}/{}", job.slice.partition_path, job.slice.file_id);
        handles.push((
            what,
            tokio::spawn(async move {
                let _permit = permits.acquire_owned().await;
                merge_file_group(&storage, &schema, job, &options, &instant).await
            }),
        ));
    }
    crate::tasks::join_writers(handles).await
}

/// Locations of rows read from the table (the kept rows `rows`): the base file they came from
/// names the file group (None for new rows, such as MERGE inserts, and for rows whose file
/// group is gone meanwhile).
fn locate_prepped(
    rows: &[u32],
    paths: &Interned,
    files: &Interned,
    slices: &[FileSlice],
) -> Result<Vec<Option<usize>>> {
    let by_group: HashMap<(&str, &str), usize> = slices
        .iter()
        .enumerate()
        .map(|(i, s)| ((s.partition_path.as_str(), s.file_id.as_str()), i))
        .collect();
    // a file group holds many rows: parse each file name once (a record read from a log
    // names its file group's id instead, as Hudi writes log records)
    let file_ids: Vec<String> = files
        .values()
        .iter()
        .map(|name| match crate::file_name::BaseFileName::parse(name) {
            Ok(b) => Ok(b.file_id),
            Err(_) if !name.is_empty() && !name.contains('.') => Ok(name.clone()),
            Err(e) => Err(e),
        })
        .collect::<Result<_>>()?;
    Ok(rows
        .iter()
        .map(|&i| {
            let i = i as usize;
            let file = files.id(i);
            if file == u32::MAX {
                return None; // a new row (MERGE insert)
            }
            // a row whose file group is gone (replaced meanwhile) is not written
            by_group
                .get(&(paths.value(i), file_ids[file as usize].as_str()))
                .copied()
        })
        .collect())
}

fn partition_record_size(candidates: &[(usize, u64, u64)], threshold: u64) -> Option<u64> {
    let (bytes, rows) = candidates
        .iter()
        .fold((0u64, 0u64), |(b, r), c| (b + c.1, r + c.2));
    (rows > 0 && bytes >= threshold).then(|| bytes / rows)
}

/// One file group to rewrite, with its new file already opened.
struct MergeJob {
    slice: FileSlice,
    base_path: String,
    /// Rows of `incoming`.
    bucket: Bucket,
    /// The incoming rows the file group takes.
    incoming: RecordBatch,
    /// Their record keys.
    keys: StringArray,
    writer: crate::write::writer::BaseFileWriter,
    file_name: String,
    task: usize,
}

mod append;
mod merged_state;
mod rewrite;

use rewrite::{merge_file_group, MergeCounts};
