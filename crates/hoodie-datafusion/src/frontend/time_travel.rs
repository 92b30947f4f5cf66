//! `TIMESTAMP AS OF`: Spark's time-travel clause after a table name
//! (`t [FOR] TIMESTAMP AS OF <literal>`, also `SYSTEM_TIME`), which DataFusion's grammar lacks.
//! The clause is rewritten into hoodie's table function `hudi_time_travel('<t>', '<instant>')`,
//! aliased as the table so qualified names keep working; `VERSION AS OF` fails as in Hudi 1.2.

use sqlparser::keywords::{Keyword, RESERVED_FOR_TABLE_ALIAS};
use sqlparser::tokenizer::Token;

use crate::error::{HoodieError, Result};

/// The table function a time-travel clause becomes.
pub const TIME_TRAVEL_FUNCTION: &str = "hudi_time_travel";

fn word_is(t: &Token, w: &str) -> bool {
    matches!(t, Token::Word(x) if x.quote_style.is_none() && x.value.eq_ignore_ascii_case(w))
}

/// `sql` with every time-travel clause rewritten (`None`: it has none).
pub fn rewrite(sql: &str) -> Result<Option<String>> {
    let lower = sql.to_ascii_lowercase();
    let words: Vec<&str> = lower.split_whitespace().collect();
    if !words.windows(2).any(|w| w == ["as", "of"]) {
        return Ok(None);
    }
    let tokens = crate::statements::tokens_as_written(sql)?;
    let sig = Significant {
        idx: (0..tokens.len())
            .filter(|&i| !matches!(tokens[i], Token::Whitespace(_)))
            .collect(),
        tokens: &tokens,
    };
    // (first token, last token, replacement) of each clause with its table name
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut k = 0;
    while k < sig.idx.len() {
        let is_clause = |kind: &str| {
            sig.at(k).is_some_and(|t| word_is(t, kind))
                && sig.at(k + 1).is_some_and(|t| word_is(t, "AS"))
                && sig.at(k + 2).is_some_and(|t| word_is(t, "OF"))
        };
        if is_clause("VERSION") || is_clause("SYSTEM_VERSION") {
            return Err(HoodieError::VersionAsOf);
        }
        if is_clause("TIMESTAMP") || is_clause("SYSTEM_TIME") {
            edits.push(sig.time_travel_edit(k)?);
            k += 4;
        } else {
            k += 1;
        }
    }
    if edits.is_empty() {
        return Ok(None);
    }
    let mut out = String::with_capacity(sql.len() + 64);
    let mut i = 0;
    for (first, last, text) in edits {
        out.extend(tokens[i..first].iter().map(|t| t.to_string()));
        out.push_str(&text);
        i = last + 1;
    }
    out.extend(tokens[i..].iter().map(|t| t.to_string()));
    Ok(Some(out))
}

/// A statement's tokens and the positions of those that are not white space.
struct Significant<'a> {
    tokens: &'a [Token],
    idx: Vec<usize>,
}

impl Significant<'_> {
    /// The `k`-th token that is not white space.
    fn at(&self, k: usize) -> Option<&Token> {
        self.idx.get(k).map(|&i| &self.tokens[i])
    }

    /// The edit of the time-travel clause whose `TIMESTAMP` is significant token `k`: from
    /// its table name to its literal, the table function aliased as the table.
    fn time_travel_edit(&self, k: usize) -> Result<(usize, usize, String)> {
        let (name_start, name_end) = self.table_name_before(k)?;
        self.check_not_written(name_start)?;
        let value = match self.at(k + 3) {
            Some(Token::SingleQuotedString(s)) => s.replace("''", "'"),
            Some(Token::Number(n, _)) => n.clone(),
            other => {
                return Err(HoodieError::Parse {
                    message: format!(
                        "TIMESTAMP AS OF takes a string or number literal (an instant such as '2024-01-31 10:00:00' or 20240131100000000), got {}",
                        other.map_or("nothing".to_string(), |t| t.to_string())
                    ),
                })
            }
        };
        let text_of = |j: usize| self.at(j).map(|t| t.to_string()).unwrap_or_default();
        let name: String = (name_start..name_end).map(text_of).collect();
        let last = text_of(name_end - 1);
        let aliased = match self.at(k + 4) {
            Some(Token::Word(w)) => {
                w.keyword == Keyword::AS
                    || w.quote_style.is_some()
                    || !RESERVED_FOR_TABLE_ALIAS.contains(&w.keyword)
            }
            _ => false,
        };
        let mut text = format!(
            "{TIME_TRAVEL_FUNCTION}('{}', '{}')",
            name.replace('\'', "''"),
            value.replace('\'', "''")
        );
        if !aliased {
            text.push_str(&format!(" AS {last}"));
        }
        Ok((self.idx[name_start], self.idx[k + 3], text))
    }

    /// The significant tokens `[start, end)` of the table name before the clause at `k`
    /// (after an optional FOR): words joined by periods.
    fn table_name_before(&self, k: usize) -> Result<(usize, usize)> {
        let mut name_end = k;
        if name_end > 0 && self.at(name_end - 1).is_some_and(|t| word_is(t, "FOR")) {
            name_end -= 1;
        }
        let mut name_start = name_end;
        while name_start > 0 && matches!(self.at(name_start - 1), Some(Token::Word(_))) {
            name_start -= 1;
            if name_start > 0 && matches!(self.at(name_start - 1), Some(Token::Period)) {
                name_start -= 1;
            } else {
                break;
            }
        }
        if name_start == name_end {
            return Err(HoodieError::Parse {
                message: "TIMESTAMP AS OF must follow a table name".into(),
            });
        }
        Ok((name_start, name_end))
    }

    /// Refuses the clause on the table a statement writes: its target is its latest state
    /// (INTO t, UPDATE t, DELETE FROM t, TABLE t).
    fn check_not_written(&self, name_start: usize) -> Result<()> {
        let before = name_start.checked_sub(1).and_then(|j| self.at(j));
        let written = before.is_some_and(|t| {
            word_is(t, "INTO")
                || word_is(t, "UPDATE")
                || word_is(t, "TABLE")
                || (word_is(t, "FROM")
                    && name_start >= 2
                    && self
                        .at(name_start - 2)
                        .is_some_and(|d| word_is(d, "DELETE")))
        });
        if written {
            return Err(HoodieError::TimeTravelTarget);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(sql: &str) -> String {
        rewrite(sql).unwrap().unwrap_or_else(|| sql.to_string())
    }

    #[test]
    fn rewrites_the_clause_into_the_table_function() {
        assert_eq!(
            r("SELECT * FROM t TIMESTAMP AS OF '2024-01-02 03:04:05' WHERE id = 1"),
            "SELECT * FROM hudi_time_travel('t', '2024-01-02 03:04:05') AS t WHERE id = 1"
        );
        assert_eq!(
            r("select a.id from db.T for timestamp as of 20240102030405000 a join u on a.id = u.id"),
            "select a.id from hudi_time_travel('db.T', '20240102030405000') a join u on a.id = u.id"
        );
        assert_eq!(
            r("SELECT 1 FROM \"MyT\" FOR SYSTEM_TIME AS OF '2024-01-02' AS x"),
            "SELECT 1 FROM hudi_time_travel('\"MyT\"', '2024-01-02') AS x"
        );
        assert_eq!(
            r("SELECT * FROM (SELECT * FROM t TIMESTAMP AS OF '1' ) s"),
            "SELECT * FROM (SELECT * FROM hudi_time_travel('t', '1') AS t ) s"
        );
        assert!(rewrite("SELECT 'as of' FROM t").unwrap().is_none());
    }

    #[test]
    fn version_and_bad_values_are_errors() {
        let e = rewrite("SELECT * FROM t VERSION AS OF 3").unwrap_err();
        assert!(e
            .to_string()
            .contains("Version expression is not supported for time travel"));
        let e = rewrite("SELECT * FROM t TIMESTAMP AS OF now()").unwrap_err();
        assert!(e.to_string().contains("string or number literal"), "{e}");
        for write in [
            "INSERT INTO t TIMESTAMP AS OF '1' VALUES (1)",
            "UPDATE t TIMESTAMP AS OF '1' SET a = 1",
            "DELETE FROM db.t TIMESTAMP AS OF '1' WHERE a = 1",
            "MERGE INTO t TIMESTAMP AS OF '1' USING s ON t.a = s.a WHEN MATCHED THEN DELETE",
            "INSERT OVERWRITE TABLE t TIMESTAMP AS OF '1' SELECT 1",
        ] {
            let e = rewrite(write).unwrap_err().to_string();
            assert!(
                e.contains("the table a statement writes to cannot take it"),
                "{write}: {e}"
            );
        }
        // a source of a write may
        assert!(rewrite("INSERT INTO u SELECT * FROM t TIMESTAMP AS OF '1'").is_ok());
        assert!(rewrite("DELETE FROM u WHERE a IN (SELECT a FROM t TIMESTAMP AS OF '1')").is_ok());
    }
}
