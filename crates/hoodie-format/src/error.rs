//! Errors of the format core.

use object_store::path::Path;

/// Everything the format core can fail with. Variants are structured so callers can react to
/// them; every message says what was wrong and, where there is one, what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// Reading or writing the object store failed.
    #[error("storage error on {path}: {}", storage_detail(.source, .path))]
    Storage {
        /// The object the operation was about.
        path: String,
        /// The underlying error.
        #[source]
        source: object_store::Error,
    },
    /// A timeline file that must be unique already exists (another writer got there first).
    #[error("instant file {path} already exists: another writer completed or started the same instant; retry the statement")]
    AlreadyExists {
        /// The file that exists.
        path: Path,
    },
    /// `.hoodie/hoodie.properties` is missing: the location is not a Hudi table.
    #[error("no Hudi table at {location}: {location}/.hoodie/hoodie.properties does not exist")]
    NotAHudiTable {
        /// The table location.
        location: String,
    },
    /// `hoodie.properties` and its backup are both missing or damaged.
    #[error("the table at {location} cannot be opened: {reason}, and there is no whole {location}/.hoodie/hoodie.properties.backup to read instead; restore .hoodie/hoodie.properties from a copy of the table (a left-over hoodie.properties.backup or .updated file of an earlier update is one) and retry")]
    DamagedTableConfig {
        /// The table location.
        location: String,
        /// What is wrong with the files.
        reason: String,
    },
    /// A file the timeline says a latest file slice is made of is not in the table, or is
    /// shorter than written (boxed: the error type stays small).
    #[error("{0}")]
    MissingDataFile(Box<MissingDataFile>),
    /// A required table property is missing.
    #[error("hoodie.properties lacks the required key {key}")]
    MissingProperty {
        /// The key.
        key: &'static str,
    },
    /// A table property has a value we cannot use.
    #[error("invalid value {value:?} for {key}: {reason}")]
    InvalidProperty {
        /// The key.
        key: String,
        /// The value found.
        value: String,
        /// Why it is not acceptable.
        reason: String,
    },
    /// A task writing a base file panicked or was cancelled.
    #[error("the task writing {file_group} stopped unexpectedly: {source}")]
    WriterTask {
        /// What the task was writing (partition path and file id).
        file_group: String,
        /// Why it stopped (a panic or a cancellation).
        #[source]
        source: tokio::task::JoinError,
    },
    /// A CDC read of a table that does not log changes.
    #[error("It isn't a CDC hudi table on {location}: CDC reads need a table created with hoodie.table.cdc.enabled = 'true'; read what changed with 'latest_state' instead")]
    NotCdcTable {
        /// The table location.
        location: String,
    },
    /// A commit rewrote a file group of a CDC table without logging its changes.
    #[error("There should be a cdc log file: commit {instant} rewrote {file_group} ({updates} updates) but its write stat names no .cdc log; the table's CDC history is incomplete there")]
    CdcLogMissing {
        /// The commit.
        instant: String,
        /// Partition path and file id.
        file_group: String,
        /// Records it updated.
        updates: i64,
    },
    /// The table uses a feature this version of hoodie does not support yet.
    #[error("not supported yet: {feature}")]
    Unsupported {
        /// What is not supported.
        feature: String,
    },
    /// A `hoodie.*` option has a value its key does not take.
    #[error("{0}")]
    InvalidOption(#[from] crate::config::InvalidValue),
    /// A compaction that cannot be scheduled or run.
    #[error("{0}")]
    CompactionRefused(#[from] crate::refusal::CompactionRefusal),
    /// A table upgrade that cannot be made.
    #[error("{0}")]
    UpgradeRefused(#[from] crate::refusal::UpgradeRefusal),
    /// A rollback or savepoint the timeline does not allow.
    #[error("{0}")]
    TimelineRefused(#[from] crate::refusal::TimelineRefusal),
    /// Write options that contradict each other or the table.
    #[error("{0}")]
    OptionConflict(#[from] crate::refusal::OptionConflict),
    /// A change of a table that has a metadata table, which hoodie cannot keep current.
    #[error("the table at {location} has a metadata table (hoodie.table.metadata.partitions = {partitions}), which hoodie does not keep: a commit would leave it stale, and Spark and hudi-rs read files from it. Set hoodie.metadata.enable = false to have hoodie remove it first (as a Hudi writer with that setting does; Spark rebuilds it on its next write), then write again")]
    MetadataTable {
        /// The table.
        location: String,
        /// The partitions listed.
        partitions: String,
    },
    /// A split write's status handed to the commit of another write.
    #[error("a write status of instant {status} cannot be committed by the write of {write}")]
    StatusOfAnotherWrite {
        /// The status's instant.
        status: String,
        /// The write's instant.
        write: String,
    },
    /// An overwrite asked of a write spec that is not one (a caller's mistake).
    #[error("{operation} is not an overwrite")]
    NotAnOverwrite {
        /// The spec's operation.
        operation: String,
    },
    /// Optimistic concurrency: the table lock was lost while the write held it.
    #[error("the table lock {lock} was lost (its renewal failed); nothing was committed, run the statement again")]
    LockLost {
        /// The lock file.
        lock: String,
    },
    /// The local table lock file cannot be opened.
    #[error("cannot open the table lock file {path}: {reason}")]
    LockFile {
        /// The lock file.
        path: String,
        /// The I/O error.
        reason: String,
    },
    /// Optimistic concurrency: a write that committed after this one read the table touched
    /// the same file groups, so this one was rolled back.
    #[error("{0}")]
    WriteConflict(Box<Conflict>),
    /// Optimistic concurrency: the table lock could not be taken in time.
    #[error("Unable to acquire lock, lock object {lock}: held by {holder} for longer than hoodie.write.lock.wait_time_ms ({waited_ms} ms); run the statement again, or raise the wait")]
    LockTimeout {
        /// The lock file.
        lock: String,
        /// Who holds it, as far as known.
        holder: String,
        /// How long this writer waited.
        waited_ms: u64,
    },
    /// Optimistic concurrency: this write's instant is gone, because another writer took it
    /// for failed (its heartbeat had expired) and rolled it back.
    #[error("Heartbeat for instant {instant} has expired and another writer rolled the write back; nothing of it was committed, run the statement again (or raise hoodie.client.heartbeat.tolerable.misses)")]
    WriteRolledBack {
        /// The instant.
        instant: String,
    },
    /// A record key is null or empty.
    #[error("recordKey value: \"{value}\" for field: \"{field}\" cannot be null or empty.")]
    NullRecordKey {
        /// The record key field.
        field: String,
        /// "null" or "" (the value found).
        value: &'static str,
    },
    /// An upsert under event-time ordering met a record without an ordering value.
    #[error("Precombine/ordering field '{field}' has null value for record key '{key}'. Please ensure all records have non-null values for the precombine field, or use a payload class that doesn't require ordering (e.g., OverwriteWithLatestAvroPayload), or recordMergeMode = 'COMMIT_TIME_ORDERING'.")]
    NullOrderingValue {
        /// The ordering field.
        field: String,
        /// The record key of the first such record.
        key: String,
    },
    /// An INSERT with `hoodie.datasource.insert.dup.policy = fail` met a key that exists.
    #[error("Duplicate key found for insert statement, key is: {key}")]
    DuplicateKey {
        /// The key.
        key: String,
    },
    /// A column the table needs is missing from a batch.
    #[error("column {column} not found in the data being written")]
    MissingColumn {
        /// The column.
        column: String,
    },
    /// A data type that cannot be stored in a Hudi table (or used in that role).
    #[error("unsupported data type {data_type} for column {column}: {reason}")]
    UnsupportedType {
        /// The column.
        column: String,
        /// The type.
        data_type: String,
        /// Why.
        reason: String,
    },
    /// A timeline or metadata file could not be parsed.
    #[error("corrupt file {path}: {reason}")]
    Corrupt {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A file name that does not follow Hudi's naming rules.
    #[error("invalid Hudi file name {name:?}: {reason}")]
    InvalidFileName {
        /// The name.
        name: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A write's rows could not be spilled to (or read back from) a temporary file.
    #[error("spill file {path}: {source}")]
    Spill {
        /// The temporary file.
        path: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The memory budget (the session's memory pool) cannot hold even what a write must keep
    /// in memory.
    #[error("the memory limit leaves no room for {what} ({needed} bytes more); raise the limit (the shell's --memory-limit, HoodieConfig::memory_limit or SET datafusion.runtime.memory_limit)")]
    MemoryLimit {
        /// What needed the memory.
        what: &'static str,
        /// Bytes asked for.
        needed: usize,
    },
    /// A time-travel or incremental instant in a form Hudi does not take.
    #[error("Unsupported query instant time format: {value:?}. Supported formats: {formats}")]
    InstantText {
        /// The text given.
        value: String,
        /// The forms taken.
        formats: &'static str,
    },
    /// Time travel to an instant at or after a write that has not completed (Hudi's check: the
    /// write may still add files older than the instant).
    #[error("Time travel's timestamp '{as_of}' must be earlier than the first incomplete commit timestamp '{pending}'.")]
    AsOfAfterPending {
        /// The instant asked for.
        as_of: String,
        /// The first write that has not completed.
        pending: String,
    },
    /// Time travel to an instant whose files the cleaner may have deleted.
    #[error("{}", as_of_cleaned(as_of, earliest_retained.as_deref()))]
    AsOfCleaned {
        /// The instant asked for.
        as_of: String,
        /// The earliest commit the last clean kept (none: it kept file versions, not commits).
        earliest_retained: Option<String>,
    },
    /// A CDC read needs a file the cleaner deleted.
    #[error("the CDC read needs {what}, which the cleaner has deleted (commit {instant}); start the read at a later commit, or retain more commits (hoodie.cleaner.commits.retained)")]
    CdcFilesCleaned {
        /// The commit whose changes need it.
        instant: String,
        /// The file or file version.
        what: String,
    },
    /// A CDC read starts before the last archived instant (Hudi's `HoodieCDCExtractor` check).
    #[error("Start instant time {begin} for CDC query has to be in the active timeline. Beginning of active timeline {first_active}")]
    CdcStartArchived {
        /// The start of the read.
        begin: String,
        /// The first instant of the active timeline.
        first_active: String,
    },
    /// An incremental read needs a file the cleaner deleted.
    #[error("the incremental read needs {file}, which commit {instant} wrote and the cleaner has since deleted; start the read at a later commit, or retain more commits (hoodie.cleaner.commits.retained)")]
    IncrementalFilesCleaned {
        /// The commit that wrote the file.
        instant: String,
        /// The file (relative to the table).
        file: String,
    },
    /// Arrow failed.
    #[error("arrow error: {0}")]
    Arrow(#[from] arrow::error::ArrowError),
    /// A data file of the table could not be read: it is damaged.
    #[error("cannot read {path}, a data file of the table: {}; the file is damaged: restore it from a copy of the table, or roll the table back to before the commit that wrote it (CALL rollback_to_instant, or CALL rollback_to_savepoint to an earlier savepoint)", parquet_detail(.source))]
    DamagedFile {
        /// The file, relative to the table.
        path: String,
        /// What the reader found.
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// Parquet failed.
    #[error("parquet error in {path}: {}", parquet_detail(.source))]
    Parquet {
        /// The file.
        path: String,
        /// The underlying error.
        #[source]
        source: parquet::errors::ParquetError,
    },
    /// The bloom filter could not be built or decoded.
    #[error("bloom filter error in {path}: {source}")]
    Bloom {
        /// The file.
        path: String,
        /// The underlying error.
        #[source]
        source: crate::bloom::BloomError,
    },
}

fn as_of_cleaned(as_of: &str, retained: Option<&str>) -> String {
    match retained {
        Some(r) => format!("Cleaner cleaned up the timestamp of interest. Please ensure sufficient commits are retained with cleaner for Timestamp as of query to work (as of {as_of}; the last clean kept commits from {r} on)"),
        None => format!("Please ensure sufficient commits are retained (uncleaned and un-archived) for timestamp as of query to work (as of {as_of} is before the first commit the timeline keeps)"),
    }
}

/// Result alias of the format core.
pub type Result<T, E = FormatError> = std::result::Result<T, E>;

impl FormatError {
    /// Wraps an object store error about `path`.
    pub fn storage(path: impl ToString, source: object_store::Error) -> Self {
        match source {
            object_store::Error::AlreadyExists { path, .. } => FormatError::AlreadyExists {
                path: Path::from(path),
            },
            source => FormatError::Storage {
                path: path.to_string(),
                source,
            },
        }
    }

    /// Whether the error is an object that does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(
            self,
            FormatError::Storage {
                source: object_store::Error::NotFound { .. },
                ..
            }
        )
    }

    /// Wraps a parquet error met reading the footer of `path`, a data file of the table that
    /// is there: the file is damaged.
    pub fn damaged(path: impl ToString, source: parquet::errors::ParquetError) -> Self {
        FormatError::DamagedFile {
            path: path.to_string(),
            source,
        }
    }

    /// Wraps a parquet error about `path`.
    pub fn parquet(path: impl ToString, source: parquet::errors::ParquetError) -> Self {
        FormatError::Parquet {
            path: path.to_string(),
            source,
        }
    }
}

/// Two writes that touched the same file groups: the one that found the other committed is
/// rolled back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("java.util.ConcurrentModificationException: Cannot resolve conflicts for overlapping writes between first operation = {{actionType={action}, instantTime={instant}, actionState=INFLIGHT'}}, second operation = {{actionType={other_action}, instantTime={other_instant}, actionState={other_state}'}}: both wrote file groups {file_groups}; nothing of this write was committed, run the statement again")]
pub struct Conflict {
    /// This write's action.
    pub action: String,
    /// This write's instant.
    pub instant: String,
    /// The other write's action.
    pub other_action: String,
    /// The other write's instant.
    pub other_instant: String,
    /// The other write's state (COMPLETED, or REQUESTED for a pending compaction plan).
    pub other_state: String,
    /// The file groups both touched (`partition/fileId`, comma-separated).
    pub file_groups: String,
}

/// A parquet error's text without the `Parquet error: ` its own message starts with (the
/// message it is put in says so already).
fn parquet_detail(e: &parquet::errors::ParquetError) -> String {
    let text = e.to_string();
    text.strip_prefix("Parquet error: ")
        .map(str::to_string)
        .unwrap_or(text)
}

/// An object store error's text with the path it names as `shown` names it: object_store
/// writes local paths without their leading `/`.
fn storage_detail(e: &object_store::Error, shown: &str) -> String {
    let text = e.to_string();
    match shown.strip_prefix('/') {
        Some(bare) if !bare.is_empty() => text.replace(&format!(" {bare}"), &format!(" {shown}")),
        _ => text,
    }
}

/// A data file of a latest file slice that is missing or damaged: [`FormatError::MissingDataFile`].
#[derive(Debug, thiserror::Error)]
#[error("the table at {location}: {path} {reason}, a file of the latest version of its file group, written by commit {instant}: reading without it would return that file group's previous rows, and writing would make the loss permanent. Restore the file from a copy of the table, or roll the table back to before that commit (CALL rollback_to_instant(table => '...', instant_time => '{instant}'), or CALL rollback_to_savepoint to a savepoint taken before it); if another writer is cleaning or rolling back the table, retry")]
pub struct MissingDataFile {
    /// The table location.
    pub location: String,
    /// The file, relative to the table.
    pub path: String,
    /// The commit that wrote it.
    pub instant: String,
    /// "is missing", or how it is damaged.
    pub reason: String,
}
