//! Procedures that look at a table's timeline and files: `show_timeline`, `show_fsview_all`
//! (also `show_file_system_view`), `show_fsview_latest`, `stats_file_sizes` and `stats_wa`,
//! with Hudi 1.2's parameters and result columns.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use hoodie_format::fs_view::{FileSlice, TableListing};
use hoodie_format::timeline::{Action, State};
use hoodie_format::HudiTable;

use super::commits::Columns;
use super::{target, Args};
use crate::error::Result;

fn limit(args: &Args, default: i64) -> Result<usize> {
    Ok(args.number("limit")?.unwrap_or(default).max(0) as usize)
}

fn show_archived(args: &Args) -> bool {
    args.get("showarchived")
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// An instant time as `MM-dd HH:mm:ss` (`-` when it is not one).
fn instant_clock(t: &str) -> String {
    hoodie_format::timeline::instant_to_millis(t)
        .and_then(DateTime::<Utc>::from_timestamp_millis)
        .map(|d| d.format("%m-%d %H:%M:%S").to_string())
        .unwrap_or_else(|| "-".into())
}

/// An archived instant: its latest state, its completion time (table versions 8 and 9) and
/// what an archived rollback rolled back.
type ArchivedState = (State, Option<String>, Option<String>);

/// The rows of the archived timeline: each instant in its latest archived state, when it was
/// requested and completed where the archive keeps it (table versions 8 and 9; `-` on 6,
/// whose archive keeps no state times), and what an archived rollback rolled back.
async fn archived_rows(table: &HudiTable) -> Result<Vec<[Option<String>; 8]>> {
    // (version 6's archive keeps a state transition time, which Hudi does not show here)
    let timed = table.config().version()? >= 8;
    let mut latest: BTreeMap<(String, String), ArchivedState> = BTreeMap::new();
    for e in hoodie_format::archive::archived_entries(table).await? {
        let info = e
            .rolled_back()
            .map(|targets| format!("Rolled back {}", targets.join(", ")));
        let key = (
            e.instant.timestamp.clone(),
            e.instant.action.as_str().to_string(),
        );
        let entry = latest.entry(key).or_insert((e.instant.state, None, None));
        entry.0 = entry.0.max(e.instant.state);
        entry.1 = entry
            .1
            .take()
            .or(e.instant.completion_time.clone().filter(|_| timed));
        entry.2 = entry.2.take().or(info);
    }
    Ok(latest
        .into_iter()
        .map(|((t, a), (state, completed, info))| {
            let (requested, completed) = match &completed {
                Some(c) => (instant_clock(&t), instant_clock(c)),
                None => ("-".into(), "-".into()),
            };
            [
                Some(t),
                Some(a),
                Some(state_name(state).to_string()),
                Some(requested),
                Some("-".into()),
                Some(completed),
                Some("ARCHIVED".to_string()),
                info,
            ]
        })
        .collect())
}

/// `CALL show_timeline(table [, path] [, limit] [, showArchived] [, filter] [, startTime]
/// [, endTime])`: one row per instant of the active timeline, newest first (at one time,
/// COMPLETED before INFLIGHT before REQUESTED), with when each state's file was written
/// (`MM-dd HH:mm:ss`, `-` for a state not reached), `timeline_type` ACTIVE, and what a
/// rollback rolled back; with `showArchived => true` the archived instants too
/// (`timeline_type` ARCHIVED).
pub(super) async fn show_timeline(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    let timeline = table.timeline().await?;
    let storage = table.storage();
    let mut written: HashMap<String, DateTime<Utc>> = HashMap::new();
    for meta in storage.list_dir(timeline.dir()).await? {
        written.insert(
            meta.location.filename().unwrap_or_default().to_string(),
            meta.last_modified,
        );
    }
    let when = |ts: &str, action: &Action, state: State| {
        let i = hoodie_format::timeline::Instant::new(ts, action.clone(), state);
        let name = i.file_name(timeline.layout());
        written
            .get(&name)
            .map(|t| t.format("%m-%d %H:%M:%S").to_string())
            .unwrap_or_else(|| "-".into())
    };
    let (start, end) = (args.get("starttime"), args.get("endtime"));
    let mut rows = Vec::new();
    for i in timeline.instants().iter().rev() {
        let t = i.timestamp.as_str();
        if start.is_some_and(|s| t < s) || end.is_some_and(|e| t > e) {
            continue;
        }
        // a completed compaction is a commit; its requested and inflight files say compaction
        let plan_action = match (&i.action, i.state) {
            (Action::Commit, _)
                if timeline
                    .files()
                    .iter()
                    .any(|f| f.timestamp == t && f.action == Action::Compaction) =>
            {
                Action::Compaction
            }
            (a, _) => a.clone(),
        };
        let rollback_info = match i.action {
            Action::Rollback if i.state == State::Completed => {
                rolled_back(&table, &timeline, i).await?
            }
            _ => None,
        };
        rows.push([
            Some(t.to_string()),
            Some(i.action.as_str().to_string()),
            Some(state_name(i.state).to_string()),
            Some(when(t, &plan_action, State::Requested)),
            Some(when(t, &plan_action, State::Inflight)),
            Some(when(t, &i.action, State::Completed)),
            Some("ACTIVE".to_string()),
            rollback_info,
        ]);
    }
    if show_archived(args) {
        let archived = archived_rows(&table).await?;
        rows.extend(archived.into_iter().filter(|r| {
            let t = r[0].as_deref().unwrap_or_default();
            !(start.is_some_and(|s| t < s) || end.is_some_and(|e| t > e))
        }));
        rows.sort_by(|a, b| b[0].cmp(&a[0]));
    }
    let both = start.is_some() && end.is_some();
    if !both {
        rows.truncate(limit(args, 20)?);
    }
    let col = |k: usize| rows.iter().map(|r| r[k].clone()).collect::<Vec<_>>();
    let frame = Columns::new()
        .text("instant_time", col(0))
        .text("action", col(1))
        .text("state", col(2))
        .text("requested_time", col(3))
        .text("inflight_time", col(4))
        .text("completed_time", col(5))
        .text("timeline_type", col(6))
        .text("rollback_info", col(7))
        .frame(ctx)?;
    filtered(frame, args)
}

fn state_name(s: State) -> &'static str {
    match s {
        State::Requested => "REQUESTED",
        State::Inflight => "INFLIGHT",
        State::Completed => "COMPLETED",
    }
}

/// "Rolled back <instants>" for a completed rollback.
async fn rolled_back(
    table: &HudiTable,
    timeline: &hoodie_format::timeline::Timeline,
    i: &hoodie_format::timeline::Instant,
) -> Result<Option<String>> {
    let targets = timeline.read_rolled_back(table.storage(), i).await?;
    Ok(Some(format!("Rolled back {}", targets.join(", "))))
}

/// Applies `filter => '<SQL predicate over the result columns>'`.
fn filtered(frame: DataFrame, args: &Args) -> Result<DataFrame> {
    match args.get("filter") {
        None => Ok(frame),
        Some(f) => {
            let expr = frame.parse_sql_expr(f)?;
            Ok(frame.filter(expr)?)
        }
    }
}

/// Sizes of every data file, by path relative to the table.
async fn file_sizes(table: &HudiTable) -> Result<HashMap<String, u64>> {
    let storage = table.storage();
    Ok(storage
        .list_all("")
        .await?
        .into_iter()
        .map(|m| (storage.relative(&m.location), m.size))
        .collect())
}

/// Whether partition `p` matches `path_regex` (`ALL_PARTITIONS`, or a glob such as `*/*`).
fn matches_glob(p: &str, glob: Option<&str>) -> bool {
    let Some(g) = glob.filter(|g| !g.eq_ignore_ascii_case("ALL_PARTITIONS")) else {
        return true;
    };
    let (gs, ps): (Vec<&str>, Vec<&str>) = (g.split('/').collect(), p.split('/').collect());
    gs.len() == ps.len()
        && gs.iter().zip(&ps).all(|(g, p)| {
            *g == "*" || g == p || g.strip_suffix('*').is_some_and(|pre| p.starts_with(pre))
        })
}

/// The slices `show_fsview_all` / `show_fsview_latest` list: every committed slice (or the
/// latest of each file group) of the partitions `path_regex` / `partition_path` take, the
/// replaced file groups left out, slices after `max_instant` left out.
async fn fsview_slices(table: &HudiTable, args: &Args, latest: bool) -> Result<Vec<FileSlice>> {
    // Hudi builds the view on the completed instants unless include_in_flight; only then do
    // exclude_compaction and merge change what it shows
    if args
        .get("include_in_flight")
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    {
        return Err(crate::error::ProcedureError::UnsupportedArgument {
            procedure: args.procedure.to_string(),
            argument: "include_in_flight => true",
            why: ": the views show the files of completed instants",
        }
        .into());
    }
    let timeline = table.timeline().await?;
    let listing = TableListing::read(table.storage()).await?;
    let replaced =
        hoodie_format::fs_view::replaced_file_groups(table.storage(), &timeline, None).await?;
    let max = args.get("max_instant");
    let include_max = args
        .get("include_max")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let glob = args.get("path_regex");
    let partition = args
        .get("partition_path")
        .filter(|p| !p.eq_ignore_ascii_case("ALL_PARTITIONS"));
    let mut out = Vec::new();
    for (p, id) in listing.groups() {
        if replaced.contains(&(p.clone(), id.clone()))
            || !matches_glob(p, glob)
            || partition.is_some_and(|x| x != p)
        {
            continue;
        }
        let mut slices: Vec<FileSlice> = listing
            .all_slices(&timeline, p, id)
            .into_iter()
            .filter(|s| {
                max.is_none_or(|m| {
                    s.base_instant.as_str() < m || (include_max && s.base_instant == m)
                })
            })
            .collect();
        if latest {
            slices.truncate(1);
        }
        out.extend(slices);
    }
    Ok(out)
}

/// `CALL show_fsview_all(table [, max_instant] [, include_max] [, include_in_flight]
/// [, exclude_compaction] [, limit] [, path_regex])`: every file slice.
pub(super) async fn show_fsview_all(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    let sizes = file_sizes(&table).await?;
    let mut slices = fsview_slices(&table, args, false).await?;
    slices.truncate(limit(args, 10)?);
    let text = |f: &dyn Fn(&FileSlice) -> Option<String>| slices.iter().map(f).collect::<Vec<_>>();
    slice_columns(&slices, &sizes)
        .text("delta_files", text(&|s| Some(s.log_files.join(","))))
        .frame(ctx)
}

/// The columns both file-system views begin with: where each slice is and how big.
fn slice_columns(slices: &[FileSlice], sizes: &HashMap<String, u64>) -> Columns {
    let size = |r: &String| sizes.get(r).copied().unwrap_or_default() as i64;
    let text = |f: &dyn Fn(&FileSlice) -> Option<String>| slices.iter().map(f).collect::<Vec<_>>();
    let long = |f: &dyn Fn(&FileSlice) -> i64| slices.iter().map(f).collect::<Vec<_>>();
    Columns::new()
        .text("partition", text(&|s| Some(s.partition_path.clone())))
        .text("file_id", text(&|s| Some(s.file_id.clone())))
        .text("base_instant", text(&|s| Some(s.base_instant.clone())))
        .text(
            "data_file",
            text(&|s| s.base_file.as_ref().map(|b| b.rel_path.clone())),
        )
        .long(
            "data_file_size",
            long(&|s| s.base_file.as_ref().map_or(0, |b| b.size as i64)),
        )
        .long("num_delta_files", long(&|s| s.log_files.len() as i64))
        .long(
            "total_delta_file_size",
            long(&|s| s.log_files.iter().map(size).sum()),
        )
}

/// `CALL show_fsview_latest(table [, max_instant] [, include_max] [, include_in_flight]
/// [, exclude_compaction] [, path_regex] [, partition_path] [, merge])`: the latest slice of
/// each file group, with its log files split by whether a pending compaction plans them.
pub(super) async fn show_fsview_latest(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    let sizes = file_sizes(&table).await?;
    let slices = fsview_slices(&table, args, true).await?;
    let timeline = table.timeline().await?;
    let mut scheduled: BTreeMap<(String, String), ()> = BTreeMap::new();
    for instant in hoodie_format::compaction::pending_compactions(&timeline) {
        for op in hoodie_format::compaction::read_plan(&table, &timeline, &instant)
            .await?
            .operations
        {
            scheduled.insert((op.partition_path, op.file_id), ());
        }
    }
    let size = |r: &String| sizes.get(r).copied().unwrap_or_default() as i64;
    let planned =
        |s: &FileSlice| scheduled.contains_key(&(s.partition_path.clone(), s.file_id.clone()));
    let delta = |s: &FileSlice| s.log_files.iter().map(size).sum::<i64>();
    let base = |s: &FileSlice| s.base_file.as_ref().map_or(0, |b| b.size as i64);
    let ratio = |s: &FileSlice, want: bool| match (planned(s) == want, base(s)) {
        (true, b) if b > 0 => delta(s) as f64 / b as f64,
        _ => 0.0,
    };
    let text = |f: &dyn Fn(&FileSlice) -> Option<String>| slices.iter().map(f).collect::<Vec<_>>();
    let long = |f: &dyn Fn(&FileSlice) -> i64| slices.iter().map(f).collect::<Vec<_>>();
    let files_if = |s: &FileSlice, want: bool| {
        Some(if planned(s) == want {
            s.log_files.join(",")
        } else {
            String::new()
        })
    };
    slice_columns(&slices, &sizes)
        .long(
            "delta_size_compaction_scheduled",
            long(&|s| if planned(s) { delta(s) } else { 0 }),
        )
        .long(
            "delta_size_compaction_unscheduled",
            long(&|s| if planned(s) { 0 } else { delta(s) }),
        )
        .text(
            "delta_to_base_radio_compaction_scheduled",
            text(&|s| Some(format!("{}", ratio(s, true)))),
        )
        .text(
            "delta_to_base_radio_compaction_unscheduled",
            text(&|s| Some(format!("{}", ratio(s, false)))),
        )
        .text(
            "delta_files_compaction_scheduled",
            text(&|s| files_if(s, true)),
        )
        .text(
            "delta_files_compaction_unscheduled",
            text(&|s| files_if(s, false)),
        )
        .frame(ctx)
}

/// `CALL stats_file_sizes(table [, partition_path] [, limit])`: per completed write, the
/// distribution of the sizes of the files it wrote (those under `partition_path`, a glob),
/// then `ALL` over every write.
pub(super) async fn stats_file_sizes(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    let timeline = table.timeline().await?;
    let glob = args.get("partition_path");
    let mut per_commit: Vec<(String, Vec<i64>)> = Vec::new();
    for i in timeline.completed_writes() {
        let m = timeline.read_commit_metadata(table.storage(), i).await?;
        let sizes: Vec<i64> = m
            .write_stats()
            .filter(|s| matches_glob(s.partition_path.as_deref().unwrap_or_default(), glob))
            .map(|s| s.file_size_in_bytes.max(s.total_write_bytes))
            .collect();
        per_commit.push((i.timestamp.clone(), sizes));
    }
    per_commit.reverse();
    per_commit.truncate(limit(args, 10)?);
    let all: Vec<i64> = per_commit.iter().flat_map(|(_, s)| s.clone()).collect();
    per_commit.push(("ALL".into(), all));
    let stat = |f: &dyn Fn(&[i64]) -> f64| {
        per_commit
            .iter()
            .map(|(_, s)| f(s) as i64)
            .collect::<Vec<_>>()
    };
    Columns::new()
        .text(
            "commit_time",
            per_commit.iter().map(|(t, _)| Some(t.clone())).collect(),
        )
        .long("min", stat(&|s| percentile(s, 0.0)))
        .long("10th", stat(&|s| percentile(s, 0.1)))
        .long("50th", stat(&|s| percentile(s, 0.5)))
        .long(
            "avg",
            stat(&|s| {
                if s.is_empty() {
                    0.0
                } else {
                    s.iter().sum::<i64>() as f64 / s.len() as f64
                }
            }),
        )
        .long("95th", stat(&|s| percentile(s, 0.95)))
        .long("max", stat(&|s| percentile(s, 1.0)))
        .long(
            "num_files",
            per_commit.iter().map(|(_, s)| s.len() as i64).collect(),
        )
        .long("std_dev", stat(&std_dev))
        .frame(ctx)
}

/// The `q` quantile of `values` (nearest rank), 0 for none.
fn percentile(values: &[i64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_unstable();
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1] as f64
}

fn std_dev(values: &[i64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<i64>() as f64 / n;
    (values
        .iter()
        .map(|v| (*v as f64 - mean).powi(2))
        .sum::<f64>()
        / n)
        .sqrt()
}

/// `CALL stats_wa(table [, limit])`: per completed write, the records it wrote against the
/// records it updated (`write_amplification_factor`, `#.##`), then `Total`.
pub(super) async fn stats_wa(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    let timeline = table.timeline().await?;
    let mut rows: Vec<(String, i64, i64)> = Vec::new();
    for i in timeline.completed_writes() {
        let m = timeline.read_commit_metadata(table.storage(), i).await?;
        let upserted = m.write_stats().map(|s| s.num_update_writes).sum();
        let written = m.write_stats().map(|s| s.num_writes).sum();
        rows.push((i.timestamp.clone(), upserted, written));
    }
    rows.truncate(limit(args, 10)?);
    let (u, w) = rows.iter().fold((0, 0), |(u, w), r| (u + r.1, w + r.2));
    rows.push(("Total".into(), u, w));
    let waf = |u: i64, w: i64| {
        if u > 0 {
            let x = ((w as f64 / u as f64) * 100.0).round() / 100.0;
            format!("{x}")
        } else {
            "0".into()
        }
    };
    Columns::new()
        .text(
            "commit_time",
            rows.iter().map(|r| Some(r.0.clone())).collect(),
        )
        .long("total_upserted", rows.iter().map(|r| r.1).collect())
        .long("total_written", rows.iter().map(|r| r.2).collect())
        .text(
            "write_amplification_factor",
            rows.iter().map(|r| Some(waf(r.1, r.2))).collect(),
        )
        .frame(ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_globs_and_percentiles() {
        assert!(matches_glob("dt=1/hr=2", Some("*/*")));
        assert!(matches_glob("dt=1/hr=2", Some("dt=1/*")));
        assert!(matches_glob("dt=1", Some("ALL_PARTITIONS")));
        assert!(!matches_glob("dt=1", Some("*/*")));
        assert!(!matches_glob("dt=2", Some("dt=1")));
        assert!(matches_glob("dt=10", Some("dt=1*")));
        let v = [5, 1, 4, 2, 3];
        assert_eq!(
            (
                percentile(&v, 0.0),
                percentile(&v, 0.5),
                percentile(&v, 1.0)
            ),
            (1.0, 3.0, 5.0)
        );
        assert_eq!(percentile(&[], 0.5), 0.0);
        assert!((std_dev(&[2, 4, 4, 4, 5, 5, 7, 9]) - 2.0).abs() < 1e-9);
    }
}
