//! Precedence, Hudi's record-merge rule: which of two versions of one record is kept. Every path
//! that meets two versions (the copy-on-write rewrite and its column splice, the merge-on-read
//! append, the log replay of reads and compaction) decides through [`newer_wins`], so the rule
//! is written once.

use std::cmp::Ordering;

use arrow::array::DynComparator;

/// Whether the newer version of a record wins over the older one, their ordering values
/// comparing as `order` (None: they do not compare). Under event-time ordering Hudi keeps the
/// older (stored) version only when the newer one's ordering value is less
/// (`DefaultHoodieRecordPayload`, the event-time record applier): equal values let the newer
/// one through.
pub fn newer_wins(order: Option<Ordering>) -> bool {
    order != Some(Ordering::Less)
}

/// [`newer_wins`] for incoming row `incoming` over stored row `stored`, `ordering` comparing
/// the incoming rows' ordering values with the stored rows' (None: commit-time ordering, where
/// the incoming row always wins).
pub(crate) fn incoming_wins(
    ordering: Option<&DynComparator>,
    incoming: usize,
    stored: usize,
) -> bool {
    ordering.is_none_or(|cmp| newer_wins(Some(cmp(incoming, stored))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{make_comparator, Int64Array};
    use arrow::compute::SortOptions;

    #[test]
    fn the_newer_version_wins_unless_its_ordering_value_is_less() {
        assert!(newer_wins(Some(Ordering::Greater)));
        assert!(newer_wins(Some(Ordering::Equal)));
        assert!(!newer_wins(Some(Ordering::Less)));
        // values that do not compare (a NULL, another type) let the newer version through
        assert!(newer_wins(None));
        let incoming = Int64Array::from(vec![1, 5, 9]);
        let stored = Int64Array::from(vec![5]);
        let cmp = make_comparator(&incoming, &stored, SortOptions::default()).unwrap();
        let wins: Vec<bool> = (0..3).map(|i| incoming_wins(Some(&cmp), i, 0)).collect();
        assert_eq!(wins, vec![false, true, true]);
        // commit-time ordering: the incoming row always wins
        assert!(incoming_wins(None, 0, 0));
    }
}
