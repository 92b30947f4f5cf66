//! The table services around a write, in Hudi's order: a compaction an earlier statement left
//! pending runs before the write (table version 6 never keeps one pending across a
//! deltacommit: hudi-rs would hide the logs written meanwhile); after the commit, an inline
//! compaction once enough deltacommits followed the last one, then cleaning
//! (`hoodie.clean.automatic`) and archival (`hoodie.archive.automatic`).

use std::future::Future;

use crate::archive::run_archive_on;
use crate::clean::run_clean_on;
use crate::compaction::{
    delta_commits_since_compaction, execute_compaction, pending_compactions, schedule_compaction,
};
use crate::concurrency::lock::TableLock;
use crate::concurrency::ConcurrencySpec;
use crate::error::{FormatError, Result};
use crate::table::HudiTable;
use crate::table_config::TableType;
use crate::timeline::Timeline;
use crate::write::spec::{InlineCompaction, WriteSpec};

/// Runs `work` (which changes the timeline) inside the table lock under optimistic
/// concurrency control, as it is otherwise; first, a metadata table hoodie cannot keep is
/// refused or removed as `concurrency.metadata_table` says.
pub async fn locked<T, E: From<FormatError>>(
    table: &HudiTable,
    concurrency: &ConcurrencySpec,
    work: impl Future<Output = std::result::Result<T, E>>,
) -> std::result::Result<T, E> {
    if !concurrency.optimistic {
        crate::metadata_table::enforce(table, concurrency.metadata_table).await?;
        return work.await;
    }
    let lock = TableLock::acquire(table.storage(), &concurrency.lock).await?;
    let out = match crate::metadata_table::enforce(table, concurrency.metadata_table).await {
        Ok(()) => work.await,
        Err(e) => Err(e.into()),
    };
    lock.release().await?;
    out
}

/// Runs the compactions pending on a merge-on-read table, for a write that has no current
/// listing of its timeline; returns the listing when nothing was pending, for the write to
/// start from.
pub(crate) async fn finish_pending(
    table: &HudiTable,
    spec: &WriteSpec,
) -> Result<Option<Timeline>> {
    if table.config().table_type()? != TableType::MergeOnRead {
        return Ok(None);
    }
    let timeline = table.timeline().await?;
    let pending = pending_compactions(&timeline);
    if pending.is_empty() {
        return Ok(Some(timeline));
    }
    for instant in pending {
        execute_compaction(table, &instant, &spec.files).await?;
    }
    Ok(None)
}

/// Schedules (and runs, unless only scheduling is asked for) a compaction once enough
/// deltacommits followed the last one. `timeline` is the table's timeline after the write's
/// commit; returns it as it is afterwards (listed again only when a compaction was planned).
pub(crate) async fn compact_after_commit(
    table: &HudiTable,
    spec: &WriteSpec,
    timeline: Timeline,
) -> Result<Timeline> {
    let (after, run) = match spec.compaction {
        InlineCompaction::Off => return Ok(timeline),
        InlineCompaction::Run { after } => (after, true),
        InlineCompaction::Schedule { after } => (after, false),
    };
    // a compaction planned while another writer's deltacommit runs would leave that write's
    // logs on the slice it replaces: under optimistic concurrency a later commit plans it
    let others_writing = spec.concurrency.optimistic
        && timeline
            .pending_writes()
            .iter()
            .any(|i| i.action.is_write());
    if delta_commits_since_compaction(&timeline) < after
        || !pending_compactions(&timeline).is_empty()
        || others_writing
    {
        return Ok(timeline);
    }
    if let Some(instant) = schedule_compaction(table, None, 0).await? {
        if run {
            execute_compaction(table, &instant, &spec.files).await?;
        }
    }
    table.timeline().await
}

/// Cleans, then archives, `table` after a commit, as far as its options do so automatically;
/// `timeline` is the table's timeline after the commit, which the clean extends with its own
/// instant for the archival.
pub(crate) async fn clean_after_commit(
    table: &HudiTable,
    spec: &WriteSpec,
    timeline: Timeline,
) -> Result<()> {
    let mut timeline = timeline;
    if spec.clean.automatic {
        timeline = run_clean_on(table, &spec.clean, timeline).await?.1;
    }
    if spec.archive.automatic {
        run_archive_on(table, &spec.archive, &spec.clean, timeline).await?;
    }
    Ok(())
}
