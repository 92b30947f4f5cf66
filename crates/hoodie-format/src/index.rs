//! Tag location: which file group already holds each incoming record key.
//!
//! Per candidate base file: the min/max record key range of its footer, then its bloom filter,
//! then an exact check against its `_hoodie_record_key` column. Only files that pass the first
//! two steps for some incoming key are read.

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::StringArray;

use crate::base_file::read_record_keys;
use crate::bloom::{self, HoodieBloomFilter};
use crate::error::{FormatError, Result};
use crate::footer::{footer_value, read_footer_sized};
use crate::fs_view::FileSlice;
use crate::storage::TableStorage;
use crate::tasks::FastMap;

/// What the index lookup did (for tests and EXPLAIN ANALYZE-like reporting).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LookupStats {
    /// Candidate base files considered.
    pub candidates: usize,
    /// Files whose key range held an incoming key.
    pub in_range: usize,
    /// Files whose bloom filter said "maybe" for some key.
    pub bloom_hits: usize,
    /// Files whose key column was read.
    pub files_read: usize,
}

/// Per slice (index into the slices looked in), the row of its base file that holds each key
/// found there: the record positions a merge-on-read log block of updates carries.
pub type KeyPositions = HashMap<usize, RowsOfKeys>;

/// The row of a base file that holds each key (of the keys looked for).
pub type RowsOfKeys = crate::tasks::FastMap<String, u64>;

/// Finds the slices (indices into `slices`) holding each of the keys `sorted` names (rows of
/// `keys`, ordered by [`bloom::java_string_cmp`] and deduplicated); a key is in several slices
/// when a non-global index let it exist in several partitions. The files are checked on
/// tasks, as many at once as there are cores. Also gives each found key's row in its base file.
pub async fn tag_locations(
    storage: &TableStorage,
    slices: &[FileSlice],
    keys: &StringArray,
    sorted: Arc<Vec<u32>>,
) -> Result<(HashMap<String, Vec<usize>>, KeyPositions, LookupStats)> {
    let mut found: HashMap<String, Vec<usize>> = HashMap::new();
    let mut positions = KeyPositions::new();
    // slices whose base file holds a key twice (see `note_position`)
    let mut duplicated: std::collections::HashSet<usize> = Default::default();
    let mut stats = LookupStats::default();
    if sorted.is_empty() {
        return Ok((found, positions, stats));
    }
    let permits = Arc::new(tokio::sync::Semaphore::new(crate::tasks::parallelism()));
    let mut handles = Vec::new();
    let mut file_slices = Vec::new();
    for (i, slice) in slices.iter().enumerate() {
        let Some(base) = &slice.base_file else {
            continue;
        };
        stats.candidates += 1;
        let (storage, rel, size, keys, sorted, permits) = (
            storage.clone(),
            base.rel_path.clone(),
            base.size,
            keys.clone(),
            sorted.clone(),
            permits.clone(),
        );
        handles.push((
            rel.clone(),
            tokio::spawn(async move {
                let _permit = permits.acquire_owned().await;
                lookup_file(&storage, &rel, size, &keys, &sorted).await
            }),
        ));
        file_slices.push(i);
    }
    for (file, slice) in crate::tasks::join_writers(handles)
        .await?
        .into_iter()
        .zip(file_slices)
    {
        stats.in_range += usize::from(file.in_range);
        stats.bloom_hits += usize::from(file.bloom_hit);
        stats.files_read += usize::from(file.bloom_hit);
        positions.entry(slice).or_default();
        for (k, row) in file.found {
            let key = keys.value(k as usize);
            found.entry(key.to_string()).or_default().push(slice);
            if !note_position(&mut positions, slice, key, row) {
                duplicated.insert(slice);
            }
        }
    }
    positions.retain(|slice, _| !duplicated.contains(slice));
    Ok((found, positions, stats))
}

/// Notes that `key`'s record is at `row` of slice `slice`'s base file; `false` when the key
/// was at another row of it (a base file with duplicate keys, which an INSERT without
/// pre-combining writes): the slice's block must then carry no positions, since merging it by
/// position would change one copy of the key where merging by key changes every copy.
pub(crate) fn note_position(
    positions: &mut KeyPositions,
    slice: usize,
    key: &str,
    row: u64,
) -> bool {
    let rows = positions.entry(slice).or_default();
    rows.insert(key.to_string(), row)
        .is_none_or(|old| old == row)
}

/// What the lookup found in one base file.
struct FileLookup {
    /// Its key range held an incoming key.
    in_range: bool,
    /// Its bloom filter said "maybe" for some key (and its key column was read).
    bloom_hit: bool,
    /// The rows of the incoming keys it holds, each with its row in the file.
    found: Vec<(u32, u64)>,
}

/// Checks the incoming keys against one base file: footer key range, bloom filter, then its
/// record key column.
async fn lookup_file(
    storage: &TableStorage,
    rel_path: &str,
    size: u64,
    keys: &StringArray,
    sorted: &[u32],
) -> Result<FileLookup> {
    let mut out = FileLookup {
        in_range: false,
        bloom_hit: false,
        found: Vec::new(),
    };
    let footer = read_footer_sized(storage, rel_path, size).await?;
    let min = footer_value(&footer, bloom::MIN_RECORD_KEY_FOOTER_KEY);
    let max = footer_value(&footer, bloom::MAX_RECORD_KEY_FOOTER_KEY);
    let key = |i: &u32| keys.value(*i as usize);
    // keys within [min, max]; files without the range are checked in full
    let (lo, hi) = match (min, max) {
        (Some(min), Some(max)) => (
            sorted.partition_point(|k| bloom::java_string_cmp(key(k), min).is_lt()),
            sorted.partition_point(|k| bloom::java_string_cmp(key(k), max).is_le()),
        ),
        _ => (0, sorted.len()),
    };
    if lo >= hi {
        return Ok(out);
    }
    out.in_range = true;
    let in_range = &sorted[lo..hi];
    // the keys that may be in the file, by value
    let mut candidates: FastMap<&str, u32> = FastMap::default();
    match footer_value(&footer, bloom::BLOOM_FILTER_FOOTER_KEY) {
        Some(b64) => {
            let filter = HoodieBloomFilter::from_footer(
                b64,
                footer_value(&footer, bloom::BLOOM_FILTER_TYPE_CODE_KEY),
            )
            .map_err(|source| FormatError::Bloom {
                path: rel_path.to_string(),
                source,
            })?;
            candidates.extend(
                in_range
                    .iter()
                    .filter(|k| filter.might_contain(key(k)))
                    .map(|k| (key(k), *k)),
            );
        }
        None => candidates.extend(in_range.iter().map(|k| (key(k), *k))),
    }
    if candidates.is_empty() {
        return Ok(out);
    }
    out.bloom_hit = true;
    let file_keys = read_record_keys(storage, rel_path).await?;
    for (row, stored) in file_keys.iter().enumerate() {
        if let Some(&k) = stored.and_then(|s| candidates.get(s)) {
            out.found.push((k, row as u64));
        }
    }
    Ok(out)
}
