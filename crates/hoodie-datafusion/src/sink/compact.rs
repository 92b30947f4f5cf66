//! Compaction around a write to a merge-on-read table: a compaction a failed or earlier
//! statement left pending runs before the write (table version 6 never keeps one pending
//! across a deltacommit: hudi-rs would hide the logs written meanwhile), and the write's
//! deltacommit may trigger one inline.

use datafusion::error::Result as DFResult;
use hoodie_format::compaction::{
    delta_commits_since_compaction, execute_compaction, pending_compactions, schedule_compaction,
};
use hoodie_format::timeline::Timeline;
use hoodie_format::write::spec::{InlineCompaction, WriteSpec};
use hoodie_format::{HudiTable, TableType};

use crate::error::df_err;

/// Runs the compactions pending on a merge-on-read table, for a write that has no current
/// listing of its timeline; returns the listing when nothing was pending, for the write to
/// start from.
pub(crate) async fn finish_pending(
    table: &HudiTable,
    spec: &WriteSpec,
) -> DFResult<Option<Timeline>> {
    if table.config().table_type().map_err(df_err)? != TableType::MergeOnRead {
        return Ok(None);
    }
    let timeline = table.timeline().await.map_err(df_err)?;
    let pending = pending_compactions(&timeline);
    if pending.is_empty() {
        return Ok(Some(timeline));
    }
    for instant in pending {
        execute_compaction(table, &instant, &spec.files)
            .await
            .map_err(df_err)?;
    }
    Ok(None)
}

/// Schedules (and runs, unless only scheduling is asked for) a compaction once enough
/// deltacommits followed the last one. `timeline` is the table's timeline after the write's
/// commit; returns it as it is afterwards (listed again only when a compaction was planned).
pub(crate) async fn after_commit(
    table: &HudiTable,
    spec: &WriteSpec,
    timeline: Timeline,
) -> DFResult<Timeline> {
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
    if let Some(instant) = schedule_compaction(table, None, 0).await.map_err(df_err)? {
        if run {
            execute_compaction(table, &instant, &spec.files)
                .await
                .map_err(df_err)?;
        }
    }
    table.timeline().await.map_err(df_err)
}
