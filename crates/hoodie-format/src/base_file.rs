//! Reading base files back: streamed batch by batch for rewriting, the record key column for index checks.

use arrow::array::{AsArray, BooleanArray, StringArray};
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use parquet::arrow::arrow_reader::{ArrowPredicateFn, RowFilter};
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};

use futures::future::BoxFuture;

use crate::error::{FormatError, Result};
use crate::meta::RECORD_KEY;
use crate::storage::TableStorage;

/// Rows per batch when a base file is streamed for rewriting.
pub const REWRITE_BATCH_ROWS: usize = 16 * 1024;

/// Opens a base file as a stream of batches in `schema` (the table's or a projection of it:
/// columns by name, cast if needed), read range by range from the object store: a rewrite holds one batch of the old
/// file at a time, never the whole file. Also returns the file's footer.
pub async fn stream_base_file(
    storage: &TableStorage,
    rel: &str,
    schema: &SchemaRef,
    dropped: &[String],
) -> Result<(
    impl futures::Stream<Item = Result<RecordBatch>> + Send + 'static,
    std::sync::Arc<parquet::file::metadata::ParquetMetaData>,
)> {
    stream_rows(storage, rel, schema, dropped, None, |_| Vec::new()).await
}

/// [`stream_base_file`] without the columns `unneeded` names once it has seen the footer:
/// those columns are not read and come out as NULL.
pub async fn stream_base_file_without(
    storage: &TableStorage,
    rel: &str,
    schema: &SchemaRef,
    dropped: &[String],
    unneeded: impl FnOnce(&parquet::file::metadata::ParquetMetaData) -> Vec<String>,
) -> Result<(
    impl futures::Stream<Item = Result<RecordBatch>> + Send + 'static,
    std::sync::Arc<parquet::file::metadata::ParquetMetaData>,
)> {
    stream_rows(storage, rel, schema, dropped, None, unneeded).await
}

/// [`stream_base_file`] of the records whose keys are in `keys` alone: the record key column
/// is read first and the other columns are decoded for those rows only.
pub(crate) async fn stream_base_file_keys(
    storage: &TableStorage,
    rel: &str,
    schema: &SchemaRef,
    dropped: &[String],
    keys: std::sync::Arc<crate::tasks::FastSet<Box<str>>>,
) -> Result<impl futures::Stream<Item = Result<RecordBatch>> + Send + 'static> {
    Ok(
        stream_rows(storage, rel, schema, dropped, Some(keys), |_| Vec::new())
            .await?
            .0,
    )
}

async fn stream_rows(
    storage: &TableStorage,
    rel: &str,
    schema: &SchemaRef,
    dropped: &[String],
    keys: Option<std::sync::Arc<crate::tasks::FastSet<Box<str>>>>,
    unneeded: impl FnOnce(&parquet::file::metadata::ParquetMetaData) -> Vec<String>,
) -> Result<(
    impl futures::Stream<Item = Result<RecordBatch>> + Send + 'static,
    std::sync::Arc<parquet::file::metadata::ParquetMetaData>,
)> {
    use futures::StreamExt;
    let builder = stream_builder(storage, rel).await?;
    let footer = builder.metadata().clone();
    let mut dropped = dropped.to_vec();
    let unneeded = unneeded(&footer);
    dropped.extend(unneeded.clone());
    let builder =
        match keys {
            Some(keys) => {
                let key_root = builder.schema().index_of(RECORD_KEY).map_err(|_| {
                    FormatError::MissingColumn {
                        column: format!("{RECORD_KEY} in {rel}"),
                    }
                })?;
                let mask = ProjectionMask::roots(builder.parquet_schema(), [key_root]);
                let predicate = ArrowPredicateFn::new(mask, move |batch: RecordBatch| {
                    let col = batch.column(0).as_string::<i32>();
                    Ok(BooleanArray::from_iter(
                        col.iter()
                            .map(|k| Some(k.is_some_and(|k| keys.contains(k)))),
                    ))
                });
                builder.with_row_filter(RowFilter::new(vec![Box::new(predicate)]))
            }
            None => builder,
        };
    // only the columns of `schema` are decoded (a merge-on-read scan asks for a projection)
    let roots: Vec<usize> = builder
        .schema()
        .fields()
        .iter()
        .enumerate()
        .filter(|(_, f)| schema.field_with_name(f.name()).is_ok() && !unneeded.contains(f.name()))
        .map(|(i, _)| i)
        .collect();
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
    let stream = builder
        .with_projection(mask)
        .with_batch_size(REWRITE_BATCH_ROWS)
        .build()
        .map_err(|e| FormatError::parquet(rel, e))?;
    let (schema, rel) = (schema.clone(), rel.to_string());
    let stream = stream.map(move |b| match b {
        Ok(b) => adapt(&b, &schema, &rel, &dropped),
        Err(e) => Err(FormatError::parquet(&rel, e)),
    });
    Ok((stream, footer))
}

/// Streams the leaf columns `leaves` of the base file `rel` whose footer (`footer`) is already
/// read, row group after row group, in batches of [`REWRITE_BATCH_ROWS`]. Columns keep the
/// file's own Arrow types.
/// With `filter`, only the rows it keeps are decoded (beyond the filter's own columns).
pub(crate) fn stream_leaves(
    storage: &TableStorage,
    rel: &str,
    footer: std::sync::Arc<parquet::file::metadata::ParquetMetaData>,
    leaves: Vec<usize>,
    filter: Option<parquet::arrow::arrow_reader::RowFilter>,
) -> Result<impl futures::Stream<Item = Result<RecordBatch>> + Send + 'static> {
    use futures::StreamExt;
    use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
    let reader = StoreFileReader {
        storage: storage.clone(),
        rel: rel.to_string(),
    };
    let meta = ArrowReaderMetadata::try_new(footer, ArrowReaderOptions::new())
        .map_err(|e| FormatError::parquet(rel, e))?;
    let builder = ParquetRecordBatchStreamBuilder::new_with_metadata(reader, meta);
    let mask = ProjectionMask::leaves(builder.parquet_schema(), leaves);
    let builder = match filter {
        Some(f) => builder.with_row_filter(f),
        None => builder,
    };
    let stream = builder
        .with_projection(mask)
        .with_batch_size(REWRITE_BATCH_ROWS)
        .build()
        .map_err(|e| FormatError::parquet(rel, e))?;
    let rel = rel.to_string();
    Ok(stream.map(move |b| b.map_err(|e| FormatError::parquet(&rel, e))))
}

/// An async parquet reader of `rel` over the table's object store, its footer read.
async fn stream_builder(
    storage: &TableStorage,
    rel: &str,
) -> Result<ParquetRecordBatchStreamBuilder<StoreFileReader>> {
    let reader = StoreFileReader {
        storage: storage.clone(),
        rel: rel.to_string(),
    };
    ParquetRecordBatchStreamBuilder::new(reader)
        .await
        .map_err(|e| FormatError::parquet(rel, e))
}

/// Reads a base file's byte ranges from the table's object store for the async parquet reader.
struct StoreFileReader {
    storage: TableStorage,
    rel: String,
}

impl StoreFileReader {
    fn external(e: FormatError) -> parquet::errors::ParquetError {
        parquet::errors::ParquetError::External(Box::new(e))
    }
}

impl AsyncFileReader for StoreFileReader {
    fn get_bytes(
        &mut self,
        range: std::ops::Range<u64>,
    ) -> BoxFuture<'_, parquet::errors::Result<bytes::Bytes>> {
        Box::pin(async move {
            let path = self.storage.path(&self.rel);
            let mut got = self
                .storage
                .get_ranges(&path, vec![range])
                .await
                .map_err(|e| Self::external(FormatError::storage(&path, e)))?;
            Ok(got.pop().unwrap_or_default())
        })
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<std::ops::Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<bytes::Bytes>>> {
        Box::pin(async move {
            let path = self.storage.path(&self.rel);
            self.storage
                .get_ranges(&path, ranges)
                .await
                .map_err(|e| Self::external(FormatError::storage(&path, e)))
        })
    }

    fn get_metadata<'a>(
        &'a mut self,
        _options: Option<&'a parquet::arrow::arrow_reader::ArrowReaderOptions>,
    ) -> BoxFuture<
        'a,
        parquet::errors::Result<std::sync::Arc<parquet::file::metadata::ParquetMetaData>>,
    > {
        Box::pin(async move {
            crate::footer::read_footer(&self.storage, &self.rel)
                .await
                .map_err(Self::external)
        })
    }
}

/// Brings a batch read from a file into the table schema (columns by name, cast if needed).
/// The `dropped` columns the file leaves out come back as NULLs: a rewrite leaves them out
/// again, their values live in the partition path.
fn adapt(
    batch: &RecordBatch,
    schema: &SchemaRef,
    rel: &str,
    dropped: &[String],
) -> Result<RecordBatch> {
    let mut cols = Vec::with_capacity(schema.fields().len());
    for f in schema.fields() {
        // a dropped partition column comes from the path; a nullable column added to the
        // table after the file was written reads as NULL
        let absent = batch.column_by_name(f.name()).is_none();
        if absent
            && (dropped.iter().any(|d| d == f.name())
                || f.is_nullable() && !crate::schema::is_meta_column(f.name()))
        {
            cols.push(arrow::array::new_null_array(
                f.data_type(),
                batch.num_rows(),
            ));
            continue;
        }
        let col = batch
            .column_by_name(f.name())
            .ok_or_else(|| FormatError::Corrupt {
                path: rel.to_string(),
                reason: format!("base file lacks column {}", f.name()),
            })?;
        cols.push(if col.data_type() == f.data_type() {
            col.clone()
        } else {
            arrow::compute::cast(col, f.data_type())?
        });
    }
    Ok(RecordBatch::try_new(schema.clone(), cols)?)
}

/// Reads the `_hoodie_record_key` column of a base file: only that column's byte ranges are
/// fetched, not the whole object.
pub async fn read_record_keys(storage: &TableStorage, rel: &str) -> Result<StringArray> {
    use futures::TryStreamExt;
    let builder = stream_builder(storage, rel).await?;
    let idx = builder
        .schema()
        .fields()
        .iter()
        .position(|f| f.name() == RECORD_KEY)
        .ok_or_else(|| FormatError::Corrupt {
            path: rel.to_string(),
            reason: "no _hoodie_record_key column".into(),
        })?;
    let mask = ProjectionMask::roots(builder.parquet_schema(), [idx]);
    let batches: Vec<RecordBatch> = builder
        .with_projection(mask)
        .with_batch_size(64 * 1024)
        .build()
        .map_err(|e| FormatError::parquet(rel, e))?
        .try_collect()
        .await
        .map_err(|e| FormatError::parquet(rel, e))?;
    let mut parts = Vec::with_capacity(batches.len());
    for b in &batches {
        parts.push(arrow::compute::cast(
            b.column(0),
            &arrow::datatypes::DataType::Utf8,
        )?);
    }
    let refs: Vec<&dyn arrow::array::Array> = parts.iter().map(|a| a.as_ref()).collect();
    if refs.is_empty() {
        return Ok(StringArray::from(Vec::<&str>::new()));
    }
    Ok(arrow::compute::concat(&refs)?.as_string::<i32>().clone())
}
