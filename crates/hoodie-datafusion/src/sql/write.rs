//! INSERT and MERGE in Hudi's dialect: names resolved as Spark resolves them, MERGE's
//! `UPDATE SET *` / `INSERT *` expanded, `INSERT OVERWRITE ... PARTITION (...)` planned as a
//! replacecommit of the named partitions.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::dataframe::DataFrame;
use datafusion::error::DataFusionError;
use datafusion::logical_expr::{Expr, Extension, LogicalPlan};
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DFStatement;
use sqlparser::ast::{Statement, TableFactor, TableObject};

use super::ddl::{hudi_table, table_provider};
use super::plan_statement;
use crate::dml::insert::{rewrite_insert, InsertInfo};
use crate::dml::write_node::HudiWriteNode;
use crate::error::{HoodieError, InsertError, Result, ValueDoesNotFit};
use crate::names::resolve_names;
use crate::options::write::SessionOptions;
use crate::provider::as_hudi;
use hoodie_format::write::WriteStatement;

/// `MERGE INTO` (or an EXPLAIN of one).
pub(super) async fn merge(
    ctx: &SessionContext,
    mut stmt: Statement,
    exact: bool,
) -> Result<DataFrame> {
    let merge = match &mut stmt {
        Statement::Explain { statement, .. } => &mut **statement,
        other => other,
    };
    // names first, so a subquery source plans; again for the expanded stars
    resolve_names(merge, ctx, exact).await?;
    expand_merge_stars(ctx, merge).await?;
    resolve_names(&mut stmt, ctx, exact).await?;
    plan_statement(ctx, stmt).await
}

/// `INSERT INTO | OVERWRITE` (or an EXPLAIN of one).
pub(super) async fn insert(
    ctx: &SessionContext,
    mut stmt: Statement,
    exact: bool,
) -> Result<DataFrame> {
    if matches!(stmt, Statement::Explain { .. }) {
        // boxed: inline, its state would grow every INSERT's future (and the stack polling it)
        return Box::pin(explain_insert(ctx, stmt, exact)).await;
    }
    resolve_names(&mut stmt, ctx, exact).await?;
    let (mut stmt, info) = rewrite_insert(stmt, ctx).await?;
    if info.hudi && info.overwrite && !info.static_values.is_empty() {
        return overwrite_partitions(ctx, &mut stmt, &info).await;
    }
    let target = match &stmt {
        Statement::Insert(i) => match &i.table {
            TableObject::TableName(name) => Some(crate::frontend::name_of(name)),
            _ => None,
        },
        _ => None,
    };
    let df = plan_statement(ctx, stmt).await?;
    check_value_casts(df.logical_plan())?;
    if let Some(target) = target.filter(|_| info.hudi && !info.overwrite) {
        warn_ignored_options(ctx, &target).await;
    }
    Ok(df)
}

/// `EXPLAIN [ANALYZE] INSERT ...`: the INSERT it explains rewritten as it would be run.
async fn explain_insert(
    ctx: &SessionContext,
    mut stmt: Statement,
    exact: bool,
) -> Result<DataFrame> {
    let Statement::Explain { statement, .. } = &mut stmt else {
        return Err(HoodieError::Internal {
            what: "an EXPLAIN INSERT that is not an EXPLAIN",
        });
    };
    let mut inner = (**statement).clone();
    resolve_names(&mut inner, ctx, exact).await?;
    let (inner, info) = rewrite_insert(inner, ctx).await?;
    if info.hudi && info.overwrite && !info.static_values.is_empty() {
        return Err(HoodieError::Unsupported {
            feature:
                "EXPLAIN of INSERT OVERWRITE ... PARTITION (its write is planned when it runs)"
                    .into(),
        });
    }
    **statement = inner;
    plan_statement(ctx, stmt).await
}

/// Warns of the session's options this INSERT will run without (a duplicate policy under
/// `bulk_insert`): Hudi ignores them silently.
async fn warn_ignored_options(ctx: &SessionContext, table: &str) {
    let Ok(provider) = hudi_table(ctx, table).await else {
        return;
    };
    let Some(hudi) = as_hudi(&provider) else {
        return;
    };
    let session = SessionOptions::of(ctx.state_ref().read().config_options());
    let Ok(spec) = hudi.write_spec(&session, WriteStatement::InsertInto) else {
        return;
    };
    let options = hudi.write_options(&session);
    for warning in hoodie_format::write::ignored_options(&options, &spec) {
        super::ddl::warn(ctx, warning);
    }
}

/// Refuses a literal (of `VALUES` or a `SELECT`) that cannot be cast to the type of the column
/// it is inserted into, naming the column: left to the optimizer, the failure would name only
/// its rule (`Optimizer rule 'simplify_expressions' failed: ... Cannot cast string 'x' ...`).
fn check_value_casts(plan: &LogicalPlan) -> Result<()> {
    let LogicalPlan::Dml(dml) = plan else {
        return Ok(());
    };
    let LogicalPlan::Projection(projection) = dml.input.as_ref() else {
        return Ok(());
    };
    let refuse = |value: &ScalarValue, column: &str, to: &DataType, e: DataFusionError| {
        HoodieError::ValueDoesNotFit(Box::new(ValueDoesNotFit {
            value: value.to_string(),
            column: column.to_string(),
            table: dml.table_name.to_string(),
            to: to.to_string(),
            detail: crate::error::df_message(&e),
        }))
    };
    for expr in &projection.expr {
        let Expr::Alias(alias) = expr else {
            continue;
        };
        match alias.expr.as_ref() {
            // INSERT ... SELECT: the cast is here, the literal below
            Expr::Cast(cast) => {
                let Expr::Column(source) = cast.expr.as_ref() else {
                    continue;
                };
                let to = cast.field.data_type();
                if let Some(value) = literal_below(&projection.input, &source.name) {
                    value
                        .cast_to(to)
                        .map_err(|e| refuse(&value, &alias.name, to, e))?;
                }
            }
            // INSERT ... VALUES: the rows hold the casts, the projection names them
            Expr::Column(source) => {
                let LogicalPlan::Values(values) = projection.input.as_ref() else {
                    continue;
                };
                let Ok(i) = values.schema.index_of_column(source) else {
                    continue;
                };
                for row in &values.values {
                    let Some(Expr::Cast(cast)) = row.get(i) else {
                        continue;
                    };
                    if let Expr::Literal(value, _) = cast.expr.as_ref() {
                        let to = cast.field.data_type();
                        value
                            .cast_to(to)
                            .map_err(|e| refuse(value, &alias.name, to, e))?;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The literal that column `name` of `plan` is, through projections that pass it on.
fn literal_below(plan: &LogicalPlan, name: &str) -> Option<ScalarValue> {
    let mut plan = plan;
    let mut name = name.to_string();
    while let LogicalPlan::Projection(p) = plan {
        let expr = p
            .expr
            .iter()
            .find(|e| e.schema_name().to_string() == name)?;
        match expr {
            Expr::Alias(a) => match a.expr.as_ref() {
                Expr::Literal(v, _) => return Some(v.clone()),
                Expr::Column(c) => name = c.name.clone(),
                _ => return None,
            },
            Expr::Column(c) => name = c.name.clone(),
            _ => return None,
        }
        plan = p.input.as_ref();
    }
    None
}

/// INSERT OVERWRITE ... PARTITION (...) into a Hudi table: DataFusion plans the rows (as an
/// INSERT INTO), hoodie writes them as a replacecommit of the named partitions.
async fn overwrite_partitions(
    ctx: &SessionContext,
    stmt: &mut Statement,
    info: &InsertInfo,
) -> Result<DataFrame> {
    let Statement::Insert(insert) = stmt else {
        return Err(HoodieError::Internal {
            what: "an INSERT OVERWRITE ... PARTITION that is not an INSERT",
        });
    };
    insert.overwrite = false;
    let TableObject::TableName(name) = &insert.table else {
        return Err(InsertError::TargetNotATable {
            statement: "INSERT OVERWRITE",
        }
        .into());
    };
    let table_name = crate::frontend::name_of(name);
    let provider = hudi_table(ctx, &table_name).await?;
    let hudi = as_hudi(&provider).ok_or_else(|| HoodieError::TableNotFound {
        name: table_name.clone(),
    })?;
    let (prefix, full) = hudi.static_partition_prefix(&info.static_values)?.unzip();
    let session = SessionOptions::of(ctx.state_ref().read().config_options());
    let statement = WriteStatement::InsertOverwrite {
        static_prefix: prefix,
        full_static: full.unwrap_or(false),
    };
    let mode = hudi.write_spec(&session, statement)?;
    let plan = ctx
        .state()
        .statement_to_plan(DFStatement::Statement(Box::new(stmt.clone())))
        .await?;
    let LogicalPlan::Dml(dml) = plan else {
        return Err(HoodieError::Internal {
            what: "an INSERT that did not plan as DML",
        });
    };
    let node = HudiWriteNode::new(
        table_name,
        provider.clone(),
        mode,
        Arc::unwrap_or_clone(dml.input),
    );
    let plan = LogicalPlan::Extension(Extension {
        node: Arc::new(node),
    });
    Ok(ctx.execute_logical_plan(plan).await?)
}

/// Expands `UPDATE SET *` / `INSERT *` of a MERGE by column name.
async fn expand_merge_stars(ctx: &SessionContext, stmt: &mut Statement) -> Result<()> {
    let Statement::Merge(m) = &*stmt else {
        return Ok(());
    };
    let TableFactor::Table { name, .. } = &m.table else {
        return Err(InsertError::TargetNotATable {
            statement: "MERGE INTO",
        }
        .into());
    };
    let target_name = crate::frontend::name_of(name);
    let target =
        table_provider(ctx, &target_name)
            .await?
            .ok_or_else(|| HoodieError::TableNotFound {
                name: target_name.clone(),
            })?;
    let target_columns = hoodie_format::schema::data_column_names(&target.schema());
    let source_columns: Vec<String> = match &m.source {
        TableFactor::Table { name, .. } => {
            let n = crate::frontend::name_of(name);
            let t = table_provider(ctx, &n)
                .await?
                .ok_or_else(|| HoodieError::TableNotFound { name: n.clone() })?;
            t.schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect()
        }
        // `AS s(c1, c2, ...)` names the columns
        TableFactor::Derived {
            alias: Some(alias), ..
        } if !alias.columns.is_empty() => {
            alias.columns.iter().map(|c| c.name.value.clone()).collect()
        }
        TableFactor::Derived { subquery, .. } => {
            let plan = ctx
                .state()
                .statement_to_plan(DFStatement::Statement(Box::new(Statement::Query(
                    subquery.clone(),
                ))))
                .await?;
            plan.schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect()
        }
        _ => vec![],
    };
    crate::frontend::merge::expand_stars(stmt, &target_columns, &source_columns)
}
