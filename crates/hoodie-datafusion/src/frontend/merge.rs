//! MERGE INTO with Hudi's `UPDATE SET *` and `INSERT *`, which sqlparser 0.62 cannot parse:
//! the stars are rewritten to placeholders before parsing, then expanded by column name
//! against the target table and the source.

use sqlparser::ast::helpers::attached_token::AttachedToken;
use sqlparser::ast::{
    Assignment, AssignmentTarget, Expr, Ident, MergeAction, MergeInsertKind, ObjectName, Parens,
    Statement, TableFactor, Values,
};
use sqlparser::tokenizer::{Token, TokenWithSpan, Word};

use crate::error::{HoodieError, MergeError, Result};

const STAR: &str = "__hoodie_star__";

/// A MERGE's tokens with `UPDATE SET *` written `UPDATE SET <placeholder> = 0` and `INSERT *`
/// written `INSERT ROW`, which sqlparser parses; [`expand_stars`] replaces both.
pub(super) fn star_placeholders(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let mut out: Vec<TokenWithSpan> = Vec::with_capacity(tokens.len());
    let last_word = |out: &[TokenWithSpan]| -> Option<String> {
        out.iter()
            .rev()
            .find(|t| !matches!(t.token, Token::Whitespace(_)))
            .and_then(|t| match &t.token {
                Token::Word(w) => Some(w.value.to_ascii_uppercase()),
                _ => None,
            })
    };
    for t in tokens {
        if t.token == Token::Mul {
            let at = |token: Token| TokenWithSpan::new(token, t.span);
            match last_word(&out).as_deref() {
                Some("SET") => {
                    out.push(at(Token::make_word(STAR, None)));
                    out.push(at(Token::Eq));
                    out.push(at(Token::Number("0".into(), false)));
                    continue;
                }
                Some("INSERT") => {
                    out.push(at(Token::Word(Word {
                        value: "ROW".into(),
                        quote_style: None,
                        keyword: sqlparser::keywords::Keyword::ROW,
                    })));
                    continue;
                }
                _ => {}
            }
        }
        out.push(t);
    }
    out
}

/// The qualifier source columns are referred to by: the alias, or the table name, as written
/// (so DataFusion normalises it as it does the alias).
fn source_qualifier(source: &TableFactor) -> Option<Ident> {
    match source {
        TableFactor::Table { alias: Some(a), .. } | TableFactor::Derived { alias: Some(a), .. } => {
            Some(a.name.clone())
        }
        TableFactor::Table { name, .. } => name.0.last().and_then(|p| p.as_ident()).cloned(),
        _ => None,
    }
}

/// Expands `UPDATE SET *` / `INSERT *` of `stmt` with the target's data columns, each taken
/// by name from the source (`source_columns`); every target column must exist in the source.
pub fn expand_stars(
    stmt: &mut Statement,
    target_columns: &[String],
    source_columns: &[String],
) -> Result<()> {
    let Statement::Merge(merge) = stmt else {
        return Ok(());
    };
    let qualifier = source_qualifier(&merge.source);
    let source_ref = |c: &str| -> Result<Expr> {
        let found = source_columns
            .iter()
            .find(|s| s.eq_ignore_ascii_case(c))
            .ok_or_else(|| {
                HoodieError::from(MergeError::StarColumnNotInSource {
                    column: c.to_string(),
                })
            })?;
        let col = Ident::with_quote('"', found.clone());
        Ok(match &qualifier {
            Some(q) => Expr::CompoundIdentifier(vec![q.clone(), col]),
            None => Expr::Identifier(col),
        })
    };
    for clause in &mut merge.clauses {
        match &mut clause.action {
            MergeAction::Update(u) => {
                let star = u.assignments.iter().any(|a| matches!(&a.target, AssignmentTarget::ColumnName(n) if n.to_string() == STAR));
                if star {
                    if u.assignments.len() != 1 {
                        return Err(HoodieError::Parse {
                            message: "UPDATE SET * cannot be combined with other assignments"
                                .into(),
                        });
                    }
                    u.assignments = target_columns
                        .iter()
                        .map(|c| {
                            Ok(Assignment {
                                target: AssignmentTarget::ColumnName(ObjectName::from(vec![
                                    Ident::with_quote('"', c.clone()),
                                ])),
                                value: source_ref(c)?,
                            })
                        })
                        .collect::<Result<_>>()?;
                }
            }
            MergeAction::Insert(i)
                if matches!(i.kind, MergeInsertKind::Row) && i.columns.is_empty() =>
            {
                i.columns = target_columns
                    .iter()
                    .map(|c| ObjectName::from(vec![Ident::with_quote('"', c.clone())]))
                    .collect();
                let values = target_columns
                    .iter()
                    .map(|c| source_ref(c))
                    .collect::<Result<Vec<_>>>()?;
                i.kind = MergeInsertKind::Values(Values {
                    explicit_row: false,
                    value_keyword: false,
                    rows: vec![Parens {
                        opening_token: AttachedToken::empty(),
                        content: values,
                        closing_token: AttachedToken::empty(),
                    }],
                });
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::FrontStatement;

    fn parse_merge(sql: &str) -> Result<Statement> {
        match crate::frontend::classify(sql)? {
            FrontStatement::Merge(s) => Ok(*s),
            other => panic!("not a MERGE: {other:?}"),
        }
    }

    #[test]
    fn expands_stars_by_name() {
        let mut s = parse_merge("merge into t using s on t.id = s.id when matched then update set * when not matched then insert *").unwrap();
        expand_stars(
            &mut s,
            &["id".into(), "name".into()],
            &["name".into(), "ID".into(), "extra".into()],
        )
        .unwrap();
        let text = s.to_string();
        assert!(
            text.contains(r#"UPDATE SET "id" = s."ID", "name" = s."name""#),
            "{text}"
        );
        assert!(
            text.contains(r#"INSERT ("id", "name") VALUES (s."ID", s."name")"#),
            "{text}"
        );
        let mut s =
            parse_merge("merge into t using s on t.id = s.id when matched then update set *")
                .unwrap();
        let err = expand_stars(&mut s, &["id".into(), "price".into()], &["id".into()]).unwrap_err();
        assert!(
            err.to_string()
                .contains("cannot resolve target column `price`"),
            "{err}"
        );
    }
}
