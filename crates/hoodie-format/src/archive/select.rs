//! Which instants an archival moves out of the active timeline, as Hudi's timeline archiver
//! (table version 6) picks them. Pure over a timeline, so every bound is tested on plain data.

use std::collections::BTreeSet;

use crate::timeline::instant::{Action, Instant, State};
use crate::timeline::Timeline;

/// What bounds an archival besides the timeline.
#[derive(Debug, Clone, Default)]
pub struct SelectInput {
    /// `hoodie.keep.min.commits`.
    pub min_commits: usize,
    /// `hoodie.keep.max.commits`.
    pub max_commits: usize,
    /// `hoodie.archive.beyond.savepoint`: skip savepointed commits rather than stop at the first.
    pub beyond_savepoint: bool,
    /// The earliest commit the cleaner's policy keeps (none under KEEP_LATEST_FILE_VERSIONS).
    pub earliest_commit_to_retain: Option<String>,
    /// The latest clean that got past planning: (its time, the earliest instant its plan kept).
    pub latest_clean: Option<(String, Option<String>)>,
    /// Merge-on-read tables: the deltacommits that trigger a compaction
    /// (`hoodie.compact.inline.max.delta.commits`).
    pub compaction_delta_commits: Option<usize>,
    /// Table versions 8 and 9 (Hudi's archiver V2): cleans and rollbacks go with the commits
    /// archived after them, not by counts of their own.
    pub history: bool,
}

/// The action a timeline groups an instant's states under (Java `getComparableAction`): a
/// compaction's states belong to its commit, a clustering's to its replacecommit.
pub fn comparable(action: &Action) -> Action {
    match action {
        Action::Compaction => Action::Commit,
        Action::Clustering => Action::ReplaceCommit,
        other => other.clone(),
    }
}

/// The keep bounds after Hudi's `ArchivalUtils.getMinAndMaxInstantsToKeep`: never fewer than
/// the commits after the cleaner's earliest kept commit plus two.
pub fn keep_bounds(commits: &[&Instant], input: &SelectInput) -> (usize, usize) {
    let (min, max) = (input.min_commits, input.max_commits);
    let Some(ectr) = &input.earliest_commit_to_retain else {
        return (min, max);
    };
    let by_cleaning = commits.iter().filter(|c| c.timestamp > *ectr).count() + 2;
    if min < by_cleaning {
        (by_cleaning, by_cleaning + max.saturating_sub(min))
    } else {
        (min, max)
    }
}

/// The earliest instant a merge-on-read table keeps so the next compaction still sees the
/// deltacommits that trigger it (Java `getOldestInstantToRetainForCompaction`).
fn oldest_for_compaction(timeline: &Timeline, max_delta: usize) -> Option<String> {
    let instants = timeline.instants();
    let last_compaction = instants
        .iter()
        .rev()
        .find(|i| i.action == Action::Commit && i.state == State::Completed);
    let deltas: Vec<&Instant> = instants
        .iter()
        .filter(|i| i.action == Action::DeltaCommit && i.state == State::Completed)
        .filter(|i| last_compaction.is_none_or(|c| i.timestamp > c.timestamp))
        .collect();
    if deltas.is_empty() {
        return None;
    }
    if deltas.len() < max_delta {
        return Some(match last_compaction {
            Some(c) => c.timestamp.clone(),
            None => deltas[0].timestamp.clone(),
        });
    }
    Some(deltas[deltas.len() - max_delta].timestamp.clone())
}

/// The earliest replacecommit whose replaced file groups a clean may not have deleted yet
/// (Java `getOldestInstantToRetainForClustering`): a reader needs it to hide them.
fn oldest_for_replace(
    timeline: &Timeline,
    latest_clean: &Option<(String, Option<String>)>,
) -> Option<String> {
    let mut replaces = timeline
        .instants()
        .iter()
        .filter(|i| comparable(&i.action) == Action::ReplaceCommit);
    match latest_clean {
        None => replaces.next().map(|i| i.timestamp.clone()),
        Some((clean, ectr)) => {
            let bound = ectr.clone().unwrap_or_else(|| clean.clone());
            replaces
                .find(|i| i.timestamp >= bound)
                .map(|i| i.timestamp.clone())
        }
    }
}

/// The greatest completed commit before the oldest pending write, or that write itself when
/// none precedes it: archival stops before it so the timeline has no holes.
fn oldest_for_pending(timeline: &Timeline, commits: &[&Instant]) -> Option<String> {
    let pending = timeline.instants().iter().find(|i| {
        i.state != State::Completed
            && (i.action.is_write() || matches!(i.action, Action::Compaction | Action::Clustering))
    })?;
    let before = commits
        .iter()
        .rev()
        .find(|c| c.timestamp < pending.timestamp);
    Some(before.map_or(pending.timestamp.clone(), |c| c.timestamp.clone()))
}

fn commits_to_archive(
    timeline: &Timeline,
    commits: &[&Instant],
    input: &SelectInput,
    (min, max): (usize, usize),
) -> Vec<(String, Action)> {
    if commits.len() <= max {
        return Vec::new();
    }
    let savepoints: BTreeSet<String> = timeline.savepoint_times().into_iter().collect();
    let first_savepoint = savepoints.iter().next().cloned();
    let bounds: Vec<String> = [
        oldest_for_pending(timeline, commits),
        input
            .compaction_delta_commits
            .and_then(|n| oldest_for_compaction(timeline, n)),
        oldest_for_replace(timeline, &input.latest_clean),
    ]
    .into_iter()
    .flatten()
    .collect();
    commits
        .iter()
        .filter(|c| {
            if input.beyond_savepoint {
                !savepoints.contains(&c.timestamp)
            } else {
                first_savepoint.as_ref().is_none_or(|s| c.timestamp < *s)
            }
        })
        .filter(|c| bounds.iter().all(|b| c.timestamp < *b))
        .take(commits.len() - min)
        .map(|c| (c.timestamp.clone(), comparable(&c.action)))
        .collect()
}

/// The (time, comparable action) of every instant to archive, oldest first: the oldest
/// completed commits beyond `max` down to `min` that precede every bound (the oldest pending
/// write, the first savepoint, what compaction and replaced file groups need), and of cleans
/// and rollbacks, each action apart, the oldest beyond `max` down to `min`. Every state of an
/// instant goes with it.
pub fn instants_to_archive(timeline: &Timeline, input: &SelectInput) -> Vec<(String, Action)> {
    let commits: Vec<&Instant> = timeline.completed_writes().collect();
    let bounds = keep_bounds(&commits, input);
    let mut out = commits_to_archive(timeline, &commits, input, bounds);
    let (min, max) = bounds;
    if input.history {
        // every completed clean and rollback requested before the last commit archived
        if let Some(last) = out.last().map(|(t, _)| t.clone()) {
            out.extend(
                timeline
                    .instants()
                    .iter()
                    .filter(|i| matches!(i.action, Action::Clean | Action::Rollback))
                    .filter(|i| i.state == State::Completed && i.timestamp < last)
                    .map(|i| (i.timestamp.clone(), i.action.clone())),
            );
        }
        out.sort_by(|a, b| (&a.0, a.1.as_str()).cmp(&(&b.0, b.1.as_str())));
        return out;
    }
    for action in [Action::Clean, Action::Rollback] {
        let done: Vec<&Instant> = timeline
            .instants()
            .iter()
            .filter(|i| i.action == action && i.state == State::Completed)
            .collect();
        if done.len() > max {
            out.extend(
                done[..done.len() - min]
                    .iter()
                    .map(|i| (i.timestamp.clone(), action.clone())),
            );
        }
    }
    out.sort_by(|a, b| (&a.0, a.1.as_str()).cmp(&(&b.0, b.1.as_str())));
    out
}

#[cfg(test)]
#[path = "select_tests.rs"]
mod tests;
