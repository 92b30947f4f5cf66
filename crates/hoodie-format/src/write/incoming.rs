//! The rows a write takes, held in memory while the memory budget has room and spilled to
//! Arrow IPC files when it has not.
//!
//! What a write routes on is kept aside in memory as the rows arrive: record keys, partition
//! paths, ordering values, delete flags and, for rows read from the table, the base file they
//! came from. The write routes every row by those alone, then gathers the rows of a few file
//! groups at a time (a *wave*: as many as the budget holds) from memory or from the spill
//! files. So the whole input is in memory at once only when it fits the budget.

use std::any::Any;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StringArray, UInt32Array};
use arrow::compute::{concat, take_record_batch};
use arrow::datatypes::SchemaRef;

use crate::error::{FormatError, Result};
use crate::field_path::FieldPath;
use crate::keygen::{generated_key, KeyGenerator};
use crate::write::change_set::ChangeRows;

/// The memory a write may hold (a DataFusion memory pool reservation, in the engine).
pub trait MemoryBudget: Send + Sync {
    /// Takes `bytes` more; false (nothing taken) when the budget has no room.
    fn try_grow(&self, bytes: usize) -> bool;
    /// Takes `bytes` more even past the budget: what a write cannot do without.
    fn grow(&self, bytes: usize);
    /// Gives `bytes` back.
    fn shrink(&self, bytes: usize);
}

/// The budgets of a write's memory: the rows (spillable) and what it routes by (not).
#[derive(Clone)]
pub struct Budgets {
    /// Rows held in memory and the rows of a wave; spilled when this has no room.
    pub rows: Arc<dyn MemoryBudget>,
    /// Record keys, partition paths, ordering values and flags: held until the commit.
    pub routing: Arc<dyn MemoryBudget>,
}

impl Budgets {
    /// No limits.
    pub fn unbounded() -> Self {
        Self {
            rows: Arc::new(Unbounded),
            routing: Arc::new(Unbounded),
        }
    }
}

/// A budget with room for everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct Unbounded;

impl MemoryBudget for Unbounded {
    fn try_grow(&self, _bytes: usize) -> bool {
        true
    }
    fn grow(&self, _bytes: usize) {}
    fn shrink(&self, _bytes: usize) {}
}

/// A temporary local file that spilled rows are written to; the owner of `keep` removes it
/// when dropped.
pub struct SpillFile {
    path: PathBuf,
    _keep: Box<dyn Any + Send + Sync>,
}

impl SpillFile {
    /// A spill file at `path`, kept alive (and removed when dropped) by `keep`.
    pub fn new(path: PathBuf, keep: Box<dyn Any + Send + Sync>) -> Self {
        Self { path, _keep: keep }
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Where spill files come from (DataFusion's disk manager, in the engine).
pub trait SpillSpace: Send + Sync {
    /// A new, empty spill file.
    fn create(&self) -> Result<SpillFile>;
}

/// How the record keys of the incoming rows are had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource {
    /// Computed from the key fields (failing on a null key) and kept.
    Keep,
    /// Computed to validate them only; the writer computes them again per new file group.
    Validate,
    /// Rows read from the table (a change set): keys, partition paths and base file names
    /// come from the meta columns; new rows (null meta columns, e.g. MERGE inserts) get
    /// computed keys (generated ones, for tables without a key, when the instant is known).
    Prepped,
}

/// Strings of few distinct values (partition paths, file names), one small id per row.
#[derive(Debug, Default)]
pub struct Interned {
    values: Vec<String>,
    index: crate::tasks::FastMap<String, u32>,
    rows: Vec<u32>,
}

const NULL_ID: u32 = u32::MAX;

impl Interned {
    fn push(&mut self, value: Option<&str>) {
        let id = match value {
            None => NULL_ID,
            // rows of one partition or file often come together
            Some(v)
                if self
                    .rows
                    .last()
                    .is_some_and(|&l| l != NULL_ID && self.values[l as usize] == v) =>
            {
                *self.rows.last().expect("checked")
            }
            Some(v) => match self.index.get(v) {
                Some(&id) => id,
                None => {
                    let id = self.values.len() as u32;
                    self.values.push(v.to_string());
                    self.index.insert(v.to_string(), id);
                    id
                }
            },
        };
        self.rows.push(id);
    }

    /// The value of row `row` (None: null).
    pub fn get(&self, row: usize) -> Option<&str> {
        match self.rows[row] {
            NULL_ID => None,
            id => Some(&self.values[id as usize]),
        }
    }

    /// The value of row `row`, `""` for null.
    pub fn value(&self, row: usize) -> &str {
        self.get(row).unwrap_or_default()
    }

    /// The id of row `row`'s value (`u32::MAX` for null).
    pub fn id(&self, row: usize) -> u32 {
        self.rows[row]
    }

    /// The distinct values, by id.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    fn heap_bytes(&self) -> usize {
        self.rows.capacity() * 4 + self.values.iter().map(|v| v.len() * 2 + 48).sum::<usize>()
    }
}

/// Collects the rows of a write batch by batch (see the module docs).
pub struct IncomingBuilder {
    keygen: KeyGenerator,
    key_source: KeySource,
    ordering: Option<FieldPath>,
    rows: RowStore,
    routing_budget: Arc<dyn MemoryBudget>,
    /// Bytes of routing columns taken from the routing budget.
    routing_held: usize,
    keys: Vec<StringArray>,
    paths: Interned,
    base_files: Option<Interned>,
    ordering_values: Vec<ArrayRef>,
    deletes: Option<Vec<bool>>,
    /// Change sets: each row's row in its base file (`NO_BASE_ROW`: none known).
    base_rows: Option<Vec<i64>>,
}

/// A row whose row in a base file is not known.
const NO_BASE_ROW: i64 = -1;

impl IncomingBuilder {
    /// A builder for rows of `schema` (the table schema, meta columns first). `ordering`
    /// names the ordering field when the write pre-combines or orders by it.
    pub fn new(
        schema: SchemaRef,
        keygen: KeyGenerator,
        key_source: KeySource,
        ordering: Option<&str>,
        budgets: Budgets,
        spill: Option<Arc<dyn SpillSpace>>,
    ) -> Result<Self> {
        let ordering = ordering
            .map(|f| FieldPath::resolve(schema.as_ref(), f))
            .transpose()?;
        Ok(Self {
            rows: RowStore::new(schema, budgets.rows, spill),
            keygen,
            base_files: (key_source == KeySource::Prepped).then(Interned::default),
            key_source,
            ordering,
            routing_budget: budgets.routing,
            routing_held: 0,
            keys: Vec::new(),
            paths: Interned::default(),
            ordering_values: Vec::new(),
            deletes: None,
            base_rows: None,
        })
    }

    /// Adds a change set's batch ([`IncomingBuilder::push`] with its delete flags), with the
    /// rows of their base files its rows were read from when it carries them.
    pub fn push_change_set(&mut self, change: ChangeRows) -> Result<()> {
        let before = self.rows.num_rows();
        let n = change.rows.num_rows();
        self.push(change.rows, Some(&change.deletes))?;
        let Some(rows) = change.base_rows else {
            if let Some(b) = &mut self.base_rows {
                b.resize(before + n, NO_BASE_ROW);
            }
            return Ok(());
        };
        let bytes = n * std::mem::size_of::<i64>();
        self.reserve_routing(bytes)?;
        let all = self.base_rows.get_or_insert_with(Vec::new);
        all.resize(before, NO_BASE_ROW);
        all.extend(
            rows.iter()
                .map(|r| r.filter(|r| *r >= 0).unwrap_or(NO_BASE_ROW)),
        );
        Ok(())
    }

    /// Adds a batch (table schema); `deletes` flags the rows that delete their record (a
    /// change set's). Fails on a null record key before anything is written.
    pub fn push(&mut self, batch: RecordBatch, deletes: Option<&[bool]>) -> Result<()> {
        let n = batch.num_rows();
        if n == 0 {
            return Ok(());
        }
        let mut routing_bytes = 0;
        match self.key_source {
            KeySource::Keep | KeySource::Validate if self.keygen.has_generated_keys() => {}
            KeySource::Keep => {
                let keys = self.keygen.record_keys(&batch)?;
                routing_bytes += keys.get_array_memory_size();
                self.keys.push(keys);
            }
            KeySource::Validate => {
                self.keygen.record_keys(&batch)?;
            }
            KeySource::Prepped => {
                let keys = self.prepped_keys(&batch)?;
                routing_bytes += keys.get_array_memory_size();
                self.keys.push(keys);
            }
        }
        let before =
            self.paths.heap_bytes() + self.base_files.as_ref().map_or(0, Interned::heap_bytes);
        self.push_paths(&batch)?;
        routing_bytes += self.paths.heap_bytes()
            + self.base_files.as_ref().map_or(0, Interned::heap_bytes)
            - before;
        if let Some(path) = &self.ordering {
            let col = path.values(batch.column(path.top()))?;
            routing_bytes += col.get_array_memory_size();
            self.ordering_values.push(col);
        }
        if let Some(flags) = deletes {
            self.deletes
                .get_or_insert_with(|| vec![false; self.rows.num_rows()])
                .extend_from_slice(flags);
            routing_bytes += n;
        } else if let Some(d) = &mut self.deletes {
            d.extend(std::iter::repeat_n(false, n));
        }
        self.reserve_routing(routing_bytes)?;

        self.rows.push(batch)
    }

    /// Keys of a change set's batch: `_hoodie_record_key`, or computed for new rows (null
    /// for new rows of a table with generated keys: filled in when the instant is known).
    fn prepped_keys(&self, batch: &RecordBatch) -> Result<StringArray> {
        let meta = crate::meta::record_keys(batch);
        if meta.null_count() == 0 || self.keygen.has_generated_keys() {
            return Ok(meta.clone());
        }
        let new_rows: Vec<u32> = (0..meta.len())
            .filter(|&i| meta.is_null(i))
            .map(|i| i as u32)
            .collect();
        // new rows must have valid keys (a null key is an error)
        let fresh = self
            .keygen
            .record_keys(&take_record_batch(batch, &UInt32Array::from(new_rows))?)?;
        let mut next = 0;
        Ok((0..meta.len())
            .map(|i| {
                Some(if meta.is_null(i) {
                    next += 1;
                    fresh.value(next - 1)
                } else {
                    meta.value(i)
                })
            })
            .collect())
    }

    fn push_paths(&mut self, batch: &RecordBatch) -> Result<()> {
        let stored =
            (self.key_source == KeySource::Prepped).then(|| batch.column(3).as_string::<i32>());
        let computed = match stored {
            Some(s) if s.null_count() == 0 => None,
            _ => Some(self.keygen.partition_paths(batch)?),
        };
        for i in 0..batch.num_rows() {
            let path = match (stored, &computed) {
                (Some(s), _) if s.is_valid(i) => s.value(i),
                (_, Some(c)) => c.value(i),
                _ => unreachable!("computed when a stored path is null"),
            };
            self.paths.push(Some(path));
        }
        if let Some(files) = &mut self.base_files {
            let names = batch.column(4).as_string::<i32>();
            for i in 0..names.len() {
                files.push(names.is_valid(i).then(|| names.value(i)));
            }
        }
        Ok(())
    }

    fn reserve_routing(&mut self, bytes: usize) -> Result<()> {
        if !self.routing_budget.try_grow(bytes) {
            self.rows.spill()?;
            if !self.routing_budget.try_grow(bytes) {
                return Err(FormatError::MemoryLimit {
                    what: "the record keys, partition paths and ordering values of the write",
                    needed: bytes,
                });
            }
        }
        self.routing_held += bytes;
        Ok(())
    }

    /// The collected rows.
    pub fn finish(self) -> Result<Incoming> {
        let keys = match self.keys.len() {
            0 => None,
            1 => self.keys.into_iter().next(),
            _ => {
                let parts: Vec<&dyn Array> = self.keys.iter().map(|k| k as &dyn Array).collect();
                Some(concat(&parts)?.as_string::<i32>().clone())
            }
        };
        let ordering = match self.ordering_values.len() {
            0 => None,
            1 => self.ordering_values.into_iter().next(),
            _ => {
                let parts: Vec<&dyn Array> =
                    self.ordering_values.iter().map(|a| a.as_ref()).collect();
                Some(concat(&parts)?)
            }
        };
        Ok(Incoming {
            rows: self.rows,
            routing_held: self.routing_held,
            routing_budget: self.routing_budget,
            keys,
            paths: self.paths,
            base_files: self.base_files,
            ordering,
            deletes: self.deletes,
            base_rows: self.base_rows,
        })
    }
}

/// The rows of a write and what it routes them by (see the module docs).
pub struct Incoming {
    rows: RowStore,
    routing_held: usize,
    routing_budget: Arc<dyn MemoryBudget>,
    keys: Option<StringArray>,
    paths: Interned,
    base_files: Option<Interned>,
    ordering: Option<ArrayRef>,
    deletes: Option<Vec<bool>>,
    base_rows: Option<Vec<i64>>,
}

impl Drop for Incoming {
    fn drop(&mut self) {
        self.routing_budget.shrink(self.routing_held);
    }
}

impl Incoming {
    /// The table schema of the rows.
    pub fn schema(&self) -> &SchemaRef {
        self.rows.schema()
    }

    /// How many rows.
    pub fn num_rows(&self) -> usize {
        self.rows.num_rows()
    }

    /// Whether any rows went to spill files.
    pub fn spilled(&self) -> bool {
        self.rows.spilled()
    }

    /// The record keys (see [`KeySource`]); None when not kept.
    pub fn keys(&self) -> Option<&StringArray> {
        self.keys.as_ref()
    }

    /// Partition paths (stored ones for rows read from the table).
    pub fn paths(&self) -> &Interned {
        &self.paths
    }

    /// The base file each row was read from (change sets; null for new rows).
    pub fn base_files(&self) -> Option<&Interned> {
        self.base_files.as_ref()
    }

    /// The ordering field's values, when asked for.
    pub fn ordering(&self) -> Option<&ArrayRef> {
        self.ordering.as_ref()
    }

    /// The row of its base file row `row` was read from, when the change set carried it.
    pub fn base_row(&self, row: usize) -> Option<u64> {
        let r = *self.base_rows.as_ref()?.get(row)?;
        (r != NO_BASE_ROW).then_some(r as u64)
    }

    /// Whether the rows carry the rows of their base files ([`Incoming::base_row`]).
    pub fn has_base_rows(&self) -> bool {
        self.base_rows.is_some()
    }

    /// Whether row `row` deletes its record.
    pub fn is_delete(&self, row: usize) -> bool {
        self.deletes.as_ref().is_some_and(|d| d[row])
    }

    /// The in-memory size of `rows` rows, estimated from the average row.
    pub fn estimate_bytes(&self, rows: usize) -> usize {
        self.rows.estimate_bytes(rows)
    }

    /// Gives change-set rows of a table with generated keys (new rows, whose key is null)
    /// the keys Hudi 1.x generates for `instant`.
    pub fn fill_generated_keys(&mut self, instant: &str) {
        let Some(keys) = &self.keys else { return };
        if keys.null_count() == 0 {
            return;
        }
        let filled: StringArray = (0..keys.len())
            .map(|i| {
                Some(if keys.is_null(i) {
                    generated_key(instant, 0, i as u64)
                } else {
                    keys.value(i).to_string()
                })
            })
            .collect();
        self.keys = Some(filled);
    }

    /// How many of `units` (row counts, from `first` on) the next wave takes: as many as the
    /// rows budget holds, at least one. Their estimated memory is taken from the budget until
    /// [`Incoming::end_wave`]. When even the first does not fit, the rows still in memory are
    /// spilled first; a unit that does not fit after that is taken anyway (a file group's
    /// rows are merged together).
    pub fn plan_wave(&mut self, units: &[usize], first: usize) -> Result<usize> {
        self.rows.plan_wave(units, first)
    }

    /// Gives back the memory of the wave planned last.
    pub fn end_wave(&mut self) {
        self.rows.end_wave()
    }

    /// The rows of each unit (global row numbers), in the order given, read in one pass over
    /// the batches (spilled ones read back from their files). A unit comes back as pieces
    /// whose concatenation is its rows: one piece per batch when its rows ascend, else one
    /// batch. `last`: no later call gathers anything, so each batch's memory is given back as
    /// soon as its rows are taken.
    pub fn gather(&mut self, units: &[&[u32]], last: bool) -> Result<Vec<Vec<RecordBatch>>> {
        self.rows.gather(units, last)
    }
}

mod rows;
use rows::RowStore;

#[cfg(test)]
mod tests;
