//! DELETE block content (version 3): `i32 3 · i32 len · HoodieDeleteRecordList` as an Avro
//! datum, each entry's ordering value a union of wrapper records (`IntWrapper{value}`, ...).

use crate::avro::datum::{read_blocks, read_bytes, read_long, take, write_long};
use crate::error::{FormatError, Result};

/// The content version of the delete blocks Hudi 1.x writes.
const CONTENT_VERSION: i32 = 3;

/// The ordering value of a delete entry.
#[derive(Debug, Clone, PartialEq)]
pub enum OrderingValue {
    /// No ordering value (the delete always wins).
    Null,
    /// `BooleanWrapper`.
    Boolean(bool),
    /// `IntWrapper` (Spark SQL DELETE writes `IntWrapper(0)`: the delete always wins).
    Int(i32),
    /// `LongWrapper`.
    Long(i64),
    /// `FloatWrapper`.
    Float(f32),
    /// `DoubleWrapper`.
    Double(f64),
    /// `BytesWrapper`.
    Bytes(Vec<u8>),
    /// `StringWrapper`.
    String(String),
    /// `DateWrapper` (days since the epoch).
    Date(i32),
    /// `DecimalWrapper` (unscaled big-endian two's complement bytes).
    Decimal(Vec<u8>),
    /// `TimeMicrosWrapper`.
    TimeMicros(i64),
    /// `TimestampMicrosWrapper`.
    TimestampMicros(i64),
    /// `ArrayWrapper` (several ordering fields).
    Array(Vec<OrderingValue>),
}

impl OrderingValue {
    /// Whether this is the default ordering value (null, or Java's default `0`), with which a
    /// delete wins over any record.
    pub fn is_default(&self) -> bool {
        matches!(self, OrderingValue::Null | OrderingValue::Int(0))
    }
}

impl OrderingValue {
    /// The wrapper of the value at `row` of `array` (an ordering column).
    pub fn of_array(array: &dyn arrow::array::Array, row: usize) -> OrderingValue {
        use arrow::array::AsArray;
        use arrow::datatypes::*;
        use OrderingValue as O;
        if array.is_null(row) {
            return O::Null;
        }
        match array.data_type() {
            DataType::Boolean => O::Boolean(array.as_boolean().value(row)),
            DataType::Int8 => O::Int(array.as_primitive::<Int8Type>().value(row) as i32),
            DataType::Int16 => O::Int(array.as_primitive::<Int16Type>().value(row) as i32),
            DataType::Int32 => O::Int(array.as_primitive::<Int32Type>().value(row)),
            DataType::Int64 => O::Long(array.as_primitive::<Int64Type>().value(row)),
            DataType::Float32 => O::Float(array.as_primitive::<Float32Type>().value(row)),
            DataType::Float64 => O::Double(array.as_primitive::<Float64Type>().value(row)),
            DataType::Date32 => O::Date(array.as_primitive::<Date32Type>().value(row)),
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                O::TimestampMicros(array.as_primitive::<TimestampMicrosecondType>().value(row))
            }
            DataType::Utf8 => O::String(array.as_string::<i32>().value(row).to_string()),
            DataType::Utf8View => O::String(array.as_string_view().value(row).to_string()),
            DataType::Binary => O::Bytes(array.as_binary::<i32>().value(row).to_vec()),
            DataType::Decimal128(p, _) => {
                let v = array.as_primitive::<Decimal128Type>().value(row);
                let n = crate::schema::decimal_size(*p);
                O::Decimal(v.to_be_bytes()[16 - n..].to_vec())
            }
            _ => O::Null,
        }
    }
}

/// One deleted key.
#[derive(Debug, Clone, PartialEq)]
pub struct DeleteRecord {
    /// `_hoodie_record_key`.
    pub record_key: String,
    /// `_hoodie_partition_path`.
    pub partition_path: String,
    /// The ordering value the delete carries.
    pub ordering: OrderingValue,
}

fn corrupt(reason: &str) -> FormatError {
    FormatError::Corrupt {
        path: "log delete block".into(),
        reason: reason.into(),
    }
}

/// Decodes a delete block's content.
pub fn decode_deletes(content: &[u8]) -> Result<Vec<DeleteRecord>> {
    let mut buf = content;
    let head = take(&mut buf, 8).ok_or_else(|| corrupt("too short"))?;
    let version = i32::from_be_bytes(head[..4].try_into().expect("4 bytes"));
    if version != CONTENT_VERSION {
        return Err(FormatError::Unsupported {
            feature: format!("delete blocks of content version {version} (Kryo-serialised, written by Hudi before 0.14)"),
        });
    }
    let mut out = Vec::new();
    read_records(&mut buf, &mut out).ok_or_else(|| corrupt("bad delete record list"))?;
    Ok(out)
}

fn read_records(buf: &mut &[u8], out: &mut Vec<DeleteRecord>) -> Option<()> {
    read_blocks(buf, |b| {
        let record_key = read_opt_string(b)?.unwrap_or_default();
        let partition_path = read_opt_string(b)?.unwrap_or_default();
        let ordering = read_ordering(b, true)?;
        out.push(DeleteRecord {
            record_key,
            partition_path,
            ordering,
        });
        Some(())
    })
}

fn read_opt_string(buf: &mut &[u8]) -> Option<Option<String>> {
    match read_long(buf)? {
        0 => Some(None),
        1 => Some(Some(String::from_utf8(read_bytes(buf)?.to_vec()).ok()?)),
        _ => None,
    }
}

fn read_ordering(buf: &mut &[u8], top: bool) -> Option<OrderingValue> {
    use OrderingValue as O;
    Some(match read_long(buf)? {
        0 => O::Null,
        1 => O::Boolean(*take(buf, 1)?.first()? != 0),
        2 => O::Int(read_long(buf)? as i32),
        3 => O::Long(read_long(buf)?),
        4 => O::Float(f32::from_le_bytes(take(buf, 4)?.try_into().ok()?)),
        5 => O::Double(f64::from_le_bytes(take(buf, 8)?.try_into().ok()?)),
        6 => O::Bytes(read_bytes(buf)?.to_vec()),
        7 => O::String(String::from_utf8(read_bytes(buf)?.to_vec()).ok()?),
        8 => O::Date(read_long(buf)? as i32),
        9 => O::Decimal(read_bytes(buf)?.to_vec()),
        10 => O::TimeMicros(read_long(buf)?),
        11 => O::TimestampMicros(read_long(buf)?),
        12 if top => {
            let mut items = Vec::new();
            read_blocks(buf, |b| {
                items.push(read_ordering(b, false)?);
                Some(())
            })?;
            O::Array(items)
        }
        _ => return None,
    })
}

/// Encodes a delete block's content.
pub fn encode_deletes(deletes: &[DeleteRecord]) -> Vec<u8> {
    let mut datum = Vec::new();
    if !deletes.is_empty() {
        write_long(&mut datum, deletes.len() as i64);
        for d in deletes {
            for s in [&d.record_key, &d.partition_path] {
                datum.push(2); // union branch 1: string
                write_long(&mut datum, s.len() as i64);
                datum.extend_from_slice(s.as_bytes());
            }
            write_ordering(&mut datum, &d.ordering);
        }
    }
    datum.push(0);
    let mut out = Vec::with_capacity(datum.len() + 8);
    out.extend_from_slice(&CONTENT_VERSION.to_be_bytes());
    out.extend_from_slice(&(datum.len() as i32).to_be_bytes());
    out.extend_from_slice(&datum);
    out
}

fn write_ordering(out: &mut Vec<u8>, v: &OrderingValue) {
    use OrderingValue as O;
    let bytes = |out: &mut Vec<u8>, b: &[u8]| {
        write_long(out, b.len() as i64);
        out.extend_from_slice(b);
    };
    match v {
        O::Null => write_long(out, 0),
        O::Boolean(b) => {
            write_long(out, 1);
            out.push(*b as u8);
        }
        O::Int(i) => {
            write_long(out, 2);
            write_long(out, *i as i64);
        }
        O::Long(i) => {
            write_long(out, 3);
            write_long(out, *i);
        }
        O::Float(f) => {
            write_long(out, 4);
            out.extend_from_slice(&f.to_le_bytes());
        }
        O::Double(f) => {
            write_long(out, 5);
            out.extend_from_slice(&f.to_le_bytes());
        }
        O::Bytes(b) => {
            write_long(out, 6);
            bytes(out, b);
        }
        O::String(s) => {
            write_long(out, 7);
            bytes(out, s.as_bytes());
        }
        O::Date(d) => {
            write_long(out, 8);
            write_long(out, *d as i64);
        }
        O::Decimal(b) => {
            write_long(out, 9);
            bytes(out, b);
        }
        O::TimeMicros(t) => {
            write_long(out, 10);
            write_long(out, *t);
        }
        O::TimestampMicros(t) => {
            write_long(out, 11);
            write_long(out, *t);
        }
        O::Array(items) => {
            write_long(out, 12);
            if !items.is_empty() {
                write_long(out, items.len() as i64);
                for i in items {
                    write_ordering(out, i);
                }
            }
            out.push(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deletes_round_trip_and_int_zero_is_sparks_bytes() {
        let d = vec![
            DeleteRecord {
                record_key: "k2".into(),
                partition_path: String::new(),
                ordering: OrderingValue::Long(20),
            },
            DeleteRecord {
                record_key: "k1".into(),
                partition_path: "city=sf".into(),
                ordering: OrderingValue::Int(0),
            },
        ];
        let bytes = encode_deletes(&d);
        assert_eq!(decode_deletes(&bytes).unwrap(), d);
        // Spark SQL DELETE: ... | 04 00 (union index 2 = IntWrapper, value 0), then the
        // array's end
        assert_eq!(&bytes[bytes.len() - 3..], &[4, 0, 0]);
        assert!(decode_deletes(&bytes[..bytes.len() - 2]).is_err());
    }
}
