//! Which columns an update really changes. An upsert or a MERGE with `UPDATE SET *` replaces
//! whole rows, but most of their values are often the stored ones (a new price and timestamp,
//! the same name and payload). Reading only the updated rows of a file group (the record key
//! column decides which, so other columns are decoded for those rows only) and comparing them
//! with the incoming values tells which columns a rewrite must encode again; the others can be
//! copied ([`crate::write::splice`]).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, UInt32Array};
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use futures::StreamExt;
use parquet::arrow::arrow_reader::{ArrowPredicateFn, RowFilter};
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::ParquetMetaData;

use crate::error::Result;
use crate::meta::RECORD_KEY;
use crate::storage::TableStorage;

/// The columns among `candidates` (table column indices; the file's columns are the table's,
/// in order) whose stored value differs, in some row whose key `updates` holds, from the
/// incoming row's (`incoming`, in the table schema). Values compare bit for bit (so `-0.0`
/// differs from `0.0`); NULL equals NULL. With `keep_rows`, every updated row is read and the
/// stored rows (the key and candidate columns, in the file's order) are returned too.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn differing_columns(
    storage: &TableStorage,
    rel: &str,
    footer: Arc<ParquetMetaData>,
    schema: &SchemaRef,
    incoming: &RecordBatch,
    updates: &crate::tasks::FastMap<&str, u32>,
    candidates: &[usize],
    keep_rows: bool,
) -> Result<(Vec<usize>, Vec<RecordBatch>)> {
    let key_col = schema.index_of(RECORD_KEY)?;
    let filter_keys: Arc<crate::tasks::FastSet<Box<str>>> =
        Arc::new(updates.keys().map(|k| (*k).into()).collect());
    let predicate = ArrowPredicateFn::new(
        ProjectionMask::leaves(footer.file_metadata().schema_descr(), [key_col]),
        move |batch: RecordBatch| {
            let col = batch.column(0).as_string::<i32>();
            Ok(BooleanArray::from_iter(
                col.iter()
                    .map(|k| Some(k.is_some_and(|k| filter_keys.contains(k)))),
            ))
        },
    );
    let mut leaves: Vec<usize> = candidates.to_vec();
    leaves.push(key_col);
    leaves.sort_unstable();
    leaves.dedup();
    let position = |c: usize| leaves.iter().position(|&l| l == c).expect("projected");
    let mut stream = crate::base_file::stream_leaves(
        storage,
        rel,
        footer,
        leaves.clone(),
        Some(RowFilter::new(vec![Box::new(predicate)])),
    )?;
    let mut changed: Vec<bool> = vec![false; schema.fields().len()];
    let mut kept = Vec::new();
    while let Some(batch) = stream.next().await {
        let batch = batch?;
        if keep_rows {
            kept.push(batch.clone());
        }
        let stored_keys = batch.column(position(key_col)).as_string::<i32>();
        let rows: UInt32Array = stored_keys
            .iter()
            .map(|k| k.and_then(|k| updates.get(k).copied()))
            .collect();
        for &c in candidates {
            if changed[c] {
                continue;
            }
            let stored = batch.column(position(c));
            let stored: ArrayRef = if stored.data_type() == schema.field(c).data_type() {
                stored.clone()
            } else {
                arrow::compute::cast(stored, schema.field(c).data_type())?
            };
            let new = arrow::compute::take(incoming.column(c).as_ref(), &rows, None)?;
            changed[c] = stored.to_data() != new.to_data();
        }
        if !keep_rows && candidates.iter().all(|&c| changed[c]) {
            break;
        }
    }
    let differing = candidates.iter().copied().filter(|&c| changed[c]).collect();
    Ok((differing, kept))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Float64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};

    fn schema() -> SchemaRef {
        let mut fields: Vec<Field> = crate::meta::META_COLUMNS
            .iter()
            .map(|n| Field::new(*n, DataType::Utf8, true))
            .collect();
        fields.push(Field::new("a", DataType::Utf8, true));
        fields.push(Field::new("b", DataType::Float64, true));
        fields.push(Field::new("c", DataType::Float64, true));
        Arc::new(Schema::new(fields))
    }

    fn batch(keys: &[&str], a: Vec<Option<&str>>, b: Vec<f64>, c: Vec<Option<f64>>) -> RecordBatch {
        let n = keys.len();
        let s = |v: &str| Arc::new(StringArray::from(vec![v; n])) as ArrayRef;
        RecordBatch::try_new(
            schema(),
            vec![
                s("1"),
                s("1_0_0"),
                Arc::new(StringArray::from(keys.to_vec())),
                s(""),
                s("f.parquet"),
                Arc::new(StringArray::from(a)),
                Arc::new(Float64Array::from(b)),
                Arc::new(Float64Array::from(c)),
            ],
        )
        .unwrap()
    }

    async fn differing(stored: &RecordBatch, incoming: &RecordBatch) -> Vec<usize> {
        let tmp = tempfile::tempdir().unwrap();
        let mut file = std::fs::File::create(tmp.path().join("f.parquet")).unwrap();
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut file, schema(), None).unwrap();
        w.write(stored).unwrap();
        w.close().unwrap();
        let storage = TableStorage::local(tmp.path()).unwrap();
        let footer = crate::footer::read_footer(&storage, "f.parquet")
            .await
            .unwrap();
        let keys = crate::meta::record_keys(incoming);
        let updates: crate::tasks::FastMap<&str, u32> =
            (0..keys.len()).map(|i| (keys.value(i), i as u32)).collect();
        differing_columns(
            &storage,
            "f.parquet",
            footer,
            &schema(),
            incoming,
            &updates,
            &[5, 6, 7],
            false,
        )
        .await
        .unwrap()
        .0
    }

    #[tokio::test]
    async fn only_columns_that_differ_in_an_updated_row_are_reported() {
        let stored = batch(
            &["k1", "k2", "k3"],
            vec![Some("x"), None, Some("z")],
            vec![1.0, 0.0, 3.0],
            vec![Some(1.0), None, Some(f64::NAN)],
        );
        // k2 and k3 come again (in another order): NULL = NULL, NaN = the same NaN, a equal;
        // b of k2 is -0.0, which is not the stored 0.0 bit for bit
        let incoming = batch(
            &["k3", "k2"],
            vec![Some("z"), None],
            vec![3.0, -0.0],
            vec![Some(f64::NAN), None],
        );
        assert_eq!(differing(&stored, &incoming).await, vec![6]);
        // a value where NULL was stored, and a changed string, are changes; k1's differences
        // are not looked at, since k1 is not updated
        let incoming = batch(
            &["k2", "k3"],
            vec![Some("y"), Some("z")],
            vec![0.0, 3.0],
            vec![Some(2.0), Some(f64::NAN)],
        );
        assert_eq!(differing(&stored, &incoming).await, vec![5, 7]);
    }
}
