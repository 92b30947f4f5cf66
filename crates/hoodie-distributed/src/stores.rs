//! The object stores of a worker: a table's store opened from the location its URL names.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::object_store::{DefaultObjectStoreRegistry, ObjectStoreRegistry};
use hoodie_format::storage::{location_of_store_url, TableStorage};
use object_store::ObjectStore;
use url::Url;

/// A worker's object store registry: a `hoodie-store://` URL (a table's store, as the session
/// registered it) opens the store of the location it names, with the worker's own storage
/// options and environment (no credentials travel with a plan); any other URL is DataFusion's.
#[derive(Debug)]
pub struct HoodieStores {
    options: Vec<(String, String)>,
    opened: Mutex<HashMap<String, TableStorage>>,
    others: DefaultObjectStoreRegistry,
}

impl HoodieStores {
    /// Stores opened with the object-store `options` (object_store's keys) over the
    /// environment's settings.
    pub fn new(options: Vec<(String, String)>) -> Self {
        Self {
            options,
            opened: Mutex::default(),
            others: DefaultObjectStoreRegistry::new(),
        }
    }

    /// The storage of the table at `location`, opened once per worker.
    pub fn storage(&self, location: &str) -> hoodie_format::Result<TableStorage> {
        let mut opened = self.opened.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(storage) = opened.get(location) {
            return Ok(storage.clone());
        }
        let storage = hoodie_format::location::open_location(location, &self.options)?;
        opened.insert(location.to_string(), storage.clone());
        Ok(storage)
    }
}

impl ObjectStoreRegistry for HoodieStores {
    fn register_store(
        &self,
        url: &Url,
        store: Arc<dyn ObjectStore>,
    ) -> Option<Arc<dyn ObjectStore>> {
        self.others.register_store(url, store)
    }

    fn deregister_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        self.others.deregister_store(url)
    }

    fn get_store(&self, url: &Url) -> Result<Arc<dyn ObjectStore>> {
        let Some(location) = location_of_store_url(url) else {
            return self.others.get_store(url);
        };
        let storage = self
            .storage(&location)
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        Ok(storage.store().clone())
    }
}
