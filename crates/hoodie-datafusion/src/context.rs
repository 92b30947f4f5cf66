//! [`HoodieContext`]: the session the `hoodie` shell and `hoodie-slt` run SQL through, a
//! DataFusion session built with [`with_hoodie`](crate::SessionStateBuilderExt::with_hoodie)
//! whose unqualified names resolve in the warehouse.

use std::path::PathBuf;
use std::sync::Arc;

use datafusion::arrow::array::{Array, UInt64Array};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{CatalogProvider, MemoryCatalogProvider, MemorySchemaProvider};
use datafusion::error::Result as DFResult;
use datafusion::execution::memory_pool::{FairSpillPool, TrackConsumersPool};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::collect;
use datafusion::prelude::{SessionConfig, SessionContext};

use std::sync::atomic::{AtomicBool, Ordering};

use hoodie_format::write::{rollback_abandoned_writes, wait_for_no_writes, RolledBack};

use crate::error::{HoodieError, Result};
use crate::options::session::HoodieSessionConfig;
use crate::session::install::{HoodieOptions, SessionStateBuilderExt};
use crate::sink::WriteCounts;

/// How a [`HoodieContext`] is set up.
#[derive(Debug, Clone)]
pub struct HoodieConfig {
    /// Directory under which tables created without LOCATION live; it is also the catalog:
    /// every Hudi table under it is visible in a new session.
    pub warehouse: PathBuf,
    /// Upper bound of the DataFusion memory pool in bytes (None: unbounded).
    pub memory_limit: Option<usize>,
    /// Options every session starts with (as `SET key = value`): `hoodie.*` keys and
    /// object-store options for the tables it opens by location (`aws_endpoint`, ...).
    pub options: Vec<(String, String)>,
    /// A change to the session made after hoodie is installed (None: none), such as
    /// hoodie-distributed's workers.
    pub extension: Option<SessionExtension>,
}

/// A change a [`HoodieContext`] makes to its session state as it builds it, after installing
/// hoodie.
#[derive(Clone)]
pub struct SessionExtension(
    pub Arc<dyn Fn(SessionStateBuilder) -> DFResult<SessionStateBuilder> + Send + Sync>,
);

impl std::fmt::Debug for SessionExtension {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionExtension")
    }
}

impl HoodieConfig {
    /// A config with the given warehouse and no memory limit.
    pub fn new(warehouse: impl Into<PathBuf>) -> Self {
        Self {
            warehouse: warehouse.into(),
            memory_limit: None,
            options: Vec::new(),
            extension: None,
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
    /// A write to a Hudi table: what it did, as its sink's metrics report it (the affected
    /// rows are inserted + updated + deleted).
    Changed(WriteCounts),
    /// A statement with no result (DDL, SET, ...).
    Done,
}

/// A DataFusion session with hoodie installed and the warehouse as its default schema.
pub struct HoodieContext {
    ctx: SessionContext,
    config: HoodieConfig,
    /// Set when a statement's future was dropped before it finished (see [`HoodieContext::run`]).
    cancelled: AtomicBool,
}

/// Sets its flag when dropped armed: a statement's future dropped before it finished.
struct CancelWatch<'a>(&'a AtomicBool, bool);

impl Drop for CancelWatch<'_> {
    fn drop(&mut self) {
        if self.1 {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}

/// How long the statement after a cancelled one waits for the cancelled write to stop.
const CANCELLED_WRITE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

impl HoodieContext {
    /// Creates a session over `config.warehouse` (created if missing).
    pub async fn new(config: HoodieConfig) -> Result<Self> {
        let text = config.warehouse.to_string_lossy().to_string();
        let on_store =
            hoodie_format::location::scheme(&text).is_some_and(|s| !s.eq_ignore_ascii_case("file"));
        if on_store {
            // a URL no store takes fails here, with the reason
            let store: Vec<(String, String)> = config
                .options
                .iter()
                .filter_map(|(k, v)| hoodie_format::location::storage_option(k, v))
                .collect();
            crate::ddl::catalog::WarehouseSchema::on_store(&text, store)?;
        } else {
            std::fs::create_dir_all(&config.warehouse).map_err(|source| HoodieError::Io {
                path: config.warehouse.display().to_string(),
                source,
            })?;
        }
        let warehouse = if on_store {
            config.warehouse.clone()
        } else {
            std::fs::canonicalize(&config.warehouse).map_err(|source| HoodieError::Io {
                path: config.warehouse.display().to_string(),
                source,
            })?
        };
        let mut runtime = RuntimeEnvBuilder::new();
        if let Some(limit) = config.memory_limit {
            // a write that does not fit names the largest consumers in its error
            runtime = runtime.with_memory_pool(Arc::new(TrackConsumersPool::new(
                FairSpillPool::new(limit),
                std::num::NonZeroUsize::new(5).expect("non-zero"),
            )));
        }
        let options = config.options.iter().fold(
            HoodieOptions::new(warehouse.to_string_lossy()),
            |o, (k, v)| o.with_option(k.clone(), v.clone()),
        );
        let (catalog, schema) = options.warehouse_schema();
        // unqualified names resolve in the warehouse, as in a Spark session's current database;
        // DataFusion's own default catalog is added below
        let mut session_config = SessionConfig::new()
            .with_information_schema(true)
            .with_default_catalog_and_schema(catalog, schema)
            .with_create_default_catalog_and_schema(false);
        // Parquet scans decode the filter columns first and the rest only for matching rows:
        // UPDATE/DELETE change sets and point lookups select a few rows of many. `SET
        // datafusion.execution.parquet.pushdown_filters = false` turns it off.
        let parquet = &mut session_config.options_mut().execution.parquet;
        parquet.pushdown_filters = true;
        parquet.reorder_filters = true;
        let builder = SessionStateBuilder::new()
            .with_config(session_config)
            .with_runtime_env(runtime.build_arc()?)
            .with_default_features()
            .with_hoodie(options);
        let mut state = match &config.extension {
            Some(extension) => (extension.0)(builder)?,
            None => builder,
        }
        .build();
        // DataFusion's own options, and those of an extension (a cluster's `distributed.*`),
        // as `SET` takes them; hoodie's and the stores' went to `with_hoodie`
        for (key, value) in &config.options {
            if key.starts_with("datafusion.") || key.starts_with("distributed.") {
                state.config_mut().options_mut().set(key, value)?;
            }
        }
        let ctx = SessionContext::new_with_state(state);
        let public = MemoryCatalogProvider::new();
        public.register_schema("public", Arc::new(MemorySchemaProvider::new()))?;
        ctx.register_catalog("datafusion", Arc::new(public));
        Ok(Self {
            ctx,
            config: HoodieConfig {
                warehouse,
                ..config
            },
            cancelled: AtomicBool::new(false),
        })
    }

    /// The warnings of the statements run since the last call (an unknown `hoodie.*` key in a
    /// `SET`, with the closest known key), for a shell to print.
    pub fn take_warnings(&self) -> Vec<String> {
        let state = self.ctx.state_ref();
        let mut state = state.write();
        state
            .config_mut()
            .options_mut()
            .extensions
            .get_mut::<HoodieSessionConfig>()
            .map(HoodieSessionConfig::take_warnings)
            .unwrap_or_default()
    }

    /// The underlying DataFusion session.
    pub fn session(&self) -> &SessionContext {
        &self.ctx
    }

    /// The configuration this session was made with.
    pub fn config(&self) -> &HoodieConfig {
        &self.config
    }

    /// Runs one statement to completion.
    ///
    /// ```
    /// use hoodie_datafusion::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), hoodie_datafusion::HoodieError> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let ctx = HoodieContext::new(HoodieConfig::new(dir.path().join("warehouse"))).await?;
    /// ctx.run("CREATE TABLE t (id INT, v STRING, ts INT) USING hudi \
    ///          TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', \
    ///          'hoodie.spark.sql.insert.into.operation' = 'upsert')").await?;
    /// ctx.run("INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 1)").await?;
    /// // an upsert (the table asks for them): key 1 is updated, key 3 inserted; the sink's
    /// // metrics say which
    /// let StatementOutput::Changed(c) = ctx.run("INSERT INTO t VALUES (1, 'c', 2), (3, 'd', 1)").await? else {
    ///     panic!("a Hudi write reports what it changed");
    /// };
    /// assert_eq!((c.inserted, c.updated, c.affected()), (1, 1, 2));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// A statement whose future is dropped before it finishes (a timeout, a cancelled task)
    /// leaves its write pending; the next `run` rolls it back first, as it does right away
    /// for a statement that fails (see [`HoodieContext::rollback_abandoned`]).
    pub async fn run(&self, sql: &str) -> Result<StatementOutput> {
        if self.cancelled.swap(false, Ordering::SeqCst) {
            // the cancelled statement's write may live on in a task the runtime aborts a
            // moment later; it is recorded as abandoned when it is dropped
            wait_for_no_writes(CANCELLED_WRITE_WAIT).await;
        }
        self.rollback_abandoned().await?;
        let mut watch = CancelWatch(&self.cancelled, true);
        let outcome = self.run_statement(sql).await;
        watch.1 = false;
        if outcome.is_err() {
            // the statement's error is what the caller needs; a failed rollback is retried
            // before the next statement
            let _ = self.rollback_abandoned().await;
        }
        outcome
    }

    /// Rolls back the writes of this process that were abandoned before they committed (their
    /// statement was cancelled or failed) and are still pending: exactly those instants, never
    /// another writer's. Returns them (table location and instant time).
    pub async fn rollback_abandoned(&self) -> Result<Vec<RolledBack>> {
        Ok(rollback_abandoned_writes().await?)
    }

    async fn run_statement(&self, sql: &str) -> Result<StatementOutput> {
        let df = crate::sql::run(&self.ctx, sql).await?;
        let plan = df.logical_plan();
        let writes = matches!(plan, LogicalPlan::Dml(_) | LogicalPlan::Extension(_));
        let done = match plan {
            LogicalPlan::EmptyRelation(e) => e.schema.fields().is_empty(),
            LogicalPlan::Ddl(_) | LogicalPlan::Statement(_) => true,
            _ => false,
        };
        if writes {
            let physical = df.create_physical_plan().await?;
            let batches = collect(physical.clone(), self.ctx.task_ctx()).await?;
            return Ok(match WriteCounts::of_plan(physical.as_ref()) {
                Some(counts) => StatementOutput::Changed(counts),
                None => StatementOutput::Count(count_of(&batches)),
            });
        }
        let schema: SchemaRef = df.schema().inner().clone();
        let batches = df.collect().await?;
        if done {
            return Ok(StatementOutput::Done);
        }
        Ok(StatementOutput::Rows { schema, batches })
    }
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
