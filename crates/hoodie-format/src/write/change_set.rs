//! The change set an UPDATE, DELETE or MERGE hands the format core: rows of the table's
//! columns (the meta columns first, locating each row) plus a boolean column
//! [`DELETE_FLAG`] that marks the rows to delete. Both sides name it through
//! [`ChangeSetSchema`], never by position.

use std::sync::Arc;

use arrow::array::{Array, AsArray, RecordBatch};
use arrow::datatypes::{Schema, SchemaRef};

use crate::error::{FormatError, Result};

/// Name of the change-set column that marks a delete.
pub const DELETE_FLAG: &str = "__hoodie_is_delete";

/// The schema of a change set: the table's columns and the delete flag.
#[derive(Debug, Clone)]
pub struct ChangeSetSchema {
    table: SchemaRef,
    flag: usize,
}

impl ChangeSetSchema {
    /// The change-set schema `schema` (the table's columns plus [`DELETE_FLAG`], in any place).
    pub fn of(schema: &Schema) -> Result<Self> {
        let flag = schema
            .index_of(DELETE_FLAG)
            .map_err(|_| FormatError::MissingColumn {
                column: DELETE_FLAG.into(),
            })?;
        let fields: Vec<_> = schema
            .fields()
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != flag)
            .map(|(_, f)| f.clone())
            .collect();
        Ok(Self {
            table: Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())),
            flag,
        })
    }

    /// The table's columns (without the flag).
    pub fn table_schema(&self) -> &SchemaRef {
        &self.table
    }

    /// A change-set batch as table rows (cast to the table schema's types) and delete flags
    /// (a NULL flag is not a delete).
    pub fn split(&self, batch: &RecordBatch) -> Result<(RecordBatch, Vec<bool>)> {
        let flag =
            batch
                .column(self.flag)
                .as_boolean_opt()
                .ok_or_else(|| FormatError::MissingColumn {
                    column: format!("{DELETE_FLAG} (boolean)"),
                })?;
        let flags = (0..flag.len())
            .map(|i| flag.is_valid(i) && flag.value(i))
            .collect();
        let columns = batch
            .columns()
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != self.flag)
            .zip(self.table.fields())
            .map(|((_, c), f)| {
                if c.data_type() == f.data_type() {
                    Ok(c.clone())
                } else {
                    arrow::compute::cast(c, f.data_type())
                }
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        Ok((RecordBatch::try_new(self.table.clone(), columns)?, flags))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{BooleanArray, Int32Array, Int64Array};
    use arrow::datatypes::{DataType, Field};

    #[test]
    fn the_flag_is_found_by_name_and_the_rows_cast_to_the_table() {
        let schema = Schema::new(vec![
            Field::new("id", DataType::Int32, false),
            Field::new(DELETE_FLAG, DataType::Boolean, true),
            Field::new("v", DataType::Int32, true),
        ]);
        let change_set = ChangeSetSchema::of(&schema).unwrap();
        let names: Vec<_> = change_set
            .table_schema()
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect();
        assert_eq!(names, ["id", "v"]);
        let batch = RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int32, false),
                Field::new(DELETE_FLAG, DataType::Boolean, true),
                Field::new("v", DataType::Int64, true),
            ])),
            vec![
                Arc::new(Int32Array::from(vec![1, 2, 3])),
                Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])),
                Arc::new(Int64Array::from(vec![Some(7), None, Some(9)])),
            ],
        )
        .unwrap();
        let (rows, flags) = change_set.split(&batch).unwrap();
        assert_eq!(flags, [true, false, false]);
        assert_eq!(rows.column(1).data_type(), &DataType::Int32);
        assert_eq!(
            rows.column(1)
                .as_primitive::<arrow::datatypes::Int32Type>()
                .value(2),
            9
        );
    }

    #[test]
    fn a_schema_without_the_flag_is_refused() {
        let schema = Schema::new(vec![Field::new("id", DataType::Int32, false)]);
        assert!(matches!(
            ChangeSetSchema::of(&schema),
            Err(FormatError::MissingColumn { .. })
        ));
    }
}
