//! Which files a clean deletes, as Hudi's `CleanPlanner` picks them: per file group, the old
//! file slices a policy no longer needs, and every slice of file groups replaced long enough
//! ago. Pure over a listing and a timeline, so every policy is tested on plain data.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::avro::clean::CleanerPlan;
use crate::fs_view::{FileSlice, TableListing};
use crate::timeline::instant::{instant_to_millis, millis_to_instant, Instant};
use crate::timeline::Timeline;

use super::{CleanPolicy, CleanSpec};

/// What the planner looks at besides the spec.
pub struct PlanInput<'a> {
    /// The active timeline.
    pub timeline: &'a Timeline,
    /// Every data file of the table.
    pub listing: &'a TableListing,
    /// Replaced file groups (partition, file id), each with the time of the replacecommit.
    pub replaced: &'a HashMap<(String, String), String>,
    /// File groups a pending compaction reads: never touched.
    pub compacting: &'a HashSet<(String, String)>,
    /// Base file names a savepoint holds: never deleted.
    pub savepointed: &'a HashSet<String>,
    /// Whether log files go with their slice (merge-on-read tables, and CDC logs of any table).
    pub with_logs: bool,
    /// The table's location, which the plan's absolute paths start with.
    pub location: &'a str,
}

/// The earliest commit a clean under `spec` keeps now (Hudi's `CleanPlanner`, which counts
/// `KEEP_LATEST_BY_HOURS` back from the current time: with 0 hours no commit is that recent,
/// so nothing is cleaned); see [`earliest_commit_to_retain_at`].
pub fn earliest_commit_to_retain<'a>(
    spec: &CleanSpec,
    timeline: &'a Timeline,
) -> Option<&'a Instant> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(i64::MAX, |d| {
            i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
        });
    earliest_commit_to_retain_at(spec, timeline, Some(now))
}

/// The earliest commit a clean under `spec` keeps (Hudi's `getEarliestCommitToRetain`):
/// under `KEEP_LATEST_COMMITS` the `commits_retained`-th latest completed commit, never later
/// than the earliest pending one; under `KEEP_LATEST_BY_HOURS` the first commit at most
/// `hours_retained` older than `now` (epoch milliseconds; `None`: the latest commit's time, as
/// Hudi's archival counts); none under `KEEP_LATEST_FILE_VERSIONS`.
pub fn earliest_commit_to_retain_at<'a>(
    spec: &CleanSpec,
    timeline: &'a Timeline,
    now: Option<i64>,
) -> Option<&'a Instant> {
    let commits: Vec<&Instant> = timeline.completed_writes().collect();
    match spec.policy {
        CleanPolicy::KeepLatestCommits => {
            if commits.len() <= spec.commits_retained {
                return None;
            }
            // at least one commit is kept (the key's values start at 1)
            let nth = commits[commits.len() - spec.commits_retained.max(1)];
            let pending = timeline.pending_writes().into_iter().next();
            match pending {
                Some(p) if nth.timestamp > p.timestamp => commits
                    .iter()
                    .rev()
                    .find(|c| c.timestamp < p.timestamp)
                    .copied(),
                _ => Some(nth),
            }
        }
        CleanPolicy::KeepLatestByHours => {
            let latest = match now {
                Some(now) => now,
                None => instant_to_millis(&commits.last()?.timestamp)?,
            };
            let hours = i64::try_from(spec.hours_retained).unwrap_or(i64::MAX / 3_600_000);
            let earliest =
                millis_to_instant(latest.saturating_sub(hours.saturating_mul(3_600_000)));
            commits.into_iter().find(|c| c.timestamp >= earliest)
        }
        CleanPolicy::KeepLatestFileVersions => None,
    }
}

/// The clean plan for the table `input` describes, `None` when nothing is to be deleted.
pub fn plan_clean(spec: &CleanSpec, input: &PlanInput<'_>) -> Option<CleanerPlan> {
    let commits = input.timeline.completed_writes().count();
    let ectr = earliest_commit_to_retain(spec, input.timeline);
    let cleans_by_commits = match spec.policy {
        CleanPolicy::KeepLatestCommits => commits > spec.commits_retained && ectr.is_some(),
        CleanPolicy::KeepLatestByHours => ectr.is_some(),
        CleanPolicy::KeepLatestFileVersions => true,
    };
    if !cleans_by_commits {
        return None;
    }
    let ectr_time = ectr.map(|i| i.timestamp.as_str());
    let mut files: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (partition, file_id) in input.listing.groups() {
        let group = (partition.clone(), file_id.clone());
        if input.compacting.contains(&group) {
            continue;
        }
        let slices = input.listing.all_slices(input.timeline, partition, file_id);
        let doomed: Vec<&FileSlice> = match input.replaced.get(&group) {
            // a replaced group goes whole once its replacecommit is older than what is kept
            Some(replaced_at) => {
                if ectr_time.is_none_or(|e| replaced_at.as_str() < e) {
                    slices.iter().collect()
                } else {
                    Vec::new()
                }
            }
            None => old_slices(spec, &slices, ectr_time),
        };
        for slice in doomed {
            let saved = slice
                .base_file
                .as_ref()
                .is_some_and(|b| input.savepointed.contains(file_name(&b.rel_path)));
            if saved {
                continue;
            }
            let paths = files.entry(partition.clone()).or_default();
            let full = |rel: &String| format!("{}/{rel}", input.location.trim_end_matches('/'));
            paths.extend(slice.base_file.iter().map(|b| full(&b.rel_path)));
            if input.with_logs {
                paths.extend(slice.log_files.iter().map(full));
                paths.extend(slice.cdc_logs.iter().map(full));
            }
        }
    }
    files.retain(|_, fs| !fs.is_empty());
    if files.is_empty() {
        return None;
    }
    Some(CleanerPlan {
        earliest_instant_to_retain: ectr
            .map(|i| (i.timestamp.clone(), i.action.as_str().to_string())),
        last_completed_commit: input
            .timeline
            .last_completed_write()
            .map(|i| i.timestamp.clone())
            .unwrap_or_default(),
        policy: spec.policy.name().to_string(),
        files,
        partitions_to_delete: Vec::new(),
    })
}

/// The slices of a live file group (newest first) that `spec` no longer needs.
fn old_slices<'a>(
    spec: &CleanSpec,
    slices: &'a [FileSlice],
    ectr: Option<&str>,
) -> Vec<&'a FileSlice> {
    let Some(latest) = slices.first().map(|s| s.base_instant.as_str()) else {
        return Vec::new();
    };
    match (spec.policy, ectr) {
        (CleanPolicy::KeepLatestFileVersions, _) => {
            slices.iter().skip(spec.file_versions_retained).collect()
        }
        (policy, Some(ectr)) => {
            // the slice a query as of the earliest kept commit reads stays too
            let before_ectr = slices
                .iter()
                .map(|s| s.base_instant.as_str())
                .find(|b| *b < ectr);
            slices
                .iter()
                .filter(|s| {
                    let b = s.base_instant.as_str();
                    let kept = b == latest
                        || (policy == CleanPolicy::KeepLatestCommits && Some(b) == before_ectr);
                    !kept && b < ectr
                })
                .collect()
        }
        (_, None) => Vec::new(),
    }
}

/// The last segment of a relative path.
pub(crate) fn file_name(rel: &str) -> &str {
    rel.rsplit('/').next().unwrap_or(rel)
}
