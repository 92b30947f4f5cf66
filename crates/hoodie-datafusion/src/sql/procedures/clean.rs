//! `run_clean` and `show_cleans`: cleaning a table on demand, and the cleans it has had, with
//! the parameters and result columns of Hudi 1.2's procedures.

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use hoodie_format::archive::archived_entries;
use hoodie_format::clean::CleanMetadata;
use hoodie_format::clean::{list_cleans, CleanSpec};
use hoodie_format::client::TableServices;
use hoodie_format::config::{self, ConfigKey};
use hoodie_format::timeline::{Action, Instant, State};

use super::commits::Columns;
use super::{call_options, target, Args};
use crate::error::{ProcedureError, Result};
use crate::options::write::WriteOptions;

/// The call's arguments as the cleaner keys they set.
const ARGUMENT_KEYS: &[(&str, ConfigKey)] = &[
    ("clean_policy", config::CLEANER_POLICY),
    ("retain_commits", config::CLEANER_COMMITS_RETAINED),
    ("hours_retained", config::CLEANER_HOURS_RETAINED),
    (
        "file_versions_retained",
        config::CLEANER_FILE_VERSIONS_RETAINED,
    ),
    ("trigger_strategy", config::CLEAN_TRIGGER_STRATEGY),
    ("trigger_max_commits", config::CLEAN_MAX_COMMITS),
];

/// `CALL run_clean(table [, schedule_in_line] [, clean_policy] [, retain_commits]
/// [, hours_retained] [, file_versions_retained] [, trigger_strategy] [, trigger_max_commits]
/// [, options])`: finishes any pending clean, then plans and runs a new one (unless
/// `schedule_in_line => false`), one row per clean completed; none when nothing was due.
pub(super) async fn run_clean(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    let mut all = call_options(ctx, args)?;
    for (arg, key) in ARGUMENT_KEYS {
        if let Some(v) = args.get(arg) {
            all.insert(key.key.to_string(), v.to_string());
        }
    }
    let schedule = match args.get("schedule_in_line").map(str::trim) {
        None => true,
        Some(v) if v.eq_ignore_ascii_case("true") => true,
        Some(v) if v.eq_ignore_ascii_case("false") => false,
        Some(v) => {
            return Err(ProcedureError::BadValue {
                procedure: "run_clean".into(),
                argument: "schedule_in_line".into(),
                expected: "true or false",
                value: v.to_string(),
            }
            .into())
        }
    };
    let options = WriteOptions::new(all, table.config());
    let spec = CleanSpec::resolve(|k| options.get(k), |k| options.explicit(k).is_some())?;
    let services = TableServices::new(&table, super::concurrency(ctx, args, &table)?);
    let done = if schedule {
        services.clean(&spec).await?
    } else {
        services.finish_pending_cleans().await?
    };
    let rows: Vec<&CleanMetadata> = done.iter().map(|c| &c.metadata).collect();
    clean_columns(Columns::new(), &rows)
        .text(
            "bootstrap_part_metadata",
            texts(&rows, |_| "{}".to_string()),
        )
        .long("version", longs(&rows, |m| m.version.into()))
        .frame(ctx)
}

/// The columns both procedures give of a clean's metadata.
fn clean_columns(columns: Columns, rows: &[&CleanMetadata]) -> Columns {
    columns
        .text(
            "start_clean_time",
            texts(rows, |m| m.start_clean_time.clone()),
        )
        .long("time_taken_in_millis", longs(rows, |m| m.time_taken_ms))
        .long(
            "total_files_deleted",
            longs(rows, |m| m.total_files_deleted.into()),
        )
        .text(
            "earliest_commit_to_retain",
            texts(rows, |m| m.earliest_commit_to_retain.clone()),
        )
}

fn texts(rows: &[&CleanMetadata], f: impl Fn(&CleanMetadata) -> String) -> Vec<Option<String>> {
    rows.iter().map(|m| Some(f(m))).collect()
}

fn longs(rows: &[&CleanMetadata], f: impl Fn(&CleanMetadata) -> i64) -> Vec<i64> {
    rows.iter().map(|m| f(m)).collect()
}

/// The completed cleans of the archived timeline with their metadata.
async fn archived_cleans(
    table: &hoodie_format::HudiTable,
) -> Result<Vec<(Instant, CleanMetadata)>> {
    Ok(archived_entries(table)
        .await?
        .into_iter()
        .filter(|e| e.instant.action == Action::Clean && e.instant.state == State::Completed)
        .filter_map(|e| {
            let m = e.clean_metadata()?;
            Some((e.instant, m))
        })
        .collect())
}

/// `CALL show_cleans(table [, limit] [, showArchived])`: the completed cleans of the active
/// timeline (and the archived one with `showArchived => true`), newest first, at most `limit`
/// (10).
pub(super) async fn show_cleans(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    let archived = args
        .get("showarchived")
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    if args.get("filter").is_some() {
        return Err(ProcedureError::UnsupportedArgument {
            procedure: "show_cleans".into(),
            argument: "filter => ...",
            why: "; filter the result with WHERE",
        }
        .into());
    }
    let limit = args.number("limit")?.unwrap_or(10).max(0) as usize;
    let mut cleans: Vec<_> = list_cleans(&table)
        .await?
        .into_iter()
        .filter_map(|(i, m)| Some((i, m?)))
        .collect();
    if archived {
        cleans.extend(archived_cleans(&table).await?);
        cleans.sort_by(|(a, _), (b, _)| b.timestamp.cmp(&a.timestamp));
    }
    cleans.truncate(limit);
    let rows: Vec<&CleanMetadata> = cleans.iter().map(|(_, m)| m).collect();
    let columns = Columns::new()
        .text(
            "clean_time",
            cleans
                .iter()
                .map(|(i, _)| Some(i.timestamp.clone()))
                .collect(),
        )
        .text(
            "state_transition_time",
            cleans
                .iter()
                .map(|(i, _)| {
                    Some(
                        i.completion_time
                            .clone()
                            .unwrap_or_else(|| i.timestamp.clone()),
                    )
                })
                .collect(),
        )
        .text("action", texts(&rows, |_| "clean".to_string()));
    clean_columns(columns, &rows)
        .text(
            "last_completed_commit_timestamp",
            texts(&rows, |m| m.last_completed_commit.clone()),
        )
        .long("version", longs(&rows, |m| m.version.into()))
        .frame(ctx)
}
