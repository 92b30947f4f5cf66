//! `run_compaction` and `show_compaction`.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Int32Array, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use hoodie_format::client::{CompactionRequest, TableServices};
use hoodie_format::compaction::{list_compactions, read_plan};
use hoodie_format::timeline::{Action, State};
use hoodie_format::write::{WriteSpec, WriteStatement};
use hoodie_format::{HudiTable, TableType};

use super::{target, Args};
use crate::error::{ProcedureError, Result};
use crate::options::write::WriteOptions;

/// The base-file settings a compaction writes with: the session's and table's options, and
/// the call's `options => 'k1=v1,k2=v2'` over them.
fn file_spec(
    ctx: &SessionContext,
    table: &HudiTable,
    args: &Args,
) -> Result<hoodie_format::write::FileSpec> {
    let all = super::call_options(ctx, args)?;
    let options = WriteOptions::new(all, table.config());
    options.validate()?;
    Ok(WriteSpec::resolve(&options, WriteStatement::InsertInto)?.files)
}

/// The deltacommits Hudi's compaction trigger (NUM_COMMITS) waits for since the last
/// compaction: `hoodie.compact.inline.max.delta.commits`.
fn trigger(ctx: &SessionContext, table: &HudiTable, args: &Args) -> Result<usize> {
    let all = super::call_options(ctx, args)?;
    let options = WriteOptions::new(all, table.config());
    Ok(options.get_usize(&hoodie_format::config::COMPACT_INLINE_MAX_DELTA_COMMITS)?)
}

/// `CALL run_compaction(op => 'schedule' | 'execute' | 'scheduleandexecute' | 'run', table |
/// path [, timestamp] [, instants] [, limit])`: one row per compaction instant it scheduled or
/// ran, newest first: `(timestamp, operation_size, state)`. `timestamp` executes that pending
/// instant (with `op => 'schedule'`: plans the compaction at that instant).
pub(super) async fn run_compaction(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    let op = args.get("op").unwrap_or_default().to_ascii_lowercase();
    let op = if op == "run" {
        "scheduleandexecute".to_string()
    } else {
        op
    };
    let timestamp = args.number("timestamp")?.map(|t| t.to_string());
    let limit = args.number("limit")?.map(|l| l.max(0) as usize);
    let mut instants: Option<Vec<String>> = args
        .get("instants")
        .map(|s| s.split(',').map(|i| i.trim().to_string()).collect());
    let (schedule, execute) = match op.as_str() {
        "schedule" => (true, false),
        "execute" => (false, true),
        "scheduleandexecute" => (true, true),
        other => {
            return Err(ProcedureError::UnknownCompactionOperation {
                operation: other.to_string(),
            }
            .into())
        }
    };
    let (schedule, execute) = match (&timestamp, instants.is_none()) {
        (Some(t), true) if !schedule || execute => {
            instants = Some(vec![t.clone()]);
            (false, true)
        }
        _ => (schedule, execute),
    };
    let request = CompactionRequest {
        schedule,
        execute,
        instants,
        at: timestamp,
        limit,
        // as Hudi schedules (its NUM_COMMITS trigger): nothing is planned until
        // hoodie.compact.inline.max.delta.commits deltacommits followed the last compaction
        after: trigger(ctx, &table, args)?,
        files: file_spec(ctx, &table, args)?,
    };
    let services = TableServices::new(&table, super::concurrency(ctx, args, &table)?);
    let affected = services.compact(&request).await?;
    let all = list_compactions(&table).await?;
    let rows: Vec<_> = all
        .into_iter()
        .filter(|c| affected.contains(&c.timestamp))
        .collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("timestamp", DataType::Utf8, true),
        Field::new("operation_size", DataType::Int32, true),
        Field::new("state", DataType::Utf8, true),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| r.timestamp.as_str()),
            )),
            Arc::new(Int32Array::from_iter_values(
                rows.iter().map(|r| r.operations as i32),
            )),
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| r.state))),
        ],
    )?;
    Ok(ctx.read_batch(batch)?)
}

/// One row of `show_compaction`.
struct ShowRow {
    time: String,
    completed_at: Option<String>,
    state: &'static str,
    operations: Option<i32>,
    partition: String,
    log_files: i64,
    updated: i64,
    log_size: i64,
    write_bytes: i64,
}

/// `CALL show_compaction(table | path [, limit] [, showArchived] [, filter] [, startTime]
/// [, endTime])` (and `SHOW COMPACTION ON t [LIMIT n]`): per compaction instant (newest
/// first, `limit` instants, 20 by default) and partition, Hudi's columns.
pub(super) async fn show_compaction(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    if table.config().table_type()? != TableType::MergeOnRead {
        return Err(ProcedureError::NotMergeOnRead.into());
    }
    let rows = show_rows(&table, args).await?;
    let s = |f: &dyn Fn(&ShowRow) -> Option<String>| -> ArrayRef {
        Arc::new(StringArray::from(rows.iter().map(f).collect::<Vec<_>>()))
    };
    let n = |f: &dyn Fn(&ShowRow) -> i64| -> ArrayRef {
        Arc::new(Int64Array::from_iter_values(rows.iter().map(f)))
    };
    let schema = Arc::new(Schema::new(vec![
        Field::new("compaction_time", DataType::Utf8, true),
        Field::new("state_transition_time", DataType::Utf8, true),
        Field::new("state", DataType::Utf8, true),
        Field::new("action", DataType::Utf8, true),
        Field::new("operation_size", DataType::Int32, true),
        Field::new("partition_path", DataType::Utf8, true),
        Field::new("total_log_files_per_partition", DataType::Int64, true),
        Field::new(
            "total_updated_records_compacted_per_partition",
            DataType::Int64,
            true,
        ),
        Field::new(
            "total_log_size_compacted_per_partition",
            DataType::Int64,
            true,
        ),
        Field::new("total_write_bytes_per_partition", DataType::Int64, true),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            s(&|r| Some(r.time.clone())),
            s(&|r| r.completed_at.clone()),
            s(&|r| Some(r.state.to_string())),
            s(&|r| {
                Some(
                    if r.state == "COMPLETED" {
                        "commit"
                    } else {
                        "compaction"
                    }
                    .to_string(),
                )
            }),
            Arc::new(Int32Array::from(
                rows.iter().map(|r| r.operations).collect::<Vec<_>>(),
            )),
            s(&|r| Some(r.partition.clone())),
            n(&|r| r.log_files),
            n(&|r| r.updated),
            n(&|r| r.log_size),
            n(&|r| r.write_bytes),
        ],
    )?;
    let df = ctx.read_batch(batch)?;
    match args.get("filter") {
        Some(f) => {
            let expr = df.parse_sql_expr(f)?;
            Ok(df.filter(expr)?)
        }
        None => Ok(df),
    }
}

/// The rows of `show_compaction`.
async fn show_rows(table: &HudiTable, args: &Args) -> Result<Vec<ShowRow>> {
    let limit = args.number("limit")?.unwrap_or(20).max(0) as usize;
    let (start, end) = (args.get("starttime"), args.get("endtime"));
    let timeline = table.timeline().await?;
    let mut rows: Vec<ShowRow> = Vec::new();
    let mut shown = 0;
    for c in list_compactions(table).await? {
        if start.is_some_and(|s| c.timestamp.as_str() < s)
            || end.is_some_and(|e| c.timestamp.as_str() > e)
        {
            continue;
        }
        if shown == limit {
            break;
        }
        shown += 1;
        let done = timeline.instants().iter().find(|i| {
            i.timestamp == c.timestamp && i.state == State::Completed && i.action == Action::Commit
        });
        match done {
            Some(commit) => {
                let m = timeline
                    .read_commit_metadata(table.storage(), commit)
                    .await?;
                for (p, stats) in &m.partition_to_write_stats {
                    for s in stats {
                        rows.push(ShowRow {
                            time: c.timestamp.clone(),
                            completed_at: commit.completion_time.clone(),
                            state: "COMPLETED",
                            operations: Some(c.operations as i32),
                            partition: p.clone(),
                            log_files: s.total_log_files_compacted,
                            updated: s.total_updated_records_compacted,
                            log_size: s.total_log_size_compacted,
                            write_bytes: s.total_write_bytes,
                        });
                    }
                }
            }
            None => {
                let plan = read_plan(table, &timeline, &c.timestamp).await?;
                let mut parts: Vec<&str> = plan
                    .operations
                    .iter()
                    .map(|o| o.partition_path.as_str())
                    .collect();
                parts.sort_unstable();
                parts.dedup();
                for p in parts {
                    let ops: Vec<_> = plan
                        .operations
                        .iter()
                        .filter(|o| o.partition_path == p)
                        .collect();
                    rows.push(ShowRow {
                        time: c.timestamp.clone(),
                        completed_at: None,
                        state: c.state,
                        operations: Some(ops.len() as i32),
                        partition: p.to_string(),
                        log_files: ops.iter().map(|o| o.delta_file_paths.len() as i64).sum(),
                        updated: 0,
                        log_size: 0,
                        write_bytes: 0,
                    });
                }
            }
        }
    }
    let archived = args
        .get("showarchived")
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    if archived {
        rows.extend(archived_rows(table, limit - shown, (start, end)).await?);
    }
    Ok(rows)
}

/// The rows of the archived compactions (always completed: archival never passes a pending
/// one), newest first, at most `limit` instants in `[start, end]`. The archive's write stats
/// keep no log-file counts or sizes: those read 0.
async fn archived_rows(
    table: &HudiTable,
    limit: usize,
    (start, end): (Option<&str>, Option<&str>),
) -> Result<Vec<ShowRow>> {
    let entries = hoodie_format::archive::archived_entries(table).await?;
    let plans: std::collections::HashMap<&str, usize> = entries
        .iter()
        .filter(|e| e.instant.action == Action::Compaction)
        .filter_map(|e| Some((e.instant.timestamp.as_str(), e.compaction_operations()?)))
        .collect();
    let mut rows = Vec::new();
    let done = entries.iter().rev().filter(|e| {
        let t = e.instant.timestamp.as_str();
        e.instant.action == Action::Commit
            && e.instant.state == State::Completed
            && plans.contains_key(t)
            && start.is_none_or(|s| t >= s)
            && end.is_none_or(|x| t <= x)
    });
    for e in done.take(limit) {
        let json = e.commit_metadata_json().unwrap_or_default();
        let m = hoodie_format::timeline::CommitMetadata::parse(&json, "archived")?;
        for (p, stats) in &m.partition_to_write_stats {
            for s in stats {
                rows.push(ShowRow {
                    time: e.instant.timestamp.clone(),
                    completed_at: None,
                    state: "COMPLETED",
                    operations: Some(plans[e.instant.timestamp.as_str()] as i32),
                    partition: p.clone(),
                    log_files: s.total_log_files_compacted,
                    updated: s.total_updated_records_compacted,
                    log_size: s.total_log_size_compacted,
                    write_bytes: s.total_write_bytes,
                });
            }
        }
    }
    Ok(rows)
}
