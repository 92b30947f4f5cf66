//! The timeline's move from layout 1 (`.hoodie/`) to layout 2 (`.hoodie/timeline/`), as Hudi's
//! step from version 6 to 8 makes it: every instant file, in every state, is written again under
//! the new folder; a completed one is named `T_C.<action>` with its file's modification time as
//! the completion time `C`, and the commit metadata of commits, deltacommits and replacecommits
//! (completed and inflight) goes from JSON to Avro. The old files stay until the caller has
//! switched `hoodie.properties`, so the table reads as version 6 until then.

use crate::error::Result;
use crate::storage::TableStorage;
use crate::timeline::instant::{instant_to_millis, millis_to_instant};
use crate::timeline::{Action, CommitMetadata, Instant, State};

/// The layout-1 timeline folder.
const LAYOUT_1_DIR: &str = ".hoodie";
/// The layout-2 timeline folder (`hoodie.timeline.path` as the upgrade sets it).
const LAYOUT_2_DIR: &str = ".hoodie/timeline";

/// Writes every instant file of the layout-1 timeline again into the layout-2 folder (emptied
/// first of what an upgrade that stopped left there); returns the layout-1 files, to delete
/// once the table's properties say version 8 or 9.
pub(super) async fn copy_to_layout_2(storage: &TableStorage) -> Result<Vec<String>> {
    for stale in storage.list_all(LAYOUT_2_DIR).await? {
        storage.delete(&storage.relative(&stale.location)).await?;
    }
    let mut old = Vec::new();
    for meta in storage.list_dir(LAYOUT_1_DIR).await? {
        let name = meta.location.filename().unwrap_or_default();
        let Some(mut instant) = Instant::parse_file_name(name) else {
            continue;
        };
        if instant.completion_time.is_some() {
            continue;
        }
        let from = format!("{LAYOUT_1_DIR}/{name}");
        if instant.state == State::Completed {
            let modified = meta.last_modified.timestamp_millis();
            instant.completion_time = Some(completion_time(&instant.timestamp, modified));
        }
        let to = format!("{LAYOUT_2_DIR}/{}", instant.file_name(2));
        let body = convert(&instant, storage.get(&from).await?.to_vec(), &from, &to)?;
        storage.put(&to, body).await?;
        old.push(from);
    }
    Ok(old)
}

/// Writes every instant file of the layout-2 folder (not the LSM history under it) again into
/// the layout-1 folder (emptied first of the instant files a downgrade that stopped left there),
/// as Hudi's step from 8 to 7 does: a completed instant named `T.<action>` and, on a local
/// disk, modified at its completion time (Hudi 1.x takes a layout-1 instant's completion time
/// from it; on an object store files written in completion order keep that order), a
/// clustering instant as the replacecommit it was on 6, the commit metadata of commits,
/// deltacommits and replacecommits (completed, and the inflight and requested files of
/// commits and deltacommits) from Avro to JSON. Returns the layout-2 files, to delete once the
/// table's properties say version 6.
pub(super) async fn copy_to_layout_1(storage: &TableStorage) -> Result<Vec<String>> {
    for stale in layout_1_files(storage).await? {
        storage.delete(&stale).await?;
    }
    let mut files: Vec<(Instant, String)> = storage
        .list_dir(LAYOUT_2_DIR)
        .await?
        .iter()
        .filter_map(|m| {
            let name = m.location.filename()?;
            Some((Instant::parse_file_name(name)?, name.to_string()))
        })
        .collect();
    // completed last, in completion order: the order of their modification times
    files.sort_by(|(a, _), (b, _)| {
        let key = |i: &Instant| (i.completion_time.is_some(), i.completion_time.clone());
        key(a).cmp(&key(b))
    });
    let mut old = Vec::new();
    for (mut instant, name) in files {
        let from = format!("{LAYOUT_2_DIR}/{name}");
        if instant.action == Action::Clustering {
            instant.action = Action::ReplaceCommit;
        }
        let completion = instant.completion_time.take();
        let to = format!("{LAYOUT_1_DIR}/{}", instant.file_name(1));
        let body = to_layout_1(&instant, storage.get(&from).await?.to_vec(), &from)?;
        storage.put(&to, body).await?;
        if let (Some(c), Some(dir)) = (completion, storage.local_dir()) {
            set_modified(&dir.join(&to), &c)?;
        }
        old.push(from);
    }
    Ok(old)
}

/// Sets the modification time of a local file to the instant `time`.
fn set_modified(path: &std::path::Path, time: &str) -> Result<()> {
    let Some(millis) = instant_to_millis(time) else {
        return Ok(());
    };
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(millis.max(0) as u64);
    let file = std::fs::File::options().write(true).open(path);
    file.and_then(|f| f.set_modified(at))
        .map_err(|e| crate::error::FormatError::Storage {
            path: path.display().to_string(),
            source: object_store::Error::Generic {
                store: "LocalFileSystem",
                source: Box::new(e),
            },
        })
}

/// An instant file's content in layout 1 (see [`copy_to_layout_1`]).
fn to_layout_1(instant: &Instant, body: Vec<u8>, from: &str) -> Result<Vec<u8>> {
    let json = matches!(
        (&instant.action, instant.state),
        (Action::Commit | Action::DeltaCommit, _) | (Action::ReplaceCommit, State::Completed)
    );
    if !json {
        return Ok(body);
    }
    let mut metadata = CommitMetadata::parse(&body, from)?;
    if body.is_empty() {
        // Hudi's empty requested file, as its version 6 serializer writes it
        metadata.operation_type = Some("UNKNOWN".into());
    }
    Ok(metadata.to_json())
}

/// The instant files of the layout-2 folder (not the LSM history under it).
pub(super) async fn layout_2_files(storage: &TableStorage) -> Result<Vec<String>> {
    Ok(storage
        .list_dir(LAYOUT_2_DIR)
        .await?
        .iter()
        .filter_map(|m| m.location.filename())
        .filter(|n| Instant::parse_file_name(n).is_some())
        .map(|n| format!("{LAYOUT_2_DIR}/{n}"))
        .collect())
}

/// The instant files of the layout-1 folder (none on a table created at version 8 or 9).
pub(super) async fn layout_1_files(storage: &TableStorage) -> Result<Vec<String>> {
    Ok(storage
        .list_dir(LAYOUT_1_DIR)
        .await?
        .iter()
        .filter_map(|m| m.location.filename())
        .filter(|n| Instant::parse_file_name(n).is_some_and(|i| i.completion_time.is_none()))
        .map(|n| format!("{LAYOUT_1_DIR}/{n}"))
        .collect())
}

/// The completion time of an instant whose completed file was last modified at `modified`
/// (milliseconds), never before the instant itself.
fn completion_time(timestamp: &str, modified: i64) -> String {
    let requested = instant_to_millis(timestamp).unwrap_or(modified);
    millis_to_instant(modified.max(requested))
}

/// An instant file's content in layout 2: commit metadata in Avro, everything else (plans,
/// clean and rollback metadata, already Avro) as it was.
fn convert(instant: &Instant, body: Vec<u8>, from: &str, to: &str) -> Result<Vec<u8>> {
    let commit_like = matches!(
        instant.action,
        Action::Commit | Action::DeltaCommit | Action::ReplaceCommit
    );
    let has_metadata = matches!(instant.state, State::Completed | State::Inflight);
    if !commit_like || !has_metadata || body.is_empty() || body.starts_with(b"Obj\x01") {
        return Ok(body);
    }
    let metadata = CommitMetadata::parse(&body, from)?;
    crate::avro::commit::commit_metadata_avro(&metadata, to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_times_never_precede_their_instant() {
        let t = "20260101000000000";
        let at = instant_to_millis(t).unwrap();
        assert_eq!(completion_time(t, at + 1500), "20260101000001500");
        assert_eq!(completion_time(t, at - 10), t);
    }

    #[test]
    fn commit_metadata_turns_avro_and_plans_stay() {
        let json = br#"{"partitionToWriteStats":{},"compacted":false,"extraMetadata":{"schema":"s"},"operationType":"UPSERT"}"#;
        let done = Instant::new("20260101000000000", Action::Commit, State::Completed);
        let avro = convert(&done, json.to_vec(), "a.commit", "b.commit").unwrap();
        assert!(avro.starts_with(b"Obj\x01"));
        let back = CommitMetadata::parse(&avro, "b.commit").unwrap();
        assert_eq!(back.operation_type.as_deref(), Some("UPSERT"));
        assert_eq!(back.schema(), Some("s"));
        // an empty requested file and a clean plan are copied as they are
        let requested = Instant::new("20260101000000000", Action::Commit, State::Requested);
        assert!(convert(&requested, Vec::new(), "a", "b")
            .unwrap()
            .is_empty());
        let clean = Instant::new("20260101000000000", Action::Clean, State::Requested);
        let plan = b"Obj\x01plan".to_vec();
        assert_eq!(convert(&clean, plan.clone(), "a", "b").unwrap(), plan);
    }
}
