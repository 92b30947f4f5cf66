//! The logs of a file slice applied to its base records (Hudi's snapshot read and compaction,
//! which Hudi calls merging; "merge" is the SQL statement here): per record key the latest
//! version wins, under the table's merge mode.
//!
//! Event-time ordering: a newer record wins when its ordering value is >= the older one's
//! (values of different types: the newer wins). A delete with the default ordering value
//! (null or `0`, as Spark's DELETE writes) always wins; another delete loses only to a record
//! with a strictly greater value of the same type. Commit-time ordering: the latest write wins.
//! A record with `_hoodie_is_deleted = true` merges like a record and, when it wins, deletes.
//!
//! A partial record (a partial-update block's, [`super::partial`]) merges by the same
//! comparisons, and the winner is laid over the version it meets: a partial winner keeps that
//! version's values in the columns it does not set (see [`super::logged`]); a whole winner
//! (the base record, or a whole logged record) is taken as it is.

use std::borrow::Borrow;
use std::hash::Hash;
use std::sync::Arc;

use arrow::array::Array;
use arrow::compute::interleave_record_batch;
use arrow::datatypes::*;
use arrow::record_batch::RecordBatch;

use super::by_position::{place, PositionIndex};
use super::int_filter::IntFilter;
use super::keys::{int_of_key, KeySource, RecordKeys};
use super::logged::{Change, Fate, KeyState, Logged, Merged};
use super::overlay::Overlay;
use super::partial::{nullable, RowMasks};
use super::read::{LogContent, SliceLogs};
use super::rules::OrdKey;
pub use super::rules::Precedence;
use crate::error::{FormatError, Result};
use crate::tasks::FastMap;

/// What the merge did, for write stats and compaction metadata.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApplyCounts {
    /// Base records replaced by a logged record.
    pub updated: u64,
    /// Base records deleted.
    pub deleted: u64,
    /// Logged records with no base record.
    pub inserted: u64,
}

/// The logged changes of each key: the keys' states in the order the keys first appear in the
/// logs (logged records no base record holds come out in this order), found by the keys' text
/// or, for integer keys, by the integer (an index of small entries, so that the lookup of
/// every base row's key stays in cache).
struct KeyMap {
    index: KeyIndex,
    states: Vec<KeyState>,
}

enum KeyIndex {
    Text(FastMap<String, u32>),
    Int(FastMap<i64, u32>, Option<IntFilter>),
    /// The states are numbered by the base rows they change ([`super::by_position`]): no
    /// key finds them.
    Positions,
}

impl KeyMap {
    fn new(source: &KeySource, capacity: usize) -> Self {
        let index = if source.is_int() {
            KeyIndex::Int(
                FastMap::with_capacity_and_hasher(capacity, Default::default()),
                None,
            )
        } else {
            KeyIndex::Text(FastMap::with_capacity_and_hasher(
                capacity,
                Default::default(),
            ))
        };
        Self {
            index,
            states: Vec::with_capacity(capacity),
        }
    }

    /// Adds the changes of the whole logged rows `batch`, numbered from `first_row`, their
    /// keys taken from `source`.
    fn add_rows(&mut self, source: &KeySource, batch: &RecordBatch, first_row: u32) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let field = source.column().unwrap_or(crate::meta::RECORD_KEY);
        let row_keys = source.keys(batch)?;
        for r in 0..batch.num_rows() {
            self.add_row(&row_keys, field, r, Change::Row(first_row + r as u32))?;
        }
        Ok(())
    }

    /// Adds the change of logged row `r` (keys `keys`, from column `field`); the key's state.
    fn add_row(&mut self, keys: &RecordKeys, field: &str, r: usize, change: Change) -> Result<u32> {
        let states = &mut self.states;
        Ok(match (&mut self.index, keys) {
            (KeyIndex::Text(m), RecordKeys::Text(a)) => {
                add_change(m, states, a.value(r), || a.value(r).to_string(), change)
            }
            (KeyIndex::Int(m, _), RecordKeys::Int(a)) => {
                if a.is_null(r) {
                    return Err(FormatError::NullRecordKey {
                        field: field.into(),
                        value: "null",
                    });
                }
                let k = a.value(r);
                add_change(m, states, &k, || k, change)
            }
            _ => return Err(mixed_keys()),
        })
    }

    /// Adds a change of the key with text `key`; its state. A key that is no integer's text
    /// cannot be any record's under integer keys, so its change is dropped (`None`).
    fn add_text(&mut self, key: String, change: Change) -> Option<u32> {
        let states = &mut self.states;
        match &mut self.index {
            KeyIndex::Text(m) => Some(add_change(m, states, &key.clone(), || key, change)),
            KeyIndex::Int(m, _) => {
                int_of_key(&key).map(|k| add_change(m, states, &k, || k, change))
            }
            KeyIndex::Positions => None,
        }
    }

    fn memory_size(&self) -> usize {
        let state = std::mem::size_of::<KeyState>();
        let keys = match &self.index {
            KeyIndex::Text(m) => m.keys().map(|k| k.len() + 24 + 4 + 8).sum(),
            KeyIndex::Int(m, f) => m.len() * (8 + 4 + 4) + f.as_ref().map_or(0, IntFilter::size),
            KeyIndex::Positions => 0,
        };
        keys + self.states.capacity() * state
    }

    /// Builds the integer keys' filter once every change is in.
    fn seal(&mut self) {
        if let KeyIndex::Int(m, f) = &mut self.index {
            *f = IntFilter::of(m);
        }
    }
}

fn mixed_keys() -> FormatError {
    FormatError::Corrupt {
        path: "merge-on-read slice".into(),
        reason: "record keys of one slice read both as text and as integers".into(),
    }
}

/// The log side of a slice's merge, built once from its logs; base batches then stream
/// through [`LogApplier::apply_to_base`].
pub struct LogApplier {
    schema: SchemaRef,
    log: Logged,
    state: KeyMap,
    keys: KeySource,
    /// Set when the slice merges by record position ([`super::by_position`]).
    by_position: Option<PositionIndex>,
    /// What the merge did so far.
    pub counts: ApplyCounts,
}

impl LogApplier {
    /// Reduces the logs' contents (oldest first) to the latest state of each key, the keys of
    /// logged and base rows taken from `keys` (a partial record's from its
    /// `_hoodie_record_key`).
    pub fn new(
        schema: &SchemaRef,
        contents: Vec<LogContent>,
        keys: &KeySource,
        rules: Precedence,
    ) -> Result<Self> {
        let logs = SliceLogs {
            contents,
            ..Default::default()
        };
        Self::of_slice(schema, logs, None, keys, rules)
    }

    /// [`LogApplier::new`] for a snapshot read of a whole slice whose base file has instant
    /// `base_instant` (`None`: a slice of logs alone): when every block's record positions
    /// count rows of that base file, the base records meet their changes by row number, so
    /// the base batches must then be every row of the file, in order.
    pub fn of_slice(
        schema: &SchemaRef,
        logs: SliceLogs,
        base_instant: Option<&str>,
        keys: &KeySource,
        rules: Precedence,
    ) -> Result<Self> {
        let SliceLogs {
            contents,
            mut positioned,
            ..
        } = logs;
        positioned.resize(contents.len(), None);
        let placed = match base_instant {
            Some(b) => place(&contents, &positioned, b, keys)?,
            None => None,
        };
        let (mut state, by_position) = match placed {
            Some((states, index)) => {
                let state = KeyMap {
                    index: KeyIndex::Positions,
                    states,
                };
                (state, Some(index))
            }
            None => {
                let logged = contents.iter().map(LogContent::records).sum();
                (KeyMap::new(keys, logged), None)
            }
        };
        // with positions, the changes already stand in their rows' key states
        let by_key = by_position.is_none();
        // partial rows hold NULLs where they set nothing: the rows are held as nullable
        let rows_schema = match contents.iter().any(LogContent::is_partial) {
            true => nullable(schema),
            false => schema.clone(),
        };
        let mut batches: Vec<RecordBatch> = Vec::new();
        let mut masks = RowMasks::default();
        let mut first_row = 0u32;
        for c in contents {
            let n = c.records();
            let batch = match c {
                LogContent::Rows(b) => {
                    if by_key {
                        state.add_rows(keys, &b, first_row)?;
                    }
                    masks.push(None, n, first_row as usize);
                    b
                }
                LogContent::Partial(p) => {
                    for r in (0..n).filter(|_| by_key) {
                        let key = p.keys.value(r).to_string();
                        state.add_text(key, Change::Row(first_row + r as u32));
                    }
                    masks.push(Some(&p.set), n, first_row as usize);
                    p.rows
                }
                LogContent::Deletes(d) => {
                    for del in d.into_iter().filter(|_| by_key) {
                        state.add_text(del.record_key, Change::Deleted(del.ordering));
                    }
                    continue;
                }
            };
            if n > 0 {
                first_row += n as u32;
                batches.push(batch);
            }
        }
        state.seal();
        let rows = arrow::compute::concat_batches(&rows_schema, &batches)?;
        let mut log = Logged::new(rows, rules, masks)?;
        super::replay::settle(&mut log, &mut state.states)?;
        Ok(Self {
            schema: schema.clone(),
            log,
            state,
            keys: keys.clone(),
            by_position,
            counts: ApplyCounts::default(),
        })
    }

    /// Under event-time ordering with a top-level ordering column: that column (its index in
    /// the merge's schema) and the least integer ordering value of the logged changes, deletes
    /// without an ordering value (which win whatever the base record holds) left out
    /// (`i64::MAX` when none is left). `None` when some logged change has no integer ordering
    /// value (NULL, another type).
    pub fn logged_int_floor(&self) -> Option<(usize, i64)> {
        let path = self.log.rules.ordering.as_ref()?;
        if !path.is_top_level() {
            return None;
        }
        let mut floor = i64::MAX;
        for change in self.state.states.iter().flat_map(KeyState::changes) {
            let ord = match change {
                Change::Row(l) => self.log.ord(*l),
                Change::Deleted(d) if d.is_default() => continue,
                Change::Deleted(d) => OrdKey::of_delete(d),
            };
            let OrdKey::Int(v) = ord else { return None };
            floor = floor.min(v);
        }
        Some((path.top(), floor))
    }

    /// Bytes the merge holds: the logged rows and the state of each key.
    pub fn memory_size(&self) -> usize {
        self.log.rows.get_array_memory_size()
            + self.state.memory_size()
            + self
                .by_position
                .as_ref()
                .map_or(0, PositionIndex::memory_size)
            + self.log.ords.len() * std::mem::size_of::<OrdKey>()
            + self.log.masks.memory_size()
    }

    /// Whether some logged row is a partial record (whose merge needs the base record's other
    /// columns: [`LogApplier::positions`] cannot describe it).
    pub fn has_partial_rows(&self) -> bool {
        self.log.masks.any_partial()
    }

    /// Whether the base records meet their changes by row number rather than by key (see
    /// [`LogApplier::of_slice`]); the base file's keys are then not read.
    pub fn merges_by_position(&self) -> bool {
        self.by_position.is_some()
    }

    /// A batch of base records merged with the logs: each record kept, replaced by its logged
    /// version, or dropped, in the base order.
    pub fn apply_to_base(&mut self, base: &RecordBatch) -> Result<RecordBatch> {
        Ok(self.apply_to_base_rows(base)?.0)
    }

    /// [`LogApplier::apply_to_base`], with the rows of `base` the logs delete (in base order):
    /// the merged rows are the others, in order, so a reader can tell each one's base row.
    pub fn apply_to_base_rows(&mut self, base: &RecordBatch) -> Result<(RecordBatch, Vec<usize>)> {
        let ordering = match &self.log.rules.ordering {
            Some(path) => Some(path.values(base.column(path.top()))?),
            None => None,
        };
        let overlay = match &mut self.by_position {
            Some(index) => {
                let (start, changed) = index.next_batch(base.num_rows());
                let changed = changed.iter().map(|&(row, s)| ((row - start) as usize, s));
                let states = &mut self.state.states;
                merge_rows(
                    &self.log,
                    states,
                    ordering.as_deref(),
                    &mut self.counts,
                    changed,
                )
            }
            None => {
                let keys = self.keys.keys(base)?;
                self.overlay(&keys, ordering.as_deref())?
            }
        };
        match overlay {
            None => Ok((base.clone(), Vec::new())),
            Some(o) => {
                let merged = o.apply(base, &self.log.rows, &self.log.masks)?;
                Ok((merged, o.deleted))
            }
        }
    }

    /// Where each merged record of a batch of base records comes from (`keys` theirs,
    /// `ordering` their ordering field's values under event-time ordering): `(0, r)` base row
    /// `r`, `(1, l)` row `l` of [`LogApplier::logged_rows`], in the base order, deleted records
    /// left out; `None` when the logs change none of them. Logs with partial records
    /// ([`LogApplier::has_partial_rows`]) are refused: a merged record can then take its
    /// columns from both.
    pub fn positions(
        &mut self,
        keys: &RecordKeys,
        ordering: Option<&dyn Array>,
    ) -> Result<Option<Vec<(usize, usize)>>> {
        if self.has_partial_rows() {
            return Err(FormatError::Unsupported {
                feature: "the positions of a merge with partial-update log records".into(),
            });
        }
        Ok(self
            .overlay(keys, ordering)?
            .map(|o| o.positions(keys.len())))
    }

    /// How the logs change a batch of base records (see [`LogApplier::positions`]); `None`
    /// when they change none of them.
    fn overlay(
        &mut self,
        keys: &RecordKeys,
        ordering: Option<&dyn Array>,
    ) -> Result<Option<Overlay>> {
        let n = keys.len();
        let (log, counts) = (&self.log, &mut self.counts);
        let states = &mut self.state.states;
        Ok(match (&self.state.index, keys) {
            (KeyIndex::Text(m), RecordKeys::Text(a)) => {
                apply_to_rows(log, m, states, n, ordering, counts, |r| {
                    a.is_valid(r).then(|| a.value(r))
                })
            }
            (KeyIndex::Int(m, filter), RecordKeys::Int(a)) => {
                let values = a.values();
                apply_to_rows(log, m, states, n, ordering, counts, |r| {
                    let k = values[r];
                    let held = filter.as_ref().is_none_or(|f| f.may_hold(k));
                    (held && a.is_valid(r)).then(|| &values[r])
                })
            }
            (KeyIndex::Positions, _) => {
                return Err(FormatError::Unsupported {
                    feature: "matching base records by key in a merge by record position".into(),
                })
            }
            _ => return Err(mixed_keys()),
        })
    }

    /// The logged rows (in the table schema, every column nullable when some are partial)
    /// that [`LogApplier::positions`] points into.
    pub fn logged_rows(&self) -> &RecordBatch {
        &self.log.rows
    }

    /// Per key of text keys (`None` for integer keys), the logged row its logged changes end
    /// in (the row a base record of the key meets); keys whose changes end in a delete are
    /// left out.
    pub fn latest_rows(&self) -> Option<FastMap<&str, u32>> {
        let KeyIndex::Text(m) = &self.state.index else {
            return None;
        };
        Some(
            m.iter()
                .filter_map(|(k, &i)| match self.state.states[i as usize].fate {
                    Fate::Row(l) => Some((k.as_str(), l)),
                    Fate::Deleted(_) => None,
                })
                .collect(),
        )
    }

    /// The logged records whose key no base batch held (inserts into the logs, log-only file
    /// groups), in log order; call after every base batch went through
    /// [`LogApplier::apply_to_base`]. A partial record without a base record comes out as it is,
    /// the columns it does not set NULL (an error when such a column is not nullable).
    pub fn remaining(&mut self) -> Result<Option<RecordBatch>> {
        let mut rows: Vec<(usize, usize)> = Vec::new();
        for st in self.state.states.iter().filter(|st| !st.seen) {
            if let Fate::Row(r) = st.fate {
                if !self.log.soft_deleted(r) {
                    rows.push((0, r as usize));
                }
            }
        }
        self.counts.inserted += rows.len() as u64;
        if rows.is_empty() {
            return Ok(None);
        }
        let rest = interleave_record_batch(&[&self.log.rows], &rows)?;
        if Arc::ptr_eq(&rest.schema(), &self.schema) {
            return Ok(Some(rest));
        }
        Ok(Some(RecordBatch::try_new(
            self.schema.clone(),
            rest.columns().to_vec(),
        )?))
    }
}

/// The merge of `n` base rows (`key_at` gives a row's key, `None` for a row no log can
/// change; `ordering` their ordering values) with the logged changes in `map`, as
/// [`Logged::winner`] gives it; `None` when no row changes.
fn apply_to_rows<'k, K, Q>(
    log: &Logged,
    map: &FastMap<K, u32>,
    states: &mut [KeyState],
    n: usize,
    ordering: Option<&dyn Array>,
    counts: &mut ApplyCounts,
    key_at: impl Fn(usize) -> Option<&'k Q>,
) -> Option<Overlay>
where
    K: Borrow<Q> + Hash + Eq,
    Q: Hash + Eq + ?Sized + 'k,
{
    let changed = (0..n).filter_map(|r| key_at(r).and_then(|k| map.get(k)).map(|&i| (r, i)));
    merge_rows(log, states, ordering, counts, changed)
}

/// The merge of the base rows `changed` names (`(row, key state)`, in row order; `ordering`
/// the batch's ordering values) with their keys' logged changes; `None` when no row changes.
fn merge_rows(
    log: &Logged,
    states: &mut [KeyState],
    ordering: Option<&dyn Array>,
    counts: &mut ApplyCounts,
    changed: impl Iterator<Item = (usize, u32)>,
) -> Option<Overlay> {
    let mut overlay = Overlay::default();
    for (r, i) in changed {
        let st = &mut states[i as usize];
        st.seen = true;
        let base_ord = ordering.map_or(OrdKey::Null, |o| OrdKey::of_array(o, r));
        match log.winner(st, &base_ord) {
            Merged::Logged(l) => {
                counts.updated += 1;
                overlay.replaced.push((r, l as usize));
            }
            Merged::Base => {}
            Merged::Gone => {
                counts.deleted += 1;
                overlay.deleted.push(r);
            }
        }
    }
    (!overlay.is_empty()).then_some(overlay)
}

/// Adds a logged change of `key` (`owned` makes the key the first time it is seen).
fn add_change<K, Q>(
    index: &mut FastMap<K, u32>,
    states: &mut Vec<KeyState>,
    key: &Q,
    owned: impl FnOnce() -> K,
    change: Change,
) -> u32
where
    K: Borrow<Q> + Hash + Eq,
    Q: Hash + Eq + ?Sized,
{
    match index.get(key) {
        Some(&i) => {
            states[i as usize].later.push(change);
            i
        }
        None => {
            let i = states.len() as u32;
            index.insert(owned(), i);
            states.push(KeyState::new(change));
            i
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::table_config::MergeMode;

    #[test]
    fn a_logged_row_without_its_integer_key_is_an_error_naming_the_column() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int64, true)]));
        let rows = RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(arrow::array::Int64Array::from(vec![
                Some(1),
                None,
            ]))],
        )
        .unwrap();
        let rules = Precedence::new(&schema, MergeMode::CommitTimeOrdering, None);
        let keys = KeySource::IntColumn("id".into());
        let err = LogApplier::new(&schema, vec![LogContent::Rows(rows)], &keys, rules)
            .err()
            .expect("a null key is refused");
        assert!(
            err.to_string().contains("\"null\" for field: \"id\""),
            "{err}"
        );
    }
}
