//! The write client: what every engine does to write one commit of a Hudi table, as Hudi's
//! `WriteClient` does it. It owns the order of a write (a pending compaction finished,
//! the instant begun, the rows dispatched to insert / upsert / overwrite / change-set writes,
//! the commit, then inline compaction, cleaning and archival) and the table lock around the
//! steps that change the timeline under optimistic concurrency. An engine hands it rows
//! ([`Incoming`]) and takes back what the write did.
//!
//! A write may also be split: [`WriteClient::begin`] gives the pending write, whose
//! [`WriteHandle`](crate::write::WriteHandle) lets any number of
//! [`FileGroupWriter`](crate::write::FileGroupWriter)s (other tasks, other
//! processes) add file groups, each reporting a
//! [`WriteStatus`](crate::write::WriteStatus); [`WriteClient::commit`] takes them all
//! and runs the services after the commit.

mod services;
mod table_services;

use arrow::datatypes::SchemaRef;

use crate::clean::{run_clean, CleanResult};
use crate::concurrency::conflict::ReadSnapshot;
use crate::error::Result;
use crate::fs_view::integrity::check_latest_files;
use crate::fs_view::TableListing;
use crate::keygen::KeyGenerator;
use crate::schema::avro_schema;
use crate::table::HudiTable;
use crate::timeline::commit_metadata::CommitMetadata;
use crate::timeline::Timeline;
use crate::write::incoming::Incoming;
use crate::write::insert::{write_inserts, InsertResult};
use crate::write::overwrite::write_overwrite;
use crate::write::spec::{WriteKind, WriteSpec};
use crate::write::transaction::{is_reusable, Transaction};
use crate::write::upsert::{
    check_change_set, check_ordering_values, route_upserts, write_upserts, UpsertResult,
    UpsertTasks,
};
use crate::write::WriteStatus;

pub use services::locked;
pub use table_services::{CompactionRequest, TableServices};

/// What the statement feeding a write read of its table before the write began.
#[derive(Debug, Clone, Default)]
pub struct StatementRead {
    /// The instants its scans of the table saw (`None`: it did not scan it). Under optimistic
    /// concurrency, the writes it did not see are the ones that can conflict.
    pub snapshot: Option<ReadSnapshot>,
    /// The timeline its first scan listed, which a single writer may start from.
    pub listed: Option<Timeline>,
}

/// What a write did to the rows.
#[derive(Debug, Clone, PartialEq)]
pub enum Written {
    /// Rows into new file groups (insert, bulk insert, overwrite).
    Inserted(InsertResult),
    /// A keyed write (upsert, or the change set of UPDATE / DELETE / MERGE).
    Upserted(UpsertResult),
}

/// What [`WriteClient::write`] did: the rows, and the commit (None when a change set changed
/// nothing and no commit was made).
#[derive(Debug, Clone)]
pub struct WriteOutcome {
    /// What the write did to the rows.
    pub written: Written,
    /// The commit's metadata.
    pub commit: Option<CommitMetadata>,
}

/// Writes commits of one table as one [`WriteSpec`] says.
#[derive(Debug, Clone)]
pub struct WriteClient {
    table: HudiTable,
    spec: WriteSpec,
}

impl WriteClient {
    /// A client writing `table` as `spec` says.
    pub fn new(table: &HudiTable, spec: WriteSpec) -> Self {
        Self {
            table: table.clone(),
            spec,
        }
    }

    /// The table written.
    pub fn table(&self) -> &HudiTable {
        &self.table
    }

    /// The write's settings.
    pub fn spec(&self) -> &WriteSpec {
        &self.spec
    }

    /// Writes `incoming` (rows of `table_schema`, the table's columns) as one commit, then
    /// runs the table services after it.
    pub async fn write(
        &self,
        table_schema: &SchemaRef,
        incoming: Incoming,
        read: StatementRead,
    ) -> Result<WriteOutcome> {
        let spec = &self.spec;
        if spec.prepped() && incoming.num_rows() == 0 {
            // an UPDATE / DELETE / MERGE that changes nothing
            return Ok(WriteOutcome {
                written: Written::Upserted(UpsertResult::default()),
                commit: None,
            });
        }
        self.check(&incoming)?;
        let keygen = KeyGenerator::from_config(self.table.config())?;
        let avro = avro_schema(self.table.config().name(), table_schema)?.to_string();
        let partitions = match spec.kind {
            WriteKind::Insert => Some(incoming.paths().values().iter().cloned().collect()),
            _ => None,
        };
        let mut txn = self.begin_checked(read, partitions).await?;
        let written = match &spec.kind {
            WriteKind::Insert => Written::Inserted(
                write_inserts(txn.files(), &keygen, table_schema, incoming, spec).await?,
            ),
            WriteKind::Upsert | WriteKind::ChangeSet => {
                Written::Upserted(write_upserts(&mut txn, table_schema, incoming, spec).await?)
            }
            WriteKind::Overwrite(_) => Written::Inserted(
                write_overwrite(&mut txn, &keygen, table_schema, incoming, spec).await?,
            ),
        };
        let commit = self.commit(txn, Vec::new(), avro).await?;
        Ok(WriteOutcome {
            written,
            commit: Some(commit),
        })
    }

    /// Refuses rows a keyed write cannot take, before anything is written (as
    /// [`WriteClient::write`] does first): a NULL ordering value in an upsert under event-time
    /// ordering, a change set that both changes and inserts one record.
    pub fn check(&self, incoming: &Incoming) -> Result<()> {
        match &self.spec.kind {
            WriteKind::Upsert => check_ordering_values(incoming, &self.spec),
            WriteKind::ChangeSet => check_change_set(incoming, &self.spec),
            _ => Ok(()),
        }
    }

    /// Routes the rows of a keyed write (an upsert or a change set, checked with
    /// [`WriteClient::check`]) begun as `txn` to its table's file groups, for writers in other
    /// tasks or processes: the result hands out [`FileGroupTask`](crate::write::FileGroupTask)s
    /// a wave at a time; each writer opens the table from `txn.handle()` and runs its tasks with
    /// [`FileGroupWriter::write_task`](crate::write::FileGroupWriter::write_task) under this
    /// client's spec; [`UpsertTasks::finish`] adds up what they did and
    /// [`WriteClient::commit`] takes their statuses.
    pub async fn route(
        &self,
        txn: &Transaction,
        table_schema: &SchemaRef,
        incoming: Incoming,
    ) -> Result<UpsertTasks> {
        route_upserts(txn, table_schema, incoming, &self.spec).await
    }

    /// Begins a write: finishes a compaction left pending (unless the statement's listing is
    /// current), then requests the instant. Files come from the returned transaction's own
    /// writer and from writers given its [`handle`](Transaction::handle).
    pub async fn begin(&self, read: StatementRead) -> Result<Transaction> {
        self.begin_checked(read, None).await
    }

    /// [`WriteClient::begin`] for a write that adds file groups to `partitions` without reading
    /// the table: those partitions are checked to hold the files of their latest slices first.
    async fn begin_checked(
        &self,
        read: StatementRead,
        partitions: Option<std::collections::BTreeSet<String>>,
    ) -> Result<Transaction> {
        let (table, spec) = (&self.table, &self.spec);
        // a single writer whose statement just listed the timeline starts from that listing
        let listed = match read
            .listed
            .filter(|t| !spec.concurrency.optimistic && is_reusable(table, t))
        {
            Some(t) => Some(t),
            // (a current listing has no compaction pending)
            None => {
                locked(
                    table,
                    &spec.concurrency,
                    services::finish_pending(table, spec),
                )
                .await?
            }
        };
        let listed = match partitions {
            // the only write that reads nothing of the table checks that the partitions it
            // adds to hold their latest files before it starts: a table that lost one is
            // repaired by a rollback, which a commit after the loss would get in the way of
            Some(partitions) => {
                let timeline = match listed {
                    Some(t) => t,
                    None => table.timeline().await?,
                };
                check_partitions(table, &timeline, &partitions).await?;
                Some(timeline)
            }
            None => listed,
        };
        Transaction::begin_after_read(
            table,
            spec.operation,
            &spec.concurrency,
            read.snapshot,
            listed,
        )
        .await
    }

    /// Commits `txn` with what its own writer wrote and the `statuses` other writers of it
    /// reported; `avro_schema` is the table's Avro schema (without meta fields). Then runs
    /// the table services after a commit.
    pub async fn commit(
        &self,
        mut txn: Transaction,
        statuses: Vec<WriteStatus>,
        avro_schema: String,
    ) -> Result<CommitMetadata> {
        for status in statuses {
            txn.gather(status)?;
        }
        let (commit, after) = txn.commit_with_timeline(avro_schema).await?;
        self.services_after_commit(after, true).await?;
        Ok(commit)
    }

    /// The table services after a commit, inside the table lock under optimistic
    /// concurrency: compaction (when `compact`), cleaning and archival. `after` is the
    /// timeline right after the commit when the writer knows it; else (another writer may
    /// have committed) it is listed inside the lock.
    pub async fn services_after_commit(
        &self,
        after: Option<Timeline>,
        compact: bool,
    ) -> Result<()> {
        let (table, spec) = (&self.table, &self.spec);
        let services = async {
            let timeline = match after {
                Some(t) => t,
                None => table.timeline().await?,
            };
            let timeline = match compact {
                true => services::compact_after_commit(table, spec, timeline).await?,
                false => timeline,
            };
            services::clean_after_commit(table, spec, timeline).await
        };
        locked(table, &spec.concurrency, services).await
    }

    /// Cleans the table as its clean settings say (whether or not cleaning is automatic),
    /// inside the table lock under optimistic concurrency.
    pub async fn clean(&self) -> Result<Vec<CleanResult>> {
        let (table, spec) = (&self.table, &self.spec);
        locked(table, &spec.concurrency, run_clean(table, &spec.clean)).await
    }

    /// Finishes the compactions pending on a merge-on-read table, inside the table lock
    /// under optimistic concurrency (a write that makes its own instant, such as a
    /// partition delete, does so first).
    pub async fn finish_pending_compactions(&self) -> Result<()> {
        let (table, spec) = (&self.table, &self.spec);
        locked(
            table,
            &spec.concurrency,
            services::finish_pending(table, spec),
        )
        .await
        .map(|_| ())
    }
}

/// [`check_latest_files`] for a write that adds file groups to `partitions` without reading
/// the table (a plain insert): only those partitions are listed, so the check costs what the
/// write touches. A listing this process keeps under `timeline` was checked when it was taken.
async fn check_partitions(
    table: &HudiTable,
    timeline: &Timeline,
    partitions: &std::collections::BTreeSet<String>,
) -> Result<()> {
    if partitions.is_empty() || table.kept_listing(timeline).is_some() {
        return Ok(());
    }
    let storage = table.storage();
    let listing = TableListing::read_partitions(storage, partitions).await?;
    check_latest_files(storage, timeline, &listing, Some(partitions)).await
}
