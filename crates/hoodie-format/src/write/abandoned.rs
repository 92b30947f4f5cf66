//! Writes abandoned before they committed: a statement cancelled mid-way (its future dropped:
//! Ctrl-C in the shell, a signal, a caller's timeout) or failed after its instant began.
//!
//! A [`Transaction`](crate::write::transaction::Transaction) dropped without committing (or
//! its start, dropped after the requested instant was written) records its instant here. [`rollback_abandoned_writes`] then rolls back exactly those
//! instants, and only while they are still pending: never another writer's in-flight write,
//! which [`rollback_failed_writes`](crate::write::rollback::rollback_failed_writes) would take
//! for failed under optimistic concurrency. The shell calls it after cancelling a statement
//! and before exiting on a signal; `HoodieContext` before each statement and after one fails.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::concurrency::heartbeat;
use crate::concurrency::lock::TableLock;
use crate::concurrency::ConcurrencySpec;
use crate::error::Result;
use crate::table::HudiTable;
use crate::timeline::instant::{Instant, State};
use crate::write::rollback::rollback_own;

/// One write whose transaction was dropped before it committed.
struct Abandoned {
    table: HudiTable,
    instant: String,
}

/// The writes of this process abandoned and not rolled back yet.
static ABANDONED: Mutex<Vec<Abandoned>> = Mutex::new(Vec::new());

fn registry() -> std::sync::MutexGuard<'static, Vec<Abandoned>> {
    // a panic while the lock was held leaves a list that is still valid
    ABANDONED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Writes of this process begun and not ended yet (committed, or recorded as abandoned).
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// Held by a write from the moment its requested instant exists: dropped before
/// [`WriteGuard::committed`] (the statement was cancelled or failed), it records the instant
/// as abandoned. It cannot roll back itself: a rollback is asynchronous, `Drop` is not.
pub(crate) struct WriteGuard {
    table: HudiTable,
    instant: String,
    committed: bool,
}

impl WriteGuard {
    /// Guards the write of `instant` on `table`, whose requested instant was just written.
    pub(crate) fn new(table: &HudiTable, instant: &str) -> Self {
        LIVE.fetch_add(1, Ordering::SeqCst);
        Self {
            table: table.clone(),
            instant: instant.to_string(),
            committed: false,
        }
    }

    /// The completed instant is written: nothing to roll back.
    pub(crate) fn committed(&mut self) {
        self.committed = true;
    }

    /// The instant turned out to be another writer's (its requested file existed already).
    pub(crate) fn not_ours(&mut self) {
        self.committed = true;
    }
}

impl Drop for WriteGuard {
    fn drop(&mut self) {
        if !self.committed {
            registry().push(Abandoned {
                table: self.table.clone(),
                instant: std::mem::take(&mut self.instant),
            });
        }
        LIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Waits, at most `limit`, until no write of this process is under way. A cancelled
/// statement's future may own its write inside a task the runtime aborts a moment later; a
/// caller that cancelled every statement waits for them before [`rollback_abandoned_writes`].
/// Whether none is.
pub async fn wait_for_no_writes(limit: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while LIVE.load(Ordering::SeqCst) > 0 {
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    true
}

/// Whether a write of this process was abandoned and is not rolled back yet.
pub fn has_abandoned_writes() -> bool {
    !registry().is_empty()
}

/// A write that [`rollback_abandoned_writes`] rolled back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolledBack {
    /// The table's location.
    pub table: String,
    /// The instant time of the abandoned write.
    pub instant: String,
}

/// Rolls back the writes of this process that were abandoned before they committed and are
/// still pending (a write that completed, or that another writer rolled back meanwhile, is
/// left alone). Waits first for the writer tasks of cancelled statements to stop, so none
/// writes a file after the rollback. A write whose rollback fails stays recorded for the
/// next call.
pub async fn rollback_abandoned_writes() -> Result<Vec<RolledBack>> {
    if !has_abandoned_writes() {
        return Ok(Vec::new());
    }
    crate::tasks::wait_for_stopped_writers().await;
    let pending: Vec<Abandoned> = std::mem::take(&mut *registry());
    let mut done = Vec::new();
    let mut rest = pending.into_iter();
    while let Some(write) = rest.next() {
        match rollback_if_pending(&write).await {
            Ok(true) => done.push(RolledBack {
                table: write.table.storage().location().to_string(),
                instant: write.instant,
            }),
            Ok(false) => {}
            Err(e) => {
                let mut registry = registry();
                registry.push(write);
                registry.extend(rest);
                return Err(e);
            }
        }
    }
    Ok(done)
}

/// Rolls `write` back if its instant is still pending; whether it was. Under optimistic
/// concurrency inside the table lock, as a conflicting write rolls itself back.
async fn rollback_if_pending(write: &Abandoned) -> Result<bool> {
    let concurrency = ConcurrencySpec::of_table(write.table.config())?;
    let lock = match concurrency.optimistic {
        true => Some(TableLock::acquire(write.table.storage(), &concurrency.lock).await?),
        false => None,
    };
    let outcome = rollback_locked(write).await;
    if let Some(lock) = lock {
        lock.release().await?;
    }
    outcome
}

async fn rollback_locked(write: &Abandoned) -> Result<bool> {
    let mut timeline = write.table.timeline().await?;
    if !timeline
        .files()
        .iter()
        .any(|i| i.timestamp == write.instant)
    {
        // a write dropped while its requested file was being put: the store's blocking
        // task may finish the file a moment after the future was gone
        tokio::time::sleep(Duration::from_millis(100)).await;
        timeline = write.table.timeline().await?;
    }
    let own: Vec<&Instant> = timeline
        .files()
        .iter()
        .filter(|i| i.timestamp == write.instant && i.action.is_write())
        .collect();
    let completed = own.iter().any(|i| i.state == State::Completed);
    // the latest state the instant reached: a rollback records which one it undid
    let Some(target) = own
        .iter()
        .max_by_key(|i| i.state == State::Inflight)
        .copied()
    else {
        // rolled back already (by another writer) or never begun: the heartbeat may be left
        let _ = write
            .table
            .storage()
            .delete(&heartbeat::heartbeat_path(&write.instant))
            .await;
        return Ok(false);
    };
    if completed {
        return Ok(false);
    }
    let target = target.clone();
    rollback_own(&write.table, &timeline, &target).await?;
    Ok(true)
}
