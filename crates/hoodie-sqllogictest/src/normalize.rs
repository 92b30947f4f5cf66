//! Result values and column types as DataFusion's sqllogictest runner writes them, so that an
//! `.slt` file written for DataFusion passes unchanged under hoodie-slt.
//!
//! Floats and decimals are rounded to 12 decimal places with trailing zeros dropped (`10.0` is
//! `10`, `3.010` is `3.01`), NULL is `NULL`, an empty string `(empty)`, booleans `true`/`false`,
//! and non-finite floats `NaN`, `Infinity`, `-Infinity`. Column types are DataFusion's letters:
//! `B`oolean, `D`ate/time, `I`nteger, `R`eal (floats and decimals), `T`ext, time`P`stamp, and `?`
//! for the rest; they are checked strictly.

use std::str::FromStr;

use arrow::array::{
    Array, ArrayRef, AsArray, Decimal128Array, Decimal256Array, Float16Array, Float32Array,
    Float64Array, LargeStringArray, StringArray, StringViewArray,
};
use arrow::datatypes::{DataType, Decimal128Type, Decimal256Type, DecimalType, Schema};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use bigdecimal::BigDecimal;
use sqllogictest::{ColumnType, DBOutput, Normalizer};

/// Text of a NULL value in query results.
pub const NULL_TEXT: &str = "NULL";
/// Text of an empty (non-NULL) string, so that it stays visible in `.slt` files.
pub const EMPTY_TEXT: &str = "(empty)";
/// A marker in expected results that matches anything (DataFusion's `<slt:ignore>`).
const IGNORE_MARKER: &str = "<slt:ignore>";

/// The column types of DataFusion's sqllogictest files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DfColumnType {
    /// `B`: booleans.
    Boolean,
    /// `D`: dates and times of day.
    DateTime,
    /// `I`: integers.
    Integer,
    /// `R`: floats and decimals.
    Float,
    /// `T`: strings.
    Text,
    /// `P`: timestamps.
    Timestamp,
    /// `?`: anything else.
    Another,
}

impl ColumnType for DfColumnType {
    fn from_char(value: char) -> Option<Self> {
        Some(match value {
            'B' => Self::Boolean,
            'D' => Self::DateTime,
            'I' => Self::Integer,
            'R' => Self::Float,
            'T' => Self::Text,
            'P' => Self::Timestamp,
            _ => Self::Another,
        })
    }

    fn to_char(&self) -> char {
        match self {
            Self::Boolean => 'B',
            Self::DateTime => 'D',
            Self::Integer => 'I',
            Self::Float => 'R',
            Self::Text => 'T',
            Self::Timestamp => 'P',
            Self::Another => '?',
        }
    }
}

/// The column type DataFusion's runner gives an Arrow type.
pub fn column_type(data_type: &DataType) -> DfColumnType {
    match data_type {
        DataType::Boolean => DfColumnType::Boolean,
        t if t.is_integer() => DfColumnType::Integer,
        t if t.is_floating()
            || matches!(t, DataType::Decimal128(..) | DataType::Decimal256(..)) =>
        {
            DfColumnType::Float
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => DfColumnType::Text,
        DataType::Date32 | DataType::Date64 | DataType::Time32(_) | DataType::Time64(_) => {
            DfColumnType::DateTime
        }
        DataType::Timestamp(..) => DfColumnType::Timestamp,
        DataType::Dictionary(key, value)
            if key.is_integer() && matches!(**value, DataType::Utf8 | DataType::LargeUtf8) =>
        {
            DfColumnType::Text
        }
        _ => DfColumnType::Another,
    }
}

/// A query's answer as the runner compares it: its column types and its rows as text, whichever
/// engine gave it.
pub fn rows_output(
    schema: &Schema,
    batches: &[RecordBatch],
) -> Result<DBOutput<DfColumnType>, ArrowError> {
    Ok(DBOutput::Rows {
        types: schema
            .fields()
            .iter()
            .map(|f| column_type(f.data_type()))
            .collect(),
        rows: format_rows(batches)?,
    })
}

/// Rows of text for `batches`: one cell per column, normalised as DataFusion's runner does. A
/// last cell that spans several lines (an EXPLAIN plan) becomes one row per line, its leading
/// spaces written as `-` because sqllogictest ignores whitespace.
pub fn format_rows(batches: &[RecordBatch]) -> Result<Vec<Vec<String>>, ArrowError> {
    format_rows_with(batches, cell_to_string, false)
}

/// [`format_rows`] with `cell` rendering each value, and, when `numbered`, the lines of a
/// several-line last cell numbered `01)`, `02)`, ... as DataFusion's runner numbers EXPLAIN
/// lines.
pub fn format_rows_with(
    batches: &[RecordBatch],
    cell: fn(&ArrayRef, usize) -> Result<String, ArrowError>,
    numbered: bool,
) -> Result<Vec<Vec<String>>, ArrowError> {
    let mut rows = Vec::new();
    for batch in batches {
        for row in 0..batch.num_rows() {
            let cells = batch
                .columns()
                .iter()
                .map(|c| cell(c, row))
                .collect::<Result<Vec<_>, _>>()?;
            expand_row(cells, numbered, &mut rows);
        }
    }
    Ok(rows)
}

fn expand_row(mut cells: Vec<String>, numbered: bool, rows: &mut Vec<Vec<String>>) {
    let Some(last) = cells.pop() else {
        rows.push(cells);
        return;
    };
    if !last.contains('\n') {
        cells.push(last);
        rows.push(cells);
        return;
    }
    rows.push(cells);
    for (n, line) in last.split('\n').enumerate() {
        let content = line.trim_start();
        let indent = "-".repeat(line.len() - content.len());
        let number = if numbered {
            format!("{:02})", n + 1)
        } else {
            String::new()
        };
        rows.push(vec![format!("{number}{indent}{content}")]);
    }
}

/// One value as text.
pub fn cell_to_string(col: &ArrayRef, row: usize) -> Result<String, ArrowError> {
    if !col.is_valid(row) {
        return Ok(NULL_TEXT.to_string());
    }
    Ok(match col.data_type() {
        DataType::Null => NULL_TEXT.to_string(),
        DataType::Boolean => col.as_boolean().value(row).to_string(),
        DataType::Float16 => float_to_str(f64::from(
            downcast::<Float16Array>(col)?.value(row).to_f32(),
        )),
        DataType::Float32 => float32_to_str(downcast::<Float32Array>(col)?.value(row)),
        DataType::Float64 => float_to_str(downcast::<Float64Array>(col)?.value(row)),
        DataType::Decimal128(p, s) => decimal_to_str(&Decimal128Type::format_decimal(
            downcast::<Decimal128Array>(col)?.value(row),
            *p,
            *s,
        )),
        DataType::Decimal256(p, s) => decimal_to_str(&Decimal256Type::format_decimal(
            downcast::<Decimal256Array>(col)?.value(row),
            *p,
            *s,
        )),
        DataType::Utf8 => varchar_to_str(downcast::<StringArray>(col)?.value(row)),
        DataType::LargeUtf8 => varchar_to_str(downcast::<LargeStringArray>(col)?.value(row)),
        DataType::Utf8View => varchar_to_str(downcast::<StringViewArray>(col)?.value(row)),
        _ => {
            let options = FormatOptions::default().with_null(NULL_TEXT);
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

fn varchar_to_str(value: &str) -> String {
    if value.is_empty() {
        EMPTY_TEXT.to_string()
    } else {
        value.trim_end_matches('\n').to_string()
    }
}

/// A float32 goes through its own shortest text (`0.1f32` is `0.1`, not `0.100000001490116`).
fn float32_to_str(value: f32) -> String {
    if value.is_finite() {
        decimal_to_str(&value.to_string())
    } else {
        float_to_str(f64::from(value))
    }
}

fn float_to_str(value: f64) -> String {
    if value.is_nan() {
        "NaN".to_string()
    } else if value == f64::INFINITY {
        "Infinity".to_string()
    } else if value == f64::NEG_INFINITY {
        "-Infinity".to_string()
    } else {
        decimal_to_str(&value.to_string())
    }
}

/// A decimal number's text rounded to 12 decimal places, trailing zeros dropped.
fn decimal_to_str(text: &str) -> String {
    match BigDecimal::from_str(text) {
        Ok(d) => d.round(12).normalized().to_string(),
        Err(_) => text.to_string(),
    }
}

/// Normalises one expected line: trailing whitespace is not significant.
#[allow(clippy::ptr_arg)] // the signature sqllogictest's `Normalizer` has
pub fn value_normalizer(s: &String) -> String {
    s.trim_end().to_string()
}

/// Compares results as DataFusion's runner does: a row is its cells joined by one space with
/// trailing whitespace dropped; `<slt:ignore>` in the expected text matches anything.
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

/// Whether `actual` holds the pieces of `expected` between its ignore markers, in order (the
/// first piece at the start, the last at the end).
fn matches_with_ignores(expected: &str, actual: &str) -> bool {
    let pieces: Vec<&str> = expected.split(IGNORE_MARKER).collect();
    let (first, last) = (pieces[0], pieces[pieces.len() - 1]);
    if !actual.starts_with(first) || actual.len() < first.len() + last.len() {
        return false;
    }
    let mut pos = first.len();
    for piece in &pieces[1..pieces.len() - 1] {
        match actual[pos..].find(piece) {
            Some(i) => pos += i + piece.len(),
            None => return false,
        }
    }
    actual[pos..].ends_with(last)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{BooleanArray, Date32Array, Int64Array};
    use arrow::datatypes::{Field, Schema};

    use super::*;

    fn one(col: ArrayRef) -> Vec<String> {
        (0..col.len())
            .map(|i| cell_to_string(&col, i).unwrap())
            .collect()
    }

    #[test]
    fn floats_and_decimals_round_like_datafusion() {
        let f = Arc::new(Float64Array::from(vec![
            Some(10.0),
            Some(3.010),
            Some(0.1 + 0.2),
            Some(-2.5),
            Some(f64::NAN),
            Some(f64::INFINITY),
            Some(f64::NEG_INFINITY),
            None,
        ])) as ArrayRef;
        assert_eq!(
            one(f),
            [
                "10",
                "3.01",
                "0.3",
                "-2.5",
                "NaN",
                "Infinity",
                "-Infinity",
                "NULL"
            ]
        );
        let f32s = Arc::new(Float32Array::from(vec![0.1f32, 2.0])) as ArrayRef;
        assert_eq!(one(f32s), ["0.1", "2"]);
        let d = Arc::new(
            Decimal128Array::from(vec![Some(1000), Some(301), Some(-5), None])
                .with_precision_and_scale(10, 2)
                .unwrap(),
        ) as ArrayRef;
        assert_eq!(one(d), ["10", "3.01", "-0.05", "NULL"]);
    }

    #[test]
    fn strings_booleans_and_others() {
        let s = Arc::new(StringArray::from(vec![Some(""), Some("a\n"), None])) as ArrayRef;
        assert_eq!(one(s), ["(empty)", "a", "NULL"]);
        let b = Arc::new(BooleanArray::from(vec![true, false])) as ArrayRef;
        assert_eq!(one(b), ["true", "false"]);
        let d = Arc::new(Date32Array::from(vec![19000])) as ArrayRef;
        assert_eq!(one(d), ["2022-01-08"]);
    }

    #[test]
    fn column_types_are_datafusions_letters() {
        let letters: String = [
            DataType::Boolean,
            DataType::Int32,
            DataType::UInt8,
            DataType::Float64,
            DataType::Decimal128(10, 2),
            DataType::Utf8,
            DataType::Utf8View,
            DataType::Date32,
            DataType::Timestamp(arrow::datatypes::TimeUnit::Microsecond, None),
            DataType::Binary,
        ]
        .iter()
        .map(|t| column_type(t).to_char())
        .collect();
        assert_eq!(letters, "BIIRRTTDP?");
        assert_eq!(DfColumnType::from_char('B'), Some(DfColumnType::Boolean));
    }

    #[test]
    fn multi_line_cells_become_rows() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Utf8, false),
            Field::new("plan", DataType::Utf8, false),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(StringArray::from(vec!["logical_plan"])),
                Arc::new(StringArray::from(vec!["Projection: a\n  TableScan: t"])),
            ],
        )
        .unwrap();
        assert_eq!(
            format_rows(&[batch]).unwrap(),
            vec![
                vec!["logical_plan".to_string()],
                vec!["Projection: a".to_string()],
                vec!["--TableScan: t".to_string()],
            ]
        );
    }

    #[test]
    fn validator_joins_cells_and_honours_ignore_markers() {
        let actual = vec![
            vec!["1".to_string(), "a".to_string()],
            vec!["2".into(), "".into()],
        ];
        assert!(value_validator(
            value_normalizer,
            &actual,
            &["1 a".into(), "2".into()]
        ));
        assert!(!value_validator(
            value_normalizer,
            &actual,
            &["1  a".into(), "2".into()]
        ));
        assert!(value_validator(
            value_normalizer,
            &actual,
            &["1 <slt:ignore>".into(), "2".into()]
        ));
        assert!(!value_validator(
            value_normalizer,
            &actual,
            &["3 <slt:ignore>".into()]
        ));
        let n = Arc::new(Int64Array::from(vec![7])) as ArrayRef;
        assert_eq!(one(n), ["7"]);
    }
}
