//! Writing a spliced row group: the re-encoded chunks and the ones copied from the old file.
//!
//! A copied chunk never passes through the Parquet writer: the writer is given placeholder
//! bytes for it (it only counts them to place the chunk's pages), [`Pending`] drops them and
//! notes the chunk's range in the old file instead, and the upload fetches that range in pieces
//! of [`COPY_PIECE`]. So neither the chunk nor a copy of it is ever held whole.

use std::collections::VecDeque;

use super::*;

/// The most of a copied chunk fetched at once (small in unit tests, so that their chunks are
/// fetched in several pieces).
const COPY_PIECE: u64 = if cfg!(test) { 1000 } else { 8 << 20 };

/// The old file of a spliced rewrite.
pub(super) struct OldFile<'a> {
    pub(super) storage: &'a TableStorage,
    pub(super) rel: &'a str,
    pub(super) footer: &'a ParquetMetaData,
}

/// Closes the re-encoded chunks of row group `g` and writes the row group: those chunks and the
/// copied ones, in column order, with the old chunks' statistics and page index. What is
/// written is uploaded after each chunk, so that a row group is never held in memory whole.
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
    let footer = old.footer;
    let rg = footer.row_group(g);
    // where the next chunk starts in the new file: the writer puts nothing between chunks
    let mut at = file.bytes_written() as u64;
    let mut row_group = file.next_row_group().map_err(err)?;
    for (c, writer) in writers.into_iter().enumerate() {
        match writer {
            Some(w) => {
                let chunk = w.close().map_err(err)?;
                let len = chunk.close().metadata.compressed_size() as u64;
                chunk.append_to_row_group(&mut row_group).map_err(err)?;
                at += len;
            }
            None => {
                let chunk = rg.column(c);
                let (start, len) = chunk.byte_range();
                pending.copy(at, start, len, rel)?;
                let close = ColumnCloseResult {
                    bytes_written: len,
                    rows_written: rg.num_rows() as u64,
                    metadata: chunk.clone(),
                    bloom_filter: None,
                    column_index: footer.column_index().map(|ix| ix[g][c].clone()),
                    offset_index: footer.offset_index().map(|ix| ix[g][c].clone()),
                };
                row_group.append_column(&Placeholder, close).map_err(err)?;
                at += len;
            }
        }
        pending.upload(out, old, rel).await?;
    }
    row_group.close().map_err(err)?;
    if file.bytes_written() as u64 != at {
        return Err(FormatError::parquet(
            rel,
            parquet::errors::ParquetError::General(format!(
                "a spliced row group ends at {} where its chunks end at {at}",
                file.bytes_written()
            )),
        ));
    }
    pending.upload(out, old, rel).await
}

/// What the Parquet writer of a spliced file wrote and was not uploaded yet: the writer
/// appends to it, the rewrite takes it out between column chunks.
#[derive(Clone, Default)]
pub(super) struct Pending(Arc<std::sync::Mutex<Unsent>>);

#[derive(Default)]
struct Unsent {
    /// Offset in the new file of the next byte the writer writes.
    at: u64,
    /// What is to be uploaded, in file order.
    parts: Vec<Part>,
    /// The copied chunks whose placeholders have not all arrived, in file order.
    copies: VecDeque<Copy>,
}

/// A piece of the new file to upload.
enum Part {
    /// Bytes the writer wrote.
    Written(Vec<u8>),
    /// `len` bytes of the old file from `from`.
    Copied { from: u64, len: u64 },
}

/// A copied chunk: `len` bytes at `at` in the new file, from `from` in the old one.
struct Copy {
    at: u64,
    from: u64,
    len: u64,
}

impl Unsent {
    fn push_written(&mut self, b: &[u8]) {
        if b.is_empty() {
            return;
        }
        match self.parts.last_mut() {
            Some(Part::Written(v)) => v.extend_from_slice(b),
            _ => self.parts.push(Part::Written(b.to_vec())),
        }
    }

    fn write(&mut self, mut b: &[u8]) {
        while !b.is_empty() {
            let Some(copy) = self.copies.front() else {
                self.push_written(b);
                self.at += b.len() as u64;
                return;
            };
            if self.at < copy.at {
                let n = b.len().min((copy.at - self.at) as usize);
                self.push_written(&b[..n]);
                self.at += n as u64;
                b = &b[n..];
                continue;
            }
            if self.at == copy.at {
                let (from, len) = (copy.from, copy.len);
                self.parts.push(Part::Copied { from, len });
            }
            let end = copy.at + copy.len;
            let n = b.len().min((end - self.at) as usize);
            self.at += n as u64;
            b = &b[n..];
            if self.at == end {
                self.copies.pop_front();
            }
        }
    }
}

impl Pending {
    fn lock(&self) -> std::sync::MutexGuard<'_, Unsent> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes that the `len` bytes the writer will write at `at` in the new file are the old
    /// file's from `from`: they are dropped as they arrive and fetched when uploaded.
    fn copy(&self, at: u64, from: u64, len: u64, rel: &str) -> Result<()> {
        let mut unsent = self.lock();
        let after = unsent.copies.back().map_or(unsent.at, |c| c.at + c.len);
        if at < after {
            return Err(FormatError::parquet(
                rel,
                parquet::errors::ParquetError::General(format!(
                    "a copied chunk placed at {at}, before what is written ({after})"
                )),
            ));
        }
        if len > 0 {
            unsent.copies.push_back(Copy { at, from, len });
        }
        Ok(())
    }

    /// Uploads what was written so far to `out` (file `rel`), fetching the copied chunks from
    /// the `old` file.
    pub(super) async fn upload(
        &self,
        out: &mut Upload,
        old: &OldFile<'_>,
        rel: &str,
    ) -> Result<()> {
        let parts = std::mem::take(&mut self.lock().parts);
        let storage = old.storage;
        let put_err = |e| FormatError::storage(storage.path(rel), e);
        for part in parts {
            match part {
                Part::Written(bytes) => out.put(Bytes::from(bytes)).await.map_err(put_err)?,
                Part::Copied { from, len } => {
                    let path = storage.path(old.rel);
                    let end = from + len;
                    let mut start = from;
                    while start < end {
                        let stop = end.min(start + COPY_PIECE);
                        let bytes = storage
                            .store()
                            .get_range(&path, start..stop)
                            .await
                            .map_err(|e| FormatError::storage(&path, e))?;
                        out.put(bytes).await.map_err(put_err)?;
                        start = stop;
                    }
                }
            }
        }
        Ok(())
    }
}

impl std::io::Write for Pending {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.lock().write(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What the Parquet writer copies for a chunk that [`Pending`] takes from the old file: zeros,
/// which are dropped.
struct Placeholder;

impl Length for Placeholder {
    fn len(&self) -> u64 {
        u64::MAX
    }
}

impl ChunkReader for Placeholder {
    type T = std::io::Repeat;

    fn get_read(&self, _start: u64) -> parquet::errors::Result<Self::T> {
        Ok(std::io::repeat(0))
    }

    fn get_bytes(&self, start: u64, _length: usize) -> parquet::errors::Result<Bytes> {
        Err(parquet::errors::ParquetError::General(format!(
            "the bytes of a copied chunk at {start} are taken from the old file"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(unsent: &Unsent) -> Vec<String> {
        unsent
            .parts
            .iter()
            .map(|p| match p {
                Part::Written(v) => String::from_utf8(v.clone()).unwrap(),
                Part::Copied { from, len } => format!("<{from}+{len}>"),
            })
            .collect()
    }

    #[test]
    fn placeholders_are_dropped_and_their_chunks_noted_in_file_order() {
        let pending = Pending::default();
        pending.copy(3, 100, 4, "f").unwrap();
        pending.copy(7, 200, 2, "f").unwrap();
        pending.copy(12, 300, 1, "f").unwrap();
        // the writer's pieces do not line up with the chunks
        let mut w = pending.clone();
        use std::io::Write;
        for piece in ["ab", "c000", "000", "de", "f0g"] {
            w.write_all(piece.as_bytes()).unwrap();
        }
        let unsent = pending.lock();
        assert_eq!(
            written(&unsent),
            ["abc", "<100+4>", "<200+2>", "def", "<300+1>", "g"]
        );
        assert_eq!(unsent.at, 14);
        assert!(unsent.copies.is_empty());
    }

    #[test]
    fn a_chunk_placed_before_what_is_written_is_an_error() {
        let pending = Pending::default();
        let mut w = pending.clone();
        std::io::Write::write_all(&mut w, b"abcd").unwrap();
        assert!(pending.copy(2, 0, 5, "f").is_err());
        pending.copy(4, 0, 5, "f").unwrap();
        assert!(pending.copy(8, 0, 1, "f").is_err());
        // an empty chunk is nothing to copy
        pending.copy(9, 0, 0, "f").unwrap();
        assert_eq!(pending.lock().copies.len(), 1);
    }

    /// The ranges read through a local store: how many, and the largest.
    #[derive(Debug, Default)]
    struct Recording {
        inner: object_store::local::LocalFileSystem,
        reads: std::sync::atomic::AtomicU64,
        largest: std::sync::atomic::AtomicU64,
    }

    impl std::fmt::Display for Recording {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "Recording")
        }
    }

    #[async_trait::async_trait]
    impl object_store::ObjectStore for Recording {
        async fn put_opts(
            &self,
            location: &object_store::path::Path,
            payload: object_store::PutPayload,
            opts: object_store::PutOptions,
        ) -> object_store::Result<object_store::PutResult> {
            self.inner.put_opts(location, payload, opts).await
        }
        async fn put_multipart_opts(
            &self,
            location: &object_store::path::Path,
            opts: object_store::PutMultipartOptions,
        ) -> object_store::Result<Box<dyn object_store::MultipartUpload>> {
            self.inner.put_multipart_opts(location, opts).await
        }
        async fn get_opts(
            &self,
            location: &object_store::path::Path,
            options: object_store::GetOptions,
        ) -> object_store::Result<object_store::GetResult> {
            use std::sync::atomic::Ordering::SeqCst;
            if let Some(object_store::GetRange::Bounded(r)) = &options.range {
                self.reads.fetch_add(1, SeqCst);
                self.largest.fetch_max(r.end - r.start, SeqCst);
            }
            self.inner.get_opts(location, options).await
        }
        fn delete_stream(
            &self,
            locations: futures::stream::BoxStream<
                'static,
                object_store::Result<object_store::path::Path>,
            >,
        ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::path::Path>>
        {
            self.inner.delete_stream(locations)
        }
        fn list(
            &self,
            prefix: Option<&object_store::path::Path>,
        ) -> futures::stream::BoxStream<'static, object_store::Result<object_store::ObjectMeta>>
        {
            self.inner.list(prefix)
        }
        async fn list_with_delimiter(
            &self,
            prefix: Option<&object_store::path::Path>,
        ) -> object_store::Result<object_store::ListResult> {
            self.inner.list_with_delimiter(prefix).await
        }
        async fn copy_opts(
            &self,
            from: &object_store::path::Path,
            to: &object_store::path::Path,
            options: object_store::CopyOptions,
        ) -> object_store::Result<()> {
            self.inner.copy_opts(from, to, options).await
        }
    }

    /// Any footer: the upload reads only the old file's path.
    fn some_footer() -> ParquetMetaData {
        let batch = RecordBatch::try_from_iter([(
            "c",
            Arc::new(arrow::array::Int32Array::from(vec![1])) as ArrayRef,
        )])
        .unwrap();
        let mut bytes = Vec::new();
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut bytes, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        parquet::file::metadata::ParquetMetaDataReader::new()
            .parse_and_finish(&Bytes::from(bytes))
            .unwrap()
    }

    #[tokio::test]
    async fn a_copied_chunk_is_uploaded_from_the_old_file_in_pieces() {
        use std::sync::atomic::Ordering::SeqCst;
        let tmp = tempfile::tempdir().unwrap();
        let old: Vec<u8> = (0..5_000u32).map(|i| (i % 253) as u8).collect();
        std::fs::write(tmp.path().join("old.bin"), &old).unwrap();
        let store = Arc::new(Recording::default());
        let storage = TableStorage::local(tmp.path())
            .unwrap()
            .with_store(store.clone());
        let footer = some_footer();
        let old_file = OldFile {
            storage: &storage,
            rel: "old.bin",
            footer: &footer,
        };
        // 2,500 bytes of the old file from offset 100 land at offset 4 of the new one
        let pending = Pending::default();
        pending.copy(4, 100, 2_500, "new.bin").unwrap();
        let mut w = pending.clone();
        use std::io::Write;
        w.write_all(b"abcd").unwrap();
        w.write_all(&[0u8; 2_500]).unwrap();
        w.write_all(b"xyz").unwrap();
        let mut out = Upload::new(&storage, "new.bin");
        pending
            .upload(&mut out, &old_file, "new.bin")
            .await
            .unwrap();
        out.shutdown().await.unwrap();

        let new = std::fs::read(tmp.path().join("new.bin")).unwrap();
        let mut expected = b"abcd".to_vec();
        expected.extend_from_slice(&old[100..2_600]);
        expected.extend_from_slice(b"xyz");
        assert_eq!(new, expected);
        // pieces of COPY_PIECE (1000 bytes in unit tests): 1000, 1000, 500
        assert_eq!(store.reads.load(SeqCst), 3);
        assert_eq!(store.largest.load(SeqCst), COPY_PIECE);
    }
}
