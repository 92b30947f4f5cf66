//! `TRUNCATE TABLE t [PARTITION (...)]` and `ALTER TABLE t DROP [IF EXISTS] PARTITION (...)
//! [, PARTITION (...)] [PURGE]`, in Spark's grammar: neither is in DataFusion's.

use sqlparser::ast::{Expr as SqlExpr, Value};
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use super::{expect_end, name_of, perr, FrontStatement};
use crate::error::{HoodieError, Result};

/// A partition spec as written: `(column, value)` pairs, a NULL value as `None`.
pub type PartitionSpec = Vec<(String, Option<String>)>;

/// `TRUNCATE [TABLE] t [PARTITION (k = v, ...)]`.
pub(super) fn parse_truncate(p: &mut Parser) -> Result<FrontStatement> {
    p.expect_keyword(Keyword::TRUNCATE).map_err(perr)?;
    let _ = p.parse_keyword(Keyword::TABLE);
    let name = name_of(&p.parse_object_name(false).map_err(perr)?);
    let partition = if p.parse_keyword(Keyword::PARTITION) {
        Some(parse_spec(p)?)
    } else {
        None
    };
    expect_end(p)?;
    Ok(FrontStatement::Truncate { name, partition })
}

/// The rest of `ALTER TABLE <name> DROP [IF EXISTS] PARTITION (...) [, PARTITION (...)]
/// [PURGE]`, after the name; `None` when the statement is another ALTER TABLE.
pub(super) fn parse_drop_partitions(p: &mut Parser, name: &str) -> Result<Option<FrontStatement>> {
    let at_partition = |p: &Parser| {
        let is = |n: usize, k: Keyword| matches!(&p.peek_nth_token(n).token, Token::Word(w) if w.keyword == k);
        is(0, Keyword::DROP)
            && (is(1, Keyword::PARTITION) || (is(1, Keyword::IF) && is(3, Keyword::PARTITION)))
    };
    if !at_partition(p) {
        return Ok(None);
    }
    p.expect_keyword(Keyword::DROP).map_err(perr)?;
    let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
    let mut specs = Vec::new();
    loop {
        p.expect_keyword(Keyword::PARTITION).map_err(perr)?;
        specs.push(parse_spec(p)?);
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    let purge = p.parse_keyword(Keyword::PURGE);
    expect_end(p)?;
    Ok(Some(FrontStatement::DropPartitions {
        name: name.to_string(),
        if_exists,
        specs,
        purge,
    }))
}

/// `(k = v, ...)`: identifiers as written, literal values.
fn parse_spec(p: &mut Parser) -> Result<PartitionSpec> {
    p.expect_token(&Token::LParen).map_err(perr)?;
    let mut spec = Vec::new();
    loop {
        let column = p.parse_identifier().map_err(perr)?.value;
        p.expect_token(&Token::Eq).map_err(perr)?;
        let value = match p.parse_expr().map_err(perr)? {
            SqlExpr::Value(v) => match v.value {
                Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => Some(s),
                Value::Number(n, _) => Some(n),
                Value::Boolean(b) => Some(b.to_string()),
                Value::Null => None,
                other => return Err(bad_value(&column, &other.to_string())),
            },
            SqlExpr::UnaryOp { op, expr } if op.to_string() == "-" => match *expr {
                SqlExpr::Value(v) if matches!(v.value, Value::Number(..)) => {
                    Some(format!("-{}", v.value))
                }
                other => return Err(bad_value(&column, &other.to_string())),
            },
            other => return Err(bad_value(&column, &other.to_string())),
        };
        spec.push((column, value));
        if !p.consume_token(&Token::Comma) {
            break;
        }
    }
    p.expect_token(&Token::RParen).map_err(perr)?;
    Ok(spec)
}

fn bad_value(column: &str, value: &str) -> HoodieError {
    HoodieError::Parse {
        message: format!("a PARTITION value is a literal, got {column} = {value}"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::classify;
    use super::*;

    #[test]
    fn truncate_and_drop_partition_in_sparks_grammar() {
        let FrontStatement::Truncate { name, partition } =
            classify("TRUNCATE TABLE T PARTITION (dt = '2021-01-05', hr = 1)").unwrap()
        else {
            panic!("not a truncate")
        };
        assert_eq!(name, "t");
        assert_eq!(
            partition,
            Some(vec![
                ("dt".to_string(), Some("2021-01-05".to_string())),
                ("hr".to_string(), Some("1".to_string()))
            ])
        );
        assert!(matches!(
            classify("truncate t").unwrap(),
            FrontStatement::Truncate {
                partition: None,
                ..
            }
        ));
        let FrontStatement::DropPartitions {
            name,
            if_exists,
            specs,
            purge,
        } = classify("ALTER TABLE t DROP IF EXISTS PARTITION (dt=NULL), PARTITION (dt='b') PURGE")
            .unwrap()
        else {
            panic!("not a drop partition")
        };
        assert_eq!((name.as_str(), if_exists, purge), ("t", true, true));
        assert_eq!(
            specs,
            vec![
                vec![("dt".to_string(), None)],
                vec![("dt".to_string(), Some("b".to_string()))]
            ]
        );
        assert!(classify("ALTER TABLE t DROP PARTITION (dt = upper('x'))").is_err());
        assert!(classify("TRUNCATE TABLE t PARTITION dt = 'x'").is_err());
    }
}
