//! `DESCRIBE [EXTENDED] t`, `SHOW TBLPROPERTIES t [('key')]` and `SHOW CREATE TABLE t`, as
//! Spark writes them. On a Hudi table they give Spark's result shapes; on any other table the
//! statement goes to DataFusion as written.

use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::Token;

use super::{expect_end, name_of, perr, FrontStatement};
use crate::error::Result;

/// What a table statement asks about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableInfo {
    /// `DESCRIBE [TABLE] [EXTENDED | FORMATTED] t`.
    Describe {
        /// EXTENDED or FORMATTED.
        extended: bool,
    },
    /// `SHOW TBLPROPERTIES t [('key')]`.
    Properties {
        /// The one key asked for.
        key: Option<String>,
    },
    /// `SHOW CREATE TABLE t`.
    CreateStatement,
}

/// Parses the three statements; `None` for any other text (or one DataFusion reads
/// differently, such as `DESCRIBE SELECT ...`).
pub(super) fn parse_table_info(p: &mut Parser) -> Result<Option<FrontStatement>> {
    let info = if p.parse_keyword(Keyword::DESCRIBE) || p.parse_keyword(Keyword::DESC) {
        let _ = p.parse_keyword(Keyword::TABLE);
        let extended = p.parse_keyword(Keyword::EXTENDED) || p.parse_keyword(Keyword::FORMATTED);
        if matches!(&p.peek_token().token, Token::Word(w) if w.keyword == Keyword::SELECT) {
            return Ok(None);
        }
        TableInfo::Describe { extended }
    } else if p.parse_keywords(&[Keyword::SHOW, Keyword::TBLPROPERTIES]) {
        TableInfo::Properties { key: None }
    } else if p.parse_keywords(&[Keyword::SHOW, Keyword::CREATE, Keyword::TABLE]) {
        TableInfo::CreateStatement
    } else {
        return Ok(None);
    };
    let Ok(name) = p.parse_object_name(false) else {
        return Ok(None);
    };
    let info = match info {
        TableInfo::Properties { .. } if p.consume_token(&Token::LParen) => {
            let key = super::create::property_key(p)?;
            p.expect_token(&Token::RParen).map_err(perr)?;
            TableInfo::Properties { key: Some(key) }
        }
        other => other,
    };
    expect_end(p)?;
    Ok(Some(FrontStatement::TableInfo {
        name: name_of(&name),
        info,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(sql: &str) -> Option<(String, TableInfo)> {
        let mut p = Parser::new(&sqlparser::dialect::GenericDialect {})
            .try_with_sql(sql)
            .unwrap();
        match parse_table_info(&mut p).unwrap() {
            Some(FrontStatement::TableInfo { name, info }) => Some((name, info)),
            None => None,
            Some(_) => panic!("another statement"),
        }
    }

    #[test]
    fn parses_sparks_forms() {
        assert_eq!(
            parsed("DESCRIBE EXTENDED T"),
            Some(("t".into(), TableInfo::Describe { extended: true }))
        );
        assert_eq!(
            parsed("desc table t"),
            Some(("t".into(), TableInfo::Describe { extended: false }))
        );
        assert_eq!(
            parsed("SHOW TBLPROPERTIES t ('hoodie.table.name')"),
            Some((
                "t".into(),
                TableInfo::Properties {
                    key: Some("hoodie.table.name".into())
                }
            ))
        );
        assert_eq!(
            parsed("show tblproperties t (primaryKey)"),
            Some((
                "t".into(),
                TableInfo::Properties {
                    key: Some("primaryKey".into())
                }
            ))
        );
        assert_eq!(
            parsed("SHOW CREATE TABLE db.t"),
            Some(("db.t".into(), TableInfo::CreateStatement))
        );
        assert_eq!(parsed("DESCRIBE SELECT 1"), None);
        assert_eq!(parsed("SHOW TABLES"), None);
    }
}
