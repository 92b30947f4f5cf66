//! The insert and bulk-insert write paths: new records into new file groups.

use std::collections::{BTreeMap, HashMap};

use arrow::array::{Array, AsArray, StringArray, UInt32Array};
use arrow::compute::{concat_batches, take_record_batch};
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use arrow::row::{RowConverter, SortField};

use crate::commit_metadata::WriteStat;
use crate::error::{FormatError, Result};
use crate::file_name::{new_file_id, write_token};
use crate::keygen::{generated_key, KeyGenerator};
use crate::meta::{with_meta_columns, MetaValues};
use crate::transaction::Transaction;
use crate::writer::BaseFileSettings;

/// How an insert is written.
#[derive(Debug, Clone)]
pub struct InsertOptions {
    /// Collapse duplicate keys of the input to the row with the greatest ordering value
    /// (ties: the first). Needs an ordering field.
    pub precombine_field: Option<String>,
    /// Base file settings.
    pub file_settings: BaseFileSettings,
    /// Target size of a base file in bytes.
    pub max_file_size: usize,
}

/// What an insert wrote.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InsertResult {
    /// Rows written.
    pub rows: u64,
    /// Base files written.
    pub files: usize,
}

/// Keeps, for each record key, the row with the greatest value of `field` (ties: the first
/// seen). Returns the indices of the surviving rows in input order.
pub fn precombine(batch: &RecordBatch, keys: &StringArray, field: &str) -> Result<Vec<u32>> {
    let idx = batch
        .schema()
        .fields()
        .iter()
        .position(|f| f.name().eq_ignore_ascii_case(field))
        .ok_or_else(|| FormatError::MissingColumn {
            column: field.to_string(),
        })?;
    let col = batch.column(idx);
    let converter = RowConverter::new(vec![SortField::new(col.data_type().clone())])?;
    let rows = converter.convert_columns(std::slice::from_ref(col))?;
    let mut best: HashMap<&str, u32> = HashMap::with_capacity(keys.len());
    for i in 0..keys.len() {
        let k = keys.value(i);
        match best.get_mut(k) {
            None => {
                best.insert(k, i as u32);
            }
            Some(cur) => {
                if rows.row(i) > rows.row(*cur as usize) {
                    *cur = i as u32;
                }
            }
        }
    }
    let mut keep: Vec<u32> = best.into_values().collect();
    keep.sort_unstable();
    Ok(keep)
}

/// Writes `batches` (table schema: meta columns first, their values ignored) as new file
/// groups of `txn`, one or more per partition path.
pub async fn write_inserts(
    txn: &mut Transaction,
    keygen: &KeyGenerator,
    table_schema: &SchemaRef,
    batches: Vec<RecordBatch>,
    options: &InsertOptions,
) -> Result<InsertResult> {
    if batches.iter().all(|b| b.num_rows() == 0) {
        return Ok(InsertResult::default());
    }
    let batch = concat_batches(table_schema, &batches)?;
    drop(batches);
    let keys = if keygen.has_generated_keys() {
        None
    } else {
        Some(keygen.record_keys(&batch)?)
    };
    let batch_and_keys = match (&keys, &options.precombine_field) {
        (Some(k), Some(field)) => {
            let keep = precombine(&batch, k, field)?;
            if keep.len() == batch.num_rows() {
                (batch, keys)
            } else {
                let idx = UInt32Array::from(keep);
                let b = take_record_batch(&batch, &idx)?;
                let k = arrow::compute::take(k, &idx, None)?
                    .as_string::<i32>()
                    .clone();
                (b, Some(k))
            }
        }
        _ => (batch, keys),
    };
    let (batch, keys) = batch_and_keys;
    let paths = keygen.partition_paths(&batch)?;
    let mut by_partition: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for i in 0..paths.len() {
        by_partition
            .entry(paths.value(i))
            .or_default()
            .push(i as u32);
    }
    let mut result = InsertResult::default();
    let mut task = 0usize;
    for (partition, rows) in by_partition {
        let idx = UInt32Array::from(rows);
        let part_batch = take_record_batch(&batch, &idx)?;
        let part_keys = keys
            .as_ref()
            .map(|k| arrow::compute::take(k, &idx, None).map(|a| a.as_string::<i32>().clone()))
            .transpose()?;
        // split into files of about max_file_size bytes, estimated from the in-memory size
        let mem = part_batch.get_array_memory_size().max(1);
        let files = mem.div_ceil(options.max_file_size.max(1) * 3).max(1);
        let per_file = part_batch.num_rows().div_ceil(files);
        let mut offset = 0;
        while offset < part_batch.num_rows() {
            let len = per_file.min(part_batch.num_rows() - offset);
            let chunk = part_batch.slice(offset, len);
            let chunk_keys = match &part_keys {
                Some(k) => k.slice(offset, len),
                None => StringArray::from_iter_values(
                    (0..len as u64).map(|r| generated_key(txn.instant(), task, r)),
                ),
            };
            let rows = write_new_file_group(
                txn,
                partition,
                &chunk,
                &chunk_keys,
                task,
                table_schema,
                &options.file_settings,
            )
            .await?;
            result.rows += rows;
            result.files += 1;
            offset += len;
            task += 1;
        }
    }
    Ok(result)
}

/// Writes `rows` (table schema; meta columns are computed) as a new file group of
/// `partition`, records its statistics in `txn` and returns the rows written.
pub(crate) async fn write_new_file_group(
    txn: &mut Transaction,
    partition: &str,
    rows: &RecordBatch,
    keys: &StringArray,
    task: usize,
    schema: &SchemaRef,
    settings: &BaseFileSettings,
) -> Result<u64> {
    let file_id = new_file_id();
    let (mut writer, name) = txn
        .new_base_file(
            partition,
            &file_id,
            &write_token(task),
            schema.clone(),
            settings,
        )
        .await?;
    let file_name = name.name();
    let meta = MetaValues {
        instant: txn.instant(),
        task_partition_id: task,
        first_row: 0,
        file_name: &file_name,
        partition_path: partition,
    };
    writer
        .write(&with_meta_columns(rows, keys, &meta, schema)?)
        .await?;
    let written = writer.close().await?;
    txn.record_stat(WriteStat {
        file_id: Some(file_id),
        path: Some(written.rel_path.clone()),
        prev_commit: Some("null".into()),
        num_writes: written.rows as i64,
        num_inserts: written.rows as i64,
        total_write_bytes: written.size as i64,
        file_size_in_bytes: written.size as i64,
        partition_path: Some(partition.to_string()),
        ..Default::default()
    });
    Ok(written.rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int64Array;
    use arrow::datatypes::{DataType, Field, Schema};
    use std::sync::Arc;

    #[test]
    fn precombine_keeps_greatest_then_first() {
        let b = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("ts", DataType::Int64, true)])),
            vec![Arc::new(Int64Array::from(vec![
                Some(1),
                Some(5),
                Some(5),
                Some(2),
                None,
            ]))],
        )
        .unwrap();
        let keys = StringArray::from(vec!["a", "a", "a", "b", "b"]);
        // a: rows 1 and 2 tie at 5 -> first (1); b: 2 beats null
        assert_eq!(precombine(&b, &keys, "ts").unwrap(), vec![1, 3]);
        assert!(matches!(
            precombine(&b, &keys, "nope"),
            Err(FormatError::MissingColumn { .. })
        ));
    }
}
