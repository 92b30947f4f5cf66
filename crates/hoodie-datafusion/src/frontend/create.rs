//! `CREATE [OR REPLACE] TABLE ... USING <format>` in Spark's grammar (its clauses in any
//! order), and the `( key = value, ... )` property lists it and `ALTER TABLE ... SET
//! TBLPROPERTIES` take.

use datafusion::arrow::datatypes::Field;
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::{columns, expect_end, name_of, parse_error_at, perr, types, CreateTableUsing};
use crate::error::Result;

/// A property key: quoted, or words joined by periods (`hoodie.index.type`).
pub(super) fn property_key(p: &mut Parser) -> Result<String> {
    let TokenWithSpan { token, span } = p.next_token();
    match token {
        Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => Ok(s),
        Token::Word(w) => {
            let mut key = w.value;
            while p.consume_token(&Token::Period) {
                let TokenWithSpan { token, span } = p.next_token();
                match token {
                    Token::Word(w) => {
                        key.push('.');
                        key.push_str(&w.value);
                    }
                    other => {
                        return Err(parse_error_at(
                            format!("expected a property name after '.', found {other}"),
                            span,
                        ))
                    }
                }
            }
            Ok(key)
        }
        other => Err(parse_error_at(
            format!("expected a property name, found {other}"),
            span,
        )),
    }
}

/// `( key = value, ... )` with keys quoted or dotted identifiers and `=` optional.
pub(super) fn parse_properties(p: &mut Parser) -> Result<Vec<(String, String)>> {
    p.expect_token(&Token::LParen).map_err(perr)?;
    let mut out = Vec::new();
    if p.consume_token(&Token::RParen) {
        return Ok(out);
    }
    loop {
        let key = property_key(p)?;
        let _ = p.consume_token(&Token::Eq);
        let TokenWithSpan { token, span } = p.next_token();
        let value = match token {
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => s,
            Token::Number(n, _) => n,
            Token::Word(w) => w.value,
            Token::Minus => {
                let TokenWithSpan { token, span } = p.next_token();
                match token {
                    Token::Number(n, _) => format!("-{n}"),
                    other => {
                        return Err(parse_error_at(
                            format!("expected a number, found {other}"),
                            span,
                        ))
                    }
                }
            }
            other => {
                return Err(parse_error_at(
                    format!("expected a value for property {key}, found {other}"),
                    span,
                ))
            }
        };
        out.push((key, value));
        if p.consume_token(&Token::Comma) {
            continue;
        }
        p.expect_token(&Token::RParen).map_err(perr)?;
        return Ok(out);
    }
}

/// Parses `CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t [(cols)] USING fmt` followed by
/// `PARTITIONED BY`, `TBLPROPERTIES`, `OPTIONS`, `LOCATION`, `COMMENT` in any order, then
/// optionally `AS <query>`.
pub(super) fn parse_create_using(p: &mut Parser) -> Result<CreateTableUsing> {
    p.expect_keyword(Keyword::CREATE).map_err(perr)?;
    let or_replace = p.parse_keywords(&[Keyword::OR, Keyword::REPLACE]);
    p.expect_keyword(Keyword::TABLE).map_err(perr)?;
    let if_not_exists = p.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
    let name = name_of(&p.parse_object_name(false).map_err(perr)?);
    let mut columns = Vec::new();
    if p.peek_token().token == Token::LParen {
        columns = columns::parse_column_list(p)?;
    }
    // without USING, a table of the warehouse is a Hudi table (Spark with
    // spark.sql.sources.default = hudi); the caller decides where that applies
    let format = if p.parse_keyword(Keyword::USING) {
        p.parse_identifier()
            .map_err(perr)?
            .value
            .to_ascii_lowercase()
    } else {
        "hudi".to_string()
    };
    let mut stmt = CreateTableUsing {
        or_replace,
        if_not_exists,
        name,
        columns,
        format,
        partitioned_by: vec![],
        options: vec![],
        location: None,
        query: None,
    };
    loop {
        if p.parse_keywords(&[Keyword::PARTITIONED, Keyword::BY]) {
            p.expect_token(&Token::LParen).map_err(perr)?;
            loop {
                let col = p.parse_identifier().map_err(perr)?.value;
                // Hive style `PARTITIONED BY (dt string)` also declares the column
                if !matches!(p.peek_token().token, Token::Comma | Token::RParen) {
                    let dt = types::arrow_type(&p.parse_data_type().map_err(perr)?.to_string())?;
                    if !stmt
                        .columns
                        .iter()
                        .any(|f| f.name().eq_ignore_ascii_case(&col))
                    {
                        stmt.columns.push(Field::new(col.clone(), dt, true));
                    }
                }
                stmt.partitioned_by.push(col);
                if !p.consume_token(&Token::Comma) {
                    break;
                }
            }
            p.expect_token(&Token::RParen).map_err(perr)?;
        } else if p.parse_keyword(Keyword::TBLPROPERTIES) || p.parse_keyword(Keyword::OPTIONS) {
            stmt.options.extend(parse_properties(p)?);
        } else if p.parse_keyword(Keyword::LOCATION) {
            stmt.location = Some(p.parse_literal_string().map_err(perr)?);
        } else if p.parse_keyword(Keyword::COMMENT) {
            p.parse_literal_string().map_err(perr)?;
        } else if p.parse_keyword(Keyword::AS) {
            stmt.query = Some(p.parse_query().map_err(perr)?);
            expect_end(p)?;
            break;
        } else {
            expect_end(p)?;
            break;
        }
    }
    Ok(stmt)
}
