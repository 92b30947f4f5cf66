//! The table services and the operations that change a table's timeline outside a write, as
//! Hudi's table service client runs them: compaction, cleaning, archival, rollback of a
//! completed write and savepoints. Each runs inside the table lock under optimistic
//! concurrency control, so an engine calls a method and never takes the lock itself.

use crate::archive::{run_archive, ArchiveSpec};
use crate::clean::{finish_pending_cleans, run_clean, CleanResult, CleanSpec};
use crate::compaction::{execute_compaction, pending_compactions, schedule_compaction};
use crate::concurrency::ConcurrencySpec;
use crate::error::Result;
use crate::refusal::CompactionRefusal;
use crate::savepoint;
use crate::table::HudiTable;
use crate::timeline::Instant;
use crate::write::rollback::rollback_completed;
use crate::write::FileSpec;

use super::locked;

/// What a compaction call asks for (Spark Hudi's `run_compaction` procedure and its
/// `SCHEDULE | RUN COMPACTION` commands).
#[derive(Debug, Clone)]
pub struct CompactionRequest {
    /// Plan a new compaction.
    pub schedule: bool,
    /// Run compactions: the one just planned, else `instants`, else every pending one.
    pub execute: bool,
    /// The pending compactions to run (each must be pending).
    pub instants: Option<Vec<String>>,
    /// The instant to plan at (a schedule that does not also execute).
    pub at: Option<String>,
    /// At most this many pending compactions.
    pub limit: Option<usize>,
    /// Plan only once this many deltacommits followed the last compaction (Hudi's
    /// `NUM_COMMITS` trigger).
    pub after: usize,
    /// How the compacted base files are written.
    pub files: FileSpec,
}

/// The table services of one table.
#[derive(Debug, Clone)]
pub struct TableServices {
    table: HudiTable,
    concurrency: ConcurrencySpec,
}

impl TableServices {
    /// The services of `table` under `concurrency`.
    pub fn new(table: &HudiTable, concurrency: ConcurrencySpec) -> Self {
        Self {
            table: table.clone(),
            concurrency,
        }
    }

    /// Plans and/or runs compactions as `request` says; the compaction instants affected.
    pub async fn compact(&self, request: &CompactionRequest) -> Result<Vec<String>> {
        locked(
            &self.table,
            &self.concurrency,
            self.compact_unlocked(request),
        )
        .await
    }

    async fn compact_unlocked(&self, request: &CompactionRequest) -> Result<Vec<String>> {
        let table = &self.table;
        let pending = pending_compactions(&table.timeline().await?);
        let mut affected = match &request.instants {
            Some(list) => {
                if let Some(i) = list.iter().find(|i| !pending.contains(i)) {
                    return Err(CompactionRefusal::NotPending {
                        instant: i.to_string(),
                        table: table.config().name().to_string(),
                        pending,
                    }
                    .into());
                }
                list.clone()
            }
            None => pending,
        };
        if let Some(l) = request.limit {
            affected.truncate(l);
        }
        if request.schedule {
            let at = match request.execute {
                true => None,
                false => request.at.as_deref(),
            };
            affected = match schedule_compaction(table, at, request.after).await? {
                Some(c) => vec![c],
                None if request.execute => affected,
                None => Vec::new(),
            };
        }
        if request.execute {
            for c in &affected {
                execute_compaction(table, c, &request.files).await?;
            }
        }
        Ok(affected)
    }

    /// Finishes any pending clean, then plans and runs a new one as `spec` says (whether or
    /// not cleaning is automatic); the cleans completed.
    pub async fn clean(&self, spec: &CleanSpec) -> Result<Vec<CleanResult>> {
        locked(&self.table, &self.concurrency, run_clean(&self.table, spec)).await
    }

    /// Finishes the cleans left pending, planning none.
    pub async fn finish_pending_cleans(&self) -> Result<Vec<CleanResult>> {
        locked(
            &self.table,
            &self.concurrency,
            finish_pending_cleans(&self.table),
        )
        .await
    }

    /// Archives the timeline as `spec` bounds it (never past what `clean` keeps); the instants
    /// archived.
    pub async fn archive(&self, spec: &ArchiveSpec, clean: &CleanSpec) -> Result<Vec<Instant>> {
        let work = run_archive(&self.table, spec, clean);
        locked(&self.table, &self.concurrency, work).await
    }

    /// Rolls back the latest completed write, which must be `instant`; the rollback's instant.
    pub async fn rollback(&self, instant: &str) -> Result<String> {
        let work = rollback_completed(&self.table, instant);
        locked(&self.table, &self.concurrency, work).await
    }

    /// Savepoints the completed commit `commit`.
    pub async fn create_savepoint(&self, commit: &str, user: &str, comments: &str) -> Result<()> {
        let work = savepoint::create_savepoint(&self.table, commit, user, comments);
        locked(&self.table, &self.concurrency, work).await
    }

    /// Deletes the savepoint at `instant`.
    pub async fn delete_savepoint(&self, instant: &str) -> Result<()> {
        let work = savepoint::delete_savepoint(&self.table, instant);
        locked(&self.table, &self.concurrency, work).await
    }

    /// Moves the table to version `to` (6, 8 or 9, up or down) as Hudi's `upgrade_table` and
    /// `downgrade_table` do, with `spec` saying what to do with a metadata table a Spark
    /// writer left, how the archived timeline goes into the LSM history and how a
    /// merge-on-read table's compaction writes.
    pub async fn change_version(
        &self,
        to: u32,
        spec: &crate::upgrade::UpgradeSpec,
    ) -> Result<crate::upgrade::Upgrade> {
        let work = crate::upgrade::change_version(&self.table, to, spec);
        locked(&self.table, &self.concurrency, work).await
    }

    /// Restores the table to the savepoint at `instant`: every later write rolled back.
    pub async fn restore_to_savepoint(&self, instant: &str) -> Result<String> {
        let work = savepoint::restore_to_savepoint(&self.table, instant, &self.concurrency);
        locked(&self.table, &self.concurrency, work).await
    }
}
