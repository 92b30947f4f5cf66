//! Spark's time-travel clause after a table name: `t [FOR] TIMESTAMP AS OF <literal>` (also
//! `SYSTEM_TIME`). [`HoodieDialect`](super::dialect::HoodieDialect) parses the clause into the
//! table factor's version; [`to_table_functions`] then makes each such table hoodie's table
//! function `hudi_time_travel('<t>', '<instant>')`, aliased as the table so qualified names
//! keep working. `VERSION AS OF` fails as in Hudi 1.2.
//!
//! sqlparser's grammar has `TIMESTAMP AS OF` and `FOR SYSTEM_TIME AS OF` only, so before the
//! one parse [`normalise`] writes Spark's other spellings in the first form on the token stream
//! (dropping `FOR`, `SYSTEM_TIME` read as `TIMESTAMP`), and refuses the clause where Spark does:
//! on the table a statement writes, and `VERSION AS OF`.

use std::ops::ControlFlow;

use sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, Ident, ObjectName, Spanned, TableAlias, TableFactor,
    TableFunctionArgs, TableVersion, Value, VisitMut, VisitorMut,
};
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan, Word};

use super::parse_error_at;
use crate::error::{HoodieError, Result};

/// The table function a time-travel clause becomes.
pub const TIME_TRAVEL_FUNCTION: &str = "hudi_time_travel";

fn word_is(t: &Token, w: &str) -> bool {
    matches!(t, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}

/// The statement's tokens with each time-travel clause spelled `TIMESTAMP AS OF`; an error for
/// `VERSION AS OF` and for a clause on the table a statement writes.
pub(super) fn normalise(tokens: Vec<TokenWithSpan>) -> Result<Vec<TokenWithSpan>> {
    let sig: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
        .collect();
    let at = |k: usize| sig.get(k).map(|&i| &tokens[i].token);
    let clause = |k: usize, kinds: &[&str]| {
        at(k).is_some_and(|t| kinds.iter().any(|w| word_is(t, w)))
            && at(k + 1).is_some_and(|t| word_is(t, "AS"))
            && at(k + 2).is_some_and(|t| word_is(t, "OF"))
    };
    // token positions to drop (FOR) and to read as TIMESTAMP (SYSTEM_TIME)
    let mut dropped = Vec::new();
    let mut renamed = Vec::new();
    for k in 0..sig.len() {
        if clause(k, &["VERSION", "SYSTEM_VERSION"]) {
            return Err(HoodieError::VersionAsOf);
        }
        if !clause(k, &["TIMESTAMP", "SYSTEM_TIME"]) {
            continue;
        }
        let has_for = k > 0 && at(k - 1).is_some_and(|t| word_is(t, "FOR"));
        let name_end = if has_for { k - 1 } else { k };
        let name_start = table_name_start(&at, name_end).ok_or_else(|| {
            parse_error_at(
                "TIMESTAMP AS OF must follow a table name".into(),
                tokens[sig[k]].span,
            )
        })?;
        check_not_written(&at, name_start)?;
        if has_for {
            dropped.push(sig[k - 1]);
        }
        if at(k).is_some_and(|t| word_is(t, "SYSTEM_TIME")) {
            renamed.push(sig[k]);
        }
    }
    if dropped.is_empty() && renamed.is_empty() {
        return Ok(tokens);
    }
    Ok(tokens
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !dropped.contains(i))
        .map(|(i, t)| match renamed.contains(&i) {
            true => TokenWithSpan::new(
                Token::Word(Word {
                    value: "TIMESTAMP".into(),
                    quote_style: None,
                    keyword: Keyword::TIMESTAMP,
                }),
                t.span,
            ),
            false => t,
        })
        .collect())
}

/// The first significant token of the table name ending before significant token `end`: words
/// joined by periods.
fn table_name_start<'a>(at: &impl Fn(usize) -> Option<&'a Token>, end: usize) -> Option<usize> {
    let mut start = end;
    while start > 0 && matches!(at(start - 1), Some(Token::Word(_))) {
        start -= 1;
        if start > 0 && matches!(at(start - 1), Some(Token::Period)) {
            start -= 1;
        } else {
            break;
        }
    }
    (start < end).then_some(start)
}

/// Refuses the clause on the table a statement writes: its target is its latest state
/// (INTO t, UPDATE t, DELETE FROM t, TABLE t).
fn check_not_written<'a>(
    at: &impl Fn(usize) -> Option<&'a Token>,
    name_start: usize,
) -> Result<()> {
    let before = name_start.checked_sub(1).and_then(at);
    let written = before.is_some_and(|t| {
        word_is(t, "INTO")
            || word_is(t, "UPDATE")
            || word_is(t, "TABLE")
            || (word_is(t, "FROM")
                && name_start >= 2
                && at(name_start - 2).is_some_and(|d| word_is(d, "DELETE")))
    });
    if written {
        return Err(HoodieError::TimeTravelTarget);
    }
    Ok(())
}

/// Makes every table with a time-travel clause in `node` the time-travel table function.
pub(super) fn to_table_functions<T: VisitMut>(node: &mut T) -> Result<()> {
    struct Tables;
    impl VisitorMut for Tables {
        type Break = HoodieError;
        fn pre_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<HoodieError> {
            match time_travel_function(factor) {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => ControlFlow::Break(e),
            }
        }
    }
    match node.visit(&mut Tables) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

/// `t TIMESTAMP AS OF x [alias]` as `hudi_time_travel('t', 'x') AS alias` (the alias being the
/// table's last name part when none is written).
fn time_travel_function(factor: &mut TableFactor) -> Result<()> {
    let TableFactor::Table {
        name,
        alias,
        args,
        version,
        ..
    } = factor
    else {
        return Ok(());
    };
    let instant = match version.take() {
        None => return Ok(()),
        Some(TableVersion::TimestampAsOf(e) | TableVersion::ForSystemTimeAsOf(e)) => instant(&e)?,
        Some(TableVersion::VersionAsOf(_)) => return Err(HoodieError::VersionAsOf),
        Some(other) => {
            return Err(HoodieError::Unsupported {
                feature: format!("the time-travel clause {other} (use TIMESTAMP AS OF)"),
            })
        }
    };
    let table = name.to_string();
    if alias.is_none() {
        *alias = name
            .0
            .last()
            .and_then(|p| p.as_ident())
            .map(|last| TableAlias {
                explicit: true,
                name: last.clone(),
                columns: vec![],
                at: None,
            });
    }
    let text = |s: String| {
        FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::value(
            Value::SingleQuotedString(s),
        )))
    };
    *args = Some(TableFunctionArgs {
        args: vec![text(table), text(instant)],
        settings: None,
    });
    *name = ObjectName::from(vec![Ident::new(TIME_TRAVEL_FUNCTION)]);
    Ok(())
}

/// The instant a clause names: a string or number literal.
fn instant(e: &Expr) -> Result<String> {
    if let Expr::Value(v) = e {
        match &v.value {
            Value::SingleQuotedString(s) => return Ok(s.clone()),
            Value::Number(n, _) => return Ok(n.to_string()),
            _ => {}
        }
    }
    Err(parse_error_at(
        format!(
            "TIMESTAMP AS OF takes a string or number literal (an instant such as '2024-01-31 10:00:00' or 20240131100000000), got {e}"
        ),
        e.span(),
    ))
}

/// Applies [`to_table_functions`] to the sqlparser statements inside a DataFusion statement.
pub(super) fn in_datafusion_statement(stmt: &mut datafusion::sql::parser::Statement) -> Result<()> {
    use datafusion::sql::parser::{CopyToSource, Statement as DFStatement};
    match stmt {
        DFStatement::Statement(s) => to_table_functions(s.as_mut()),
        DFStatement::Explain(e) => in_datafusion_statement(e.statement.as_mut()),
        DFStatement::CopyTo(c) => match &mut c.source {
            CopyToSource::Query(q) => to_table_functions(q.as_mut()),
            CopyToSource::Relation(_) => Ok(()),
        },
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use crate::frontend::{classify, FrontStatement};

    /// The statement as DataFusion gets it.
    fn r(sql: &str) -> String {
        match classify(sql).unwrap() {
            FrontStatement::PassThrough(s) => s.to_string(),
            FrontStatement::Insert(s) | FrontStatement::Update(s) => s.to_string(),
            other => panic!("{other:?}"),
        }
    }

    fn err(sql: &str) -> String {
        classify(sql).unwrap_err().to_string()
    }

    #[test]
    fn the_clause_becomes_the_table_function() {
        assert_eq!(
            r("SELECT * FROM t TIMESTAMP AS OF '2024-01-02 03:04:05' WHERE id = 1"),
            "SELECT * FROM hudi_time_travel('t', '2024-01-02 03:04:05') AS t WHERE id = 1"
        );
        assert_eq!(
            r("select a.id from db.T for timestamp as of 20240102030405000 a join u on a.id = u.id"),
            "SELECT a.id FROM hudi_time_travel('db.T', '20240102030405000') a JOIN u ON a.id = u.id"
        );
        assert_eq!(
            r("SELECT 1 FROM \"MyT\" FOR SYSTEM_TIME AS OF '2024-01-02' AS x"),
            "SELECT 1 FROM hudi_time_travel('\"MyT\"', '2024-01-02') AS x"
        );
        assert_eq!(
            r("SELECT 1 FROM t SYSTEM_TIME AS OF 'it''s'"),
            "SELECT 1 FROM hudi_time_travel('t', 'it''s') AS t"
        );
        assert_eq!(
            r("SELECT * FROM (SELECT * FROM t TIMESTAMP AS OF '1' ) s"),
            "SELECT * FROM (SELECT * FROM hudi_time_travel('t', '1') AS t) s"
        );
        assert_eq!(
            r("INSERT INTO u SELECT * FROM t TIMESTAMP AS OF '1'"),
            "INSERT INTO u SELECT * FROM hudi_time_travel('t', '1') AS t"
        );
        assert_eq!(r("SELECT 'as of' FROM t"), "SELECT 'as of' FROM t");
    }

    #[test]
    fn version_and_bad_values_are_errors() {
        let e = err("SELECT * FROM t VERSION AS OF 3");
        assert!(e.contains("Version expression is not supported for time travel"));
        let e = err("SELECT * FROM t TIMESTAMP AS OF now()");
        assert!(
            e.contains("string or number literal")
                && e.contains("got now() at Line: 1, Column: 33"),
            "{e}"
        );
        for write in [
            "INSERT INTO t TIMESTAMP AS OF '1' VALUES (1)",
            "UPDATE t TIMESTAMP AS OF '1' SET a = 1",
            "DELETE FROM db.t TIMESTAMP AS OF '1' WHERE a = 1",
            "MERGE INTO t TIMESTAMP AS OF '1' USING s ON t.a = s.a WHEN MATCHED THEN DELETE",
            "INSERT OVERWRITE TABLE t TIMESTAMP AS OF '1' SELECT 1",
        ] {
            let e = err(write);
            assert!(
                e.contains("the table a statement writes to cannot take it"),
                "{write}: {e}"
            );
        }
        assert!(classify("DELETE FROM u WHERE a IN (SELECT a FROM t TIMESTAMP AS OF '1')").is_ok());
    }
}
