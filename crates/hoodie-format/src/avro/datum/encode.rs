//! Rows of Arrow columns as Avro binary datums, in the schema `crate::schema::avro_schema`
//! gives the same columns (nullable columns as `["null", T]`, the meta columns included).

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::*;
use arrow::record_batch::RecordBatch;

use super::write_long;
use crate::error::{FormatError, Result};

/// Encodes rows of batches of one schema.
pub struct RowEncoder {
    columns: Vec<ArrayRef>,
    nullable: Vec<bool>,
}

impl RowEncoder {
    /// An encoder of `batch`'s rows; its columns must already have their storage types
    /// (`crate::schema::storage_type`).
    pub fn new(batch: &RecordBatch) -> Result<Self> {
        let schema = batch.schema();
        for f in schema.fields() {
            check_type(f.name(), f.data_type())?;
        }
        Ok(Self {
            columns: batch.columns().to_vec(),
            nullable: schema.fields().iter().map(|f| f.is_nullable()).collect(),
        })
    }

    /// Appends row `row` as one datum.
    pub fn encode(&self, row: usize, out: &mut Vec<u8>) {
        for (col, nullable) in self.columns.iter().zip(&self.nullable) {
            encode_value(col.as_ref(), *nullable, row, out);
        }
    }
}

fn check_type(column: &str, dt: &DataType) -> Result<()> {
    let ok = match dt {
        DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::Float32
        | DataType::Float64
        | DataType::Utf8
        | DataType::Binary
        | DataType::Date32
        | DataType::Timestamp(TimeUnit::Microsecond, _)
        | DataType::Decimal128(_, _) => true,
        DataType::List(f) => return check_type(f.name(), f.data_type()),
        DataType::Map(f, _) => return check_type(f.name(), f.data_type()),
        DataType::Struct(fields) => {
            return fields
                .iter()
                .try_for_each(|f| check_type(f.name(), f.data_type()))
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(FormatError::UnsupportedType {
            column: column.into(),
            data_type: dt.to_string(),
            reason: "not written to log blocks (a storage type was expected)".into(),
        })
    }
}

/// Writes one value; a nullable one as a `["null", T]` union branch.
fn encode_value(array: &dyn Array, nullable: bool, row: usize, out: &mut Vec<u8>) {
    if nullable {
        if array.is_null(row) {
            out.push(0);
            return;
        }
        out.push(2); // union branch 1, zig-zag encoded
    }
    match array.data_type() {
        DataType::Boolean => out.push(array.as_boolean().value(row) as u8),
        DataType::Int8 => write_long(out, array.as_primitive::<Int8Type>().value(row) as i64),
        DataType::Int16 => write_long(out, array.as_primitive::<Int16Type>().value(row) as i64),
        DataType::Int32 => write_long(out, array.as_primitive::<Int32Type>().value(row) as i64),
        DataType::Date32 => write_long(out, array.as_primitive::<Date32Type>().value(row) as i64),
        DataType::Int64 => write_long(out, array.as_primitive::<Int64Type>().value(row)),
        DataType::Timestamp(_, _) => write_long(
            out,
            array.as_primitive::<TimestampMicrosecondType>().value(row),
        ),
        DataType::Float32 => {
            out.extend_from_slice(&array.as_primitive::<Float32Type>().value(row).to_le_bytes())
        }
        DataType::Float64 => {
            out.extend_from_slice(&array.as_primitive::<Float64Type>().value(row).to_le_bytes())
        }
        DataType::Utf8 => write_bytes(out, array.as_string::<i32>().value(row).as_bytes()),
        DataType::Binary => write_bytes(out, array.as_binary::<i32>().value(row)),
        DataType::Decimal128(p, _) => {
            let v = array.as_primitive::<Decimal128Type>().value(row);
            let size = crate::schema::decimal_size(*p);
            out.extend_from_slice(&v.to_be_bytes()[16 - size..]);
        }
        DataType::Struct(fields) => {
            let s = array.as_struct();
            for (f, child) in fields.iter().zip(s.columns()) {
                encode_value(child.as_ref(), f.is_nullable(), row, out);
            }
        }
        DataType::List(item) => {
            let l = array.as_list::<i32>();
            let values = l.value(row);
            if !values.is_empty() {
                write_long(out, values.len() as i64);
                for i in 0..values.len() {
                    encode_value(values.as_ref(), item.is_nullable(), i, out);
                }
            }
            out.push(0);
        }
        DataType::Map(entries, _) => {
            let m = array.as_map();
            let kv = m.value(row);
            let DataType::Struct(kv_fields) = entries.data_type() else {
                unreachable!("a map's entries are a struct")
            };
            if kv.len() > 0 {
                write_long(out, kv.len() as i64);
                for i in 0..kv.len() {
                    let key = arrow::compute::cast(kv.column(0), &DataType::Utf8)
                        .expect("map keys cast to strings");
                    write_bytes(out, key.as_string::<i32>().value(i).as_bytes());
                    encode_value(kv.column(1).as_ref(), kv_fields[1].is_nullable(), i, out);
                }
            }
            out.push(0);
        }
        other => unreachable!("type {other} was refused by RowEncoder::new"),
    }
}

fn write_bytes(out: &mut Vec<u8>, b: &[u8]) {
    write_long(out, b.len() as i64);
    out.extend_from_slice(b);
}
