//! Rewriting `INSERT` into Hudi tables so DataFusion can plan it: positional inserts name the
//! data columns (the meta columns are filled by the writer), and a static
//! `PARTITION (dt = 'x')` clause becomes a column of the inserted rows.

use std::sync::Arc;

use datafusion::datasource::TableProvider;
use datafusion::prelude::SessionContext;
use std::ops::ControlFlow;

use sqlparser::ast::{
    BinaryOperator, Expr, Ident, Insert, ObjectName, Query, SelectItem, SetExpr, SetOperator,
    SetQuantifier, Statement, TableFactor, TableObject, TableWithJoins, VisitMut, VisitorMut,
};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

use crate::error::{HoodieError, InsertError, Result};
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
    let Some(target) = InsertTarget::of(&insert, ctx).await? else {
        return Ok((Statement::Insert(insert), InsertInfo::default()));
    };
    let static_parts = target.static_partitions(insert.partitioned.take().unwrap_or_default())?;
    let mut columns = target.columns(&insert, &static_parts)?;
    if let Some(source) = &mut insert.source {
        values_as_selects(source)?;
    }
    // Hudi/Spark's arity check for positional inserts: the data columns not given statically
    if let (true, Some(source)) = (insert.columns.is_empty(), &mut insert.source) {
        target
            .check_arity(ctx, source, &mut columns, !static_parts.is_empty())
            .await?;
    }
    if !static_parts.is_empty() {
        let source = insert
            .source
            .take()
            .ok_or_else(|| HoodieError::from(InsertError::NoSource))?;
        insert.source = Some(with_static_values(source, &static_parts)?);
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

/// The Hudi table an INSERT writes: its name as written and its data columns.
struct InsertTarget {
    name: String,
    data_columns: Vec<String>,
}

impl InsertTarget {
    /// The target of `insert` when it is a Hudi table (None: another table).
    async fn of(insert: &Insert, ctx: &SessionContext) -> Result<Option<Self>> {
        let TableObject::TableName(name) = &insert.table else {
            return Ok(None);
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
            return Ok(None);
        }
        Ok(Some(Self {
            name: table_name,
            data_columns: hoodie_format::schema::data_column_names(&provider.schema()),
        }))
    }

    /// The data column `n` names. Names were resolved before (exact spellings, or exactly as
    /// written when spark.sql.caseSensitive is on): an exact match first, then any case.
    fn find(&self, n: &str) -> Option<String> {
        let c = &self.data_columns;
        c.iter()
            .find(|c| *c == n)
            .or_else(|| c.iter().find(|c| c.eq_ignore_ascii_case(n)))
            .cloned()
    }

    fn unknown(&self, role: &'static str, column: &str) -> HoodieError {
        HoodieError::UnknownColumn {
            role,
            column: column.to_string(),
            table: self.name.clone(),
            columns: self.data_columns.join(", "),
        }
    }

    /// The static values of a `PARTITION (c = v, d)` clause (`d`, dynamic, takes its value
    /// from the rows), by column.
    fn static_partitions(&self, spec: Vec<Expr>) -> Result<Vec<(String, Expr)>> {
        let mut static_parts = Vec::new();
        for e in spec {
            match e {
                Expr::BinaryOp {
                    left,
                    op: BinaryOperator::Eq,
                    right,
                } => {
                    let col = match *left {
                        Expr::Identifier(i) => i.value,
                        other => {
                            return Err(InsertError::PartitionEntryNotAssignment {
                                entry: other.to_string(),
                            }
                            .into())
                        }
                    };
                    let col = self
                        .find(&col)
                        .ok_or_else(|| self.unknown("partition", &col))?;
                    static_parts.push((col, *right));
                }
                Expr::Identifier(_) => {}
                other => {
                    return Err(InsertError::UnsupportedPartitionEntry {
                        entry: other.to_string(),
                    }
                    .into())
                }
            }
        }
        Ok(static_parts)
    }

    /// The columns the rows of `insert` go to: its column list, else every data column but
    /// the static partition columns.
    fn columns(&self, insert: &Insert, static_parts: &[(String, Expr)]) -> Result<Vec<String>> {
        if insert.columns.is_empty() {
            return Ok(self
                .data_columns
                .iter()
                .filter(|c| !static_parts.iter().any(|(s, _)| s == *c))
                .cloned()
                .collect());
        }
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
                self.find(&n).ok_or_else(|| self.unknown("INSERT", &n))
            })
            .collect()
    }

    /// Hudi's arity check of a positional INSERT: `source` gives as many columns as
    /// `columns`. A SELECT that names every column it writes is mapped by name instead (Hudi):
    /// `columns` is reordered to its names.
    async fn check_arity(
        &self,
        ctx: &SessionContext,
        source: &mut Query,
        columns: &mut Vec<String>,
        static_parts: bool,
    ) -> Result<()> {
        let arity = match source.body.as_mut() {
            SetExpr::Values(v) => v.rows.first().map(|r| r.len()),
            body => {
                name_unnamed_expressions(body);
                let plan = ctx
                    .state()
                    .statement_to_plan(datafusion::sql::parser::Statement::Statement(Box::new(
                        Statement::Query(Box::new(source.clone())),
                    )))
                    .await?;
                let names: Vec<String> = plan
                    .schema()
                    .fields()
                    .iter()
                    .map(|f| f.name().clone())
                    .collect();
                if let Some(by_name) = by_name(&names, columns) {
                    *columns = by_name;
                }
                Some(names.len())
            }
        };
        let Some(arity) = arity.filter(|a| *a != columns.len()) else {
            return Ok(());
        };
        let expected = columns.len();
        Err(InsertError::ColumnCount {
            table: self.name.to_string(),
            columns: columns.to_vec(),
            expected,
            static_partitions: static_parts,
            given: arity,
        }
        .into())
    }
}

/// `source` with the static partition values as columns of its rows: in place for VALUES
/// (DataFusion types VALUES of an INSERT by the target columns), else as
/// `SELECT __hoodie_src.*, v AS "c" FROM (source) AS __hoodie_src`.
fn with_static_values(
    mut source: Box<Query>,
    static_parts: &[(String, Expr)],
) -> Result<Box<Query>> {
    if let SetExpr::Values(values) = source.body.as_mut() {
        for row in values.rows.iter_mut() {
            row.extend(static_parts.iter().map(|(_, e)| e.clone()));
        }
        return Ok(source);
    }
    // the shape from a constant text; the source goes in as it was parsed
    let mut q = parse_template("SELECT __hoodie_src.* FROM (SELECT 1) AS __hoodie_src")?;
    let SetExpr::Select(select) = q.body.as_mut() else {
        return Err(HoodieError::Internal {
            what: "the INSERT ... PARTITION template is not a SELECT",
        });
    };
    if let Some(TableWithJoins {
        relation: TableFactor::Derived { subquery, .. },
        ..
    }) = select.from.first_mut()
    {
        *subquery = source;
    }
    select
        .projection
        .extend(static_parts.iter().map(|(c, e)| SelectItem::ExprWithAlias {
            expr: e.clone(),
            alias: Ident::with_quote('"', c.clone()),
        }));
    Ok(Box::new(q))
}

/// A query parsed from constant text, as the skeleton of one built around parsed parts.
fn parse_template(sql: &str) -> Result<Query> {
    Parser::new(&GenericDialect {})
        .try_with_sql(sql)
        .and_then(|mut p| p.parse_query())
        .map(|q| *q)
        .map_err(|e| HoodieError::Parse {
            message: crate::error::parser_message(&e),
        })
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
            let selects = values.rows.iter().map(|row| {
                let items = row
                    .iter()
                    .enumerate()
                    .map(|(c, e)| SelectItem::ExprWithAlias {
                        expr: e.clone(),
                        alias: Ident::with_quote('"', format!("column{}", c + 1)),
                    })
                    .collect();
                select_of(items)
            });
            match selects.collect::<Result<Vec<_>>>() {
                Ok(selects) => {
                    if let Some(body) =
                        selects
                            .into_iter()
                            .reduce(|left, right| SetExpr::SetOperation {
                                left: Box::new(left),
                                op: SetOperator::Union,
                                set_quantifier: SetQuantifier::All,
                                right: Box::new(right),
                            })
                    {
                        *query.body = body;
                    }
                }
                Err(e) => {
                    self.0 = Some(e);
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

/// `SELECT items`, with nothing else.
fn select_of(items: Vec<SelectItem>) -> Result<SetExpr> {
    let mut q = parse_template("SELECT 1")?;
    match q.body.as_mut() {
        SetExpr::Select(select) => {
            select.projection = items;
            Ok(*q.body)
        }
        _ => Err(HoodieError::Internal {
            what: "the SELECT template is not a SELECT",
        }),
    }
}
