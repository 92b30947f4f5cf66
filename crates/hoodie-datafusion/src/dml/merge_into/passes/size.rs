//! How many passes `auto` takes, from the source's size as the join would hold it.

use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::datatypes::DataType;

/// The most passes `auto` chooses (each pass reads the kept source and the target's keys).
pub const MAX_AUTO_PASSES: u32 = 64;

/// How many passes `auto` takes for a source of `source_bytes` (plain Arrow bytes) under a pool
/// of `limit` bytes: enough that twice a pass's share of the source fits a quarter of the pool.
/// DataFusion's hash join holds about twice the plain bytes of its build side (its batches, a
/// copy while it concatenates them, the hash table); while the passes run the sink keeps at
/// most another quarter of rows in memory (it spills beyond), and the rest is left to the probe
/// side, the repartitioning buffers and the routing columns.
pub fn auto_passes(limit: usize, source_bytes: usize) -> u32 {
    let per_pass = (limit / 4).max(1) as u128;
    let need = source_bytes as u128 * 2;
    need.div_ceil(per_pass)
        .clamp(1, u128::from(MAX_AUTO_PASSES)) as u32
}

/// The bytes of a batch's values as plain arrays: string and binary views count as the values
/// they point to plus an offset each (a pass casts them so; the page buffers a view array
/// shares with the rows filtered out are not the rows' size).
pub fn plain_bytes(batch: &RecordBatch) -> usize {
    batch.columns().iter().map(array_bytes).sum()
}

fn array_bytes(array: &ArrayRef) -> usize {
    let view_lengths = |views: &[u128]| -> usize {
        views.iter().map(|v| *v as u32 as usize).sum::<usize>() + 4 * views.len()
    };
    let nulls = array.nulls().map_or(0, |n| n.buffer().len());
    match array.data_type() {
        DataType::Utf8View => view_lengths(array.as_string_view().views()) + nulls,
        DataType::BinaryView => view_lengths(array.as_binary_view().views()) + nulls,
        _ => array
            .to_data()
            .get_slice_memory_size()
            .unwrap_or_else(|_| array.get_array_memory_size()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Int64Array, StringArray, StringViewArray};
    use datafusion::arrow::datatypes::{Field, Schema};
    use std::sync::Arc;

    #[test]
    fn auto_takes_enough_passes_for_a_quarter_of_the_pool() {
        // 12 MB under 8 MiB: 24 MB needed, 2 MiB a pass
        assert_eq!(auto_passes(8 << 20, 12_000_000), 12);
        assert_eq!(auto_passes(1 << 30, 1 << 20), 1);
        assert_eq!(auto_passes(1 << 30, 0), 1);
        assert_eq!(auto_passes(1 << 10, 1 << 30), MAX_AUTO_PASSES);
    }

    #[test]
    fn views_count_the_values_they_point_to_not_the_buffers_they_share() {
        let long = "x".repeat(100);
        let all = StringViewArray::from_iter_values((0..1000).map(|_| long.as_str()));
        let kept = all.slice(0, 10);
        let schema = Arc::new(Schema::new(vec![
            Field::new("s", DataType::Utf8View, false),
            Field::new("p", DataType::Utf8, false),
            Field::new("i", DataType::Int64, false),
        ]));
        let plain = StringArray::from_iter_values((0..10).map(|_| long.as_str()));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(kept),
                Arc::new(plain),
                Arc::new(Int64Array::from_iter_values(0..10)),
            ],
        )
        .unwrap();
        // 10 views of 100 bytes + offsets; the Utf8 slice the same plus one offset; 10 i64
        let bytes = plain_bytes(&batch);
        assert!((2000..2200).contains(&bytes), "{bytes}");
    }
}
