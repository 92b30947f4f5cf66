//! The commit protocol: one write = one instant, made visible atomically at the end.
//!
//! 1. roll back what failed writers left behind (their data files and instant files),
//! 2. `T.<action>.requested`, then `T.inflight` (create-if-absent: two writers cannot both start
//!    the same instant),
//! 3. per data file: a marker under `.hoodie/.temp/T/`, then the file,
//! 4. the completed instant file with the commit metadata, create-if-absent, last
//!    (`T.<action>` with JSON metadata on table version 6; on versions 8 and 9 under
//!    `.hoodie/timeline/`, `T_C.<action>` with the completion time `C` taken now and Avro
//!    metadata, see [`crate::timeline::layout`]).
//!
//! Readers ignore files of instants that never completed, so a failure anywhere before step 4
//! leaves the table as it was.
//!
//! Under optimistic concurrency control ([`crate::concurrency`]) step 1 rolls back only the
//! writes whose heartbeat expired, the write keeps a heartbeat from before step 2 until it
//! ends, and step 4 runs inside the table lock after the conflict check; a write that
//! conflicts is rolled back at once.

use std::collections::BTreeMap;

use arrow::datatypes::SchemaRef;

use crate::concurrency::conflict::{self, ReadSnapshot};
use crate::concurrency::heartbeat::Heartbeat;
use crate::concurrency::lock::TableLock;
use crate::concurrency::ConcurrencySpec;
use crate::error::{FormatError, Result};
use crate::table::HudiTable;
use crate::table_config::TableType;
use crate::timeline::commit_metadata::{CommitMetadata, WriteStat};
use crate::timeline::instant::{new_instant_time, Action, Instant, State};
use crate::timeline::{Timeline, TimelineLayout};
use crate::write::status::{by_partition, FileGroupWriter, OpenedFile, WriteHandle, WriteStatus};
use crate::write::writer::FileSpec;

use crate::write::abandoned::WriteGuard;
use crate::write::markers::delete_prefix;
pub use crate::write::markers::marker_dir;
use crate::write::rollback::{rollback_own, rollback_stale_writes};

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

/// A write in progress.
pub struct Transaction {
    table: HudiTable,
    instant: String,
    action: Action,
    operation: WriteOperation,
    /// The files this process writes into the write.
    files: FileGroupWriter,
    /// What other writers of the write reported.
    gathered: WriteStatus,
    concurrency: ConcurrencySpec,
    /// What the statement read (conflicts are writes it did not see).
    read: ReadSnapshot,
    /// Whether `read` is the statement's own read (else the timeline the write started from).
    read_by_statement: bool,
    heartbeat: Option<Heartbeat>,
    /// The timeline the write started from with its own pending instant (None when the start
    /// rolled back failed writes): the write reads it instead of listing again. Commits of
    /// other writers after the start are the conflict check's business, not the write's.
    known: Option<Timeline>,
    /// Records the write as abandoned if it is dropped before it commits.
    guard: WriteGuard,
}

/// How many instant times a writer tries when another writer takes the same one.
const INSTANT_ATTEMPTS: usize = 8;

impl Transaction {
    /// Starts a write with the concurrency settings of the table's properties.
    pub async fn begin(table: &HudiTable, operation: WriteOperation) -> Result<Self> {
        let concurrency = ConcurrencySpec::of_table(table.config())?;
        Self::begin_with(table, operation, &concurrency, None).await
    }

    /// Starts a write: rolls back failed writes, then records the requested and inflight
    /// instants. `read` is what the statement's reads of the table saw, if it read it before
    /// the write began (under optimistic concurrency, writes it did not see can conflict).
    pub async fn begin_with(
        table: &HudiTable,
        operation: WriteOperation,
        concurrency: &ConcurrencySpec,
        read: Option<ReadSnapshot>,
    ) -> Result<Self> {
        Self::begin_after_read(table, operation, concurrency, read, None).await
    }

    /// [`Transaction::begin_with`] for a statement whose read listed `listed`: a single
    /// writer starts from it instead of listing the timeline again while it is current (see
    /// [`Timeline::is_current`]; younger than [`LISTING_REUSE_AGE`]).
    pub async fn begin_after_read(
        table: &HudiTable,
        operation: WriteOperation,
        concurrency: &ConcurrencySpec,
        read: Option<ReadSnapshot>,
        listed: Option<Timeline>,
    ) -> Result<Self> {
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
        // under optimistic concurrency the instant is taken inside the table lock, as Hudi 1.x
        // generates instant times: unique across writers and actions, after every instant
        let lock = match concurrency.optimistic {
            true => Some(TableLock::acquire(table.storage(), &concurrency.lock).await?),
            false => None,
        };
        let listed = listed.filter(|t| !concurrency.optimistic && is_reusable(table, t));
        // a metadata table hoodie cannot keep is refused or removed before the instant
        let started = match crate::metadata_table::enforce(table, concurrency.metadata_table).await
        {
            Ok(()) => start_instant(table, operation, &action, concurrency, listed).await,
            Err(e) => Err(e),
        };
        if let Some(lock) = lock {
            lock.release().await?;
        }
        let Started {
            timeline,
            instant,
            heartbeat,
            rolled_back,
            guard,
        } = started?;
        let read_by_statement = read.is_some();
        let read = read.unwrap_or_else(|| ReadSnapshot::of(&timeline));
        let known = (!rolled_back).then(|| {
            timeline.with_files(
                [State::Requested, State::Inflight]
                    .map(|state| Instant::new(&instant, action.clone(), state)),
            )
        });
        let handle = WriteHandle {
            location: table.storage().location().to_string(),
            instant: instant.clone(),
        };
        Ok(Self {
            table: table.clone(),
            files: FileGroupWriter::new(table, &handle),
            gathered: WriteStatus {
                instant: instant.clone(),
                ..Default::default()
            },
            instant,
            action,
            operation,
            concurrency: *concurrency,
            read,
            read_by_statement,
            heartbeat,
            known,
            guard,
        })
    }

    /// What the statement's scans of the table saw, when it scanned it before the write began.
    pub fn statement_read(&self) -> Option<&ReadSnapshot> {
        self.read_by_statement.then_some(&self.read)
    }

    /// The table's timeline for this write: the one it started from, with its own pending
    /// instant (listed afresh when the start rolled back failed writes).
    pub async fn timeline(&self) -> Result<Timeline> {
        match &self.known {
            Some(t) => Ok(t.clone()),
            None => self.table.timeline().await,
        }
    }

    /// The instant time of this write.
    pub fn instant(&self) -> &str {
        &self.instant
    }

    /// The table being written.
    pub fn table(&self) -> &HudiTable {
        &self.table
    }

    /// What a writer in another task or process needs to add files to this write.
    pub fn handle(&self) -> WriteHandle {
        WriteHandle {
            location: self.table.storage().location().to_string(),
            instant: self.instant.clone(),
        }
    }

    /// The writer of this process's files of the write.
    pub fn files(&mut self) -> &mut FileGroupWriter {
        &mut self.files
    }

    /// Opens a new base file of file group `file_id` in `partition_path` (see
    /// [`FileGroupWriter::new_base_file`]).
    pub async fn new_base_file(
        &mut self,
        partition_path: &str,
        file_id: &str,
        write_token: &str,
        schema: SchemaRef,
        settings: &FileSpec,
    ) -> Result<OpenedFile> {
        self.files
            .new_base_file(partition_path, file_id, write_token, schema, settings)
            .await
    }

    /// Records the statistics of a written file.
    pub fn record_stat(&mut self, stat: WriteStat) {
        self.files.record_stat(stat);
    }

    /// Records file groups this (replace) commit replaces.
    pub fn replace_file_group(&mut self, partition_path: &str, file_id: &str) {
        self.files.replace_file_group(partition_path, file_id);
    }

    /// Adds what another writer of this write reported; the commit holds it.
    pub fn gather(&mut self, status: WriteStatus) -> Result<()> {
        if status.instant != self.instant {
            return Err(FormatError::StatusOfAnotherWrite {
                status: status.instant.clone(),
                write: self.instant.clone(),
            });
        }
        self.gathered.absorb(status);
        Ok(())
    }

    /// Completes the write: writes the completed instant with the commit metadata. `avro_schema`
    /// is the table's Avro schema (without meta fields).
    pub async fn commit(self, avro_schema: String) -> Result<CommitMetadata> {
        Ok(self.commit_with_timeline(avro_schema).await?.0)
    }

    /// Completes the write as [`Transaction::commit`] does; returns the commit metadata and,
    /// when this writer knows it without listing, the timeline right after the commit (for the
    /// table services that follow). None under optimistic concurrency (another writer may
    /// commit before the services take the lock) or after a start that rolled back failed
    /// writes.
    pub async fn commit_with_timeline(
        mut self,
        avro_schema: String,
    ) -> Result<(CommitMetadata, Option<Timeline>)> {
        let mut extra = BTreeMap::new();
        extra.insert("schema".to_string(), avro_schema);
        let mut status = self.files.take_status();
        status.absorb(std::mem::take(&mut self.gathered));
        let (stats, replaced) = by_partition(status);
        let metadata = CommitMetadata {
            partition_to_write_stats: stats,
            partition_to_replace_file_ids: (self.action == Action::ReplaceCommit)
                .then_some(replaced),
            compacted: false,
            extra_metadata: extra,
            operation_type: Some(self.operation.java_name().into()),
        };
        let storage = self.table.storage().clone();
        let done = if self.concurrency.optimistic {
            self.commit_locked(&metadata).await?
        } else {
            let known = self
                .known
                .as_ref()
                .and_then(|t| t.latest_time().map(str::to_string));
            self.complete(&metadata, known.as_deref()).await?
        };
        self.guard.committed();
        // Markers are only needed while the write can fail; a failure to delete them is harmless.
        let _ = delete_prefix(&storage, &marker_dir(&self.instant)).await;
        if let Some(hb) = self.heartbeat.take() {
            hb.stop().await?;
        }
        // under optimistic concurrency another writer may commit before the services after
        // this commit take the lock: they list the timeline again inside it
        let known = self.known.take().map(|before| {
            let after = before.with_files([done]);
            let change = crate::fs_view::FileChange::of_commit(&metadata);
            self.table.advance_listing(&before, &after, &change);
            after
        });
        let after = known.filter(|_| !self.concurrency.optimistic);
        Ok((metadata, after))
    }

    /// Writes the completed instant file (create-if-absent): the write becomes visible.
    /// `latest` is the latest time the writer knows on the timeline (a layout-2 completion
    /// time comes after it). Returns the completed instant.
    async fn complete(&self, metadata: &CommitMetadata, latest: Option<&str>) -> Result<Instant> {
        let layout = TimelineLayout::of(self.table.config())?;
        let done = layout.completing(&self.instant, self.action.clone(), latest);
        let path = layout.path(&done);
        let bytes = layout.encode_commit(metadata, &path)?;
        self.table.storage().put_if_absent(&path, bytes).await?;
        Ok(done)
    }

    /// Optimistic concurrency: inside the table lock, checks that the write is still pending
    /// (no other writer took it for failed) and conflicts with no write it did not see, then
    /// completes it. A conflicting write is rolled back before the lock is released.
    async fn commit_locked(&mut self, metadata: &CommitMetadata) -> Result<Instant> {
        let lock = TableLock::acquire(self.table.storage(), &self.concurrency.lock).await?;
        let outcome = self.check_and_complete(&lock, metadata).await;
        let outcome = match outcome {
            Err(conflict @ FormatError::WriteConflict(_)) => {
                let now = self.table.timeline().await?;
                let own = Instant::new(&self.instant, self.action.clone(), State::Inflight);
                rollback_own(&self.table, &now, &own).await?;
                if let Some(hb) = self.heartbeat.take() {
                    hb.stop().await?;
                }
                Err(conflict)
            }
            other => other,
        };
        lock.release().await?;
        outcome
    }

    async fn check_and_complete(
        &self,
        lock: &TableLock,
        metadata: &CommitMetadata,
    ) -> Result<Instant> {
        let now = self.table.timeline().await?;
        let pending = now.files().iter().any(|i| {
            i.timestamp == self.instant && i.action == self.action && i.state == State::Inflight
        });
        if !pending {
            return Err(FormatError::WriteRolledBack {
                instant: self.instant.clone(),
            });
        }
        let own = Instant::new(&self.instant, self.action.clone(), State::Inflight);
        let groups = conflict::touched_groups(metadata);
        conflict::check(&self.table, &now, &self.read, &own, &groups).await?;
        lock.check_held()?;
        self.complete(metadata, now.latest_time()).await
    }
}

/// How old a statement's listing of the timeline may be for its write to start from it: a
/// statement plans and starts its write within moments, a plan kept and run later lists again.
pub const LISTING_REUSE_AGE: std::time::Duration = std::time::Duration::from_secs(10);

/// Whether a single writer may take `listed` for the table's timeline now.
pub fn is_reusable(table: &HudiTable, listed: &Timeline) -> bool {
    listed.is_current(table.storage(), LISTING_REUSE_AGE)
}

/// A write's start: what [`start_instant`] did.
struct Started {
    /// The timeline it started from.
    timeline: Timeline,
    /// The write's instant time.
    instant: String,
    heartbeat: Option<Heartbeat>,
    /// Whether a failed write was rolled back (the timeline is then behind the folder).
    rolled_back: bool,
    guard: WriteGuard,
}

/// Rolls back failed writes as the policy says, then records the requested and inflight
/// instants of a new write (its heartbeat first).
async fn start_instant(
    table: &HudiTable,
    operation: WriteOperation,
    action: &Action,
    concurrency: &ConcurrencySpec,
    listed: Option<Timeline>,
) -> Result<Started> {
    let timeline = match listed {
        Some(t) => t,
        None => table.timeline().await?,
    };
    let rollback_time = rollback_stale_writes(table, &timeline, concurrency).await?;
    let mut after = rollback_time
        .as_deref()
        .max(timeline.last_instant_time())
        .map(str::to_string);
    let storage = table.storage();
    let layout = timeline.writer_layout();
    let body = requested_body(action, operation)?;
    let mut attempt = 0;
    let (guard, instant, heartbeat) = loop {
        let instant = new_instant_time(after.as_deref());
        // the heartbeat comes first: a pending instant without one is a failed write
        let heartbeat = match concurrency.heartbeats() {
            true => {
                Some(Heartbeat::start(storage, &instant, concurrency.heartbeat_interval).await?)
            }
            false => None,
        };
        let name = layout.pending_path(&instant, action.clone(), State::Requested);
        // from here a start or write that stops half-way is rolled back by this process: the
        // file may be written even when this future is dropped before the put returns
        let mut guard = WriteGuard::new(table, &instant);
        match storage.put_if_absent(&name, body.clone()).await {
            Ok(()) => break (guard, instant, heartbeat),
            // another writer without the lock took the same millisecond: take the next one
            Err(FormatError::AlreadyExists { .. }) if attempt + 1 < INSTANT_ATTEMPTS => {
                guard.not_ours();
                attempt += 1;
                after = Some(instant);
            }
            Err(e) => {
                // the instant is another writer's: never roll it back
                if matches!(e, FormatError::AlreadyExists { .. }) {
                    guard.not_ours();
                }
                return Err(e);
            }
        }
    };
    // the inflight file holds the write's profile: its operation (Avro in layout 2)
    let profile = CommitMetadata {
        operation_type: Some(operation.java_name().into()),
        ..Default::default()
    };
    let inflight = layout.pending_path(&instant, action.clone(), State::Inflight);
    let body = layout.encode_commit(&profile, &inflight)?;
    storage.put_if_absent(&inflight, body).await?;
    Ok(Started {
        timeline,
        instant,
        heartbeat,
        rolled_back: rollback_time.is_some(),
        guard,
    })
}

/// The content of a write's requested instant: empty for a commit, Java's Avro
/// HoodieRequestedReplaceMetadata for a replacecommit.
fn requested_body(action: &Action, operation: WriteOperation) -> Result<Vec<u8>> {
    if *action != Action::ReplaceCommit {
        return Ok(Vec::new());
    }
    let avro = if operation == WriteOperation::DeletePartition {
        crate::avro::requested_replace::requested_delete_partition_avro()
    } else {
        crate::avro::requested_replace::requested_replace_avro()
    };
    avro.map_err(|e| FormatError::Corrupt {
        path: "replacecommit.requested".into(),
        reason: e.to_string(),
    })
}
