//! `archive_commits`, `show_archived_commits` and `show_archived_commits_metadata`: archiving
//! a table's timeline on demand, and the commits its archived timeline holds, with the
//! parameters and result columns of Hudi 1.2's procedures.

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use hoodie_format::archive::{archived_entries, ArchiveSpec};
use hoodie_format::clean::CleanSpec;
use hoodie_format::client::TableServices;
use hoodie_format::config::{self, ConfigKey};
use hoodie_format::timeline::CommitMetadata;
use hoodie_format::timeline::{millis_to_instant, Instant, State};
use hoodie_format::{HudiTable, TableType};

use super::commits::{commit_rows, commit_stat_rows, Columns};
use super::{call_options, target, Args};
use crate::error::Result;
use crate::options::write::WriteOptions;

/// The call's arguments as the keys they set.
const ARGUMENT_KEYS: &[(&str, ConfigKey)] = &[
    ("min_commits", config::KEEP_MIN_COMMITS),
    ("max_commits", config::KEEP_MAX_COMMITS),
    ("retain_commits", config::CLEANER_COMMITS_RETAINED),
];

/// `CALL archive_commits(table | path [, min_commits] [, max_commits] [, retain_commits]
/// [, enable_metadata])`: archives the table as a write's automatic archival would under
/// those bounds (`retain_commits` is the cleaner's, which archival never passes). `result`
/// is 0, as Hudi returns on success. hoodie writes no metadata table, so `enable_metadata`
/// changes nothing.
pub(super) async fn archive_commits(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    let mut all = call_options(ctx, args)?;
    for (arg, key) in ARGUMENT_KEYS {
        if let Some(v) = args.get(arg) {
            all.insert(key.key.to_string(), v.to_string());
        }
    }
    let options = WriteOptions::new(all, table.config());
    let clean = CleanSpec::resolve(|k| options.get(k), |k| options.explicit(k).is_some())?;
    let mor = table.config().table_type()? == TableType::MergeOnRead;
    let spec = ArchiveSpec::resolve(|k| options.get(k), mor)?;
    let services = TableServices::new(&table, super::concurrency(ctx, args, &table)?);
    services.archive(&spec, &clean).await?;
    Columns::new().int("result", vec![0]).frame(ctx)
}

/// The instant time `days` days before now, Hudi's default bounds of these procedures.
fn days_ago(days: i64) -> String {
    millis_to_instant(chrono::Utc::now().timestamp_millis() - days * 86_400_000)
}

/// The completed writes of the archived timeline in `(start_ts, end_ts]` (defaults: ten days
/// ago and one day ago, as Hudi's), newest first, at most `limit` (10).
async fn archived_commits(
    table: &HudiTable,
    args: &Args,
) -> Result<Vec<(Instant, CommitMetadata)>> {
    let limit = args.number("limit")?.unwrap_or(10).max(0) as usize;
    let start = args
        .get("start_ts")
        .map_or_else(|| days_ago(10), str::to_string);
    let end = args
        .get("end_ts")
        .map_or_else(|| days_ago(1), str::to_string);
    let mut out = Vec::new();
    for e in archived_entries(table).await?.into_iter().rev() {
        let t = e.instant.timestamp.as_str();
        let wanted = e.instant.state == State::Completed && e.instant.action.is_write();
        if !wanted || t <= start.as_str() || t > end.as_str() {
            continue;
        }
        if out.len() == limit {
            break;
        }
        let json = e.commit_metadata_json().unwrap_or_default();
        let metadata = CommitMetadata::parse(&json, "archived commit metadata")?;
        out.push((e.instant, metadata));
    }
    Ok(out)
}

/// `CALL show_archived_commits(table [, limit] [, start_ts] [, end_ts])`: `show_commits`'s
/// rows for the archived timeline, without the `action` column (as Hudi 1.2's).
pub(super) async fn show_archived_commits(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    commit_rows(ctx, &archived_commits(&table, args).await?, false)
}

/// `CALL show_archived_commits_metadata(table [, limit] [, start_ts] [, end_ts])`:
/// `show_commits_metadata`'s rows for the archived timeline.
pub(super) async fn show_archived_commits_metadata(
    ctx: &SessionContext,
    args: &Args,
) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    commit_stat_rows(ctx, &archived_commits(&table, args).await?)
}
