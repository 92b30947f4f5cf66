//! The SQL front-end: the statements of Hudi's Spark SQL dialect that sqlparser 0.62 cannot
//! parse or DataFusion cannot plan. Everything else goes to DataFusion unchanged.

pub mod columns;
pub mod merge;
pub mod partition_ddl;
pub mod procedure;
pub mod table_info;
pub mod time_travel;
pub mod types;

use datafusion::arrow::datatypes::{Field, Schema};
use sqlparser::ast::{ObjectName, Query, Statement};
use sqlparser::dialect::GenericDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Span, Token, TokenWithSpan, Tokenizer};

use crate::error::{HoodieError, Result};

/// `CREATE TABLE ... USING <format>` in any clause order (Spark's grammar).
#[derive(Debug, Clone)]
pub struct CreateTableUsing {
    /// `CREATE OR REPLACE`.
    pub or_replace: bool,
    /// `IF NOT EXISTS`.
    pub if_not_exists: bool,
    /// Table name.
    pub name: String,
    /// Declared columns (empty when not declared).
    pub columns: Vec<Field>,
    /// `USING` format, lower case.
    pub format: String,
    /// `PARTITIONED BY` columns.
    pub partitioned_by: Vec<String>,
    /// `TBLPROPERTIES` / `OPTIONS` entries in order.
    pub options: Vec<(String, String)>,
    /// `LOCATION`.
    pub location: Option<String>,
    /// `AS <query>`.
    pub query: Option<Box<Query>>,
}

/// A statement the front-end handles itself.
#[derive(Debug, Clone)]
pub enum FrontStatement {
    /// CREATE TABLE ... USING.
    CreateUsing(CreateTableUsing),
    /// CREATE TABLE without USING [AS query]: a Hudi table where the name lands in the
    /// warehouse, else DataFusion's own statement.
    CreateDefault(CreateTableUsing),
    /// DROP TABLE [IF EXISTS] t [PURGE].
    DropTable {
        /// Table name.
        name: String,
        /// IF EXISTS.
        if_exists: bool,
        /// PURGE.
        purge: bool,
    },
    /// SET hoodie.k = v.
    Set {
        /// Key.
        key: String,
        /// Value.
        value: String,
    },
    /// RESET [hoodie.k].
    Reset {
        /// Key (None: every hoodie option).
        key: Option<String>,
    },
    /// SHOW PARTITIONS t.
    ShowPartitions {
        /// Table name.
        name: String,
    },
    /// ALTER TABLE t SET TBLPROPERTIES (...).
    AlterSetProperties {
        /// Table name.
        name: String,
        /// Properties.
        properties: Vec<(String, String)>,
    },
    /// TRUNCATE [TABLE] t [PARTITION (...)].
    Truncate {
        /// Table name.
        name: String,
        /// The partition spec, if one is given.
        partition: Option<partition_ddl::PartitionSpec>,
    },
    /// ALTER TABLE t DROP [IF EXISTS] PARTITION (...) [, PARTITION (...)] [PURGE].
    DropPartitions {
        /// Table name.
        name: String,
        /// IF EXISTS.
        if_exists: bool,
        /// The partition specs.
        specs: Vec<partition_ddl::PartitionSpec>,
        /// PURGE.
        purge: bool,
    },
    /// DESCRIBE, SHOW TBLPROPERTIES or SHOW CREATE TABLE of a table (Spark's result shapes on
    /// a Hudi table; DataFusion's statement on any other).
    TableInfo {
        /// Table name.
        name: String,
        /// What is asked.
        info: table_info::TableInfo,
    },
    /// ALTER TABLE t ADD COLUMNS (c type [NOT NULL] [COMMENT '...'], ...).
    AddColumns {
        /// Table name.
        name: String,
        /// The columns to add, as written.
        columns: Vec<datafusion::arrow::datatypes::Field>,
    },
    /// ALTER TABLE t RENAME TO u.
    RenameTable {
        /// Table name.
        name: String,
        /// The new name.
        new_name: String,
    },
    /// An INSERT (parsed, so a Hudi target can be rewritten).
    Insert(Box<Statement>),
    /// A MERGE INTO (or an EXPLAIN of one), parsed with Hudi's `UPDATE SET *` / `INSERT *`
    /// (stars not yet expanded).
    Merge(Box<Statement>),
    /// An UPDATE (parsed, so its names can be resolved as Spark does).
    Update(Box<Statement>),
    /// `CALL <procedure>(...)`, or a command that stands for one (`RUN COMPACTION ON t`).
    Call(procedure::ProcedureCall),
    /// Anything else: run by DataFusion as written.
    PassThrough,
}

/// A parse error of hoodie's own grammar at `span`, placed as sqlparser places its own
/// (`... at Line: 1, Column: 20`).
fn parse_error_at(message: String, span: Span) -> HoodieError {
    let at = span.start;
    let message = match at.line {
        0 => message,
        line => format!("{message} at Line: {line}, Column: {}", at.column),
    };
    HoodieError::Parse { message }
}

fn perr(e: ParserError) -> HoodieError {
    HoodieError::Parse {
        message: crate::error::parser_message(&e),
    }
}

fn words(sql: &str) -> Result<Vec<Token>> {
    let toks = Tokenizer::new(&GenericDialect {}, sql)
        .tokenize()
        .map_err(|e| HoodieError::Parse {
            message: e.to_string(),
        })?;
    Ok(toks
        .into_iter()
        .filter(|t| !matches!(t, Token::Whitespace(_)))
        .collect())
}

fn is_word(t: Option<&Token>, w: &str) -> bool {
    matches!(t, Some(Token::Word(x)) if x.value.eq_ignore_ascii_case(w) && x.quote_style.is_none())
}

/// A table name as DataFusion resolves it: unquoted parts lower-cased.
pub fn name_of(o: &ObjectName) -> String {
    o.0.iter()
        .map(|p| {
            p.as_ident()
                .map(|i| {
                    if i.quote_style.is_some() {
                        i.value.clone()
                    } else {
                        i.value.to_ascii_lowercase()
                    }
                })
                .unwrap_or_else(|| p.to_string())
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// A table name as [`name_of`] gives it (already normalised: its parts are exact) as a
/// `TableReference`; parsing the text again would lower-case a quoted `"MyT"`.
pub fn exact_table_ref(name: &str) -> datafusion::common::TableReference {
    use datafusion::common::TableReference;
    let parts: Vec<&str> = name.split('.').collect();
    match parts.as_slice() {
        [c, s, t] => TableReference::full(*c, *s, *t),
        [s, t] => TableReference::partial(*s, *t),
        _ => TableReference::bare(name),
    }
}

/// Classifies a `CREATE ...` statement: `CREATE TABLE ... USING` is hoodie's, `CREATE TABLE`
/// without USING is hoodie's where the name lands in the warehouse, the rest DataFusion's.
fn classify_create(sql: &str, toks: &[Token]) -> Result<FrontStatement> {
    let w = |i: usize, s: &str| is_word(toks.get(i), s);
    let external = toks
        .iter()
        .take_while(|t| !matches!(t, Token::LParen))
        .any(|t| is_word(Some(t), "EXTERNAL"));
    let create_table = w(1, "TABLE") || (w(1, "OR") && w(2, "REPLACE") && w(3, "TABLE"));
    if external || !create_table {
        return Ok(FrontStatement::PassThrough);
    }
    // USING at paren depth 0 before AS
    let mut depth = 0i32;
    for t in toks {
        match t {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ if depth == 0 && is_word(Some(t), "AS") => break,
            _ if depth == 0 && is_word(Some(t), "USING") => {
                return parse_create_using(sql).map(FrontStatement::CreateUsing)
            }
            _ => {}
        }
    }
    // no USING: a Hudi table where the name lands in the warehouse (decided by the
    // caller, which knows the session's schemas), else DataFusion's own CREATE TABLE
    let temporary = toks.iter().take(4).any(|t| is_word(Some(t), "TEMPORARY"));
    if !temporary {
        if let Ok(c) = parse_create_using(sql) {
            return Ok(FrontStatement::CreateDefault(c));
        }
    }
    Ok(FrontStatement::PassThrough)
}

/// Classifies one statement.
pub fn classify(sql: &str) -> Result<FrontStatement> {
    let toks = words(sql)?;
    let w = |i: usize, s: &str| is_word(toks.get(i), s);
    if w(0, "CREATE") {
        return classify_create(sql, &toks);
    }
    if w(0, "CALL") {
        return procedure::parse_call(sql).map(FrontStatement::Call);
    }
    if let Some(call) = procedure::parse_compaction_command(sql)? {
        return Ok(FrontStatement::Call(call));
    }
    if w(0, "DROP") && w(1, "TABLE") {
        return classify_drop_table(sql);
    }
    if w(0, "DESCRIBE")
        || w(0, "DESC")
        || (w(0, "SHOW") && (w(1, "TBLPROPERTIES") || w(1, "CREATE")))
    {
        if let Some(stmt) = table_info::parse_table_info(sql)? {
            return Ok(stmt);
        }
        return Ok(FrontStatement::PassThrough);
    }
    if w(0, "TRUNCATE") {
        return partition_ddl::parse_truncate(sql);
    }
    if w(0, "SET") || w(0, "RESET") {
        return classify_set(&toks, w(0, "RESET"));
    }
    if w(0, "SHOW") && w(1, "PARTITIONS") {
        let (mut p, name) = after_two_words(sql)?;
        expect_end(&mut p)?;
        return Ok(FrontStatement::ShowPartitions { name });
    }
    if w(0, "ALTER") && w(1, "TABLE") {
        return classify_alter_table(sql);
    }
    // EXPLAIN [ANALYZE] [VERBOSE] <statement>: a MERGE's stars and an INSERT's columns need the
    // rewrite the statement itself gets
    let explains = |what: &str| {
        w(0, "EXPLAIN")
            && (1..4)
                .find(|&i| !(w(i, "ANALYZE") || w(i, "VERBOSE")))
                .is_some_and(|i| w(i, what))
    };
    if w(0, "MERGE") || explains("MERGE") {
        return Ok(FrontStatement::Merge(Box::new(merge::parse_merge(sql)?)));
    }
    if w(0, "UPDATE") {
        let stmt = Parser::new(&GenericDialect {})
            .try_with_sql(sql)
            .map_err(perr)?
            .parse_statement()
            .map_err(perr)?;
        return Ok(FrontStatement::Update(Box::new(stmt)));
    }
    if w(0, "INSERT") || explains("INSERT") {
        return classify_insert(sql);
    }
    Ok(FrontStatement::PassThrough)
}

/// `DROP TABLE [IF EXISTS] name [PURGE]`.
fn classify_drop_table(sql: &str) -> Result<FrontStatement> {
    let mut p = Parser::new(&GenericDialect {})
        .try_with_sql(sql)
        .map_err(perr)?;
    p.expect_keyword(Keyword::DROP).map_err(perr)?;
    p.expect_keyword(Keyword::TABLE).map_err(perr)?;
    let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
    let name = name_of(&p.parse_object_name(false).map_err(perr)?);
    let purge = p.parse_keyword(Keyword::PURGE);
    expect_end(&mut p)?;
    Ok(FrontStatement::DropTable {
        name,
        if_exists,
        purge,
    })
}

/// `SET key = value` and `RESET [key]` of a hoodie, Spark or object-store key (others are
/// DataFusion's).
fn classify_set(toks: &[Token], reset: bool) -> Result<FrontStatement> {
    let mut key = String::new();
    let mut i = 1;
    while let Some(t) = toks.get(i) {
        match t {
            Token::Eq | Token::EOF | Token::SemiColon => break,
            Token::Word(x) => key.push_str(&x.value),
            Token::Period => key.push('.'),
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => key.push_str(s),
            other => key.push_str(&other.to_string()),
        }
        i += 1;
    }
    let lower = key.to_ascii_lowercase();
    // hoodie.* and the Spark keys Hudi reads (spark.sql.sources.partitionOverwriteMode)
    let is_hoodie = lower.starts_with("hoodie.")
        || lower.starts_with("spark.sql.")
        || hoodie_format::location::storage_option(&lower, "").is_some();
    if reset {
        return Ok(if key.is_empty() || is_hoodie {
            FrontStatement::Reset {
                key: (!key.is_empty()).then_some(key),
            }
        } else {
            FrontStatement::PassThrough
        });
    }
    if !is_hoodie {
        return Ok(FrontStatement::PassThrough);
    }
    if !matches!(toks.get(i), Some(Token::Eq)) {
        return Err(HoodieError::Parse {
            message: format!("expected SET {key} = <value>"),
        });
    }
    let value: String = toks[i + 1..]
        .iter()
        .filter(|t| !matches!(t, Token::EOF | Token::SemiColon))
        .map(|t| match t {
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => s.clone(),
            Token::Word(x) => x.value.clone(),
            other => other.to_string(),
        })
        .collect();
    Ok(FrontStatement::Set { key, value })
}

/// A parser of `sql` past its first two words (`SHOW PARTITIONS`, `ALTER TABLE`) and the
/// table name after them.
fn after_two_words(sql: &str) -> Result<(Parser<'static>, String)> {
    let mut p = Parser::new(&GenericDialect {})
        .try_with_sql(sql)
        .map_err(perr)?;
    p.next_token();
    p.next_token();
    let name = name_of(&p.parse_object_name(false).map_err(perr)?);
    Ok((p, name))
}

/// `ALTER TABLE name` DROP PARTITION, ADD COLUMNS, RENAME TO or SET TBLPROPERTIES (others
/// are DataFusion's).
fn classify_alter_table(sql: &str) -> Result<FrontStatement> {
    let (mut p, name) = after_two_words(sql)?;
    if let Some(drop) = partition_ddl::parse_drop_partitions(&mut p, &name)? {
        return Ok(drop);
    }
    if p.parse_keyword(Keyword::ADD) {
        if !(p.parse_keyword(Keyword::COLUMNS) || p.parse_keyword(Keyword::COLUMN)) {
            return Ok(FrontStatement::PassThrough);
        }
        let columns = columns::parse_column_list(&mut p)?;
        expect_end(&mut p)?;
        return Ok(FrontStatement::AddColumns { name, columns });
    }
    if p.parse_keywords(&[Keyword::RENAME, Keyword::TO]) {
        let new_name = name_of(&p.parse_object_name(false).map_err(perr)?);
        expect_end(&mut p)?;
        return Ok(FrontStatement::RenameTable { name, new_name });
    }
    if p.parse_keyword(Keyword::SET) && p.parse_keyword(Keyword::TBLPROPERTIES) {
        let properties = parse_properties(&mut p)?;
        expect_end(&mut p)?;
        return Ok(FrontStatement::AlterSetProperties { name, properties });
    }
    Ok(FrontStatement::PassThrough)
}

/// `INSERT`, in Spark's order of its column list and PARTITION clause too.
fn classify_insert(sql: &str) -> Result<FrontStatement> {
    // tokens with their places, so that a parse error says where (Line: .., Column: ..)
    let tokens = Tokenizer::new(&GenericDialect {}, sql)
        .tokenize_with_location()
        .map_err(|e| HoodieError::Parse {
            message: e.to_string(),
        })?;
    let stmt = Parser::new(&GenericDialect {})
        .with_tokens_with_locations(columns_before_partition(tokens))
        .parse_statement()
        .map_err(perr)?;
    Ok(FrontStatement::Insert(Box::new(stmt)))
}

/// Spark writes `INSERT INTO t PARTITION (...) (c1, c2) ...`; sqlparser takes the column list
/// only before the PARTITION clause, so a list that follows it is moved in front of it.
fn columns_before_partition(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let significant: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
        .collect();
    let Some(p) = significant
        .iter()
        .position(|&i| is_word(Some(&tokens[i].token), "PARTITION"))
    else {
        return tokens;
    };
    // the group after PARTITION, then a second group: the column list
    let group_end = |start: usize| -> Option<usize> {
        if tokens.get(significant[start]).map(|t| &t.token) != Some(&Token::LParen) {
            return None;
        }
        let mut depth = 0;
        for (k, &i) in significant.iter().enumerate().skip(start) {
            match tokens[i].token {
                Token::LParen => depth += 1,
                Token::RParen if depth == 1 => return Some(k),
                Token::RParen => depth -= 1,
                _ => {}
            }
        }
        None
    };
    let Some(spec_end) = (p + 1 < significant.len())
        .then(|| group_end(p + 1))
        .flatten()
    else {
        return tokens;
    };
    let cols_start = spec_end + 1;
    let Some(cols_end) = (cols_start < significant.len())
        .then(|| group_end(cols_start))
        .flatten()
    else {
        return tokens;
    };
    // a parenthesised query after PARTITION (...) is the source, not a column list
    let after = tokens.get(significant[cols_start + 1]).map(|t| &t.token);
    if is_word(after, "SELECT") || is_word(after, "WITH") {
        return tokens;
    }
    let (a, b, c) = (
        significant[p],
        significant[cols_start],
        significant[cols_end],
    );
    let mut out = tokens[..a].to_vec();
    out.extend_from_slice(&tokens[b..=c]);
    out.push(TokenWithSpan::wrap(Token::Whitespace(
        sqlparser::tokenizer::Whitespace::Space,
    )));
    out.extend_from_slice(&tokens[a..b]);
    out.extend_from_slice(&tokens[c + 1..]);
    out
}

fn expect_end(p: &mut Parser) -> Result<()> {
    let _ = p.consume_token(&Token::SemiColon);
    let t = p.peek_token();
    if t.token != Token::EOF {
        return Err(parse_error_at(
            format!("unexpected {} at the end of the statement", t.token),
            t.span,
        ));
    }
    Ok(())
}

/// `( key = value, ... )` with keys quoted or dotted identifiers and `=` optional.
fn parse_properties(p: &mut Parser) -> Result<Vec<(String, String)>> {
    p.expect_token(&Token::LParen).map_err(perr)?;
    let mut out = Vec::new();
    if p.consume_token(&Token::RParen) {
        return Ok(out);
    }
    loop {
        let TokenWithSpan { token, span } = p.next_token();
        let key = match token {
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => s,
            Token::Word(w) => {
                let mut k = w.value;
                while p.consume_token(&Token::Period) {
                    let TokenWithSpan { token, span } = p.next_token();
                    match token {
                        Token::Word(w) => {
                            k.push('.');
                            k.push_str(&w.value);
                        }
                        other => {
                            return Err(parse_error_at(
                                format!("expected a property name after '.', found {other}"),
                                span,
                            ))
                        }
                    }
                }
                k
            }
            other => {
                return Err(parse_error_at(
                    format!("expected a property name, found {other}"),
                    span,
                ))
            }
        };
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
pub fn parse_create_using(sql: &str) -> Result<CreateTableUsing> {
    let mut p = Parser::new(&GenericDialect {})
        .try_with_sql(sql)
        .map_err(perr)?;
    p.expect_keyword(Keyword::CREATE).map_err(perr)?;
    let or_replace = p.parse_keywords(&[Keyword::OR, Keyword::REPLACE]);
    p.expect_keyword(Keyword::TABLE).map_err(perr)?;
    let if_not_exists = p.parse_keywords(&[Keyword::IF, Keyword::NOT, Keyword::EXISTS]);
    let name = name_of(&p.parse_object_name(false).map_err(perr)?);
    let mut columns = Vec::new();
    if p.peek_token().token == Token::LParen {
        columns = columns::parse_column_list(&mut p)?;
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
            stmt.options.extend(parse_properties(&mut p)?);
        } else if p.parse_keyword(Keyword::LOCATION) {
            stmt.location = Some(p.parse_literal_string().map_err(perr)?);
        } else if p.parse_keyword(Keyword::COMMENT) {
            p.parse_literal_string().map_err(perr)?;
        } else if p.parse_keyword(Keyword::AS) {
            stmt.query = Some(p.parse_query().map_err(perr)?);
            expect_end(&mut p)?;
            break;
        } else {
            expect_end(&mut p)?;
            break;
        }
    }
    Ok(stmt)
}

/// The data columns of a CREATE statement as a schema.
pub fn schema_of(fields: &[Field]) -> Schema {
    Schema::new(fields.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_hudi_ddl_in_any_clause_order() {
        let s = parse_create_using(
            "create table if not exists h0 (id int, name string, price double, ts long, dt string) using hudi \
             tblproperties (primaryKey = 'id', preCombineField = 'ts', hoodie.index.type = 'BLOOM') \
             partitioned by (dt) location '/tmp/h0'",
        )
        .unwrap();
        assert!(s.if_not_exists);
        assert_eq!(s.name, "h0");
        assert_eq!(s.columns.len(), 5);
        assert_eq!(s.format, "hudi");
        assert_eq!(s.partitioned_by, vec!["dt"]);
        assert_eq!(
            s.options[2],
            ("hoodie.index.type".to_string(), "BLOOM".to_string())
        );
        assert_eq!(s.location.as_deref(), Some("/tmp/h0"));
        let c = parse_create_using(
            "CREATE TABLE c USING hudi LOCATION '/x' OPTIONS ('primaryKey' 'id') AS SELECT 1 AS id",
        )
        .unwrap();
        assert!(c.query.is_some());
        assert_eq!(
            c.options,
            vec![("primaryKey".to_string(), "id".to_string())]
        );
        assert!(parse_create_using("create table t (id int) using hudi bogus").is_err());
    }

    #[test]
    fn parse_errors_say_where() {
        let at = |sql: &str| match classify(sql) {
            Err(HoodieError::Parse { message }) => message,
            other => panic!("{sql}: {other:?}"),
        };
        // hoodie's own grammar: a property list, the end of a statement, a procedure argument
        let e = at("CREATE TABLE t (id INT) USING hudi TBLPROPERTIES (primaryKey = 'id', 7 = 'x')");
        assert!(
            e.contains("expected a property name, found 7 at Line: 1, Column: 70"),
            "{e}"
        );
        let e = at("DROP TABLE t PURGE\n  extra");
        assert!(
            e.contains("unexpected extra") && e.contains("at Line: 2, Column: 3"),
            "{e}"
        );
        let e = at("CALL show_commits(table => 1 + 2)");
        assert!(
            e.contains("literals, got 1 + 2 at Line: 1, Column: 28"),
            "{e}"
        );
        // sqlparser's, through INSERT's own token stream (PARTITION lists reordered)
        let e = at("INSERT INTO t PARTITION (dt = 'x') (id) VALUES (1 2)");
        assert!(e.contains("found: 2 at Line: 1, Column: 51"), "{e}");
        // EXPLAIN of an INSERT is parsed as the INSERT is, so its columns can be rewritten
        assert!(matches!(
            classify("EXPLAIN ANALYZE INSERT INTO t PARTITION (dt = 'x') (id) VALUES (1)").unwrap(),
            FrontStatement::Insert(s) if matches!(*s, Statement::Explain { .. })
        ));
    }

    #[test]
    fn classifies_statements() {
        assert!(
            matches!(classify("SET hoodie.datasource.write.operation = 'upsert'").unwrap(), FrontStatement::Set { ref key, ref value } if key == "hoodie.datasource.write.operation" && value == "upsert")
        );
        assert!(matches!(
            classify("SET datafusion.execution.batch_size = 10").unwrap(),
            FrontStatement::PassThrough
        ));
        assert!(matches!(
            classify("drop table if exists t purge").unwrap(),
            FrontStatement::DropTable {
                if_exists: true,
                purge: true,
                ..
            }
        ));
        assert!(matches!(
            classify("CREATE EXTERNAL TABLE t STORED AS HUDI LOCATION '/x'").unwrap(),
            FrontStatement::PassThrough
        ));
        // without USING: a Hudi table where the name lands in the warehouse (the caller
        // decides); a temporary table is DataFusion's
        assert!(matches!(
            classify("create table m as select 1").unwrap(),
            FrontStatement::CreateDefault(c) if c.format == "hudi" && c.query.is_some()
        ));
        assert!(matches!(
            classify("create temporary table m (id int)").unwrap(),
            FrontStatement::PassThrough
        ));
        assert!(matches!(
            classify("show partitions t").unwrap(),
            FrontStatement::ShowPartitions { .. }
        ));
        assert!(matches!(
            classify("alter table t set tblproperties ('a' = 'b')").unwrap(),
            FrontStatement::AlterSetProperties { .. }
        ));
        let FrontStatement::AddColumns { name, columns } =
            classify("ALTER TABLE t ADD COLUMNS (x INT, \"Yy\" STRING COMMENT 'c')").unwrap()
        else {
            panic!("not ADD COLUMNS")
        };
        assert_eq!(name, "t");
        let names: Vec<&str> = columns.iter().map(|f| f.name().as_str()).collect();
        assert_eq!(names, ["x", "Yy"]);
        let after = classify("alter table t add columns (x int after v)")
            .err()
            .unwrap();
        assert!(after
            .to_string()
            .contains("positions (FIRST, AFTER) are not supported"));
    }
}
