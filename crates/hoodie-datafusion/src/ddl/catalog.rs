//! The warehouse as a catalog: every Hudi table in a sub-directory of the warehouse is a table
//! of the session, named after its directory, as a Spark user expects of a metastore. The
//! warehouse is a local directory or a folder of an object store (`s3://bucket/warehouse`).
//! Tables registered in the session (external tables, plain tables, Hudi tables at a LOCATION
//! outside the warehouse) live for the session only.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use datafusion::catalog::SchemaProvider;
use datafusion::datasource::TableProvider;
use datafusion::error::Result as DFResult;
use datafusion::logical_expr::TableType;
use hoodie_format::storage::TableStorage;
use hoodie_format::table_config::{PROPERTIES_BACKUP, PROPERTIES_FILE};
use hoodie_format::HudiTable;

use crate::ddl::table_name::name_problem;
use crate::error::{DdlError, HoodieError};
use crate::provider::HudiTableProvider;

/// The warehouse schema of a hoodie session.
///
/// Clones share the tables they hold.
#[derive(Debug, Clone)]
pub struct WarehouseSchema {
    root: Root,
    tables: Arc<RwLock<HashMap<String, Arc<dyn TableProvider>>>>,
}

/// Where the warehouse is.
#[derive(Debug, Clone)]
enum Root {
    /// A local directory.
    Local(PathBuf),
    /// A folder of an object store: its URL (no trailing `/`) and the store's options.
    Store {
        url: String,
        options: Vec<(String, String)>,
        storage: TableStorage,
    },
}

impl WarehouseSchema {
    /// A schema over the warehouse directory `dir`.
    pub fn new(dir: PathBuf) -> Self {
        Self::with_root(Root::Local(dir))
    }

    /// A schema over the warehouse at `url`, a folder of an object store configured by
    /// `options` (object_store's keys).
    pub fn on_store(url: &str, options: Vec<(String, String)>) -> Result<Self, HoodieError> {
        let url = url.trim_end_matches('/').to_string();
        let storage = hoodie_format::location::open_location(&url, &options)?;
        Ok(Self::with_root(Root::Store {
            url,
            options,
            storage,
        }))
    }

    fn with_root(root: Root) -> Self {
        Self {
            root,
            tables: Arc::new(RwLock::new(HashMap::new())),
        }
    }

    /// Where a managed table `name` lives: a directory of the warehouse.
    pub fn table_location(&self, name: &str) -> String {
        match &self.root {
            Root::Local(dir) => dir.join(name).display().to_string(),
            Root::Store { url, .. } => format!("{url}/{name}"),
        }
    }

    /// The warehouse: its directory or URL.
    pub fn location(&self) -> String {
        match &self.root {
            Root::Local(dir) => dir.display().to_string(),
            Root::Store { url, .. } => url.clone(),
        }
    }

    /// The warehouse directory, if it is on local disk.
    pub fn local_dir(&self) -> Option<&Path> {
        match &self.root {
            Root::Local(dir) => Some(dir),
            Root::Store { .. } => None,
        }
    }

    /// Whether the table at `location` is a table of the warehouse (its directory is one of
    /// the warehouse's own).
    pub fn is_managed(&self, location: &str) -> bool {
        match &self.root {
            Root::Local(dir) => Path::new(location).parent() == Some(dir.as_path()),
            Root::Store { url, .. } => location
                .trim_end_matches('/')
                .rsplit_once('/')
                .is_some_and(|(parent, _)| parent == url),
        }
    }

    /// Refuses a table `LOCATION` that is the warehouse or a folder above it: the table's
    /// `.hoodie/` would make the warehouse itself a table, and dropping it would delete
    /// every table in it.
    pub fn check_table_location(&self, location: &str) -> Result<(), HoodieError> {
        check_not_above(location, &self.location())
    }

    /// Refuses to delete the table folder at `location` unless it is a Hudi table's folder
    /// (it holds `.hoodie/`) that is neither the warehouse nor a folder above it: what a DROP
    /// TABLE deletes.
    pub fn check_deletable(&self, location: &str) -> Result<(), HoodieError> {
        let refuse = |why: &str| {
            HoodieError::from(DdlError::UnsafeDelete {
                location: location.to_string(),
                why: why.to_string(),
            })
        };
        match &self.root {
            Root::Local(warehouse) => {
                let dir = std::fs::canonicalize(location).map_err(|source| HoodieError::Io {
                    path: location.to_string(),
                    source,
                })?;
                if warehouse.starts_with(&dir) {
                    return Err(refuse(&format!(
                        "it is the warehouse {} or a folder above it",
                        warehouse.display()
                    )));
                }
                if !dir.join(".hoodie").is_dir() {
                    return Err(refuse(
                        "it is not a Hudi table's folder (no .hoodie/ in it)",
                    ));
                }
            }
            Root::Store { url, .. } => {
                let loc = location.trim_end_matches('/');
                if url == loc || url.starts_with(&format!("{loc}/")) {
                    return Err(refuse(&format!(
                        "it is the warehouse {url} or a folder above it"
                    )));
                }
            }
        }
        Ok(())
    }

    /// The store options of an object-store warehouse (none for a local one).
    pub fn storage_options(&self) -> &[(String, String)] {
        match &self.root {
            Root::Local(_) => &[],
            Root::Store { options, .. } => options,
        }
    }

    /// Whether a Hudi table is at the warehouse's directory `name`.
    fn holds(&self, name: &str) -> bool {
        if name_problem(name).is_some() {
            return false;
        }
        match &self.root {
            Root::Local(dir) => is_table_dir(&dir.join(name)),
            Root::Store { storage, .. } => {
                let storage = storage.clone();
                let name = name.to_string();
                crate::blocking::block_on(async move {
                    for file in [PROPERTIES_FILE, PROPERTIES_BACKUP] {
                        if storage.exists(&format!("{name}/{file}")).await? {
                            return Ok(true);
                        }
                    }
                    Ok::<_, hoodie_format::FormatError>(false)
                })
                .ok()
                .and_then(|r| r.ok())
                .unwrap_or(false)
            }
        }
    }

    fn warehouse_table_names(&self) -> Vec<String> {
        match &self.root {
            Root::Local(dir) => {
                let Ok(entries) = std::fs::read_dir(dir) else {
                    return vec![];
                };
                entries
                    .flatten()
                    .filter(|e| is_table_dir(&e.path()))
                    .filter_map(|e| e.file_name().to_str().map(str::to_string))
                    .collect()
            }
            Root::Store { storage, .. } => {
                let storage = storage.clone();
                let names = crate::blocking::block_on(async move { storage.list_dirs("").await });
                let names = names.ok().and_then(|r| r.ok()).unwrap_or_default();
                names.into_iter().filter(|n| self.holds(n)).collect()
            }
        }
    }

    /// Forgets a table of the session (the next access re-opens it from the warehouse).
    pub fn forget(&self, name: &str) {
        self.tables
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
    }
}

/// Refuses a table `location` that is `warehouse` (a local directory or an object-store URL)
/// or a folder above it: the table's `.hoodie/` would make the warehouse itself a table, and
/// dropping it would delete every table in it.
pub fn check_not_above(location: &str, warehouse: &str) -> Result<(), HoodieError> {
    let local =
        |l: &str| hoodie_format::location::scheme(l).is_none_or(|s| s.eq_ignore_ascii_case("file"));
    let above = if local(warehouse) && local(location) {
        let path = |l: &str| PathBuf::from(l.strip_prefix("file://").unwrap_or(l));
        match (
            std::fs::canonicalize(path(location)),
            std::fs::canonicalize(path(warehouse)),
        ) {
            (Ok(dir), Ok(wh)) => wh.starts_with(dir),
            _ => false,
        }
    } else {
        let (loc, wh) = (
            location.trim_end_matches('/'),
            warehouse.trim_end_matches('/'),
        );
        wh == loc || wh.starts_with(&format!("{loc}/"))
    };
    if above {
        return Err(DdlError::LocationHoldsWarehouse {
            location: location.to_string(),
            warehouse: warehouse.to_string(),
        }
        .into());
    }
    Ok(())
}

/// Whether `dir` holds a Hudi table: its `hoodie.properties`, or the backup an update left.
fn is_table_dir(dir: &Path) -> bool {
    dir.join(PROPERTIES_FILE).is_file() || dir.join(PROPERTIES_BACKUP).is_file()
}

#[async_trait]
impl SchemaProvider for WarehouseSchema {
    /// Every table of the warehouse is a base table; answered without opening it, so that one
    /// table that cannot be opened does not fail a listing of them all (`SHOW TABLES`).
    async fn table_type(&self, name: &str) -> DFResult<Option<TableType>> {
        if let Some(t) = self
            .tables
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
        {
            return Ok(Some(t.table_type()));
        }
        Ok(self.holds(name).then_some(TableType::Base))
    }

    fn table_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .tables
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect();
        names.extend(self.warehouse_table_names());
        names.sort();
        names.dedup();
        names
    }

    async fn table(&self, name: &str) -> DFResult<Option<Arc<dyn TableProvider>>> {
        if let Some(t) = self
            .tables
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
        {
            return Ok(Some(t.clone()));
        }
        // `..` or `a/b` would open a folder outside the warehouse or below another one
        if name_problem(name).is_some() {
            return Ok(None);
        }
        let storage = match &self.root {
            Root::Local(dir) => {
                let dir = dir.join(name);
                if !is_table_dir(&dir) {
                    return Ok(None);
                }
                TableStorage::local(&dir)
            }
            Root::Store { options, .. } => {
                hoodie_format::location::open_location(&self.table_location(name), options)
            }
        }
        .map_err(|e| HoodieError::from(e).into_datafusion())?;
        if !HudiTable::exists(&storage)
            .await
            .map_err(|e| HoodieError::from(e).into_datafusion())?
        {
            return Ok(None);
        }
        let table = HudiTable::open(storage)
            .await
            .map_err(|e| HoodieError::from(e).into_datafusion())?;
        let provider: Arc<dyn TableProvider> = Arc::new(
            HudiTableProvider::try_new(name, table)
                .await
                .map_err(HoodieError::into_datafusion)?,
        );
        self.tables
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), provider.clone());
        Ok(Some(provider))
    }

    fn register_table(
        &self,
        name: String,
        table: Arc<dyn TableProvider>,
    ) -> DFResult<Option<Arc<dyn TableProvider>>> {
        Ok(self
            .tables
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name, table))
    }

    fn deregister_table(&self, name: &str) -> DFResult<Option<Arc<dyn TableProvider>>> {
        Ok(self
            .tables
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name))
    }

    fn table_exist(&self, name: &str) -> bool {
        self.tables
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(name)
            || self.holds(name)
    }
}
