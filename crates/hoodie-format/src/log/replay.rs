//! The replay of each key's logged changes, in write order, to the logs' own outcome of the
//! key (its [`Fate`]).
//!
//! A partial record (see [`super::partial`]) that meets an older version of its record in the
//! replay merges with it as Hudi's Spark record applier does: the ordering comparison picks the
//! winner, whose columns lie over the other's (a whole winner is taken as it is; a partial one
//! keeps the loser's values in the columns it does not set). Such merged versions are composed
//! column by column from the logged rows ([`super::compose`]) and appended to the logged rows
//! once every key is replayed.

use super::compose::Composer;
use super::delete::OrderingValue;
use super::logged::{Change, Fate, KeyState, Logged};
use crate::error::Result;

/// Replays the changes of every key in `states`, fixing each key's fate; the rows that
/// merges of partial records compose are appended to the logged rows.
pub(super) fn settle(log: &mut Logged, states: &mut [KeyState]) -> Result<()> {
    let mut replay = Replay {
        log,
        made: Composer::new(log),
    };
    for st in states.iter_mut() {
        st.fate = replay.fate(st);
    }
    let made = replay.made;
    made.finish(log)
}

/// Where a key's logged changes stand while they are replayed.
enum Current<'a> {
    None,
    Row(u32),
    /// The delete, at its position among the key's changes.
    Deleted(u32, &'a OrderingValue),
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
