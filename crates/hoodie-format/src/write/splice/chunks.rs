//! Writing a spliced row group: the re-encoded chunks and the ones copied from the old file,
//! which are fetched just before they are appended.

use super::*;

/// The old file of a spliced rewrite.
pub(super) struct OldFile<'a> {
    pub(super) storage: &'a TableStorage,
    pub(super) rel: &'a str,
    pub(super) footer: &'a ParquetMetaData,
}

/// Closes the re-encoded chunks of row group `g` and writes the row group: those chunks and the
/// copied ones, in column order, with the old chunks' statistics and page index. A copied chunk
/// is fetched from the old file just before it is appended, and each chunk is uploaded once
/// appended, so that a row group is never held in memory whole.
pub(super) async fn append_row_group(
    old: &OldFile<'_>,
    file: &mut SerializedFileWriter<Pending>,
    g: usize,
    writers: Vec<Option<ArrowColumnWriter>>,
    rel: &str,
    pending: &Pending,
    out: &mut Upload,
) -> Result<()> {
    let err = |e| FormatError::parquet(rel, e);
    let (storage, footer) = (old.storage, old.footer);
    let rg = footer.row_group(g);
    let mut row_group = file.next_row_group().map_err(err)?;
    for (c, writer) in writers.into_iter().enumerate() {
        match writer {
            Some(w) => w
                .close()
                .map_err(err)?
                .append_to_row_group(&mut row_group)
                .map_err(err)?,
            None => {
                let chunk = rg.column(c);
                let (start, len) = chunk.byte_range();
                let path = storage.path(old.rel);
                let bytes = storage
                    .store()
                    .get_range(&path, start..start + len)
                    .await
                    .map_err(|e| FormatError::storage(&path, e))?;
                let close = ColumnCloseResult {
                    bytes_written: chunk.compressed_size() as u64,
                    rows_written: rg.num_rows() as u64,
                    metadata: chunk.clone(),
                    bloom_filter: None,
                    column_index: footer.column_index().map(|ix| ix[g][c].clone()),
                    offset_index: footer.offset_index().map(|ix| ix[g][c].clone()),
                };
                let source = ChunkBytes {
                    parts: vec![(start, bytes)],
                };
                row_group.append_column(&source, close).map_err(err)?;
            }
        }
        pending.upload(out, storage, rel).await?;
    }
    row_group.close().map_err(err)?;
    pending.upload(out, storage, rel).await
}

/// What the Parquet writer of a spliced file wrote and was not uploaded yet: the writer
/// appends to it, the rewrite takes it out between column chunks.
#[derive(Clone, Default)]
pub(super) struct Pending(Arc<std::sync::Mutex<Vec<u8>>>);

impl Pending {
    fn take(&self) -> Vec<u8> {
        let mut buf = self.0.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *buf)
    }

    /// Uploads what was written so far to `out` (file `rel` of `storage`).
    pub(super) async fn upload(
        &self,
        out: &mut Upload,
        storage: &TableStorage,
        rel: &str,
    ) -> Result<()> {
        let bytes = self.take();
        if bytes.is_empty() {
            return Ok(());
        }
        out.put(Bytes::from(bytes))
            .await
            .map_err(|e| FormatError::storage(storage.path(rel), e))
    }
}

impl std::io::Write for Pending {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        let mut buf = self.0.lock().unwrap_or_else(|e| e.into_inner());
        buf.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Column chunks fetched from the old file, addressed by their offsets in it.
pub(super) struct ChunkBytes {
    pub(super) parts: Vec<(u64, Bytes)>,
}

impl ChunkBytes {
    pub(super) fn slice(&self, start: u64, len: Option<usize>) -> parquet::errors::Result<Bytes> {
        for (offset, bytes) in &self.parts {
            let end = offset + bytes.len() as u64;
            if (*offset..end).contains(&start) {
                let from = (start - offset) as usize;
                let to = len.map_or(bytes.len(), |l| from + l);
                if to <= bytes.len() {
                    return Ok(bytes.slice(from..to));
                }
            }
        }
        Err(parquet::errors::ParquetError::General(format!(
            "column chunk bytes at {start} were not fetched"
        )))
    }
}

impl Length for ChunkBytes {
    fn len(&self) -> u64 {
        self.parts
            .iter()
            .map(|(o, b)| o + b.len() as u64)
            .max()
            .unwrap_or(0)
    }
}

impl ChunkReader for ChunkBytes {
    type T = bytes::buf::Reader<Bytes>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        use bytes::Buf;
        Ok(self.slice(start, None)?.reader())
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        self.slice(start, Some(length))
    }
}
