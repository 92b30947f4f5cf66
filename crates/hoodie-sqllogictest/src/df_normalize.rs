//! Results written exactly as DataFusion 55.2.0's own sqllogictest runner writes them
//! (`datafusion-sqllogictest`'s `normalize.rs` and `conversion.rs`), for `hoodie-slt
//! --datafusion`, where DataFusion's `.slt` files run unchanged.
//!
//! Where this differs from hoodie's own mode ([`crate::normalize`]):
//! - the lines of a multi-line last cell (an EXPLAIN plan) are numbered `01)`, `02)`, ...;
//! - a decimal keeps every digit of its scale (trailing zeros dropped), where hoodie's mode
//!   rounds it to 12 places; Decimal32 and Decimal64 are `R` columns too;
//! - a Float16 goes through its own shortest text; numbers never take an exponent;
//! - a NUL character in a string is written `\0`;
//! - a dictionary's value is written as a value of the dictionary's value type;
//! - other types use DataFusion's default `datafusion.format` options (dates `%Y-%m-%d`,
//!   timestamps `%Y-%m-%dT%H:%M:%S%.f`, ...);
//! - `<slt:ignore>` markers match as DataFusion's validator matches them: the pieces between
//!   them in order, the first at the start, the last anywhere after the others.

use std::str::FromStr;
use std::sync::LazyLock;

use arrow::array::{
    Array, ArrayRef, AsArray, Decimal128Array, Decimal256Array, Decimal32Array, Decimal64Array,
    Float16Array, Float32Array, Float64Array, LargeStringArray, StringArray, StringViewArray,
};
use arrow::datatypes::{
    DataType, Decimal128Type, Decimal256Type, Decimal32Type, Decimal64Type, DecimalType, Fields,
};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use arrow::util::display::ArrayFormatter;
use bigdecimal::BigDecimal;
use sqllogictest::Normalizer;

use crate::normalize::{DfColumnType, EMPTY_TEXT, NULL_TEXT};

/// A marker in expected results that matches anything.
const IGNORE_MARKER: &str = "<slt:ignore>";

/// Decimal places a float is rounded to.
const FLOAT_DIGITS: i64 = 12;

/// DataFusion's default `datafusion.format` options with NULL written `NULL`, as its runner
/// formats the types it has no rule of its own for.
static FORMAT_OPTIONS: LazyLock<datafusion::config::FormatOptions> =
    LazyLock::new(|| datafusion::config::FormatOptions {
        null: NULL_TEXT.to_string(),
        ..Default::default()
    });

/// The column types of a result, as DataFusion's runner gives them.
pub fn column_types(fields: &Fields) -> Vec<DfColumnType> {
    fields.iter().map(|f| column_type(f.data_type())).collect()
}

/// The column type DataFusion's runner gives an Arrow type.
pub fn column_type(data_type: &DataType) -> DfColumnType {
    match data_type {
        DataType::Boolean => DfColumnType::Boolean,
        t if t.is_integer() => DfColumnType::Integer,
        DataType::Float16
        | DataType::Float32
        | DataType::Float64
        | DataType::Decimal32(..)
        | DataType::Decimal64(..)
        | DataType::Decimal128(..)
        | DataType::Decimal256(..) => DfColumnType::Float,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => DfColumnType::Text,
        DataType::Date32 | DataType::Date64 | DataType::Time32(_) | DataType::Time64(_) => {
            DfColumnType::DateTime
        }
        DataType::Timestamp(..) => DfColumnType::Timestamp,
        DataType::Dictionary(key, value)
            if key.is_integer()
                && matches!(
                    **value,
                    DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
                ) =>
        {
            DfColumnType::Text
        }
        _ => DfColumnType::Another,
    }
}

/// Rows of text for `batches`: one cell per column; a last cell of several lines (an EXPLAIN
/// plan) becomes one row per line, numbered `01)`, `02)`, ..., its leading spaces written as
/// `-` (sqllogictest ignores whitespace).
pub fn format_rows(batches: &[RecordBatch]) -> Result<Vec<Vec<String>>, ArrowError> {
    crate::normalize::format_rows_with(batches, cell_to_string, true)
}

/// One value as text.
pub fn cell_to_string(col: &ArrayRef, row: usize) -> Result<String, ArrowError> {
    if col.is_null(row) {
        return Ok(NULL_TEXT.to_string());
    }
    Ok(match col.data_type() {
        DataType::Null => NULL_TEXT.to_string(),
        DataType::Boolean => col.as_boolean().value(row).to_string(),
        DataType::Float16 => {
            let v = downcast::<Float16Array>(col)?.value(row);
            if v.is_finite() {
                number_to_str(&v.to_string(), FLOAT_DIGITS)
            } else {
                non_finite(v.is_nan(), v.is_sign_negative())
            }
        }
        DataType::Float32 => {
            let v = downcast::<Float32Array>(col)?.value(row);
            if v.is_finite() {
                number_to_str(&v.to_string(), FLOAT_DIGITS)
            } else {
                non_finite(v.is_nan(), v.is_sign_negative())
            }
        }
        DataType::Float64 => {
            let v = downcast::<Float64Array>(col)?.value(row);
            if v.is_finite() {
                number_to_str(&v.to_string(), FLOAT_DIGITS)
            } else {
                non_finite(v.is_nan(), v.is_sign_negative())
            }
        }
        DataType::Decimal32(_, s) => {
            decimal_to_str::<Decimal32Type>(downcast::<Decimal32Array>(col)?.value(row), *s)
        }
        DataType::Decimal64(_, s) => {
            decimal_to_str::<Decimal64Type>(downcast::<Decimal64Array>(col)?.value(row), *s)
        }
        DataType::Decimal128(_, s) => {
            decimal_to_str::<Decimal128Type>(downcast::<Decimal128Array>(col)?.value(row), *s)
        }
        DataType::Decimal256(_, s) => {
            decimal_to_str::<Decimal256Type>(downcast::<Decimal256Array>(col)?.value(row), *s)
        }
        DataType::Utf8 => varchar_to_str(downcast::<StringArray>(col)?.value(row)),
        DataType::LargeUtf8 => varchar_to_str(downcast::<LargeStringArray>(col)?.value(row)),
        DataType::Utf8View => varchar_to_str(downcast::<StringViewArray>(col)?.value(row)),
        DataType::Dictionary(..) => {
            let dict = col.as_any_dictionary();
            let key = dict.normalized_keys()[row];
            cell_to_string(dict.values(), key)?
        }
        _ => {
            let options = arrow::util::display::FormatOptions::try_from(&*FORMAT_OPTIONS)
                .map_err(|e| ArrowError::InvalidArgumentError(e.to_string()))?;
            ArrayFormatter::try_new(col.as_ref(), &options)?
                .value(row)
                .try_to_string()?
        }
    })
}

fn downcast<T: 'static>(col: &ArrayRef) -> Result<&T, ArrowError> {
    col.as_any()
        .downcast_ref::<T>()
        .ok_or_else(|| ArrowError::CastError(format!("unexpected array for {}", col.data_type())))
}

/// NaN (whatever its sign, which differs between platforms), `Infinity` or `-Infinity`.
fn non_finite(nan: bool, negative: bool) -> String {
    match (nan, negative) {
        (true, _) => "NaN",
        (false, false) => "Infinity",
        (false, true) => "-Infinity",
    }
    .to_string()
}

/// A string; the empty one is `(empty)`, trailing newlines are dropped and NUL is `\0`.
fn varchar_to_str(value: &str) -> String {
    if value.is_empty() {
        EMPTY_TEXT.to_string()
    } else {
        value.trim_end_matches('\n').replace('\u{0}', "\\0")
    }
}

/// A decimal value of scale `scale`: every digit of the scale kept, trailing zeros dropped.
fn decimal_to_str<T: DecimalType>(value: T::Native, scale: i8) -> String {
    number_to_str(&T::format_decimal(value, u8::MAX, scale), i64::from(scale))
}

/// A number's text rounded to `digits` decimal places, trailing zeros dropped, written out in
/// full (never with an exponent).
fn number_to_str(text: &str, digits: i64) -> String {
    match BigDecimal::from_str(text) {
        Ok(d) => d.round(digits).normalized().to_plain_string(),
        Err(_) => text.to_string(),
    }
}

/// Compares results as DataFusion's runner does: a row is its cells joined by one space,
/// trailing whitespace dropped; with `<slt:ignore>` in the expected lines, the whole expected
/// text's pieces between the markers must appear in the actual text in order, the first one at
/// its start.
pub fn value_validator(
    normalizer: Normalizer,
    actual: &[Vec<String>],
    expected: &[String],
) -> bool {
    let expected: Vec<String> = expected.iter().map(normalizer).collect();
    let actual: Vec<String> = actual
        .iter()
        .map(|cells| cells.join(" ").trim_end().to_string())
        .collect();
    if expected.iter().any(|l| l.contains(IGNORE_MARKER)) {
        return matches_with_ignores(&expected.join("\n"), &actual.join("\n"));
    }
    actual == expected
}

fn matches_with_ignores(expected: &str, actual: &str) -> bool {
    let mut pos = 0;
    for (i, piece) in expected.split(IGNORE_MARKER).enumerate() {
        if piece.is_empty() {
            continue;
        }
        match actual[pos..].find(piece) {
            Some(at) if i > 0 || at == 0 => pos += at + piece.len(),
            _ => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{
        BooleanArray, Date32Array, DictionaryArray, Int32Array, Int64Array,
        TimestampMicrosecondArray,
    };
    use arrow::datatypes::{Field, Int32Type, Schema, TimeUnit};

    use super::*;
    use crate::normalize::value_normalizer;
    use sqllogictest::ColumnType;

    fn texts(col: ArrayRef) -> Vec<String> {
        (0..col.len())
            .map(|i| cell_to_string(&col, i).unwrap())
            .collect()
    }

    #[test]
    fn decimals_keep_their_scale() {
        let d = Arc::new(
            Decimal128Array::from(vec![
                Some(1_000),
                Some(301),
                Some(-5),
                Some(123_456_789_012_345_678),
                None,
            ])
            .with_precision_and_scale(38, 16)
            .unwrap(),
        ) as ArrayRef;
        // 12.3456789012345678 keeps all 16 places, where hoodie's own mode rounds to 12
        assert_eq!(
            texts(d),
            [
                "0.0000000000001",
                "0.0000000000000301",
                "-0.0000000000000005",
                "12.3456789012345678",
                "NULL"
            ]
        );
        let d = Arc::new(
            Decimal128Array::from(vec![1000, 12345])
                .with_precision_and_scale(10, 2)
                .unwrap(),
        ) as ArrayRef;
        assert_eq!(texts(d), ["10", "123.45"]);
        let d = Arc::new(
            Decimal32Array::from(vec![12345])
                .with_precision_and_scale(9, 2)
                .unwrap(),
        ) as ArrayRef;
        assert_eq!(texts(d), ["123.45"]);
        let d = Arc::new(
            Decimal64Array::from(vec![-12300])
                .with_precision_and_scale(18, 3)
                .unwrap(),
        ) as ArrayRef;
        assert_eq!(texts(d), ["-12.3"]);
        // a negative scale: the number written out in full
        let d = Arc::new(
            Decimal128Array::from(vec![12])
                .with_precision_and_scale(10, -3)
                .unwrap(),
        ) as ArrayRef;
        assert_eq!(texts(d), ["12000"]);
    }

    #[test]
    fn floats_round_to_twelve_places_without_exponents() {
        let f = Arc::new(Float64Array::from(vec![
            Some(10.0),
            Some(0.1 + 0.2),
            Some(1e20),
            Some(1.0000000000011),
            Some(-0.0),
            Some(f64::NAN),
            Some(-f64::NAN),
            Some(f64::INFINITY),
            Some(f64::NEG_INFINITY),
            None,
        ])) as ArrayRef;
        assert_eq!(
            texts(f),
            [
                "10",
                "0.3",
                "100000000000000000000",
                "1.000000000001",
                "0",
                "NaN",
                "NaN",
                "Infinity",
                "-Infinity",
                "NULL"
            ]
        );
        let f = Arc::new(Float32Array::from(vec![0.1f32, 2.5, f32::NEG_INFINITY])) as ArrayRef;
        assert_eq!(texts(f), ["0.1", "2.5", "-Infinity"]);
        // a Float16 0.1 is 0.0999755859375; its own text is the float32's
        let f32s = Arc::new(Float32Array::from(vec![0.1f32, 1.5])) as ArrayRef;
        let h = arrow::compute::cast(&f32s, &DataType::Float16).unwrap();
        assert_eq!(texts(h), ["0.099975586", "1.5"]);
    }

    #[test]
    fn strings_booleans_dictionaries_and_others() {
        let s = Arc::new(StringArray::from(vec![
            Some(""),
            Some("a\n\n"),
            Some("x\u{0}y"),
            None,
        ])) as ArrayRef;
        assert_eq!(texts(s), ["(empty)", "a", "x\\0y", "NULL"]);
        let v = Arc::new(StringViewArray::from(vec![Some(""), Some("b")])) as ArrayRef;
        assert_eq!(texts(v), ["(empty)", "b"]);
        let b = Arc::new(BooleanArray::from(vec![Some(true), Some(false), None])) as ArrayRef;
        assert_eq!(texts(b), ["true", "false", "NULL"]);
        let d = Arc::new(Date32Array::from(vec![19000])) as ArrayRef;
        assert_eq!(texts(d), ["2022-01-08"]);
        let t = Arc::new(TimestampMicrosecondArray::from(vec![1_500_000, 0])) as ArrayRef;
        assert_eq!(texts(t), ["1970-01-01T00:00:01.500", "1970-01-01T00:00:00"]);
        // a dictionary's values written as their own type: the float rounded, the null NULL
        let values = Arc::new(Float64Array::from(vec![Some(0.1 + 0.2), None])) as ArrayRef;
        let keys = Int32Array::from(vec![Some(0), Some(1), None]);
        let dict =
            Arc::new(DictionaryArray::<Int32Type>::try_new(keys, values).unwrap()) as ArrayRef;
        assert_eq!(texts(dict), ["0.3", "NULL", "NULL"]);
        let n = Arc::new(Int64Array::from(vec![-7])) as ArrayRef;
        assert_eq!(texts(n), ["-7"]);
    }

    #[test]
    fn column_types_are_datafusions_letters() {
        let letters: String = [
            DataType::Boolean,
            DataType::Int8,
            DataType::UInt64,
            DataType::Float16,
            DataType::Decimal32(9, 2),
            DataType::Decimal64(18, 2),
            DataType::Decimal128(10, 2),
            DataType::Utf8View,
            DataType::Date32,
            DataType::Time64(TimeUnit::Nanosecond),
            DataType::Timestamp(TimeUnit::Microsecond, None),
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8View)),
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Int64)),
            DataType::Binary,
        ]
        .iter()
        .map(|t| column_type(t).to_char())
        .collect();
        assert_eq!(letters, "BIIRRRRTDDPT??");
    }

    #[test]
    fn explain_lines_are_numbered() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("plan_type", DataType::Utf8, false),
            Field::new("plan", DataType::Utf8, false),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(StringArray::from(vec!["logical_plan", "physical_plan"])),
                Arc::new(StringArray::from(vec![
                    "Projection: a\n  TableScan: t",
                    "ProjectionExec",
                ])),
            ],
        )
        .unwrap();
        assert_eq!(
            format_rows(&[batch]).unwrap(),
            vec![
                vec!["logical_plan".to_string()],
                vec!["01)Projection: a".to_string()],
                vec!["02)--TableScan: t".to_string()],
                vec!["physical_plan".to_string(), "ProjectionExec".to_string()],
            ]
        );
    }

    #[test]
    fn validator_matches_as_datafusions() {
        let actual = vec![
            vec!["1".to_string(), "a".to_string()],
            vec!["2".into(), "".into()],
        ];
        let check = |expected: &[&str]| {
            let expected: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
            value_validator(value_normalizer, &actual, &expected)
        };
        assert!(check(&["1 a", "2"]));
        assert!(check(&["1 a  ", "2"]));
        assert!(!check(&["1  a", "2"]));
        assert!(check(&["1 <slt:ignore>", "2"]));
        assert!(check(&["<slt:ignore> a"]));
        // the last piece need not end the text, the first must start it
        assert!(check(&["1 <slt:ignore>"]));
        assert!(check(&["<slt:ignore>a"]));
        assert!(!check(&["a <slt:ignore>"]));
        assert!(!check(&["3 <slt:ignore>"]));
    }
}
