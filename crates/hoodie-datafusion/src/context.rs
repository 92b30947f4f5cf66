//! [`HoodieContext`]: the session users run SQL through.

use std::path::PathBuf;
use std::sync::Arc;

use datafusion::arrow::array::{Array, StringArray, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::SchemaProvider;
use datafusion::common::{Column, ScalarValue};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::TableProvider;
use datafusion::execution::memory_pool::{FairSpillPool, TrackConsumersPool};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::logical_expr::{lit, Expr, LogicalPlan};
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::ExecutionPlanProperties;
use datafusion::physical_plan::{collect, ExecutionPlan};
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion::sql::parser::Statement as DFStatement;
use hoodie_format::transaction::WriteOperation;

use crate::catalog::WarehouseSchema;
use crate::create::TableSpec;
use crate::dml::{HoodieQueryPlanner, HudiDmlRule};
use crate::error::{HoodieError, Result};
use crate::factory::{open_or_create, HudiTableFactory};
use crate::frontend::{self, CreateTableUsing, FrontStatement};
use crate::insert::{rewrite_insert, InsertInfo};
use crate::names::{is_case_sensitive, resolve_df_names, resolve_names, CASE_SENSITIVE_KEY};
use crate::options::SessionOptions;
use crate::provider::{as_hudi, HudiTableProvider};
use crate::sink::{HudiSink, WriteCounts, WriteMode};

/// How a [`HoodieContext`] is set up.
#[derive(Debug, Clone)]
pub struct HoodieConfig {
    /// Directory under which tables created without LOCATION live; it is also the catalog:
    /// every Hudi table under it is visible in a new session.
    pub warehouse: PathBuf,
    /// Upper bound of the DataFusion memory pool in bytes (None: unbounded).
    pub memory_limit: Option<usize>,
}

impl HoodieConfig {
    /// A config with the given warehouse and no memory limit.
    pub fn new(warehouse: impl Into<PathBuf>) -> Self {
        Self {
            warehouse: warehouse.into(),
            memory_limit: None,
        }
    }
}

/// What running one statement produced.
#[derive(Debug)]
pub enum StatementOutput {
    /// A query result.
    Rows {
        /// Schema of the result.
        schema: SchemaRef,
        /// The result batches.
        batches: Vec<RecordBatch>,
    },
    /// A DML statement on a plain table: the number of rows it wrote.
    Count(u64),
    /// A write to a Hudi table: what it inserted, updated and deleted (the affected rows are
    /// their sum).
    Changed(WriteCounts),
    /// A statement with no result (DDL, SET, ...).
    Done,
}

/// A DataFusion session with Hudi support.
pub struct HoodieContext {
    ctx: SessionContext,
    config: HoodieConfig,
    options: SessionOptions,
    warehouse: Arc<WarehouseSchema>,
    warnings: std::sync::Mutex<Vec<String>>,
}

impl HoodieContext {
    /// Creates a session over `config.warehouse` (created if missing).
    pub async fn new(config: HoodieConfig) -> Result<Self> {
        std::fs::create_dir_all(&config.warehouse).map_err(|source| HoodieError::Io {
            path: config.warehouse.display().to_string(),
            source,
        })?;
        let warehouse_dir =
            std::fs::canonicalize(&config.warehouse).map_err(|source| HoodieError::Io {
                path: config.warehouse.display().to_string(),
                source,
            })?;
        let options = SessionOptions::default();
        let mut runtime = RuntimeEnvBuilder::new();
        if let Some(limit) = config.memory_limit {
            // a write that does not fit names the largest consumers in its error
            runtime = runtime.with_memory_pool(Arc::new(TrackConsumersPool::new(
                FairSpillPool::new(limit),
                std::num::NonZeroUsize::new(5).expect("non-zero"),
            )));
        }
        let mut session_config = SessionConfig::new().with_information_schema(true);
        // Parquet scans decode the filter columns first and the rest only for matching rows:
        // UPDATE/DELETE change sets and point lookups select a few rows of many (a lookup by
        // key 0.28 s -> 0.05 s at 1M rows). `SET datafusion.execution.parquet.pushdown_filters
        // = false` turns it off.
        let parquet = &mut session_config.options_mut().execution.parquet;
        parquet.pushdown_filters = true;
        parquet.reorder_filters = true;
        let state = SessionStateBuilder::new()
            .with_config(session_config)
            .with_runtime_env(runtime.build_arc()?)
            .with_default_features()
            .with_analyzer_rule(Arc::new(HudiDmlRule))
            .with_query_planner(Arc::new(HoodieQueryPlanner))
            .with_table_factory(
                "HUDI".to_string(),
                Arc::new(HudiTableFactory::new(options.clone())),
            )
            .build();
        let ctx = SessionContext::new_with_state(state);
        let warehouse = Arc::new(WarehouseSchema::new(warehouse_dir, options.clone()));
        let catalog = ctx
            .catalog("datafusion")
            .ok_or_else(|| HoodieError::Invalid {
                message: "default catalog missing".into(),
            })?;
        catalog.register_schema("public", warehouse.clone() as Arc<dyn SchemaProvider>)?;
        Ok(Self {
            ctx,
            config: HoodieConfig {
                warehouse: warehouse.dir().to_path_buf(),
                ..config
            },
            options,
            warehouse,
            warnings: Default::default(),
        })
    }

    /// The warnings of the statements run since the last call (an unknown `hoodie.*` key in a
    /// `SET`, with the closest known key), for a shell to print.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn warn_unknown_key(&self, key: &str) {
        if !key.starts_with("hoodie.") || hoodie_format::config::lookup(key).is_some() {
            return;
        }
        let hint = match hoodie_format::config::closest_key(key) {
            Some(k) => format!("; did you mean {k}?"),
            None => String::new(),
        };
        self.warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(format!(
                "{key} is not a key hoodie knows; it is kept but has no effect{hint}"
            ));
    }

    /// The underlying DataFusion session.
    pub fn session(&self) -> &SessionContext {
        &self.ctx
    }

    /// The configuration this session was made with.
    pub fn config(&self) -> &HoodieConfig {
        &self.config
    }

    /// The `hoodie.*` options set in this session.
    pub fn options(&self) -> &SessionOptions {
        &self.options
    }

    /// Runs one statement to completion.
    pub async fn run(&self, sql: &str) -> Result<StatementOutput> {
        let exact = self.case_sensitive();
        match frontend::classify(sql)? {
            FrontStatement::PassThrough => self.run_datafusion(sql).await,
            FrontStatement::CreateUsing(c) => self.create_using(c).await,
            FrontStatement::DropTable {
                name,
                if_exists,
                purge,
            } => self.drop_table(&name, if_exists, purge).await,
            FrontStatement::Set { key, value } => {
                self.warn_unknown_key(&key);
                self.options.set(&key, &value);
                Ok(StatementOutput::Done)
            }
            FrontStatement::Reset { key } => {
                self.options.reset(key.as_deref());
                Ok(StatementOutput::Done)
            }
            FrontStatement::ShowPartitions { name } => {
                let t = self.hudi_table(&name).await?;
                let parts = as_hudi(&t)
                    .map(|h| h.partitions())
                    .ok_or_else(|| HoodieError::TableNotFound { name: name.clone() })?
                    .await?;
                let schema = Arc::new(Schema::new(vec![Field::new(
                    "partition",
                    DataType::Utf8,
                    false,
                )]));
                let batch = RecordBatch::try_new(
                    schema.clone(),
                    vec![Arc::new(StringArray::from(
                        parts
                            .into_iter()
                            .filter(|p| !p.is_empty())
                            .collect::<Vec<_>>(),
                    ))],
                )?;
                Ok(StatementOutput::Rows {
                    schema,
                    batches: vec![batch],
                })
            }
            FrontStatement::AlterSetProperties { name, properties } => {
                self.alter_properties(&name, properties).await
            }
            FrontStatement::Merge(mut stmt) => {
                let merge = match &mut *stmt {
                    sqlparser::ast::Statement::Explain { statement, .. } => &mut **statement,
                    other => other,
                };
                // names first, so a subquery source plans; again for the expanded stars
                resolve_names(merge, &self.ctx, exact).await?;
                self.expand_merge_stars(merge).await?;
                resolve_names(&mut stmt, &self.ctx, exact).await?;
                self.run_statement(*stmt).await
            }
            FrontStatement::Update(mut stmt) => {
                resolve_names(&mut stmt, &self.ctx, exact).await?;
                self.run_statement(*stmt).await
            }
            FrontStatement::Insert(mut stmt) => {
                resolve_names(&mut stmt, &self.ctx, exact).await?;
                let (mut stmt, info) = rewrite_insert(*stmt, &self.ctx).await?;
                if info.hudi && info.overwrite && !info.static_values.is_empty() {
                    return self.overwrite_partitions(&mut stmt, &info).await;
                }
                self.run_statement(stmt).await
            }
        }
    }

    /// INSERT OVERWRITE ... PARTITION (...) into a Hudi table: DataFusion plans the rows (as an
    /// INSERT INTO), we write them as a replacecommit of the named partitions.
    async fn overwrite_partitions(
        &self,
        stmt: &mut sqlparser::ast::Statement,
        info: &InsertInfo,
    ) -> Result<StatementOutput> {
        let sqlparser::ast::Statement::Insert(insert) = stmt else {
            return Err(HoodieError::Invalid {
                message: "expected an INSERT".into(),
            });
        };
        insert.overwrite = false;
        let table_name = crate::frontend::name_of(match &insert.table {
            sqlparser::ast::TableObject::TableName(n) => n,
            _ => {
                return Err(HoodieError::Invalid {
                    message: "INSERT OVERWRITE needs a table name".into(),
                })
            }
        });
        let provider = self.hudi_table(&table_name).await?;
        let hudi = as_hudi(&provider).ok_or_else(|| HoodieError::TableNotFound {
            name: table_name.clone(),
        })?;
        let (prefix, full) = hudi.static_partition_prefix(&info.static_values)?.unzip();
        let mode = hudi.overwrite_mode(prefix, full.unwrap_or(false))?;
        let plan = self
            .ctx
            .state()
            .statement_to_plan(DFStatement::Statement(Box::new(stmt.clone())))
            .await?;
        let LogicalPlan::Dml(dml) = plan else {
            return Err(HoodieError::Invalid {
                message: "INSERT did not plan as DML".into(),
            });
        };
        let mut input = self.ctx.state().create_physical_plan(&dml.input).await?;
        if input.output_partitioning().partition_count() > 1 {
            input = Arc::new(CoalescePartitionsExec::new(input));
        }
        self.run_write(hudi.write_plan(input, mode)).await
    }

    /// Expands `UPDATE SET *` / `INSERT *` of a MERGE by column name.
    async fn expand_merge_stars(&self, stmt: &mut sqlparser::ast::Statement) -> Result<()> {
        use sqlparser::ast::{Statement, TableFactor};
        let Statement::Merge(m) = &*stmt else {
            return Ok(());
        };
        let TableFactor::Table { name, .. } = &m.table else {
            return Err(HoodieError::Invalid {
                message: "MERGE INTO needs a table name as its target".into(),
            });
        };
        let target_name = crate::frontend::name_of(name);
        let target =
            self.table_provider(&target_name)
                .await?
                .ok_or_else(|| HoodieError::TableNotFound {
                    name: target_name.clone(),
                })?;
        let target_columns = hoodie_format::schema::data_column_names(&target.schema());
        let source_columns: Vec<String> = match &m.source {
            TableFactor::Table { name, .. } => {
                let n = crate::frontend::name_of(name);
                let t = self
                    .table_provider(&n)
                    .await?
                    .ok_or_else(|| HoodieError::TableNotFound { name: n.clone() })?;
                t.schema()
                    .fields()
                    .iter()
                    .map(|f| f.name().clone())
                    .collect()
            }
            // `AS s(c1, c2, ...)` names the columns
            TableFactor::Derived {
                alias: Some(alias), ..
            } if !alias.columns.is_empty() => {
                alias.columns.iter().map(|c| c.name.value.clone()).collect()
            }
            TableFactor::Derived { subquery, .. } => {
                let plan = self
                    .ctx
                    .state()
                    .statement_to_plan(DFStatement::Statement(Box::new(Statement::Query(
                        subquery.clone(),
                    ))))
                    .await?;
                plan.schema()
                    .fields()
                    .iter()
                    .map(|f| f.name().clone())
                    .collect()
            }
            _ => vec![],
        };
        crate::frontend::merge::expand_stars(stmt, &target_columns, &source_columns)
    }

    /// Plans a parsed statement with DataFusion and runs it.
    async fn run_statement(&self, stmt: sqlparser::ast::Statement) -> Result<StatementOutput> {
        let plan = self
            .ctx
            .state()
            .statement_to_plan(DFStatement::Statement(Box::new(stmt)))
            .await?;
        self.run_plan(plan).await
    }

    async fn run_datafusion(&self, sql: &str) -> Result<StatementOutput> {
        let state = self.ctx.state();
        let dialect = state.config().options().sql_parser.dialect;
        let mut stmt = state.sql_to_statement(sql, &dialect)?;
        resolve_df_names(&mut stmt, &self.ctx, self.case_sensitive()).await?;
        let plan = state.statement_to_plan(stmt).await?;
        self.run_plan(plan).await
    }

    /// Whether `SET spark.sql.caseSensitive = true` asked for exact name resolution.
    fn case_sensitive(&self) -> bool {
        let value = self
            .options
            .all()
            .into_iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(CASE_SENSITIVE_KEY))
            .map(|(_, v)| v);
        is_case_sensitive(value)
    }

    async fn run_plan(&self, plan: LogicalPlan) -> Result<StatementOutput> {
        let is_dml = matches!(plan, LogicalPlan::Dml(_));
        let is_ddl = matches!(plan, LogicalPlan::Ddl(_) | LogicalPlan::Statement(_));
        let df = self.ctx.execute_logical_plan(plan).await?;
        if is_dml {
            let physical = df.create_physical_plan().await?;
            return self.run_write(physical).await;
        }
        let schema: SchemaRef = df.schema().inner().clone();
        let batches = df.collect().await?;
        if is_ddl {
            return Ok(StatementOutput::Done);
        }
        Ok(StatementOutput::Rows { schema, batches })
    }

    /// Runs a DML plan: a write to a Hudi table reports what it inserted, updated and deleted,
    /// any other the count DataFusion returns.
    async fn run_write(&self, plan: Arc<dyn ExecutionPlan>) -> Result<StatementOutput> {
        let batches = collect(plan.clone(), self.ctx.task_ctx()).await?;
        Ok(match hudi_sink(&plan).and_then(HudiSink::last_counts) {
            Some(counts) => StatementOutput::Changed(counts),
            None => StatementOutput::Count(count_of(&batches)),
        })
    }

    async fn table_provider(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>> {
        Ok(self
            .ctx
            .table_provider(crate::frontend::exact_table_ref(name))
            .await
            .ok())
    }

    async fn hudi_table(&self, name: &str) -> Result<Arc<dyn TableProvider>> {
        let t = self
            .table_provider(name)
            .await?
            .ok_or_else(|| HoodieError::TableNotFound {
                name: name.to_string(),
            })?;
        if as_hudi(&t).is_none() {
            return Err(HoodieError::Invalid {
                message: format!("{name} is not a Hudi table"),
            });
        }
        Ok(t)
    }

    async fn create_using(&self, c: CreateTableUsing) -> Result<StatementOutput> {
        let exists = self.ctx.table_exist(c.name.as_str())?;
        if exists {
            if c.if_not_exists {
                return Ok(StatementOutput::Done);
            }
            if !c.or_replace {
                return Err(HoodieError::TableExists { name: c.name });
            }
            return Err(HoodieError::Unsupported {
                feature: "CREATE OR REPLACE TABLE on an existing table".into(),
            });
        }
        match c.format.as_str() {
            "hudi" => self.create_hudi(c).await,
            "parquet" | "csv" | "json" => self.create_plain(c).await,
            other => Err(HoodieError::Unsupported {
                feature: format!("CREATE TABLE ... USING {other} (use hudi, parquet, csv or json)"),
            }),
        }
    }

    async fn create_hudi(&self, c: CreateTableUsing) -> Result<StatementOutput> {
        let managed = c.location.is_none();
        let location = match &c.location {
            Some(l) => l.clone(),
            None => self.warehouse.table_dir(&c.name).display().to_string(),
        };
        let Some(query) = c.query else {
            let spec = TableSpec {
                name: c.name.clone(),
                columns: Arc::new(frontend::schema_of(&c.columns)),
                partition_by: c.partitioned_by,
                options: c.options,
            };
            let (provider, _created) = open_or_create(&location, Some(spec), &self.options).await?;
            self.register(&c.name, provider, managed)?;
            return Ok(StatementOutput::Done);
        };
        if !c.columns.is_empty() {
            return Err(HoodieError::Invalid { message: "CREATE TABLE ... AS SELECT takes its columns from the query; drop the column list".into() });
        }
        // CTAS: plan the query, create the table with its schema, bulk insert; staged.
        let mut query = sqlparser::ast::Statement::Query(query);
        resolve_names(&mut query, &self.ctx, self.case_sensitive()).await?;
        let df = self
            .ctx
            .execute_logical_plan(
                self.ctx
                    .state()
                    .statement_to_plan(DFStatement::Statement(Box::new(query)))
                    .await?,
            )
            .await?;
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
            name: c.name.clone(),
            columns,
            partition_by: c.partitioned_by,
            options: c.options,
        };
        let ordered = spec.ordered_columns()?;
        let storage_dir =
            std::path::PathBuf::from(location.strip_prefix("file://").unwrap_or(&location));
        let (provider, created) = open_or_create(&location, Some(spec), &self.options).await?;
        if !created {
            return Err(HoodieError::Invalid {
                message: format!(
                    "CREATE TABLE ... AS SELECT: a Hudi table already exists at {location}"
                ),
            });
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
        let df = df.select(exprs)?;
        let result = async {
            let mut plan = df.create_physical_plan().await?;
            if plan.output_partitioning().partition_count() > 1 {
                plan = Arc::new(CoalescePartitionsExec::new(plan));
            }
            let write = provider.write_plan(
                plan,
                WriteMode::Insert {
                    operation: WriteOperation::BulkInsert,
                    options: provider.insert_options(false)?,
                },
            );
            let batches = collect(write, self.ctx.task_ctx()).await?;
            Ok::<u64, HoodieError>(count_of(&batches))
        }
        .await;
        match result {
            Ok(_) => {
                self.register(&c.name, provider, managed)?;
                Ok(StatementOutput::Done)
            }
            Err(e) => {
                // staged create: leave nothing behind
                let _ = std::fs::remove_dir_all(&storage_dir);
                Err(e)
            }
        }
    }

    fn register(&self, name: &str, provider: HudiTableProvider, managed: bool) -> Result<()> {
        if managed {
            // managed tables are found through the warehouse; drop any cached copy
            self.warehouse.forget(name);
        } else {
            self.warehouse
                .register_table(name.to_string(), Arc::new(provider))?;
        }
        Ok(())
    }

    async fn create_plain(&self, c: CreateTableUsing) -> Result<StatementOutput> {
        let location = match &c.location {
            Some(l) => l.clone(),
            None => format!("{}/", self.warehouse.table_dir(&c.name).display()),
        };
        if let Some(p) = location.strip_prefix("file://").or(Some(location.as_str())) {
            std::fs::create_dir_all(p).map_err(|source| HoodieError::Io {
                path: p.to_string(),
                source,
            })?;
        }
        let location = if location.ends_with('/') {
            location
        } else {
            format!("{location}/")
        };
        let format = c.format.to_ascii_uppercase();
        let options = if c.options.is_empty() {
            String::new()
        } else {
            let kv: Vec<String> = c
                .options
                .iter()
                .map(|(k, v)| format!("'{}' '{}'", k.replace('\'', "''"), v.replace('\'', "''")))
                .collect();
            format!(" OPTIONS ({})", kv.join(", "))
        };
        let (columns, query) = match (&c.query, c.columns.is_empty()) {
            (Some(q), true) => {
                let df = self.ctx.sql(&q.to_string()).await?;
                (df.schema().as_arrow().fields().iter().map(|f| f.as_ref().clone()).collect::<Vec<_>>(), Some(q.to_string()))
            }
            (Some(_), false) => return Err(HoodieError::Invalid { message: "CREATE TABLE ... AS SELECT takes its columns from the query; drop the column list".into() }),
            (None, _) => (c.columns.clone(), None),
        };
        let cols: Vec<String> = columns
            .iter()
            .map(|f| format!("\"{}\" {}", f.name(), sql_type(f.data_type())))
            .collect();
        let partition = if c.partitioned_by.is_empty() {
            String::new()
        } else {
            format!(" PARTITIONED BY ({})", c.partitioned_by.join(", "))
        };
        let ddl = format!("CREATE EXTERNAL TABLE \"{}\" ({}) STORED AS {format}{partition} LOCATION '{}'{options}", c.name, cols.join(", "), location.replace('\'', "''"));
        self.run_datafusion(&ddl).await?;
        if let Some(q) = query {
            self.run_datafusion(&format!("INSERT INTO \"{}\" {q}", c.name))
                .await?;
        }
        Ok(StatementOutput::Done)
    }

    async fn drop_table(
        &self,
        name: &str,
        if_exists: bool,
        purge: bool,
    ) -> Result<StatementOutput> {
        let Some(t) = self.table_provider(name).await? else {
            return if if_exists {
                Ok(StatementOutput::Done)
            } else {
                Err(HoodieError::TableNotFound {
                    name: name.to_string(),
                })
            };
        };
        if let Some(h) = as_hudi(&t) {
            let location = std::path::PathBuf::from(h.table().storage().location());
            let managed = location.parent() == Some(self.warehouse.dir());
            self.warehouse.deregister_table(name)?;
            self.warehouse.forget(name);
            if managed || purge {
                std::fs::remove_dir_all(&location).map_err(|source| HoodieError::Io {
                    path: location.display().to_string(),
                    source,
                })?;
            }
            return Ok(StatementOutput::Done);
        }
        self.run_datafusion(&format!(
            "DROP TABLE {}\"{name}\"",
            if if_exists { "IF EXISTS " } else { "" }
        ))
        .await
    }

    async fn alter_properties(
        &self,
        name: &str,
        properties: Vec<(String, String)>,
    ) -> Result<StatementOutput> {
        let t = self.hudi_table(name).await?;
        let h = as_hudi(&t).ok_or_else(|| HoodieError::Invalid {
            message: format!("{name} is not a Hudi table"),
        })?;
        let mut table = h.table().clone();
        let mut config = table.config().clone();
        let structural = [
            hoodie_format::config::RECORD_KEY_FIELDS,
            hoodie_format::config::PARTITION_FIELDS,
            hoodie_format::config::TABLE_TYPE,
            hoodie_format::config::TABLE_NAME,
            hoodie_format::config::TABLE_VERSION,
            hoodie_format::config::KEYGEN_CLASS,
            hoodie_format::config::TIMELINE_LAYOUT_VERSION,
            hoodie_format::config::ORDERING_FIELDS,
        ];
        for (k, v) in properties {
            let key = hoodie_format::config::lookup(&k);
            if key.is_some_and(|c| structural.contains(&c)) {
                return Err(HoodieError::Invalid {
                    message: format!("{k} cannot be changed after the table is created"),
                });
            }
            let key = key.map(|c| c.key.to_string()).unwrap_or(k);
            config.set(&key, v);
        }
        table.update_config(config).await?;
        let managed =
            std::path::Path::new(table.storage().location()).parent() == Some(self.warehouse.dir());
        self.warehouse.deregister_table(name)?;
        if !managed {
            let provider = HudiTableProvider::try_new(name, table, self.options.clone()).await?;
            self.warehouse
                .register_table(name.to_string(), Arc::new(provider))?;
        }
        Ok(StatementOutput::Done)
    }
}

/// The Hudi sink a write plan ends in, if any.
fn hudi_sink(plan: &Arc<dyn ExecutionPlan>) -> Option<&HudiSink> {
    let plan: &dyn std::any::Any = plan.as_ref();
    let exec = plan.downcast_ref::<DataSinkExec>()?;
    let sink: &dyn std::any::Any = exec.sink();
    sink.downcast_ref::<HudiSink>()
}

fn count_of(batches: &[RecordBatch]) -> u64 {
    batches
        .iter()
        .filter_map(|b| {
            b.column(0)
                .as_any()
                .downcast_ref::<UInt64Array>()
                .map(|c| c.iter().flatten().sum::<u64>())
        })
        .sum()
}

fn sql_type(dt: &DataType) -> String {
    match dt {
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 => "VARCHAR".into(),
        DataType::Int8 => "TINYINT".into(),
        DataType::Int16 => "SMALLINT".into(),
        DataType::Int32 => "INT".into(),
        DataType::Int64 => "BIGINT".into(),
        DataType::Float32 => "FLOAT".into(),
        DataType::Float64 => "DOUBLE".into(),
        DataType::Boolean => "BOOLEAN".into(),
        DataType::Date32 => "DATE".into(),
        DataType::Timestamp(_, _) => "TIMESTAMP".into(),
        DataType::Decimal128(p, s) => format!("DECIMAL({p},{s})"),
        DataType::Binary | DataType::BinaryView | DataType::LargeBinary => "BYTEA".into(),
        other => other.to_string(),
    }
}
