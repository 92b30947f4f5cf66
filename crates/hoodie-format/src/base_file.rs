//! Reading base files back: whole files for rewriting, the record key column for index checks.

use arrow::array::{AsArray, StringArray};
use arrow::compute::concat_batches;
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;

use crate::error::{FormatError, Result};
use crate::meta::RECORD_KEY;
use crate::storage::TableStorage;

/// Reads a whole base file as one batch, cast by name to `schema` (the table schema).
pub async fn read_base_file(
    storage: &TableStorage,
    rel: &str,
    schema: &SchemaRef,
) -> Result<RecordBatch> {
    let bytes = storage.get(rel).await?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .map_err(|e| FormatError::parquet(rel, e))?
        .with_batch_size(64 * 1024)
        .build()
        .map_err(|e| FormatError::parquet(rel, e))?;
    let mut batches = Vec::new();
    for b in reader {
        let b = b?;
        batches.push(adapt(&b, schema, rel)?);
    }
    Ok(concat_batches(schema, &batches)?)
}

/// Brings a batch read from a file into the table schema (columns by name, cast if needed).
fn adapt(batch: &RecordBatch, schema: &SchemaRef, rel: &str) -> Result<RecordBatch> {
    let mut cols = Vec::with_capacity(schema.fields().len());
    for f in schema.fields() {
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

/// Reads the `_hoodie_record_key` column of a base file.
pub async fn read_record_keys(storage: &TableStorage, rel: &str) -> Result<StringArray> {
    let bytes = storage.get(rel).await?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(bytes)
        .map_err(|e| FormatError::parquet(rel, e))?;
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
    let reader = builder
        .with_projection(mask)
        .with_batch_size(64 * 1024)
        .build()
        .map_err(|e| FormatError::parquet(rel, e))?;
    let mut parts = Vec::new();
    for b in reader {
        let b = b?;
        let c = arrow::compute::cast(b.column(0), &arrow::datatypes::DataType::Utf8)?;
        parts.push(c);
    }
    let refs: Vec<&dyn arrow::array::Array> = parts.iter().map(|a| a.as_ref()).collect();
    if refs.is_empty() {
        return Ok(StringArray::from(Vec::<&str>::new()));
    }
    Ok(arrow::compute::concat(&refs)?.as_string::<i32>().clone())
}
