//! A field named by a dotted path (`ts`, or `nested.a2` inside a struct column), as Hudi lets
//! the ordering field be nested.

use arrow::array::{Array, ArrayRef, AsArray};
use arrow::datatypes::{DataType, Schema};

use crate::error::{FormatError, Result};

/// A top-level column and the struct children below it that name the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath {
    top: usize,
    children: Vec<String>,
    name: String,
}

impl FieldPath {
    /// Resolves `dotted` in `schema` (names matched case-insensitively, as Spark does).
    pub fn resolve(schema: &Schema, dotted: &str) -> Result<Self> {
        let missing = || FormatError::MissingColumn {
            column: dotted.to_string(),
        };
        let mut parts = dotted.split('.');
        let first = parts.next().ok_or_else(missing)?;
        let top = schema
            .fields()
            .iter()
            .position(|f| f.name().eq_ignore_ascii_case(first))
            .ok_or_else(missing)?;
        let mut data_type = schema.field(top).data_type().clone();
        let mut children = Vec::new();
        for part in parts {
            let DataType::Struct(fields) = &data_type else {
                return Err(missing());
            };
            let f = fields
                .iter()
                .find(|f| f.name().eq_ignore_ascii_case(part))
                .ok_or_else(missing)?;
            children.push(f.name().clone());
            data_type = f.data_type().clone();
        }
        Ok(Self {
            top,
            children,
            name: dotted.to_string(),
        })
    }

    /// The index of the top-level column that holds the field.
    pub fn top(&self) -> usize {
        self.top
    }

    /// Whether the field is a top-level column (no struct children).
    pub fn is_top_level(&self) -> bool {
        self.children.is_empty()
    }

    /// The field's values, given the top-level column (a NULL struct gives NULL values).
    pub fn values(&self, top_column: &ArrayRef) -> Result<ArrayRef> {
        let mut col = top_column.clone();
        for child in &self.children {
            let s = col
                .as_struct_opt()
                .ok_or_else(|| FormatError::MissingColumn {
                    column: self.name.clone(),
                })?;
            let values =
                s.column_by_name(child)
                    .cloned()
                    .ok_or_else(|| FormatError::MissingColumn {
                        column: self.name.clone(),
                    })?;
            // a NULL parent makes its children NULL
            col = match s.nulls() {
                Some(parent) => {
                    let combined = arrow::buffer::NullBuffer::union(Some(parent), values.nulls());
                    arrow::array::make_array(
                        values.to_data().into_builder().nulls(combined).build()?,
                    )
                }
                None => values,
            };
        }
        Ok(col)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{Array, Int32Array, StructArray};
    use arrow::buffer::NullBuffer;
    use arrow::datatypes::{Field, Fields};

    use super::*;

    #[test]
    fn resolves_nested_fields_and_nulls_below_null_parents() {
        let inner = Fields::from(vec![Field::new("a2", DataType::Int32, true)]);
        let schema = Schema::new(vec![
            Field::new("ts", DataType::Int32, true),
            Field::new("Nested", DataType::Struct(inner.clone()), true),
        ]);
        let top = FieldPath::resolve(&schema, "TS").unwrap();
        assert_eq!(top.top(), 0);
        let nested = FieldPath::resolve(&schema, "nested.A2").unwrap();
        assert_eq!(nested.top(), 1);
        assert!(FieldPath::resolve(&schema, "nested.zz").is_err());
        assert!(FieldPath::resolve(&schema, "ts.x").is_err());
        let col: ArrayRef = Arc::new(StructArray::new(
            inner,
            vec![Arc::new(Int32Array::from(vec![1, 2]))],
            Some(NullBuffer::from(vec![true, false])),
        ));
        let v = nested.values(&col).unwrap();
        assert_eq!(v.len(), 2);
        assert!(v.is_valid(0) && v.is_null(1));
    }
}
