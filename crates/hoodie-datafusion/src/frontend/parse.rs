//! One parse of a statement: its text is tokenized once in the session's dialect (with hoodie's
//! additions, [`HoodieDialect`]), and one parser over those tokens reads it, in hoodie's grammar
//! where the statement is one of Spark Hudi's and in DataFusion's ([`DFParser`]) otherwise,
//! as DataFusion's own parser extends sqlparser's.
//!
//! Three Spark forms sqlparser's grammar lacks are written in forms it has on the token stream
//! before the parse, keeping each token's place so errors still say where: the temporal
//! clause's spellings ([`temporal::normalise`]), an INSERT's column list after its PARTITION
//! clause, and MERGE's `UPDATE SET *` / `INSERT *` ([`merge::star_placeholders`]).

use datafusion::common::{not_impl_err, plan_datafusion_err};
use datafusion::config::ConfigOptions;
use datafusion::sql::parser::{DFParser, DFParserBuilder, Statement as DFStatement};
use sqlparser::keywords::Keyword;
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, TokenWithSpan, Tokenizer};

use super::dialect::HoodieDialect;
use super::{
    create, expect_end, merge, name_of, partition_ddl, perr, procedure, table_info, temporal,
    FrontStatement,
};
use crate::error::{HoodieError, Result};

/// How a session parses: its dialect and how deep a statement may nest.
#[derive(Debug, Clone)]
pub struct ParseOptions {
    /// `datafusion.sql_parser.dialect`.
    pub dialect: String,
    /// `datafusion.sql_parser.recursion_limit`.
    pub recursion_limit: usize,
}

impl ParseOptions {
    /// The session's parser settings.
    pub fn of(config: &ConfigOptions) -> Self {
        Self {
            dialect: config.sql_parser.dialect.to_string(),
            recursion_limit: config.sql_parser.recursion_limit.get(),
        }
    }
}

impl Default for ParseOptions {
    fn default() -> Self {
        Self::of(&ConfigOptions::default())
    }
}

/// A statement's tokens and how they were read. A statement of hoodie's grammar that turns out
/// to be DataFusion's (CREATE TABLE outside the warehouse, DESCRIBE of a table that is not
/// Hudi's, ...) is read from them again by DataFusion's parser.
#[derive(Debug)]
pub struct Source {
    tokens: Vec<TokenWithSpan>,
    // the dialect is named, not held: sqlparser's dialects are not `Send`, and a source is
    // kept across the awaits that decide whose statement it is
    options: ParseOptions,
}

impl Source {
    /// A parser at the start of the statement.
    fn parser<'a>(&self, dialect: &'a HoodieDialect) -> Result<DFParser<'a>> {
        Ok(DFParserBuilder::new(self.tokens.clone())
            .with_dialect(dialect)
            .with_recursion_limit(self.options.recursion_limit)
            .build()?)
    }

    /// The statement in DataFusion's grammar, its time-travel clauses made table functions.
    pub fn datafusion(&self) -> Result<DFStatement> {
        let dialect = HoodieDialect::named(&self.options.dialect)?;
        let mut statements = self.parser(&dialect)?.parse_statements()?;
        if statements.len() > 1 {
            return Err(not_impl_err!(
                "The context currently only supports a single SQL statement"
            )?);
        }
        let mut stmt = statements.pop_front().ok_or_else(|| {
            plan_datafusion_err!("No SQL statements were provided in the query string")
        })?;
        temporal::in_datafusion_statement(&mut stmt)?;
        Ok(stmt)
    }

    /// The significant tokens (no white space).
    fn words(&self) -> Vec<&Token> {
        self.tokens
            .iter()
            .map(|t| &t.token)
            .filter(|t| !matches!(t, Token::Whitespace(_)))
            .collect()
    }
}

/// A parsed statement and what it was read from.
#[derive(Debug)]
pub struct Parsed {
    /// The statement.
    pub statement: FrontStatement,
    /// Its tokens, for DataFusion where the statement turns out to be DataFusion's.
    pub source: Source,
}

/// Parses one statement of Hudi's Spark SQL dialect or DataFusion's.
pub fn parse(sql: &str, options: &ParseOptions) -> Result<Parsed> {
    let dialect = HoodieDialect::named(&options.dialect)?;
    let tokens = Tokenizer::new(&dialect, sql)
        .tokenize_with_location()
        .map_err(|e| HoodieError::Parse {
            message: e.to_string(),
        })?;
    let tokens = temporal::normalise(tokens)?;
    let lead = Lead::of(&tokens);
    let tokens = if lead.is(0, "INSERT") || lead.explains("INSERT") {
        columns_before_partition(tokens)
    } else if lead.is(0, "MERGE") || lead.explains("MERGE") {
        merge::star_placeholders(tokens)
    } else {
        tokens
    };
    let source = Source {
        tokens,
        options: options.clone(),
    };
    let statement = classify(&source, &dialect)?;
    Ok(Parsed { statement, source })
}

/// The first significant words of a statement.
struct Lead(Vec<Token>);

impl Lead {
    fn of(tokens: &[TokenWithSpan]) -> Self {
        Self(
            tokens
                .iter()
                .filter(|t| !matches!(t.token, Token::Whitespace(_)))
                .take(5)
                .map(|t| t.token.clone())
                .collect(),
        )
    }

    fn is(&self, i: usize, w: &str) -> bool {
        super::is_word(self.0.get(i), w)
    }

    /// `EXPLAIN [ANALYZE] [VERBOSE] <what>`: a MERGE's stars and an INSERT's columns need the
    /// rewrite the statement itself gets.
    fn explains(&self, what: &str) -> bool {
        self.is(0, "EXPLAIN")
            && (1..4)
                .find(|&i| !(self.is(i, "ANALYZE") || self.is(i, "VERBOSE")))
                .is_some_and(|i| self.is(i, what))
    }
}

/// Reads the statement in the grammar its first words name.
fn classify(source: &Source, dialect: &HoodieDialect) -> Result<FrontStatement> {
    let lead = Lead::of(&source.tokens);
    let w = |i: usize, s: &str| lead.is(i, s);
    let mut df = source.parser(dialect)?;
    let p = &mut df.parser;
    let hoodies = if w(0, "CREATE") {
        classify_create(source, p)?
    } else if w(0, "CALL") {
        Some(FrontStatement::Call(procedure::parse_call(p)?))
    } else if (w(0, "RUN") || w(0, "SCHEDULE") || w(0, "SHOW")) && w(1, "COMPACTION") {
        Some(FrontStatement::Call(procedure::parse_compaction_command(
            p,
        )?))
    } else if w(0, "DROP") && w(1, "TABLE") {
        Some(drop_table(p)?)
    } else if w(0, "DESCRIBE")
        || w(0, "DESC")
        || (w(0, "SHOW") && (w(1, "TBLPROPERTIES") || w(1, "CREATE")))
    {
        table_info::parse_table_info(p)?
    } else if w(0, "TRUNCATE") {
        Some(partition_ddl::parse_truncate(p)?)
    } else if w(0, "SET") || w(0, "RESET") {
        set_or_reset(p, w(0, "RESET"))?
    } else if w(0, "SHOW") && w(1, "PARTITIONS") {
        p.next_token();
        p.next_token();
        let name = name_of(&p.parse_object_name(false).map_err(perr)?);
        expect_end(p)?;
        Some(FrontStatement::ShowPartitions { name })
    } else if w(0, "ALTER") && w(1, "TABLE") {
        alter_table(p)?
    } else if w(0, "MERGE") || lead.explains("MERGE") {
        Some(FrontStatement::Merge(Box::new(sqlparser_statement(p)?)))
    } else if w(0, "UPDATE") {
        Some(FrontStatement::Update(Box::new(sqlparser_statement(p)?)))
    } else if w(0, "INSERT") || lead.explains("INSERT") {
        Some(FrontStatement::Insert(Box::new(sqlparser_statement(p)?)))
    } else {
        None
    };
    let Some(mut statement) = hoodies else {
        return Ok(FrontStatement::PassThrough(Box::new(source.datafusion()?)));
    };
    match &mut statement {
        FrontStatement::Merge(s) | FrontStatement::Update(s) | FrontStatement::Insert(s) => {
            temporal::to_table_functions(s.as_mut())?
        }
        FrontStatement::CreateUsing(c) | FrontStatement::CreateDefault(c) => {
            if let Some(q) = &mut c.query {
                temporal::to_table_functions(q.as_mut())?
            }
        }
        _ => {}
    }
    Ok(statement)
}

/// One statement of sqlparser's grammar, to its end.
fn sqlparser_statement(p: &mut Parser) -> Result<sqlparser::ast::Statement> {
    let stmt = p.parse_statement().map_err(perr)?;
    expect_end(p)?;
    Ok(stmt)
}

/// Classifies a `CREATE ...` statement: `CREATE TABLE ... USING` is hoodie's, `CREATE TABLE`
/// without USING is hoodie's where the name lands in the warehouse, the rest DataFusion's.
fn classify_create(source: &Source, p: &mut Parser) -> Result<Option<FrontStatement>> {
    let toks = source.words();
    let w = |i: usize, s: &str| super::is_word(toks.get(i).copied(), s);
    let external = toks
        .iter()
        .take_while(|t| !matches!(t, Token::LParen))
        .any(|t| super::is_word(Some(t), "EXTERNAL"));
    let create_table = w(1, "TABLE") || (w(1, "OR") && w(2, "REPLACE") && w(3, "TABLE"));
    if external || !create_table {
        return Ok(None);
    }
    // USING at paren depth 0 before AS
    let mut depth = 0i32;
    for t in &toks {
        match t {
            Token::LParen => depth += 1,
            Token::RParen => depth -= 1,
            _ if depth == 0 && super::is_word(Some(t), "AS") => break,
            _ if depth == 0 && super::is_word(Some(t), "USING") => {
                return create::parse_create_using(p).map(|c| Some(FrontStatement::CreateUsing(c)))
            }
            _ => {}
        }
    }
    // no USING: a Hudi table where the name lands in the warehouse (decided by the
    // caller, which knows the session's schemas), else DataFusion's own CREATE TABLE
    let temporary = toks
        .iter()
        .take(4)
        .any(|t| super::is_word(Some(t), "TEMPORARY"));
    if !temporary {
        if let Ok(c) = create::parse_create_using(p) {
            return Ok(Some(FrontStatement::CreateDefault(c)));
        }
    }
    Ok(None)
}

/// `DROP TABLE [IF EXISTS] name [PURGE]`.
fn drop_table(p: &mut Parser) -> Result<FrontStatement> {
    p.expect_keyword(Keyword::DROP).map_err(perr)?;
    p.expect_keyword(Keyword::TABLE).map_err(perr)?;
    let if_exists = p.parse_keywords(&[Keyword::IF, Keyword::EXISTS]);
    let name = name_of(&p.parse_object_name(false).map_err(perr)?);
    let purge = p.parse_keyword(Keyword::PURGE);
    expect_end(p)?;
    Ok(FrontStatement::DropTable {
        name,
        if_exists,
        purge,
    })
}

/// `SET key = value` and `RESET [key]` of a hoodie, Spark or object-store key (others are
/// DataFusion's: `None`).
fn set_or_reset(p: &mut Parser, reset: bool) -> Result<Option<FrontStatement>> {
    let mut last = p.next_token().span;
    let mut key = String::new();
    loop {
        match p.peek_token().token {
            Token::Eq | Token::EOF | Token::SemiColon => break,
            Token::Word(x) => key.push_str(&x.value),
            Token::Period => key.push('.'),
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => key.push_str(&s),
            other => key.push_str(&other.to_string()),
        }
        last = p.next_token().span;
    }
    let lower = key.to_ascii_lowercase();
    // hoodie.* and the Spark keys Hudi reads (spark.sql.sources.partitionOverwriteMode)
    let is_hoodie = lower.starts_with("hoodie.")
        || lower.starts_with("spark.sql.")
        || hoodie_format::location::storage_option(&lower, "").is_some();
    if reset {
        return Ok(
            (key.is_empty() || is_hoodie).then(|| FrontStatement::Reset {
                key: (!key.is_empty()).then_some(key),
            }),
        );
    }
    if !is_hoodie {
        return Ok(None);
    }
    let eq = p.next_token();
    if eq.token != Token::Eq {
        // the end of the text has no place of its own: point just past the key's last token
        let at = match eq.span.start.line {
            0 => sqlparser::tokenizer::Span::new(last.end, last.end),
            _ => eq.span,
        };
        return Err(super::parse_error_at(
            format!("expected SET {key} = <value>, found {}", eq.token),
            at,
        ));
    }
    let mut value = String::new();
    loop {
        match p.next_token().token {
            Token::EOF | Token::SemiColon => break,
            Token::SingleQuotedString(s) | Token::DoubleQuotedString(s) => value.push_str(&s),
            Token::Word(x) => value.push_str(&x.value),
            other => value.push_str(&other.to_string()),
        }
    }
    Ok(Some(FrontStatement::Set { key, value }))
}

/// `ALTER TABLE name` DROP PARTITION, ADD COLUMNS, RENAME TO or SET TBLPROPERTIES (others
/// are DataFusion's: `None`).
fn alter_table(p: &mut Parser) -> Result<Option<FrontStatement>> {
    p.next_token();
    p.next_token();
    let name = name_of(&p.parse_object_name(false).map_err(perr)?);
    if let Some(drop) = partition_ddl::parse_drop_partitions(p, &name)? {
        return Ok(Some(drop));
    }
    if p.parse_keyword(Keyword::ADD) {
        if !(p.parse_keyword(Keyword::COLUMNS) || p.parse_keyword(Keyword::COLUMN)) {
            return Ok(None);
        }
        let columns = super::columns::parse_column_list(p)?;
        expect_end(p)?;
        return Ok(Some(FrontStatement::AddColumns { name, columns }));
    }
    if p.parse_keywords(&[Keyword::RENAME, Keyword::TO]) {
        let new_name = name_of(&p.parse_object_name(false).map_err(perr)?);
        expect_end(p)?;
        return Ok(Some(FrontStatement::RenameTable { name, new_name }));
    }
    if p.parse_keyword(Keyword::SET) && p.parse_keyword(Keyword::TBLPROPERTIES) {
        let properties = create::parse_properties(p)?;
        expect_end(p)?;
        return Ok(Some(FrontStatement::AlterSetProperties {
            name,
            properties,
        }));
    }
    Ok(None)
}

/// Spark writes `INSERT INTO t PARTITION (...) (c1, c2) ...`; sqlparser takes the column list
/// only before the PARTITION clause, so a list that follows it is moved in front of it.
fn columns_before_partition(tokens: Vec<TokenWithSpan>) -> Vec<TokenWithSpan> {
    let significant: Vec<usize> = (0..tokens.len())
        .filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_)))
        .collect();
    let Some(p) = significant
        .iter()
        .position(|&i| super::is_word(Some(&tokens[i].token), "PARTITION"))
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
    if super::is_word(after, "SELECT") || super::is_word(after, "WITH") {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::{classify, CreateTableUsing};
    use sqlparser::ast::Statement;

    fn parse_create_using(sql: &str) -> Result<CreateTableUsing> {
        match classify(sql)? {
            FrontStatement::CreateUsing(c) => Ok(c),
            other => panic!("not CREATE ... USING: {other:?}"),
        }
    }

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
    fn the_sessions_dialect_reads_the_statement() {
        let mysql = ParseOptions {
            dialect: "mysql".into(),
            ..ParseOptions::default()
        };
        // MySQL's backquoted names, in hoodie's grammar and in DataFusion's with time travel
        let FrontStatement::CreateUsing(c) =
            parse("CREATE TABLE `My T` (`Id` INT) USING hudi", &mysql)
                .unwrap()
                .statement
        else {
            panic!("not CREATE ... USING")
        };
        assert_eq!(
            (c.name.as_str(), c.columns[0].name().as_str()),
            ("My T", "Id")
        );
        let FrontStatement::PassThrough(q) = parse("SELECT * FROM `t` TIMESTAMP AS OF '1'", &mysql)
            .unwrap()
            .statement
        else {
            panic!("not DataFusion's")
        };
        assert_eq!(
            q.to_string(),
            "SELECT * FROM hudi_time_travel('`t`', '1') AS `t`"
        );
        // PostgreSQL's reads a backquote as no quote at all
        let pg = ParseOptions {
            dialect: "postgresql".into(),
            ..ParseOptions::default()
        };
        assert!(parse("CREATE TABLE `My T` (`Id` INT) USING hudi", &pg).is_err());
    }

    #[test]
    fn set_errors_say_where() {
        // without `=` the key runs to the end: the error points past its last word
        let e = classify("SET hoodie.datasource.write.operation\n  upsert")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("expected SET hoodie.datasource.write.operationupsert = <value>, found EOF")
                && e.contains("at Line: 2, Column: 9"),
            "{e}"
        );
        let e = classify("RUN COMPACTION ON t AT now")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("expected RUN COMPACTION ON <table | 'path'> [AT instant], found now")
                && e.contains("Column: 24"),
            "{e}"
        );
    }

    #[test]
    fn classifies_statements() {
        assert!(
            matches!(classify("SET hoodie.datasource.write.operation = 'upsert'").unwrap(), FrontStatement::Set { ref key, ref value } if key == "hoodie.datasource.write.operation" && value == "upsert")
        );
        assert!(matches!(
            classify("SET datafusion.execution.batch_size = 10").unwrap(),
            FrontStatement::PassThrough(_)
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
            FrontStatement::PassThrough(_)
        ));
        // without USING: a Hudi table where the name lands in the warehouse (the caller
        // decides); a temporary table is DataFusion's
        assert!(matches!(
            classify("create table m as select 1").unwrap(),
            FrontStatement::CreateDefault(c) if c.format == "hudi" && c.query.is_some()
        ));
        assert!(matches!(
            classify("create temporary table m (id int)").unwrap(),
            FrontStatement::PassThrough(_)
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
