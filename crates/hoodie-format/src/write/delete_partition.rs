//! Deleting whole partitions (`ALTER TABLE ... DROP PARTITION`, `TRUNCATE TABLE`): one
//! replacecommit, operation `DELETE_PARTITION`, that replaces every file group of the
//! partitions and writes nothing, as Java's delete-partition executor does. Readers stop
//! seeing the rows at once; the cleaner deletes the files once the replacecommit is older than
//! the commits it keeps.

use crate::error::Result;
use crate::table::HudiTable;
use crate::timeline::commit_metadata::CommitMetadata;
use crate::write::transaction::{Transaction, WriteOperation};

/// Which partitions a delete takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionSelection {
    /// Every partition (the whole table).
    All,
    /// The partitions with these paths, or under them (a spec of leading partition columns).
    Prefixes(Vec<String>),
}

impl PartitionSelection {
    fn takes(&self, partition: &str) -> bool {
        match self {
            PartitionSelection::All => true,
            PartitionSelection::Prefixes(ps) => ps
                .iter()
                .any(|p| partition == p || partition.starts_with(&format!("{p}/"))),
        }
    }
}

/// The partitions of the latest snapshot that `selection` takes, sorted.
pub async fn selected_partitions(
    table: &HudiTable,
    selection: &PartitionSelection,
) -> Result<Vec<String>> {
    let timeline = table.timeline().await?;
    let mut parts: Vec<String> = table
        .file_slices(&timeline, None)
        .await?
        .into_iter()
        .map(|s| s.partition_path)
        .filter(|p| selection.takes(p))
        .collect();
    parts.sort();
    parts.dedup();
    Ok(parts)
}

/// Replaces every file group of the partitions `selection` takes in one `DELETE_PARTITION`
/// replacecommit; `avro_schema` is the table's schema for the commit metadata. Returns the
/// commit's metadata, or `None` (and writes nothing) when no file group is taken.
pub async fn delete_partitions(
    table: &HudiTable,
    selection: &PartitionSelection,
    avro_schema: String,
    concurrency: &crate::concurrency::ConcurrencySpec,
) -> Result<Option<CommitMetadata>> {
    let timeline = table.timeline().await?;
    let groups: Vec<(String, String)> = table
        .file_slices(&timeline, None)
        .await?
        .into_iter()
        .filter(|s| selection.takes(&s.partition_path))
        .map(|s| (s.partition_path, s.file_id))
        .collect();
    if groups.is_empty() {
        return Ok(None);
    }
    let read = crate::concurrency::conflict::ReadSnapshot::of(&timeline);
    let mut txn = Transaction::begin_with(
        table,
        WriteOperation::DeletePartition,
        concurrency,
        Some(read),
    )
    .await?;
    for (partition, file_id) in &groups {
        txn.replace_file_group(partition, file_id);
    }
    Ok(Some(txn.commit(avro_schema).await?))
}
