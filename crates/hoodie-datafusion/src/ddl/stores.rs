//! Plain tables (Parquet, CSV, JSON, ...) at object-store locations. DataFusion's listing tables
//! find their store in the session's registry by the location's scheme and bucket, so the
//! factories of those formats register it first, built as hoodie builds a Hudi table's store
//! (`hoodie_format::location`, with the session's storage options). A warehouse on an object
//! store puts `CREATE TABLE ... USING parquet` there too.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{Session, TableProviderFactory};
use datafusion::datasource::TableProvider;
use datafusion::error::Result as DFResult;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::CreateExternalTable;

use crate::error::HoodieError;

/// A format's table factory that first registers the object store of the table's location.
#[derive(Debug)]
pub struct StoreRegisteringFactory {
    inner: Arc<dyn TableProviderFactory>,
}

impl StoreRegisteringFactory {
    /// Wraps `inner`, the format's own factory.
    pub fn new(inner: Arc<dyn TableProviderFactory>) -> Self {
        Self { inner }
    }
}

#[async_trait]
impl TableProviderFactory for StoreRegisteringFactory {
    async fn create(
        &self,
        state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> DFResult<Arc<dyn TableProvider>> {
        for location in &cmd.locations {
            register_store(state, location)?;
        }
        self.inner.create(state, cmd).await
    }
}

/// Registers the object store of `location` in the session's runtime under its scheme and
/// bucket (`s3://bucket`), unless the location is on local disk or a store is registered
/// there already.
pub fn register_store(state: &dyn Session, location: &str) -> DFResult<()> {
    let Some(scheme) = hoodie_format::location::scheme(location) else {
        return Ok(());
    };
    if scheme.eq_ignore_ascii_case("file") {
        return Ok(());
    }
    let rest = &location[scheme.len() + 3..];
    let bucket = rest.split('/').next().unwrap_or_default();
    let root = ObjectStoreUrl::parse(format!("{scheme}://{bucket}"))?;
    let runtime = state.runtime_env();
    if runtime.object_store(&root).is_ok() {
        return Ok(());
    }
    let options = crate::options::session::storage_options(state.config_options());
    let storage = hoodie_format::location::open_location(location, &options)
        .map_err(|e| HoodieError::from(e).into_datafusion())?;
    runtime.register_object_store(root.as_ref(), storage.store().clone());
    Ok(())
}
