//! Compaction of merge-on-read tables: a plan of the file slices with log files
//! (`C.compaction.requested`, Avro), then each slice merged into a new base file of instant
//! `C` (`C.compaction.inflight`, empty), then a `C.commit` with `operationType COMPACT` and
//! `compacted: true`. The records keep their commit time and sequence number;
//! `_hoodie_file_name` names the new file.

mod execute;
mod splice;

use std::collections::BTreeMap;

use crate::avro::compaction_plan::{
    compaction_plan_avro, parse_compaction_plan, CompactionOperation, CompactionPlan,
    COMPACTION_PLAN_VERSION,
};
use crate::error::Result;
use crate::refusal::CompactionRefusal;
use crate::table::HudiTable;
use crate::table_config::TableType;
use crate::timeline::instant::{new_instant_time, Action, Instant, State};
use crate::timeline::Timeline;

pub use execute::{execute_compaction, CompactionResult};

/// A compaction instant on the timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionInstant {
    /// The instant time.
    pub timestamp: String,
    /// `REQUESTED`, `INFLIGHT` or `COMPLETED`, as Hudi's `HoodieInstant.State` names them.
    pub state: &'static str,
    /// The number of file slices its plan compacts.
    pub operations: usize,
}

fn check_mor(table: &HudiTable) -> Result<()> {
    match table.config().table_type()? {
        TableType::MergeOnRead => Ok(()),
        TableType::CopyOnWrite => Err(CompactionRefusal::CopyOnWrite.into()),
    }
}

/// Compaction instants still to run (requested or inflight), oldest first.
pub fn pending_compactions(timeline: &Timeline) -> Vec<String> {
    timeline
        .instants()
        .iter()
        .filter(|i| i.action == Action::Compaction && i.state != State::Completed)
        .map(|i| i.timestamp.clone())
        .collect()
}

/// Deltacommits completed since the last compaction (or since the table began).
pub fn delta_commits_since_compaction(timeline: &Timeline) -> usize {
    let writes: Vec<_> = timeline.completed_writes().collect();
    writes
        .into_iter()
        .rev()
        .take_while(|i| i.action != Action::Commit)
        .filter(|i| i.action == Action::DeltaCommit)
        .count()
}

/// Plans a compaction of every latest file slice with log files at `at` (a new instant
/// after every instant on the timeline when `None`); `Ok(None)` when no slice has logs, or
/// when fewer than `after` deltacommits followed the last compaction (Hudi's NUM_COMMITS
/// trigger, `hoodie.compact.inline.max.delta.commits`; 0 plans whatever the count).
pub async fn schedule_compaction(
    table: &HudiTable,
    at: Option<&str>,
    after: usize,
) -> Result<Option<String>> {
    check_mor(table)?;
    let timeline = table.timeline().await?;
    let last = timeline.last_instant_time();
    let instant = match at {
        Some(t) => {
            // Hudi: the instant must follow every instant on the timeline
            if last.is_some_and(|l| t <= l)
                || t.len() != 17
                || !t.bytes().all(|b| b.is_ascii_digit())
            {
                return Err(CompactionRefusal::BadInstant {
                    instant: t.to_string(),
                    latest: last.map(str::to_string),
                }
                .into());
            }
            t.to_string()
        }
        None => new_instant_time(last),
    };
    if delta_commits_since_compaction(&timeline) < after {
        return Ok(None);
    }
    // a file group a pending compaction already plans is left to it
    let mut planned = std::collections::HashSet::new();
    for c in pending_compactions(&timeline) {
        for op in read_plan(table, &timeline, &c).await?.operations {
            planned.insert((op.partition_path, op.file_id));
        }
    }
    let slices = table.file_slices(&timeline, None).await?;
    let mut operations = Vec::new();
    for s in slices.into_iter().filter(|s| {
        !s.log_files.is_empty() && !planned.contains(&(s.partition_path.clone(), s.file_id.clone()))
    }) {
        let names: Vec<String> = s
            .log_files
            .iter()
            .map(|l| l.rsplit('/').next().unwrap_or(l).to_string())
            .collect();
        let mut log_bytes = 0u64;
        for l in &s.log_files {
            log_bytes += table.storage().head_size(l).await?;
        }
        let base_bytes = s.base_file.as_ref().map_or(0, |b| b.size);
        let mb = |b: u64| b as f64 / (1024.0 * 1024.0);
        let metrics = BTreeMap::from([
            ("TOTAL_LOG_FILES".to_string(), names.len() as f64),
            ("TOTAL_LOG_FILES_SIZE".to_string(), log_bytes as f64),
            ("TOTAL_IO_READ_MB".to_string(), mb(base_bytes + log_bytes)),
            ("TOTAL_IO_WRITE_MB".to_string(), mb(base_bytes)),
            ("TOTAL_IO_MB".to_string(), mb(2 * base_bytes + log_bytes)),
        ]);
        operations.push(CompactionOperation {
            base_instant_time: s.base_instant.clone(),
            delta_file_paths: names,
            data_file_path: s.base_file.as_ref().map(|b| b.name.name()),
            file_id: s.file_id.clone(),
            partition_path: s.partition_path.clone(),
            metrics,
        });
    }
    if operations.is_empty() {
        return Ok(None);
    }
    let plan = CompactionPlan {
        operations,
        extra_metadata: BTreeMap::new(),
        version: COMPACTION_PLAN_VERSION,
    };
    let requested = Instant::new(&instant, Action::Compaction, State::Requested);
    table
        .storage()
        .put_if_absent(
            &format!(
                "{}/{}",
                timeline.dir(),
                requested.file_name(timeline.layout())
            ),
            compaction_plan_avro(&plan)?,
        )
        .await?;
    Ok(Some(instant))
}

/// The plan of compaction `instant`.
pub async fn read_plan(
    table: &HudiTable,
    timeline: &Timeline,
    instant: &str,
) -> Result<CompactionPlan> {
    let requested = Instant::new(instant, Action::Compaction, State::Requested);
    let rel = format!(
        "{}/{}",
        timeline.dir(),
        requested.file_name(timeline.layout())
    );
    if !table.storage().exists(&rel).await? {
        return Err(CompactionRefusal::NotPlanned {
            instant: instant.to_string(),
            plan: rel.to_string(),
        }
        .into());
    }
    parse_compaction_plan(&table.storage().get(&rel).await?, &rel)
}

/// Every compaction instant of the active timeline, newest first, with its state and plan size.
pub async fn list_compactions(table: &HudiTable) -> Result<Vec<CompactionInstant>> {
    let timeline = table.timeline().await?;
    let mut out = Vec::new();
    let compactions: Vec<(String, State)> = timeline
        .files()
        .iter()
        .filter(|i| i.action == Action::Compaction && i.state == State::Requested)
        .map(|i| {
            let state = timeline
                .instants()
                .iter()
                .find(|l| l.timestamp == i.timestamp)
                .map_or(State::Requested, |l| l.state);
            (i.timestamp.clone(), state)
        })
        .collect();
    let mut compactions = compactions;
    compactions.sort_by(|a, b| b.0.cmp(&a.0));
    compactions.dedup_by(|a, b| a.0 == b.0);
    for (ts, state) in compactions {
        let plan = read_plan(table, &timeline, &ts).await?;
        out.push(CompactionInstant {
            timestamp: ts,
            state: match state {
                State::Requested => "REQUESTED",
                State::Inflight => "INFLIGHT",
                State::Completed => "COMPLETED",
            },
            operations: plan.operations.len(),
        });
    }
    Ok(out)
}
