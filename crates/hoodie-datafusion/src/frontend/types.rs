//! Spark SQL type names (as Hudi's DDL uses them) to Arrow types.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, TimeUnit};

use crate::error::{HoodieError, Result};

/// Maps a type name as written in DDL (`string`, `long`, `decimal(10,2)`, `array<int>`, ...)
/// to the Arrow type hoodie stores.
pub fn arrow_type(type_name: &str) -> Result<DataType> {
    let t = type_name.trim().to_ascii_lowercase();
    let unsupported = || HoodieError::UnsupportedColumnType {
        type_name: type_name.to_string(),
    };
    if let Some(inner) = t.strip_prefix("array<").and_then(|s| s.strip_suffix('>')) {
        return Ok(DataType::List(Arc::new(Field::new(
            "element",
            arrow_type(inner)?,
            true,
        ))));
    }
    if let Some(inner) = t.strip_prefix("struct<").and_then(|s| s.strip_suffix('>')) {
        let original = type_name.trim();
        // field names keep their case: take them from the text as written
        let inner_original = &original[original.len() - inner.len() - 1..original.len() - 1];
        let fields = split_top(inner_original)
            .into_iter()
            .filter(|f| !f.trim().is_empty())
            .map(|f| {
                let f = f.trim();
                let (name, ty) = f
                    .split_once(':')
                    .or_else(|| f.split_once(' '))
                    .ok_or_else(unsupported)?;
                Ok(Field::new(
                    name.trim().trim_matches('`'),
                    arrow_type(ty)?,
                    true,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        return Ok(DataType::Struct(fields.into()));
    }
    if let Some(inner) = t.strip_prefix("map<").and_then(|s| s.strip_suffix('>')) {
        let original = type_name.trim();
        let parts = split_top(&original[original.len() - inner.len() - 1..original.len() - 1]);
        let [k, v] = parts.as_slice() else {
            return Err(unsupported());
        };
        let entries = Field::new(
            "key_value",
            DataType::Struct(
                vec![
                    Field::new("key", arrow_type(k)?, false),
                    Field::new("value", arrow_type(v)?, true),
                ]
                .into(),
            ),
            false,
        );
        return Ok(DataType::Map(Arc::new(entries), false));
    }
    if let Some(inner) = t.strip_prefix("array(").and_then(|s| s.strip_suffix(')')) {
        return Ok(DataType::List(Arc::new(Field::new(
            "element",
            arrow_type(inner)?,
            true,
        ))));
    }
    if let Some(args) = t
        .strip_prefix("decimal")
        .or_else(|| t.strip_prefix("numeric"))
        .or_else(|| t.strip_prefix("dec"))
    {
        return decimal_type(type_name, args);
    }
    let base = t.split('(').next().unwrap_or(&t).trim();
    Ok(match base {
        "string" | "varchar" | "char" | "text" | "character varying" | "character" => {
            DataType::Utf8
        }
        "int" | "integer" | "int4" | "int32" => DataType::Int32,
        "bigint" | "long" | "int8" | "int64" => DataType::Int64,
        "smallint" | "short" | "int2" | "int16" => DataType::Int16,
        "tinyint" | "byte" => DataType::Int8,
        "float" | "real" | "float4" | "float32" => DataType::Float32,
        "double" | "double precision" | "float8" | "float64" => DataType::Float64,
        "boolean" | "bool" => DataType::Boolean,
        "date" => DataType::Date32,
        "timestamp" | "timestamp_ltz" | "timestamptz" => {
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        }
        "timestamp_ntz" => DataType::Timestamp(TimeUnit::Microsecond, None),
        "binary" | "bytea" | "blob" | "varbinary" => DataType::Binary,
        _ => return Err(unsupported()),
    })
}

/// `s` split at the commas outside any `<...>` or `(...)`.
/// The Spark SQL name of an Arrow type hoodie stores (`int`, `string`, `decimal(10,2)`,
/// `array<int>`, `struct<a:int>`), as DESCRIBE and SHOW CREATE TABLE give it.
pub fn spark_type(dt: &DataType) -> String {
    match dt {
        DataType::Boolean => "boolean".into(),
        DataType::Int8 => "tinyint".into(),
        DataType::Int16 => "smallint".into(),
        DataType::Int32 => "int".into(),
        DataType::Int64 => "bigint".into(),
        DataType::Float32 => "float".into(),
        DataType::Float64 => "double".into(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "string".into(),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => "binary".into(),
        DataType::Date32 | DataType::Date64 => "date".into(),
        DataType::Timestamp(_, Some(_)) => "timestamp".into(),
        DataType::Timestamp(_, None) => "timestamp_ntz".into(),
        DataType::Decimal128(p, s) | DataType::Decimal256(p, s) => format!("decimal({p},{s})"),
        DataType::List(f) | DataType::LargeList(f) => {
            format!("array<{}>", spark_type(f.data_type()))
        }
        DataType::Struct(fields) => format!(
            "struct<{}>",
            fields
                .iter()
                .map(|f| format!("{}:{}", f.name(), spark_type(f.data_type())))
                .collect::<Vec<_>>()
                .join(",")
        ),
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => format!(
                "map<{},{}>",
                spark_type(kv[0].data_type()),
                spark_type(kv[1].data_type())
            ),
            other => other.to_string(),
        },
        other => other.to_string().to_ascii_lowercase(),
    }
}

fn split_top(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// `decimal(p, s)` (precision 10 and scale 0 when left out), within Spark's bounds; `args` is
/// what follows the type's name.
fn decimal_type(type_name: &str, args: &str) -> Result<DataType> {
    let unsupported = || HoodieError::UnsupportedColumnType {
        type_name: type_name.to_string(),
    };
    let args = args.trim().trim_start_matches('(').trim_end_matches(')');
    let mut it = args.split(',').map(|s| s.trim()).filter(|s| !s.is_empty());
    let p: u8 = it
        .next()
        .map(|s| s.parse().map_err(|_| unsupported()))
        .transpose()?
        .unwrap_or(10);
    let s: i8 = it
        .next()
        .map(|s| s.parse().map_err(|_| unsupported()))
        .transpose()?
        .unwrap_or(0);
    if p == 0 || p > 38 || s < 0 || s as u8 > p {
        return Err(HoodieError::InvalidDecimal {
            type_name: type_name.to_string(),
        });
    }
    Ok(DataType::Decimal128(p, s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_arrow_types_as_spark_does() {
        for name in [
            "int",
            "bigint",
            "string",
            "double",
            "boolean",
            "date",
            "decimal(10,2)",
            "array<int>",
            "struct<a:int,B:string>",
            "map<string,bigint>",
        ] {
            assert_eq!(spark_type(&arrow_type(name).unwrap()), name);
        }
        assert_eq!(spark_type(&arrow_type("long").unwrap()), "bigint");
        assert_eq!(spark_type(&arrow_type("timestamp").unwrap()), "timestamp");
    }

    #[test]
    fn maps_spark_names() {
        assert_eq!(arrow_type("STRING").unwrap(), DataType::Utf8);
        assert_eq!(arrow_type("long").unwrap(), DataType::Int64);
        assert_eq!(
            arrow_type("decimal(10, 2)").unwrap(),
            DataType::Decimal128(10, 2)
        );
        assert_eq!(arrow_type("DECIMAL").unwrap(), DataType::Decimal128(10, 0));
        assert!(matches!(
            arrow_type("array<int>").unwrap(),
            DataType::List(_)
        ));
        assert!(arrow_type("decimal(50,2)").is_err());
        assert!(arrow_type("geometry").is_err());
    }
}
