//! `TRUNCATE TABLE` and `ALTER TABLE ... DROP PARTITION` on Hudi tables: Hudi's
//! `delete_partition` write, a replacecommit of the partitions' file groups
//! (`hoodie_format::write::delete_partitions`), followed by the table services a commit runs.

use datafusion::catalog::TableProvider;
use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use hoodie_format::client::WriteClient;
use hoodie_format::keygen::HIVE_DEFAULT_PARTITION;
use hoodie_format::schema::avro_schema;
use hoodie_format::write::WriteStatement;
use hoodie_format::write::{delete_partitions, selected_partitions, PartitionSelection};

use super::ddl::hudi_table;
use crate::error::{PartitionError, Result};
use crate::frontend::partition_ddl::PartitionSpec;
use crate::options::write::SessionOptions;
use crate::provider::{as_hudi, HudiTableProvider};

/// `TRUNCATE TABLE t [PARTITION (...)]` on a Hudi table: every file group of the table (or of
/// the partition) replaced in one replacecommit.
pub(super) async fn truncate(
    ctx: &SessionContext,
    name: &str,
    partition: Option<PartitionSpec>,
) -> Result<DataFrame> {
    let provider = hudi_table(ctx, name).await?;
    let hudi = as_hudi(&provider).expect("a Hudi table");
    let selection = match partition {
        None => PartitionSelection::All,
        Some(_) if !hudi.table().config().is_partitioned() => {
            return Err(PartitionError::NotPartitioned {
                statement: "TRUNCATE TABLE ... PARTITION",
                table: name.to_string(),
            }
            .into())
        }
        Some(spec) => PartitionSelection::Prefixes(vec![partition_path(hudi, name, &spec)?]),
    };
    delete(ctx, hudi, &selection).await
}

/// `ALTER TABLE t DROP [IF EXISTS] PARTITION (...) [, PARTITION (...)] [PURGE]`: the file
/// groups of the partitions replaced in one replacecommit; with PURGE, their files deleted at
/// once (reads of earlier commits then fail, as in Hudi).
pub(super) async fn drop_partitions(
    ctx: &SessionContext,
    name: &str,
    if_exists: bool,
    specs: Vec<PartitionSpec>,
    purge: bool,
) -> Result<DataFrame> {
    let provider = hudi_table(ctx, name).await?;
    let hudi = as_hudi(&provider).expect("a Hudi table");
    if !hudi.table().config().is_partitioned() {
        return Err(PartitionError::NotPartitioned {
            statement: "ALTER TABLE ... DROP PARTITION",
            table: name.to_string(),
        }
        .into());
    }
    let paths = specs
        .iter()
        .map(|s| partition_path(hudi, name, s))
        .collect::<Result<Vec<_>>>()?;
    let selection = PartitionSelection::Prefixes(paths.clone());
    let present = selected_partitions(hudi.table(), &selection).await?;
    if !if_exists {
        if let Some(missing) = paths.iter().find(|p| !present.contains(p)) {
            return Err(PartitionError::NotFound {
                partition: missing.to_string(),
                table: name.to_string(),
            }
            .into());
        }
    }
    delete(ctx, hudi, &selection).await?;
    if purge {
        let storage = hudi.table().storage();
        for p in &present {
            for f in storage.list_all(p).await? {
                storage.delete(&storage.relative(&f.location)).await?;
            }
        }
    }
    Ok(ctx.read_empty()?)
}

/// The partition path a full spec names, as the table writes it (Hive-style or not, NULL and
/// empty values as the default partition).
fn partition_path(hudi: &HudiTableProvider, name: &str, spec: &PartitionSpec) -> Result<String> {
    let cfg = hudi.table().config();
    let fields = cfg.partition_fields();
    if let Some((c, _)) = spec
        .iter()
        .find(|(c, _)| !fields.iter().any(|f| f.eq_ignore_ascii_case(c)))
    {
        return Err(PartitionError::NotAPartitionColumn {
            column: c.to_string(),
            table: name.to_string(),
            columns: fields.clone(),
        }
        .into());
    }
    let hive = cfg.hive_style_partitioning()?;
    let mut parts = Vec::with_capacity(fields.len());
    for f in &fields {
        let Some((_, v)) = spec.iter().find(|(c, _)| c.eq_ignore_ascii_case(f)) else {
            return Err(PartitionError::ColumnMissing {
                column: f.to_string(),
                table: name.to_string(),
                columns: fields.clone(),
            }
            .into());
        };
        let v = v
            .as_deref()
            .filter(|v| !v.is_empty())
            .unwrap_or(HIVE_DEFAULT_PARTITION);
        parts.push(if hive {
            format!("{f}={v}")
        } else {
            v.to_string()
        });
    }
    Ok(parts.join("/"))
}

/// The `delete_partition` write of `selection`, with what runs around a commit: a pending
/// compaction finished first, the cleaner after.
async fn delete(
    ctx: &SessionContext,
    hudi: &HudiTableProvider,
    selection: &PartitionSelection,
) -> Result<DataFrame> {
    hudi.refuse_write()?;
    let session = SessionOptions::of(ctx.state_ref().read().config_options());
    let spec = hudi.write_spec(&session, WriteStatement::InsertInto)?;
    let table = hudi.table();
    let client = WriteClient::new(table, spec);
    client.finish_pending_compactions().await?;
    let schema = avro_schema(table.config().name(), &TableProvider::schema(hudi))?.to_string();
    if delete_partitions(table, selection, schema, &client.spec().concurrency)
        .await?
        .is_some()
    {
        // (no inline compaction after a partition delete, which logs nothing)
        client.services_after_commit(None, false).await?;
    }
    Ok(ctx.read_empty()?)
}
