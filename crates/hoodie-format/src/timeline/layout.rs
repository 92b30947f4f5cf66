//! How a table's timeline is written, by its table version: where its instant files live,
//! how a completed instant is named and how its commit metadata is encoded.
//!
//! Table version 6 (layout 1): `.hoodie/T.<action>`, JSON commit metadata. Versions 8 and 9
//! (layout 2): `.hoodie/timeline/T_C.<action>` where `C` is the completion time, taken when
//! the instant completes, and Avro commit metadata (also in the inflight file).

use super::commit_metadata::CommitMetadata;
use super::instant::{new_instant_time, Action, Instant, State};
use crate::error::Result;
use crate::table_config::TableConfig;

/// The table versions hoodie reads and writes (a table of another version is refused when it
/// is opened).
pub const TABLE_VERSIONS: [u32; 3] = [6, 8, 9];

/// A table's timeline folder and layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineLayout {
    version: u32,
    dir: String,
}

impl TimelineLayout {
    /// The layout of a table with `config`.
    pub fn of(config: &TableConfig) -> Result<Self> {
        Ok(Self {
            version: config.timeline_layout_version()?,
            dir: config.timeline_dir()?,
        })
    }

    pub(crate) fn new(version: u32, dir: impl Into<String>) -> Self {
        Self {
            version,
            dir: dir.into(),
        }
    }

    /// The layout version (1 or 2).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The timeline folder relative to the table base.
    pub fn dir(&self) -> &str {
        &self.dir
    }

    /// The path of `instant`'s file relative to the table base.
    pub fn path(&self, instant: &Instant) -> String {
        format!("{}/{}", self.dir, instant.file_name(self.version))
    }

    /// The path of the file of instant `ts` of `action` in a state before completion.
    pub fn pending_path(&self, ts: &str, action: Action, state: State) -> String {
        self.path(&Instant::new(ts, action, state))
    }

    /// The completed instant `ts` of `action` as it is written now: in layout 2 with a new
    /// completion time after `ts` and after `latest` (the latest time the writer knows on the
    /// timeline, completion times included), so completion times only grow.
    pub fn completing(&self, ts: &str, action: Action, latest: Option<&str>) -> Instant {
        let mut done = Instant::new(ts, action, State::Completed);
        if self.version >= 2 {
            let after = latest.map_or(ts, |l| l.max(ts));
            done.completion_time = Some(new_instant_time(Some(after)));
        }
        done
    }

    /// Commit metadata as this layout's tables hold it: JSON (layout 1), Avro (layout 2).
    pub fn encode_commit(&self, metadata: &CommitMetadata, path: &str) -> Result<Vec<u8>> {
        match self.version {
            v if v >= 2 => crate::avro::commit::commit_metadata_avro(metadata, path),
            _ => Ok(metadata.to_json()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_2_names_a_completed_instant_by_its_completion_time() {
        let l = TimelineLayout::new(2, ".hoodie/timeline");
        let done = l.completing(
            "20260101000000000",
            Action::Commit,
            Some("20260101000000500"),
        );
        let c = done.completion_time.clone().unwrap();
        assert!(c.as_str() > "20260101000000500");
        assert_eq!(
            l.path(&done),
            format!(".hoodie/timeline/20260101000000000_{c}.commit")
        );
        let l1 = TimelineLayout::new(1, ".hoodie");
        let done = l1.completing("20260101000000000", Action::DeltaCommit, None);
        assert_eq!(l1.path(&done), ".hoodie/20260101000000000.deltacommit");
    }
}
