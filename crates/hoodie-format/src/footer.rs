//! Reading Parquet footers of base files: schema, Hudi key/value entries.

use std::sync::Arc;

use arrow::datatypes::{Schema, SchemaRef};
use futures::future::BoxFuture;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStoreExt};
use parquet::arrow::async_reader::MetadataFetch;
use parquet::errors::ParquetError;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};

use crate::error::{FormatError, Result};
use crate::storage::TableStorage;
// the cache of footers already read is the storage's (TableStorage::with_footer_cache)
pub use crate::storage::FooterCache;

/// Bytes fetched from the end of a file on the first try. Hudi footers carry a ~430 KB bloom
/// filter, so a generous first read saves a round trip.
const FIRST_SUFFIX: u64 = 1 << 20;

/// Reads the footer metadata of the base file at `rel` (relative to the table base).
pub async fn read_footer(storage: &TableStorage, rel: &str) -> Result<Arc<ParquetMetaData>> {
    read_footer_with(storage, rel, None, PageIndexPolicy::Skip).await
}

/// Reads the footer metadata of the base file at `rel` whose size the caller knows (from the
/// file listing), so that no HEAD request is needed.
pub async fn read_footer_sized(
    storage: &TableStorage,
    rel: &str,
    size: u64,
) -> Result<Arc<ParquetMetaData>> {
    read_footer_with(storage, rel, Some(size), PageIndexPolicy::Skip).await
}

/// Reads the footer metadata of `rel` with its page index (column and offset indexes) when the
/// file has one.
pub async fn read_footer_with_page_index(
    storage: &TableStorage,
    rel: &str,
) -> Result<Arc<ParquetMetaData>> {
    read_footer_with(storage, rel, None, PageIndexPolicy::Optional).await
}

fn has_page_index(meta: &ParquetMetaData) -> bool {
    meta.column_index().is_some() && meta.offset_index().is_some()
}

async fn read_footer_with(
    storage: &TableStorage,
    rel: &str,
    size: Option<u64>,
    page_index: PageIndexPolicy,
) -> Result<Arc<ParquetMetaData>> {
    let path = storage.path(rel);
    let cache = storage.footer_cache();
    let cached = cache
        .and_then(|c| c.get(&path))
        .filter(|(n, _)| size.is_none_or(|s| s == *n));
    let meta = match cached {
        Some((_, meta)) if page_index == PageIndexPolicy::Skip || has_page_index(&meta) => {
            return Ok(meta)
        }
        // the footer is known, only its page index is still to read
        Some((size, meta)) => load_page_index(storage, rel, size, &meta, page_index).await?,
        None => {
            let size = match size {
                Some(s) => s,
                None => {
                    storage
                        .store()
                        .head(&path)
                        .await
                        .map_err(|e| FormatError::storage(&path, e))?
                        .size
                }
            };
            (
                size,
                Arc::new(fetch_footer(storage, rel, size, page_index).await?),
            )
        }
    };
    if let Some(c) = cache {
        c.put(&path, meta.0, meta.1.clone());
    }
    Ok(meta.1)
}

/// Reads the footer from the end of the file (`size` bytes), with a larger read when the first
/// one was too short.
async fn fetch_footer(
    storage: &TableStorage,
    rel: &str,
    size: u64,
    page_index: PageIndexPolicy,
) -> Result<ParquetMetaData> {
    let path = storage.path(rel);
    let mut want = FIRST_SUFFIX.min(size);
    loop {
        let bytes = get_bounded(storage, &path, size - want..size).await?;
        let mut reader = ParquetMetaDataReader::new().with_page_index_policy(page_index);
        match reader.try_parse_sized(&bytes, size) {
            Ok(()) => return reader.finish().map_err(|e| FormatError::damaged(rel, e)),
            Err(ParquetError::NeedMoreData(n)) if (n as u64) > want && (n as u64) <= size => {
                want = n as u64
            }
            Err(e) => return Err(FormatError::damaged(rel, e)),
        }
    }
}

/// Adds the page index to a footer read without it: only the index's bytes are fetched.
async fn load_page_index(
    storage: &TableStorage,
    rel: &str,
    size: u64,
    meta: &ParquetMetaData,
    page_index: PageIndexPolicy,
) -> Result<(u64, Arc<ParquetMetaData>)> {
    let mut reader =
        ParquetMetaDataReader::new_with_metadata(meta.clone()).with_page_index_policy(page_index);
    let fetch = RangeFetch {
        storage,
        path: storage.path(rel),
    };
    reader
        .load_page_index(fetch)
        .await
        .map_err(|e| FormatError::damaged(rel, e))?;
    let meta = reader.finish().map_err(|e| FormatError::damaged(rel, e))?;
    Ok((size, Arc::new(meta)))
}

/// A bounded range of a file of known size (not a suffix range, which Azure does not serve).
async fn get_bounded(
    storage: &TableStorage,
    path: &Path,
    range: std::ops::Range<u64>,
) -> Result<bytes::Bytes> {
    let opts = GetOptions {
        range: Some(GetRange::Bounded(range)),
        ..Default::default()
    };
    storage
        .store()
        .get_opts(path, opts)
        .await
        .map_err(|e| FormatError::storage(path, e))?
        .bytes()
        .await
        .map_err(|e| FormatError::storage(path, e))
}

/// Byte ranges of one file for the parquet metadata reader.
struct RangeFetch<'a> {
    storage: &'a TableStorage,
    path: Path,
}

impl MetadataFetch for RangeFetch<'_> {
    fn fetch(
        &mut self,
        range: std::ops::Range<u64>,
    ) -> BoxFuture<'_, parquet::errors::Result<bytes::Bytes>> {
        Box::pin(async move {
            get_bounded(self.storage, &self.path, range)
                .await
                .map_err(|e| ParquetError::External(Box::new(e)))
        })
    }
}

/// The Arrow schema of a footer (without file-level metadata).
pub fn arrow_schema(meta: &ParquetMetaData, rel: &str) -> Result<SchemaRef> {
    let fm = meta.file_metadata();
    let s = parquet::arrow::parquet_to_arrow_schema(fm.schema_descr(), fm.key_value_metadata())
        .map_err(|e| FormatError::parquet(rel, e))?;
    Ok(Arc::new(Schema::new(s.fields().clone())))
}

/// A key/value entry of the footer.
pub fn footer_value<'a>(meta: &'a ParquetMetaData, key: &str) -> Option<&'a str> {
    meta.file_metadata()
        .key_value_metadata()?
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_deref())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Mutex;

    use arrow::array::{ArrayRef, Int32Array, RecordBatch};
    use arrow::datatypes::{DataType, Field};
    use object_store::memory::InMemory;
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::{EnabledStatistics, WriterProperties};

    use super::*;

    #[derive(Debug, Default)]
    struct MapCache(Mutex<HashMap<Path, (u64, Arc<ParquetMetaData>)>>);

    impl FooterCache for MapCache {
        fn get(&self, path: &Path) -> Option<(u64, Arc<ParquetMetaData>)> {
            self.0.lock().unwrap().get(path).cloned()
        }
        fn put(&self, path: &Path, size: u64, meta: Arc<ParquetMetaData>) {
            self.0.lock().unwrap().insert(path.clone(), (size, meta));
        }
    }

    /// A table on an in-memory store holding `f.parquet` (with a page index), with `cache`.
    async fn table_with_file(cache: Arc<MapCache>) -> (TableStorage, u64) {
        let schema = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, true)]));
        let col: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None, Some(3)]));
        let batch = RecordBatch::try_new(schema.clone(), vec![col]).unwrap();
        let props = WriterProperties::builder()
            .set_statistics_enabled(EnabledStatistics::Page)
            .build();
        let mut buf = Vec::new();
        let mut w = ArrowWriter::try_new(&mut buf, schema, Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let size = buf.len() as u64;
        let storage = TableStorage::new(Arc::new(InMemory::new()), "t".into(), "memory://t")
            .with_footer_cache(cache);
        storage.put("f.parquet", buf).await.unwrap();
        (storage, size)
    }

    #[tokio::test]
    async fn a_cached_footer_is_reused_and_its_page_index_added() {
        let cache = Arc::new(MapCache::default());
        let (storage, size) = table_with_file(cache.clone()).await;
        let first = read_footer_sized(&storage, "f.parquet", size)
            .await
            .unwrap();
        assert!(!has_page_index(&first), "read without the page index");
        assert_eq!(first.file_metadata().num_rows(), 3);
        let (kept, _) = cache.get(&storage.path("f.parquet")).unwrap();
        assert_eq!(kept, size);
        // the same footer comes back from the cache, with or without the size
        let again = read_footer(&storage, "f.parquet").await.unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        // with the page index: added to the cached footer, and kept for the next read
        let indexed = read_footer_with_page_index(&storage, "f.parquet")
            .await
            .unwrap();
        assert!(has_page_index(&indexed));
        let direct = ParquetMetaDataReader::new()
            .with_page_index_policy(PageIndexPolicy::Optional)
            .parse_and_finish(&storage.get("f.parquet").await.unwrap())
            .unwrap();
        assert_eq!(indexed.column_index(), direct.column_index());
        assert_eq!(indexed.offset_index(), direct.offset_index());
        let kept = cache.get(&storage.path("f.parquet")).unwrap().1;
        assert!(Arc::ptr_eq(&kept, &indexed));
        let plain = read_footer(&storage, "f.parquet").await.unwrap();
        assert!(
            Arc::ptr_eq(&plain, &indexed),
            "a footer with more serves one with less"
        );
    }

    #[tokio::test]
    async fn a_cached_footer_of_another_size_is_read_again() {
        let cache = Arc::new(MapCache::default());
        let (storage, size) = table_with_file(cache.clone()).await;
        let stale = read_footer_sized(&storage, "f.parquet", size)
            .await
            .unwrap();
        cache.put(&storage.path("f.parquet"), size + 1, stale.clone());
        let fresh = read_footer_sized(&storage, "f.parquet", size)
            .await
            .unwrap();
        assert!(!Arc::ptr_eq(&stale, &fresh));
        assert_eq!(cache.get(&storage.path("f.parquet")).unwrap().0, size);
    }
}
