//! Cleaning: deleting the file slices no reader within the retention window needs, as Hudi's
//! cleaner does (table version 6). A clean is three timeline files: `C.clean.requested` (the
//! Avro plan: the files to delete), `C.clean.inflight` (the same plan), then the files are
//! deleted and `C.clean` records what was deleted. A clean that stopped half-way is finished
//! from its plan by the next one, before anything new is planned.

mod plan;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

pub use crate::avro::clean::CleanMetadata;
use crate::avro::clean::{
    clean_metadata_avro, cleaner_plan_avro, parse_clean_metadata, parse_cleaner_plan,
    CleanPartition, CleanerPlan, CLEAN_METADATA_VERSION,
};
use crate::config::{self, ConfigKey};
use crate::error::{FormatError, Result};
use crate::fs_view::integrity::check_latest_files;
use crate::fs_view::{FileChange, TableListing};
use crate::table::HudiTable;
use crate::table_config::TableType;
use crate::timeline::instant::{new_instant_time, Action, Instant, State};
use crate::timeline::Timeline;

pub use plan::{earliest_commit_to_retain, earliest_commit_to_retain_at, plan_clean, PlanInput};

/// Which file slices a clean keeps (`hoodie.cleaner.policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CleanPolicy {
    /// The slices the last `hoodie.cleaner.commits.retained` commits may read.
    KeepLatestCommits,
    /// The latest `hoodie.cleaner.fileversions.retained` slices of each file group.
    KeepLatestFileVersions,
    /// The slices the commits of the last `hoodie.cleaner.hours.retained` hours may read.
    KeepLatestByHours,
}

impl CleanPolicy {
    /// Hudi's name of the policy.
    pub fn name(&self) -> &'static str {
        match self {
            CleanPolicy::KeepLatestCommits => "KEEP_LATEST_COMMITS",
            CleanPolicy::KeepLatestFileVersions => "KEEP_LATEST_FILE_VERSIONS",
            CleanPolicy::KeepLatestByHours => "KEEP_LATEST_BY_HOURS",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        [
            CleanPolicy::KeepLatestCommits,
            CleanPolicy::KeepLatestFileVersions,
            CleanPolicy::KeepLatestByHours,
        ]
        .into_iter()
        .find(|p| p.name().eq_ignore_ascii_case(name.trim()))
    }
}

/// How and when a table is cleaned, from the options a write or `CALL run_clean` sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CleanSpec {
    /// Clean after every commit (`hoodie.clean.automatic`).
    pub automatic: bool,
    /// What is kept.
    pub policy: CleanPolicy,
    /// `hoodie.cleaner.commits.retained`.
    pub commits_retained: usize,
    /// `hoodie.cleaner.hours.retained`.
    pub hours_retained: u64,
    /// `hoodie.cleaner.fileversions.retained`.
    pub file_versions_retained: usize,
    /// Commits since the last clean before a new one is planned (`hoodie.clean.max.commits`).
    pub max_commits: usize,
    /// Look only at the partitions written since the last clean
    /// (`hoodie.cleaner.incremental.mode`).
    pub incremental: bool,
}

impl CleanSpec {
    /// The spec from `get` (the option a key has, explicitly set or its default; `explicit`
    /// tells which were set). An unset policy is inferred from the retention key set, as
    /// Hudi 1.x does: commits, else hours, else file versions.
    pub fn resolve(
        get: impl Fn(&ConfigKey) -> Option<String>,
        explicit: impl Fn(&ConfigKey) -> bool,
    ) -> Result<Self> {
        for key in CLEAN_KEYS {
            if let Some(v) = get(key).filter(|_| explicit(key)) {
                key.check(&v)?;
            }
        }
        let number = |key: &ConfigKey| -> Result<u64> {
            let v = get(key)
                .or(key.default.map(str::to_string))
                .unwrap_or_default();
            v.trim().parse::<u64>().map_err(|_| {
                FormatError::from(config::InvalidValue {
                    key: key.key,
                    value: v.clone(),
                    allowed: key.kind.describe(),
                })
            })
        };
        let policy = match get(&config::CLEANER_POLICY)
            .filter(|_| explicit(&config::CLEANER_POLICY))
        {
            Some(p) => CleanPolicy::parse(&p).expect("checked against the key's values"),
            None if explicit(&config::CLEANER_COMMITS_RETAINED) => CleanPolicy::KeepLatestCommits,
            None if explicit(&config::CLEANER_HOURS_RETAINED) => CleanPolicy::KeepLatestByHours,
            None if explicit(&config::CLEANER_FILE_VERSIONS_RETAINED) => {
                CleanPolicy::KeepLatestFileVersions
            }
            None => CleanPolicy::KeepLatestCommits,
        };
        let trigger = get(&config::CLEAN_TRIGGER_STRATEGY).unwrap_or_default();
        if !trigger.trim().eq_ignore_ascii_case("NUM_COMMITS") {
            return Err(FormatError::Unsupported {
                feature: format!("{} = {trigger}", config::CLEAN_TRIGGER_STRATEGY.key),
            });
        }
        Ok(Self {
            automatic: get(&config::CLEAN_AUTOMATIC)
                .is_none_or(|v| !v.trim().eq_ignore_ascii_case("false")),
            policy,
            commits_retained: number(&config::CLEANER_COMMITS_RETAINED)? as usize,
            hours_retained: number(&config::CLEANER_HOURS_RETAINED)?,
            file_versions_retained: number(&config::CLEANER_FILE_VERSIONS_RETAINED)? as usize,
            max_commits: number(&config::CLEAN_MAX_COMMITS)? as usize,
            incremental: get(&config::CLEANER_INCREMENTAL_MODE)
                .is_none_or(|v| !v.trim().eq_ignore_ascii_case("false")),
        })
    }
}

/// The keys a clean reads.
pub const CLEAN_KEYS: &[ConfigKey] = &[
    config::CLEAN_AUTOMATIC,
    config::CLEAN_ASYNC,
    config::CLEANER_POLICY,
    config::CLEANER_COMMITS_RETAINED,
    config::CLEANER_HOURS_RETAINED,
    config::CLEANER_FILE_VERSIONS_RETAINED,
    config::CLEAN_TRIGGER_STRATEGY,
    config::CLEAN_MAX_COMMITS,
    config::CLEANER_INCREMENTAL_MODE,
];

/// What a completed clean did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CleanResult {
    /// The clean's instant time.
    pub instant: String,
    /// Its metadata, as `C.clean` holds it.
    pub metadata: CleanMetadata,
    /// The completed instant (with its completion time on table versions 8 and 9).
    pub completed: Instant,
}

/// Commits completed since the last clean's latest commit (Hudi's `getCommitsSinceLastCleaning`).
async fn commits_since_last_clean(table: &HudiTable, timeline: &Timeline) -> Result<usize> {
    let last = timeline
        .instants()
        .iter()
        .rev()
        .find(|i| i.action == Action::Clean && i.state == State::Completed);
    let after = match last {
        Some(clean) => {
            read_metadata(table, timeline, clean)
                .await?
                .last_completed_commit
        }
        None => String::new(),
    };
    Ok(timeline
        .completed_writes()
        .filter(|i| i.timestamp > after)
        .count())
}

async fn read_metadata(
    table: &HudiTable,
    timeline: &Timeline,
    clean: &Instant,
) -> Result<CleanMetadata> {
    let rel = timeline.writer_layout().path(clean);
    parse_clean_metadata(&table.storage().get(&rel).await?, &rel)
}

/// Cleans `table` under `spec`: finishes any clean left pending, then, when at least
/// `max_commits` commits followed the last clean and some file is no longer needed, plans,
/// runs and completes a new one. Returns the cleans completed (none when nothing was due).
pub(crate) async fn run_clean(table: &HudiTable, spec: &CleanSpec) -> Result<Vec<CleanResult>> {
    Ok(run_clean_on(table, spec, table.timeline().await?).await?.0)
}

/// [`run_clean`] starting from `timeline`, the table's current timeline as the caller knows
/// it (a writer right after its commit), so that it is not listed again; returns the cleans
/// completed and the timeline after them (for the archival that follows).
pub async fn run_clean_on(
    table: &HudiTable,
    spec: &CleanSpec,
    timeline: Timeline,
) -> Result<(Vec<CleanResult>, Timeline)> {
    let mut done = finish_pending_cleans_on(table, &timeline).await?;
    let timeline = match done.is_empty() {
        true => timeline,
        false => table.timeline().await?,
    };
    if commits_since_last_clean(table, &timeline).await? < spec.max_commits {
        return Ok((done, timeline));
    }
    let Some(plan) = plan_of(table, &timeline, spec).await? else {
        return Ok((done, timeline));
    };
    let instant = new_instant_time(timeline.last_instant_time());
    let layout = timeline.writer_layout();
    let requested = layout.pending_path(&instant, Action::Clean, State::Requested);
    let bytes = cleaner_plan_avro(&plan, &requested)?;
    let storage = table.storage();
    storage.put_if_absent(&requested, bytes.clone()).await?;
    let cleaned = execute(table, &timeline, &instant, &plan, bytes).await?;
    let after = timeline.with_files([
        Instant::new(&instant, Action::Clean, State::Requested),
        Instant::new(&instant, Action::Clean, State::Inflight),
        cleaned.completed.clone(),
    ]);
    table.advance_listing(&timeline, &after, &deleted_files(&cleaned.metadata));
    done.push(cleaned);
    Ok((done, after))
}

/// The files a clean deleted, relative to the table.
fn deleted_files(metadata: &CleanMetadata) -> FileChange {
    let removed = metadata
        .partitions
        .iter()
        .flat_map(|(partition, part)| {
            part.success_delete_files
                .iter()
                .map(move |name| match partition.is_empty() {
                    true => name.clone(),
                    false => format!("{partition}/{name}"),
                })
        })
        .collect();
    FileChange {
        added: Vec::new(),
        removed,
    }
}

async fn plan_of(
    table: &HudiTable,
    timeline: &Timeline,
    spec: &CleanSpec,
) -> Result<Option<CleanerPlan>> {
    // as Hudi's CleanPlanner ("No earliest commit to retain. No need to scan partitions"):
    // without a commit to retain from, the commit and hour policies clean nothing, so the
    // table is not listed
    if spec.policy != CleanPolicy::KeepLatestFileVersions
        && earliest_commit_to_retain(spec, timeline).is_none()
    {
        return Ok(None);
    }
    let storage = table.storage();
    // the listing the write before this clean read (carried across its commit) when the
    // table is kept listed; else the partitions incremental cleaning looks at are listed
    let changed = changed_partitions(table, timeline, spec).await?;
    let listing = match (table.kept_listing(timeline), changed) {
        (Some(kept), None) => kept,
        (Some(kept), Some(partitions)) => Arc::new(kept.of_partitions(&partitions)),
        // a fresh listing is held against the commits: cleaning a table that lost a file of
        // a latest slice would delete the previous versions a rollback needs
        (None, Some(partitions)) => {
            let listing = TableListing::read_partitions(storage, &partitions).await?;
            check_latest_files(storage, timeline, &listing, Some(&partitions)).await?;
            Arc::new(listing)
        }
        (None, None) => {
            let listing = TableListing::read(storage).await?;
            check_latest_files(storage, timeline, &listing, None).await?;
            Arc::new(listing)
        }
    };
    let mut replaced = HashMap::new();
    for i in timeline.completed_writes() {
        if i.action == Action::ReplaceCommit {
            let m = timeline.read_commit_metadata(storage, i).await?;
            for (p, id) in m.replaced_file_ids() {
                replaced.insert((p.to_string(), id.to_string()), i.timestamp.clone());
            }
        }
    }
    let mut compacting = HashSet::new();
    for instant in crate::compaction::pending_compactions(timeline) {
        let plan = crate::compaction::read_plan(table, timeline, &instant).await?;
        for op in plan.operations {
            compacting.insert((op.partition_path, op.file_id));
        }
    }
    let savepointed = crate::savepoint::savepointed_files(table, timeline).await?;
    let cfg = table.config();
    let with_logs = cfg.table_type()? == TableType::MergeOnRead || cfg.cdc_mode()?.is_some();
    let input = PlanInput {
        timeline,
        listing: &listing,
        replaced: &replaced,
        compacting: &compacting,
        savepointed: &savepointed,
        with_logs,
        location: storage.location(),
    };
    Ok(plan_clean(spec, &input))
}

/// Hudi's incremental cleaning (`hoodie.cleaner.incremental.mode`): the partitions the
/// completed writes from the last clean's earliest kept commit up to the new one wrote or
/// replaced in, the only ones where a file version can have become unneeded since; `None`
/// (list the whole table) without such a clean, or under `KEEP_LATEST_FILE_VERSIONS`.
async fn changed_partitions(
    table: &HudiTable,
    timeline: &Timeline,
    spec: &CleanSpec,
) -> Result<Option<BTreeSet<String>>> {
    if !spec.incremental || spec.policy == CleanPolicy::KeepLatestFileVersions {
        return Ok(None);
    }
    let last = timeline
        .instants()
        .iter()
        .rev()
        .find(|i| i.action == Action::Clean && i.state == State::Completed);
    let Some(last) = last else {
        return Ok(None);
    };
    let since = read_metadata(table, timeline, last)
        .await?
        .earliest_commit_to_retain;
    if since.is_empty() {
        return Ok(None);
    }
    let Some(until) = earliest_commit_to_retain(spec, timeline).map(|i| i.timestamp.clone()) else {
        return Ok(Some(BTreeSet::new()));
    };
    let mut partitions = BTreeSet::new();
    for i in timeline.completed_writes() {
        if i.timestamp < since || i.timestamp >= until {
            continue;
        }
        let m = timeline.read_commit_metadata(table.storage(), i).await?;
        partitions.extend(m.partition_to_write_stats.keys().cloned());
        partitions.extend(m.replaced_file_ids().map(|(p, _)| p.to_string()));
    }
    Ok(Some(partitions))
}

/// Finishes every clean that was planned but not completed, oldest first.
pub(crate) async fn finish_pending_cleans(table: &HudiTable) -> Result<Vec<CleanResult>> {
    finish_pending_cleans_on(table, &table.timeline().await?).await
}

/// Finishes the cleans `timeline` shows pending, oldest first.
async fn finish_pending_cleans_on(
    table: &HudiTable,
    timeline: &Timeline,
) -> Result<Vec<CleanResult>> {
    let pending: Vec<&Instant> = timeline
        .instants()
        .iter()
        .filter(|i| i.action == Action::Clean && i.state != State::Completed)
        .collect();
    let mut done = Vec::new();
    for i in pending {
        let rel =
            timeline
                .writer_layout()
                .pending_path(&i.timestamp, Action::Clean, State::Requested);
        let bytes = table.storage().get(&rel).await?;
        let plan = parse_cleaner_plan(&bytes, &rel)?;
        done.push(execute(table, timeline, &i.timestamp, &plan, bytes.to_vec()).await?);
    }
    Ok(done)
}

/// Marks clean `instant` inflight, deletes its plan's files (a file already gone counts as
/// deleted, so a clean redone after a crash completes) and completes it. A clean that fails
/// may have deleted files while its instant is pending: the table's kept listing is dropped.
async fn execute(
    table: &HudiTable,
    timeline: &Timeline,
    instant: &str,
    plan: &CleanerPlan,
    plan_bytes: Vec<u8>,
) -> Result<CleanResult> {
    let done = execute_plan(table, timeline, instant, plan, plan_bytes).await;
    if done.is_err() {
        table.forget_listing();
    }
    done
}

async fn execute_plan(
    table: &HudiTable,
    timeline: &Timeline,
    instant: &str,
    plan: &CleanerPlan,
    plan_bytes: Vec<u8>,
) -> Result<CleanResult> {
    let storage = table.storage();
    let layout = timeline.writer_layout();
    let inflight = layout.pending_path(instant, Action::Clean, State::Inflight);
    if !storage.exists(&inflight).await? {
        storage.put_if_absent(&inflight, plan_bytes).await?;
    }
    let started = std::time::Instant::now();
    let mut partitions = BTreeMap::new();
    let mut total = 0i32;
    for (partition, paths) in &plan.files {
        let mut part = CleanPartition::default();
        for path in paths {
            let name = plan::file_name(path).to_string();
            let rel = if partition.is_empty() {
                name.clone()
            } else {
                format!("{partition}/{name}")
            };
            part.delete_path_patterns.push(name.clone());
            storage.delete(&rel).await?;
            part.success_delete_files.push(name);
            total += 1;
        }
        partitions.insert(partition.clone(), part);
    }
    let metadata = CleanMetadata {
        policy: plan.policy.clone(),
        start_clean_time: instant.to_string(),
        time_taken_ms: started.elapsed().as_millis() as i64,
        total_files_deleted: total,
        earliest_commit_to_retain: plan
            .earliest_instant_to_retain
            .as_ref()
            .map(|(t, _)| t.clone())
            .unwrap_or_default(),
        last_completed_commit: plan.last_completed_commit.clone(),
        partitions,
        version: CLEAN_METADATA_VERSION,
    };
    let completed = layout.completing(instant, Action::Clean, timeline.latest_time());
    let path = layout.path(&completed);
    let bytes = clean_metadata_avro(&metadata, &path)?;
    storage.put_if_absent(&path, bytes).await?;
    Ok(CleanResult {
        instant: instant.to_string(),
        metadata,
        completed,
    })
}

/// Every clean of the active timeline, newest first: its instant and, once completed, its
/// metadata.
pub async fn list_cleans(table: &HudiTable) -> Result<Vec<(Instant, Option<CleanMetadata>)>> {
    let timeline = table.timeline().await?;
    let mut out = Vec::new();
    for i in timeline.instants().iter().rev() {
        if i.action != Action::Clean {
            continue;
        }
        let meta = match i.state {
            State::Completed => Some(read_metadata(table, &timeline, i).await?),
            _ => None,
        };
        out.push((i.clone(), meta));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
