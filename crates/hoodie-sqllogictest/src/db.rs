//! The sqllogictest [`AsyncDB`] over a [`HoodieContext`].

use std::sync::Arc;

use arrow::array::Array;
use arrow::datatypes::DataType;
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use async_trait::async_trait;
use hoodie_datafusion::{HoodieContext, HoodieError, StatementOutput};
use sqllogictest::{AsyncDB, DBOutput, DefaultColumnType};

/// Text of a NULL value in query results.
pub const NULL_TEXT: &str = "NULL";
/// Text of an empty (non-NULL) value, so that it stays visible in `.slt` files.
pub const EMPTY_TEXT: &str = "(empty)";

/// Why a record could not be run.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The statement failed; the message is hoodie's, unchanged, for `statement error` regexes.
    #[error(transparent)]
    Hoodie(#[from] HoodieError),
    /// A result value could not be rendered as text.
    #[error("cannot format query result: {0}")]
    Format(#[from] ArrowError),
}

/// A sqllogictest connection: runs each record's SQL through a shared [`HoodieContext`].
#[derive(Clone)]
pub struct HoodieDb {
    ctx: Arc<HoodieContext>,
}

impl HoodieDb {
    /// A connection over `ctx`; clones share the session.
    pub fn new(ctx: Arc<HoodieContext>) -> Self {
        Self { ctx }
    }
}

#[async_trait]
impl AsyncDB for HoodieDb {
    type Error = DbError;
    type ColumnType = DefaultColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<DefaultColumnType>, DbError> {
        match self.ctx.run(sql).await? {
            StatementOutput::Count(n) => Ok(DBOutput::StatementComplete(n)),
            StatementOutput::Changed(c) => Ok(DBOutput::StatementComplete(c.affected())),
            StatementOutput::Done => Ok(DBOutput::StatementComplete(0)),
            StatementOutput::Rows { schema, batches } => Ok(DBOutput::Rows {
                types: schema
                    .fields()
                    .iter()
                    .map(|f| column_type(f.data_type()))
                    .collect(),
                rows: format_rows(&batches)?,
            }),
        }
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        "hoodie"
    }
}

/// The sqllogictest column type of an Arrow type: integers are `I`, floats and decimals `R`,
/// everything else `T`.
pub fn column_type(data_type: &DataType) -> DefaultColumnType {
    match data_type {
        DataType::Dictionary(_, value) => column_type(value),
        t if t.is_integer() => DefaultColumnType::Integer,
        t if t.is_floating() || t.is_decimal() => DefaultColumnType::FloatingPoint,
        _ => DefaultColumnType::Text,
    }
}

/// Renders result rows as text the way DataFusion's sqllogictest does: NULL as `NULL`,
/// empty values as `(empty)`, everything else with Arrow's display formatting.
pub fn format_rows(batches: &[RecordBatch]) -> Result<Vec<Vec<String>>, ArrowError> {
    let options = FormatOptions::default()
        .with_null(NULL_TEXT)
        .with_display_error(true);
    let mut rows = Vec::new();
    for batch in batches {
        let formatters = batch
            .columns()
            .iter()
            .map(|column| ArrayFormatter::try_new(column.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()?;
        for row in 0..batch.num_rows() {
            let mut values = Vec::with_capacity(formatters.len());
            for (formatter, column) in formatters.iter().zip(batch.columns()) {
                let text = formatter.value(row).try_to_string()?;
                if text.is_empty() && !column.is_null(row) {
                    values.push(EMPTY_TEXT.to_string());
                } else {
                    values.push(text);
                }
            }
            rows.push(values);
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, BooleanArray, Float64Array, Int32Array, StringArray};
    use arrow::datatypes::{Field, Schema};

    #[test]
    fn formats_values_like_datafusion_slt() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("i", DataType::Int32, true),
            Field::new("f", DataType::Float64, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("b", DataType::Boolean, true),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int32Array::from(vec![Some(1), None])) as ArrayRef,
                Arc::new(Float64Array::from(vec![Some(1.5), None])),
                Arc::new(StringArray::from(vec![Some(""), None])),
                Arc::new(BooleanArray::from(vec![Some(true), None])),
            ],
        )
        .unwrap();
        let rows = format_rows(&[batch]).unwrap();
        assert_eq!(
            rows,
            vec![
                vec!["1", "1.5", "(empty)", "true"],
                vec!["NULL", "NULL", "NULL", "NULL"],
            ]
        );
    }

    #[test]
    fn maps_column_types() {
        assert_eq!(column_type(&DataType::Int64), DefaultColumnType::Integer);
        assert_eq!(column_type(&DataType::UInt8), DefaultColumnType::Integer);
        assert_eq!(
            column_type(&DataType::Float32),
            DefaultColumnType::FloatingPoint
        );
        assert_eq!(
            column_type(&DataType::Decimal128(10, 2)),
            DefaultColumnType::FloatingPoint
        );
        assert_eq!(column_type(&DataType::Utf8), DefaultColumnType::Text);
        assert_eq!(column_type(&DataType::Boolean), DefaultColumnType::Text);
        assert_eq!(
            column_type(&DataType::Dictionary(
                Box::new(DataType::Int32),
                Box::new(DataType::Int16)
            )),
            DefaultColumnType::Integer
        );
    }
}
