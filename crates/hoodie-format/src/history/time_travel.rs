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
    let Some(retained) = last_clean_kept(storage, timeline).await? else {
        return Ok(());
    };
    match retained {
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

/// What the last completed clean kept: `None` without a clean, `Some(None)` for a clean that
/// kept file versions rather than commits, else `Some(Some(earliest commit kept))`.
async fn last_clean_kept(
    storage: &TableStorage,
    timeline: &Timeline,
) -> Result<Option<Option<String>>> {
    let last_clean = timeline
        .instants()
        .iter()
        .rev()
        .find(|i| i.state == State::Completed && i.action == Action::Clean);
    let Some(clean) = last_clean else {
        return Ok(None);
    };
    let rel = format!("{}/{}", timeline.dir(), clean.file_name(timeline.layout()));
    let bytes = storage.get(&rel).await?;
    Ok(Some(crate::avro::clean::earliest_commit_to_retain(
        &bytes, &rel,
    )?))
}

/// The earliest commit the last clean kept, if a clean kept commits.
pub async fn earliest_commit_kept(
    storage: &TableStorage,
    timeline: &Timeline,
) -> Result<Option<String>> {
    Ok(last_clean_kept(storage, timeline).await?.flatten())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::instant::Instant;
    use apache_avro::types::Value;

    fn timeline(names: &[&str]) -> Timeline {
        let files = names
            .iter()
            .map(|n| Instant::parse_file_name(n).unwrap())
            .collect();
        Timeline::from_files(files, 1, ".hoodie".into())
    }

    async fn clean_file(storage: &TableStorage, ts: &str, retained: &str) {
        let schema = r#"{"type":"record","name":"HoodieCleanMetadata","fields":[
            {"name":"startCleanTime","type":"string"},
            {"name":"earliestCommitToRetain","type":"string"}]}"#;
        let value = Value::Record(vec![
            ("startCleanTime".into(), Value::String(ts.into())),
            (
                "earliestCommitToRetain".into(),
                Value::String(retained.into()),
            ),
        ]);
        let bytes =
            crate::avro::rollback::encode_container("HoodieCleanMetadata", schema, value).unwrap();
        storage
            .put(&format!(".hoodie/{ts}.clean"), bytes)
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn a_write_not_completed_bounds_the_instant() {
        let dir = tempfile::tempdir().unwrap();
        let storage = TableStorage::local(dir.path()).unwrap();
        let t = timeline(&[
            "20240101000000001.commit",
            "20240101000000003.commit.requested",
            "20240101000000003.inflight",
            "20240101000000004.commit",
        ]);
        check_as_of(&storage, &t, "20240101000000002")
            .await
            .unwrap();
        check_as_of(&storage, &t, "20000101000000000")
            .await
            .unwrap();
        let e = check_as_of(&storage, &t, "20240101000000003")
            .await
            .unwrap_err();
        assert_eq!(e.to_string(), "Time travel's timestamp '20240101000000003' must be earlier than the first incomplete commit timestamp '20240101000000003'.");
        assert!(check_as_of(&storage, &t, "20240101000000009")
            .await
            .is_err());
    }

    #[tokio::test]
    async fn the_last_clean_bounds_the_instant() {
        let dir = tempfile::tempdir().unwrap();
        let storage = TableStorage::local(dir.path()).unwrap();
        clean_file(&storage, "20240101000000005", "20240101000000002").await;
        let t = timeline(&[
            "20240101000000001.commit",
            "20240101000000002.commit",
            "20240101000000004.commit",
            "20240101000000005.clean",
        ]);
        check_as_of(&storage, &t, "20240101000000002")
            .await
            .unwrap();
        let e = check_as_of(&storage, &t, "20240101000000001")
            .await
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("Cleaner cleaned up the timestamp of interest."),
            "{e}"
        );
        // a clean that kept file versions: the first commit on the timeline bounds it
        clean_file(&storage, "20240101000000006", "").await;
        let t = timeline(&["20240101000000002.commit", "20240101000000006.clean"]);
        check_as_of(&storage, &t, "20240101000000002")
            .await
            .unwrap();
        let e = check_as_of(&storage, &t, "20240101000000001")
            .await
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("Please ensure sufficient commits are retained"),
            "{e}"
        );
    }
}
