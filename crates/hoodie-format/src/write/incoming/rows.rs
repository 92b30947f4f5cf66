//! The rows of a write: in memory while the budget has room, else in Arrow IPC spill files;
//! gathered back a wave of file groups at a time.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::sync::Arc;

use arrow::array::{RecordBatch, UInt32Array};
use arrow::compute::{interleave_record_batch, take_record_batch};
use arrow::datatypes::SchemaRef;
use arrow::ipc::reader::FileReader;
use arrow::ipc::writer::FileWriter;

use super::{MemoryBudget, SpillFile, SpillSpace};
use crate::error::{FormatError, Result};

/// Where one pushed batch is.
pub(super) enum Chunk {
    Memory(RecordBatch),
    /// Batch `batch` of spill file `file`.
    Spilled {
        file: usize,
        batch: usize,
    },
    /// Gathered for the last time.
    Released,
}

/// The rows, batch by batch in arrival order, each in memory or in a spill file.
pub(super) struct RowStore {
    schema: SchemaRef,
    pub(super) chunks: Vec<Chunk>,
    /// The first row of each chunk.
    starts: Vec<usize>,
    files: Vec<SpillFile>,
    rows: usize,
    /// In-memory size of all rows, as pushed.
    bytes: usize,
    /// Bytes of in-memory chunks taken from the budget.
    held: usize,
    /// Bytes of the planned wave taken from the budget.
    wave_held: usize,
    budget: Arc<dyn MemoryBudget>,
    spill: Option<Arc<dyn SpillSpace>>,
}

impl Drop for RowStore {
    fn drop(&mut self) {
        self.budget.shrink(self.held + self.wave_held);
    }
}

impl RowStore {
    pub(super) fn new(
        schema: SchemaRef,
        budget: Arc<dyn MemoryBudget>,
        spill: Option<Arc<dyn SpillSpace>>,
    ) -> Self {
        Self {
            schema,
            chunks: Vec::new(),
            starts: Vec::new(),
            files: Vec::new(),
            rows: 0,
            bytes: 0,
            held: 0,
            wave_held: 0,
            budget,
            spill,
        }
    }

    pub(super) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    pub(super) fn num_rows(&self) -> usize {
        self.rows
    }

    pub(super) fn spilled(&self) -> bool {
        !self.files.is_empty()
    }

    /// Adds a batch: kept in memory if the budget has room, else spilled with every other
    /// batch still in memory.
    pub(super) fn push(&mut self, batch: RecordBatch) -> Result<()> {
        let bytes = batch.get_array_memory_size();
        self.starts.push(self.rows);
        self.rows += batch.num_rows();
        self.bytes += bytes;
        self.chunks.push(Chunk::Memory(batch));
        if self.budget.try_grow(bytes) {
            self.held += bytes;
            Ok(())
        } else {
            self.spill()
        }
    }

    /// The in-memory size of `rows` rows, estimated from the average row.
    pub(super) fn estimate_bytes(&self, rows: usize) -> usize {
        (self.bytes as u128 * rows as u128 / self.rows.max(1) as u128) as usize
    }

    /// How many of `units` (row counts, from `first` on) the next wave takes: as many as the
    /// budget holds, at least one. Their estimated memory is taken from the budget until
    /// [`RowStore::end_wave`]. When even the first does not fit, the rows still in memory are
    /// spilled first; a unit that does not fit after that is taken anyway (a file group's
    /// rows are merged together).
    pub(super) fn plan_wave(&mut self, units: &[usize], first: usize) -> Result<usize> {
        let mut end = first;
        while end < units.len() {
            let bytes = self.estimate_bytes(units[end]);
            if self.budget.try_grow(bytes) {
                self.wave_held += bytes;
                end += 1;
                continue;
            }
            if end > first {
                break;
            }
            if self.held > 0 {
                self.spill()?;
                continue;
            }
            self.budget.grow(bytes);
            self.wave_held += bytes;
            end += 1;
        }
        Ok(end - first)
    }

    /// Gives back the memory of the wave planned last.
    pub(super) fn end_wave(&mut self) {
        self.budget.shrink(self.wave_held);
        self.wave_held = 0;
    }

    /// Writes every in-memory chunk to a new spill file (nothing when all are on disk
    /// already) and gives their memory back.
    pub(super) fn spill(&mut self) -> Result<()> {
        if !self.chunks.iter().any(|c| matches!(c, Chunk::Memory(_))) {
            return Ok(());
        }
        let Some(space) = &self.spill else {
            return Err(FormatError::MemoryLimit {
                what: "the rows of the write (and no spill space is configured)",
                needed: self.bytes,
            });
        };
        let file = space.create()?;
        let io = |source| FormatError::Spill {
            path: file.path().display().to_string(),
            source,
        };
        let out = File::create(file.path()).map_err(io)?;
        let mut writer = FileWriter::try_new(BufWriter::new(out), &self.schema)?;
        let file_no = self.files.len();
        let mut in_file = 0;
        for chunk in self.chunks.iter_mut() {
            if let Chunk::Memory(batch) = chunk {
                writer.write(batch)?;
                *chunk = Chunk::Spilled {
                    file: file_no,
                    batch: in_file,
                };
                in_file += 1;
            }
        }
        writer.finish()?;
        self.files.push(file);
        self.budget.shrink(self.held);
        self.held = 0;
        Ok(())
    }

    /// The rows of each unit (global row numbers), in the order given, read in one pass over
    /// the chunks (spilled ones read back from their files). A unit comes back as pieces whose
    /// concatenation is its rows: one piece per chunk when its rows ascend, else one batch.
    /// `last`: no later call gathers anything, so each chunk's memory is given back as soon as
    /// its rows are taken.
    pub(super) fn gather(&mut self, units: &[&[u32]], last: bool) -> Result<Vec<Vec<RecordBatch>>> {
        let ascending: Vec<bool> = units
            .iter()
            .map(|rows| rows.windows(2).all(|w| w[0] < w[1]))
            .collect();
        // per chunk: the units that want rows of it, with those rows (chunk-local); per
        // unit whose rows do not ascend: where each row lands (chunk, index in its piece)
        let mut wanted: Vec<Vec<(usize, Vec<u32>)>> =
            (0..self.chunks.len()).map(|_| Vec::new()).collect();
        let mut landing: Vec<Vec<(usize, usize)>> = vec![Vec::new(); units.len()];
        for (u, rows) in units.iter().enumerate() {
            let mut c = 0;
            for &r in rows.iter() {
                let r = r as usize;
                let end = self.starts.get(c + 1).copied().unwrap_or(self.rows);
                if r < self.starts[c] || r >= end {
                    c = self.starts.partition_point(|&s| s <= r) - 1;
                }
                let list = &mut wanted[c];
                let at = match list.iter().rposition(|(lu, _)| *lu == u) {
                    Some(at) => at,
                    None => {
                        list.push((u, Vec::new()));
                        list.len() - 1
                    }
                };
                let piece = &mut list[at].1;
                if !ascending[u] {
                    landing[u].push((c, piece.len()));
                }
                piece.push((r - self.starts[c]) as u32);
            }
        }
        let mut pieces: Vec<Vec<(usize, RecordBatch)>> = vec![Vec::new(); units.len()];
        let mut reader: Option<(usize, FileReader<BufReader<File>>)> = None;
        for (c, by_unit) in wanted.into_iter().enumerate() {
            if by_unit.is_empty() {
                continue;
            }
            let batch = match &self.chunks[c] {
                Chunk::Memory(b) => b.clone(),
                Chunk::Spilled { file, batch } => self.read_spilled(&mut reader, *file, *batch)?,
                Chunk::Released => unreachable!("a released chunk is not gathered again"),
            };
            for (u, rows) in by_unit {
                let taken = if rows.len() == batch.num_rows()
                    && rows.iter().enumerate().all(|(i, &r)| i as u32 == r)
                {
                    batch.clone()
                } else {
                    take_record_batch(&batch, &UInt32Array::from(rows))?
                };
                pieces[u].push((c, taken));
            }
            if last {
                self.release(c);
            }
        }
        let mut out = Vec::with_capacity(units.len());
        for (u, unit) in pieces.into_iter().enumerate() {
            if ascending[u] || unit.len() <= 1 {
                out.push(unit.into_iter().map(|(_, b)| b).collect());
                continue;
            }
            let idx: Vec<(usize, usize)> = landing[u]
                .iter()
                .map(|&(c, i)| (unit.partition_point(|(pc, _)| *pc < c), i))
                .collect();
            let refs: Vec<&RecordBatch> = unit.iter().map(|(_, b)| b).collect();
            out.push(vec![interleave_record_batch(&refs, &idx)?]);
        }
        Ok(out)
    }

    /// Drops chunk `c`'s rows (and gives back their memory, if held).
    fn release(&mut self, c: usize) {
        if let Chunk::Memory(b) = std::mem::replace(&mut self.chunks[c], Chunk::Released) {
            let bytes = b.get_array_memory_size().min(self.held);
            self.budget.shrink(bytes);
            self.held -= bytes;
        }
    }

    fn read_spilled(
        &self,
        reader: &mut Option<(usize, FileReader<BufReader<File>>)>,
        file: usize,
        batch: usize,
    ) -> Result<RecordBatch> {
        let path = self.files[file].path();
        let io = |source| FormatError::Spill {
            path: path.display().to_string(),
            source,
        };
        if reader.as_ref().is_none_or(|(f, _)| *f != file) {
            let f = File::open(path).map_err(io)?;
            *reader = Some((file, FileReader::try_new(BufReader::new(f), None)?));
        }
        let (_, r) = reader.as_mut().expect("opened above");
        r.set_index(batch)?;
        match r.next() {
            Some(b) => Ok(b?),
            None => Err(io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("batch {batch} missing"),
            ))),
        }
    }
}
