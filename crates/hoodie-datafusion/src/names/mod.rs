//! Name resolution as Spark does it: identifiers match column names case-insensitively
//! (`spark.sql.caseSensitive = false`, the default), while the declared spelling is kept in the
//! schema, the files and result column names.
//!
//! DataFusion lower-cases unquoted identifiers and then matches exactly, so `isActive` finds no
//! column `isActive`. Before a statement is planned, [`resolve_names`] rewrites every identifier
//! that names a column of a table the statement reads or writes (or a name the statement itself
//! defines: a `SELECT` alias, a derived table's column list) into that name's exact spelling,
//! quoted; an alias keeps the spelling it is written with. Identifiers that name nothing known
//! are left to DataFusion, which reports them as before. With `spark.sql.caseSensitive = true`
//! every identifier is taken exactly as written.

mod rewrite;

use std::collections::{HashMap, HashSet};

use datafusion::arrow::datatypes::{DataType, Fields, Schema};
use datafusion::prelude::SessionContext;
use datafusion::sql::parser::{CopyToSource, Statement as DFStatement};
use sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, Ident, ObjectName, Statement, TableFactor, Value, Visit,
    Visitor,
};

use crate::error::{HoodieError, Result};

/// The names a statement can refer to, by lower-cased name.
#[derive(Debug, Default)]
pub struct Names {
    /// Every spelling of every known name (columns, nested fields, aliases).
    spellings: HashMap<String, Vec<String>>,
    /// The columns of each table (by lower-cased table name and column name).
    tables: HashMap<String, HashMap<String, Vec<String>>>,
    /// Table aliases (lower-cased) and the table they stand for.
    aliases: HashMap<String, String>,
    /// Relation names and aliases (lower-cased): a qualifier is not rewritten as a column.
    relations: HashSet<String>,
    case_sensitive: bool,
}

impl Names {
    /// Names resolved exactly as written when `case_sensitive`.
    pub fn new(case_sensitive: bool) -> Self {
        Self {
            case_sensitive,
            ..Default::default()
        }
    }

    /// Adds the columns (and nested field names) of `table`.
    pub fn add_table(&mut self, table: &str, schema: &Schema) {
        let mut columns: HashMap<String, Vec<String>> = HashMap::new();
        for f in schema.fields() {
            columns
                .entry(f.name().to_ascii_lowercase())
                .or_default()
                .push(f.name().clone());
            self.add_spelling(f.name());
            self.add_nested(f.data_type());
        }
        let lower = table.to_ascii_lowercase();
        if let Some(last) = lower.rsplit('.').next() {
            self.relations.insert(last.to_string());
            self.tables.insert(last.to_string(), columns.clone());
        }
        self.relations.insert(lower.clone());
        self.tables.insert(lower, columns);
    }

    fn add_nested(&mut self, data_type: &DataType) {
        let fields: Option<&Fields> = match data_type {
            DataType::Struct(fields) => Some(fields),
            DataType::List(f) | DataType::LargeList(f) | DataType::FixedSizeList(f, _) => {
                return self.add_nested(f.data_type())
            }
            DataType::Map(f, _) => return self.add_nested(f.data_type()),
            _ => None,
        };
        for f in fields.into_iter().flatten() {
            self.add_spelling(f.name());
            self.add_nested(f.data_type());
        }
    }

    /// Adds a name the statement defines (an alias, a derived table's column).
    pub fn add_defined(&mut self, name: &str) {
        self.add_spelling(name);
    }

    /// Adds a derived table (`(SELECT ...) AS s`) with the names of its output columns.
    pub fn add_derived(&mut self, alias: &str, columns: &[String]) {
        let mut map: HashMap<String, Vec<String>> = HashMap::new();
        for c in columns {
            let v = map.entry(c.to_ascii_lowercase()).or_default();
            if !v.contains(c) {
                v.push(c.clone());
            }
        }
        let lower = alias.to_ascii_lowercase();
        self.relations.insert(lower.clone());
        self.tables.insert(lower, map);
    }

    /// The spelling DataFusion will give the column `ident` of `table` (or of any table):
    /// the resolved spelling, else the identifier as DataFusion normalises it.
    pub(crate) fn output_name(
        &self,
        ident: &Ident,
        table: Option<&str>,
        scopes: &[Vec<String>],
    ) -> String {
        match self.resolve_in(ident, table, scopes) {
            Ok(Some(s)) => s,
            _ if ident.quote_style.is_some() || self.case_sensitive => ident.value.clone(),
            _ => ident.value.to_ascii_lowercase(),
        }
    }

    /// Adds a table alias or CTE name, which qualifiers may use; `table` is the table it
    /// stands for, if it is an alias of one.
    pub fn add_relation(&mut self, name: &str, table: Option<&str>) {
        let lower = name.to_ascii_lowercase();
        if let Some(t) = table {
            self.aliases.insert(lower.clone(), t.to_ascii_lowercase());
        }
        self.relations.insert(lower);
    }

    fn add_spelling(&mut self, name: &str) {
        let v = self.spellings.entry(name.to_ascii_lowercase()).or_default();
        if !v.iter().any(|s| s == name) {
            v.push(name.to_string());
        }
    }

    /// Whether `ident` can be a qualifier (a relation name or alias).
    fn is_relation(&self, ident: &Ident) -> bool {
        self.relations.contains(&ident.value.to_ascii_lowercase())
    }

    /// The table a qualifier (a table name or an alias of one) stands for.
    fn table_of(&self, qualifier: &str) -> Option<&str> {
        let lower = qualifier.to_ascii_lowercase();
        let table = self
            .aliases
            .get(&lower)
            .map(String::as_str)
            .unwrap_or(&lower);
        self.tables.get_key_value(table).map(|(k, _)| k.as_str())
    }

    /// The exact spelling `ident` stands for, if it names something known (or, when resolution
    /// is exact, the spelling as written): in `table` (a qualifier's table, or the target of a
    /// DML column list), else in the innermost of `scopes` (the relations of each enclosing
    /// FROM) that has such a column, else among every name the statement knows. Two columns of
    /// one table that match are an error.
    fn resolve_in(
        &self,
        ident: &Ident,
        table: Option<&str>,
        scopes: &[Vec<String>],
    ) -> Result<Option<String>> {
        if self.case_sensitive {
            return Ok(ident.quote_style.is_none().then(|| ident.value.clone()));
        }
        let lower = ident.value.to_ascii_lowercase();
        let ambiguous = |table: &str, names: &[String]| HoodieError::AmbiguousColumn {
            name: ident.value.clone(),
            table: table.to_string(),
            candidates: names.join("`, `"),
        };
        let in_table = |t: &str| -> Result<Option<String>> {
            match self
                .table_of(t)
                .and_then(|t| self.tables[t].get(&lower).map(|n| (t, n)))
            {
                Some((_, names)) if names.len() == 1 => Ok(Some(names[0].clone())),
                Some((t, names)) => Err(ambiguous(t, names)),
                None => Ok(None),
            }
        };
        if let Some(found) = table.map(in_table).transpose()?.flatten() {
            return Ok(Some(found));
        }
        for scope in scopes.iter().rev() {
            let mut found: Vec<String> = Vec::new();
            for t in scope {
                if let Some(s) = in_table(t)? {
                    if !found.contains(&s) {
                        found.push(s);
                    }
                }
            }
            match found.as_slice() {
                [one] => return Ok(Some(one.clone())),
                [] => continue,
                many => return Ok(written_as(many, ident)),
            }
        }
        for (t, columns) in &self.tables {
            if let Some(names) = columns.get(&lower).filter(|n| n.len() > 1) {
                return Err(ambiguous(t, names));
            }
        }
        Ok(match self.spellings.get(&lower).map(Vec::as_slice) {
            Some([one]) => Some(one.clone()),
            Some(many) => written_as(many, ident),
            None => None,
        })
    }

    /// `ident` rewritten to its exact spelling, quoted (`None`: it names nothing known).
    fn exact(
        &self,
        ident: &Ident,
        table: Option<&str>,
        scopes: &[Vec<String>],
    ) -> Result<Option<Ident>> {
        Ok(self.resolve_in(ident, table, scopes)?.map(|s| Ident {
            value: s,
            quote_style: Some('"'),
            span: ident.span,
        }))
    }
}

/// Of several spellings a name could stand for, the one it is written with, if any (else the
/// name is left to DataFusion).
fn written_as(spellings: &[String], ident: &Ident) -> Option<String> {
    spellings.iter().find(|s| **s == ident.value).cloned()
}

/// Rewrites the identifiers of `stmt` to the exact spellings of the columns they name (see the
/// module documentation). Tables are looked up in `ctx`; names that are not tables (CTEs,
/// missing tables) are skipped, and DataFusion reports them when it plans the statement.
pub async fn resolve_names(
    stmt: &mut Statement,
    ctx: &SessionContext,
    case_sensitive: bool,
) -> Result<()> {
    let mut names = Names::new(case_sensitive);
    for relation in relations_of(stmt) {
        let lookup = crate::frontend::name_of(&relation);
        if let Ok(provider) = ctx
            .table_provider(crate::frontend::exact_table_ref(&lookup))
            .await
        {
            names.add_table(&lookup, &provider.schema());
        }
    }
    rewrite::collect_defined(stmt, &mut names);
    rewrite::rewrite_statement(stmt, &names)
}

/// [`resolve_names`] for a statement in DataFusion's own grammar: its SQL statement, the
/// statement an `EXPLAIN` explains, and the query a `COPY (...) TO` copies.
pub async fn resolve_df_names(
    stmt: &mut DFStatement,
    ctx: &SessionContext,
    case_sensitive: bool,
) -> Result<()> {
    match stmt {
        DFStatement::Statement(s) => resolve_names(s, ctx, case_sensitive).await,
        DFStatement::Explain(e) => {
            Box::pin(resolve_df_names(&mut e.statement, ctx, case_sensitive)).await
        }
        DFStatement::CopyTo(c) => {
            if let CopyToSource::Query(q) = &mut c.source {
                let mut s = Statement::Query(q.clone());
                resolve_names(&mut s, ctx, case_sensitive).await?;
                if let Statement::Query(resolved) = s {
                    *q = resolved;
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// The table a table factor reads: the table it names, or the table named by the first
/// argument of one of hoodie's table functions (`hudi_time_travel('t', ...)`, which
/// `t TIMESTAMP AS OF ...` becomes); `None` for a path or anything else.
pub(crate) fn factor_reads(factor: &TableFactor) -> Option<ObjectName> {
    let TableFactor::Table { name, args, .. } = factor else {
        return None;
    };
    let Some(args) = args else {
        return Some(name.clone());
    };
    let function = crate::frontend::name_of(name);
    if !crate::table_functions::TABLE_FUNCTIONS.contains(&function.as_str()) {
        return None;
    }
    let first = match args.args.first()? {
        FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v))) => v.value.clone(),
        _ => return None,
    };
    let Value::SingleQuotedString(text) = first else {
        return None;
    };
    if text.contains('/') {
        return None;
    }
    sqlparser::parser::Parser::new(&sqlparser::dialect::GenericDialect {})
        .try_with_sql(&text)
        .ok()?
        .parse_object_name(false)
        .ok()
}

/// Every table name `stmt` refers to, in order, without repeats.
pub(crate) fn relations_of(stmt: &Statement) -> Vec<ObjectName> {
    struct Relations(Vec<ObjectName>);
    impl Visitor for Relations {
        type Break = ();
        fn pre_visit_relation(&mut self, relation: &ObjectName) -> std::ops::ControlFlow<()> {
            if !self.0.contains(relation) {
                self.0.push(relation.clone());
            }
            std::ops::ControlFlow::Continue(())
        }
        fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> std::ops::ControlFlow<()> {
            if let Some(read) = factor_reads(factor).filter(|r| !self.0.contains(r)) {
                self.0.push(read);
            }
            std::ops::ControlFlow::Continue(())
        }
    }
    let mut v = Relations(Vec::new());
    let _ = Visit::visit(stmt, &mut v);
    v.0
}

#[cfg(test)]
mod tests;
