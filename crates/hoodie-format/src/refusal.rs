//! The structured refusals of writes and table services: what a caller may match (a
//! compaction on a copy-on-write table, a rollback of a savepointed commit, options that
//! contradict each other) without reading the text. Their messages are Hudi's where Hudi has
//! one.

/// A compaction that cannot be scheduled or run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompactionRefusal {
    /// Compaction on a copy-on-write table.
    #[error("Compaction is not supported on a CopyOnWrite table")]
    CopyOnWrite,
    /// A schedule at an instant that is not after every instant of the timeline.
    #[error("cannot schedule a compaction at {instant}: the instant must be a 17-digit instant time later than every instant on the timeline (the latest is {})", .latest.as_deref().unwrap_or("none"))]
    BadInstant {
        /// The instant asked for.
        instant: String,
        /// The timeline's latest instant.
        latest: Option<String>,
    },
    /// No plan at that instant.
    #[error("no compaction is planned at {instant} ({plan} does not exist)")]
    NotPlanned {
        /// The instant.
        instant: String,
        /// Where its plan would be.
        plan: String,
    },
    /// A compaction asked for by instant that is not pending.
    #[error("{instant} is not a pending compaction instant of {table} (pending: {})", if .pending.is_empty() { "none".to_string() } else { .pending.join(", ") })]
    NotPending {
        /// The instant given.
        instant: String,
        /// The table.
        table: String,
        /// The pending compactions.
        pending: Vec<String>,
    },
    /// The compaction at that instant has completed.
    #[error("compaction {instant} is already completed")]
    AlreadyCompleted {
        /// The instant.
        instant: String,
    },
}

/// A rollback or savepoint operation the timeline does not allow.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TimelineRefusal {
    /// `rollback_to_instant` of an instant that is not a completed write.
    #[error("Commit {instant} not found in Commits of {table}: [{}]", .commits.join(", "))]
    NoSuchCommit {
        /// The instant.
        instant: String,
        /// The table's location.
        table: String,
        /// The completed writes.
        commits: Vec<String>,
    },
    /// A rollback of a commit that later commits follow.
    #[error("Found commits after time :{instant}, please rollback greater commits first")]
    LaterCommits {
        /// The instant.
        instant: String,
    },
    /// A rollback of a savepointed commit.
    #[error("Could not rollback a savepointed commit {instant}: delete the savepoint first (CALL delete_savepoint)")]
    Savepointed {
        /// The instant.
        instant: String,
    },
    /// A savepoint of a commit the timeline does not have.
    #[error("Could not savepoint non-existing commit {instant}")]
    SavepointOfMissingCommit {
        /// The instant.
        instant: String,
    },
    /// A second savepoint of one commit.
    #[error("Commit {instant} is already savepointed")]
    AlreadySavepointed {
        /// The instant.
        instant: String,
    },
    /// A savepoint of a commit the cleaner may have passed.
    #[error("Could not savepoint commit {instant} as this is beyond the lookup window {kept}")]
    BeyondCleanedWindow {
        /// The instant.
        instant: String,
        /// The earliest commit the cleaner keeps.
        kept: String,
    },
    /// A savepoint that does not exist (to delete).
    #[error("there is no savepoint {instant} (savepoints: {})", .savepoints.join(", "))]
    NoSuchSavepoint {
        /// The instant.
        instant: String,
        /// The savepoints there are.
        savepoints: Vec<String>,
    },
    /// A restore to a savepoint that does not exist.
    #[error("Could not restore to savepoint {instant}: no such savepoint (savepoints: {})", .savepoints.join(", "))]
    NoSavepointToRestore {
        /// The instant.
        instant: String,
        /// The savepoints there are.
        savepoints: Vec<String>,
    },
}

/// Write options that contradict each other or the table.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OptionConflict {
    /// Inline compaction and schedule-only inline compaction both on.
    #[error("Either of inline compaction ({run}) or schedule inline compaction ({schedule}) can be enabled. Both can't be set to true at the same time.")]
    InlineCompaction {
        /// The run key.
        run: &'static str,
        /// The schedule key.
        schedule: &'static str,
    },
    /// `drop` duplicates with bulk insert.
    #[error(
        "Insert dup policy 'drop' is not supported with bulk_insert: use the insert operation"
    )]
    DropWithBulkInsert,
    /// Bulk insert on a keyed table in strict mode.
    #[error("Table with primaryKey can not use bulk insert in strict mode.")]
    StrictBulkInsert,
    /// An overwrite mode other than STATIC or DYNAMIC.
    #[error("hoodie.datasource.overwrite.mode must be STATIC or DYNAMIC, got {mode:?}")]
    OverwriteMode {
        /// The mode given.
        mode: String,
    },
    /// An INSERT INTO whose options name an operation it cannot run.
    #[error("INSERT INTO cannot run the {operation} operation ({why})")]
    InsertOperation {
        /// The operation.
        operation: String,
        /// Which option asked for it.
        why: String,
    },
    /// Eager rollback of failed writes under optimistic concurrency.
    #[error("hoodie.cleaner.policy.failed.writes = EAGER would roll back the pending writes of other live writers under optimistic concurrency control: set it to LAZY (the default under it)")]
    EagerUnderOcc,
    /// A lock validity shorter than ten renewals.
    #[error("{validity_key} ({validity} s) should be greater than or equal to 10x {renew_key} ({renew} s)")]
    LockValidity {
        /// The validity key.
        validity_key: &'static str,
        /// The validity.
        validity: u64,
        /// The renewal key.
        renew_key: &'static str,
        /// The renewal interval.
        renew: u64,
    },
    /// Archival keeping at most as many commits as it keeps at least.
    #[error("Increase {max_key}={max} to be greater than {min_key}={min}.")]
    ArchiveBounds {
        /// The max key.
        max_key: &'static str,
        /// Its value.
        max: usize,
        /// The min key.
        min_key: &'static str,
        /// Its value.
        min: usize,
    },
}

/// A table upgrade (`CALL upgrade_table`) that cannot be made; nothing was changed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UpgradeRefusal {
    /// A version hoodie cannot move a table to.
    #[error("hoodie upgrades and downgrades tables among versions 6, 8 and 9, not to {to}")]
    Version {
        /// The version asked for.
        to: u32,
    },
    /// A payload class of the table's own, which only a Hudi writer with it can map to a
    /// merge mode.
    #[error("not supported yet: upgrading a table with the custom payload class {class} (hoodie knows event-time and commit-time ordering only)")]
    CustomPayload {
        /// The class.
        class: String,
    },
}
