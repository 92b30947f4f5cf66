//! Merging a slice's logs into its base file by record position (Hudi 1.x's
//! `PositionBasedFileGroupRecordBuffer`): when every admitted block of the slice says which
//! rows of the slice's base file its records change (`RECORD_POSITIONS`, counted in the base
//! file whose instant `BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS` names), a base record meets
//! its logged changes by its row number, and the base file's keys are neither hashed nor, when
//! the query does not ask for them, decoded.
//!
//! A slice merges by position only when all of its blocks' positions are usable: a block
//! without them, or with positions of another base file (written before a compaction
//! re-sliced the group) makes the whole slice merge by key, as Java falls back for the whole
//! file group. Positions that contradict each other (one key at two rows, two keys at one
//! row) also fall back: keys are always right, positions only save work.

use super::read::Positioned;

/// Collects the position of every logged change while the logs are read into key states.
pub(super) struct Collector<'a> {
    base_instant: &'a str,
    /// `(row of the base file, key state)`.
    pairs: Vec<(u64, u32)>,
    usable: bool,
}

impl<'a> Collector<'a> {
    /// A collector for a slice whose base file has instant `base_instant`.
    pub fn new(base_instant: &'a str) -> Self {
        Self {
            base_instant,
            pairs: Vec::new(),
            usable: true,
        }
    }

    /// The positions of a block of `records` records (`block` its positions, if it has any),
    /// when they are usable; otherwise the slice merges by key.
    pub fn block<'p>(&mut self, block: Option<&'p Positioned>, records: usize) -> &'p [u64] {
        match block {
            Some(p) if self.usable && p.base_instant == self.base_instant => {
                if p.rows.len() == records {
                    return &p.rows;
                }
                self.usable = false;
            }
            _ => self.usable = false,
        }
        &[]
    }

    /// Records that the change of key state `state` (`None`: a key no base record can hold)
    /// is at row `row` of the base file.
    pub fn add(&mut self, row: u64, state: Option<u32>) {
        match state {
            Some(s) if self.usable => self.pairs.push((row, s)),
            _ => self.usable = false,
        }
    }

    /// The index of the slice's positions, `states` key states in all; `None` when the slice
    /// merges by key.
    pub fn finish(mut self, states: usize) -> Option<PositionIndex> {
        if !self.usable || self.pairs.is_empty() {
            return None;
        }
        self.pairs.sort_unstable();
        self.pairs.dedup();
        let mut row_of = vec![u64::MAX; states];
        for w in self.pairs.windows(2) {
            if w[0].0 == w[1].0 {
                return None; // two keys at one row
            }
        }
        for &(row, s) in &self.pairs {
            let at = row_of.get_mut(s as usize)?;
            if *at != u64::MAX {
                return None; // one key at two rows
            }
            *at = row;
        }
        if row_of.contains(&u64::MAX) {
            return None; // a key whose changes carry no position
        }
        Some(PositionIndex {
            entries: self.pairs,
            next: 0,
            base_row: 0,
        })
    }
}

/// The key state of each base row the logs change, in row order, and how far the base file
/// was read.
#[derive(Debug)]
pub(super) struct PositionIndex {
    entries: Vec<(u64, u32)>,
    /// The first entry not yet met.
    next: usize,
    /// The row number of the next base record.
    base_row: u64,
}

impl PositionIndex {
    /// The row number the next `n` base records start at, and the changed rows among them as
    /// `(row of the base file, key state)` in row order; the batch is then counted as read.
    pub fn next_batch(&mut self, n: usize) -> (u64, &[(u64, u32)]) {
        let start = self.base_row;
        let end = start + n as u64;
        self.base_row = end;
        let first = self.next;
        while self.next < self.entries.len() && self.entries[self.next].0 < end {
            self.next += 1;
        }
        (start, &self.entries[first..self.next])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn positioned(base: &str, rows: &[u64]) -> Positioned {
        Positioned {
            base_instant: base.into(),
            rows: rows.to_vec(),
        }
    }

    #[test]
    fn consistent_positions_make_an_index_in_row_order() {
        let p = positioned("100", &[2, 7]);
        let q = positioned("100", &[7]);
        let mut c = Collector::new("100");
        let rows = c.block(Some(&p), 2).to_vec();
        c.add(rows[0], Some(1));
        c.add(rows[1], Some(0));
        let rows = c.block(Some(&q), 1).to_vec();
        c.add(rows[0], Some(0)); // the same key again, at the same row
        let mut idx = c.finish(2).expect("positions are usable");
        assert_eq!(idx.next_batch(5), (0, &[(2, 1)][..]));
        assert_eq!(idx.next_batch(5), (5, &[(7, 0)][..]));
        assert_eq!(idx.next_batch(5), (10, &[][..]));
    }

    #[test]
    fn a_block_without_usable_positions_makes_the_slice_merge_by_key() {
        let p = positioned("100", &[2]);
        let older = positioned("050", &[2]);
        for block in [None, Some(&older)] {
            let mut c = Collector::new("100");
            let rows = c.block(Some(&p), 1).to_vec();
            c.add(rows[0], Some(0));
            assert!(c.block(block, 1).is_empty());
            assert!(c.finish(1).is_none());
        }
        // fewer positions than records
        let mut c = Collector::new("100");
        assert!(c.block(Some(&p), 2).is_empty());
        assert!(c.finish(1).is_none());
    }

    #[test]
    fn contradicting_positions_make_the_slice_merge_by_key() {
        // two keys at one row
        let mut c = Collector::new("100");
        c.add(3, Some(0));
        c.add(3, Some(1));
        assert!(c.finish(2).is_none());
        // one key at two rows
        let mut c = Collector::new("100");
        c.add(3, Some(0));
        c.add(4, Some(0));
        assert!(c.finish(1).is_none());
        // a key no base record can hold
        let mut c = Collector::new("100");
        c.add(3, None);
        assert!(c.finish(1).is_none());
        // a key state without a position
        let mut c = Collector::new("100");
        c.add(3, Some(0));
        assert!(c.finish(2).is_none());
    }
}
