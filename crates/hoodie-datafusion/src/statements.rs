//! Splitting a script into statements.

use crate::error::{HoodieError, Result};
use sqlparser::dialect::GenericDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

/// The tokens of `sql`, each keeping its text as written (quotes not unescaped), so text re-joined
/// from them reads as the user wrote it.
pub(crate) fn tokens_as_written(sql: &str) -> Result<Vec<Token>> {
    Tokenizer::new(&GenericDialect {}, sql)
        .with_unescape(false)
        .tokenize()
        .map_err(|e| HoodieError::Parse {
            message: e.to_string(),
        })
}

/// Splits a SQL script into statements at top-level `;`, respecting quotes and comments.
/// Empty statements (and comment-only ones) are dropped.
pub fn split_statements(sql: &str) -> Result<Vec<String>> {
    // tokens keep their text as written (`'o''k'` stays doubled), so a statement re-joined from
    // them reads as the user wrote it
    let tokens = tokens_as_written(sql)?;
    let mut out = Vec::new();
    let mut current = String::new();
    let mut meaningful = false;
    for tok in tokens {
        match tok {
            Token::SemiColon => {
                if meaningful {
                    out.push(current.trim().to_string());
                }
                current.clear();
                meaningful = false;
            }
            Token::Whitespace(ref w) => {
                use sqlparser::tokenizer::Whitespace;
                match w {
                    Whitespace::SingleLineComment { .. } | Whitespace::MultiLineComment(_) => {
                        current.push(' ')
                    }
                    _ => current.push_str(&tok.to_string()),
                }
            }
            other => {
                meaningful = true;
                current.push_str(&other.to_string());
            }
        }
    }
    if meaningful {
        out.push(current.trim().to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_top_level_semicolons_only() {
        let s = split_statements("select 'a;b'; -- c;d\n select 2;;").unwrap();
        assert_eq!(s, vec!["select 'a;b'".to_string(), "select 2".to_string()]);
    }

    #[test]
    fn keeps_escaped_quotes() {
        let s = split_statements("select 'o''k', \"a\"\"b\"; select 'x'").unwrap();
        assert_eq!(
            s,
            vec![
                "select 'o''k', \"a\"\"b\"".to_string(),
                "select 'x'".to_string()
            ]
        );
    }
}
