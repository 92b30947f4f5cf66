//! The DDL of Hudi's Spark SQL dialect: `CREATE TABLE ... USING` (and CTAS), `DROP TABLE`,
//! `ALTER TABLE ... SET TBLPROPERTIES`, `SHOW PARTITIONS`.

use std::any::Any;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use datafusion::arrow::array::StringArray;
use datafusion::arrow::datatypes::TimeUnit;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::SchemaProvider;
use datafusion::common::ToDFSchema;
use datafusion::common::{Column, ScalarValue, TableReference};
use datafusion::dataframe::DataFrame;
use datafusion::datasource::provider_as_source;
use datafusion::datasource::TableProvider;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{
    lit, CreateExternalTable, DdlStatement, Expr, LogicalPlan, LogicalPlanBuilder,
};
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::{collect, ExecutionPlanProperties};
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DFStatement;
use hoodie_format::write::WriteStatement;
use sqlparser::ast::Statement;

use super::run_datafusion;
use crate::ddl::catalog::WarehouseSchema;
use crate::ddl::factory::open_or_create;
use crate::ddl::spec::TableSpec;
use crate::ddl::table_name::check_table_name;
use crate::error::{DdlError, HoodieError, Result};
use crate::frontend::{self, CreateTableUsing};
use crate::names::resolve_names;
use crate::options::session::{case_sensitive, storage_options, HoodieSessionConfig};
use crate::options::write::SessionOptions;
use crate::provider::{as_hudi, HudiTableProvider};

/// The session's warehouse (where `CREATE TABLE` without `LOCATION` creates tables).
pub(super) fn warehouse(ctx: &SessionContext) -> Result<WarehouseSchema> {
    let names = ctx
        .state_ref()
        .read()
        .config_options()
        .extensions
        .get::<HoodieSessionConfig>()
        .and_then(|c| c.warehouse().map(|(c, s)| (c.to_string(), s.to_string())));
    let missing = || HoodieError::from(DdlError::NoWarehouse);
    let (catalog, schema) = names.ok_or_else(missing)?;
    let schema = ctx
        .catalog(&catalog)
        .and_then(|c| c.schema(&schema))
        .ok_or_else(missing)?;
    let any: &dyn Any = schema.as_ref();
    any.downcast_ref::<WarehouseSchema>()
        .cloned()
        .ok_or_else(missing)
}

/// `name` without its database part when that names the warehouse's schema (`default.t` is
/// `t`, as in Spark's default database); another database is refused: the warehouse is the
/// session's one database.
fn in_warehouse_database(ctx: &SessionContext, name: &str) -> Result<String> {
    let Some((db, table)) = name.rsplit_once('.') else {
        return Ok(name.to_string());
    };
    match warehouse_names(ctx) {
        Some((_, schema)) if schema.eq_ignore_ascii_case(db) => Ok(table.to_string()),
        Some((_, schema)) => Err(DdlError::NoSuchDatabase {
            database: db.to_string(),
            warehouse: schema.to_string(),
            table: table.to_string(),
        }
        .into()),
        None => Ok(name.to_string()),
    }
}

/// Whether a table created as `name` is a table of the warehouse: an unqualified name when
/// the warehouse is the default schema, or a name qualified with the warehouse's schema.
pub(super) fn lands_in_warehouse(ctx: &SessionContext, name: &str) -> bool {
    let Some((catalog, schema)) = warehouse_names(ctx) else {
        return false;
    };
    match name.split('.').collect::<Vec<_>>().as_slice() {
        [_] => warehouse_is_default(ctx),
        [s, _] => s.eq_ignore_ascii_case(&schema) && warehouse_is_default(ctx),
        [c, s, _] => c.eq_ignore_ascii_case(&catalog) && s.eq_ignore_ascii_case(&schema),
        _ => false,
    }
}

/// The catalog and schema the session's warehouse is registered as.
pub(super) fn warehouse_names(ctx: &SessionContext) -> Option<(String, String)> {
    ctx.state_ref()
        .read()
        .config_options()
        .extensions
        .get::<HoodieSessionConfig>()
        .and_then(|c| c.warehouse().map(|(c, s)| (c.to_string(), s.to_string())))
}

/// Whether unqualified names of the session resolve in its warehouse.
pub(super) fn warehouse_is_default(ctx: &SessionContext) -> bool {
    let state = ctx.state_ref();
    let state = state.read();
    let options = state.config_options();
    options
        .extensions
        .get::<HoodieSessionConfig>()
        .and_then(HoodieSessionConfig::warehouse)
        .is_some_and(|(c, s)| {
            options.catalog.default_catalog == c && options.catalog.default_schema == s
        })
}

/// The table `name` as written (no case folding), if the session has it; a bare name the
/// default schema lacks is looked up in the warehouse, as Spark finds a managed table in its
/// current database.
///
/// A table that exists but cannot be opened (its `hoodie.properties` damaged) is an error that
/// says why, not a table that is not there.
pub(super) async fn table_provider(
    ctx: &SessionContext,
    name: &str,
) -> Result<Option<Arc<dyn TableProvider>>> {
    let reference = frontend::exact_table_ref(name);
    match ctx.table_provider(reference.clone()).await {
        Ok(t) => return Ok(Some(t)),
        Err(e) if ctx.table_exist(reference).unwrap_or(false) => return Err(e.into()),
        Err(_) => {}
    }
    if name.contains('.') {
        return Ok(None);
    }
    match warehouse(ctx) {
        Ok(w) => Ok(w.table(name).await?),
        Err(_) => Ok(None),
    }
}

/// The Hudi table `name`.
pub(super) async fn hudi_table(ctx: &SessionContext, name: &str) -> Result<Arc<dyn TableProvider>> {
    let t = table_provider(ctx, name)
        .await?
        .ok_or_else(|| HoodieError::TableNotFound {
            name: name.to_string(),
        })?;
    if as_hudi(&t).is_none() {
        return Err(HoodieError::NotAHudiTable {
            name: name.to_string(),
        });
    }
    Ok(t)
}

/// Whether `name` is a Hudi table of the session.
pub(super) async fn is_hudi_table(ctx: &SessionContext, name: &str) -> bool {
    table_provider(ctx, name)
        .await
        .ok()
        .flatten()
        .is_some_and(|t| as_hudi(&t).is_some())
}

/// Makes a table created in this session visible under `name`: a managed table is found
/// through the warehouse (and registered in the default schema when that is another one);
/// a table at a LOCATION of its own lives in the default schema for the session.
pub(super) fn register(
    ctx: &SessionContext,
    warehouse: &WarehouseSchema,
    name: &str,
    provider: HudiTableProvider,
    managed: bool,
) -> Result<()> {
    if managed {
        // drop any cached copy: the next access opens the table as created
        warehouse.forget(name);
        if warehouse_is_default(ctx) {
            return Ok(());
        }
    }
    ctx.register_table(TableReference::bare(name), Arc::new(provider))?;
    Ok(())
}

/// Refuses two declared columns whose names differ only in case, as Spark does unless
/// `spark.sql.caseSensitive` is on.
fn check_distinct_names(columns: &[datafusion::arrow::datatypes::Field]) -> Result<()> {
    for (i, c) in columns.iter().enumerate() {
        let name = c.name();
        if columns[..i]
            .iter()
            .any(|d| d.name().eq_ignore_ascii_case(name))
        {
            return Err(DdlError::ColumnExists {
                column: name.to_lowercase(),
            }
            .into());
        }
    }
    Ok(())
}

/// `CREATE [OR REPLACE] TABLE [IF NOT EXISTS] ... USING ...`.
pub(super) async fn create_using(
    ctx: &SessionContext,
    mut c: CreateTableUsing,
) -> Result<DataFrame> {
    check_table_name(&c.name)?;
    c.name = in_warehouse_database(ctx, &c.name)?;
    let warehouse = warehouse(ctx)?;
    if let Some(location) = &c.location {
        warehouse.check_table_location(location)?;
    }
    let exists = ctx.table_exist(TableReference::bare(c.name.as_str()))?
        || (c.location.is_none() && warehouse.table_exist(&c.name));
    if exists {
        if c.if_not_exists {
            if c.location.is_none() && !warehouse_is_default(ctx) {
                // the warehouse's table, made visible under its bare name in this session
                if let Some(t) = warehouse.table(&c.name).await? {
                    let _ = ctx.deregister_table(TableReference::bare(c.name.as_str()))?;
                    ctx.register_table(TableReference::bare(c.name.as_str()), t)?;
                }
            }
            return Ok(ctx.read_empty()?);
        }
        if !c.or_replace {
            return Err(HoodieError::TableExists { name: c.name });
        }
        return Err(HoodieError::Unsupported {
            feature: "CREATE OR REPLACE TABLE on an existing table".into(),
        });
    }
    if !case_sensitive(ctx.state_ref().read().config_options()) {
        check_distinct_names(&c.columns)?;
    }
    match c.format.as_str() {
        "hudi" => create_hudi(ctx, &warehouse, c).await?,
        "parquet" | "csv" | "json" => create_plain(ctx, &warehouse, c).await?,
        other => {
            return Err(HoodieError::Unsupported {
                feature: format!("CREATE TABLE ... USING {other} (use hudi, parquet, csv or json)"),
            })
        }
    }
    Ok(ctx.read_empty()?)
}

async fn create_hudi(
    ctx: &SessionContext,
    warehouse: &WarehouseSchema,
    c: CreateTableUsing,
) -> Result<()> {
    let managed = c.location.is_none();
    let location = match &c.location {
        Some(l) => l.clone(),
        None => warehouse.table_location(&c.name),
    };
    let Some(query) = c.query else {
        let spec = TableSpec {
            name: c.name.clone(),
            columns: Arc::new(frontend::schema_of(&c.columns)),
            partition_by: c.partitioned_by,
            options: c.options,
        }
        .with_session(ctx.state_ref().read().config_options());
        let session = storage_options(ctx.state_ref().read().config_options());
        let (provider, _created) = open_or_create(&location, Some(spec), &session).await?;
        return register(ctx, warehouse, &c.name, provider, managed);
    };
    if crate::ddl::factory::query_view(&c.options).is_some() {
        return Err(DdlError::CtasOfView.into());
    }
    if !c.columns.is_empty() {
        return Err(DdlError::CtasColumnList.into());
    }
    let mut query = sqlparser::ast::Statement::Query(query);
    let exact = case_sensitive(ctx.state_ref().read().config_options());
    resolve_names(&mut query, ctx, exact).await?;
    let plan = ctx
        .state()
        .statement_to_plan(DFStatement::Statement(Box::new(query)))
        .await?;
    let df = ctx.execute_logical_plan(plan).await?;
    let provider = ctas(
        ctx,
        c.name.clone(),
        c.partitioned_by,
        c.options,
        &location,
        df,
    )
    .await?;
    register(ctx, warehouse, &c.name, provider, managed)
}

/// CTAS: creates the table with the query's schema and bulk inserts its rows, staged: a
/// failure leaves nothing at the location.
async fn ctas(
    ctx: &SessionContext,
    name: String,
    partition_by: Vec<String>,
    options: Vec<(String, String)>,
    location: &str,
    df: DataFrame,
) -> Result<HudiTableProvider> {
    // like Spark Hudi, the meta columns of a Hudi source are not data of the new table, and
    // every column is nullable (Spark's CTAS takes the query's schema `asNullable`): a
    // column of literals must take NULLs in later writes
    let data_fields: Vec<Field> = df
        .schema()
        .as_arrow()
        .fields()
        .iter()
        .filter(|f| !hoodie_format::schema::is_meta_column(f.name()))
        .map(|f| f.as_ref().clone().with_nullable(true))
        .collect();
    let columns: SchemaRef = Arc::new(Schema::new(data_fields));
    let spec = TableSpec {
        name,
        columns,
        partition_by,
        options,
    }
    .with_session(ctx.state_ref().read().config_options());
    let ordered = spec.ordered_columns()?;
    let storage_dir = PathBuf::from(location.strip_prefix("file://").unwrap_or(location));
    let session = storage_options(ctx.state_ref().read().config_options());
    let (provider, created) = open_or_create(location, Some(spec), &session).await?;
    if !created {
        return Err(DdlError::CtasOverTable {
            location: location.to_string(),
        }
        .into());
    }
    // meta columns (filled by the writer) first, then the data columns in table order
    let mut exprs: Vec<Expr> = hoodie_format::meta::META_COLUMNS
        .iter()
        .map(|m| lit(ScalarValue::Utf8(None)).alias(*m))
        .collect();
    exprs.extend(
        ordered
            .fields()
            .iter()
            .map(|f| Expr::Column(Column::from_name(f.name()))),
    );
    let session = SessionOptions::of(ctx.state_ref().read().config_options());
    let result = async {
        let df = df.select(exprs)?;
        let mut plan = df.create_physical_plan().await?;
        if plan.output_partitioning().partition_count() > 1 {
            plan = Arc::new(CoalescePartitionsExec::new(plan));
        }
        let mode = provider.write_spec(&session, WriteStatement::CreateAsSelect)?;
        collect(provider.write_plan(plan, mode), ctx.task_ctx()).await?;
        Ok::<(), HoodieError>(())
    }
    .await;
    match result {
        Ok(()) => Ok(provider),
        Err(e) => {
            // staged create: leave nothing behind
            let _ = std::fs::remove_dir_all(&storage_dir);
            Err(e)
        }
    }
}

/// `CREATE TABLE ... USING parquet | csv | json`, as a DataFusion external table.
async fn create_plain(
    ctx: &SessionContext,
    warehouse: &WarehouseSchema,
    c: CreateTableUsing,
) -> Result<()> {
    let location = match &c.location {
        Some(l) => l.clone(),
        None => format!("{}/", warehouse.table_location(&c.name)),
    };
    let dir = location.strip_prefix("file://").unwrap_or(&location);
    if hoodie_format::location::scheme(dir).is_none() {
        std::fs::create_dir_all(dir).map_err(|source| HoodieError::Io {
            path: dir.to_string(),
            source,
        })?;
    }
    let location = if location.ends_with('/') {
        location
    } else {
        format!("{location}/")
    };
    let (columns, query) = match (c.query, c.columns.is_empty()) {
        (Some(q), true) => {
            let df =
                run_datafusion(ctx, DFStatement::Statement(Box::new(Statement::Query(q)))).await?;
            let fields = df.schema().as_arrow().fields().iter();
            (fields.map(|f| f.as_ref().clone()).collect(), Some(df))
        }
        (Some(_), false) => return Err(DdlError::CtasColumnList.into()),
        (None, _) => (c.columns, None),
    };
    let utf8_view = ctx
        .state_ref()
        .read()
        .config_options()
        .sql_parser
        .map_string_types_to_utf8view;
    let fields = columns
        .iter()
        .map(|f| Field::new(f.name(), plain_table_type(f.data_type(), utf8_view), true));
    let schema = Schema::new(fields.collect::<Vec<_>>()).to_dfschema_ref()?;
    let name = TableReference::bare(c.name.as_str());
    let create = CreateExternalTable::builder(
        name.clone(),
        location,
        c.format.to_ascii_uppercase(),
        schema,
    )
    .with_partition_cols(c.partitioned_by)
    .with_options(format_options(c.options)?)
    .build();
    let plan = LogicalPlan::Ddl(DdlStatement::CreateExternalTable(Box::new(create)));
    ctx.execute_logical_plan(plan).await?;
    if let Some(df) = query {
        let target = provider_as_source(ctx.table_provider(name.clone()).await?);
        let insert = LogicalPlanBuilder::insert_into(
            df.into_unoptimized_plan(),
            name,
            target,
            InsertOp::Append,
        )?
        .build()?;
        ctx.execute_logical_plan(insert).await?.collect().await?;
    }
    Ok(())
}

/// A declared column's type as DataFusion's `CREATE EXTERNAL TABLE` reads the SQL type of it:
/// strings as the session maps them, timestamps in nanoseconds without a zone.
fn plain_table_type(dt: &DataType, utf8_view: bool) -> DataType {
    match dt {
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 if utf8_view => {
            DataType::Utf8View
        }
        DataType::Utf8View | DataType::LargeUtf8 => DataType::Utf8,
        DataType::Timestamp(_, _) => DataType::Timestamp(TimeUnit::Nanosecond, None),
        DataType::BinaryView | DataType::LargeBinary => DataType::Binary,
        other => other.clone(),
    }
}

/// `OPTIONS (...)` of a plain table as DataFusion keys them: a key without a namespace is a
/// format option (`format.<key>`), every key lower case, each at most once.
fn format_options(options: Vec<(String, String)>) -> Result<HashMap<String, String>> {
    let mut out = HashMap::new();
    for (key, value) in options {
        let named = match key.contains('.') {
            true => key.to_lowercase(),
            false => format!("format.{key}").to_lowercase(),
        };
        if out.insert(named, value).is_some() {
            return Err(DdlError::RepeatedOption { key }.into());
        }
    }
    Ok(out)
}

/// `DROP TABLE [IF EXISTS] t [PURGE]`: a managed Hudi table's directory goes with it. `None`:
/// the table is not a Hudi table, and DataFusion's DROP TABLE drops it.
pub(super) async fn drop_table(
    ctx: &SessionContext,
    name: &str,
    if_exists: bool,
    purge: bool,
) -> Result<Option<DataFrame>> {
    let Some(t) = table_provider(ctx, name).await? else {
        return if if_exists {
            Ok(Some(ctx.read_empty()?))
        } else {
            Err(HoodieError::TableNotFound {
                name: name.to_string(),
            })
        };
    };
    let Some(h) = as_hudi(&t) else {
        return Ok(None);
    };
    let warehouse = warehouse(ctx)?;
    let storage = h.table().storage().clone();
    let managed = warehouse.is_managed(storage.location());
    if managed || purge {
        // refused before anything is deregistered: the table stays as it was
        warehouse.check_deletable(storage.location())?;
    }
    let _ = ctx.deregister_table(TableReference::bare(name))?;
    warehouse.deregister_table(name)?;
    warehouse.forget(name);
    if managed || purge {
        match storage.local_dir() {
            Some(dir) => std::fs::remove_dir_all(dir).map_err(|source| HoodieError::Io {
                path: dir.display().to_string(),
                source,
            })?,
            None => storage.delete_all().await?,
        }
        warn(
            ctx,
            format!(
                "DROP TABLE {name} deleted the table's folder {}",
                storage.location()
            ),
        );
    }
    Ok(Some(ctx.read_empty()?))
}

/// Names each table of the warehouse that cannot be opened, and why, in a warning: SHOW
/// TABLES lists them with the rest.
pub(super) async fn warn_unopenable_tables(ctx: &SessionContext) {
    let Ok(warehouse) = warehouse(ctx) else {
        return;
    };
    for name in warehouse.table_names() {
        if let Err(e) = warehouse.table(&name).await {
            warn(
                ctx,
                format!(
                    "table {name} cannot be opened: {}",
                    crate::error::df_message(&e)
                ),
            );
        }
    }
}

/// Leaves `warning` for the shell to print after the statement.
pub(super) fn warn(ctx: &SessionContext, warning: String) {
    if let Some(c) = ctx
        .state_ref()
        .write()
        .config_mut()
        .options_mut()
        .extensions
        .get_mut::<HoodieSessionConfig>()
    {
        c.push_warning(warning);
    }
}

/// `ALTER TABLE t RENAME TO u`, as Hudi's rename does: `hoodie.table.name` (and its checksum)
/// becomes `u`; a table of the warehouse, whose name is its directory's, moves to the
/// directory `u` (one rename of the directory on local disk); a table at a location of its own
/// stays there.
pub(super) async fn rename_table(
    ctx: &SessionContext,
    name: &str,
    new_name: &str,
) -> Result<DataFrame> {
    check_table_name(new_name)?;
    let t = hudi_table(ctx, name).await?;
    let h = as_hudi(&t).expect("a Hudi table");
    h.refuse_write()?;
    if table_provider(ctx, new_name).await?.is_some() {
        return Err(DdlError::RenameOntoExisting {
            name: name.to_string(),
            new_name: new_name.to_string(),
            existing: format!("table {new_name} already"),
        }
        .into());
    }
    let warehouse = warehouse(ctx)?;
    let location = PathBuf::from(h.table().storage().location());
    let managed = warehouse.is_managed(h.table().storage().location());
    let mut table = if managed {
        let Some(dir) = warehouse.local_dir() else {
            return Err(HoodieError::Unsupported {
                feature: format!("renaming {name}, a table of the object-store warehouse {} (its files would be copied to a new folder; create the new table with CREATE TABLE ... AS SELECT instead)", warehouse.location()),
            });
        };
        let to = dir.join(new_name);
        if to.exists() {
            return Err(DdlError::RenameOntoExisting {
                name: name.to_string(),
                new_name: new_name.to_string(),
                existing: to.display().to_string(),
            }
            .into());
        }
        std::fs::rename(&location, &to).map_err(|source| HoodieError::Io {
            path: location.display().to_string(),
            source,
        })?;
        hoodie_format::HudiTable::open(hoodie_format::storage::TableStorage::local(&to)?).await?
    } else {
        h.table().clone()
    };
    let mut config = table.config().clone();
    config.set(hoodie_format::config::TABLE_NAME.key, new_name.to_string());
    table.update_config(config).await?;
    let _ = ctx.deregister_table(TableReference::bare(name))?;
    warehouse.deregister_table(name)?;
    warehouse.forget(name);
    let provider = HudiTableProvider::try_new(new_name, table).await?;
    register(ctx, &warehouse, new_name, provider, managed)?;
    Ok(ctx.read_empty()?)
}

/// `ALTER TABLE t SET TBLPROPERTIES (...)`: properties that do not shape the table.
pub(super) async fn alter_properties(
    ctx: &SessionContext,
    name: &str,
    properties: Vec<(String, String)>,
) -> Result<DataFrame> {
    let t = hudi_table(ctx, name).await?;
    let h = as_hudi(&t).ok_or_else(|| HoodieError::NotAHudiTable {
        name: name.to_string(),
    })?;
    let mut table = h.table().clone();
    let mut config = table.config().clone();
    use hoodie_format::config as c;
    let structural = [
        c::RECORD_KEY_FIELDS,
        c::PARTITION_FIELDS,
        c::TABLE_TYPE,
        c::TABLE_NAME,
        c::TABLE_VERSION,
        c::KEYGEN_CLASS,
        c::TIMELINE_LAYOUT_VERSION,
        c::ORDERING_FIELDS,
    ];
    for (k, v) in properties {
        let key = c::lookup(&k);
        if key.is_some_and(|c| structural.contains(&c)) {
            return Err(DdlError::FixedProperty { key: k.to_string() }.into());
        }
        let key = key.map(|c| c.key.to_string()).unwrap_or(k);
        config.set(&key, v);
    }
    table.update_config(config).await?;
    reregister(ctx, name, table).await?;
    Ok(ctx.read_empty()?)
}

/// Registers `table` as `name` again in the session, in place of the provider opened before a
/// change of its `hoodie.properties` (ALTER TABLE, an upgrade).
pub(super) async fn reregister(
    ctx: &SessionContext,
    name: &str,
    table: hoodie_format::HudiTable,
) -> Result<()> {
    let warehouse = warehouse(ctx)?;
    let managed = warehouse.is_managed(table.storage().location());
    let _ = ctx.deregister_table(TableReference::bare(name))?;
    warehouse.deregister_table(name)?;
    let provider = HudiTableProvider::try_new(name, table).await?;
    register(ctx, &warehouse, name, provider, managed)?;
    Ok(())
}

/// `SHOW PARTITIONS t`.
pub(super) async fn show_partitions(ctx: &SessionContext, name: &str) -> Result<DataFrame> {
    let t = hudi_table(ctx, name).await?;
    let parts = as_hudi(&t)
        .map(|h| h.partitions())
        .ok_or_else(|| HoodieError::TableNotFound {
            name: name.to_string(),
        })?
        .await?;
    let schema = Arc::new(Schema::new(vec![Field::new(
        "partition",
        DataType::Utf8,
        false,
    )]));
    let batch = RecordBatch::try_new(
        schema,
        vec![Arc::new(StringArray::from(
            parts
                .into_iter()
                .filter(|p| !p.is_empty())
                .collect::<Vec<_>>(),
        ))],
    )?;
    Ok(ctx.read_batch(batch)?)
}
