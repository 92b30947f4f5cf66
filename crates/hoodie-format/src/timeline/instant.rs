//! Instants: the times and file names of timeline entries.

use std::sync::Mutex;

use chrono::{NaiveDateTime, TimeZone, Utc};

/// Format of instant times: `yyyyMMddHHmmssSSS`.
pub const INSTANT_FORMAT: &str = "%Y%m%d%H%M%S%3f";

/// The state of an instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum State {
    /// Planned (`T.<action>.requested`).
    Requested,
    /// Being written (`T.inflight` / `T.<action>.inflight`).
    Inflight,
    /// Done (`T.<action>` or `T_C.<action>`).
    Completed,
}

/// Timeline actions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Action {
    /// Copy-on-write commit (also completed compactions).
    Commit,
    /// Merge-on-read commit.
    DeltaCommit,
    /// Commit that replaces file groups (overwrite, clustering).
    ReplaceCommit,
    /// Rollback of a failed write.
    Rollback,
    /// Cleaning of old file slices.
    Clean,
    /// Compaction plan (completes as a commit).
    Compaction,
    /// Clustering plan (table version 9; completes as a replacecommit).
    Clustering,
    /// A savepoint of a commit (same instant time as the commit).
    Savepoint,
    /// A restore to a savepoint.
    Restore,
    /// Any other action (indexing, ...); kept so names round-trip.
    Other(String),
}

impl Action {
    /// The action's name in file names.
    pub fn as_str(&self) -> &str {
        match self {
            Action::Commit => "commit",
            Action::DeltaCommit => "deltacommit",
            Action::ReplaceCommit => "replacecommit",
            Action::Rollback => "rollback",
            Action::Clean => "clean",
            Action::Compaction => "compaction",
            Action::Clustering => "clustering",
            Action::Savepoint => "savepoint",
            Action::Restore => "restore",
            Action::Other(s) => s,
        }
    }

    /// Parses an action name.
    pub fn parse(s: &str) -> Action {
        match s {
            "commit" => Action::Commit,
            "deltacommit" => Action::DeltaCommit,
            "replacecommit" => Action::ReplaceCommit,
            "rollback" => Action::Rollback,
            "clean" => Action::Clean,
            "compaction" => Action::Compaction,
            "clustering" => Action::Clustering,
            "savepoint" => Action::Savepoint,
            "restore" => Action::Restore,
            other => Action::Other(other.to_string()),
        }
    }

    /// True for actions that write data files readers see (commit, deltacommit, replacecommit).
    pub fn is_write(&self) -> bool {
        matches!(
            self,
            Action::Commit | Action::DeltaCommit | Action::ReplaceCommit
        )
    }
}

/// One timeline entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instant {
    /// The (requested) instant time, 17 digits.
    pub timestamp: String,
    /// The action.
    pub action: Action,
    /// The state.
    pub state: State,
    /// Completion time (layout 2 completed instants only).
    pub completion_time: Option<String>,
}

impl Instant {
    /// A new instant.
    pub fn new(timestamp: impl Into<String>, action: Action, state: State) -> Self {
        Self {
            timestamp: timestamp.into(),
            action,
            state,
            completion_time: None,
        }
    }

    /// The file name of this instant in the given timeline layout.
    pub fn file_name(&self, layout: u32) -> String {
        let a = self.action.as_str();
        match self.state {
            State::Requested => format!("{}.{a}.requested", self.timestamp),
            State::Inflight if self.action == Action::Commit => {
                format!("{}.inflight", self.timestamp)
            }
            State::Inflight => format!("{}.{a}.inflight", self.timestamp),
            State::Completed => match (&self.completion_time, layout >= 2) {
                (Some(c), true) => format!("{}_{c}.{a}", self.timestamp),
                _ => format!("{}.{a}", self.timestamp),
            },
        }
    }

    /// Parses a timeline file name; `None` for files that are not instants.
    pub fn parse_file_name(name: &str) -> Option<Instant> {
        let (head, rest) = name.split_once('.')?;
        let (ts, completion) = match head.split_once('_') {
            Some((t, c)) => (t, Some(c.to_string())),
            None => (head, None),
        };
        if !(ts.len() == 17 || ts.len() == 14) || !ts.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let (action, state) = if rest == "inflight" {
            (Action::Commit, State::Inflight)
        } else if let Some(a) = rest.strip_suffix(".requested") {
            (Action::parse(a), State::Requested)
        } else if let Some(a) = rest.strip_suffix(".inflight") {
            (Action::parse(a), State::Inflight)
        } else if rest.contains('.') {
            return None;
        } else {
            (Action::parse(rest), State::Completed)
        };
        Some(Instant {
            timestamp: ts.to_string(),
            action,
            state,
            completion_time: completion,
        })
    }
}

static LAST_ISSUED: Mutex<i64> = Mutex::new(0);

/// Parses an instant time (17 or 14 digits) into milliseconds since the epoch (UTC).
pub fn instant_to_millis(ts: &str) -> Option<i64> {
    let padded = if ts.len() == 14 {
        format!("{ts}000")
    } else {
        ts.to_string()
    };
    NaiveDateTime::parse_from_str(&padded, INSTANT_FORMAT)
        .ok()
        .map(|d| d.and_utc().timestamp_millis())
}

/// Formats milliseconds since the epoch as an instant time (UTC).
pub fn millis_to_instant(ms: i64) -> String {
    Utc.timestamp_millis_opt(ms)
        .single()
        .unwrap_or_default()
        .format(INSTANT_FORMAT)
        .to_string()
}

/// A new instant time (UTC), strictly greater than every instant this process issued before and
/// than `after` (the latest instant on the table's timeline), even within one millisecond.
pub fn new_instant_time(after: Option<&str>) -> String {
    let mut last = LAST_ISSUED.lock().unwrap_or_else(|e| e.into_inner());
    let mut next = Utc::now().timestamp_millis();
    if let Some(a) = after.and_then(instant_to_millis) {
        next = next.max(a + 1);
    }
    next = next.max(*last + 1);
    *last = next;
    millis_to_instant(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_layout_1_and_2_names() {
        let i = Instant::parse_file_name("20240418173551906.commit").unwrap();
        assert_eq!(
            (i.action.clone(), i.state),
            (Action::Commit, State::Completed)
        );
        let i = Instant::parse_file_name("20240418173551906.inflight").unwrap();
        assert_eq!(
            (i.action.clone(), i.state),
            (Action::Commit, State::Inflight)
        );
        let i = Instant::parse_file_name("20240418173551906.deltacommit.requested").unwrap();
        assert_eq!(
            (i.action.clone(), i.state),
            (Action::DeltaCommit, State::Requested)
        );
        let i = Instant::parse_file_name("20250713010536861_20250713010537206.commit").unwrap();
        assert_eq!(i.completion_time.as_deref(), Some("20250713010537206"));
        assert_eq!(i.file_name(2), "20250713010536861_20250713010537206.commit");
        assert!(Instant::parse_file_name("hoodie.properties").is_none());
        assert!(Instant::parse_file_name("20240418173551906.commit.crc").is_none());
        for name in [
            "20240418173551906.commit.requested",
            "20240418173551906.inflight",
            "20240418173551906.commit",
            "20240418173551906.replacecommit.inflight",
        ] {
            assert_eq!(Instant::parse_file_name(name).unwrap().file_name(1), name);
        }
    }

    #[test]
    fn instants_strictly_increase() {
        let far = millis_to_instant(Utc::now().timestamp_millis() + 2000);
        let far = far.as_str();
        let a = new_instant_time(Some(far));
        let b = new_instant_time(None);
        let c = new_instant_time(None);
        assert_eq!(a.len(), 17);
        assert!(a.as_str() > far && b > a && c > b, "{a} {b} {c}");
    }

    #[test]
    fn round_trips_millis() {
        assert_eq!(
            millis_to_instant(instant_to_millis("20240418173551906").unwrap()),
            "20240418173551906"
        );
    }
}
