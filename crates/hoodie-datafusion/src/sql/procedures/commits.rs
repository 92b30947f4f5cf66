//! `show_commits`, `show_commits_metadata` and `show_table_properties`: a table's completed
//! writes and its properties, with the columns of Hudi 1.2's documented procedures.

use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use hoodie_format::timeline::Instant;
use hoodie_format::timeline::{CommitMetadata, WriteStat};
use hoodie_format::HudiTable;

use super::{target, Args};
use crate::error::Result;

/// Hudi's default `limit` of these procedures.
const DEFAULT_LIMIT: i64 = 10;

/// Builds a one-batch DataFrame of string and long columns.
pub(super) struct Columns {
    fields: Vec<Field>,
    arrays: Vec<ArrayRef>,
}

impl Columns {
    pub(super) fn new() -> Self {
        Self {
            fields: Vec::new(),
            arrays: Vec::new(),
        }
    }

    pub(super) fn text(mut self, name: &str, values: Vec<Option<String>>) -> Self {
        self.fields.push(Field::new(name, DataType::Utf8, true));
        self.arrays.push(Arc::new(StringArray::from(values)));
        self
    }

    pub(super) fn int(mut self, name: &str, values: Vec<i32>) -> Self {
        self.fields.push(Field::new(name, DataType::Int32, true));
        self.arrays
            .push(Arc::new(datafusion::arrow::array::Int32Array::from(values)));
        self
    }

    pub(super) fn long(mut self, name: &str, values: Vec<i64>) -> Self {
        self.fields.push(Field::new(name, DataType::Int64, true));
        self.arrays.push(Arc::new(Int64Array::from(values)));
        self
    }

    pub(super) fn frame(self, ctx: &SessionContext) -> Result<DataFrame> {
        let batch = RecordBatch::try_new(Arc::new(Schema::new(self.fields)), self.arrays)?;
        Ok(ctx.read_batch(batch)?)
    }
}

/// The completed writes of `table`, newest first, at most `limit`, with their metadata.
async fn commits(table: &HudiTable, args: &Args) -> Result<Vec<(Instant, CommitMetadata)>> {
    let limit = args.number("limit")?.unwrap_or(DEFAULT_LIMIT).max(0) as usize;
    let timeline = table.timeline().await?;
    let mut out = Vec::new();
    let completed: Vec<&Instant> = timeline.completed_writes().collect();
    for i in completed.into_iter().rev().take(limit) {
        let metadata = timeline.read_commit_metadata(table.storage(), i).await?;
        out.push((i.clone(), metadata));
    }
    Ok(out)
}

/// When an instant completed, as `show_commits` gives it: its completion time (layout 2), else
/// its requested time.
fn transition_time(i: &Instant) -> Option<String> {
    Some(
        i.completion_time
            .clone()
            .unwrap_or_else(|| i.timestamp.clone()),
    )
}

/// A write stat that opened a new file group (Java: `prevCommit` is `"null"`).
fn adds_file(s: &WriteStat) -> bool {
    s.prev_commit.as_deref().is_none_or(|p| p == "null")
}

/// `CALL show_commits(table [, limit] | path => ...)`: one row per completed write, newest first.
pub(super) async fn show_commits(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    commit_rows(ctx, &commits(&table, args).await?, true)
}

/// `show_commits`' columns for `rows`: `show_archived_commits` has them but `action`, as in
/// Hudi 1.2 (`with_action` false).
pub(super) fn commit_rows(
    ctx: &SessionContext,
    rows: &[(Instant, CommitMetadata)],
    with_action: bool,
) -> Result<DataFrame> {
    let sum = |f: &dyn Fn(&WriteStat) -> i64| -> Vec<i64> {
        rows.iter()
            .map(|(_, m)| m.write_stats().map(f).sum())
            .collect()
    };
    let mut columns = Columns::new()
        .text(
            "commit_time",
            rows.iter()
                .map(|(i, _)| Some(i.timestamp.clone()))
                .collect(),
        )
        .text(
            "state_transition_time",
            rows.iter().map(|(i, _)| transition_time(i)).collect(),
        );
    if with_action {
        columns = columns.text(
            "action",
            rows.iter()
                .map(|(i, _)| Some(i.action.as_str().to_string()))
                .collect(),
        );
    }
    columns
        .long("total_bytes_written", sum(&|s| s.total_write_bytes))
        .long("total_files_added", sum(&|s| adds_file(s) as i64))
        .long("total_files_updated", sum(&|s| !adds_file(s) as i64))
        .long(
            "total_partitions_written",
            rows.iter()
                .map(|(_, m)| m.partition_to_write_stats.len() as i64)
                .collect(),
        )
        .long("total_records_written", sum(&|s| s.num_writes))
        .long(
            "total_update_records_written",
            sum(&|s| s.num_update_writes),
        )
        .long("total_errors", sum(&|s| s.total_write_errors))
        .frame(ctx)
}

/// `CALL show_commits_metadata(table [, limit] | path => ...)`: one row per write stat of the
/// completed writes, newest first.
pub(super) async fn show_commits_metadata(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    commit_stat_rows(ctx, &commits(&table, args).await?)
}

/// `show_commits_metadata`'s columns for `rows`.
pub(super) fn commit_stat_rows(
    ctx: &SessionContext,
    rows: &[(Instant, CommitMetadata)],
) -> Result<DataFrame> {
    let stats: Vec<(&Instant, &String, &WriteStat)> = rows
        .iter()
        .flat_map(|(i, m)| {
            m.partition_to_write_stats
                .iter()
                .flat_map(move |(p, ss)| ss.iter().map(move |s| (i, p, s)))
        })
        .collect();
    let text = |f: &dyn Fn(&Instant, &String, &WriteStat) -> Option<String>| {
        stats.iter().map(|(i, p, s)| f(i, p, s)).collect::<Vec<_>>()
    };
    let long = |f: &dyn Fn(&WriteStat) -> i64| stats.iter().map(|(_, _, s)| f(s)).collect();
    Columns::new()
        .text("commit_time", text(&|i, _, _| Some(i.timestamp.clone())))
        .text("state_transition_time", text(&|i, _, _| transition_time(i)))
        .text(
            "action",
            text(&|i, _, _| Some(i.action.as_str().to_string())),
        )
        .text("partition", text(&|_, p, _| Some(p.clone())))
        .text("file_id", text(&|_, _, s| s.file_id.clone()))
        .text("previous_commit", text(&|_, _, s| s.prev_commit.clone()))
        .long("num_writes", long(&|s| s.num_writes))
        .long("num_inserts", long(&|s| s.num_inserts))
        .long("num_deletes", long(&|s| s.num_deletes))
        .long("num_update_writes", long(&|s| s.num_update_writes))
        .long("total_errors", long(&|s| s.total_write_errors))
        .long("total_log_blocks", long(&|s| s.total_log_blocks))
        .long(
            "total_corrupt_log_blocks",
            long(&|s| s.total_corrupt_log_block),
        )
        .long("total_rollback_blocks", long(&|s| s.total_rollback_blocks))
        .long("total_log_records", long(&|s| s.total_log_records))
        .long(
            "total_updated_records_compacted",
            long(&|s| s.total_updated_records_compacted),
        )
        .long("total_bytes_written", long(&|s| s.total_write_bytes))
        .frame(ctx)
}

/// `CALL show_table_properties(table | path [, limit])`: the table's `hoodie.properties`, by
/// key.
pub(super) async fn show_table_properties(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    let limit = args.number("limit")?.unwrap_or(DEFAULT_LIMIT).max(0) as usize;
    let mut props: Vec<(String, String)> = table
        .config()
        .properties()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    props.sort();
    props.truncate(limit);
    Columns::new()
        .text("key", props.iter().map(|(k, _)| Some(k.clone())).collect())
        .text(
            "value",
            props.iter().map(|(_, v)| Some(v.clone())).collect(),
        )
        .frame(ctx)
}

/// `CALL show_commit_files(table, limit, instant_time | path => ...)`: one row per write stat of the
/// completed write `instant_time`, at most `limit` (default 10).
pub(super) async fn show_commit_files(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    let wanted = args
        .get("instant_time")
        .unwrap_or_default()
        .trim()
        .to_string();
    let limit = args.number("limit")?.unwrap_or(DEFAULT_LIMIT).max(0) as usize;
    let timeline = table.timeline().await?;
    let Some(instant) = timeline.completed_writes().find(|i| i.timestamp == wanted) else {
        return Err(crate::error::ProcedureError::NoSuchCommit {
            instant: wanted.to_string(),
            table: table.storage().location().trim_end_matches('/').to_string(),
        }
        .into());
    };
    let metadata = timeline
        .read_commit_metadata(table.storage(), instant)
        .await?;
    let stats: Vec<(&String, &WriteStat)> = metadata
        .partition_to_write_stats
        .iter()
        .flat_map(|(p, ss)| ss.iter().map(move |s| (p, s)))
        .take(limit)
        .collect();
    let text = |f: &dyn Fn(&String, &WriteStat) -> Option<String>| {
        stats.iter().map(|(p, s)| f(p, s)).collect::<Vec<_>>()
    };
    let long = |f: &dyn Fn(&WriteStat) -> i64| stats.iter().map(|(_, s)| f(s)).collect();
    let action = instant.action.as_str().to_string();
    Columns::new()
        .text("action", text(&|_, _| Some(action.clone())))
        .text("partition_path", text(&|p, _| Some(p.clone())))
        .text("file_id", text(&|_, s| s.file_id.clone()))
        .text("previous_commit", text(&|_, s| s.prev_commit.clone()))
        .long("total_records_updated", long(&|s| s.num_update_writes))
        .long("total_records_written", long(&|s| s.num_writes))
        .long("total_bytes_written", long(&|s| s.total_write_bytes))
        .long("total_errors", long(&|s| s.total_write_errors))
        .long("file_size", long(&|s| s.file_size_in_bytes))
        .frame(ctx)
}
