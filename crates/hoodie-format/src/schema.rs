//! Table schemas: Arrow types as Hudi stores them, and the Avro schema Hudi records.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use serde_json::{json, Value};

use crate::error::{FormatError, Result};
use crate::meta::META_COLUMNS;

/// The Arrow type a column of `data_type` is stored as in a base file: strings and binaries
/// as plain (non-view) arrays, timestamps as microseconds since the epoch in UTC (Spark's
/// `TIMESTAMP`).
pub fn storage_type(column: &str, data_type: &DataType) -> Result<DataType> {
    let unsupported = |reason: &str| FormatError::UnsupportedType {
        column: column.to_string(),
        data_type: data_type.to_string(),
        reason: reason.to_string(),
    };
    Ok(match data_type {
        DataType::Null => DataType::Utf8,
        DataType::Boolean
        | DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::Float32
        | DataType::Float64
        | DataType::Date32
        | DataType::Decimal128(_, _) => data_type.clone(),
        DataType::UInt8 | DataType::UInt16 => DataType::Int32,
        DataType::UInt32 => DataType::Int64,
        DataType::UInt64 => {
            return Err(unsupported(
                "Hudi has no unsigned 64-bit type; cast to BIGINT or DECIMAL(20,0)",
            ))
        }
        DataType::Float16 => DataType::Float32,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => DataType::Utf8,
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => DataType::Binary,
        DataType::Date64 => DataType::Date32,
        DataType::Timestamp(_, _) => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) => DataType::Decimal128(*p, *s),
        DataType::List(f)
        | DataType::LargeList(f)
        | DataType::ListView(f)
        | DataType::LargeListView(f) => DataType::List(Arc::new(storage_field(f)?)),
        DataType::Struct(fields) => DataType::Struct(
            fields
                .iter()
                .map(|f| storage_field(f))
                .collect::<Result<Vec<_>>>()?
                .into(),
        ),
        DataType::Map(f, sorted) => DataType::Map(Arc::new(storage_field(f)?), *sorted),
        _ => return Err(unsupported("not supported in Hudi tables")),
    })
}

/// `f` with its type as hoodie stores it (the type a base file holds).
pub fn storage_field(f: &Field) -> Result<Field> {
    Ok(Field::new(
        f.name(),
        storage_type(f.name(), f.data_type())?,
        f.is_nullable(),
    ))
}

/// The meta column fields (nullable strings).
pub fn meta_fields() -> Vec<Field> {
    META_COLUMNS
        .iter()
        .map(|n| Field::new(*n, DataType::Utf8, true))
        .collect()
}

/// True if `name` is one of the five meta columns.
pub fn is_meta_column(name: &str) -> bool {
    META_COLUMNS.contains(&name)
}

/// The full table schema: meta columns, then the data columns in storage types.
pub fn table_schema(data: &Schema) -> Result<SchemaRef> {
    let mut fields = meta_fields();
    for f in data.fields().iter().filter(|f| !is_meta_column(f.name())) {
        fields.push(storage_field(f)?);
    }
    Ok(Arc::new(Schema::new(fields)))
}

/// The names of the data columns (everything but the meta columns), in table order.
pub fn data_column_names(table: &Schema) -> Vec<String> {
    table
        .fields()
        .iter()
        .filter(|f| !is_meta_column(f.name()))
        .map(|f| f.name().clone())
        .collect()
}

/// The data schema (without meta columns).
pub fn data_schema(table: &Schema) -> SchemaRef {
    Arc::new(Schema::new(
        table
            .fields()
            .iter()
            .filter(|f| !is_meta_column(f.name()))
            .cloned()
            .collect::<Fields>(),
    ))
}

fn avro_name_ok(name: &str) -> String {
    // Avro names allow [A-Za-z_][A-Za-z0-9_]*; Spark's converter keeps column names as they are
    // for columns but record/fixed names must be valid. Replace other characters.
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.chars().next().is_none_or(|c| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// The Avro schema Hudi records for a table (`extraMetadata.schema`, `hoodie.table.create.schema`):
/// record `<table>_record` in namespace `hoodie.<table>`, nullable fields as `["null", T]`.
/// Meta columns are left out.
pub fn avro_schema(table_name: &str, schema: &Schema) -> Result<Value> {
    let name = avro_name_ok(table_name);
    let record_name = format!("{name}_record");
    let namespace = format!("hoodie.{name}");
    let fields = schema
        .fields()
        .iter()
        .filter(|f| !is_meta_column(f.name()))
        .map(|f| avro_field(f, &format!("{namespace}.{record_name}")))
        .collect::<Result<Vec<_>>>()?;
    Ok(json!({"type": "record", "name": record_name, "namespace": namespace, "fields": fields}))
}

/// The Avro schema of a log block's records (its SCHEMA header): [`avro_schema`] with the five
/// meta columns first, each `["null", "string"]` as Java writes them.
pub fn avro_schema_with_meta(table_name: &str, schema: &Schema) -> Result<Value> {
    let mut v = avro_schema(table_name, schema)?;
    let meta: Vec<Value> = META_COLUMNS
        .iter()
        .map(|n| json!({"name": n, "type": ["null", "string"], "doc": "", "default": null}))
        .collect();
    if let Some(fields) = v.get_mut("fields").and_then(Value::as_array_mut) {
        fields.splice(0..0, meta);
    }
    Ok(v)
}

fn avro_field(f: &Field, namespace: &str) -> Result<Value> {
    let t = avro_type(f.name(), f.data_type(), namespace)?;
    Ok(if f.is_nullable() {
        json!({"name": f.name(), "type": ["null", t], "default": null})
    } else {
        json!({"name": f.name(), "type": t})
    })
}

pub(crate) fn decimal_size(precision: u8) -> usize {
    // Minimum bytes to hold 10^precision - 1 in two's complement (Spark's computeMinBytesForPrecision).
    let mut n = 1usize;
    while 2f64.powi(8 * n as i32 - 1) < 10f64.powi(precision as i32) {
        n += 1;
    }
    n
}

fn avro_type(column: &str, dt: &DataType, namespace: &str) -> Result<Value> {
    let dt = storage_type(column, dt)?;
    Ok(match &dt {
        DataType::Boolean => json!("boolean"),
        DataType::Int8 | DataType::Int16 | DataType::Int32 => json!("int"),
        DataType::Int64 => json!("long"),
        DataType::Float32 => json!("float"),
        DataType::Float64 => json!("double"),
        DataType::Utf8 => json!("string"),
        DataType::Binary => json!("bytes"),
        DataType::Date32 => json!({"type": "int", "logicalType": "date"}),
        DataType::Timestamp(_, _) => json!({"type": "long", "logicalType": "timestamp-micros"}),
        DataType::Decimal128(p, s) => json!({
            "type": "fixed", "name": "fixed", "namespace": format!("{namespace}.{}", avro_name_ok(column)),
            "size": decimal_size(*p), "logicalType": "decimal", "precision": p, "scale": s
        }),
        DataType::List(item) => {
            let t = avro_type(
                item.name(),
                item.data_type(),
                &format!("{namespace}.{}", avro_name_ok(column)),
            )?;
            let items = if item.is_nullable() {
                json!(["null", t])
            } else {
                t
            };
            json!({"type": "array", "items": items})
        }
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(FormatError::UnsupportedType {
                    column: column.into(),
                    data_type: dt.to_string(),
                    reason: "malformed map".into(),
                });
            };
            let v = &kv[1];
            let t = avro_type(
                v.name(),
                v.data_type(),
                &format!("{namespace}.{}", avro_name_ok(column)),
            )?;
            let values = if v.is_nullable() {
                json!(["null", t])
            } else {
                t
            };
            json!({"type": "map", "values": values})
        }
        DataType::Struct(fields) => {
            let ns = format!("{namespace}.{}", avro_name_ok(column));
            let fs = fields
                .iter()
                .map(|f| avro_field(f, &ns))
                .collect::<Result<Vec<_>>>()?;
            json!({"type": "record", "name": avro_name_ok(column), "namespace": namespace, "fields": fs})
        }
        other => {
            return Err(FormatError::UnsupportedType {
                column: column.into(),
                data_type: other.to_string(),
                reason: "no Avro mapping".into(),
            })
        }
    })
}

/// Converts a Hudi Avro record schema (JSON) into an Arrow schema of data columns (meta fields
/// in it are dropped).
pub fn arrow_schema_from_avro(avro_json: &str) -> Result<SchemaRef> {
    let corrupt = |reason: String| FormatError::Corrupt {
        path: "avro schema".into(),
        reason,
    };
    let v: Value = serde_json::from_str(avro_json).map_err(|e| corrupt(e.to_string()))?;
    let fields = v
        .get("fields")
        .and_then(Value::as_array)
        .ok_or_else(|| corrupt("not a record schema".into()))?;
    let mut out = Vec::new();
    for f in fields {
        let name = f
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| corrupt("field without name".into()))?;
        if is_meta_column(name) {
            continue;
        }
        let (dt, nullable) =
            arrow_type_from_avro(f.get("type").unwrap_or(&Value::Null)).map_err(corrupt)?;
        out.push(Field::new(name, dt, nullable));
    }
    Ok(Arc::new(Schema::new(out)))
}

fn arrow_type_from_avro(t: &Value) -> std::result::Result<(DataType, bool), String> {
    match t {
        Value::Array(branches) => {
            let non_null: Vec<&Value> = branches.iter().filter(|b| *b != &json!("null")).collect();
            if non_null.len() != 1 {
                return Err(format!("unsupported union {t}"));
            }
            Ok((arrow_type_from_avro(non_null[0])?.0, true))
        }
        Value::String(s) => Ok((
            match s.as_str() {
                "boolean" => DataType::Boolean,
                "int" => DataType::Int32,
                "long" => DataType::Int64,
                "float" => DataType::Float32,
                "double" => DataType::Float64,
                "string" => DataType::Utf8,
                "bytes" => DataType::Binary,
                "null" => DataType::Null,
                other => return Err(format!("unsupported Avro type {other}")),
            },
            false,
        )),
        Value::Object(o) => {
            let ty = o.get("type").and_then(Value::as_str).unwrap_or_default();
            let logical = o.get("logicalType").and_then(Value::as_str);
            let dt = match (ty, logical) {
                ("int", Some("date")) => DataType::Date32,
                ("long", Some("timestamp-micros")) | ("long", Some("timestamp-millis")) => {
                    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
                }
                ("long", Some("local-timestamp-micros"))
                | ("long", Some("local-timestamp-millis")) => {
                    DataType::Timestamp(TimeUnit::Microsecond, None)
                }
                ("fixed", Some("decimal")) | ("bytes", Some("decimal")) => DataType::Decimal128(
                    o.get("precision").and_then(Value::as_u64).unwrap_or(38) as u8,
                    o.get("scale").and_then(Value::as_i64).unwrap_or(0) as i8,
                ),
                ("array", _) => {
                    let (it, n) = arrow_type_from_avro(o.get("items").unwrap_or(&Value::Null))?;
                    DataType::List(Arc::new(Field::new("element", it, n)))
                }
                ("map", _) => {
                    let (vt, n) = arrow_type_from_avro(o.get("values").unwrap_or(&Value::Null))?;
                    DataType::Map(
                        Arc::new(Field::new(
                            "key_value",
                            DataType::Struct(
                                vec![
                                    Field::new("key", DataType::Utf8, false),
                                    Field::new("value", vt, n),
                                ]
                                .into(),
                            ),
                            false,
                        )),
                        false,
                    )
                }
                ("record", _) => {
                    let mut fs = Vec::new();
                    for f in o
                        .get("fields")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let name = f.get("name").and_then(Value::as_str).unwrap_or_default();
                        let (dt, n) = arrow_type_from_avro(f.get("type").unwrap_or(&Value::Null))?;
                        fs.push(Field::new(name, dt, n));
                    }
                    DataType::Struct(fs.into())
                }
                (other, _) => return arrow_type_from_avro(&Value::String(other.to_string())),
            };
            Ok((dt, false))
        }
        other => Err(format!("unsupported Avro type {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn avro_schema_round_trips_basic_types() {
        let s = Schema::new(vec![
            Field::new("id", DataType::Int32, false),
            Field::new("name", DataType::Utf8View, true),
            Field::new("price", DataType::Decimal128(10, 2), true),
            Field::new("ts", DataType::Timestamp(TimeUnit::Nanosecond, None), true),
            Field::new("dt", DataType::Date32, true),
            Field::new(
                "tags",
                DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
                true,
            ),
        ]);
        let avro = avro_schema("trips", &s).unwrap();
        assert_eq!(avro["name"], "trips_record");
        assert_eq!(avro["namespace"], "hoodie.trips");
        assert_eq!(avro["fields"][0], json!({"name": "id", "type": "int"}));
        assert_eq!(avro["fields"][2]["type"][1]["size"], 5);
        let back = arrow_schema_from_avro(&avro.to_string()).unwrap();
        assert_eq!(back.field(1).data_type(), &DataType::Utf8);
        assert_eq!(back.field(2).data_type(), &DataType::Decimal128(10, 2));
        assert_eq!(
            back.field(3).data_type(),
            &DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        assert!(!back.field(0).is_nullable() && back.field(1).is_nullable());
        // apache-avro accepts it as a valid schema
        apache_avro::Schema::parse_str(&avro.to_string()).unwrap();
    }

    #[test]
    fn rejects_unsigned_64() {
        assert!(matches!(
            storage_type("x", &DataType::UInt64),
            Err(FormatError::UnsupportedType { .. })
        ));
    }
}
