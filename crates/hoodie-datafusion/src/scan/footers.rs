//! Base-file footers shared by a statement's scans and its write: both go through the session's
//! file metadata cache (`datafusion.runtime.metadata_cache_limit` bounds it), so a footer the
//! scan read is not read again by the key lookup or the rewrite of the same file, nor by
//! another partition of the scan that reads another part of the file.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::error::Result as DFResult;
use datafusion::parquet::arrow::arrow_reader::ArrowReaderOptions;
use datafusion::parquet::arrow::async_reader::AsyncFileReader;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use futures::future::BoxFuture;

use datafusion::datasource::physical_plan::parquet::metadata::CachedParquetMetaData;
use datafusion::datasource::physical_plan::parquet::CachedParquetFileReaderFactory;
use datafusion::datasource::physical_plan::ParquetFileReaderFactory;
use datafusion::execution::cache::cache_manager::{CachedFileMetadataEntry, FileMetadataCache};
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::parquet::file::metadata::ParquetMetaData;
use hoodie_format::footer::FooterCache;
use hoodie_format::storage::TableStorage;
use hoodie_format::HudiTable;
use object_store::path::Path;
use object_store::ObjectMeta;

/// The session's file metadata cache, as the format's footer cache.
#[derive(Debug)]
struct SessionFooters(Arc<FileMetadataCache>);

/// What a hoodie scan gives DataFusion for a base file: its listed size, and no modification
/// time (files are immutable; the timeline names them), so entries put here match the scan's.
pub(crate) fn object_meta(location: Path, size: u64) -> ObjectMeta {
    ObjectMeta {
        location,
        last_modified: chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
        size,
        e_tag: None,
        version: None,
    }
}

impl FooterCache for SessionFooters {
    fn get(&self, path: &Path) -> Option<(u64, Arc<ParquetMetaData>)> {
        let entry = self.0.get(path)?;
        let meta = entry
            .file_metadata
            .as_any()
            .downcast_ref::<CachedParquetMetaData>()?;
        Some((entry.meta.size, meta.parquet_metadata().clone()))
    }

    fn put(&self, path: &Path, size: u64, meta: Arc<ParquetMetaData>) {
        self.0.put(
            path,
            CachedFileMetadataEntry::new(
                object_meta(path.clone(), size),
                Arc::new(CachedParquetMetaData::new(meta)),
            ),
        );
    }
}

/// `runtime`'s file metadata cache, as the format's footer cache.
pub(crate) fn session_footers(runtime: &RuntimeEnv) -> Arc<dyn FooterCache> {
    Arc::new(SessionFooters(
        runtime.cache_manager.get_file_metadata_cache(),
    ))
}

/// `table`, its footers read through `runtime`'s file metadata cache.
pub(crate) fn with_session_footers(table: &HudiTable, runtime: &RuntimeEnv) -> HudiTable {
    table.with_footer_cache(session_footers(runtime))
}

/// The parquet reader factory of a hoodie scan: DataFusion's, over the table's store and the
/// session's file metadata cache, with the footer of a file split across several of the
/// scan's partitions read by one of them (the others wait for it and find it cached).
pub(crate) fn reader_factory(
    storage: &TableStorage,
    runtime: &RuntimeEnv,
) -> Arc<dyn ParquetFileReaderFactory> {
    Arc::new(OneFooterRead {
        inner: CachedParquetFileReaderFactory::new(
            storage.store().clone(),
            runtime.cache_manager.get_file_metadata_cache(),
        ),
        reading: Default::default(),
    })
}

/// A lock per file of the scan, held while its footer is read.
type FooterLocks = Arc<Mutex<HashMap<Path, Arc<tokio::sync::Mutex<()>>>>>;

#[derive(Debug)]
struct OneFooterRead {
    inner: CachedParquetFileReaderFactory,
    reading: FooterLocks,
}

impl ParquetFileReaderFactory for OneFooterRead {
    fn create_reader(
        &self,
        partition_index: usize,
        file: PartitionedFile,
        metadata_size_hint: Option<usize>,
        metrics: &ExecutionPlanMetricsSet,
    ) -> DFResult<Box<dyn AsyncFileReader + Send>> {
        let lock = self
            .reading
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(file.object_meta.location.clone())
            .or_default()
            .clone();
        let inner = self
            .inner
            .create_reader(partition_index, file, metadata_size_hint, metrics)?;
        Ok(Box::new(LockedFooter { inner, lock }))
    }
}

/// A reader whose footer read holds its file's lock.
struct LockedFooter {
    inner: Box<dyn AsyncFileReader + Send>,
    lock: Arc<tokio::sync::Mutex<()>>,
}

impl AsyncFileReader for LockedFooter {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        self.inner.get_bytes(range)
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        self.inner.get_byte_ranges(ranges)
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        Box::pin(async move {
            let _reading = self.lock.lock().await;
            self.inner.get_metadata(options).await
        })
    }
}
