//! Upgrading a table to a newer table version as Hudi's `upgrade_table` procedure and its
//! upgrade handlers do (and back down, in `downgrade`), one step at a time: 6 to 8 (the timeline moves to layout 2 with
//! completion times and Avro commit metadata, `hoodie.properties` gains the version 8 keys),
//! and the archived timeline into the LSM history), then 8 to 9 (the payload class retired).
//! Before either step, as Hudi's handlers require, failed writes are rolled back and a
//! merge-on-read table is compacted (every file slice with log files), since which slice a log
//! belongs to changes meaning with completion times.
//!
//! The switch of `hoodie.properties` is the upgrade's commit point: before it the table reads
//! as its old version (the new timeline folder is not read), after it as the new one (the old
//! instant files, deleted last, are not read). An upgrade that stops anywhere leaves the table
//! readable, and running it again finishes it.

mod downgrade;
mod history;
mod properties;
mod timeline;

use crate::archive::ArchiveSpec;
use crate::compaction::{execute_compaction, schedule_compaction};
use crate::error::Result;
use crate::metadata_table::{self, MetadataTableRule};
use crate::refusal::UpgradeRefusal;
use crate::table::HudiTable;
use crate::table_config::TableType;
use crate::write::rollback::rollback_failed_writes;
use crate::write::FileSpec;

/// How an upgrade treats what it carries over.
#[derive(Debug, Clone)]
pub struct UpgradeSpec {
    /// What to do with a metadata table a Spark writer left (hoodie cannot upgrade it).
    pub metadata: MetadataTableRule,
    /// How the archived timeline of version 6 goes into the LSM history.
    pub archive: ArchiveSpec,
    /// How the compaction a merge-on-read table gets first writes its base files.
    pub files: FileSpec,
}

/// What an upgrade did: the table's version before and after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Upgrade {
    /// The version the table had.
    pub from: u32,
    /// The version it has now (`from` when it already had the version asked for).
    pub to: u32,
}

/// Parses a version as Hudi's procedures take it: `HoodieTableVersion`'s names (`SIX`,
/// `EIGHT`, `NINE`, any case) or the number.
pub fn parse_version(text: &str) -> Option<u32> {
    let t = text.trim();
    let named = [
        ("SIX", 6),
        ("SEVEN", 7),
        ("EIGHT", 8),
        ("NINE", 9),
        ("TEN", 10),
    ];
    named
        .iter()
        .find(|(n, _)| t.eq_ignore_ascii_case(n))
        .map(|(_, v)| *v)
        .or_else(|| t.parse().ok())
}

/// Moves the table at `table`'s storage to version `to` (6, 8 or 9), as found there now (the
/// caller holds the table lock under optimistic concurrency), up or down as Hudi's
/// `upgrade_table` and `downgrade_table` do. Writes left pending are rolled back and a
/// merge-on-read table compacted first, as Hudi's handlers do either way; on the way up the
/// archived timeline of version 6 goes into the LSM history in batches and levels as
/// `spec.archive` says.
pub(crate) async fn change_version(
    table: &HudiTable,
    to: u32,
    spec: &UpgradeSpec,
) -> Result<Upgrade> {
    let current = HudiTable::open(table.storage().clone()).await?;
    let from = current.config().version()?;
    if ![6, 8, 9].contains(&to) {
        return Err(UpgradeRefusal::Version { to }.into());
    }
    // what a change of layout that stopped after its commit point left
    let stale = match from {
        6 => timeline::layout_2_files(current.storage()).await?,
        _ => timeline::layout_1_files(current.storage()).await?,
    };
    for f in stale {
        current.storage().delete(&f).await?;
    }
    if to == from {
        return Ok(Upgrade { from, to });
    }
    // the new properties first: what refuses them (a custom payload) changes nothing
    let mut config = current.config().clone();
    if from == 6 {
        config = properties::six_to_eight(&config)?;
    }
    if from == 9 {
        config = downgrade::nine_to_eight(&config)?;
    }
    match to {
        9 => config = properties::eight_to_nine(&config)?,
        6 => config = downgrade::eight_to_six(&config)?,
        _ => {}
    }
    metadata_table::enforce(&current, spec.metadata).await?;
    rollback_failed_writes(&current, &current.timeline().await?).await?;
    compact_logs(&current, &spec.files).await?;
    let storage = current.storage();
    let mut old_files = Vec::new();
    if from == 6 {
        old_files = timeline::copy_to_layout_2(storage).await?;
        history::migrate_archive(&current, &spec.archive).await?;
    } else if to == 6 {
        old_files = timeline::copy_to_layout_1(storage).await?;
    }
    // the commit point
    crate::properties_file::update(storage, &config).await?;
    for f in old_files {
        storage.delete(&f).await?;
    }
    Ok(Upgrade { from, to })
}

/// Compacts every file slice of a merge-on-read table that has log files (none a pending
/// compaction plans), as Hudi's upgrade handlers do with an unbounded compaction strategy once
/// a deltacommit followed the last compaction.
async fn compact_logs(table: &HudiTable, files: &FileSpec) -> Result<()> {
    if table.config().table_type()? != TableType::MergeOnRead {
        return Ok(());
    }
    if let Some(c) = schedule_compaction(table, None, 1).await? {
        execute_compaction(table, &c, files).await?;
    }
    Ok(())
}

/// The properties of a new merge-on-read or copy-on-write table (`id` key, `ts`, `p`) of
/// `version`, for the tests of the property steps.
#[cfg(test)]
pub(super) fn test_config(
    version: u32,
    table_type: crate::table_config::TableType,
    ordering: Option<&str>,
    mode: crate::table_config::MergeMode,
    partitioned: bool,
) -> crate::table_config::TableConfig {
    use arrow::datatypes::{DataType, Field, Schema};
    let columns = Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("ts", DataType::Int64, true),
        Field::new("p", DataType::Utf8, true),
    ]);
    let mut new = crate::new_table::NewTable::new("t", columns);
    new.version = version;
    new.table_type = table_type;
    new.record_keys = vec!["id".into()];
    if partitioned {
        new.partition_fields = vec!["p".into()];
    }
    new.ordering_field = ordering.map(str::to_string);
    new.merge_mode = mode;
    crate::table_config::TableConfig::from_properties(new.properties().unwrap()).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_by_hudi_name_or_number() {
        assert_eq!(parse_version("NINE"), Some(9));
        assert_eq!(parse_version("eight"), Some(8));
        assert_eq!(parse_version(" 9 "), Some(9));
        assert_eq!(parse_version("nine-ish"), None);
    }
}
