//! The walks over a statement: collecting the names it defines, then rewriting its identifiers.

use std::ops::ControlFlow;

use sqlparser::ast::{
    AssignmentTarget, Expr, FromTable, Ident, MergeAction, ObjectName, ObjectNamePart, Query,
    Select, SelectItem, SetExpr, Statement, TableAlias, TableFactor, TableObject, TableWithJoins,
    UpdateTableFromKind, Visit, VisitMut, Visitor, VisitorMut,
};

use super::Names;
use crate::error::{HoodieError, Result};

/// Adds the names `stmt` defines to `names`: `SELECT` aliases, derived-table and CTE column
/// lists (as names), table aliases and CTE names (as qualifiers).
pub(super) fn collect_defined(stmt: &Statement, names: &mut Names) {
    struct Defined<'a>(&'a mut Names);
    impl Defined<'_> {
        fn alias(&mut self, alias: &TableAlias, table: Option<&ObjectName>) {
            let table = table.map(crate::frontend::name_of);
            self.0.add_relation(&alias.name.value, table.as_deref());
            for c in &alias.columns {
                self.0.add_defined(&c.name.value);
            }
        }
    }
    impl Visitor for Defined<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<()> {
            for cte in query.with.iter().flat_map(|w| &w.cte_tables) {
                self.alias(&cte.alias, None);
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_select(&mut self, select: &Select) -> ControlFlow<()> {
            for item in &select.projection {
                if let SelectItem::ExprWithAlias { alias, .. } = item {
                    self.0.add_defined(&alias.value);
                }
            }
            ControlFlow::Continue(())
        }
        fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
            if let TableFactor::Derived {
                subquery,
                alias: Some(alias),
                ..
            } = factor
            {
                let columns: Vec<String> = if alias.columns.is_empty() {
                    output_names(self.0, subquery.body.as_ref())
                } else {
                    alias.columns.iter().map(|c| c.name.value.clone()).collect()
                };
                self.0.add_derived(&alias.name.value, &columns);
            }
            if let Some(alias) = factor_alias(factor) {
                let table = super::factor_reads(factor);
                self.alias(alias, table.as_ref());
            }
            ControlFlow::Continue(())
        }
    }
    let _ = Visit::visit(stmt, &mut Defined(names));
}

/// The names of a query's output columns that can be told from its text (the first SELECT of
/// a set operation names them); `*` and unnamed expressions are left out.
fn output_names(names: &Names, body: &SetExpr) -> Vec<String> {
    match body {
        SetExpr::Select(select) => select
            .projection
            .iter()
            .filter_map(|item| match item {
                SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.clone()),
                SelectItem::UnnamedExpr(Expr::Identifier(i)) => {
                    Some(names.output_name(i, None, &[from_scope(&select.from)]))
                }
                SelectItem::UnnamedExpr(Expr::CompoundIdentifier(parts)) => {
                    let table = (parts.len() == 2).then(|| parts[0].value.as_str());
                    parts.last().map(|i| names.output_name(i, table, &[]))
                }
                _ => None,
            })
            .collect(),
        SetExpr::SetOperation { left, .. } => output_names(names, left),
        SetExpr::Query(q) => output_names(names, q.body.as_ref()),
        SetExpr::Values(v) => (1..=v.rows.first().map_or(0, |r| r.len()))
            .map(|i| format!("column{i}"))
            .collect(),
        _ => Vec::new(),
    }
}

/// The relations a FROM list brings into scope, as [`Names`] keys them (an alias, or the table
/// name as DataFusion resolves it).
fn from_scope(from: &[TableWithJoins]) -> Vec<String> {
    let mut out = Vec::new();
    for t in from {
        factor_scope(&t.relation, &mut out);
        for j in &t.joins {
            factor_scope(&j.relation, &mut out);
        }
    }
    out
}

fn factor_scope(factor: &TableFactor, out: &mut Vec<String>) {
    match factor {
        TableFactor::NestedJoin {
            table_with_joins, ..
        } => out.extend(from_scope(std::slice::from_ref(table_with_joins))),
        _ => {
            if let Some(alias) = factor_alias(factor) {
                out.push(alias.name.value.to_ascii_lowercase());
            } else if let TableFactor::Table { name, .. } = factor {
                out.push(crate::frontend::name_of(name));
            }
        }
    }
}

/// The relations a DML statement itself brings into scope (its target and sources).
fn statement_scope(stmt: &Statement) -> Option<Vec<String>> {
    match stmt {
        Statement::Update(u) => {
            let mut scope = from_scope(std::slice::from_ref(&u.table));
            if let Some(UpdateTableFromKind::BeforeSet(f) | UpdateTableFromKind::AfterSet(f)) =
                &u.from
            {
                scope.extend(from_scope(f));
            }
            Some(scope)
        }
        Statement::Delete(d) => match &d.from {
            FromTable::WithFromKeyword(f) | FromTable::WithoutKeyword(f) => Some(from_scope(f)),
        },
        Statement::Merge(m) => {
            let mut scope = Vec::new();
            factor_scope(&m.table, &mut scope);
            factor_scope(&m.source, &mut scope);
            Some(scope)
        }
        _ => None,
    }
}

/// The alias of a table factor (`$alias` is `alias.as_ref()` or `alias.as_mut()`).
macro_rules! factor_alias {
    ($factor:expr, $as:ident) => {
        match $factor {
            TableFactor::Table { alias, .. }
            | TableFactor::Derived { alias, .. }
            | TableFactor::TableFunction { alias, .. }
            | TableFactor::Function { alias, .. }
            | TableFactor::UNNEST { alias, .. }
            | TableFactor::NestedJoin { alias, .. } => alias.$as(),
            _ => None,
        }
    };
}

fn factor_alias(factor: &TableFactor) -> Option<&TableAlias> {
    factor_alias!(factor, as_ref)
}

fn factor_alias_mut(factor: &mut TableFactor) -> Option<&mut TableAlias> {
    factor_alias!(factor, as_mut)
}

/// Rewrites the identifiers of `stmt` that name columns to their exact spelling; names the
/// statement defines keep the spelling they are written with.
pub(super) fn rewrite_statement(stmt: &mut Statement, names: &Names) -> Result<()> {
    let mut rewriter = Rewriter {
        names,
        scopes: Vec::new(),
        statement_scopes: Vec::new(),
    };
    match VisitMut::visit(stmt, &mut rewriter) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

struct Rewriter<'a> {
    names: &'a Names,
    /// The relations of each enclosing FROM (and DML statement), innermost last.
    scopes: Vec<Vec<String>>,
    /// Whether each statement visited pushed a scope.
    statement_scopes: Vec<bool>,
}

/// An alias as written, quoted, so DataFusion keeps its spelling as Spark does.
fn keep_spelling(ident: &mut Ident) {
    if ident.quote_style.is_none() {
        ident.quote_style = Some('"');
    }
}

impl Rewriter<'_> {
    fn ident(&self, ident: &mut Ident, table: Option<&str>) -> Result<()> {
        if let Some(exact) = self.names.exact(ident, table, &self.scopes)? {
            *ident = exact;
        }
        Ok(())
    }

    /// A column reference of parts: a leading relation name or alias is a qualifier, left as
    /// it is, and the column after it is looked up in its table; the other parts name columns or
    /// nested fields. `table` is the table an unqualified column belongs to, if known.
    fn parts<'i>(
        &self,
        parts: impl Iterator<Item = &'i mut Ident>,
        table: Option<&str>,
    ) -> Result<()> {
        let mut parts: Vec<&mut Ident> = parts.collect();
        let last = parts.len().saturating_sub(1);
        let mut qualifier: Option<String> = None;
        for (i, part) in parts.iter_mut().enumerate() {
            if i < last && i == 0 && self.names.is_relation(part) {
                qualifier = Some(part.value.clone());
                continue;
            }
            let in_table = match (i, &qualifier) {
                (1, Some(q)) => Some(q.as_str()),
                (0, None) => table,
                _ => None,
            };
            self.ident(part, in_table)?;
        }
        Ok(())
    }

    fn object_name(&self, name: &mut ObjectName, table: Option<&str>) -> Result<()> {
        self.parts(
            name.0.iter_mut().filter_map(|p| match p {
                ObjectNamePart::Identifier(i) => Some(i),
                _ => None,
            }),
            table,
        )
    }

    fn target(&self, target: &mut AssignmentTarget, table: Option<&str>) -> Result<()> {
        match target {
            AssignmentTarget::ColumnName(n) => self.object_name(n, table),
            AssignmentTarget::Tuple(ns) => {
                ns.iter_mut().try_for_each(|n| self.object_name(n, table))
            }
        }
    }

    /// The columns a DML statement names in its target: INSERT's column list, UPDATE's and
    /// MERGE's assignment targets, MERGE's INSERT column lists, each looked up in the target.
    fn statement(&self, stmt: &mut Statement) -> Result<()> {
        match stmt {
            Statement::Insert(insert) => {
                let target = match &insert.table {
                    TableObject::TableName(n) => Some(crate::frontend::name_of(n)),
                    _ => None,
                };
                insert
                    .columns
                    .iter_mut()
                    .try_for_each(|c| self.object_name(c, target.as_deref()))
            }
            Statement::Update(update) => {
                let target = factor_table(&update.table.relation);
                update
                    .assignments
                    .iter_mut()
                    .try_for_each(|a| self.target(&mut a.target, target.as_deref()))
            }
            Statement::Merge(merge) => {
                let target = factor_table(&merge.table);
                for clause in &mut merge.clauses {
                    match &mut clause.action {
                        MergeAction::Update(u) => {
                            for a in &mut u.assignments {
                                self.target(&mut a.target, target.as_deref())?;
                            }
                        }
                        MergeAction::Insert(i) => {
                            for c in &mut i.columns {
                                self.object_name(c, target.as_deref())?;
                            }
                        }
                        MergeAction::Delete { .. } => {}
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// The table a table factor reads, as DataFusion names it.
fn factor_table(factor: &TableFactor) -> Option<String> {
    match factor {
        TableFactor::Table { name, .. } => Some(crate::frontend::name_of(name)),
        _ => None,
    }
}

fn flow(r: Result<()>) -> ControlFlow<HoodieError> {
    match r {
        Ok(()) => ControlFlow::Continue(()),
        Err(e) => ControlFlow::Break(e),
    }
}

impl VisitorMut for Rewriter<'_> {
    type Break = HoodieError;

    fn pre_visit_statement(&mut self, stmt: &mut Statement) -> ControlFlow<HoodieError> {
        let scope = statement_scope(stmt);
        self.statement_scopes.push(scope.is_some());
        self.scopes.extend(scope);
        flow(self.statement(stmt))
    }

    fn post_visit_statement(&mut self, _: &mut Statement) -> ControlFlow<HoodieError> {
        if self.statement_scopes.pop() == Some(true) {
            self.scopes.pop();
        }
        ControlFlow::Continue(())
    }

    fn post_visit_select(&mut self, _: &mut Select) -> ControlFlow<HoodieError> {
        self.scopes.pop();
        ControlFlow::Continue(())
    }

    fn pre_visit_query(&mut self, query: &mut Query) -> ControlFlow<HoodieError> {
        for cte in query.with.iter_mut().flat_map(|w| &mut w.cte_tables) {
            cte.alias
                .columns
                .iter_mut()
                .for_each(|c| keep_spelling(&mut c.name));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, select: &mut Select) -> ControlFlow<HoodieError> {
        self.scopes.push(from_scope(&select.from));
        for item in &mut select.projection {
            if let SelectItem::ExprWithAlias { alias, .. } = item {
                keep_spelling(alias);
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<HoodieError> {
        if let Some(alias) = factor_alias_mut(factor) {
            alias
                .columns
                .iter_mut()
                .for_each(|c| keep_spelling(&mut c.name));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &mut Expr) -> ControlFlow<HoodieError> {
        flow(match expr {
            Expr::Identifier(ident) => self.ident(ident, None),
            Expr::CompoundIdentifier(parts) => self.parts(parts.iter_mut(), None),
            _ => Ok(()),
        })
    }
}
