//! Unit tests of the provider's own logic on a new, empty table: the partition prefix of
//! static values, partition values from a path, the write spec a session allows, the refusal
//! of writes to views, and the nullability a change set is written with.

use std::collections::BTreeMap;
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::ScalarValue;
use datafusion::datasource::TableProvider;
use hoodie_format::new_table::NewTable;
use hoodie_format::storage::TableStorage;
use hoodie_format::table_config::TableType;
use hoodie_format::write::WriteStatement;
use hoodie_format::{HudiTable, TableConfig};

use super::write::change_set_schema;
use super::HudiTableProvider;
use crate::error::{HoodieError, PartitionError};
use crate::options::write::SessionOptions;
use crate::scan::read_kind::ReadKind;

/// A new merge-on-read table `Trips` keyed by `id`, partitioned by `Region` then `day`.
async fn provider(dir: &tempfile::TempDir) -> HudiTableProvider {
    let columns = Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("Fare", DataType::Float64, true),
        Field::new("Region", DataType::Utf8, true),
        Field::new("day", DataType::Int32, true),
    ]);
    let mut new = NewTable::new("Trips", columns);
    new.table_type = TableType::MergeOnRead;
    new.record_keys = vec!["id".into()];
    new.partition_fields = vec!["Region".into(), "day".into()];
    let config = TableConfig::from_properties(new.properties().unwrap()).unwrap();
    let storage = TableStorage::local(dir.path()).unwrap();
    let table = HudiTable::create(storage, config).await.unwrap();
    HudiTableProvider::try_new("Trips", table).await.unwrap()
}

fn session(options: &[(&str, &str)]) -> SessionOptions {
    let values: BTreeMap<String, String> = options
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    SessionOptions::from_values(values)
}

#[tokio::test]
async fn static_partition_values_name_a_prefix_of_the_partition_path() {
    let dir = tempfile::tempdir().unwrap();
    let p = provider(&dir).await;
    assert_eq!(p.static_partition_prefix(&[]).unwrap(), None);
    // columns are matched case-insensitively, the path spells them as the table declares
    let one = [("region".to_string(), "eu".to_string())];
    assert_eq!(
        p.static_partition_prefix(&one).unwrap(),
        Some(("Region=eu".to_string(), false))
    );
    let both = [
        ("DAY".to_string(), "3".to_string()),
        ("region".to_string(), "eu".to_string()),
    ];
    assert_eq!(
        p.static_partition_prefix(&both).unwrap(),
        Some(("Region=eu/day=3".to_string(), true))
    );
    // a static value after a dynamic column names no prefix
    let late = [("day".to_string(), "3".to_string())];
    let e = p.static_partition_prefix(&late).unwrap_err();
    assert!(matches!(e, HoodieError::Unsupported { .. }), "{e}");
}

#[tokio::test]
async fn a_partition_path_gives_its_values_in_the_columns_types() {
    let dir = tempfile::tempdir().unwrap();
    let p = provider(&dir).await;
    let schema = p.schema();
    let fields = [
        Arc::new(schema.field_with_name("Region").unwrap().clone()),
        Arc::new(schema.field_with_name("day").unwrap().clone()),
    ];
    let values = p.partition_values("Region=eu/day=3", &fields).unwrap();
    assert_eq!(
        values,
        vec![
            ScalarValue::Utf8(Some("eu".into())),
            ScalarValue::Int32(Some(3))
        ]
    );
    let e = p.partition_values("", &fields).unwrap_err();
    assert!(
        matches!(
            e,
            HoodieError::Partition(PartitionError::PathUnreadable { .. })
        ),
        "{e}"
    );
    // the files keep their partition columns: none is left out
    assert!(p.dropped_partition_fields().unwrap().is_empty());
}

#[tokio::test]
async fn a_change_set_is_refused_while_the_session_reads_another_query() {
    let dir = tempfile::tempdir().unwrap();
    let p = provider(&dir).await;
    let change = || WriteStatement::ChangeSet {
        delete: true,
        changed_columns: None,
        partial_merge: false,
    };
    assert!(p.write_spec(&session(&[]), change()).is_ok());
    let incremental = session(&[
        ("hoodie.datasource.query.type", "incremental"),
        ("hoodie.datasource.read.begin.instanttime", "000"),
    ]);
    let e = p.write_spec(&incremental, change()).unwrap_err();
    assert!(
        matches!(&e, HoodieError::ChangeUnderOtherQuery { table, .. } if table == "Trips"),
        "{e}"
    );
    assert!(
        e.to_string().contains("RESET hoodie.datasource.query.type"),
        "{e}"
    );
    // an INSERT does not read the table: the read options do not matter to it
    assert!(p
        .write_spec(&incremental, WriteStatement::InsertInto)
        .is_ok());
}

#[tokio::test]
async fn views_refuse_writes_naming_the_query_they_run() {
    let dir = tempfile::tempdir().unwrap();
    let p = provider(&dir).await;
    assert!(p.refuse_write().is_ok() && !p.is_read_only());
    let ro = p.view(true);
    assert!(ro.is_read_only() && ro.is_read_optimized());
    let e = ro.refuse_write().unwrap_err();
    assert!(
        matches!(&e, HoodieError::ReadOnlyView { name, .. } if name == "Trips"),
        "{e}"
    );
    let e = e.to_string();
    assert!(
        e.contains("Trips is a read-only") && e.contains("write to the table itself"),
        "{e}"
    );
    let rt = p.read_view(ReadKind::Snapshot);
    assert!(rt.is_read_only() && !rt.is_read_optimized());
}

#[test]
fn a_change_set_is_written_as_nullable_as_the_table_declares() {
    let table = Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("qty", DataType::Int32, true),
    ]);
    // a `SET qty = 5` column is non-null in the plan; the table's column holds NULLs
    let plan = Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("qty", DataType::Int32, false),
        Field::new("_flag", DataType::Boolean, false),
    ]);
    let written = change_set_schema(&Arc::new(plan), &Arc::new(table));
    let nullable: Vec<bool> = written.fields().iter().map(|f| f.is_nullable()).collect();
    assert_eq!(nullable, vec![false, true, true]);
}

/// The base-rows view adds `__hoodie_base_row` (the Parquet row number) as its last column and
/// refuses a time-travel read: its rows would count rows of files the write does not see.
#[tokio::test]
async fn base_rows_are_the_last_column_and_only_of_the_latest_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let p = provider(&dir).await;
    let with = p.with_base_rows();
    let schema = with.schema();
    let last = schema.fields().last().unwrap();
    assert_eq!(last.name(), hoodie_format::write::BASE_ROW);
    assert_eq!(last.data_type(), &DataType::Int64);
    assert_eq!(schema.fields().len(), p.schema().fields().len() + 1);
    let ctx = datafusion::prelude::SessionContext::new();
    let state = ctx.state();
    let all = (0..schema.fields().len()).collect::<Vec<_>>();
    let plan = with.scan(&state, Some(&all), &[], None).await.unwrap();
    assert_eq!(plan.schema().fields().last().unwrap().name(), last.name());
    let old = p
        .read_view(ReadKind::AsOf("20200101000000000".into()))
        .with_base_rows();
    let err = old.scan(&state, Some(&all), &[], None).await.unwrap_err();
    assert!(
        err.to_string().contains("time-travel or incremental"),
        "{err}"
    );
}
