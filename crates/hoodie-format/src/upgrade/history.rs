//! The archived timeline of version 6 (`.hoodie/archived`: Hudi's archive log of
//! `HoodieArchivedMetaEntry` records) converted into the LSM history of versions 8 and 9, as
//! Hudi's upgrade does it (`LegacyArchivedMetaEntryReader` into `LSMTimelineWriter`): one row per
//! completed action, its completion time the entry's `stateTransitionTime` (the requested time
//! where the archiver recorded none), its metadata the completed state's payload as the
//! action's own Avro file (commit metadata as Avro, as layout 2 holds it), and a compaction's
//! plan; written in batches of `hoodie.commits.archival.batch`, each a level-0 file, compacted
//! as archival compacts.

use std::collections::BTreeMap;

use apache_avro::types::Value;
use apache_avro::{Codec, Schema, Writer};

use crate::archive::history::{write_rows, HistorySpec};
use crate::archive::lsm::LsmInstant;
use crate::archive::{archived_entries, ArchiveSpec};
use crate::avro::archive::ArchivedEntry;
use crate::avro::value::{field, string};
use crate::error::{FormatError, Result};
use crate::table::HudiTable;
use crate::timeline::{Action, CommitMetadata, State};

/// Converts the archived timeline of `table` (version 6) into its LSM history; the number of
/// archived actions written.
pub(super) async fn migrate_archive(table: &HudiTable, spec: &ArchiveSpec) -> Result<usize> {
    let mut by_time: BTreeMap<String, Vec<ArchivedEntry>> = BTreeMap::new();
    for e in archived_entries(table).await? {
        by_time
            .entry(e.instant.timestamp.clone())
            .or_default()
            .push(e);
    }
    let mut rows = Vec::with_capacity(by_time.len());
    for states in by_time.values() {
        rows.extend(row_of(states)?);
    }
    let count = rows.len();
    let batch = spec.batch.max(1);
    let history: HistorySpec = spec.history;
    while !rows.is_empty() {
        let rest = rows.split_off(batch.min(rows.len()));
        write_rows(table, rows, &history).await?;
        rows = rest;
    }
    Ok(count)
}

/// The history row of one archived action (every state archived at its time); none for an
/// action that never completed.
fn row_of(states: &[ArchivedEntry]) -> Result<Option<LsmInstant>> {
    let Some(done) = states.iter().find(|e| e.instant.state == State::Completed) else {
        return Ok(None);
    };
    let ts = &done.instant.timestamp;
    let path = format!(".hoodie/archived: {ts}.{}", done.instant.action.as_str());
    let completion = string(field(&done.record, "stateTransitionTime"))
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| ts.clone());
    let plan = states
        .iter()
        .filter(|e| e.instant.action == Action::Compaction)
        .find_map(|e| e.payload("hoodieCompactionPlan"))
        .map(|v| container(v, crate::avro::compaction_plan::PLAN_SCHEMA, &path))
        .transpose()?;
    Ok(Some(LsmInstant {
        instant_time: ts.clone(),
        completion_time: Some(completion),
        action: done.instant.action.as_str().to_string(),
        metadata: metadata_of(done, &path)?,
        plan,
    }))
}

/// The completed state's payload as the action's Avro file.
fn metadata_of(done: &ArchivedEntry, path: &str) -> Result<Option<Vec<u8>>> {
    use crate::avro::{clean, rollback, savepoint};
    Ok(match done.instant.action {
        Action::Commit | Action::DeltaCommit | Action::ReplaceCommit => {
            let Some(json) = done.commit_metadata_json() else {
                return Ok(None);
            };
            let metadata = CommitMetadata::parse(&json, path)?;
            Some(crate::avro::commit::commit_metadata_avro(&metadata, path)?)
        }
        Action::Clean => match done.payload("hoodieCleanMetadata") {
            Some(v) => Some(clean::clean_metadata_avro(
                &clean::clean_metadata_of(v),
                path,
            )?),
            None => None,
        },
        Action::Rollback => done
            .payload("hoodieRollbackMetadata")
            .map(|v| container(v, rollback::ROLLBACK_METADATA_SCHEMA, path))
            .transpose()?,
        Action::Savepoint => done
            .payload("hoodieSavePointMetadata")
            .map(|v| container(v, savepoint::SAVEPOINT_SCHEMA, path))
            .transpose()?,
        _ => None,
    })
}

/// `value` (a record of an archived entry, of whatever writer's schema) as the single record of
/// an Avro file of `schema`, resolved to it as an Avro reader would.
fn container(value: &Value, schema: &str, path: &str) -> Result<Vec<u8>> {
    let corrupt = |reason: String| FormatError::Corrupt {
        path: path.to_string(),
        reason,
    };
    let schema = Schema::parse_str(schema).map_err(|e| corrupt(e.to_string()))?;
    let resolved = value
        .clone()
        .resolve(&schema)
        .map_err(|e| corrupt(e.to_string()))?;
    let mut writer = Writer::with_codec(&schema, Vec::new(), Codec::Null);
    writer
        .append(resolved)
        .map_err(|e| corrupt(e.to_string()))?;
    writer.into_inner().map_err(|e| corrupt(e.to_string()))
}
