//! `DESCRIBE [EXTENDED] t`, `SHOW TBLPROPERTIES t [('key')]` and `SHOW CREATE TABLE t` on a
//! Hudi table, with the columns Spark gives them: what a Spark-Hudi user reads to learn a
//! table's columns, partitioning and settings.

use std::sync::Arc;

use datafusion::arrow::array::{RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::catalog::TableProvider;
use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use hoodie_format::config;
use hoodie_format::schema::is_meta_column;

use super::ddl::{hudi_table, warehouse};
use crate::error::Result;
use crate::frontend::table_info::TableInfo;
use crate::frontend::types::spark_type;
use crate::provider::{as_hudi, HudiTableProvider};

/// Answers `info` about the Hudi table `name`.
pub(super) async fn table_info(
    ctx: &SessionContext,
    name: &str,
    info: TableInfo,
) -> Result<DataFrame> {
    let provider = hudi_table(ctx, name).await?;
    let hudi = as_hudi(&provider).expect("a Hudi table");
    let (columns, rows): (&[&str], _) = match info {
        TableInfo::Describe { extended } => (
            &["col_name", "data_type", "comment"],
            describe(ctx, name, hudi, extended)?,
        ),
        TableInfo::Properties { key } => {
            (&["key", "value"], properties(name, hudi, key.as_deref()))
        }
        TableInfo::CreateStatement => (
            &["createtab_stmt"],
            vec![vec![Some(create_statement(name, hudi))]],
        ),
    };
    frame(ctx, columns, rows)
}

/// The rows as a frame of text columns: `None` is NULL (a column's missing comment in DESCRIBE,
/// as Spark shows it; Spark's other empty cells are empty strings).
fn frame(
    ctx: &SessionContext,
    columns: &[&str],
    rows: Vec<Vec<Option<String>>>,
) -> Result<DataFrame> {
    let schema = Schema::new(
        columns
            .iter()
            .map(|c| Field::new(*c, DataType::Utf8, true))
            .collect::<Vec<_>>(),
    );
    let arrays = (0..columns.len())
        .map(|i| {
            Arc::new(StringArray::from(
                rows.iter()
                    .map(|r| r.get(i).cloned().flatten())
                    .collect::<Vec<_>>(),
            )) as _
        })
        .collect();
    Ok(ctx.read_batch(RecordBatch::try_new(Arc::new(schema), arrays)?)?)
}

/// Spark's DESCRIBE: every column (meta columns first; its comment NULL), then the partition
/// columns, then, EXTENDED, the table's details (their empty cells empty strings, as Spark's).
fn describe(
    ctx: &SessionContext,
    name: &str,
    hudi: &HudiTableProvider,
    extended: bool,
) -> Result<Vec<Vec<Option<String>>>> {
    let schema = TableProvider::schema(hudi);
    let row = |a: &str, b: &str| {
        vec![
            Some(a.to_string()),
            Some(b.to_string()),
            Some(String::new()),
        ]
    };
    let column = |a: &str, b: &str| vec![Some(a.to_string()), Some(b.to_string()), None];
    let mut rows: Vec<Vec<Option<String>>> = schema
        .fields()
        .iter()
        .map(|f| column(f.name(), &spark_type(f.data_type())))
        .collect();
    let cfg = hudi.table().config();
    let parts = cfg.partition_fields();
    if !parts.is_empty() {
        rows.push(row("# Partition Information", ""));
        rows.push(vec![
            Some("# col_name".into()),
            Some("data_type".into()),
            Some("comment".into()),
        ]);
        for p in &parts {
            if let Some(f) = schema
                .fields()
                .iter()
                .find(|f| f.name().eq_ignore_ascii_case(p))
            {
                rows.push(column(f.name(), &spark_type(f.data_type())));
            }
        }
    }
    if extended {
        let location = hudi.table().storage().location().to_string();
        let managed = warehouse(ctx).is_ok_and(|w| w.is_managed(&location));
        let props: Vec<String> = cfg
            .properties()
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        rows.push(row("", ""));
        rows.push(row("# Detailed Table Information", ""));
        rows.push(row("Table", name));
        rows.push(row("Type", if managed { "MANAGED" } else { "EXTERNAL" }));
        rows.push(row("Provider", "hudi"));
        rows.push(row("Hudi Table Type", cfg.table_type()?.as_str()));
        rows.push(row("Table Properties", &format!("[{}]", props.join(", "))));
        rows.push(row("Location", &location));
    }
    Ok(rows)
}

/// SHOW TBLPROPERTIES: the table's `hoodie.properties`, or one key of it (Spark's text for a
/// key the table lacks).
fn properties(name: &str, hudi: &HudiTableProvider, key: Option<&str>) -> Vec<Vec<Option<String>>> {
    let props = hudi.table().config().properties();
    match key {
        None => props
            .iter()
            .map(|(k, v)| vec![Some(k.to_string()), Some(v.to_string())])
            .collect(),
        Some(k) => {
            // a short or old name finds the key under any of its names
            let names: Vec<&str> = match config::lookup(k) {
                Some(c) => std::iter::once(c.key)
                    .chain(c.aliases.iter().copied())
                    .collect(),
                None => vec![k],
            };
            let value = names
                .iter()
                .find_map(|n| props.get(n))
                .map(str::to_string)
                .unwrap_or_else(|| format!("Table {name} does not have property: {k}"));
            vec![vec![Some(k.to_string()), Some(value)]]
        }
    }
}

/// An identifier as a statement can take it back: backquoted unless lower-case and plain.
fn ident(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        name.to_string()
    } else {
        format!("`{}`", name.replace('`', "``"))
    }
}

/// SHOW CREATE TABLE: a statement that creates a table like this one (data columns, key,
/// ordering field, type, partitioning, CDC and the write options the table keeps) at its
/// location.
fn create_statement(name: &str, hudi: &HudiTableProvider) -> String {
    let cfg = hudi.table().config();
    let schema = TableProvider::schema(hudi);
    let columns: Vec<String> = schema
        .fields()
        .iter()
        .filter(|f| !is_meta_column(f.name()))
        .map(|f| format!("  {} {}", ident(f.name()), spark_type(f.data_type())))
        .collect();
    let mut props: Vec<(String, String)> = Vec::new();
    let keys = cfg.record_key_fields();
    if !keys.is_empty() {
        props.push(("primaryKey".into(), keys.join(",")));
    }
    if let Some(o) = cfg.ordering_field() {
        props.push(("preCombineField".into(), o));
    }
    let mor = cfg.table_type().ok() == Some(hoodie_format::TableType::MergeOnRead);
    props.push(("type".into(), if mor { "mor" } else { "cow" }.into()));
    let kept = config::WRITE_KEYS
        .iter()
        .chain([&config::CDC_ENABLED, &config::CDC_LOGGING_MODE])
        .filter(|k| {
            *k != &config::CDC_LOGGING_MODE
                || cfg.properties().get(config::CDC_ENABLED.key) == Some("true")
        });
    for key in kept {
        if let Some(v) = cfg.properties().get(key.key) {
            props.push((key.key.to_string(), v.to_string()));
        }
    }
    let parts = cfg.partition_fields();
    let mut out = format!(
        "CREATE TABLE {} (\n{})\nUSING hudi\n",
        ident(name),
        columns.join(",\n")
    );
    if !parts.is_empty() {
        let names: Vec<String> = parts.iter().map(|p| ident(p)).collect();
        out.push_str(&format!("PARTITIONED BY ({})\n", names.join(", ")));
    }
    out.push_str(&format!(
        "LOCATION '{}'\n",
        hudi.table().storage().location().replace('\'', "''")
    ));
    let props: Vec<String> = props
        .iter()
        .map(|(k, v)| format!("  '{k}' = '{}'", v.replace('\'', "''")))
        .collect();
    out.push_str(&format!("TBLPROPERTIES (\n{})", props.join(",\n")));
    out
}
