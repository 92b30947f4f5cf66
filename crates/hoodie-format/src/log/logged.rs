//! The logged rows of a slice and the replay of each key's logged changes (see
//! [`super::merge`] for the rules and the order they are applied in).
//!
//! A partial record (see [`super::partial`]) that meets an older version of its record in the
//! replay merges with it as Hudi's Spark record merger does: the ordering comparison picks the
//! winner, whose columns lie over the other's (a whole winner is taken as it is; a partial one
//! keeps the loser's values in the columns it does not set). Such merged versions are composed
//! column by column from the logged rows ([`super::compose`]) and appended to the logged rows
//! once every key is replayed.

use arrow::array::{Array, BooleanArray};
use arrow::record_batch::RecordBatch;

use super::compose::Composer;
use super::delete::OrderingValue;
use super::partial::RowMasks;
use super::rules::{MergeRules, OrdKey};
use crate::error::Result;

/// One logged change of a key.
#[derive(Debug, Clone)]
pub(super) enum Change {
    /// A logged row (whole or partial).
    Row(u32),
    /// A delete with its ordering value.
    Deleted(OrderingValue),
}

/// Where a key's logged changes stand while they are replayed.
enum Current<'a> {
    None,
    Row(u32),
    /// The delete, at its position among the key's changes.
    Deleted(u32, &'a OrderingValue),
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
    pub rules: MergeRules,
    pub masks: RowMasks,
}

/// The ordering value of a row without one (commit-time ordering).
static NO_ORDERING: OrdKey = OrdKey::Null;

impl Logged {
    /// The logged rows `rows` (partial ones as `masks` says), their ordering values read
    /// under `rules`.
    pub fn new(rows: RecordBatch, rules: MergeRules, masks: RowMasks) -> Result<Self> {
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

    /// Replays the changes of every key in `states`, fixing each key's fate; the rows that
    /// merges of partial records compose are appended to the logged rows.
    pub fn settle(&mut self, states: &mut [KeyState]) -> Result<()> {
        let mut replay = Replay {
            log: self,
            made: Composer::new(self),
        };
        for st in states.iter_mut() {
            st.fate = replay.fate(st);
        }
        let made = replay.made;
        made.finish(self)
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

/// The replay of keys' changes over the logged rows, composing the merges of partial records.
struct Replay<'a> {
    log: &'a Logged,
    made: Composer,
}

impl Replay<'_> {
    /// The outcome of `st`'s changes replayed in write order.
    fn fate(&mut self, st: &KeyState) -> Fate {
        let mut cur = Current::None;
        for (i, change) in st.changes().enumerate() {
            cur = self.step(cur, i as u32, change);
        }
        match cur {
            Current::Row(l) => Fate::Row(l),
            Current::Deleted(i, _) => Fate::Deleted(i),
            Current::None => Fate::Deleted(0), // a key has at least one change
        }
    }

    /// `cur` after `change` (the key's change number `i`).
    fn step<'s>(&mut self, cur: Current<'s>, i: u32, change: &'s Change) -> Current<'s> {
        let log = self.log;
        let rules = &log.rules;
        match (cur, change) {
            (Current::None, Change::Row(n)) => Current::Row(*n),
            (Current::None, Change::Deleted(d)) => Current::Deleted(i, d),
            (Current::Row(p), Change::Row(n)) => Current::Row(self.records(p, *n)),
            (Current::Row(p), Change::Deleted(d)) => {
                match rules.delete_over_record(d, self.made.ord(log, p)) {
                    true => Current::Deleted(i, d),
                    false => Current::Row(p),
                }
            }
            (Current::Deleted(j, d), Change::Row(n)) => {
                match rules.record_over_delete(self.made.ord(log, *n), d) {
                    true => Current::Row(*n),
                    false => Current::Deleted(j, d),
                }
            }
            (Current::Deleted(..), Change::Deleted(d)) => Current::Deleted(i, d),
        }
    }

    /// The merge of logged record `older` with the newer `newer`: the winner of the ordering
    /// comparison, laid over the loser when it is partial.
    fn records(&mut self, older: u32, newer: u32) -> u32 {
        let (log, made) = (self.log, &self.made);
        let newer_wins = log
            .rules
            .record_over_record(made.ord(log, newer), made.ord(log, older));
        let (under, over) = match newer_wins {
            true => (older, newer),
            false => (newer, older),
        };
        match self.made.is_partial(log, over) {
            true => self.made.compose(log, under, over),
            false => over,
        }
    }
}
