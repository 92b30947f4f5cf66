//! The procedures that repair a table: `rollback_to_instant` (undo the latest commit) and the
//! savepoints a risky job is started from (`create_savepoint`, `show_savepoints`,
//! `delete_savepoint`, `rollback_to_savepoint`), with Hudi 1.2's parameters and result columns.

use std::sync::Arc;

use datafusion::arrow::array::{BooleanArray, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use hoodie_format::client::TableServices;
use hoodie_format::{savepoint, HudiTable};

use super::{target, Args};
use crate::error::{HoodieError, ProcedureError, Result};

/// A one-row result of one boolean column `name`, `true`.
fn done(ctx: &SessionContext, name: &str) -> Result<DataFrame> {
    let schema = Schema::new(vec![Field::new(name, DataType::Boolean, false)]);
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        vec![Arc::new(BooleanArray::from(vec![true]))],
    )?;
    Ok(ctx.read_batch(batch)?)
}

/// The table services of the call's table under its concurrency settings.
fn services(ctx: &SessionContext, args: &Args, table: &HudiTable) -> Result<TableServices> {
    Ok(TableServices::new(
        table,
        super::concurrency(ctx, args, table)?,
    ))
}

fn instant<'a>(args: &'a Args, name: &str) -> &'a str {
    args.get(name).unwrap_or_default().trim()
}

/// `CALL rollback_to_instant(table, instant_time)`: rolls back the latest completed write.
pub(super) async fn rollback_to_instant(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    let t = instant(args, "instant_time");
    services(ctx, args, &table)?.rollback(t).await?;
    done(ctx, "rollback_result")
}

/// `CALL create_savepoint(table, commit_time [, user] [, comments])`.
pub(super) async fn create_savepoint(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    let user = args.get("user").unwrap_or_default();
    let comments = args.get("comments").unwrap_or_default();
    let commit = instant(args, "commit_time");
    let services = services(ctx, args, &table)?;
    services.create_savepoint(commit, user, comments).await?;
    done(ctx, "create_savepoint_result")
}

/// `CALL show_savepoints(table)`: `savepoint_time`, newest first.
pub(super) async fn show_savepoints(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    let mut times = savepoint::savepoints(&table.timeline().await?);
    times.reverse();
    let schema = Schema::new(vec![Field::new("savepoint_time", DataType::Utf8, false)]);
    let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(StringArray::from(times))])?;
    Ok(ctx.read_batch(batch)?)
}

/// `CALL delete_savepoint(table, instant_time)`.
pub(super) async fn delete_savepoint(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    let services = services(ctx, args, &table)?;
    services
        .delete_savepoint(instant(args, "instant_time"))
        .await?;
    done(ctx, "delete_savepoint_result")
}

/// `CALL rollback_to_savepoint(table, instant_time)`: restores the table to the savepoint.
pub(super) async fn rollback_to_savepoint(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    let services = services(ctx, args, &table)?;
    services
        .restore_to_savepoint(instant(args, "instant_time"))
        .await?;
    done(ctx, "rollback_savepoint_result")
}

/// `CALL upgrade_table(table, to_version)` and `downgrade_table` (one procedure in Hudi, which
/// moves the table either way): moves the table to version 6, 8 or 9 (`SIX`, `EIGHT`, `NINE`
/// or the number) as Hudi's upgrade and downgrade handlers do, then opens it again in the
/// session; `result` is true. What hoodie cannot carry over is refused with the reason (Hudi
/// logs it and returns false).
pub(super) async fn upgrade_table(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let table = target(ctx, args).await?;
    let given = args.get("to_version").unwrap_or_default();
    let to = hoodie_format::upgrade::parse_version(given).ok_or_else(|| {
        HoodieError::from(ProcedureError::BadValue {
            procedure: args.procedure.to_string(),
            argument: "to_version".into(),
            expected: "a table version (SIX, EIGHT, NINE or its number)",
            value: given.to_string(),
        })
    })?;
    let name = args.get("table");
    crate::sql::upgrade::upgrade_and_reopen(ctx, name, &table, to, super::call_options(ctx, args)?)
        .await?;
    done(ctx, "result")
}
