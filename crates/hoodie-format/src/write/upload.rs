//! The upload of a new data file. object_store's `BufWriter` turns a large file into a
//! multipart upload, which stays on the store (unseen, but stored and billed) when the writer
//! is dropped half-way; [`Upload`] aborts it then, so a write that fails leaves no orphaned
//! multipart upload behind. (A killed process cannot abort: S3 buckets need a lifecycle rule
//! for incomplete multipart uploads, as for any writer.)

use std::pin::Pin;
use std::task::{Context, Poll};

use object_store::buffered::BufWriter;
use tokio::io::AsyncWrite;

use crate::storage::TableStorage;

/// A new object being written; dropped before it completes, it aborts its upload.
pub struct Upload {
    inner: Option<BufWriter>,
    /// Completing has begun: the upload is the store's to finish or fail.
    closing: bool,
}

impl Upload {
    /// Starts writing `rel` in `storage`.
    pub fn new(storage: &TableStorage, rel: &str) -> Self {
        Self::wrap(BufWriter::new(storage.store().clone(), storage.path(rel)))
    }

    fn wrap(inner: BufWriter) -> Self {
        Self {
            inner: Some(inner),
            closing: false,
        }
    }

    /// Writes `bytes` without copying them.
    pub async fn put(&mut self, bytes: bytes::Bytes) -> object_store::Result<()> {
        self.inner
            .as_mut()
            .expect("present until dropped")
            .put(bytes)
            .await
    }

    fn inner(&mut self) -> Pin<&mut BufWriter> {
        Pin::new(self.inner.as_mut().expect("present until dropped"))
    }
}

impl AsyncWrite for Upload {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.get_mut().inner().poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.get_mut().inner().poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        this.closing = true;
        this.inner().poll_shutdown(cx)
    }
}

impl Drop for Upload {
    fn drop(&mut self) {
        let Some(mut inner) = self.inner.take() else {
            return;
        };
        if self.closing {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = inner.abort().await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    use futures::stream::BoxStream;
    use object_store::memory::InMemory;
    use object_store::path::Path;
    use object_store::{
        CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
        ObjectStoreExt, PutMultipartOptions, PutOptions, PutPayload, PutResult, UploadPart,
    };
    use tokio::io::AsyncWriteExt;

    /// Counts the multipart uploads that were aborted.
    #[derive(Debug, Default)]
    struct Counting {
        inner: InMemory,
        aborted: Arc<AtomicUsize>,
    }

    impl std::fmt::Display for Counting {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "Counting")
        }
    }

    #[derive(Debug)]
    struct CountingUpload {
        inner: Box<dyn MultipartUpload>,
        aborted: Arc<AtomicUsize>,
    }

    #[async_trait::async_trait]
    impl MultipartUpload for CountingUpload {
        fn put_part(&mut self, data: PutPayload) -> UploadPart {
            self.inner.put_part(data)
        }
        async fn complete(&mut self) -> object_store::Result<PutResult> {
            self.inner.complete().await
        }
        async fn abort(&mut self) -> object_store::Result<()> {
            self.aborted.fetch_add(1, Ordering::SeqCst);
            self.inner.abort().await
        }
    }

    #[async_trait::async_trait]
    impl ObjectStore for Counting {
        async fn put_opts(
            &self,
            location: &Path,
            payload: PutPayload,
            opts: PutOptions,
        ) -> object_store::Result<PutResult> {
            self.inner.put_opts(location, payload, opts).await
        }
        async fn put_multipart_opts(
            &self,
            location: &Path,
            opts: PutMultipartOptions,
        ) -> object_store::Result<Box<dyn MultipartUpload>> {
            Ok(Box::new(CountingUpload {
                inner: self.inner.put_multipart_opts(location, opts).await?,
                aborted: self.aborted.clone(),
            }))
        }
        async fn get_opts(
            &self,
            location: &Path,
            options: GetOptions,
        ) -> object_store::Result<GetResult> {
            self.inner.get_opts(location, options).await
        }
        fn delete_stream(
            &self,
            locations: BoxStream<'static, object_store::Result<Path>>,
        ) -> BoxStream<'static, object_store::Result<Path>> {
            self.inner.delete_stream(locations)
        }
        fn list(
            &self,
            prefix: Option<&Path>,
        ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
            self.inner.list(prefix)
        }
        async fn list_with_delimiter(
            &self,
            prefix: Option<&Path>,
        ) -> object_store::Result<ListResult> {
            self.inner.list_with_delimiter(prefix).await
        }
        async fn copy_opts(
            &self,
            from: &Path,
            to: &Path,
            options: CopyOptions,
        ) -> object_store::Result<()> {
            self.inner.copy_opts(from, to, options).await
        }
    }

    #[tokio::test]
    async fn a_dropped_upload_aborts_its_multipart_upload_and_a_finished_one_does_not() {
        let store = Arc::new(Counting::default());
        let aborted = store.aborted.clone();
        let small = |name: &str| BufWriter::with_capacity(store.clone(), Path::from(name), 8);
        let mut failed = Upload::wrap(small("a"));
        failed.write_all(&[7u8; 64]).await.unwrap();
        drop(failed);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert_eq!(
            aborted.load(Ordering::SeqCst),
            1,
            "the multipart upload was aborted"
        );
        let mut ok = Upload::wrap(small("b"));
        ok.write_all(&[7u8; 64]).await.unwrap();
        ok.shutdown().await.unwrap();
        drop(ok);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        assert_eq!(aborted.load(Ordering::SeqCst), 1);
        assert_eq!(
            store
                .get(&Path::from("b"))
                .await
                .unwrap()
                .bytes()
                .await
                .unwrap()
                .len(),
            64
        );
        assert!(
            store.head(&Path::from("a")).await.is_err(),
            "nothing stored"
        );
    }
}
