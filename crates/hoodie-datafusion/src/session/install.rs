//! [`HoodieOptions`] and [`SessionStateBuilderExt::with_hoodie`]: hoodie installed into a
//! user's DataFusion session the way DataFusion's own extensions are.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::catalog::{CatalogProvider, MemoryCatalogProvider};
use datafusion::catalog::{MemoryCatalogProviderList, SchemaProvider};
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::prelude::SessionConfig;

use super::planner::HoodieQueryPlanner;
use crate::ddl::catalog::WarehouseSchema;
use crate::ddl::factory::HudiTableFactory;
use crate::ddl::stores::StoreRegisteringFactory;
use crate::dml::HudiDmlRule;
use crate::options::session::{HoodieSessionConfig, SparkSessionConfig};

/// The catalog a session's warehouse is registered as, unless [`HoodieOptions::with_catalog`]
/// names another.
pub const DEFAULT_CATALOG: &str = "hoodie";
/// The schema (Spark's database) of the warehouse in its catalog.
pub const DEFAULT_SCHEMA: &str = "default";

/// What [`SessionStateBuilderExt::with_hoodie`] installs.
#[derive(Debug, Clone)]
pub struct HoodieOptions {
    warehouse: PathBuf,
    catalog: String,
    schema: String,
    options: Vec<(String, String)>,
}

impl HoodieOptions {
    /// Options over the warehouse `warehouse`: a local directory or `file://` URL (created
    /// when missing), or a folder of an object store (`s3://bucket/warehouse`, configured by
    /// the environment and the object-store options given with [`Self::with_option`]), under
    /// which `CREATE TABLE` without `LOCATION` creates tables, and in which every Hudi table is
    /// a table of the catalog `hoodie.default`.
    pub fn new(warehouse: impl AsRef<str>) -> Self {
        let w = warehouse.as_ref();
        Self {
            warehouse: PathBuf::from(w.strip_prefix("file://").unwrap_or(w)),
            catalog: DEFAULT_CATALOG.to_string(),
            schema: DEFAULT_SCHEMA.to_string(),
            options: Vec::new(),
        }
    }

    /// Registers the warehouse as `catalog.schema` instead of `hoodie.default`.
    pub fn with_catalog(mut self, catalog: impl Into<String>, schema: impl Into<String>) -> Self {
        self.catalog = catalog.into();
        self.schema = schema.into();
        self
    }

    /// Starts every session with `key = value` set (as a `SET` would): a `hoodie.*` key, or an
    /// object-store option (`aws_region`, `fs.s3a.endpoint`, ...) for the tables it opens.
    /// `datafusion.*` and `distributed.*` keys are left to the session's own config (set on
    /// its `SessionConfig`; [`crate::HoodieContext`] sets those of its options).
    pub fn with_option(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.options.push((key.into(), value.into()));
        self
    }

    /// The warehouse directory.
    pub fn warehouse(&self) -> &Path {
        &self.warehouse
    }

    /// The catalog and schema the warehouse is registered as.
    pub fn warehouse_schema(&self) -> (&str, &str) {
        (&self.catalog, &self.schema)
    }
}

/// hoodie's installer on DataFusion's [`SessionStateBuilder`].
pub trait SessionStateBuilderExt {
    /// Installs hoodie: the `STORED AS HUDI` table factory, the warehouse as a catalog of its
    /// own (`datafusion.public` is left as it is), the analyzer rule that plans UPDATE, DELETE
    /// and MERGE on Hudi tables, a query planner composed with the builder's (a query planner
    /// set before this call keeps planning everything that does not write a Hudi table), and
    /// the `hoodie.*` / `spark.*` options as config extensions.
    ///
    /// Call it after `with_config` and `with_query_planner`, which replace what they set.
    ///
    /// ```
    /// use datafusion::execution::session_state::SessionStateBuilder;
    /// use datafusion::prelude::SessionContext;
    /// use hoodie_datafusion::prelude::*;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> datafusion::error::Result<()> {
    /// let dir = tempfile::tempdir()?;
    /// let state = SessionStateBuilder::new()
    ///     .with_default_features()
    ///     .with_hoodie(HoodieOptions::new(dir.path().to_string_lossy()))
    ///     .build();
    /// let ctx = SessionContext::new_with_state(state);
    /// ctx.sql("SET hoodie.datasource.write.operation = 'insert'").await?;
    /// ctx.hudi_sql("CREATE TABLE t (id INT, name STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')")
    ///     .await?;
    /// // plain SQL names the columns: `INSERT INTO t VALUES` would mean the meta columns too
    /// ctx.sql("INSERT INTO hoodie.default.t (id, name) VALUES (1, 'a')").await?.collect().await?;
    /// // the Spark dialect takes the data columns alone
    /// ctx.hudi_sql("INSERT INTO hoodie.default.t VALUES (2, 'b')").await?.collect().await?;
    /// let rows = ctx.sql("SELECT name FROM hoodie.default.t").await?.collect().await?;
    /// assert_eq!(rows.iter().map(|b| b.num_rows()).sum::<usize>(), 2);
    /// # Ok(())
    /// # }
    /// ```
    fn with_hoodie(self, options: HoodieOptions) -> SessionStateBuilder;
}

impl SessionStateBuilderExt for SessionStateBuilder {
    fn with_hoodie(mut self, options: HoodieOptions) -> SessionStateBuilder {
        let mut hoodie = HoodieSessionConfig::default();
        for (k, v) in &options.options {
            // DataFusion's own keys are the session config's (HoodieContext sets them)
            if k.starts_with("datafusion.") || k.starts_with("distributed.") {
                continue;
            }
            if !hoodie.set_storage(k, v) {
                hoodie.insert(k, v);
            }
        }
        hoodie.set_warehouse(&options.catalog, &options.schema);
        hoodie.set_warehouse_location(&options.warehouse().to_string_lossy());
        let config = self.config().get_or_insert_with(SessionConfig::new);
        let extensions = &mut config.options_mut().extensions;
        extensions.insert(hoodie);
        extensions.insert(SparkSessionConfig::default());

        let factories = self.table_factories().get_or_insert_with(Default::default);
        // plain tables at object-store locations read and write through the store hoodie
        // builds for the location
        for factory in factories.values_mut() {
            *factory = Arc::new(StoreRegisteringFactory::new(factory.clone()));
        }
        factories.insert("HUDI".to_string(), Arc::new(HudiTableFactory));

        let list = self
            .catalog_list()
            .get_or_insert_with(|| Arc::new(MemoryCatalogProviderList::new()))
            .clone();
        let catalog = list.catalog(&options.catalog).unwrap_or_else(|| {
            let c: Arc<dyn CatalogProvider> = Arc::new(MemoryCatalogProvider::new());
            list.register_catalog(options.catalog.clone(), c.clone());
            c
        });
        // a catalog that refuses new schemas (or a warehouse URL no store takes) leaves the
        // warehouse out; its tables are still reached through LOCATION and hudi_sql
        if let Ok(warehouse) = warehouse_schema(&options) {
            let _ = catalog.register_schema(
                &options.schema,
                Arc::new(warehouse) as Arc<dyn SchemaProvider>,
            );
        }

        // hoodie's table functions beside DataFusion's own
        let functions = self.table_functions().get_or_insert_with(|| {
            datafusion::execution::SessionStateDefaults::default_table_functions()
                .into_iter()
                .map(|f| (f.name().to_string(), f))
                .collect()
        });
        for (name, f) in crate::table_functions::table_functions() {
            functions.insert(
                name.to_string(),
                Arc::new(datafusion::catalog::TableFunction::new(name.to_string(), f)),
            );
        }

        let inner = self.query_planner().take();
        *self.query_planner() = Some(Arc::new(HoodieQueryPlanner::new(inner)));
        self.with_analyzer_rule(Arc::new(HudiDmlRule))
    }
}

/// The warehouse of `options`: a local directory, or a folder of an object store configured by
/// the object-store options among `options` (over the environment's).
pub(crate) fn warehouse_schema(
    options: &HoodieOptions,
) -> Result<WarehouseSchema, crate::error::HoodieError> {
    let text = options.warehouse.to_string_lossy();
    match hoodie_format::location::scheme(&text) {
        Some(s) if !s.eq_ignore_ascii_case("file") => {
            let store: Vec<(String, String)> = options
                .options
                .iter()
                .filter_map(|(k, v)| hoodie_format::location::storage_option(k, v))
                .collect();
            WarehouseSchema::on_store(&text, store)
        }
        _ => Ok(WarehouseSchema::new(warehouse_dir(&options.warehouse))),
    }
}

/// The warehouse directory, created when missing, as an absolute path (so that a table's
/// location can be told to be inside it).
fn warehouse_dir(dir: &Path) -> PathBuf {
    // a directory that cannot be created fails the first statement that needs it, with the
    // path in the error
    let _ = std::fs::create_dir_all(dir);
    std::fs::canonicalize(dir)
        .or_else(|_| std::path::absolute(dir))
        .unwrap_or_else(|_| dir.to_path_buf())
}
