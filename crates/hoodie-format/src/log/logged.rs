//! The logged rows of a slice, each key's logged changes, and what a key's replayed changes
//! make of its base record (see [`super::merge`] for the rules and the order they are applied
//! in; [`super::replay`] replays the changes).

use arrow::array::{Array, BooleanArray};
use arrow::record_batch::RecordBatch;

use super::delete::OrderingValue;
use super::partial::RowMasks;
use super::rules::{OrdKey, Precedence};
use crate::error::Result;

/// One logged change of a key.
#[derive(Debug, Clone)]
pub(super) enum Change {
    /// A logged row (whole or partial).
    Row(u32),
    /// A delete with its ordering value.
    Deleted(OrderingValue),
}

/// The logs' own outcome of a key: its changes replayed without its base record.
#[derive(Debug, Clone, Copy)]
pub(super) enum Fate {
    /// A logged row (or a row composed of partial records).
    Row(u32),
    /// A delete, at its position among the key's changes.
    Deleted(u32),
}

/// What a base record becomes in the merge.
pub(super) enum Merged {
    Base,
    Logged(u32),
    Gone,
}

/// The logged changes of one key.
#[derive(Debug, Clone)]
pub(super) struct KeyState {
    /// The key's first logged change; later ones follow in `later`, oldest first. They are
    /// replayed in order, then merged with the key's base record (whose ordering value is
    /// known only when the base file is read). Most keys have one change: it is kept inline.
    pub first: Change,
    pub later: Vec<Change>,
    /// The replay's outcome, fixed once every change is in (each base record of the key then
    /// meets it without replaying).
    pub fate: Fate,
    /// Set once the base record of the key was merged.
    pub seen: bool,
}

impl KeyState {
    /// A key's state with its first change.
    pub fn new(first: Change) -> Self {
        Self {
            first,
            later: Vec::new(),
            fate: Fate::Deleted(0),
            seen: false,
        }
    }

    /// The key's changes, oldest first.
    pub fn changes(&self) -> impl Iterator<Item = &Change> {
        std::iter::once(&self.first).chain(&self.later)
    }
}

/// The logged rows of a slice, with their ordering values, which columns each sets, and the
/// rules that compare them.
pub(super) struct Logged {
    pub rows: RecordBatch,
    pub ords: Vec<OrdKey>,
    pub rules: Precedence,
    pub masks: RowMasks,
}

/// The ordering value of a row without one (commit-time ordering).
static NO_ORDERING: OrdKey = OrdKey::Null;

impl Logged {
    /// The logged rows `rows` (partial ones as `masks` says), their ordering values read
    /// under `rules`.
    pub fn new(rows: RecordBatch, rules: Precedence, masks: RowMasks) -> Result<Self> {
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
            rules,
            masks,
        })
    }

    /// The ordering value of logged row `row`.
    pub fn ord(&self, row: u32) -> OrdKey {
        self.ord_at(row).clone()
    }

    pub fn ord_at(&self, row: u32) -> &OrdKey {
        self.ords.get(row as usize).unwrap_or(&NO_ORDERING)
    }

    /// Whether logged row `row` is a record with `_hoodie_is_deleted = true`.
    pub fn soft_deleted(&self, row: u32) -> bool {
        self.rules.is_deleted.is_some_and(|c| {
            self.rows
                .column(c)
                .as_any()
                .downcast_ref::<BooleanArray>()
                .is_some_and(|a| a.is_valid(row as usize) && a.value(row as usize))
        })
    }

    /// What the base record (ordering value `base_ord`) of a key with the logged changes of
    /// `st` becomes in the merged output.
    pub fn winner(&self, st: &KeyState, base_ord: &OrdKey) -> Merged {
        // the logs' own outcome first, then that against the base record: the order in which
        // Java's file group reader and hudi-rs merge (a record logged after a delete meets the
        // base record by its ordering value alone); a NULL base value loses to any outcome.
        // The base record is whole: when it wins, it is taken as it is; when a partial logged
        // row wins, the base record fills the columns that row does not set.
        let base_wins = *base_ord != OrdKey::Null
            && match st.fate {
                Fate::Row(l) => !self.rules.record_over_record(self.ord_at(l), base_ord),
                Fate::Deleted(i) => match st.changes().nth(i as usize) {
                    Some(Change::Deleted(d)) => !self.rules.delete_over_record(d, base_ord),
                    _ => false,
                },
            };
        match st.fate {
            _ if base_wins => Merged::Base,
            Fate::Row(l) if self.soft_deleted(l) => Merged::Gone,
            Fate::Row(l) => Merged::Logged(l),
            Fate::Deleted(_) => Merged::Gone,
        }
    }
}
