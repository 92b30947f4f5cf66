//! A guard against statements nested too deeply to plan.
//!
//! sqlparser, DataFusion's planner and its optimizer walk a statement's tree recursively, and
//! some of those walks (`Expr::clone`, `Expr::get_type`, dropping a tree) are not protected by
//! DataFusion's `recursive_protection`: `SELECT 1+1+...+1` with 10,000 terms overflowed the
//! stack and aborted the process. Type checking a chain is also quadratic in its length
//! (3,000 terms took 25 s in a debug build). So before anything parses a statement, its
//! nesting is estimated from its text in one pass, without recursion, and a statement nested
//! deeper than [`MAX_NESTING`], or deeper than the calling thread's remaining stack holds at
//! [`STACK_PER_LEVEL`] bytes a level, is refused with [`HoodieError::TooDeep`]: an error, never
//! an abort. The `hoodie` shell runs statements on threads with a large stack, so there only
//! [`MAX_NESTING`] applies.

use crate::error::{HoodieError, Result};

/// The deepest nesting a statement may have: operators in one chain (`a OR b OR ...`, `1+1+...`,
/// `UNION`, `JOIN`) plus parentheses plus [`SELECT_WEIGHT`] a query block.
pub const MAX_NESTING: usize = 1_000;

/// The stack a level of nesting may take while it is planned (debug builds take the most).
pub const STACK_PER_LEVEL: usize = 6 * 1024;

/// What is kept free of the stack for the rest of the work around the statement's tree.
const STACK_RESERVE: usize = 256 * 1024;

/// How many levels a query block counts for: planning a subquery nests many calls.
const SELECT_WEIGHT: usize = 8;

/// Refuses `sql` when its nesting does not fit (see the module documentation).
pub fn check(sql: &str) -> Result<()> {
    let depth = nesting(sql);
    if depth <= 32 {
        return Ok(());
    }
    let by_stack = stacker::remaining_stack()
        .map(|left| left.saturating_sub(STACK_RESERVE) / STACK_PER_LEVEL)
        .unwrap_or(MAX_NESTING);
    let limit = MAX_NESTING.min(by_stack);
    if depth <= limit {
        return Ok(());
    }
    Err(HoodieError::TooDeep {
        depth,
        limit,
        by_stack: by_stack < MAX_NESTING,
    })
}

/// An estimate of how deeply `sql` nests, from its text alone: along every path into the
/// statement, the parentheses and query blocks entered plus the binary operators chained at
/// each level (a comma or a clause keyword starts a new chain). Quoted text and comments do
/// not count. Linear in the text, no recursion.
pub fn nesting(sql: &str) -> usize {
    let bytes = sql.as_bytes();
    // per open parenthesis: the depth before it, and where a new chain inside it starts
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut base = 0usize;
    let (mut depth, mut deepest, mut i) = (0usize, 0usize, 0usize);
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\'' | b'"' | b'`' => i = skip_past(bytes, i + 1, &[c]),
            b'-' if bytes.get(i + 1) == Some(&b'-') => i = skip_past(bytes, i + 2, b"\n"),
            b'/' if bytes.get(i + 1) == Some(&b'*') => i = skip_past(bytes, i + 2, b"*/"),
            b'(' | b'[' => {
                open.push((depth, base));
                depth += 1;
                base = depth;
                i += 1;
            }
            b')' | b']' => {
                (depth, base) = open.pop().unwrap_or((0, 0));
                i += 1;
            }
            b',' => {
                depth = base;
                i += 1;
            }
            c if is_operator(c) => {
                depth += 1;
                while i < bytes.len() && is_operator(bytes[i]) {
                    i += 1;
                }
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                match word_kind(&sql[start..i]) {
                    Word::Chain => depth += 1,
                    Word::Query => {
                        // a query block nests everything in it deeper
                        base = base.max(depth) + SELECT_WEIGHT;
                        depth = base;
                    }
                    Word::Clause => depth = base,
                    Word::Other => {}
                }
            }
            _ => i += 1,
        }
        deepest = deepest.max(depth);
    }
    deepest
}

fn is_operator(c: u8) -> bool {
    matches!(
        c,
        b'+' | b'-' | b'*' | b'/' | b'%' | b'<' | b'>' | b'=' | b'!' | b'|' | b'&' | b'^'
    )
}

/// The index just past the next `end` at or after `from` (the end of the text if none).
fn skip_past(bytes: &[u8], from: usize, end: &[u8]) -> usize {
    bytes[from.min(bytes.len())..]
        .windows(end.len())
        .position(|w| w == end)
        .map_or(bytes.len(), |p| from + p + end.len())
}

enum Word {
    /// Chains its neighbours like a binary operator (the planner nests one more level).
    Chain,
    /// Starts a query block.
    Query,
    /// Starts a new list or clause: what follows does not nest in what came before.
    Clause,
    Other,
}

fn word_kind(word: &str) -> Word {
    const CHAIN: [&str; 6] = ["AND", "OR", "UNION", "INTERSECT", "EXCEPT", "JOIN"];
    const CLAUSE: [&str; 10] = [
        "WHEN", "THEN", "ELSE", "FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "VALUES",
    ];
    let is = |list: &[&str]| list.iter().any(|k| k.eq_ignore_ascii_case(word));
    if is(&CHAIN) {
        Word::Chain
    } else if word.eq_ignore_ascii_case("SELECT") {
        Word::Query
    } else if is(&CLAUSE) {
        Word::Clause
    } else {
        Word::Other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chains_parentheses_and_queries_nest() {
        assert_eq!(nesting("select 1"), SELECT_WEIGHT);
        let chain = format!("select {}", vec!["1"; 101].join("+"));
        assert_eq!(nesting(&chain), SELECT_WEIGHT + 100);
        let parens = format!("select {}1{}", "(".repeat(50), ")".repeat(50));
        assert_eq!(nesting(&parens), SELECT_WEIGHT + 50);
        let ors = format!("select * from t where {}", vec!["a = 1"; 40].join(" OR "));
        assert_eq!(nesting(&ors), SELECT_WEIGHT + 40 + 39);
        let subqueries = format!(
            "select * from {}(select 1) t{}",
            "(select * from ".repeat(10),
            ") t".repeat(10)
        );
        assert_eq!(
            nesting(&subqueries),
            SELECT_WEIGHT + 11 * (SELECT_WEIGHT + 1)
        );
    }

    #[test]
    fn lists_and_quoted_text_do_not_nest() {
        let list = format!("select 1 where x in ({})", vec!["1"; 10_000].join(", "));
        assert!(nesting(&list) < 20);
        let text = format!("select '{}' -- ((((\n", "+(".repeat(10_000));
        assert_eq!(nesting(&text), SELECT_WEIGHT);
        let case = format!("select case {} end", "when x = 1 then 2 ".repeat(1000));
        assert!(nesting(&case) < 20);
        let values = format!("insert into t values {}", vec!["(1, 'a')"; 1000].join(", "));
        assert!(nesting(&values) < 20);
    }

    #[test]
    fn too_deep_is_an_error_not_an_abort() {
        let chain = format!("select {}", vec!["1"; 100_000].join("+"));
        let err = check(&chain).unwrap_err();
        assert!(matches!(err, HoodieError::TooDeep { .. }), "{err}");
        assert!(err.to_string().contains("nests"), "{err}");
        check("select 1 + 2 * (3 - 4)").unwrap();
    }
}
