//! Rows composed by the replay of partial records: each the merge of two versions of a record,
//! one laid over the other (see [`super::logged`]). A composed row is a list of logged rows,
//! one per column, whose value it takes (always rows of the logs, never composed ones, so a
//! chain of partial records is resolved as it is replayed); all of them are built at once,
//! a gather per column, and appended to the logged rows.

use std::sync::Arc;

use arrow::array::ArrayRef;
use arrow::compute::{concat, interleave};
use arrow::record_batch::{RecordBatch, RecordBatchOptions};

use super::logged::Logged;
use super::partial::union;
use super::rules::OrdKey;
use crate::error::Result;

/// The ordering value of a row without one.
static NO_ORDERING: OrdKey = OrdKey::Null;

/// The rows composed so far, numbered after the logged rows.
pub(super) struct Composer {
    /// Columns of a row.
    width: usize,
    /// Logged rows (the first composed row is number `logged`).
    logged: u32,
    /// The column of the ordering field (event-time ordering).
    ordering: Option<usize>,
    /// Per composed row, per column: the logged row whose value it takes.
    sources: Vec<u32>,
    /// Per composed row: its ordering value.
    ords: Vec<OrdKey>,
    /// Per composed row: the columns it sets (`None`: every column).
    masks: Vec<Option<Arc<[bool]>>>,
}

impl Composer {
    /// A composer over the logged rows of `log`.
    pub fn new(log: &Logged) -> Self {
        Self {
            width: log.rows.num_columns(),
            logged: log.rows.num_rows() as u32,
            ordering: log.rules.ordering.as_ref().map(|p| p.top()),
            sources: Vec::new(),
            ords: Vec::new(),
            masks: Vec::new(),
        }
    }

    fn composed(&self, row: u32) -> Option<usize> {
        row.checked_sub(self.logged).map(|i| i as usize)
    }

    /// The ordering value of row `row` (logged or composed).
    pub fn ord<'a>(&'a self, log: &'a Logged, row: u32) -> &'a OrdKey {
        match self.composed(row) {
            Some(i) => self.ords.get(i).unwrap_or(&NO_ORDERING),
            None => log.ord_at(row),
        }
    }

    /// The columns row `row` sets (`None`: every column).
    fn mask<'a>(&'a self, log: &'a Logged, row: u32) -> Option<&'a Arc<[bool]>> {
        match self.composed(row) {
            Some(i) => self.masks.get(i).and_then(Option::as_ref),
            None => log.masks.mask(row as usize),
        }
    }

    /// Whether row `row` is partial.
    pub fn is_partial(&self, log: &Logged, row: u32) -> bool {
        self.mask(log, row).is_some()
    }

    /// The logged row whose value row `row` has in column `col`.
    fn source(&self, row: u32, col: usize) -> u32 {
        match self.composed(row) {
            Some(i) => self.sources[i * self.width + col],
            None => row,
        }
    }

    /// A row of `over`'s values in the columns it sets and `under`'s in the others; its
    /// number.
    pub fn compose(&mut self, log: &Logged, under: u32, over: u32) -> u32 {
        let over_mask = self.mask(log, over).cloned();
        let mask = union(self.mask(log, under), over_mask.as_ref());
        for col in 0..self.width {
            let sets = over_mask
                .as_ref()
                .is_none_or(|m| m.get(col).copied().unwrap_or(false));
            let from = if sets { over } else { under };
            let source = self.source(from, col);
            self.sources.push(source);
        }
        let ord = match self.ordering {
            Some(c) => {
                let source = self.sources[self.sources.len() - self.width + c];
                log.ord_at(source).clone()
            }
            None => OrdKey::Null,
        };
        self.ords.push(ord);
        self.masks.push(mask);
        self.logged + self.masks.len() as u32 - 1
    }

    /// Appends the composed rows to `log`'s rows, ordering values and masks.
    pub fn finish(self, log: &mut Logged) -> Result<()> {
        let n = self.masks.len();
        if n == 0 {
            return Ok(());
        }
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(self.width);
        for (col, column) in log.rows.columns().iter().enumerate() {
            let at: Vec<(usize, usize)> = (0..n)
                .map(|i| (0, self.sources[i * self.width + col] as usize))
                .collect();
            let made = interleave(&[column.as_ref()], &at)?;
            columns.push(concat(&[column.as_ref(), made.as_ref()])?);
        }
        let before = log.rows.num_rows();
        log.rows = RecordBatch::try_new_with_options(
            log.rows.schema(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(before + n)),
        )?;
        if log.rules.ordering.is_some() {
            log.ords.extend(self.ords);
        }
        for (i, mask) in self.masks.iter().enumerate() {
            log.masks.push(mask.as_ref(), 1, before + i);
        }
        Ok(())
    }
}
