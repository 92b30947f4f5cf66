//! Change rows with their images as JSON text, as Hudi's CDC query gives them (`before` and
//! `after` strings): one object per image, the data columns in table order, NULL values as
//! `null`; dates and timestamps as ISO text, decimals as numbers. A change without an image
//! has NULL there.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StringArray, StructArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use crate::error::Result;

/// The schema of change rows with JSON images: `op`, `ts_ms`, `before`, `after`, all strings
/// (Hudi's `op STRING, ts_ms STRING, before STRING, after STRING`).
pub fn json_change_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new(super::OP, DataType::Utf8, false),
        Field::new(super::TS_MS, DataType::Utf8, true),
        Field::new(super::BEFORE, DataType::Utf8, true),
        Field::new(super::AFTER, DataType::Utf8, true),
    ]))
}

/// `changes` (of [`change_schema`](super::change_schema)) with JSON images.
pub fn with_json_images(changes: &RecordBatch) -> Result<RecordBatch> {
    Ok(RecordBatch::try_new(
        json_change_schema(),
        vec![
            changes.column(0).clone(),
            changes.column(1).clone(),
            json_column(changes.column(2).as_struct())?,
            json_column(changes.column(3).as_struct())?,
        ],
    )?)
}

/// One JSON object per valid row of `images`, NULL for the others.
fn json_column(images: &StructArray) -> Result<ArrayRef> {
    let valid: Vec<u32> = (0..images.len())
        .filter(|&r| images.is_valid(r))
        .map(|r| r as u32)
        .collect();
    if valid.is_empty() {
        return Ok(arrow::array::new_null_array(&DataType::Utf8, images.len()));
    }
    let rows = arrow::compute::take(
        images,
        &arrow::array::UInt32Array::from(valid.clone()),
        None,
    )?;
    let batch = RecordBatch::from(rows.as_struct().clone());
    let mut writer = arrow::json::WriterBuilder::new()
        .with_explicit_nulls(true)
        .build::<_, arrow::json::writer::LineDelimited>(Vec::new());
    writer.write(&batch)?;
    writer.finish()?;
    let text = String::from_utf8(writer.into_inner()).expect("arrow writes UTF-8 JSON");
    let mut lines = text.lines();
    let mut out: Vec<Option<&str>> = vec![None; images.len()];
    for r in valid {
        out[r as usize] = lines.next();
    }
    Ok(Arc::new(StringArray::from(out)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdc::{change_schema, CdcOp, ChangeRows};
    use arrow::array::{Date32Array, Int32Array};

    #[test]
    fn images_become_json_objects_and_missing_ones_null() {
        let mut fields = crate::schema::meta_fields();
        fields.push(Field::new("id", DataType::Int32, false));
        fields.push(Field::new("Name", DataType::Utf8, true));
        fields.push(Field::new("day", DataType::Date32, true));
        let table = Schema::new(fields);
        let rows = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int32, false),
                Field::new("Name", DataType::Utf8, true),
                Field::new("day", DataType::Date32, true),
            ])),
            vec![
                Arc::new(Int32Array::from(vec![1])),
                Arc::new(StringArray::from(vec![None::<&str>])),
                Arc::new(Date32Array::from(vec![Some(19723)])),
            ],
        )
        .unwrap();
        let mut c = ChangeRows::new(change_schema(&table), "20240101000000000");
        c.push(CdcOp::Insert, 1, None, Some(&rows)).unwrap();
        c.push(CdcOp::Delete, 1, Some(&rows), None).unwrap();
        let b = c.into_batches();
        let all = arrow::compute::concat_batches(&b[0].schema(), &b).unwrap();
        let j = with_json_images(&all).unwrap();
        let after = j.column(3).as_string::<i32>();
        let before = j.column(2).as_string::<i32>();
        assert_eq!(after.value(0), r#"{"id":1,"Name":null,"day":"2024-01-01"}"#);
        assert!(before.is_null(0));
        assert_eq!(before.value(1), after.value(0));
        assert!(after.is_null(1));
        assert_eq!(j.column(1).as_string::<i32>().value(1), "20240101000000000");
    }
}
