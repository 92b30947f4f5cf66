//! Length-prefixed frames for what crosses to another process (a file group task to its
//! writer, a slice reader to a worker, an engine's scan node): JSON, Arrow IPC streams (a
//! batch, or a schema alone) and raw bytes. A damaged or truncated frame is a
//! [`FormatError::Corrupt`], never a panic.

use std::io::Cursor;

use arrow::array::RecordBatch;
use arrow::datatypes::{Schema, SchemaRef};
use arrow::ipc::reader::StreamReader;
use arrow::ipc::writer::StreamWriter;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::error::{FormatError, Result};

/// The error of a damaged frame of `what`.
pub fn corrupt(what: &str, reason: impl ToString) -> FormatError {
    FormatError::Corrupt {
        path: what.to_string(),
        reason: reason.to_string(),
    }
}

/// Frames being written.
pub struct Frames {
    what: &'static str,
    out: Vec<u8>,
}

impl Frames {
    /// Frames of `what` (named in the errors).
    pub fn new(what: &'static str) -> Self {
        Self {
            what,
            out: Vec::new(),
        }
    }

    /// A frame of raw bytes.
    pub fn bytes(&mut self, frame: &[u8]) {
        self.out
            .extend_from_slice(&(frame.len() as u64).to_le_bytes());
        self.out.extend_from_slice(frame);
    }

    /// A frame of `value` as JSON.
    pub fn json<T: Serialize>(&mut self, value: &T) -> Result<()> {
        let json = serde_json::to_vec(value).map_err(|e| corrupt(self.what, e))?;
        self.bytes(&json);
        Ok(())
    }

    /// A frame of `batch` as an Arrow IPC stream.
    pub fn batch(&mut self, batch: &RecordBatch) -> Result<()> {
        let mut ipc = Vec::new();
        let mut writer = StreamWriter::try_new(&mut ipc, &batch.schema())?;
        writer.write(batch)?;
        writer.finish()?;
        drop(writer);
        self.bytes(&ipc);
        Ok(())
    }

    /// A frame of `schema` as an Arrow IPC stream of no batches.
    pub fn schema(&mut self, schema: &Schema) -> Result<()> {
        let mut ipc = Vec::new();
        let mut writer = StreamWriter::try_new(&mut ipc, schema)?;
        writer.finish()?;
        drop(writer);
        self.bytes(&ipc);
        Ok(())
    }

    /// The frames' bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        self.out
    }
}

/// Frames being read, in the order they were written.
pub struct Chunks<'a> {
    what: &'static str,
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Chunks<'a> {
    /// The frames of `what` in `bytes`.
    pub fn new(what: &'static str, bytes: &'a [u8]) -> Self {
        Self { what, bytes, at: 0 }
    }

    /// Whether every frame was read.
    pub fn is_done(&self) -> bool {
        self.at >= self.bytes.len()
    }

    /// The error of a damaged frame.
    pub fn corrupt(&self, reason: impl ToString) -> FormatError {
        corrupt(self.what, reason)
    }

    /// The next frame's bytes.
    pub fn bytes(&mut self) -> Result<&'a [u8]> {
        let truncated = || corrupt(self.what, "truncated");
        let len_end = self.at.checked_add(8).ok_or_else(truncated)?;
        let len: [u8; 8] = self
            .bytes
            .get(self.at..len_end)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(truncated)?;
        // a length past the end (or past usize) is a truncated or damaged frame, not a panic
        let end = usize::try_from(u64::from_le_bytes(len))
            .ok()
            .and_then(|len| len_end.checked_add(len))
            .ok_or_else(truncated)?;
        let chunk = self.bytes.get(len_end..end).ok_or_else(truncated)?;
        self.at = end;
        Ok(chunk)
    }

    /// The next frame, as JSON.
    pub fn json<T: DeserializeOwned>(&mut self) -> Result<T> {
        let frame = self.bytes()?;
        serde_json::from_slice(frame).map_err(|e| self.corrupt(e))
    }

    /// The next frame, a batch.
    pub fn batch(&mut self) -> Result<RecordBatch> {
        let mut reader = StreamReader::try_new(Cursor::new(self.bytes()?), None)?;
        match reader.next() {
            Some(batch) => Ok(batch?),
            None => Err(self.corrupt("an empty batch")),
        }
    }

    /// The next frame, a schema.
    pub fn schema(&mut self) -> Result<SchemaRef> {
        let reader = StreamReader::try_new(Cursor::new(self.bytes()?), None)?;
        Ok(reader.schema())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int32Array};
    use arrow::datatypes::{DataType, Field};

    use super::*;

    #[test]
    fn frames_read_back_and_damage_is_an_error() {
        let batch = RecordBatch::try_from_iter([(
            "n",
            Arc::new(Int32Array::from(vec![Some(1), None])) as ArrayRef,
        )])
        .unwrap();
        let schema = Schema::new(vec![Field::new("s", DataType::Utf8, true)]);
        let mut frames = Frames::new("a test");
        frames.json(&vec!["a", "b"]).unwrap();
        frames.batch(&batch).unwrap();
        frames.schema(&schema).unwrap();
        let bytes = frames.into_bytes();

        let mut chunks = Chunks::new("a test", &bytes);
        assert_eq!(chunks.json::<Vec<String>>().unwrap(), ["a", "b"]);
        assert_eq!(chunks.batch().unwrap(), batch);
        assert_eq!(chunks.schema().unwrap().as_ref(), &schema);
        assert!(chunks.is_done());

        for cut in [3, 12, bytes.len() - 1] {
            let mut chunks = Chunks::new("a test", &bytes[..cut]);
            let read = chunks
                .json::<Vec<String>>()
                .and_then(|_| chunks.batch())
                .and_then(|_| chunks.schema());
            let err = read.unwrap_err().to_string();
            assert!(err.contains("a test"), "{err}");
        }
    }
}
