use std::sync::Arc;

use arrow::array::*;
use arrow::datatypes::*;
use arrow::record_batch::RecordBatch;

use super::*;
use crate::schema::avro_schema as avro_schema_with_meta;

fn sample() -> RecordBatch {
    let item = Arc::new(Field::new("item", DataType::Int32, true));
    let inner = Fields::from(vec![
        Field::new("a", DataType::Utf8, true),
        Field::new("b", DataType::Float64, false),
    ]);
    let schema = Arc::new(Schema::new(vec![
        Field::new("label", DataType::Utf8, true),
        Field::new("id", DataType::Int32, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("big", DataType::Int64, true),
        Field::new("flag", DataType::Boolean, true),
        Field::new("f", DataType::Float32, true),
        Field::new("d", DataType::Float64, true),
        Field::new("day", DataType::Date32, true),
        Field::new(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        Field::new("amount", DataType::Decimal128(10, 2), true),
        Field::new("raw", DataType::Binary, true),
        Field::new("tags", DataType::List(item.clone()), true),
        Field::new("s", DataType::Struct(inner.clone()), true),
    ]));
    let tags = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![
        Some(vec![Some(1), None, Some(3)]),
        None,
        Some(vec![]),
    ]);
    let s = StructArray::try_new(
        inner,
        vec![
            Arc::new(StringArray::from(vec![Some("x"), None, Some("z")])),
            Arc::new(Float64Array::from(vec![1.5, 0.0, -2.0])),
        ],
        Some(vec![true, false, true].into()),
    )
    .unwrap();
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(vec![
                Some("20250101000000000"),
                None,
                Some("t"),
            ])),
            Arc::new(Int32Array::from(vec![1, -2, 300_000])),
            Arc::new(StringArray::from(vec![Some("Zoë"), None, Some("")])),
            Arc::new(Int64Array::from(vec![Some(i64::MIN), None, Some(i64::MAX)])),
            Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])),
            Arc::new(Float32Array::from(vec![Some(1.25), None, Some(-0.5)])),
            Arc::new(Float64Array::from(vec![Some(f64::MAX), None, Some(1e-300)])),
            Arc::new(Date32Array::from(vec![Some(19000), None, Some(-1)])),
            Arc::new(
                TimestampMicrosecondArray::from(vec![Some(1_700_000_000_000_001), None, Some(-5)])
                    .with_timezone("UTC"),
            ),
            Arc::new(
                Decimal128Array::from(vec![Some(12345), None, Some(-99_999_999)])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
            Arc::new(BinaryArray::from(vec![
                Some(&b"\x00\xff"[..]),
                None,
                Some(&b""[..]),
            ])),
            Arc::new(tags),
            Arc::new(s),
        ],
    )
    .unwrap()
}

fn round_trip(batch: &RecordBatch) -> RecordBatch {
    let schema_json = avro_schema_with_meta("t", &batch.schema())
        .unwrap()
        .to_string();
    let enc = RowEncoder::new(batch).unwrap();
    let mut dec = RowDecoder::new(&schema_json, batch.schema()).unwrap();
    for r in 0..batch.num_rows() {
        let mut buf = Vec::new();
        enc.encode(r, &mut buf);
        dec.push(&buf).unwrap();
    }
    dec.finish().unwrap()
}

#[test]
fn every_type_and_null_round_trips() {
    let batch = sample();
    assert_eq!(round_trip(&batch), batch);
}

#[test]
fn target_columns_are_matched_by_name_and_missing_ones_are_null() {
    let batch = sample();
    let schema_json = avro_schema_with_meta("t", &batch.schema())
        .unwrap()
        .to_string();
    let target = Arc::new(Schema::new(vec![
        Field::new("name", DataType::Utf8, true),
        Field::new("absent", DataType::Int64, true),
        Field::new("id", DataType::Int64, false), // widened by a cast
    ]));
    let enc = RowEncoder::new(&batch).unwrap();
    let mut dec = RowDecoder::new(&schema_json, target).unwrap();
    for r in 0..batch.num_rows() {
        let mut buf = Vec::new();
        enc.encode(r, &mut buf);
        dec.push(&buf).unwrap();
    }
    let out = dec.finish().unwrap();
    assert_eq!(out.column(0).as_string::<i32>().value(0), "Zoë");
    assert_eq!(out.column(1).null_count(), 3);
    assert_eq!(out.column(2).as_primitive::<Int64Type>().value(2), 300_000);
}

#[test]
fn record_fields_are_matched_by_name_inside_a_struct_column() {
    // the writer's struct `s` holds a and b; the target wants b (cast to Float32) and c, which
    // the writer lacks: a is skipped, c is NULL, and the null struct row stays null
    let batch = sample();
    let schema_json = avro_schema_with_meta("t", &batch.schema())
        .unwrap()
        .to_string();
    let inner = Fields::from(vec![
        Field::new("b", DataType::Float32, true),
        Field::new("c", DataType::Utf8, true),
    ]);
    let target = Arc::new(Schema::new(vec![
        Field::new("s", DataType::Struct(inner), true),
        Field::new("id", DataType::Int32, false),
    ]));
    let enc = RowEncoder::new(&batch).unwrap();
    let mut dec = RowDecoder::new(&schema_json, target).unwrap();
    for r in 0..batch.num_rows() {
        let mut buf = Vec::new();
        enc.encode(r, &mut buf);
        dec.push(&buf).unwrap();
    }
    let out = dec.finish().unwrap();
    let s = out.column(0).as_struct();
    assert_eq!(
        (0..3).map(|r| s.is_valid(r)).collect::<Vec<_>>(),
        [true, false, true]
    );
    let b = s.column(0).as_primitive::<Float32Type>();
    assert_eq!((b.value(0), b.value(2)), (1.5, -2.0));
    assert_eq!(s.column(1).null_count(), 3);
    assert_eq!(out.column(1).as_primitive::<Int32Type>().value(1), -2);
}

/// The sample, its Avro schema and the datum of its first row.
fn first_datum() -> (RecordBatch, String, Vec<u8>) {
    let batch = sample();
    let schema_json = avro_schema_with_meta("t", &batch.schema())
        .unwrap()
        .to_string();
    let mut buf = Vec::new();
    RowEncoder::new(&batch).unwrap().encode(0, &mut buf);
    (batch, schema_json, buf)
}

#[test]
fn a_truncated_datum_is_an_error() {
    let (batch, schema_json, buf) = first_datum();
    let mut dec = RowDecoder::new(&schema_json, batch.schema()).unwrap();
    assert!(dec.push(&buf[..buf.len() - 3]).is_err());
}

#[test]
fn a_projection_reads_a_datum_up_to_its_last_field_and_no_further() {
    let (batch, schema_json, buf) = first_datum();
    // `label` and `id` come first: the rest of the datum is not walked, so a tail cut short
    // (or garbage) there is not read, while a cut into `id` itself still is an error
    let wanted = Arc::new(batch.schema().project(&[0, 1]).unwrap());
    let mut dec = RowDecoder::new(&schema_json, wanted.clone()).unwrap();
    let head = buf.len() - 20;
    dec.push(&buf[..head]).unwrap();
    let out = dec.finish().unwrap();
    assert_eq!(out, batch.slice(0, 1).project(&[0, 1]).unwrap());
    let mut dec = RowDecoder::new(&schema_json, wanted).unwrap();
    let label = batch.column(0).as_string::<i32>().value(0).len();
    assert!(dec.push(&buf[..label + 1]).is_err());
}

#[test]
fn longs_use_zig_zag_varints() {
    for (n, bytes) in [
        (0i64, vec![0u8]),
        (-1, vec![1]),
        (1, vec![2]),
        (64, vec![0x80, 1]),
    ] {
        let mut out = Vec::new();
        write_long(&mut out, n);
        assert_eq!(out, bytes);
        assert_eq!(read_long(&mut out.as_slice()), Some(n));
    }
}

#[test]
fn a_corrupt_array_count_is_an_error_not_a_loop() {
    // an array of `null` items claiming 2^60 of them, in a 9-byte datum
    let schema = r#"{"type":"record","name":"r","fields":[{"name":"a","type":{"type":"array","items":"null"}}]}"#;
    let target = Arc::new(Schema::new(vec![Field::new(
        "a",
        DataType::List(Arc::new(Field::new("item", DataType::Null, true))),
        true,
    )]));
    let mut datum = Vec::new();
    write_long(&mut datum, 1 << 60);
    let mut dec = RowDecoder::new(schema, target).unwrap();
    assert!(dec.push(&datum).is_err());
}
