//! Running a planned compaction: each slice of the plan merged (base file and logs) into a new
//! base file of the compaction instant, then the `commit`.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow::datatypes::SchemaRef;
use futures::StreamExt;

use super::{check_mor, read_plan, splice};
use crate::avro::compaction_plan::CompactionOperation;
use crate::base_file::stream_base_file;
use crate::error::Result;
use crate::file_name::{write_token, BaseFileName};
use crate::fs_view::FileChange;
use crate::log::apply::{LogApplier, Precedence};
use crate::log::keys::KeySource;
use crate::log::read::{read_slice_logs, Admission};
use crate::refusal::CompactionRefusal;
use crate::storage::TableStorage;
use crate::table::HudiTable;
use crate::timeline::commit_metadata::{CommitMetadata, WriteStat};
use crate::timeline::instant::{Action, Instant, State};
use crate::write::splice::SpliceFiles;
use crate::write::transaction::marker_dir;
use crate::write::writer::{BaseFileWriter, FileSpec, WrittenFile};

/// What a compaction did.
#[derive(Debug, Clone, Default)]
pub struct CompactionResult {
    /// The compaction instant.
    pub instant: String,
    /// File slices compacted.
    pub file_groups: usize,
    /// Records written into the new base files.
    pub rows_written: u64,
    /// Records that logs changed.
    pub updated: u64,
    /// Records that logs deleted.
    pub deleted: u64,
    /// Log files compacted.
    pub log_files: usize,
}

/// What every slice of one compaction shares.
struct Job {
    storage: TableStorage,
    schema: SchemaRef,
    instant: String,
    files: FileSpec,
    dropped: Vec<String>,
    admission: Admission,
    rules: Precedence,
    keys: KeySource,
    /// Whether slices whose logs delete nothing are compacted by splicing their base file:
    /// the table populates the meta columns (the splice matches stored keys), its files hold
    /// every column, and it has no `_hoodie_is_deleted` column.
    splice: bool,
}

fn join(partition: &str, name: &str) -> String {
    if partition.is_empty() {
        name.to_string()
    } else {
        format!("{partition}/{name}")
    }
}

/// Runs compaction `instant` (requested, or inflight after a failed attempt, whose files are
/// deleted first) and commits it.
pub async fn execute_compaction(
    table: &HudiTable,
    instant: &str,
    files: &FileSpec,
) -> Result<CompactionResult> {
    check_mor(table)?;
    let timeline = table.timeline().await?;
    if timeline
        .instants()
        .iter()
        .any(|i| i.timestamp == instant && i.state == State::Completed)
    {
        return Err(CompactionRefusal::AlreadyCompleted {
            instant: instant.to_string(),
        }
        .into());
    }
    let plan = read_plan(table, &timeline, instant).await?;
    let storage = table.storage();
    let mut change = FileChange {
        removed: clear_failed_attempt(storage, instant).await?,
        ..Default::default()
    };
    let layout = timeline.writer_layout();
    let inflight = Instant::new(instant, Action::Compaction, State::Inflight);
    storage
        .put(&layout.path(&inflight), Vec::<u8>::new())
        .await?;
    let slices = table.file_slices(&timeline, None).await?;
    let schema = table.schema(&timeline, &slices).await?;
    let cfg = table.config();
    let job = Arc::new(Job {
        storage: storage.clone(),
        schema: schema.clone(),
        instant: instant.to_string(),
        files: files.clone(),
        dropped: cfg.dropped_columns()?,
        admission: Admission::of(&timeline, None),
        rules: Precedence::new(&schema, cfg.merge_mode()?, cfg.ordering_field().as_deref()),
        keys: KeySource::for_table(cfg, &schema)?,
        splice: cfg.populate_meta_fields()?
            && !cfg.drop_partition_columns()?
            && schema.index_of(crate::meta::IS_DELETED).is_err(),
    });
    let stats = compact_slices(&job, plan.operations).await?;
    let (result, metadata) = commit_metadata(
        instant,
        stats,
        &crate::schema::avro_schema(cfg.name(), &schema)?.to_string(),
    );
    // a compaction completes as a commit of the plan's instant
    let done = layout.completing(instant, Action::Commit, timeline.latest_time());
    let path = layout.path(&done);
    storage
        .put_if_absent(&path, layout.encode_commit(&metadata, &path)?)
        .await?;
    change.added = FileChange::of_commit(&metadata).added;
    table.advance_listing(&timeline, &timeline.with_files([inflight, done]), &change);
    for m in storage
        .list_all(&marker_dir(instant))
        .await
        .unwrap_or_default()
    {
        let _ = storage.delete(&storage.relative(&m.location)).await;
    }
    Ok(result)
}

/// Deletes the files a failed attempt at compaction `instant` wrote (its markers name them)
/// and the markers; returns the files deleted.
async fn clear_failed_attempt(storage: &TableStorage, instant: &str) -> Result<Vec<String>> {
    let mut removed = Vec::new();
    for m in storage.list_all(&marker_dir(instant)).await? {
        let rel = storage.relative(&m.location);
        if let Some(data) = rel
            .strip_prefix(&format!("{}/", marker_dir(instant)))
            .and_then(|d| d.rsplit_once(".marker.").map(|(d, _)| d.to_string()))
        {
            if storage.exists(&data).await? {
                storage.delete(&data).await?;
            }
            removed.push(data);
        }
        storage.delete(&rel).await?;
    }
    Ok(removed)
}

/// Compacts every slice of the plan on tasks, as many at once as there are cores; returns
/// their write stats in plan order.
async fn compact_slices(
    job: &Arc<Job>,
    operations: Vec<CompactionOperation>,
) -> Result<Vec<WriteStat>> {
    let permits = Arc::new(tokio::sync::Semaphore::new(crate::tasks::parallelism()));
    let mut handles = Vec::new();
    for (task, op) in operations.into_iter().enumerate() {
        let (job, permits) = (job.clone(), permits.clone());
        let what = format!("{}/{}", op.partition_path, op.file_id);
        handles.push((
            what,
            tokio::spawn(async move {
                let _permit = permits.acquire_owned().await;
                compact_slice(&job, op, task).await
            }),
        ));
    }
    crate::tasks::join_writers(handles).await
}

/// What compaction `instant` did and the metadata of its commit, from the slices' `stats`;
/// `avro_schema` is the table's Avro schema.
fn commit_metadata(
    instant: &str,
    stats: Vec<WriteStat>,
    avro_schema: &str,
) -> (CompactionResult, CommitMetadata) {
    let mut result = CompactionResult {
        instant: instant.to_string(),
        file_groups: stats.len(),
        ..Default::default()
    };
    let mut by_partition: BTreeMap<String, Vec<WriteStat>> = BTreeMap::new();
    for s in stats {
        result.rows_written += s.num_writes as u64;
        result.updated += s.total_updated_records_compacted as u64;
        result.deleted += s.num_deletes as u64;
        result.log_files += s.total_log_files_compacted as usize;
        by_partition
            .entry(s.partition_path.clone().unwrap_or_default())
            .or_default()
            .push(s);
    }
    let mut extra = BTreeMap::new();
    extra.insert("schema".to_string(), avro_schema.to_string());
    let metadata = CommitMetadata {
        partition_to_write_stats: by_partition,
        partition_to_replace_file_ids: None,
        compacted: true,
        extra_metadata: extra,
        operation_type: Some("COMPACT".into()),
    };
    (result, metadata)
}

/// Merges one slice of the plan into a new base file; returns its write stat.
async fn compact_slice(job: &Job, op: CompactionOperation, task: usize) -> Result<WriteStat> {
    let started = std::time::Instant::now();
    let logs: Vec<String> = op
        .delta_file_paths
        .iter()
        .map(|l| join(&op.partition_path, l))
        .collect();
    let mut log_bytes = 0u64;
    for l in &logs {
        log_bytes += job.storage.head_size(l).await?;
    }
    let admits = |i: &str| job.admission.admits(i);
    let read = read_slice_logs(&job.storage, &logs, &admits, &job.schema).await?;
    let (log_records, log_blocks) = (read.records(), read.blocks);
    let base_rel = op
        .data_file_path
        .as_ref()
        .map(|base| join(&op.partition_path, base));
    // a base file whose records the logs only replace is spliced: its records are matched
    // by their stored keys
    let splice = job.splice && base_rel.is_some() && splice::spliceable(&read.contents);
    let keys = match splice {
        true => KeySource::Meta,
        false => job.keys.clone(),
    };
    let mut applier = LogApplier::new(&job.schema, read.contents, &keys, job.rules.clone())?;
    let read_ms = started.elapsed().as_millis() as i64;
    let name = BaseFileName::new(&op.file_id, &write_token(task), &job.instant);
    let file_name = name.name();
    let rel = join(&op.partition_path, &file_name);
    job.storage
        .put(
            &format!("{}/{rel}.marker.CREATE", marker_dir(&job.instant)),
            Vec::<u8>::new(),
        )
        .await?;
    let spliced = match (&base_rel, splice) {
        (Some(base_rel), true) => {
            let input = splice::SliceSplice {
                files: SpliceFiles {
                    storage: &job.storage,
                    schema: &job.schema,
                    settings: &job.files,
                    old_rel: base_rel,
                    new_rel: &rel,
                },
                ordering: job.rules.ordering.as_ref(),
                file_name: &file_name,
            };
            splice::splice_slice(&input, &mut applier).await?
        }
        _ => None,
    };
    let written = match spliced {
        Some(written) => written,
        None => compact_whole(job, base_rel.as_deref(), &rel, &file_name, &mut applier).await?,
    };
    let counts = applier.counts.clone();
    Ok(WriteStat {
        file_id: Some(op.file_id.clone()),
        path: Some(written.rel_path.clone()),
        prev_commit: Some(op.base_instant_time.clone()),
        num_writes: written.rows as i64,
        num_deletes: counts.deleted as i64,
        num_update_writes: counts.updated as i64,
        num_inserts: written.rows as i64 - counts.updated as i64,
        total_write_bytes: written.size as i64,
        partition_path: Some(op.partition_path.clone()),
        total_log_records: log_records as i64,
        total_log_files_compacted: logs.len() as i64,
        total_log_size_compacted: log_bytes as i64,
        total_updated_records_compacted: counts.updated as i64,
        total_log_blocks: log_blocks as i64,
        total_rollback_blocks: read.rollback_blocks as i64,
        file_size_in_bytes: written.size as i64,
        prev_base_file: op.data_file_path.clone(),
        runtime_stats: Some(serde_json::json!({
            "totalScanTime": read_ms,
            "totalUpsertTime": started.elapsed().as_millis() as i64,
            "totalCreateTime": 0,
        })),
        ..Default::default()
    })
}

/// Writes the slice's merge into the new base file `rel` (named `file_name`): the base file's
/// records (of `base_rel`) merged with the logs, then the logged records of new keys.
async fn compact_whole(
    job: &Job,
    base_rel: Option<&str>,
    rel: &str,
    file_name: &str,
    applier: &mut LogApplier,
) -> Result<WrittenFile> {
    let mut writer = BaseFileWriter::try_new(
        &job.storage,
        rel,
        job.schema.clone(),
        &job.files,
        &job.dropped,
    )?;
    if let Some(base_rel) = base_rel {
        let (mut stream, _) =
            stream_base_file(&job.storage, base_rel, &job.schema, &job.dropped).await?;
        while let Some(b) = stream.next().await {
            let merged = applier.apply_to_base(&b?)?;
            if merged.num_rows() > 0 {
                writer
                    .write(&crate::meta::with_file_name(&merged, file_name)?)
                    .await?;
            }
        }
    }
    if let Some(rest) = applier.remaining()? {
        writer
            .write(&crate::meta::with_file_name(&rest, file_name)?)
            .await?;
    }
    writer.close().await
}
