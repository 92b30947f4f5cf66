//! The checks Hudi makes before a time-travel read (`TimelineUtils.validateTimestampAsOf`).

use crate::error::{FormatError, Result};
use crate::storage::TableStorage;
use crate::timeline::instant::{Action, State};
use crate::timeline::Timeline;

/// Fails as Hudi does when a read as of `as_of` could see the wrong data: a write requested at
/// or before `as_of` has not completed (it may still add files of that age), or the last clean
/// deleted files a read as of `as_of` would need. An instant before the first commit passes:
/// that read is empty.
pub async fn check_as_of(storage: &TableStorage, timeline: &Timeline, as_of: &str) -> Result<()> {
    if let Some(pending) = timeline
        .instants()
        .iter()
        .find(|i| i.state != State::Completed && i.action.is_write())
    {
        if as_of >= pending.timestamp.as_str() {
            return Err(FormatError::AsOfAfterPending {
                as_of: as_of.to_string(),
                pending: pending.timestamp.clone(),
            });
        }
    }
    let last_clean = timeline
        .instants()
        .iter()
        .rev()
        .find(|i| i.state == State::Completed && i.action == Action::Clean);
    let Some(clean) = last_clean else {
        return Ok(());
    };
    let rel = format!("{}/{}", timeline.dir(), clean.file_name(timeline.layout()));
    let bytes = storage.get(&rel).await?;
    match crate::avro::clean::earliest_commit_to_retain(&bytes, &rel)? {
        Some(retained) if retained.as_str() > as_of => Err(FormatError::AsOfCleaned {
            as_of: as_of.to_string(),
            earliest_retained: Some(retained),
        }),
        Some(_) => Ok(()),
        None => match timeline.completed_writes().next() {
            Some(first) if first.timestamp.as_str() > as_of => Err(FormatError::AsOfCleaned {
                as_of: as_of.to_string(),
                earliest_retained: None,
            }),
            _ => Ok(()),
        },
    }
}
