//! Rewriting `INSERT` into Hudi tables so DataFusion can plan it: positional inserts name the
//! data columns (the meta columns are filled by the writer), and a static
//! `PARTITION (dt = 'x')` clause becomes a column of the inserted rows.

use std::sync::Arc;

use datafusion::datasource::TableProvider;
use datafusion::prelude::SessionContext;
use std::ops::ControlFlow;

use sqlparser::ast::{
    BinaryOperator, Expr, Ident, ObjectName, Query, SelectItem, SetExpr, Statement, TableObject,
    VisitMut, VisitorMut,
};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

use crate::error::{HoodieError, Result};
use crate::provider::as_hudi;

/// What the rewrite learned about an INSERT.
#[derive(Debug, Clone, Default)]
pub struct InsertInfo {
    /// The target is a Hudi table.
    pub hudi: bool,
    /// INSERT OVERWRITE.
    pub overwrite: bool,
    /// Static partition values of a `PARTITION (col = value)` clause, as text.
    pub static_values: Vec<(String, String)>,
}

fn literal_text(e: &Expr) -> String {
    match e {
        Expr::Value(v) => match &v.value {
            sqlparser::ast::Value::SingleQuotedString(s)
            | sqlparser::ast::Value::DoubleQuotedString(s) => s.clone(),
            other => other.to_string(),
        },
        Expr::TypedString(t) => match &t.value.value {
            sqlparser::ast::Value::SingleQuotedString(s)
            | sqlparser::ast::Value::DoubleQuotedString(s) => s.clone(),
            other => other.to_string(),
        },
        other => other.to_string(),
    }
}

/// Rewrites `stmt` if it inserts into a Hudi table; returns other statements unchanged.
pub async fn rewrite_insert(
    stmt: Statement,
    ctx: &SessionContext,
) -> Result<(Statement, InsertInfo)> {
    let Statement::Insert(mut insert) = stmt else {
        return Ok((stmt, InsertInfo::default()));
    };
    let TableObject::TableName(name) = &insert.table else {
        return Ok((Statement::Insert(insert), InsertInfo::default()));
    };
    let table_name = name.to_string();
    let lookup_name = crate::frontend::name_of(name);
    let reference = crate::frontend::exact_table_ref(&lookup_name);
    let provider: Arc<dyn TableProvider> = match ctx.table_provider(reference.clone()).await {
        Ok(p) => p,
        // a table that is there but cannot be opened says why
        Err(e) if ctx.table_exist(reference).unwrap_or(false) => return Err(e.into()),
        Err(_) => return Err(HoodieError::TableNotFound { name: table_name }),
    };
    if as_hudi(&provider).is_none() {
        return Ok((Statement::Insert(insert), InsertInfo::default()));
    }
    let schema = provider.schema();
    let data_columns = hoodie_format::schema::data_column_names(&schema);
    // names were resolved before (exact spellings, or exactly as written when
    // spark.sql.caseSensitive is on): an exact match first, then any case
    let find = |n: &str| {
        data_columns
            .iter()
            .find(|c| *c == n)
            .or_else(|| data_columns.iter().find(|c| c.eq_ignore_ascii_case(n)))
            .cloned()
    };
    // static partition values
    let mut static_parts: Vec<(String, Expr)> = Vec::new();
    let mut dynamic_parts: Vec<String> = Vec::new();
    for e in insert.partitioned.take().unwrap_or_default() {
        match e {
            Expr::BinaryOp {
                left,
                op: BinaryOperator::Eq,
                right,
            } => {
                let col = match *left {
                    Expr::Identifier(i) => i.value,
                    other => {
                        return Err(HoodieError::Invalid {
                            message: format!(
                                "PARTITION spec entries must be column = value, found {other}"
                            ),
                        })
                    }
                };
                let col = find(&col).ok_or_else(|| HoodieError::UnknownColumn {
                    role: "partition",
                    column: col.clone(),
                    table: table_name.clone(),
                    columns: data_columns.join(", "),
                })?;
                static_parts.push((col, *right));
            }
            Expr::Identifier(i) => dynamic_parts.push(find(&i.value).unwrap_or(i.value)),
            other => {
                return Err(HoodieError::Invalid {
                    message: format!("unsupported PARTITION spec entry {other}"),
                })
            }
        }
    }
    let mut columns: Vec<String> = if insert.columns.is_empty() {
        data_columns
            .iter()
            .filter(|c| !static_parts.iter().any(|(s, _)| s == *c))
            .cloned()
            .collect()
    } else {
        insert
            .columns
            .iter()
            .map(|c| {
                // the name as written, whatever its quotes (`"a"`, `` `a` ``)
                let n =
                    c.0.last()
                        .and_then(|p| p.as_ident())
                        .map(|i| i.value.clone())
                        .unwrap_or_else(|| c.to_string());
                let n = n.as_str();
                find(n).ok_or_else(|| HoodieError::UnknownColumn {
                    role: "INSERT",
                    column: n.to_string(),
                    table: table_name.clone(),
                    columns: data_columns.join(", "),
                })
            })
            .collect::<Result<_>>()?
    };
    let _ = dynamic_parts;
    if let Some(source) = &mut insert.source {
        values_as_selects(source)?;
    }
    // Hudi/Spark's arity check for positional inserts: the data columns not given statically
    if insert.columns.is_empty() {
        if let Some(source) = &mut insert.source {
            let arity = match source.body.as_mut() {
                SetExpr::Values(v) => v.rows.first().map(|r| r.len()),
                body => {
                    name_unnamed_expressions(body);
                    let plan = ctx
                        .state()
                        .statement_to_plan(datafusion::sql::parser::Statement::Statement(Box::new(
                            Statement::Query(source.clone()),
                        )))
                        .await?;
                    let names: Vec<String> = plan
                        .schema()
                        .fields()
                        .iter()
                        .map(|f| f.name().clone())
                        .collect();
                    // a SELECT that names every column it writes is mapped by name (Hudi)
                    if let Some(by_name) = by_name(&names, &columns) {
                        columns = by_name;
                    }
                    Some(names.len())
                }
            };
            if let Some(arity) = arity {
                let (expected, reason) = (
                    columns.len(),
                    if arity > columns.len() {
                        "too many data columns"
                    } else {
                        "not enough data columns"
                    },
                );
                if arity != expected {
                    return Err(HoodieError::Invalid {
                        message: format!(
                            "Cannot write to {table_name}, the reason is {reason}: table columns: {} ({expected}{}), data columns: {arity}",
                            columns.join(", "),
                            if static_parts.is_empty() { String::new() } else { ", not counting static partition columns".to_string() }
                        ),
                    });
                }
            }
        }
    }
    if !static_parts.is_empty() {
        let mut source = insert.source.take().ok_or_else(|| HoodieError::Invalid {
            message: "INSERT ... PARTITION needs VALUES or a SELECT".into(),
        })?;
        if let SetExpr::Values(values) = source.body.as_mut() {
            // DataFusion types VALUES of an INSERT by the target columns: extend the rows in place
            for row in values.rows.iter_mut() {
                row.extend(static_parts.iter().map(|(_, e)| e.clone()));
            }
            insert.source = Some(source);
        } else {
            let extra: Vec<String> = static_parts
                .iter()
                .map(|(c, e)| format!("{e} AS \"{c}\""))
                .collect();
            let sql = format!(
                "SELECT __hoodie_src.*, {} FROM ({source}) AS __hoodie_src",
                extra.join(", ")
            );
            let q = Parser::new(&GenericDialect {})
                .try_with_sql(&sql)
                .and_then(|mut p| p.parse_query())
                .map_err(|e| HoodieError::Parse {
                    message: crate::error::parser_message(&e),
                })?;
            insert.source = Some(q);
        }
        columns.extend(static_parts.iter().map(|(c, _)| c.clone()));
    }
    insert.columns = columns
        .into_iter()
        .map(|c| ObjectName::from(vec![Ident::with_quote('"', c)]))
        .collect();
    let info = InsertInfo {
        hudi: true,
        overwrite: insert.overwrite,
        static_values: static_parts
            .iter()
            .map(|(c, e)| (c.clone(), literal_text(e)))
            .collect(),
    };
    Ok((Statement::Insert(insert), info))
}

/// The table columns `names` stand for, in their order, if they are exactly `columns` up to
/// order and case; `None` means the SELECT is mapped by position.
fn by_name(names: &[String], columns: &[String]) -> Option<Vec<String>> {
    if names.len() != columns.len() {
        return None;
    }
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for n in names {
        let c = columns.iter().find(|c| c.eq_ignore_ascii_case(n))?;
        if out.contains(c) {
            return None;
        }
        out.push(c.clone());
    }
    Some(out)
}

/// Gives each unaliased expression of a SELECT's projection that is not a column a name of its
/// own, so that repeated literals (`SELECT 1, 'a', 1`) plan; such a SELECT is mapped by position.
fn name_unnamed_expressions(body: &mut SetExpr) {
    let SetExpr::Select(select) = body else {
        return;
    };
    for (i, item) in select.projection.iter_mut().enumerate() {
        if let SelectItem::UnnamedExpr(e) = item {
            if !matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) {
                *item = SelectItem::ExprWithAlias {
                    expr: e.clone(),
                    alias: Ident::with_quote('"', format!("__hoodie_col_{}", i + 1)),
                };
            }
        }
    }
}

/// Rewrites every `VALUES` list nested in an INSERT's query source (`SELECT ... FROM (VALUES
/// ...) AS s(a, b)`) as `SELECT ... UNION ALL SELECT ...`. DataFusion types every VALUES list
/// of an INSERT's source by the target's columns, positionally, which is right only for the
/// INSERT's own VALUES: a nested list would be cast to the target's column types column by
/// column, whatever the SELECT makes of it.
fn values_as_selects(source: &mut Query) -> Result<()> {
    struct Nested(Option<HoodieError>);
    impl VisitorMut for Nested {
        type Break = ();
        fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<()> {
            let SetExpr::Values(values) = query.body.as_ref() else {
                return ControlFlow::Continue(());
            };
            let mut sql = String::new();
            for (r, row) in values.rows.iter().enumerate() {
                if r > 0 {
                    sql.push_str(" UNION ALL ");
                }
                let cells: Vec<String> = row
                    .iter()
                    .enumerate()
                    .map(|(c, e)| format!("{e} AS \"column{}\"", c + 1))
                    .collect();
                sql.push_str(&format!("SELECT {}", cells.join(", ")));
            }
            match Parser::new(&GenericDialect {})
                .try_with_sql(&sql)
                .and_then(|mut p| p.parse_query())
            {
                Ok(q) => query.body = q.body,
                Err(e) => {
                    self.0 = Some(HoodieError::Parse {
                        message: e.to_string(),
                    });
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut nested = Nested(None);
    // the source's own body is not nested: only the queries inside it are visited
    if let SetExpr::Values(_) = source.body.as_ref() {
        return Ok(());
    }
    let _ = VisitMut::visit(source.body.as_mut(), &mut nested);
    nested.0.map_or(Ok(()), Err)
}
