//! Reading Parquet footers of base files: schema, Hudi key/value entries.

use std::sync::Arc;

use arrow::datatypes::{Schema, SchemaRef};
use object_store::{GetOptions, GetRange, ObjectStoreExt};
use parquet::errors::ParquetError;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};

use crate::error::{FormatError, Result};
use crate::storage::TableStorage;

/// Bytes fetched from the end of a file on the first try. Hudi footers carry a ~430 KB bloom
/// filter, so a generous first read saves a round trip.
const FIRST_SUFFIX: u64 = 1 << 20;

/// Reads the footer metadata of the base file at `rel` (relative to the table base).
pub async fn read_footer(storage: &TableStorage, rel: &str) -> Result<ParquetMetaData> {
    read_footer_with(storage, rel, PageIndexPolicy::Skip).await
}

/// Reads the footer metadata of `rel` with its page index (column and offset indexes) when the
/// file has one.
pub async fn read_footer_with_page_index(
    storage: &TableStorage,
    rel: &str,
) -> Result<ParquetMetaData> {
    read_footer_with(storage, rel, PageIndexPolicy::Optional).await
}

async fn read_footer_with(
    storage: &TableStorage,
    rel: &str,
    page_index: PageIndexPolicy,
) -> Result<ParquetMetaData> {
    let path = storage.path(rel);
    let store = storage.store();
    let size = store
        .head(&path)
        .await
        .map_err(|e| FormatError::storage(&path, e))?
        .size;
    let mut want = FIRST_SUFFIX.min(size);
    loop {
        // a bounded range of the known size, not a suffix range, which Azure does not serve
        let opts = GetOptions {
            range: Some(GetRange::Bounded(size - want..size)),
            ..Default::default()
        };
        let bytes = store
            .get_opts(&path, opts)
            .await
            .map_err(|e| FormatError::storage(&path, e))?
            .bytes()
            .await
            .map_err(|e| FormatError::storage(&path, e))?;
        let mut reader = ParquetMetaDataReader::new().with_page_index_policy(page_index);
        match reader.try_parse_sized(&bytes, size) {
            Ok(()) => return reader.finish().map_err(|e| FormatError::parquet(rel, e)),
            Err(ParquetError::NeedMoreData(n)) if (n as u64) > want && (n as u64) <= size => {
                want = n as u64
            }
            Err(e) => return Err(FormatError::parquet(rel, e)),
        }
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
