//! An object store that fails its N-th write, for failure injection.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};

/// Fails the `fail_at`-th write (1-based) and counts all writes.
#[derive(Debug)]
pub struct FailingStore {
    pub inner: Arc<dyn ObjectStore>,
    pub writes: AtomicUsize,
    pub fail_at: usize,
    /// Reads of Parquet files.
    pub parquet_reads: AtomicUsize,
    /// Deletes count (and fail) as writes.
    pub deletes: bool,
    /// The prefixes listed recursively, in order.
    pub listed: std::sync::Mutex<Vec<String>>,
    /// The folders listed one level deep (with a delimiter), in order.
    pub listed_dirs: std::sync::Mutex<Vec<String>>,
    /// The reads of Parquet files, in order.
    pub parquet_gets: std::sync::Mutex<Vec<ParquetGet>>,
}

/// One read of a Parquet file.
#[derive(Debug, Clone)]
pub struct ParquetGet {
    pub path: String,
    pub range: Option<object_store::GetRange>,
    /// A HEAD request (metadata only).
    pub head: bool,
}

impl fmt::Display for FailingStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FailingStore(fail at write {})", self.fail_at)
    }
}

impl FailingStore {
    /// A store over `inner` that fails write `fail_at` (1-based).
    pub fn new(inner: Arc<dyn ObjectStore>, fail_at: usize) -> Self {
        Self {
            inner,
            writes: AtomicUsize::new(0),
            fail_at,
            parquet_reads: AtomicUsize::new(0),
            deletes: false,
            listed: std::sync::Mutex::new(Vec::new()),
            listed_dirs: std::sync::Mutex::new(Vec::new()),
            parquet_gets: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// A store over `inner` that also counts deletes as writes, failing the `fail_at`-th.
    pub fn with_deletes(inner: Arc<dyn ObjectStore>, fail_at: usize) -> Self {
        Self {
            deletes: true,
            ..Self::new(inner, fail_at)
        }
    }

    /// Writes tried so far.
    pub fn writes(&self) -> usize {
        self.writes.load(Ordering::SeqCst)
    }

    fn check(&self, location: &Path) -> Result<()> {
        let n = self.writes.fetch_add(1, Ordering::SeqCst) + 1;
        if n == self.fail_at {
            return Err(object_store::Error::Generic {
                store: "failing",
                source: format!("injected failure of write {n} ({location})").into(),
            });
        }
        Ok(())
    }
}

#[async_trait]
impl ObjectStore for FailingStore {
    async fn put_opts(
        &self,
        location: &Path,
        payload: PutPayload,
        opts: PutOptions,
    ) -> Result<PutResult> {
        self.check(location)?;
        self.inner.put_opts(location, payload, opts).await
    }
    async fn put_multipart_opts(
        &self,
        location: &Path,
        opts: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        self.check(location)?;
        self.inner.put_multipart_opts(location, opts).await
    }
    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        if location.as_ref().ends_with(".parquet") {
            self.parquet_reads.fetch_add(1, Ordering::SeqCst);
            self.parquet_gets.lock().unwrap().push(ParquetGet {
                path: location.to_string(),
                range: options.range.clone(),
                head: options.head,
            });
        }
        self.inner.get_opts(location, options).await
    }
    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        if !self.deletes {
            return self.inner.delete_stream(locations);
        }
        // each delete is checked as it is asked for; a failed one never reaches the store
        let mut checked = Vec::new();
        let mut pending = locations;
        let inner = self.inner.clone();
        let this: &Self = self;
        let mut failed = None;
        while let Some(Ok(p)) = futures::executor::block_on(futures::StreamExt::next(&mut pending))
        {
            if let Err(e) = this.check(&p) {
                failed = Some(e);
                break;
            }
            checked.push(Ok(p));
        }
        let deleted = inner.delete_stream(Box::pin(futures::stream::iter(checked)));
        match failed {
            None => deleted,
            Some(e) => Box::pin(futures::StreamExt::chain(
                deleted,
                futures::stream::iter(vec![Err(e)]),
            )),
        }
    }
    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        let listed = prefix.map(|p| p.to_string()).unwrap_or_default();
        self.listed.lock().unwrap().push(listed);
        self.inner.list(prefix)
    }
    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        let listed = prefix.map(|p| p.to_string()).unwrap_or_default();
        self.listed_dirs.lock().unwrap().push(listed);
        self.inner.list_with_delimiter(prefix).await
    }
    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        self.inner.copy_opts(from, to, options).await
    }
}
