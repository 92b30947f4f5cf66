//! The routing of a keyed write's rows: one row per record (pre-combined), the file group
//! holding each record (the index lookup, or the meta columns of rows read from the table),
//! then what each touched file group takes and which rows open new file groups (inserts fill
//! small files of their partition first).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use arrow::array::{Array, StringArray};

use super::append::AppendContext;
use super::stored_state::{self, StoredState};
use super::{Bucket, UpsertResult};
use crate::concurrency::conflict::ReadSnapshot;
use crate::error::{FormatError, Result};
use crate::footer::read_footer_sized;
use crate::fs_view::FileSlice;
use crate::index::{tag_locations, KeyPositions};
use crate::table::HudiTable;
use crate::table_config::MergeMode;
use crate::timeline::Timeline;
use crate::write::incoming::{Incoming, Interned};
use crate::write::insert::{keep_last_by, precombine_values, GroupRows};
use crate::write::spec::{DupPolicy, WriteSpec};

/// The rows of `incoming` a keyed write keeps: one per record (greatest ordering value, ties
/// last; commit-time ordering: last). Without a global index a key may live in several
/// partitions: there a record is (partition path, key), as Hudi's HoodieKey, so rows for
/// different partitions stay apart.
pub(super) fn precombined(
    incoming: &Incoming,
    keys: &StringArray,
    options: &WriteSpec,
) -> Result<Vec<u32>> {
    let n = incoming.num_rows();
    let paths = incoming.paths();
    // under commit-time ordering the later row wins whatever its ordering value, as Hudi's
    // OverwriteWithLatest payload pre-combines
    let ordering = incoming
        .ordering()
        .filter(|_| options.merge_mode == MergeMode::EventTimeOrdering);
    Ok(if !options.precombine {
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
    })
}

/// The latest slices of the partitions the kept rows `keep` touch (every partition with a
/// global index).
pub(super) async fn slices_to_look_in(
    table: &HudiTable,
    timeline: &Timeline,
    paths: &Interned,
    keep: &[u32],
    options: &WriteSpec,
) -> Result<Vec<FileSlice>> {
    let all_slices = table.file_slices(timeline, None).await?;
    let touched: HashSet<&str> = keep.iter().map(|&i| paths.value(i as usize)).collect();
    Ok(all_slices
        .into_iter()
        .filter(|s| options.global_index || touched.contains(s.partition_path.as_str()))
        .collect())
}

/// What the routing of one keyed write reads: the table, the slices looked in, the write's
/// settings and, on merge-on-read, the appends' context.
pub(super) struct Lookup<'a> {
    pub table: &'a HudiTable,
    pub slices: &'a [FileSlice],
    pub options: &'a WriteSpec,
    pub mor: Option<&'a Arc<AppendContext>>,
    /// What the statement's scans saw, when it read the table first: a change set's base rows
    /// count rows of a base file only if that file's commit was complete then.
    pub read: Option<&'a ReadSnapshot>,
}

/// The rows of each new partition's inserts, by partition path.
pub(super) type Inserts = BTreeMap<String, Vec<u32>>;

/// Where [`Lookup::route_rows`] sent the kept rows.
pub(super) struct RoutedRows {
    /// What each touched slice (by its index in the slices) takes.
    pub buckets: BTreeMap<usize, Bucket>,
    /// The rows no slice holds, by partition.
    pub inserts: Inserts,
    /// Records moved to another partition: a delete plus an insert, counted as updates.
    pub moved: u64,
}

/// Where the kept rows' records are: each row's slice, the merged state of the merge-on-read
/// slices read on the way, and each found key's row in its slice's base file.
pub(super) type Located = (
    Vec<Option<usize>>,
    HashMap<usize, Arc<StoredState>>,
    BasePositions,
);

impl Lookup<'_> {
    /// The slice holding each kept row's record (by its index in the slices), and on
    /// merge-on-read the merged state of the slices read on the way: for rows read from the
    /// table, the file group their meta columns name; otherwise by index lookup, in the row's
    /// own partition (a non-global index keeps keys unique per partition only), or anywhere
    /// with a global index.
    pub(super) async fn locate(
        &self,
        incoming: &Incoming,
        keys: &StringArray,
        keep: &[u32],
        result: &mut UpsertResult,
    ) -> Result<Located> {
        let (slices, options, paths) = (self.slices, self.options, incoming.paths());
        let mut states = HashMap::new();
        if options.inserts_only {
            return Ok((vec![None; keep.len()], states, BasePositions::default()));
        }
        if options.prepped() {
            let files = incoming
                .base_files()
                .expect("a change set keeps its base file names");
            let rows = locate_prepped(keep, paths, files, slices)?;
            let mut positions = BasePositions::default();
            if let Some(ctx) = self.mor {
                states = stored_state::prepped_states(ctx, slices, incoming, keep, &rows).await?;
                if let Some(read) = self.read.filter(|_| incoming.has_base_rows()) {
                    // rows pre-combining dropped may be other copies of a kept row's key, and
                    // without pre-combining the kept rows may repeat a key
                    let repeats = match options.precombine && keep.len() == keys.len() {
                        true => None,
                        false => {
                            let all: Vec<u32> = (0..keys.len() as u32).collect();
                            let located = locate_prepped(&all, paths, files, slices)?;
                            Some(keys_at_two_rows(
                                slices.len(),
                                |i| incoming.base_row(i),
                                keys,
                                &all,
                                &located,
                            ))
                        }
                    };
                    positions = prepped_positions(slices, read, repeats);
                }
            }
            return Ok((rows, states, positions));
        }
        let mut sorted_keys: Vec<u32> = keep.to_vec();
        let key = |i: &u32| keys.value(*i as usize);
        sorted_keys.sort_by(|a, b| crate::bloom::java_string_cmp(key(a), key(b)));
        sorted_keys.dedup_by(|a, b| key(a) == key(b));
        let (mut located, by_key, lookup) =
            tag_locations(self.table.storage(), slices, keys, Arc::new(sorted_keys)).await?;
        result.lookup = lookup;
        if let Some(ctx) = self.mor {
            if let Some(spec) = &options.bucket {
                stored_state::bucket_log_candidates(spec, slices, keep, keys, paths, &mut located);
            }
            states = stored_state::live_locations(ctx, slices, &mut located).await?;
        }
        let rows = keep
            .iter()
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
            .collect();
        Ok((rows, states, BasePositions::Keys(by_key)))
    }

    /// Routes every kept row: to the bucket of the slice holding its record (an update, a
    /// delete, or a delete and an insert elsewhere when its partition changed), or to the
    /// inserts of its partition.
    pub(super) fn route_rows(
        &self,
        incoming: &Incoming,
        keys: &StringArray,
        keep: &[u32],
        row_slice: Vec<Option<usize>>,
        result: &mut UpsertResult,
    ) -> Result<RoutedRows> {
        let (options, paths) = (self.options, incoming.paths());
        let mut moved = 0u64;
        let mut buckets: BTreeMap<usize, Bucket> = BTreeMap::new();
        let mut inserts: Inserts = BTreeMap::new();
        for (&row, slice) in keep.iter().zip(row_slice) {
            let i = row as usize;
            let path = paths.value(i);
            let Some(s) = slice else {
                // deleting a missing key is a no-op
                if !incoming.is_delete(i) {
                    inserts.entry(path.to_string()).or_default().push(row);
                }
                continue;
            };
            match options.insert_dup_policy {
                Some(DupPolicy::Fail) => {
                    return Err(FormatError::DuplicateKey {
                        key: keys.value(i).to_string(),
                    })
                }
                Some(DupPolicy::Drop) => {
                    result.rows.dropped += 1;
                    continue;
                }
                Some(DupPolicy::None) | None => {}
            }
            let partition_changed = self.slices[s].partition_path != path;
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
        Ok(RoutedRows {
            buckets,
            inserts,
            moved,
        })
    }

    /// Lets the inserts of each partition fill its small files first (as inserts of those
    /// files' buckets); returns the rows of the new file groups the rest open.
    pub(super) async fn fill_small_files(
        &self,
        inserts: Inserts,
        buckets: &mut BTreeMap<usize, Bucket>,
    ) -> Result<Vec<GroupRows>> {
        let files = &self.options.files;
        let mut new_groups = Vec::new();
        for (partition, rows) in inserts {
            let mut rows = rows.as_slice();
            let candidates = self.small_files(&partition).await?;
            let avg = partition_record_size(&candidates, files.small_file_limit)
                .unwrap_or(files.record_size_estimate)
                .max(1);
            for (i, size, _) in candidates.into_iter().take(files.small_file_candidates) {
                if rows.is_empty() {
                    break;
                }
                let room = (files.max_file_size.saturating_sub(size) / avg) as usize;
                let n = room.min(rows.len());
                if n > 0 {
                    let bucket = buckets.entry(i).or_default();
                    bucket.inserts.extend_from_slice(&rows[..n]);
                    rows = &rows[n..];
                }
            }
            let per_file = (files.max_file_size / avg).max(1) as usize;
            for chunk in rows.chunks(per_file) {
                new_groups.push(GroupRows::new(partition.clone(), chunk.to_vec()));
            }
        }
        Ok(new_groups)
    }

    /// The small files of `partition`, smallest first: (slice index, size, row count). A
    /// slice with logs is never padded (Hudi's small-file rule for indexes that do not index
    /// log files).
    async fn small_files(&self, partition: &str) -> Result<Vec<(usize, u64, u64)>> {
        let mut candidates = Vec::new();
        for (i, s) in self.slices.iter().enumerate() {
            if s.partition_path != partition {
                continue;
            }
            if let (Some(b), true) = (&s.base_file, s.log_files.is_empty()) {
                if b.size < self.options.files.small_file_limit {
                    let meta = read_footer_sized(self.table.storage(), &b.rel_path, b.size).await?;
                    candidates.push((i, b.size, meta.file_metadata().num_rows().max(0) as u64));
                }
            }
        }
        candidates.sort_by_key(|c| c.1);
        Ok(candidates)
    }
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

/// The slices whose appends write the base-file rows a change set's rows carry
/// ([`BasePositions::Rows`]): those whose base file the statement's read saw complete, so that
/// the rows count rows of the file the slice has now (a compaction finished since gives its
/// group a new one), and not those where one key was read from two rows (`repeats`, see
/// `index::note_position`). Spark's prepped writes carry none; hoodie's scans know them, so its
/// UPDATE, DELETE and MERGE log blocks carry record positions as its upserts' do.
fn prepped_positions(
    slices: &[FileSlice],
    read: &ReadSnapshot,
    repeats: Option<Vec<bool>>,
) -> BasePositions {
    BasePositions::Rows(
        (slices.iter().enumerate())
            .filter(|(s, _)| !repeats.as_ref().is_some_and(|r| r[*s]))
            .filter(|(_, slice)| {
                slice.base_file.is_some() && read.saw_completed(&slice.base_instant)
            })
            .map(|(s, _)| s)
            .collect(),
    )
}

/// By slice, whether one of its keys comes with two different base-file rows (`base_row` of
/// a row) among the rows `rows` (located in `at`).
fn keys_at_two_rows(
    slices: usize,
    base_row: impl Fn(usize) -> Option<u64>,
    keys: &StringArray,
    rows: &[u32],
    at: &[Option<usize>],
) -> Vec<bool> {
    let mut seen: Vec<crate::tasks::FastMap<&str, u64>> = vec![Default::default(); slices];
    let mut repeated = vec![false; slices];
    for (&i, slice) in rows.iter().zip(at) {
        let (Some(s), Some(row)) = (*slice, base_row(i as usize)) else {
            continue;
        };
        if (seen[s].insert(keys.value(i as usize), row)).is_some_and(|old| old != row) {
            repeated[s] = true;
        }
    }
    repeated
}

/// Where an append finds the base-file row of each record it writes (table versions 8 and 9,
/// Hudi's record positions).
pub(super) enum BasePositions {
    /// By slice: the row of its base file holding each key the index lookup found there.
    Keys(KeyPositions),
    /// The rows carry their base-file rows (a change set read from the table); the slices
    /// (by index) whose appends write them.
    Rows(HashSet<usize>),
}

impl Default for BasePositions {
    fn default() -> Self {
        BasePositions::Keys(KeyPositions::new())
    }
}

impl BasePositions {
    /// The base-file row of each of `rows` routed to slice `slice` (`base_row` and `keys` of
    /// the write's rows), when its append writes positions.
    pub(super) fn of_rows(
        &self,
        slice: usize,
        rows: &[u32],
        base_row: impl Fn(usize) -> Option<u64>,
        keys: &StringArray,
    ) -> Option<Vec<Option<u64>>> {
        match self {
            BasePositions::Keys(by_slice) => {
                let by_key = by_slice.get(&slice)?;
                Some(
                    rows.iter()
                        .map(|&i| by_key.get(keys.value(i as usize)).copied())
                        .collect(),
                )
            }
            BasePositions::Rows(slices) => slices
                .contains(&slice)
                .then(|| rows.iter().map(|&i| base_row(i as usize)).collect()),
        }
    }
}

fn partition_record_size(candidates: &[(usize, u64, u64)], threshold: u64) -> Option<u64> {
    let (bytes, rows) = candidates
        .iter()
        .fold((0u64, 0u64), |(b, r), c| (b + c.1, r + c.2));
    (rows > 0 && bytes >= threshold).then(|| bytes / rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_at_two_rows_is_found_per_slice() {
        // rows 0..5: keys a b a c c, slices 0 0 0 1 1, base rows 1 2 1 3 4
        let keys = StringArray::from(vec!["a", "b", "a", "c", "c"]);
        let base = [Some(1), Some(2), Some(1), Some(3), Some(4)];
        let at = [Some(0), Some(0), Some(0), Some(1), Some(1)];
        let rows: Vec<u32> = (0..5).collect();
        let got = keys_at_two_rows(3, |i| base[i], &keys, &rows, &at);
        // `a` twice at one row is one record; `c` at rows 3 and 4 is two
        assert_eq!(got, vec![false, true, false]);
        // a row without a base row, or in no slice, is not compared
        let base = [Some(1), None, Some(1), Some(3), None];
        let got = keys_at_two_rows(3, |i| base[i], &keys, &rows, &at);
        assert_eq!(got, vec![false, false, false]);
        let at = [Some(0), Some(0), Some(0), None, Some(1)];
        let base = [Some(1), Some(2), Some(1), Some(3), Some(4)];
        let got = keys_at_two_rows(3, |i| base[i], &keys, &rows, &at);
        assert_eq!(got, vec![false, false, false]);
    }

    #[test]
    fn positions_come_by_key_or_by_the_rows_own_base_row() {
        let keys = StringArray::from(vec!["a", "b", "c"]);
        let base = [Some(9), None, Some(4)];
        let mut found = crate::index::RowsOfKeys::default();
        found.insert("c".to_string(), 5);
        let by_key = BasePositions::Keys(HashMap::from([(1, found)]));
        assert_eq!(
            by_key.of_rows(1, &[2, 0], |i| base[i], &keys),
            Some(vec![Some(5), None]),
            "by key: the index's row, not the row's own"
        );
        assert_eq!(by_key.of_rows(0, &[2], |i| base[i], &keys), None);
        let by_row = BasePositions::Rows(HashSet::from([1]));
        assert_eq!(
            by_row.of_rows(1, &[2, 1, 0], |i| base[i], &keys),
            Some(vec![Some(4), None, Some(9)])
        );
        assert_eq!(by_row.of_rows(0, &[2], |i| base[i], &keys), None);
    }
}
