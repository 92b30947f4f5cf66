//! The five `_hoodie_*` meta columns every row carries.

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, StringArray, StringBuilder};
use arrow::record_batch::RecordBatch;

use crate::error::Result;

/// `_hoodie_commit_time`: the instant that wrote the record.
pub const COMMIT_TIME: &str = "_hoodie_commit_time";
/// `_hoodie_commit_seqno`: `<instant>_<partitionId>_<rowIndex>`.
pub const COMMIT_SEQNO: &str = "_hoodie_commit_seqno";
/// `_hoodie_record_key`.
pub const RECORD_KEY: &str = "_hoodie_record_key";
/// `_hoodie_partition_path`.
pub const PARTITION_PATH: &str = "_hoodie_partition_path";
/// `_hoodie_file_name`: the base file the record is in.
pub const FILE_NAME: &str = "_hoodie_file_name";

/// `_hoodie_is_deleted`: a data column whose `true` marks the record as a delete.
pub const IS_DELETED: &str = "_hoodie_is_deleted";

/// The meta columns in order.
pub const META_COLUMNS: [&str; 5] = [
    COMMIT_TIME,
    COMMIT_SEQNO,
    RECORD_KEY,
    PARTITION_PATH,
    FILE_NAME,
];

/// Where `_hoodie_record_key` sits in a row of a table: every row carries the five meta
/// columns first, in [`META_COLUMNS`] order.
pub const RECORD_KEY_INDEX: usize = 2;

/// The record keys of a batch of table rows (meta columns first).
///
/// # Panics
/// If the batch's third column is not a string column: a batch of table rows always has
/// `_hoodie_record_key` there.
pub fn record_keys(batch: &RecordBatch) -> &StringArray {
    batch.column(RECORD_KEY_INDEX).as_string::<i32>()
}

/// The `_hoodie_record_key` column of a batch that holds it anywhere (a projection of table
/// rows).
pub fn record_keys_by_name(batch: &RecordBatch) -> Result<&StringArray> {
    batch
        .column_by_name(RECORD_KEY)
        .and_then(|c| c.as_string_opt::<i32>())
        .ok_or_else(|| crate::error::FormatError::MissingColumn {
            column: RECORD_KEY.into(),
        })
}

/// Java `HoodieRecord.generateSequenceId`.
pub fn sequence_id(instant: &str, partition_id: usize, row: u64) -> String {
    format!("{instant}_{partition_id}_{row}")
}

/// What the meta columns of the rows of one file hold.
#[derive(Debug, Clone)]
pub struct MetaValues<'a> {
    /// The instant writing the rows.
    pub instant: &'a str,
    /// The writer task's partition id (the middle part of the sequence id).
    pub task_partition_id: usize,
    /// The sequence number of the first row.
    pub first_row: u64,
    /// The base file name.
    pub file_name: &'a str,
    /// The partition path of every row (all rows of a file share it).
    pub partition_path: &'a str,
}

/// Replaces (or prepends) the meta columns of `data` (a batch of data columns, optionally
/// preceded by the five meta columns) with freshly computed ones. `record_keys` holds one key
/// per row.
pub fn with_meta_columns(
    data: &RecordBatch,
    record_keys: &StringArray,
    meta: &MetaValues<'_>,
    table_schema: &arrow::datatypes::SchemaRef,
) -> Result<RecordBatch> {
    let n = data.num_rows();
    let commit_time: ArrayRef = Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
        meta.instant,
        n,
    )));
    let mut seq = StringBuilder::with_capacity(n, n * (meta.instant.len() + 8));
    for i in 0..n as u64 {
        seq.append_value(sequence_id(
            meta.instant,
            meta.task_partition_id,
            meta.first_row + i,
        ));
    }
    let partition: ArrayRef = Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
        meta.partition_path,
        n,
    )));
    let file: ArrayRef = Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
        meta.file_name,
        n,
    )));
    let mut columns: Vec<ArrayRef> = vec![
        commit_time,
        Arc::new(seq.finish()),
        Arc::new(record_keys.clone()),
        partition,
        file,
    ];
    let skip = if data
        .schema()
        .fields()
        .first()
        .is_some_and(|f| f.name() == COMMIT_TIME)
    {
        5
    } else {
        0
    };
    columns.extend(data.columns().iter().skip(skip).cloned());
    Ok(RecordBatch::try_new(table_schema.clone(), columns)?)
}

/// The incoming rows `idx` with fresh meta columns for the file `meta` describes.
pub(crate) fn take_with_meta(
    incoming: &RecordBatch,
    incoming_keys: &StringArray,
    idx: &[u32],
    meta: &MetaValues<'_>,
    schema: &arrow::datatypes::SchemaRef,
) -> Result<RecordBatch> {
    let idx = arrow::array::UInt32Array::from(idx.to_vec());
    let inc = arrow::compute::take_record_batch(incoming, &idx)?;
    let keys = arrow::compute::take(incoming_keys, &idx, None)?
        .as_string_opt::<i32>()
        .ok_or_else(|| crate::error::FormatError::MissingColumn {
            column: RECORD_KEY.into(),
        })?
        .clone();
    with_meta_columns(&inc, &keys, meta, schema)
}

/// `batch` (in the table schema) with every `_hoodie_file_name` set to `name`: records a
/// compaction moves into a new base file.
pub(crate) fn with_file_name(batch: &RecordBatch, name: &str) -> Result<RecordBatch> {
    let idx = batch.schema().index_of(FILE_NAME)?;
    let mut cols = batch.columns().to_vec();
    cols[idx] = Arc::new(StringArray::from_iter_values(std::iter::repeat_n(
        name,
        batch.num_rows(),
    )));
    Ok(RecordBatch::try_new(batch.schema(), cols)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::table_schema;
    use arrow::array::{Array, Int32Array};
    use arrow::datatypes::{DataType, Field, Schema};

    #[test]
    fn prepends_meta_columns() {
        let data = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("id", DataType::Int32, false)])),
            vec![Arc::new(Int32Array::from(vec![7, 8]))],
        )
        .unwrap();
        let schema = table_schema(&data.schema()).unwrap();
        let keys = StringArray::from(vec!["7", "8"]);
        let meta = MetaValues {
            instant: "20240101000000000",
            task_partition_id: 1,
            first_row: 10,
            file_name: "f.parquet",
            partition_path: "dt=x",
        };
        let b = with_meta_columns(&data, &keys, &meta, &schema).unwrap();
        assert_eq!(b.num_columns(), 6);
        let seq = b.column(1).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(seq.value(1), "20240101000000000_1_11");
        let part = b.column(3).as_any().downcast_ref::<StringArray>().unwrap();
        assert_eq!(part.value(0), "dt=x");
        assert_eq!(b.column(5).len(), 2);
    }
}
