//! The SQL front-end: one parse of a statement ([`parse::parse`]) into what hoodie handles
//! itself (the statements of Hudi's Spark SQL dialect that DataFusion's grammar lacks or that
//! act differently on a Hudi table) or DataFusion's own statement.

pub mod columns;
mod create;
pub mod dialect;
pub mod merge;
pub mod parse;
pub mod partition_ddl;
pub mod procedure;
pub mod table_info;
pub mod temporal;
pub mod types;

use datafusion::arrow::datatypes::{Field, Schema};
use datafusion::sql::parser::Statement as DFStatement;
use sqlparser::ast::{ObjectName, Query, Statement};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Span, Token};

pub use parse::{parse, ParseOptions, Parsed};

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
    /// Anything else: DataFusion's statement, run by DataFusion.
    PassThrough(Box<DFStatement>),
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

fn is_word(t: Option<&Token>, w: &str) -> bool {
    matches!(t, Some(Token::Word(x)) if x.value.eq_ignore_ascii_case(w) && x.quote_style.is_none())
}

/// [`parse`] with a default session's settings, for tests.
#[cfg(test)]
pub(crate) fn classify(sql: &str) -> Result<FrontStatement> {
    parse(sql, &ParseOptions::default()).map(|p| p.statement)
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

pub(super) fn expect_end(p: &mut Parser) -> Result<()> {
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

/// The data columns of a CREATE statement as a schema.
pub fn schema_of(fields: &[Field]) -> Schema {
    Schema::new(fields.to_vec())
}
