//! Conflict detection, as Hudi's `SimpleConcurrentFileWritesConflictResolutionStrategy`: a write
//! conflicts with every write that committed after the snapshot it read (or that scheduled a
//! compaction since) and touched one of the same file groups, `(partition path, file id)`.

use std::collections::BTreeSet;

use crate::error::{Conflict, FormatError, Result};
use crate::table::HudiTable;
use crate::timeline::commit_metadata::CommitMetadata;
use crate::timeline::instant::{Action, Instant, State};
use crate::timeline::Timeline;

/// A file group: partition path and file id.
pub type FileGroupId = (String, String);

/// The instants a statement's read saw: completed writes (compactions among them) and the
/// compaction plans then pending (whose results merge what it read, so they never conflict).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadSnapshot {
    seen: BTreeSet<String>,
    /// The compactions among `seen` that were pending then.
    pending: BTreeSet<String>,
}

impl ReadSnapshot {
    /// What a read of `timeline` sees.
    pub fn of(timeline: &Timeline) -> Self {
        let seen = timeline
            .instants()
            .iter()
            .filter(|i| {
                (i.state == State::Completed && i.action.is_write())
                    || i.action == Action::Compaction
            })
            .map(|i| i.timestamp.clone())
            .collect();
        let pending = timeline
            .instants()
            .iter()
            .filter(|i| i.action == Action::Compaction && i.state != State::Completed)
            .map(|i| i.timestamp.clone())
            .collect();
        Self { seen, pending }
    }

    /// The older of two reads (the instants both saw), for a statement that read twice.
    pub fn common(self, other: &ReadSnapshot) -> Self {
        Self {
            seen: self.seen.intersection(&other.seen).cloned().collect(),
            pending: self.pending.union(&other.pending).cloned().collect(),
        }
    }

    /// Whether the read saw `instant`.
    pub fn saw(&self, instant: &str) -> bool {
        self.seen.contains(instant)
    }

    /// Whether the read saw `instant` completed (not a compaction then pending): a base file
    /// it wrote is the one the read's rows of its file group came from.
    pub fn saw_completed(&self, instant: &str) -> bool {
        self.seen.contains(instant) && !self.pending.contains(instant)
    }
}

/// The file groups a commit wrote or replaced.
pub fn touched_groups(metadata: &CommitMetadata) -> BTreeSet<FileGroupId> {
    let mut groups: BTreeSet<FileGroupId> = metadata
        .write_stats()
        .filter_map(|s| {
            let id = s.file_id.as_deref().filter(|id| !id.is_empty())?;
            Some((s.partition_path.clone().unwrap_or_default(), id.to_string()))
        })
        .collect();
    for (p, ids) in metadata.partition_to_replace_file_ids.iter().flatten() {
        groups.extend(ids.iter().map(|id| (p.clone(), id.clone())));
    }
    groups
}

/// Fails with [`FormatError::WriteConflict`] if a write `read` did not see, now on `now`,
/// touched one of `own_groups` (the groups write `own` touches).
pub async fn check(
    table: &HudiTable,
    now: &Timeline,
    read: &ReadSnapshot,
    own: &Instant,
    own_groups: &BTreeSet<FileGroupId>,
) -> Result<()> {
    if own_groups.is_empty() {
        return Ok(());
    }
    for other in now.instants() {
        if other.timestamp == own.timestamp || read.saw(&other.timestamp) {
            continue;
        }
        let theirs = if other.state == State::Completed && other.action.is_write() {
            touched_groups(&now.read_commit_metadata(table.storage(), other).await?)
        } else if other.action == Action::Compaction {
            let requested = Instant::new(&other.timestamp, Action::Compaction, State::Requested);
            let rel = format!("{}/{}", now.dir(), requested.file_name(now.layout()));
            let bytes = table.storage().get(&rel).await?;
            crate::avro::compaction_plan::parse_compaction_plan(&bytes, &rel)?
                .operations
                .iter()
                .map(|o| (o.partition_path.clone(), o.file_id.clone()))
                .collect()
        } else {
            continue;
        };
        let both: Vec<String> = own_groups
            .intersection(&theirs)
            .map(|(p, id)| {
                if p.is_empty() {
                    id.clone()
                } else {
                    format!("{p}/{id}")
                }
            })
            .collect();
        if !both.is_empty() {
            let state = if other.state == State::Completed {
                "COMPLETED"
            } else {
                "REQUESTED"
            };
            return Err(FormatError::WriteConflict(Box::new(Conflict {
                action: own.action.as_str().to_string(),
                instant: own.timestamp.clone(),
                other_action: other.action.as_str().to_string(),
                other_instant: other.timestamp.clone(),
                other_state: state.into(),
                file_groups: both.join(", "),
            })));
        }
    }
    Ok(())
}
