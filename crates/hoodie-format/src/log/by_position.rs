//! Merging a slice's logs into its base file by record position (Hudi 1.x's
//! `PositionBasedFileGroupRecordBuffer`): when every admitted block of the slice says which
//! rows of the slice's base file its records change (`RECORD_POSITIONS`, counted in the base
//! file whose instant `BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS` names), the logged changes
//! are gathered by the row they name and a base record meets them by its row number: neither
//! the logged keys nor the base file's keys are hashed, and the base file's keys are not
//! decoded when the query does not ask for them.
//!
//! A slice merges by position only when all of its blocks' positions are usable: a block
//! without them, or with positions of another base file (written before a compaction
//! re-sliced the group) makes the whole slice merge by key, as Java falls back for the whole
//! file group. Two keys' changes naming one row also fall back (keys are always right,
//! positions only save work); changes of one key naming two rows change both rows, as
//! Hudi's reader, which keys its buffer by position, has it.

use arrow::array::{Array, Int64Array, StringArray};

use super::keys::{int_of_key, KeySource, RecordKeys};
use super::logged::{Change, KeyState};
use super::read::{LogContent, Positioned};
use crate::error::{FormatError, Result};

/// The key states of a slice's logged changes (`contents`, oldest first, `positioned` their
/// blocks' positions), one per base row the changes name, and the index of those rows; `None`
/// when the slice merges by key: a block with records lacks positions counted in the base file
/// of instant `base_instant`, a key of an integer-keyed table is no integer's text (it changes
/// no record), or two keys' changes name one row.
pub(super) fn place(
    contents: &[LogContent],
    positioned: &[Option<Positioned>],
    base_instant: &str,
    source: &KeySource,
) -> Result<Option<(Vec<KeyState>, PositionIndex)>> {
    let mut blocks = Vec::with_capacity(contents.len());
    let mut first_row = 0u32;
    for (c, at) in contents.iter().zip(positioned) {
        let n = c.records();
        let rows = match at {
            _ if n == 0 => &[][..],
            Some(p) if p.base_instant == base_instant && p.rows.len() == n => &p.rows[..],
            _ => return Ok(None),
        };
        let Some(keys) = BlockKeys::of(c, source)? else {
            return Ok(None);
        };
        blocks.push((rows, keys, first_row));
        if !matches!(c, LogContent::Deletes(_)) {
            first_row += n as u32;
        }
    }
    let records = contents.iter().map(LogContent::records).sum();
    let mut placer = Placer {
        entries: Vec::new(),
        states: Vec::with_capacity(records),
        origin: Vec::with_capacity(records),
    };
    for (b, (c, (rows, _, first_row))) in contents.iter().zip(&blocks).enumerate() {
        let change = |r: usize| match c {
            LogContent::Deletes(d) => Change::Deleted(d[r].ordering.clone()),
            _ => Change::Row(first_row + r as u32),
        };
        if !placer.block(b as u32, rows, &blocks, change) {
            return Ok(None);
        }
    }
    let Placer {
        entries, states, ..
    } = placer;
    let index = PositionIndex {
        entries,
        next: 0,
        base_row: 0,
    };
    Ok(Some((states, index)))
}

/// The record keys of one block's records, all as integers (integer-keyed tables) or all as
/// text.
enum BlockKeys<'a> {
    Int(Int64Array),
    Text(StringArray),
    Names(Vec<&'a str>),
}

impl<'a> BlockKeys<'a> {
    /// The keys of `content`'s records; `None` when a text key of an integer-keyed table is no
    /// integer's text.
    fn of(content: &'a LogContent, source: &KeySource) -> Result<Option<Self>> {
        let texts: Vec<&str> = match content {
            LogContent::Rows(b) => {
                return Ok(Some(match source.keys(b)? {
                    RecordKeys::Int(a) if a.null_count() > 0 => {
                        return Err(FormatError::NullRecordKey {
                            field: source.column().unwrap_or(crate::meta::RECORD_KEY).into(),
                            value: "null",
                        })
                    }
                    RecordKeys::Int(a) => BlockKeys::Int(a),
                    RecordKeys::Text(a) => BlockKeys::Text(a),
                }))
            }
            LogContent::Partial(p) if !source.is_int() => {
                return Ok(Some(BlockKeys::Text(p.keys.clone())))
            }
            LogContent::Partial(p) => (0..p.keys.len()).map(|r| p.keys.value(r)).collect(),
            LogContent::Deletes(d) => d.iter().map(|d| d.record_key.as_str()).collect(),
        };
        if !source.is_int() {
            return Ok(Some(BlockKeys::Names(texts)));
        }
        let ints: Option<Vec<i64>> = texts.into_iter().map(int_of_key).collect();
        Ok(ints.map(|v| BlockKeys::Int(v.into())))
    }

    /// Whether record `r` of these keys and record `s` of `other` have the same key.
    fn same(&self, r: usize, other: &BlockKeys, s: usize) -> bool {
        match (self, other) {
            (BlockKeys::Int(a), BlockKeys::Int(b)) => a.value(r) == b.value(s),
            (BlockKeys::Int(_), _) | (_, BlockKeys::Int(_)) => false,
            _ => self.text(r) == other.text(s),
        }
    }

    fn text(&self, r: usize) -> &str {
        match self {
            BlockKeys::Text(a) => a.value(r),
            BlockKeys::Names(v) => v[r],
            BlockKeys::Int(_) => "",
        }
    }
}

/// Gathers the logged changes by the base row they name, block after block.
struct Placer {
    /// `(row of the base file, key state)`, in row order.
    entries: Vec<(u64, u32)>,
    states: Vec<KeyState>,
    /// Per key state, the block and record its first change came from.
    origin: Vec<(u32, u32)>,
}

type Block<'a> = (&'a [u64], BlockKeys<'a>, u32);

impl Placer {
    /// Adds the changes of block `b` of `blocks` (`change` makes its record `r`'s change);
    /// false when one of them names a row another key's change names.
    fn block(
        &mut self,
        b: u32,
        rows: &[u64],
        blocks: &[Block],
        change: impl Fn(usize) -> Change,
    ) -> bool {
        let keys = &blocks[b as usize].1;
        let mut order: Vec<usize> = (0..rows.len()).collect();
        if !rows.windows(2).all(|w| w[0] < w[1]) {
            order.sort_by_key(|&r| rows[r]);
        }
        let old = std::mem::take(&mut self.entries);
        let mut merged = Vec::with_capacity(old.len() + rows.len());
        let mut i = 0;
        for r in order {
            let row = rows[r];
            while i < old.len() && old[i].0 < row {
                merged.push(old[i]);
                i += 1;
            }
            if i < old.len() && old[i].0 == row {
                merged.push(old[i]);
                i += 1;
            }
            match merged.last() {
                Some(&(at, s)) if at == row => {
                    let (ob, or) = self.origin[s as usize];
                    if !blocks[ob as usize].1.same(or as usize, keys, r) {
                        return false; // two keys at one row
                    }
                    self.states[s as usize].later.push(change(r));
                }
                _ => {
                    let s = self.states.len() as u32;
                    self.states.push(KeyState::new(change(r)));
                    self.origin.push((b, r as u32));
                    merged.push((row, s));
                }
            }
        }
        merged.extend_from_slice(&old[i..]);
        self.entries = merged;
        true
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

impl PositionIndex {
    /// Bytes the index holds.
    pub fn memory_size(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<(u64, u32)>()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::RecordBatch;
    use arrow::datatypes::{DataType, Field, Schema};

    use super::*;
    use crate::log::delete::{DeleteRecord, OrderingValue};

    fn ids(keys: &[i64]) -> LogContent {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)]));
        let col = Arc::new(Int64Array::from(keys.to_vec()));
        LogContent::Rows(RecordBatch::try_new(schema, vec![col]).unwrap())
    }

    fn deletes(keys: &[&str]) -> LogContent {
        LogContent::Deletes(
            keys.iter()
                .map(|k| DeleteRecord {
                    record_key: k.to_string(),
                    partition_path: String::new(),
                    ordering: OrderingValue::Int(0),
                })
                .collect(),
        )
    }

    fn at(base: &str, rows: &[u64]) -> Option<Positioned> {
        Some(Positioned {
            base_instant: base.into(),
            rows: rows.to_vec(),
        })
    }

    fn placed(
        contents: &[LogContent],
        positioned: &[Option<Positioned>],
    ) -> Option<(Vec<KeyState>, PositionIndex)> {
        place(
            contents,
            positioned,
            "100",
            &KeySource::IntColumn("id".into()),
        )
        .unwrap()
    }

    /// Each key state's changes: `r<row>` a logged row, `d` a delete.
    fn changes(states: &[KeyState]) -> Vec<String> {
        let one = |c: &Change| match c {
            Change::Row(r) => format!("r{r}"),
            Change::Deleted(_) => "d".into(),
        };
        (states.iter())
            .map(|s| s.changes().map(one).collect::<Vec<_>>().join(","))
            .collect()
    }

    #[test]
    fn the_changes_of_each_row_gather_in_row_order_and_log_order() {
        // block 1 changes rows 7 and 2 (keys 70, 20, the block's rows out of row order),
        // block 2 deletes key 70 at row 7, block 3 changes row 4 (key 40) and row 2 again
        let contents = [ids(&[70, 20]), deletes(&["70"]), ids(&[40, 20])];
        let positioned = [at("100", &[7, 2]), at("100", &[7]), at("100", &[4, 2])];
        let (states, mut index) = placed(&contents, &positioned).expect("positions are usable");
        assert_eq!(changes(&states), ["r1,r3", "r0,d", "r2"]);
        assert_eq!(index.next_batch(3), (0, &[(2, 0)][..]));
        assert_eq!(index.next_batch(3), (3, &[(4, 2)][..]));
        assert_eq!(index.next_batch(3), (6, &[(7, 1)][..]));
        assert_eq!(index.next_batch(3), (9, &[][..]));
    }

    #[test]
    fn a_block_without_usable_positions_makes_the_slice_merge_by_key() {
        let contents = [ids(&[20]), ids(&[30])];
        for second in [None, at("050", &[3]), at("100", &[3, 4])] {
            let positioned = [at("100", &[2]), second.clone()];
            assert!(placed(&contents, &positioned).is_none(), "{second:?}");
        }
        // a delete of text no integer has: it changes no record of an integer-keyed table
        let contents = [ids(&[20]), deletes(&["+20"])];
        assert!(placed(&contents, &[at("100", &[2]), at("100", &[2])]).is_none());
    }

    #[test]
    fn two_keys_at_one_row_merge_by_key_and_one_key_at_two_rows_changes_both() {
        let contents = [ids(&[20]), ids(&[30])];
        assert!(placed(&contents, &[at("100", &[2]), at("100", &[2])]).is_none());
        let contents = [ids(&[20]), ids(&[20])];
        let (states, _) = placed(&contents, &[at("100", &[2]), at("100", &[5])]).unwrap();
        assert_eq!(changes(&states), ["r0", "r1"]);
    }

    #[test]
    fn text_keys_compare_as_text() {
        let schema = Arc::new(Schema::new(vec![Field::new(
            crate::meta::RECORD_KEY,
            DataType::Utf8,
            true,
        )]));
        let keys = Arc::new(StringArray::from(vec!["k1"]));
        let rows = LogContent::Rows(RecordBatch::try_new(schema, vec![keys]).unwrap());
        let place_text = |contents: &[LogContent]| {
            let positioned = [at("100", &[4]), at("100", &[4])];
            place(contents, &positioned, "100", &KeySource::Meta).unwrap()
        };
        let same = place_text(&[rows.clone(), deletes(&["k1"])]).expect("one key");
        assert_eq!(changes(&same.0), ["r0,d"]);
        assert!(place_text(&[rows, deletes(&["k2"])]).is_none());
    }
}
