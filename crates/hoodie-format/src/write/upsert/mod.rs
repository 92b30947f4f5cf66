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
use crate::write::insert::{write_new_file_groups, GroupRows};
use crate::write::spec::WriteSpec;
use crate::write::status::RowCounts;
use crate::write::transaction::Transaction;

/// What a keyed write did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpsertResult {
    /// What it did to the records and file groups (dropped: by a duplicate policy, or older
    /// than the stored record).
    pub rows: RowCounts,
    /// The index lookup.
    pub lookup: LookupStats,
}

impl UpsertResult {
    /// Rows the statement affected (inserted + updated + deleted).
    pub fn affected(&self) -> u64 {
        self.rows.inserted + self.rows.updated + self.rows.deleted
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
    // the inserted rows are usually the fewer: hash them, probe with the stored ones
    let record = |i: usize| (paths.id(i), keys.value(i));
    let mut inserts =
        crate::tasks::FastSet::with_capacity_and_hasher(inserted.len(), Default::default());
    inserts.extend(inserted.iter().map(|&i| record(i)));
    let stored_too: HashSet<_> = (0..incoming.num_rows())
        .filter(|&i| files.id(i) != u32::MAX && inserts.contains(&record(i)))
        .map(record)
        .collect();
    // the first inserted row whose record is also stored
    match (inserted.iter().copied()).find(|&i| stored_too.contains(&record(i))) {
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
/// routed to file groups ([`route_upserts`]), then the touched groups rewritten or logged and
/// the new ones written, a wave of tasks at a time, all in this process.
///
/// [`KeySource::Keep`]: crate::write::incoming::KeySource::Keep
/// [`KeySource::Prepped`]: crate::write::incoming::KeySource::Prepped
pub async fn write_upserts(
    txn: &mut Transaction,
    schema: &SchemaRef,
    incoming: Incoming,
    options: &WriteSpec,
) -> Result<UpsertResult> {
    let mut tasks = route_upserts(txn, schema, incoming, options).await?;
    let mut rows = RowCounts::default();
    while let Some(wave) = tasks.next_wave()? {
        rows.add(&waves::run_wave(txn, schema, options, wave).await?);
    }
    Ok(tasks.finish(&rows))
}

/// Routes a keyed write's rows (as [`write_upserts`] takes them) to file groups: its keys
/// pre-combined and looked up in the table, the incoming rows assigned to the groups holding
/// their keys, the inserts to small files or new groups. The result hands out the writers'
/// [`FileGroupTask`]s.
pub async fn route_upserts(
    txn: &Transaction,
    schema: &SchemaRef,
    mut incoming: Incoming,
    options: &WriteSpec,
) -> Result<UpsertTasks> {
    let mut result = UpsertResult::default();
    if incoming.num_rows() == 0 {
        return Ok(UpsertTasks::empty(incoming, schema, options));
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
        read: txn.statement_read(),
    };
    let (row_slice, states, positions) =
        lookup.locate(&incoming, &keys, &keep, &mut result).await?;
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
        mor: mor.map(|_| MorWrite { states, positions }),
    };
    Ok(UpsertTasks::new(incoming, schema, routed, result, options))
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
        crate::TableType::MergeOnRead => Some(Arc::new(append::AppendContext::new(
            table,
            schema,
            options,
            instant,
            crate::log::read::Admission::of(timeline, None),
        )?)),
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

/// What a merge-on-read write's appends share: the merged state of the slices it read, and
/// where they find the base-file rows of the records they write.
struct MorWrite {
    states: HashMap<usize, Arc<stored_state::StoredState>>,
    positions: route::BasePositions,
}

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

/// The record keys of rows `rows`.
fn take_keys(keys: &StringArray, rows: &[u32]) -> Result<StringArray> {
    Ok(
        arrow::compute::take(keys, &UInt32Array::from(rows.to_vec()), None)?
            .as_string::<i32>()
            .clone(),
    )
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
mod task;
mod waves;

pub use task::FileGroupTask;
pub use waves::UpsertTasks;
