//! The merge of a file slice's base records with its log records (Hudi's snapshot read and
//! compaction): per record key the latest version wins, under the table's merge mode.
//!
//! Event-time ordering: a newer record wins when its ordering value is >= the older one's
//! (values of different types: the newer wins). A delete with the default ordering value
//! (null or `0`, as Spark's DELETE writes) always wins; another delete loses only to a record
//! with a strictly greater value of the same type. Commit-time ordering: the latest write wins.
//! A record with `_hoodie_is_deleted = true` merges like a record and, when it wins, deletes.

use std::cmp::Ordering;

use arrow::array::{Array, AsArray, BooleanArray, StringArray};
use arrow::compute::interleave_record_batch;
use arrow::datatypes::*;
use arrow::record_batch::RecordBatch;

use super::delete::OrderingValue;
use super::read::LogContent;
use crate::error::Result;
use crate::field_path::FieldPath;
use crate::table_config::MergeMode;
use crate::tasks::FastMap;

/// A comparable ordering value.
#[derive(Debug, Clone, PartialEq)]
enum OrdKey {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    Decimal(i128),
}

impl OrdKey {
    /// Values of one type compare as values; NULL is below every value (as a copy-on-write
    /// rewrite compares them: an update to a NULL ordering value loses); values of different
    /// types do not compare (the newer record wins).
    fn cmp(&self, other: &OrdKey) -> Option<Ordering> {
        use OrdKey::*;
        match (self, other) {
            (Null, Null) => Some(Ordering::Equal),
            (Null, _) => Some(Ordering::Less),
            (_, Null) => Some(Ordering::Greater),
            (Bool(a), Bool(b)) => Some(a.cmp(b)),
            (Int(a), Int(b)) => Some(a.cmp(b)),
            (Float(a), Float(b)) => a.partial_cmp(b),
            (Str(a), Str(b)) => Some(a.cmp(b)),
            (Bytes(a), Bytes(b)) => Some(a.cmp(b)),
            (Decimal(a), Decimal(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }

    fn of_delete(v: &OrderingValue) -> OrdKey {
        use OrderingValue as O;
        match v {
            O::Null => OrdKey::Null,
            O::Boolean(b) => OrdKey::Bool(*b),
            O::Int(i) | O::Date(i) => OrdKey::Int(*i as i64),
            O::Long(i) | O::TimeMicros(i) | O::TimestampMicros(i) => OrdKey::Int(*i),
            O::Float(f) => OrdKey::Float(*f as f64),
            O::Double(f) => OrdKey::Float(*f),
            O::String(s) => OrdKey::Str(s.clone()),
            O::Bytes(b) => OrdKey::Bytes(b.clone()),
            O::Decimal(b) => OrdKey::Decimal(crate::avro::datum::be_to_i128(b).unwrap_or(0)),
            O::Array(items) => items.first().map_or(OrdKey::Null, OrdKey::of_delete),
        }
    }

    fn of_array(a: &dyn Array, row: usize) -> OrdKey {
        if a.is_null(row) {
            return OrdKey::Null;
        }
        match a.data_type() {
            DataType::Boolean => OrdKey::Bool(a.as_boolean().value(row)),
            DataType::Int8 => OrdKey::Int(a.as_primitive::<Int8Type>().value(row) as i64),
            DataType::Int16 => OrdKey::Int(a.as_primitive::<Int16Type>().value(row) as i64),
            DataType::Int32 => OrdKey::Int(a.as_primitive::<Int32Type>().value(row) as i64),
            DataType::Int64 => OrdKey::Int(a.as_primitive::<Int64Type>().value(row)),
            DataType::Date32 => OrdKey::Int(a.as_primitive::<Date32Type>().value(row) as i64),
            DataType::Timestamp(_, _) => {
                let a = arrow::compute::cast(&a.slice(row, 1), &DataType::Int64)
                    .expect("a timestamp casts to its integer");
                OrdKey::Int(a.as_primitive::<Int64Type>().value(0))
            }
            DataType::Float32 => OrdKey::Float(a.as_primitive::<Float32Type>().value(row) as f64),
            DataType::Float64 => OrdKey::Float(a.as_primitive::<Float64Type>().value(row)),
            DataType::Decimal128(_, _) => {
                OrdKey::Decimal(a.as_primitive::<Decimal128Type>().value(row))
            }
            DataType::Utf8 => OrdKey::Str(a.as_string::<i32>().value(row).to_string()),
            DataType::LargeUtf8 => OrdKey::Str(a.as_string::<i64>().value(row).to_string()),
            DataType::Utf8View => OrdKey::Str(a.as_string_view().value(row).to_string()),
            DataType::Binary => OrdKey::Bytes(a.as_binary::<i32>().value(row).to_vec()),
            _ => OrdKey::Null,
        }
    }
}

/// The merge rules of a table.
#[derive(Debug, Clone)]
pub struct MergeRules {
    /// Event-time or commit-time ordering.
    pub mode: MergeMode,
    /// The ordering field (event-time ordering only).
    pub ordering: Option<FieldPath>,
    /// The `_hoodie_is_deleted` column, if the schema has one.
    pub is_deleted: Option<usize>,
}

impl MergeRules {
    /// The rules for rows of `schema` under `mode` with ordering field `ordering`.
    pub fn new(schema: &Schema, mode: MergeMode, ordering: Option<&str>) -> Self {
        let ordering = match mode {
            MergeMode::EventTimeOrdering => {
                ordering.and_then(|f| FieldPath::resolve(schema, f).ok())
            }
            _ => None,
        };
        Self {
            mode,
            ordering,
            is_deleted: schema.index_of("_hoodie_is_deleted").ok(),
        }
    }

    fn event_time(&self) -> bool {
        self.ordering.is_some()
    }

    /// Record (newer) over record (older).
    fn record_over_record(&self, new: &OrdKey, old: &OrdKey) -> bool {
        !self.event_time() || new.cmp(old) != Some(Ordering::Less)
    }

    /// Delete (newer) over record (older).
    fn delete_over_record(&self, del: &OrderingValue, old: &OrdKey) -> bool {
        !self.event_time()
            || del.is_default()
            || OrdKey::of_delete(del).cmp(old) != Some(Ordering::Less)
    }

    /// Record (newer) over delete (older).
    fn record_over_delete(&self, new: &OrdKey, del: &OrderingValue) -> bool {
        !self.event_time()
            || del.is_default()
            || new.cmp(&OrdKey::of_delete(del)) != Some(Ordering::Less)
    }
}

/// One logged change of a key.
#[derive(Debug, Clone)]
enum Change {
    Row(u32),
    Deleted(OrderingValue),
}

/// Where a key's merge stands while its changes are replayed.
enum Current {
    None,
    Base(OrdKey),
    Row(u32),
    Deleted(OrderingValue),
}

#[derive(Debug, Clone)]
struct KeyState {
    /// When the key first appears in the logs (logged records no base record holds come out
    /// in this order).
    seq: u32,
    /// The key's first logged change; later ones follow in `later`, oldest first. They are
    /// replayed in order, then merged with the key's base record (whose ordering value is
    /// known only when the base file is read). Most keys have one change: it is kept inline.
    first: Change,
    later: Vec<Change>,
    /// Set once the base record of the key was merged.
    seen: bool,
}

impl KeyState {
    fn changes(&self) -> impl Iterator<Item = &Change> {
        std::iter::once(&self.first).chain(&self.later)
    }
}

/// What the merge did, for write stats and compaction metadata.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeCounts {
    /// Base records replaced by a logged record.
    pub updated: u64,
    /// Base records deleted.
    pub deleted: u64,
    /// Logged records with no base record.
    pub inserted: u64,
}

/// The log side of a slice's merge, built once from its logs; base batches then stream
/// through [`LogMerger::merge_base`].
pub struct LogMerger {
    rows: RecordBatch,
    ords: Vec<OrdKey>,
    state: FastMap<String, KeyState>,
    rules: MergeRules,
    /// What the merge did so far.
    pub counts: MergeCounts,
}

impl LogMerger {
    /// Reduces the logs' contents (oldest first; `keys_of` gives the record keys of a batch of
    /// logged rows) to the latest state of each key.
    pub fn new(
        schema: &SchemaRef,
        contents: Vec<LogContent>,
        keys_of: &dyn Fn(&RecordBatch) -> Result<StringArray>,
        rules: MergeRules,
    ) -> Result<Self> {
        let mut batches: Vec<RecordBatch> = Vec::new();
        let mut state: FastMap<String, KeyState> = FastMap::default();
        let mut first_row = 0u32;
        for c in contents {
            match c {
                LogContent::Rows(b) if b.num_rows() > 0 => {
                    let keys = keys_of(&b)?;
                    for r in 0..b.num_rows() {
                        let change = Change::Row(first_row + r as u32);
                        add_change(
                            &mut state,
                            keys.value(r),
                            || keys.value(r).to_string(),
                            change,
                        );
                    }
                    first_row += b.num_rows() as u32;
                    batches.push(b);
                }
                LogContent::Rows(_) => {}
                LogContent::Deletes(d) => {
                    for del in d {
                        let change = Change::Deleted(del.ordering);
                        let key = del.record_key;
                        add_change(&mut state, &key.clone(), || key, change);
                    }
                }
            }
        }
        let rows = arrow::compute::concat_batches(schema, &batches)?;
        let ords: Vec<OrdKey> = match &rules.ordering {
            Some(path) => {
                let col = path.values(rows.column(path.top()))?;
                (0..rows.num_rows())
                    .map(|r| OrdKey::of_array(col.as_ref(), r))
                    .collect()
            }
            None => Vec::new(),
        };
        Ok(Self {
            rows,
            ords,
            state,
            rules,
            counts: MergeCounts::default(),
        })
    }

    fn ord(&self, row: u32) -> OrdKey {
        self.ords.get(row as usize).cloned().unwrap_or(OrdKey::Null)
    }

    /// Replays `changes` in write order over `start`.
    fn replay<'a>(&self, start: Current, changes: impl Iterator<Item = &'a Change>) -> Current {
        let rules = &self.rules;
        changes.fold(start, |cur, change| {
            let wins = match (&cur, change) {
                (Current::None, _) => true,
                (Current::Base(o), Change::Row(n)) => rules.record_over_record(&self.ord(*n), o),
                (Current::Row(p), Change::Row(n)) => {
                    rules.record_over_record(&self.ord(*n), &self.ord(*p))
                }
                (Current::Base(o), Change::Deleted(d)) => rules.delete_over_record(d, o),
                (Current::Row(p), Change::Deleted(d)) => rules.delete_over_record(d, &self.ord(*p)),
                (Current::Deleted(d), Change::Row(n)) => rules.record_over_delete(&self.ord(*n), d),
                (Current::Deleted(_), Change::Deleted(_)) => true,
            };
            match (wins, change) {
                (false, _) => cur,
                (true, Change::Row(n)) => Current::Row(*n),
                (true, Change::Deleted(d)) => Current::Deleted(d.clone()),
            }
        })
    }

    fn soft_deleted(&self, row: u32) -> bool {
        self.rules.is_deleted.is_some_and(|c| {
            self.rows
                .column(c)
                .as_any()
                .downcast_ref::<BooleanArray>()
                .is_some_and(|a| a.is_valid(row as usize) && a.value(row as usize))
        })
    }

    /// Bytes the merge holds: the logged rows and the state of each key.
    pub fn memory_size(&self) -> usize {
        self.rows.get_array_memory_size()
            + self.state.keys().map(|k| k.len() + 96).sum::<usize>()
            + self.ords.len() * std::mem::size_of::<OrdKey>()
    }

    /// Whether no key has a logged change.
    pub fn is_empty(&self) -> bool {
        self.state.is_empty()
    }

    /// A batch of base records (`keys` their record keys) merged with the logs: each record
    /// kept, replaced by its logged version, or dropped, in the base order.
    pub fn merge_base(&mut self, base: &RecordBatch, keys: &StringArray) -> Result<RecordBatch> {
        let ordering = match &self.rules.ordering {
            Some(path) => Some(path.values(base.column(path.top()))?),
            None => None,
        };
        let mut positions: Vec<(usize, usize)> = Vec::with_capacity(base.num_rows());
        let mut changed = false;
        for r in 0..base.num_rows() {
            let key = keys.value(r);
            let Some(st) = self.state.get_mut(key) else {
                positions.push((0, r));
                continue;
            };
            st.seen = true;
            changed = true;
            let base_ord = ordering
                .as_ref()
                .map_or(OrdKey::Null, |o| OrdKey::of_array(o.as_ref(), r));
            // the logs' own outcome first, then that against the base record: the order in
            // which Java's file group reader and hudi-rs merge (a record logged after a
            // delete meets the base record by its ordering value alone)
            let logged = self.replay(Current::None, self.state[key].changes());
            let outcome = match logged {
                Current::Row(l) if !self.rules.record_over_record(&self.ord(l), &base_ord) => {
                    Current::Base(base_ord)
                }
                Current::Deleted(d) if !self.rules.delete_over_record(&d, &base_ord) => {
                    Current::Base(base_ord)
                }
                other => other,
            };
            let winner = match outcome {
                Current::Base(_) | Current::None => Some((0, r)),
                Current::Row(l) if self.soft_deleted(l) => None,
                Current::Row(l) => Some((1, l as usize)),
                Current::Deleted(_) => None,
            };
            match winner {
                Some((1, l)) => {
                    self.counts.updated += 1;
                    positions.push((1, l));
                }
                Some(p) => positions.push(p),
                None => self.counts.deleted += 1,
            }
        }
        if !changed {
            return Ok(base.clone());
        }
        Ok(interleave_record_batch(&[base, &self.rows], &positions)?)
    }

    /// The logged records whose key no base batch held (inserts into the logs, log-only file
    /// groups), in log order; call after every base batch went through
    /// [`LogMerger::merge_base`].
    pub fn remaining(&mut self) -> Result<Option<RecordBatch>> {
        let mut unseen: Vec<&KeyState> = self.state.values().filter(|st| !st.seen).collect();
        unseen.sort_unstable_by_key(|st| st.seq);
        let mut rows: Vec<(usize, usize)> = Vec::new();
        for st in unseen {
            if let Current::Row(r) = self.replay(Current::None, st.changes()) {
                if !self.soft_deleted(r) {
                    rows.push((0, r as usize));
                }
            }
        }
        self.counts.inserted += rows.len() as u64;
        if rows.is_empty() {
            return Ok(None);
        }
        Ok(Some(interleave_record_batch(&[&self.rows], &rows)?))
    }
}

/// Adds a logged change of `key` (`owned` makes the key's own string the first time it is seen).
fn add_change(
    state: &mut FastMap<String, KeyState>,
    key: &str,
    owned: impl FnOnce() -> String,
    change: Change,
) {
    match state.get_mut(key) {
        Some(st) => st.later.push(change),
        None => {
            let seq = state.len() as u32;
            state.insert(
                owned(),
                KeyState {
                    seq,
                    first: change,
                    later: Vec::new(),
                    seen: false,
                },
            );
        }
    }
}
