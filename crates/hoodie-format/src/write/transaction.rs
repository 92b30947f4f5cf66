//! The commit protocol: one write = one instant, made visible atomically at the end.
//!
//! 1. roll back what failed writers left behind (their data files and instant files),
//! 2. `T.<action>.requested`, then `T.inflight` (create-if-absent: two writers cannot both start
//!    the same instant),
//! 3. per data file: a marker under `.hoodie/.temp/T/`, then the file,
//! 4. the completed instant file with the commit metadata, create-if-absent, last.
//!
//! Readers ignore files of instants that never completed, so a failure anywhere before step 4
//! leaves the table as it was.

use std::collections::{BTreeMap, HashSet};

use arrow::datatypes::SchemaRef;

use crate::error::{FormatError, Result};
use crate::file_name::{partition_metadata_text, BaseFileName, PARTITION_METADATA_FILE};
use crate::storage::TableStorage;
use crate::table::HudiTable;
use crate::table_config::TableType;
use crate::timeline::commit_metadata::{CommitMetadata, WriteStat};
use crate::timeline::instant::{new_instant_time, Action, Instant, State};
use crate::write::writer::{BaseFileWriter, FileSpec};

pub use crate::write::rollback::rollback_failed_writes;

/// Java `WriteOperationType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOperation {
    /// Bulk insert: no index lookup, no small-file handling.
    BulkInsert,
    /// Insert: new records, duplicates allowed.
    Insert,
    /// Upsert: keyed insert-or-update.
    Upsert,
    /// Overwrite the partitions present in the input.
    InsertOverwrite,
    /// Overwrite the whole table.
    InsertOverwriteTable,
    /// Delete by key.
    Delete,
    /// Upsert of records read from the table (UPDATE).
    UpsertPrepped,
    /// Delete of records read from the table (DELETE).
    DeletePrepped,
    /// Delete of whole partitions (ALTER TABLE ... DROP PARTITION, TRUNCATE TABLE): a
    /// replacecommit of their file groups that writes nothing.
    DeletePartition,
    /// A change of the table's schema alone (ALTER TABLE ... ADD COLUMNS): a commit that
    /// writes nothing and records the new schema.
    AlterSchema,
}

impl WriteOperation {
    /// The Java enum name recorded as `operationType`.
    pub fn java_name(&self) -> &'static str {
        match self {
            WriteOperation::BulkInsert => "BULK_INSERT",
            WriteOperation::Insert => "INSERT",
            WriteOperation::Upsert => "UPSERT",
            WriteOperation::InsertOverwrite => "INSERT_OVERWRITE",
            WriteOperation::InsertOverwriteTable => "INSERT_OVERWRITE_TABLE",
            WriteOperation::Delete => "DELETE",
            WriteOperation::UpsertPrepped => "UPSERT_PREPPED",
            WriteOperation::DeletePrepped => "DELETE_PREPPED",
            WriteOperation::DeletePartition => "DELETE_PARTITION",
            WriteOperation::AlterSchema => "ALTER_SCHEMA",
        }
    }

    /// Parses the option value (`bulk_insert`, `insert`, `upsert`, ...), case-insensitively.
    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "bulk_insert" | "bulkinsert" => WriteOperation::BulkInsert,
            "insert" => WriteOperation::Insert,
            "upsert" => WriteOperation::Upsert,
            "insert_overwrite" => WriteOperation::InsertOverwrite,
            "insert_overwrite_table" => WriteOperation::InsertOverwriteTable,
            "delete" => WriteOperation::Delete,
            _ => {
                return Err(FormatError::InvalidProperty {
                    key: crate::config::WRITE_OPERATION.key.into(),
                    value: s.into(),
                    reason: "expected bulk_insert, insert, upsert, insert_overwrite, insert_overwrite_table or delete".into(),
                })
            }
        })
    }
}

/// Folder of the markers of `instant`.
pub fn marker_dir(instant: &str) -> String {
    format!(".hoodie/.temp/{instant}")
}

/// A write in progress.
pub struct Transaction {
    table: HudiTable,
    instant: String,
    action: Action,
    operation: WriteOperation,
    stats: BTreeMap<String, Vec<WriteStat>>,
    partitions_ready: HashSet<String>,
    replaced: BTreeMap<String, Vec<String>>,
}

impl Transaction {
    /// Starts a write: rolls back failed writes, then records the requested and inflight
    /// instants.
    pub async fn begin(table: &HudiTable, operation: WriteOperation) -> Result<Self> {
        let version = table.config().version()?;
        if version != 6 {
            return Err(FormatError::Unsupported {
                feature: format!("writing to a table of version {version} (hoodie writes table version 6; the table can be read)"),
            });
        }
        let timeline = table.timeline().await?;
        let rollback_time = rollback_failed_writes(table, &timeline).await?;
        let after = rollback_time.as_deref().max(timeline.last_instant_time());
        let instant = new_instant_time(after);
        let action = match (operation, table.config().table_type()?) {
            (
                WriteOperation::InsertOverwrite
                | WriteOperation::InsertOverwriteTable
                | WriteOperation::DeletePartition,
                _,
            ) => Action::ReplaceCommit,
            (_, TableType::MergeOnRead) => Action::DeltaCommit,
            (_, TableType::CopyOnWrite) => Action::Commit,
        };
        let storage = table.storage();
        let dir = timeline.dir().to_string();
        let requested = Instant::new(&instant, action.clone(), State::Requested);
        let requested_name = requested.file_name(1);
        // a commit's request is empty; an overwrite's is Java's Avro HoodieRequestedReplaceMetadata
        let body = if action == Action::ReplaceCommit {
            let avro = if operation == WriteOperation::DeletePartition {
                crate::avro::requested_replace::requested_delete_partition_avro()
            } else {
                crate::avro::requested_replace::requested_replace_avro()
            };
            avro.map_err(|e| FormatError::Corrupt {
                path: requested_name.clone(),
                reason: e.to_string(),
            })?
        } else {
            Vec::new()
        };
        storage
            .put_if_absent(&format!("{dir}/{requested_name}"), body)
            .await?;
        let inflight = Instant::new(&instant, action.clone(), State::Inflight);
        let profile = CommitMetadata {
            operation_type: Some(operation.java_name().into()),
            ..Default::default()
        };
        storage
            .put_if_absent(
                &format!("{dir}/{}", inflight.file_name(1)),
                profile.to_json(),
            )
            .await?;
        Ok(Self {
            table: table.clone(),
            instant,
            action,
            operation,
            stats: BTreeMap::new(),
            partitions_ready: HashSet::new(),
            replaced: BTreeMap::new(),
        })
    }

    /// The instant time of this write.
    pub fn instant(&self) -> &str {
        &self.instant
    }

    /// The table being written.
    pub fn table(&self) -> &HudiTable {
        &self.table
    }

    /// Opens a new base file of file group `file_id` in `partition_path`, after writing its
    /// marker (and the partition's metadata file if the partition is new).
    pub async fn new_base_file(
        &mut self,
        partition_path: &str,
        file_id: &str,
        write_token: &str,
        schema: SchemaRef,
        settings: &FileSpec,
    ) -> Result<(BaseFileWriter, BaseFileName)> {
        let storage = self.table.storage().clone();
        if self.partitions_ready.insert(partition_path.to_string()) {
            let meta = join(partition_path, PARTITION_METADATA_FILE);
            if !storage.exists(&meta).await? {
                let depth = if partition_path.is_empty() {
                    0
                } else {
                    partition_path.split('/').count()
                };
                storage
                    .put(
                        &meta,
                        partition_metadata_text(&self.instant, depth).into_bytes(),
                    )
                    .await?;
            }
        }
        let name = BaseFileName::new(file_id, write_token, &self.instant);
        let rel = join(partition_path, &name.name());
        let marker = format!("{}/{}.marker.CREATE", marker_dir(&self.instant), rel);
        storage.put(&marker, Vec::<u8>::new()).await?;
        Ok((
            BaseFileWriter::try_new(
                &storage,
                &rel,
                schema,
                settings,
                &self.table.config().dropped_columns()?,
            )?,
            name,
        ))
    }

    /// Records the statistics of a written file.
    pub fn record_stat(&mut self, stat: WriteStat) {
        let p = stat.partition_path.clone().unwrap_or_default();
        self.stats.entry(p).or_default().push(stat);
    }

    /// Records file groups this (replace) commit replaces.
    pub fn replace_file_group(&mut self, partition_path: &str, file_id: &str) {
        self.replaced
            .entry(partition_path.to_string())
            .or_default()
            .push(file_id.to_string());
    }

    /// Completes the write: writes the completed instant with the commit metadata. `avro_schema`
    /// is the table's Avro schema (without meta fields).
    pub async fn commit(self, avro_schema: String) -> Result<CommitMetadata> {
        let mut extra = BTreeMap::new();
        extra.insert("schema".to_string(), avro_schema);
        let metadata = CommitMetadata {
            partition_to_write_stats: self.stats,
            partition_to_replace_file_ids: (self.action == Action::ReplaceCommit)
                .then_some(self.replaced),
            compacted: false,
            extra_metadata: extra,
            operation_type: Some(self.operation.java_name().into()),
        };
        let storage = self.table.storage();
        let dir = self.table.config().timeline_dir()?;
        let done = Instant::new(&self.instant, self.action.clone(), State::Completed);
        storage
            .put_if_absent(&format!("{dir}/{}", done.file_name(1)), metadata.to_json())
            .await?;
        // Markers are only needed while the write can fail; a failure to delete them is harmless.
        let _ = delete_prefix(storage, &marker_dir(&self.instant)).await;
        Ok(metadata)
    }
}

fn join(partition: &str, name: &str) -> String {
    if partition.is_empty() {
        name.to_string()
    } else {
        format!("{partition}/{name}")
    }
}

pub(crate) async fn delete_prefix(storage: &TableStorage, rel: &str) -> Result<()> {
    for m in storage.list_all(rel).await? {
        let r = storage.relative(&m.location);
        storage.delete(&r).await?;
    }
    Ok(())
}
