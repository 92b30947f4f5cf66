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
use crate::fs_view::FileSlice;
use crate::index::LookupStats;
use crate::meta::{MetaValues, FILE_NAME};
use crate::table_config::MergeMode;
use crate::tasks::FastMap;
use crate::timeline::commit_metadata::WriteStat;
use crate::write::incoming::{Incoming, Interned};
use crate::write::insert::{write_groups_in_waves, GroupRows};
use crate::write::spec::WriteSpec;
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

    fn add(&mut self, counts: &ApplyCounts) {
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
) -> Result<Vec<(WriteStat, ApplyCounts)>> {
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
/// set, and with the ordering field when there is one) as one keyed write of `txn`: its rows
/// routed to file groups ([`route`]), then the touched groups rewritten or logged and the new
/// ones written.
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
    let keep = route::precombined(&incoming, &keys, options)?;
    let table = txn.table().clone();
    let timeline = txn.timeline().await?;
    let slices =
        route::slices_to_look_in(&table, &timeline, incoming.paths(), &keep, options).await?;
    let mor = mor_context(&table, &timeline, schema, options, txn.instant())?;
    let lookup = route::Lookup {
        table: &table,
        slices: &slices,
        options,
        mor: mor.as_ref(),
    };
    let (row_slice, states) = lookup.locate(&incoming, &keys, &keep, &mut result).await?;
    let route::RoutedRows {
        mut buckets,
        inserts,
        moved,
    } = lookup.route_rows(&incoming, &keys, &keep, row_slice, &mut result)?;
    drop(keep);
    let new_groups = match &options.bucket {
        Some(spec) => {
            let mut groups = Vec::new();
            route_to_buckets(spec, inserts, &keys, &slices, &mut buckets, &mut groups);
            groups
        }
        None => lookup.fill_small_files(inserts, &mut buckets).await?,
    };
    let routed = Routed {
        slices,
        buckets,
        new_groups,
        keys,
        moved,
        mor: mor.map(|ctx| (ctx, states)),
    };
    finish_upserts(txn, schema, incoming, options, routed, result).await
}

/// A merge-on-read table's shared context of the appends to its file groups (None on
/// copy-on-write, which rewrites them).
fn mor_context(
    table: &crate::HudiTable,
    timeline: &crate::timeline::Timeline,
    schema: &SchemaRef,
    options: &WriteSpec,
    instant: &str,
) -> Result<Option<Arc<append::AppendContext>>> {
    Ok(match table.config().table_type()? {
        crate::TableType::MergeOnRead => Some(Arc::new(append::AppendContext {
            storage: table.storage().clone(),
            schema: schema.clone(),
            schema_json: crate::schema::avro_schema_with_meta(table.config().name(), schema)?
                .to_string(),
            admission: crate::log::read::Admission::of(timeline, None),
            options: options.clone(),
            instant: instant.to_string(),
        })),
        crate::TableType::CopyOnWrite => None,
    })
}

/// A keyed write's rows routed to file groups, for [`finish_upserts`].
struct Routed {
    /// The latest slices of the partitions looked in.
    slices: Vec<FileSlice>,
    /// What each touched slice (by its index in `slices`) takes.
    buckets: BTreeMap<usize, Bucket>,
    /// The rows of each new file group.
    new_groups: Vec<GroupRows>,
    /// The incoming rows' record keys.
    keys: StringArray,
    /// Records moved to another partition: a delete plus an insert, counted as updates.
    moved: u64,
    /// A merge-on-read write's context and the merged state of the slices it read.
    mor: Option<MorWrite>,
}

/// A merge-on-read write's shared context and the merged state of the slices it read.
type MorWrite = (
    Arc<append::AppendContext>,
    HashMap<usize, Arc<stored_state::StoredState>>,
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

/// Rewrites (or, on merge-on-read, logs to) the touched file groups and writes the new ones
/// (the last steps of [`write_upserts`]).
async fn finish_upserts(
    txn: &mut Transaction,
    schema: &SchemaRef,
    mut incoming: Incoming,
    options: &WriteSpec,
    routed: Routed,
    mut result: UpsertResult,
) -> Result<UpsertResult> {
    let Routed {
        slices,
        buckets,
        new_groups,
        keys,
        moved,
        mor,
    } = routed;
    // touched file groups, a wave at a time: markers and writers in order, the heavy work in
    // parallel
    let buckets: Vec<(usize, Bucket)> = buckets.into_iter().collect();
    let sizes: Vec<usize> = buckets.iter().map(|(_, b)| b.len()).collect();
    let mut buckets = buckets.into_iter();
    let mut waves = Waves {
        txn,
        schema,
        options,
        slices: &slices,
        keys: &keys,
        mor: mor.as_ref(),
        task: 0,
    };
    let mut done = 0;
    while done < sizes.len() {
        let wave = incoming.plan_wave(&sizes, done)?;
        let wave_buckets: Vec<(usize, Bucket)> = buckets.by_ref().take(wave).collect();
        let rows: Vec<Vec<u32>> = wave_buckets.iter().map(|(_, b)| b.rows()).collect();
        let refs: Vec<&[u32]> = rows.iter().map(Vec::as_slice).collect();
        let last = done + wave == sizes.len() && new_groups.is_empty();
        let gathered = incoming.gather(&refs, last)?;
        let (jobs, appends) = waves.open(wave_buckets, &rows, gathered).await?;
        waves.run(jobs, appends, &mut result).await?;
        incoming.end_wave();
        done += wave;
    }
    // new file groups, a wave at a time
    let task = waves.task;
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

/// The waves of a keyed write's touched file groups: what each wave opens and runs.
struct Waves<'a> {
    txn: &'a mut Transaction,
    schema: &'a SchemaRef,
    options: &'a WriteSpec,
    slices: &'a [FileSlice],
    keys: &'a StringArray,
    mor: Option<&'a MorWrite>,
    /// The next writer's task number.
    task: usize,
}

impl Waves<'_> {
    /// The rewrites (their new files opened, markers first) and log appends of one wave:
    /// `buckets` with their `rows` and the incoming rows `gathered` for them.
    async fn open(
        &mut self,
        buckets: Vec<(usize, Bucket)>,
        rows: &[Vec<u32>],
        gathered: Vec<Vec<RecordBatch>>,
    ) -> Result<(Vec<RewriteJob>, Vec<append::AppendJob>)> {
        let (mut jobs, mut appends) = (Vec::new(), Vec::new());
        for (((s, bucket), rows), pieces) in buckets.into_iter().zip(rows).zip(gathered) {
            let batch = match pieces.len() {
                1 => pieces.into_iter().next().expect("one piece"),
                _ => arrow::compute::concat_batches(self.schema, &pieces)?,
            };
            let slice = self.slices[s].clone();
            let task = self.task;
            self.task += 1;
            if let Some((_, states)) = self.mor {
                if appends_to_logs(&slice, &bucket, self.options) {
                    appends.push(append::AppendJob {
                        slice,
                        bucket: bucket.local(rows),
                        incoming: batch,
                        keys: take_keys(self.keys, rows)?,
                        task,
                        state: states.get(&s).cloned(),
                    });
                    continue;
                }
            }
            let base = slice
                .base_file
                .clone()
                .ok_or_else(|| FormatError::Unsupported {
                    feature: "log-only file groups".into(),
                })?;
            let crate::write::status::OpenedFile { writer, name } = self
                .txn
                .new_base_file(
                    &slice.partition_path,
                    &slice.file_id,
                    &write_token(task),
                    self.schema.clone(),
                    &self.options.files,
                )
                .await?;
            jobs.push(RewriteJob {
                slice,
                base_path: base.rel_path,
                bucket: bucket.local(rows),
                incoming: batch,
                keys: take_keys(self.keys, rows)?,
                writer,
                file_name: name.name(),
                task,
            });
        }
        Ok((jobs, appends))
    }

    /// Runs one wave's rewrites and appends and records what they wrote. They share the
    /// cores: a rewrite (often one, the small file inserts fill) runs beside the appends, not
    /// before them; both end before either's error is returned, so no writer outlives a
    /// failed write.
    async fn run(
        &mut self,
        jobs: Vec<RewriteJob>,
        appends: Vec<append::AppendJob>,
        result: &mut UpsertResult,
    ) -> Result<()> {
        let permits = Arc::new(tokio::sync::Semaphore::new(crate::tasks::parallelism()));
        let table = self.txn.table().clone();
        let instant = self.txn.instant().to_string();
        let merges = run_rewrite_jobs(&table, self.schema, jobs, self.options, &instant, &permits);
        let logs = async {
            match self.mor {
                Some((ctx, _)) => run_append_jobs(ctx, appends, &permits).await,
                None => Ok(Vec::new()),
            }
        };
        let (merged, logged) = futures::future::join(merges, logs).await;
        let (merged, logged) = (merged?, logged?);
        for (stat, counts) in merged {
            self.txn.record_stat(stat);
            result.add(&counts);
            result.rewritten_file_groups += 1;
        }
        for (stat, counts) in logged {
            if stat.path.is_some() {
                self.txn.record_stat(stat);
                result.logged_file_groups += 1;
            }
            result.add(&counts);
        }
        Ok(())
    }
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
async fn run_rewrite_jobs(
    table: &crate::table::HudiTable,
    schema: &SchemaRef,
    jobs: Vec<RewriteJob>,
    options: &WriteSpec,
    instant: &str,
    permits: &Arc<tokio::sync::Semaphore>,
) -> Result<Vec<(WriteStat, ApplyCounts)>> {
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
                rewrite_file_group(&storage, &schema, job, &options, &instant).await
            }),
        ));
    }
    crate::tasks::join_writers(handles).await
}

/// One file group to rewrite, with its new file already opened.
struct RewriteJob {
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
mod rewrite;
mod route;
mod stored_state;

use rewrite::{rewrite_file_group, ApplyCounts};
