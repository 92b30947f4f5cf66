//! `ALTER TABLE t ADD COLUMNS (...)` on a Hudi table, as Hudi allows it without schema
//! evolution on read: new nullable columns, after the data columns (the partition columns stay
//! last), committed as the table's new schema.

use std::sync::Arc;

use datafusion::arrow::datatypes::{Field, Schema};
use datafusion::catalog::SchemaProvider;
use datafusion::catalog::TableProvider;
use datafusion::common::TableReference;
use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use hoodie_format::schema::{avro_schema, storage_field};

use super::ddl::{hudi_table, register, warehouse};
use crate::error::{AddColumnError, HoodieError, Result};
use crate::options::write::SessionOptions;
use crate::provider::{as_hudi, HudiTableProvider};
use hoodie_format::write::WriteStatement;

/// The table schema with `added` placed before the partition columns `partitions`; an added
/// column that exists already (in any case), repeats, or is NOT NULL is an error.
fn with_columns(
    current: &Schema,
    added: &[Field],
    partitions: &[String],
    table: &str,
) -> Result<Schema> {
    let mut seen: Vec<&str> = Vec::new();
    for c in added {
        if let Some(f) = current
            .fields()
            .iter()
            .find(|f| f.name().eq_ignore_ascii_case(c.name()))
        {
            return Err(AddColumnError::Exists {
                column: c.name().clone(),
                table: table.to_string(),
                existing: f.name().clone(),
            }
            .into());
        }
        if seen.iter().any(|s| s.eq_ignore_ascii_case(c.name())) {
            return Err(AddColumnError::Twice {
                column: c.name().clone(),
            }
            .into());
        }
        if !c.is_nullable() {
            return Err(AddColumnError::NotNull {
                column: c.name().clone(),
            }
            .into());
        }
        seen.push(c.name());
    }
    let is_partition = |f: &Field| partitions.iter().any(|p| p == f.name());
    let mut fields: Vec<Field> = current
        .fields()
        .iter()
        .filter(|f| !is_partition(f))
        .map(|f| f.as_ref().clone())
        .collect();
    for c in added {
        fields.push(storage_field(c)?);
    }
    fields.extend(
        current
            .fields()
            .iter()
            .filter(|f| is_partition(f))
            .map(|f| f.as_ref().clone()),
    );
    Ok(Schema::new(fields))
}

/// `ALTER TABLE t ADD COLUMNS (...)`: checks the columns, commits the new schema (an
/// `ALTER_SCHEMA` commit that writes no file) and registers the table again with it.
pub(super) async fn add_columns(
    ctx: &SessionContext,
    name: &str,
    added: Vec<Field>,
) -> Result<DataFrame> {
    let t = hudi_table(ctx, name).await?;
    let h = as_hudi(&t).ok_or_else(|| HoodieError::NotAHudiTable {
        name: name.to_string(),
    })?;
    h.refuse_write()?;
    let table = h.table().clone();
    let schema = with_columns(
        &TableProvider::schema(h),
        &added,
        &table.config().partition_fields(),
        name,
    )?;
    let avro = avro_schema(table.config().name(), &Arc::new(schema))?.to_string();
    let session = SessionOptions::of(ctx.state_ref().read().config_options());
    let spec = h.write_spec(&session, WriteStatement::InsertInto)?;
    hoodie_format::write::commit_schema(&table, avro, &spec.concurrency).await?;
    let table = hoodie_format::HudiTable::open(table.storage().clone()).await?;
    let warehouse = warehouse(ctx)?;
    let managed = warehouse.is_managed(table.storage().location());
    let _ = ctx.deregister_table(TableReference::bare(name))?;
    warehouse.deregister_table(name)?;
    let provider = HudiTableProvider::try_new(name, table).await?;
    register(ctx, &warehouse, name, provider, managed)?;
    Ok(ctx.read_empty()?)
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::datatypes::DataType;

    use super::*;

    #[test]
    fn added_columns_go_before_the_partition_columns() {
        let current = Schema::new(vec![
            Field::new("id", DataType::Int32, true),
            Field::new("dt", DataType::Utf8, true),
        ]);
        let added = [Field::new("Note", DataType::Utf8, true)];
        let s = with_columns(&current, &added, &["dt".into()], "t").unwrap();
        let names: Vec<&str> = s.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, ["id", "Note", "dt"]);
        let again = with_columns(
            &current,
            &[Field::new("ID", DataType::Int64, true)],
            &[],
            "t",
        );
        assert!(again
            .unwrap_err()
            .to_string()
            .contains("already has a column id"));
        let not_null = with_columns(
            &current,
            &[Field::new("x", DataType::Int64, false)],
            &[],
            "t",
        );
        assert!(not_null
            .unwrap_err()
            .to_string()
            .contains("cannot be NOT NULL"));
        let twice = [
            Field::new("x", DataType::Int64, true),
            Field::new("X", DataType::Int64, true),
        ];
        assert!(with_columns(&current, &twice, &[], "t").is_err());
    }
}
