//! Tag location: which file group already holds each incoming record key.
//!
//! Per candidate base file: the min/max record key range of its footer, then its bloom filter,
//! then an exact check against its `_hoodie_record_key` column. Only files that pass the first
//! two steps for some incoming key are read.

use std::collections::HashMap;

use crate::base_file::read_record_keys;
use crate::bloom::{self, HoodieBloomFilter};
use crate::error::{FormatError, Result};
use crate::footer::{footer_value, read_footer};
use crate::fs_view::FileSlice;
use crate::storage::TableStorage;

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

/// Finds the slices (indices into `slices`) holding each of `keys` (sorted, deduplicated); a
/// key is in several slices when a non-global index let it exist in several partitions.
pub async fn tag_locations(
    storage: &TableStorage,
    slices: &[FileSlice],
    keys: &[&str],
) -> Result<(HashMap<String, Vec<usize>>, LookupStats)> {
    let mut found: HashMap<String, Vec<usize>> = HashMap::new();
    let mut stats = LookupStats::default();
    if keys.is_empty() {
        return Ok((found, stats));
    }
    for (i, slice) in slices.iter().enumerate() {
        let Some(base) = &slice.base_file else {
            continue;
        };
        stats.candidates += 1;
        let footer = read_footer(storage, &base.rel_path).await?;
        let min = footer_value(&footer, bloom::MIN_RECORD_KEY_FOOTER_KEY);
        let max = footer_value(&footer, bloom::MAX_RECORD_KEY_FOOTER_KEY);
        // keys within [min, max]; files without the range are checked in full
        let (lo, hi) = match (min, max) {
            (Some(min), Some(max)) => (
                keys.partition_point(|k| bloom::java_string_cmp(k, min).is_lt()),
                keys.partition_point(|k| bloom::java_string_cmp(k, max).is_le()),
            ),
            _ => (0, keys.len()),
        };
        if lo >= hi {
            continue;
        }
        stats.in_range += 1;
        let in_range = &keys[lo..hi];
        let candidates: Vec<&str> = match footer_value(&footer, bloom::BLOOM_FILTER_FOOTER_KEY) {
            Some(b64) => {
                let filter = HoodieBloomFilter::from_footer(
                    b64,
                    footer_value(&footer, bloom::BLOOM_FILTER_TYPE_CODE_KEY),
                )
                .map_err(|source| FormatError::Bloom {
                    path: base.rel_path.clone(),
                    source,
                })?;
                in_range
                    .iter()
                    .copied()
                    .filter(|k| filter.might_contain(k))
                    .collect()
            }
            None => in_range.to_vec(),
        };
        if candidates.is_empty() {
            continue;
        }
        stats.bloom_hits += 1;
        stats.files_read += 1;
        let file_keys = read_record_keys(storage, &base.rel_path).await?;
        let present: std::collections::HashSet<&str> = file_keys.iter().flatten().collect();
        for k in candidates {
            if present.contains(k) {
                found.entry(k.to_string()).or_default().push(i);
            }
        }
    }
    Ok((found, stats))
}
