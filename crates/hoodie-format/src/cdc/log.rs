//! `.cdc` log files: their names, the Avro schema of each logging mode (`HoodieCDCUtils`), and
//! CDC_DATA blocks encoded and decoded (Hudi encodes them as Avro data blocks).
//!
//! - OP_KEY_ONLY: record `Record`, `op` and `record_key` as `["string", "null"]` (string first).
//! - DATA_BEFORE: record `CDC` in the table's namespace, `op`, `record_key`, `before`.
//! - DATA_BEFORE_AFTER: record `CDC`, `op`, `ts_ms` (the instant), `before`, `after`.
//!
//! Images are the table's records without the meta columns, as Hudi logs them.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use bytes::Bytes;
use serde_json::{json, Value};

use super::{image_fields, CdcMode, AFTER, BEFORE, OP, TS_MS};
use crate::avro::datum::{write_long, RowEncoder};
use crate::error::{FormatError, Result};
use crate::log::block::{header, parse_blocks, BlockType};
use crate::log::write::{data_block, MAX_DATA_BLOCK_BYTES};

/// Name of the record key field of the OP_KEY_ONLY and DATA_BEFORE schemas.
pub const RECORD_KEY: &str = "record_key";

/// The name of a CDC log file: `.<fileId>_<instant>.log.<version>_<writeToken>.cdc`.
pub fn cdc_file_name(file_id: &str, instant: &str, version: u32, token: &str) -> String {
    format!(
        "{}.cdc",
        crate::log::write::log_file_name(file_id, instant, version, token)
    )
}

fn nullable_string(name: &str) -> Value {
    json!({"name": name, "type": ["null", "string"], "default": null})
}

/// The Avro schema of a CDC log's records in `mode` for table `table_name` of `table` (meta
/// columns are left out of the images).
pub fn cdc_schema(mode: CdcMode, table_name: &str, table: &Schema) -> Result<Value> {
    if mode == CdcMode::OpKeyOnly {
        return Ok(json!({"type": "record", "name": "Record", "fields": [
            {"name": OP, "type": ["string", "null"]},
            {"name": RECORD_KEY, "type": ["string", "null"]},
        ]}));
    }
    let record = crate::schema::avro_schema(table_name, &Schema::new(image_fields(table)))?;
    let namespace = record["namespace"].as_str().unwrap_or_default().to_string();
    let full_name = format!(
        "{namespace}.{}",
        record["name"].as_str().unwrap_or_default()
    );
    let before = json!({"name": BEFORE, "type": ["null", record], "default": null});
    let fields = match mode {
        CdcMode::DataBefore => vec![nullable_string(OP), nullable_string(RECORD_KEY), before],
        _ => vec![
            nullable_string(OP),
            nullable_string(TS_MS),
            before,
            json!({"name": AFTER, "type": ["null", full_name], "default": null}),
        ],
    };
    Ok(json!({"type": "record", "name": "CDC", "namespace": namespace, "fields": fields}))
}

/// The bytes of a `.cdc` log file of `instant`: `changes` (rows of
/// [`change_schema`](super::change_schema), images in storage types) and their record keys
/// `keys` as CDC_DATA blocks in `mode`'s schema.
pub fn cdc_log_bytes(
    mode: CdcMode,
    instant: &str,
    schema_json: &str,
    changes: &RecordBatch,
    keys: &StringArray,
) -> Result<Vec<u8>> {
    let head = [
        (header::INSTANT_TIME, instant),
        (header::SCHEMA, schema_json),
    ];
    let ops = changes.column(0).as_string::<i32>();
    let encoder = match mode {
        CdcMode::OpKeyOnly => None,
        CdcMode::DataBefore => Some(RowEncoder::new(&nullable_batch(&[
            (OP, changes.column(0).clone()),
            (RECORD_KEY, Arc::new(keys.clone())),
            (BEFORE, changes.column(2).clone()),
        ])?)?),
        CdcMode::DataBeforeAfter => Some(RowEncoder::new(&nullable_batch(&[
            (OP, changes.column(0).clone()),
            (TS_MS, changes.column(1).clone()),
            (BEFORE, changes.column(2).clone()),
            (AFTER, changes.column(3).clone()),
        ])?)?),
    };
    let mut out = Vec::new();
    let (mut records, mut datum, mut count) = (Vec::new(), Vec::new(), 0i32);
    for r in 0..changes.num_rows() {
        datum.clear();
        match &encoder {
            Some(e) => e.encode(r, &mut datum),
            None => {
                // union branch 0 is the string
                for s in [ops.value(r), keys.value(r)] {
                    write_long(&mut datum, 0);
                    write_long(&mut datum, s.len() as i64);
                    datum.extend_from_slice(s.as_bytes());
                }
            }
        }
        records.extend_from_slice(&(datum.len() as i32).to_be_bytes());
        records.extend_from_slice(&datum);
        count += 1;
        if records.len() >= MAX_DATA_BLOCK_BYTES {
            data_block(BlockType::CdcData, &head, count, &records, &mut out);
            records.clear();
            count = 0;
        }
    }
    if count > 0 {
        data_block(BlockType::CdcData, &head, count, &records, &mut out);
    }
    Ok(out)
}

/// A batch of `columns` whose fields are all nullable (the CDC schemas' fields are unions with
/// null).
fn nullable_batch(columns: &[(&str, ArrayRef)]) -> Result<RecordBatch> {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, c)| Field::new(*n, c.data_type().clone(), true))
        .collect();
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns.iter().map(|(_, c)| c.clone()).collect(),
    )?)
}

/// The schema logged records are decoded into: `op`, `record_key`, `ts_ms` (strings) and the
/// images (structs of the table's data columns; a field the log's mode lacks is NULL).
pub fn logged_schema(table: &Schema) -> SchemaRef {
    let image = DataType::Struct(image_fields(table));
    Arc::new(Schema::new(vec![
        Field::new(OP, DataType::Utf8, true),
        Field::new(RECORD_KEY, DataType::Utf8, true),
        Field::new(TS_MS, DataType::Utf8, true),
        Field::new(BEFORE, image.clone(), true),
        Field::new(AFTER, image, true),
    ]))
}

/// The records of a `.cdc` log file (`rel` names it in errors), in [`logged_schema`] of
/// `table`, in the order they were written.
pub fn read_cdc_log(bytes: &Bytes, rel: &str, table: &Schema) -> Result<Vec<RecordBatch>> {
    let schema = logged_schema(table);
    let mut out = Vec::new();
    for block in parse_blocks(bytes, rel)? {
        match block.block_type {
            BlockType::CdcData => {
                let batch = crate::log::read::decode_avro_block(&block, &schema, rel)?;
                if batch.column(0).null_count() > 0 {
                    return Err(FormatError::Corrupt {
                        path: rel.to_string(),
                        reason: "a CDC record without an operation".into(),
                    });
                }
                out.push(batch);
            }
            BlockType::Corrupt => {}
            other => {
                return Err(FormatError::Corrupt {
                    path: rel.to_string(),
                    reason: format!("a {other:?} block in a CDC log"),
                })
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdc::{change_schema, CdcOp, ChangeRows};
    use arrow::array::{Int32Array, StructArray};

    fn table() -> Schema {
        let mut fields = crate::schema::meta_fields();
        fields.push(Field::new("id", DataType::Int32, false));
        fields.push(Field::new("Name", DataType::Utf8, true));
        Schema::new(fields)
    }

    fn rows(ids: &[i32], names: &[Option<&str>]) -> RecordBatch {
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int32, false),
                Field::new("Name", DataType::Utf8, true),
            ])),
            vec![
                Arc::new(Int32Array::from(ids.to_vec())),
                Arc::new(StringArray::from(names.to_vec())),
            ],
        )
        .unwrap()
    }

    fn sample() -> (RecordBatch, StringArray) {
        let t = table();
        let mut c = ChangeRows::new(change_schema(&t), "20240101000000000");
        c.push(CdcOp::Delete, 1, Some(&rows(&[1], &[Some("a")])), None)
            .unwrap();
        c.push(
            CdcOp::Update,
            1,
            Some(&rows(&[2], &[None])),
            Some(&rows(&[2], &[Some("b2")])),
        )
        .unwrap();
        c.push(CdcOp::Insert, 1, None, Some(&rows(&[3], &[Some("c")])))
            .unwrap();
        let batches = c.into_batches();
        let all = arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
        (all, StringArray::from(vec!["1", "2", "3"]))
    }

    fn image_ids(batch: &RecordBatch, col: &str) -> Vec<Option<i32>> {
        let s: &StructArray = batch.column_by_name(col).unwrap().as_struct();
        let ids = s.column(0).as_primitive::<arrow::datatypes::Int32Type>();
        (0..s.len())
            .map(|r| s.is_valid(r).then(|| ids.value(r)))
            .collect()
    }

    #[test]
    fn every_mode_round_trips_its_fields() {
        let t = table();
        let (changes, keys) = sample();
        for mode in [
            CdcMode::OpKeyOnly,
            CdcMode::DataBefore,
            CdcMode::DataBeforeAfter,
        ] {
            let schema = cdc_schema(mode, "Trips", &t).unwrap().to_string();
            let bytes = cdc_log_bytes(mode, "20240101000000000", &schema, &changes, &keys).unwrap();
            let got = read_cdc_log(&Bytes::from(bytes), "x.cdc", &t).unwrap();
            assert_eq!(got.len(), 1);
            let b = &got[0];
            let ops: Vec<&str> = b.column(0).as_string::<i32>().iter().flatten().collect();
            assert_eq!(ops, ["d", "u", "i"], "{mode:?}");
            let logged_keys = b.column(1).as_string::<i32>();
            let ts = b.column(2).as_string::<i32>();
            match mode {
                CdcMode::OpKeyOnly => {
                    assert_eq!(logged_keys.value(2), "3");
                    assert_eq!(image_ids(b, BEFORE), [None, None, None]);
                }
                CdcMode::DataBefore => {
                    assert_eq!(logged_keys.value(1), "2");
                    assert_eq!(image_ids(b, BEFORE), [Some(1), Some(2), None]);
                    assert_eq!(image_ids(b, AFTER), [None, None, None]);
                }
                CdcMode::DataBeforeAfter => {
                    assert!(logged_keys.is_null(0));
                    assert_eq!(ts.value(0), "20240101000000000");
                    assert_eq!(image_ids(b, BEFORE), [Some(1), Some(2), None]);
                    assert_eq!(image_ids(b, AFTER), [None, Some(2), Some(3)]);
                    let after: &StructArray = b.column_by_name(AFTER).unwrap().as_struct();
                    assert_eq!(after.column(1).as_string::<i32>().value(1), "b2");
                    let before: &StructArray = b.column_by_name(BEFORE).unwrap().as_struct();
                    assert!(before.column(1).is_null(1));
                }
            }
        }
    }

    #[test]
    fn the_schemas_are_hudis() {
        let t = table();
        let s = cdc_schema(CdcMode::DataBeforeAfter, "Trips", &t).unwrap();
        assert_eq!(s["name"], "CDC");
        assert_eq!(s["namespace"], "hoodie.Trips");
        assert_eq!(s["fields"][1]["name"], "ts_ms");
        assert_eq!(s["fields"][3]["type"][1], "hoodie.Trips.Trips_record");
        let k = cdc_schema(CdcMode::OpKeyOnly, "Trips", &t).unwrap();
        assert_eq!(k["fields"][0]["type"][0], "string");
        assert_eq!(
            cdc_file_name("f1-0", "20240101000000000", 1, "0-1-2"),
            ".f1-0_20240101000000000.log.1_0-1-2.cdc"
        );
    }

    #[test]
    fn another_block_type_in_a_cdc_log_is_corrupt() {
        let t = table();
        let mut bytes = Vec::new();
        crate::log::block::encode_block(
            BlockType::Delete,
            &[(header::INSTANT_TIME, "1")],
            &[],
            &mut bytes,
        );
        let e = read_cdc_log(&Bytes::from(bytes), "x.cdc", &t).unwrap_err();
        assert!(e.to_string().contains("x.cdc"), "{e}");
    }
}
