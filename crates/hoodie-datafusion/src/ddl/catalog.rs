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
use hoodie_format::storage::TableStorage;
use hoodie_format::HudiTable;

use crate::error::HoodieError;
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

    /// The store options of an object-store warehouse (none for a local one).
    pub fn storage_options(&self) -> &[(String, String)] {
        match &self.root {
            Root::Local(_) => &[],
            Root::Store { options, .. } => options,
        }
    }

    /// Whether a Hudi table is at the warehouse's directory `name`.
    fn holds(&self, name: &str) -> bool {
        match &self.root {
            Root::Local(dir) => dir.join(name).join(".hoodie/hoodie.properties").is_file(),
            Root::Store { storage, .. } => {
                let rel = format!("{name}/.hoodie/hoodie.properties");
                let storage = storage.clone();
                crate::scan::functions::block_on(async move { storage.exists(&rel).await })
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
                    .filter(|e| e.path().join(".hoodie/hoodie.properties").is_file())
                    .filter_map(|e| e.file_name().to_str().map(str::to_string))
                    .collect()
            }
            Root::Store { storage, .. } => {
                let storage = storage.clone();
                let names =
                    crate::scan::functions::block_on(async move { storage.list_dirs("").await });
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

#[async_trait]
impl SchemaProvider for WarehouseSchema {
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
        let storage = match &self.root {
            Root::Local(dir) => {
                let dir = dir.join(name);
                if !dir.join(".hoodie/hoodie.properties").is_file() {
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
