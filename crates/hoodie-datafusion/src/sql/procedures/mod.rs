//! `CALL` procedures, with Hudi's names, parameters (named `p => v` or by position) and result
//! columns. An unknown procedure or parameter is an error that lists what exists.

mod archive;
mod clean;
mod commits;
mod compaction;
mod fs_path;
mod repair;
mod views;

use std::collections::HashMap;

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use hoodie_format::HudiTable;

use crate::error::{HoodieError, ProcedureError, Result};
use crate::frontend::procedure::ProcedureCall;
use crate::options::write::SessionOptions;
use crate::provider::as_hudi;

/// One parameter of a procedure.
pub(super) struct Param {
    name: &'static str,
    required: bool,
}

const fn opt(name: &'static str) -> Param {
    Param {
        name,
        required: false,
    }
}

const fn req(name: &'static str) -> Param {
    Param {
        name,
        required: true,
    }
}

const FSVIEW_ALL: &[Param] = &[
    opt("table"),
    opt("max_instant"),
    opt("include_max"),
    opt("include_in_flight"),
    opt("exclude_compaction"),
    opt("limit"),
    opt("path_regex"),
    opt("path"),
];

const ARCHIVED_COMMITS: &[Param] = &[
    opt("table"),
    opt("limit"),
    opt("start_ts"),
    opt("end_ts"),
    opt("path"),
];

/// The procedures, each with its parameters in Hudi's order (the positions of positional
/// arguments).
const PROCEDURES: &[(&str, &[Param])] = &[
    (
        "run_compaction",
        &[
            req("op"),
            opt("table"),
            opt("path"),
            opt("timestamp"),
            opt("options"),
            opt("instants"),
            opt("limit"),
        ],
    ),
    (
        "show_compaction",
        &[
            opt("table"),
            opt("path"),
            opt("limit"),
            opt("showarchived"),
            opt("filter"),
            opt("starttime"),
            opt("endtime"),
        ],
    ),
    ("show_commits", &[opt("table"), opt("limit"), opt("path")]),
    (
        "show_commits_metadata",
        &[opt("table"), opt("limit"), opt("path")],
    ),
    (
        "show_table_properties",
        &[opt("table"), opt("path"), opt("limit")],
    ),
    (
        "show_commit_files",
        &[opt("table"), opt("limit"), req("instant_time"), opt("path")],
    ),
    (
        "run_clean",
        &[
            opt("table"),
            opt("schedule_in_line"),
            opt("clean_policy"),
            opt("retain_commits"),
            opt("hours_retained"),
            opt("file_versions_retained"),
            opt("trigger_strategy"),
            opt("trigger_max_commits"),
            opt("options"),
            opt("path"),
        ],
    ),
    (
        "show_cleans",
        &[
            opt("table"),
            opt("limit"),
            opt("showarchived"),
            opt("filter"),
            opt("path"),
        ],
    ),
    ("upgrade_table", &[req("table"), req("to_version")]),
    ("downgrade_table", &[req("table"), req("to_version")]),
    (
        "rollback_to_instant",
        &[opt("table"), req("instant_time"), opt("path")],
    ),
    (
        "create_savepoint",
        &[
            opt("table"),
            req("commit_time"),
            opt("user"),
            opt("comments"),
            opt("path"),
        ],
    ),
    ("show_savepoints", &[opt("table"), opt("path")]),
    (
        "delete_savepoint",
        &[opt("table"), req("instant_time"), opt("path")],
    ),
    (
        "rollback_to_savepoint",
        &[opt("table"), req("instant_time"), opt("path")],
    ),
    (
        "show_timeline",
        &[
            opt("table"),
            opt("path"),
            opt("limit"),
            opt("showarchived"),
            opt("filter"),
            opt("starttime"),
            opt("endtime"),
        ],
    ),
    ("show_fsview_all", FSVIEW_ALL),
    ("show_file_system_view", FSVIEW_ALL),
    (
        "show_fsview_latest",
        &[
            opt("table"),
            opt("max_instant"),
            opt("include_max"),
            opt("include_in_flight"),
            opt("exclude_compaction"),
            opt("path_regex"),
            opt("partition_path"),
            opt("merge"),
            opt("path"),
        ],
    ),
    (
        "stats_file_sizes",
        &[
            opt("table"),
            opt("partition_path"),
            opt("limit"),
            opt("path"),
        ],
    ),
    ("stats_wa", &[opt("table"), opt("limit"), opt("path")]),
    (
        "archive_commits",
        &[
            opt("table"),
            opt("path"),
            opt("min_commits"),
            opt("max_commits"),
            opt("retain_commits"),
            opt("enable_metadata"),
        ],
    ),
    ("show_archived_commits", ARCHIVED_COMMITS),
    (
        "show_fs_path_detail",
        &[req("path"), opt("is_sub"), opt("sort"), opt("limit")],
    ),
    ("show_archived_commits_metadata", ARCHIVED_COMMITS),
    ("help", &[opt("cmd")]),
];

/// A call's arguments by parameter name.
pub(super) struct Args {
    procedure: &'static str,
    values: HashMap<&'static str, String>,
}

impl Args {
    /// The value of parameter `name`, if given.
    pub(super) fn get(&self, name: &str) -> Option<&str> {
        self.values
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// A whole-number argument.
    pub(super) fn number(&self, name: &str) -> Result<Option<i64>> {
        self.get(name)
            .map(|v| {
                v.trim().parse::<i64>().map_err(|_| {
                    HoodieError::from(ProcedureError::BadValue {
                        procedure: self.procedure.to_string(),
                        argument: name.to_string(),
                        expected: "a number",
                        value: v.to_string(),
                    })
                })
            })
            .transpose()
    }
}

/// Matches a call's arguments to the procedure's parameters.
fn bind(call: &ProcedureCall) -> Result<Args> {
    let Some((procedure, params)) = PROCEDURES.iter().find(|(n, _)| *n == call.name) else {
        let names: Vec<&str> = PROCEDURES.iter().map(|(n, _)| *n).collect();
        return Err(ProcedureError::NoSuchProcedure {
            name: call.name.to_string(),
            known: names.iter().map(|n| n.to_string()).collect(),
        }
        .into());
    };
    let list = || params.iter().map(|p| p.name).collect::<Vec<_>>().join(", ");
    let mut values: HashMap<&'static str, String> = HashMap::new();
    for (i, (name, value)) in call.args.iter().enumerate() {
        let param = match name {
            Some(n) => params
                .iter()
                .find(|p| p.name.eq_ignore_ascii_case(n))
                .ok_or_else(|| {
                    HoodieError::from(ProcedureError::NoSuchParameter {
                        procedure: procedure.to_string(),
                        argument: n.to_string(),
                        parameters: list(),
                    })
                })?,
            None => params.get(i).ok_or_else(|| {
                HoodieError::from(ProcedureError::TooManyArguments {
                    procedure: procedure.to_string(),
                    count: params.len(),
                    parameters: list(),
                })
            })?,
        };
        if values.insert(param.name, value.clone()).is_some() {
            return Err(ProcedureError::GivenTwice {
                procedure: procedure.to_string(),
                argument: param.name.to_string(),
            }
            .into());
        }
    }
    if let Some(p) = params
        .iter()
        .find(|p| p.required && !values.contains_key(p.name))
    {
        return Err(ProcedureError::MissingArgument {
            procedure: procedure.to_string(),
            argument: p.name.to_string(),
            parameters: list(),
        }
        .into());
    }
    Ok(Args { procedure, values })
}

/// Runs a procedure call. The procedures that change the timeline do so through
/// [`TableServices`](hoodie_format::client::TableServices), which takes the table lock under
/// optimistic concurrency control.
pub(super) async fn call(ctx: &SessionContext, call: ProcedureCall) -> Result<DataFrame> {
    run(ctx, &bind(&call)?).await
}

/// The concurrency settings a call on `table` sees: the table's properties, the session's
/// options and the call's `options`.
pub(super) fn concurrency(
    ctx: &SessionContext,
    args: &Args,
    table: &HudiTable,
) -> Result<hoodie_format::concurrency::ConcurrencySpec> {
    let options = hoodie_format::write::WriteOptions::new(call_options(ctx, args)?, table.config());
    Ok(hoodie_format::concurrency::ConcurrencySpec::resolve(|k| {
        options.get(k)
    })?)
}

async fn run(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    match args.procedure {
        "run_compaction" => compaction::run_compaction(ctx, args).await,
        "show_compaction" => compaction::show_compaction(ctx, args).await,
        "show_commits" => commits::show_commits(ctx, args).await,
        "show_commits_metadata" => commits::show_commits_metadata(ctx, args).await,
        "show_table_properties" => commits::show_table_properties(ctx, args).await,
        "show_commit_files" => commits::show_commit_files(ctx, args).await,
        "run_clean" => clean::run_clean(ctx, args).await,
        "show_cleans" => clean::show_cleans(ctx, args).await,
        "rollback_to_instant" => repair::rollback_to_instant(ctx, args).await,
        "upgrade_table" | "downgrade_table" => repair::upgrade_table(ctx, args).await,
        "create_savepoint" => repair::create_savepoint(ctx, args).await,
        "show_savepoints" => repair::show_savepoints(ctx, args).await,
        "delete_savepoint" => repair::delete_savepoint(ctx, args).await,
        "rollback_to_savepoint" => repair::rollback_to_savepoint(ctx, args).await,
        "show_timeline" => views::show_timeline(ctx, args).await,
        "show_fsview_all" | "show_file_system_view" => views::show_fsview_all(ctx, args).await,
        "show_fsview_latest" => views::show_fsview_latest(ctx, args).await,
        "stats_file_sizes" => views::stats_file_sizes(ctx, args).await,
        "stats_wa" => views::stats_wa(ctx, args).await,
        "archive_commits" => archive::archive_commits(ctx, args).await,
        "show_archived_commits" => archive::show_archived_commits(ctx, args).await,
        "show_archived_commits_metadata" => {
            archive::show_archived_commits_metadata(ctx, args).await
        }
        "show_fs_path_detail" => fs_path::show_fs_path_detail(ctx, args).await,
        "help" => help(ctx, args),
        other => unreachable!("procedure {other} is listed but not run"),
    }
}

/// The session's options with the call's `options => 'k1=v1,k2=v2'` over them.
pub(super) fn call_options(
    ctx: &SessionContext,
    args: &Args,
) -> Result<std::collections::BTreeMap<String, String>> {
    let session = SessionOptions::of(ctx.state_ref().read().config_options());
    let mut all = session.all().clone();
    for pair in args.get("options").unwrap_or_default().split(',') {
        if pair.trim().is_empty() {
            continue;
        }
        let (k, v) = pair.split_once('=').ok_or_else(|| {
            HoodieError::from(ProcedureError::BadOptions {
                procedure: args.procedure.to_string(),
                pair: pair.to_string(),
            })
        })?;
        all.insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(all)
}

/// The table a call names (`table => 'name'` or `path => '...'`).
pub(super) async fn target(ctx: &SessionContext, args: &Args) -> Result<HudiTable> {
    match (args.get("table"), args.get("path")) {
        (Some(name), _) => {
            let t = super::ddl::hudi_table(ctx, name).await?;
            Ok(as_hudi(&t).expect("a Hudi table").table().clone())
        }
        (None, Some(path)) => {
            let session =
                crate::options::session::storage_options(ctx.state_ref().read().config_options());
            Ok(crate::ddl::factory::open_or_create(path, None, &session)
                .await?
                .0
                .table()
                .clone())
        }
        (None, None) => Err(ProcedureError::NoTarget {
            procedure: args.procedure.to_string(),
        }
        .into()),
    }
}

/// `CALL help([cmd => '<procedure>'])`: every procedure with its parameters (required ones
/// marked), or one procedure's.
fn help(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    use datafusion::arrow::array::{RecordBatch, StringArray};
    use datafusion::arrow::datatypes::{DataType, Field, Schema};
    let wanted = args.get("cmd").map(str::to_ascii_lowercase);
    if let Some(w) = &wanted {
        if !PROCEDURES.iter().any(|(n, _)| n == w) {
            let names: Vec<&str> = PROCEDURES.iter().map(|(n, _)| *n).collect();
            return Err(ProcedureError::NoSuchProcedure {
                name: w.to_string(),
                known: names.iter().map(|n| n.to_string()).collect(),
            }
            .into());
        }
    }
    let (mut names, mut params) = (Vec::new(), Vec::new());
    for (name, ps) in PROCEDURES {
        if wanted.as_deref().is_some_and(|w| w != *name) {
            continue;
        }
        names.push(*name);
        let list: Vec<String> = ps
            .iter()
            .map(|p| {
                if p.required {
                    format!("{} (required)", p.name)
                } else {
                    p.name.to_string()
                }
            })
            .collect();
        params.push(list.join(", "));
    }
    let schema = Schema::new(vec![
        Field::new("procedure", DataType::Utf8, false),
        Field::new("parameters", DataType::Utf8, false),
    ]);
    let batch = RecordBatch::try_new(
        std::sync::Arc::new(schema),
        vec![
            std::sync::Arc::new(StringArray::from(names)),
            std::sync::Arc::new(StringArray::from(params)),
        ],
    )?;
    Ok(ctx.read_batch(batch)?)
}
