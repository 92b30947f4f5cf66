//! The warehouse as a catalog: every Hudi table in a sub-directory of the warehouse is a table
//! of the session, named after its directory, as a Spark user expects of a metastore.
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
    dir: PathBuf,
    tables: Arc<RwLock<HashMap<String, Arc<dyn TableProvider>>>>,
}

impl WarehouseSchema {
    /// A schema over the warehouse directory `dir`.
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            tables: Arc::new(RwLock::new(HashMap::new())),
        }
    }

    /// The directory a managed table `name` lives in.
    pub fn table_dir(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The warehouse directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn warehouse_table_names(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return vec![];
        };
        entries
            .flatten()
            .filter(|e| e.path().join(".hoodie/hoodie.properties").is_file())
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .collect()
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
        let dir = self.table_dir(name);
        if !dir.join(".hoodie/hoodie.properties").is_file() {
            return Ok(None);
        }
        let storage =
            TableStorage::local(&dir).map_err(|e| HoodieError::from(e).into_datafusion())?;
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
            || self
                .table_dir(name)
                .join(".hoodie/hoodie.properties")
                .is_file()
    }
}
