//! Hudi's metadata table (`.hoodie/metadata`), which hoodie does not keep. A Spark writer
//! creates one by default and lists it in `hoodie.table.metadata.partitions`; Spark and hudi-rs
//! then take a table's files from it instead of listing storage, and a metadata table that is
//! behind the timeline is not rebuilt. So a commit hoodie made there would be invisible to them.
//! Before anything changes the timeline of such a table, the writer follows
//! `hoodie.metadata.enable` as a Hudi writer does: with `true` (Hudi's default) hoodie refuses,
//! since it cannot keep the metadata table current; with `false` it removes the metadata table
//! and clears the property (Hudi's `HoodieTable.maybeDeleteMetadataTable`), then goes on.

use crate::config::{self, ConfigKey};
use crate::error::{FormatError, Result};
use crate::table::HudiTable;

/// Where a table's metadata table lives.
const METADATA_DIR: &str = ".hoodie/metadata";

/// What a writer does with a table that has a metadata table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataTableRule {
    /// Refuse to change the table (`hoodie.metadata.enable = true`, Hudi's default).
    Refuse,
    /// Remove the metadata table first (`hoodie.metadata.enable = false`).
    Remove,
}

impl MetadataTableRule {
    /// The rule `hoodie.metadata.enable` gives, as `get` finds it.
    pub fn resolve(get: impl Fn(&ConfigKey) -> Option<String>) -> Result<Self> {
        let key = &config::METADATA_ENABLE;
        let value = get(key).or(key.default.map(str::to_string));
        if let Some(v) = &value {
            key.check(v)?;
        }
        Ok(match value.as_deref().map(str::trim) {
            Some(v) if v.eq_ignore_ascii_case("false") => Self::Remove,
            _ => Self::Refuse,
        })
    }
}

/// The metadata table partitions `hoodie.properties` lists (`None`: none).
fn listed(config: &crate::TableConfig) -> Option<String> {
    config
        .get(&config::METADATA_PARTITIONS)
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
}

/// Applies `rule` to `table` before a change of its timeline (inside the table lock under
/// optimistic concurrency). Costs nothing on a table whose properties, as opened, list no
/// metadata partitions.
pub(crate) async fn enforce(table: &HudiTable, rule: MetadataTableRule) -> Result<()> {
    if listed(table.config()).is_none() {
        return Ok(());
    }
    // the properties as they are now: this process or another writer may have removed it
    let storage = table.storage();
    let current = crate::properties_file::load(storage).await?;
    let Some(partitions) = listed(&current) else {
        return Ok(());
    };
    if rule == MetadataTableRule::Refuse {
        return Err(FormatError::MetadataTable {
            location: storage.location().to_string(),
            partitions,
        });
    }
    // the folder first: a reader that still finds the property then fails loudly for want of
    // the metadata table, rather than trusting a stale one left behind
    for meta in storage.list_all(METADATA_DIR).await? {
        storage.delete(&storage.relative(&meta.location)).await?;
    }
    if let Some(dir) = storage.local_dir() {
        // the emptied folders too (an object store has none); they hold nothing a reader reads
        let _ = std::fs::remove_dir_all(dir.join(METADATA_DIR));
    }
    let mut cleared = current;
    cleared.set(config::METADATA_PARTITIONS.key, "");
    if cleared.get(&config::METADATA_PARTITIONS_INFLIGHT).is_some() {
        cleared.set(config::METADATA_PARTITIONS_INFLIGHT.key, "");
    }
    crate::properties_file::update(storage, &cleared).await
}
