//! The change set an UPDATE, DELETE or MERGE hands the format core: rows of the table's
//! columns (the meta columns first, locating each row) plus a boolean column
//! [`DELETE_FLAG`] that marks the rows to delete, and optionally an integer column
//! [`BASE_ROW`]: the row of its file group's base file each row was read from (NULL for new
//! rows and rows only a log holds), which a merge-on-read write puts on its log blocks as
//! record positions. Both sides name them through [`ChangeSetSchema`], never by position.

use std::sync::Arc;

use arrow::array::{Array, AsArray, Int64Array, RecordBatch};
use arrow::datatypes::{Schema, SchemaRef};

use crate::error::{FormatError, Result};

/// Name of the change-set column that marks a delete.
pub const DELETE_FLAG: &str = "__hoodie_is_delete";

/// Name of the optional change-set column holding each row's row in its base file.
pub const BASE_ROW: &str = "__hoodie_base_row";

/// The schema of a change set: the table's columns, the delete flag and maybe base rows.
#[derive(Debug, Clone)]
pub struct ChangeSetSchema {
    table: SchemaRef,
    flag: usize,
    base_row: Option<usize>,
}

/// A change-set batch split by [`ChangeSetSchema::split`].
#[derive(Debug)]
pub struct ChangeRows {
    /// The rows, as the table's columns.
    pub rows: RecordBatch,
    /// Which rows delete their record.
    pub deletes: Vec<bool>,
    /// Each row's row in its base file (NULL: none known), when the change set carries them.
    pub base_rows: Option<Int64Array>,
}

impl ChangeSetSchema {
    /// The change-set schema `schema` (the table's columns plus [`DELETE_FLAG`] and maybe
    /// [`BASE_ROW`], in any place).
    pub fn of(schema: &Schema) -> Result<Self> {
        let flag = schema
            .index_of(DELETE_FLAG)
            .map_err(|_| FormatError::MissingColumn {
                column: DELETE_FLAG.into(),
            })?;
        let base_row = schema.index_of(BASE_ROW).ok();
        let fields: Vec<_> = schema
            .fields()
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != flag && Some(*i) != base_row)
            .map(|(_, f)| f.clone())
            .collect();
        Ok(Self {
            table: Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())),
            flag,
            base_row,
        })
    }

    /// The table's columns (without the flag).
    pub fn table_schema(&self) -> &SchemaRef {
        &self.table
    }

    /// A change-set batch as table rows (cast to the table schema's types), delete flags (a
    /// NULL flag is not a delete) and base rows.
    pub fn split(&self, batch: &RecordBatch) -> Result<ChangeRows> {
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
            .filter(|(i, _)| *i != self.flag && Some(*i) != self.base_row)
            .zip(self.table.fields())
            .map(|((_, c), f)| {
                if c.data_type() == f.data_type() {
                    Ok(c.clone())
                } else {
                    arrow::compute::cast(c, f.data_type())
                }
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let base_rows = match self.base_row {
            Some(i) => {
                let column =
                    arrow::compute::cast(batch.column(i), &arrow::datatypes::DataType::Int64)?;
                Some(column.as_primitive::<arrow::datatypes::Int64Type>().clone())
            }
            None => None,
        };
        Ok(ChangeRows {
            rows: RecordBatch::try_new(self.table.clone(), columns)?,
            deletes: flags,
            base_rows,
        })
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
        let ChangeRows {
            rows,
            deletes: flags,
            base_rows,
        } = change_set.split(&batch).unwrap();
        assert_eq!(flags, [true, false, false]);
        assert!(base_rows.is_none());
        assert_eq!(rows.column(1).data_type(), &DataType::Int32);
        assert_eq!(
            rows.column(1)
                .as_primitive::<arrow::datatypes::Int32Type>()
                .value(2),
            9
        );
    }

    #[test]
    fn base_rows_are_split_off_the_table_columns() {
        let schema = Arc::new(Schema::new(vec![
            Field::new(BASE_ROW, DataType::Int64, true),
            Field::new("id", DataType::Int32, false),
            Field::new(DELETE_FLAG, DataType::Boolean, true),
        ]));
        let change_set = ChangeSetSchema::of(&schema).unwrap();
        assert_eq!(change_set.table_schema().fields().len(), 1);
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(vec![Some(4), None])),
                Arc::new(Int32Array::from(vec![1, 2])),
                Arc::new(BooleanArray::from(vec![false, true])),
            ],
        )
        .unwrap();
        let split = change_set.split(&batch).unwrap();
        assert_eq!(split.rows.num_columns(), 1);
        assert_eq!(split.deletes, [false, true]);
        let base_rows = split.base_rows.unwrap();
        assert_eq!(base_rows.iter().collect::<Vec<_>>(), [Some(4), None]);
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
