//! `CREATE EXTERNAL TABLE ... STORED AS HUDI LOCATION '...'`: opens an existing Hudi table, or
//! creates one when columns are given and nothing is at the location.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{Session, TableProviderFactory};
use datafusion::datasource::TableProvider;
use datafusion::error::Result as DFResult;
use datafusion::logical_expr::CreateExternalTable;
use hoodie_format::storage::TableStorage;
use hoodie_format::HudiTable;

use crate::ddl::spec::TableSpec;
use crate::error::{DdlError, HoodieError};
use crate::provider::HudiTableProvider;

/// The table factory registered for `STORED AS HUDI`.
#[derive(Debug, Default)]
pub struct HudiTableFactory;

/// Opens the Hudi table at `location` (a local path or an object-store URL, its store
/// configured by the session's storage options `session`, then the spec's), or creates it from
/// `spec` if there is none and a spec is given.
pub async fn open_or_create(
    location: &str,
    spec: Option<TableSpec>,
    session: &[(String, String)],
) -> Result<(HudiTableProvider, bool), HoodieError> {
    let mut options = session.to_vec();
    options.extend(spec.iter().flat_map(|s| s.options.iter().cloned()));
    let storage = hoodie_format::location::open_location(location, &options)?;
    let name = spec.as_ref().map(|s| s.name.clone());
    if let Some(read_optimized) = spec
        .as_ref()
        .and_then(|s| query_view(&s.options))
        .transpose()?
    {
        return open_view(storage, name, read_optimized)
            .await
            .map(|p| (p, false));
    }
    if HudiTable::exists(&storage).await? {
        let table = HudiTable::open(storage).await?;
        let name = name.unwrap_or_else(|| table.config().name().to_string());
        let zone = crate::scan::read_kind::instant_zone(table.config());
        let provider = HudiTableProvider::try_new(name, table).await?;
        // read options among the table's: a table that always runs that query
        let options = spec.map(|s| s.options).unwrap_or_default();
        let option = |k: &str| {
            options
                .iter()
                .find(|(o, _)| o.eq_ignore_ascii_case(k))
                .map(|(_, v)| v.as_str())
        };
        return Ok(
            match crate::scan::read_kind::read_from_options(option, zone)? {
                Some(read) => {
                    let view = provider.read_view(read);
                    view.check_readable()?;
                    (view, false)
                }
                None => (provider, false),
            },
        );
    }
    match spec {
        Some(spec) if !spec.columns.fields().is_empty() => {
            let config = spec.table_config()?;
            let table = HudiTable::create(storage, config).await?;
            Ok((HudiTableProvider::try_new(spec.name, table).await?, true))
        }
        _ => Err(hoodie_format::FormatError::NotAHudiTable {
            location: storage.location().to_string(),
        }
        .into()),
    }
}

/// `hoodie.query.as.ro.table` among a table's options: `Some(true)` for Hudi's `_ro` table
/// (read-optimized), `Some(false)` for `_rt` (snapshot).
pub fn query_view(options: &[(String, String)]) -> Option<Result<bool, HoodieError>> {
    let (k, v) = options
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(QUERY_AS_RO_TABLE))?;
    Some(match v.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(HoodieError::InvalidViewOption {
            key: k.to_string(),
            value: v.to_string(),
        }),
    })
}

/// The option that makes a table over an existing merge-on-read table its `_ro` or `_rt` view.
pub const QUERY_AS_RO_TABLE: &str = "hoodie.query.as.ro.table";

/// An `_ro`/`_rt` table over the merge-on-read table at `storage`, with Hudi's errors.
async fn open_view(
    storage: TableStorage,
    name: Option<String>,
    read_optimized: bool,
) -> Result<HudiTableProvider, HoodieError> {
    if !HudiTable::exists(&storage).await? {
        return Err(DdlError::ViewWithoutTable.into());
    }
    let table = HudiTable::open(storage).await?;
    if table.config().table_type()? != hoodie_format::TableType::MergeOnRead {
        return Err(DdlError::ViewOfCopyOnWrite.into());
    }
    let name = name.unwrap_or_else(|| table.config().name().to_string());
    Ok(HudiTableProvider::try_new(name, table)
        .await?
        .view(read_optimized))
}

#[async_trait]
impl TableProviderFactory for HudiTableFactory {
    async fn create(
        &self,
        state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> DFResult<Arc<dyn TableProvider>> {
        let columns = Arc::new(cmd.schema.as_arrow().clone());
        let spec = TableSpec {
            name: cmd.name.table().to_string(),
            columns,
            partition_by: cmd.table_partition_cols.clone(),
            options: cmd
                .options
                .iter()
                .map(|(k, v)| {
                    (
                        k.strip_prefix("format.").unwrap_or(k).to_string(),
                        v.clone(),
                    )
                })
                .collect(),
        }
        .with_session(state.config_options());
        let location = cmd
            .locations
            .first()
            .map(String::as_str)
            .unwrap_or_default();
        // a table at the warehouse itself, or above it, would make the warehouse a table
        let warehouse = state
            .config_options()
            .extensions
            .get::<crate::options::session::HoodieSessionConfig>()
            .and_then(|c| c.warehouse_location());
        if let Some(warehouse) = warehouse {
            crate::ddl::catalog::check_not_above(location, warehouse)
                .map_err(HoodieError::into_datafusion)?;
        }
        let (provider, _) = open_or_create(
            location,
            Some(spec),
            &crate::options::session::storage_options(state.config_options()),
        )
        .await
        .map_err(HoodieError::into_datafusion)?;
        Ok(Arc::new(provider))
    }
}
