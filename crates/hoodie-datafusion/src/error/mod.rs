//! Errors of the DataFusion integration.

mod statement;

use datafusion::error::DataFusionError;
use hoodie_format::FormatError;

pub use statement::{
    AddColumnError, DdlError, InsertError, MergeError, PartitionError, ProcedureError,
    ProtectedAssignment, ProtectedColumn,
};

/// Everything that can go wrong while running a statement through hoodie.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HoodieError {
    /// An error raised by DataFusion while planning or executing.
    #[error("{}", df_message(.0))]
    DataFusion(#[from] DataFusionError),
    /// An Arrow error.
    #[error("{0}")]
    Arrow(#[from] datafusion::arrow::error::ArrowError),
    /// An error of the Hudi format layer.
    #[error("{0}")]
    Format(#[from] FormatError),
    /// A statement could not be parsed.
    #[error("SQL parse error: {message}")]
    Parse {
        /// What the parser said.
        message: String,
    },
    /// The statement names a table that does not exist.
    #[error("table {name} not found; create it with CREATE TABLE ... USING hudi, or open an existing table with CREATE EXTERNAL TABLE {name} STORED AS HUDI LOCATION '...'")]
    TableNotFound {
        /// The table name.
        name: String,
    },
    /// A table or database name that cannot be one folder of the warehouse.
    #[error("\"{name}\" is not a valid {kind} name: {reason}; a {kind} name is one folder name of the warehouse")]
    InvalidName {
        /// "table" or "database".
        kind: &'static str,
        /// The name as given (escaped).
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A table of that name exists already.
    #[error("table {name} already exists (use IF NOT EXISTS to skip creating it)")]
    TableExists {
        /// The table name.
        name: String,
    },
    /// A column named in the statement does not exist.
    #[error("{role} column `{column}` is not a column of table {table} (columns: {columns})")]
    UnknownColumn {
        /// Which role the column plays (primaryKey, preCombineField, partition, ...).
        role: &'static str,
        /// The column.
        column: String,
        /// The table.
        table: String,
        /// The table's columns.
        columns: String,
    },
    /// A name matches two columns of one table that differ only in case.
    #[error("column name `{name}` is ambiguous: table {table} has columns `{candidates}`, which differ only in case (SET spark.sql.caseSensitive = true to tell them apart)")]
    AmbiguousColumn {
        /// The name as written.
        name: String,
        /// The table.
        table: String,
        /// The columns it matches, joined by "`, `".
        candidates: String,
    },
    /// A MERGE INTO hoodie refuses, as Hudi does.
    #[error("{0}")]
    Merge(#[from] MergeError),
    /// An UPDATE assigns a column it may not change.
    #[error("{0}")]
    ProtectedAssignment(#[from] ProtectedAssignment),
    /// A `CALL` whose arguments do not bind to the procedure's parameters.
    #[error("{0}")]
    Procedure(#[from] ProcedureError),
    /// A partition spec that names no partition of the table.
    #[error("{0}")]
    Partition(#[from] PartitionError),
    /// A CREATE, DROP, ALTER or RENAME of a table that hoodie refuses.
    #[error("{0}")]
    Ddl(#[from] DdlError),
    /// An INSERT hoodie refuses.
    #[error("{0}")]
    Insert(#[from] InsertError),
    /// An `ALTER TABLE ... ADD COLUMNS` hoodie refuses.
    #[error("{0}")]
    AddColumn(#[from] AddColumnError),
    /// A `SET hoodie.*` in a session hoodie is not installed in.
    #[error("cannot set {key}: hoodie is not installed in this session (build it with SessionStateBuilder::with_hoodie)")]
    NotInstalled {
        /// The option.
        key: String,
    },
    /// `VERSION AS OF`, which Hudi does not have.
    #[error(
        "Version expression is not supported for time travel (use TIMESTAMP AS OF '<instant>')"
    )]
    VersionAsOf,
    /// `TIMESTAMP AS OF` on the table a statement writes to.
    #[error("TIMESTAMP AS OF reads a table as it was; the table a statement writes to cannot take it (write to the table itself, or read the old state in the statement's source)")]
    TimeTravelTarget,
    /// A column type hoodie cannot store.
    #[error("unsupported column type {type_name}")]
    UnsupportedColumnType {
        /// The type as written.
        type_name: String,
    },
    /// A decimal type outside Spark's bounds.
    #[error("invalid decimal type {type_name}: precision 1..38, 0 <= scale <= precision")]
    InvalidDecimal {
        /// The type as written.
        type_name: String,
    },
    /// An incremental read without its begin instant.
    #[error("Specify the start completion time to pull from using option {key}")]
    NoBeginInstant {
        /// The option to set.
        key: &'static str,
    },
    /// A CDC read asked for by a session option (its rows are not the table's columns).
    #[error("a CDC read (hoodie.datasource.query.incremental.format = cdc) as a session option of {table}: CDC rows have their own columns; use hudi_table_changes('{table}', 'cdc', ...) or CREATE EXTERNAL TABLE ... OPTIONS with the read options")]
    CdcAsSessionOption {
        /// The table.
        table: String,
    },
    /// `hoodie.query.as.ro.table` with a value other than true or false.
    #[error("invalid value {value:?} for {key}: true (read-optimized) or false (snapshot)")]
    InvalidViewOption {
        /// The option.
        key: String,
        /// The value given.
        value: String,
    },
    /// A state hoodie's own code should never reach.
    #[error("internal error: {what} (a bug in hoodie)")]
    Internal {
        /// What went wrong.
        what: &'static str,
    },
    /// A statement that needs a Hudi table names another kind of table.
    #[error("{name} is not a Hudi table")]
    NotAHudiTable {
        /// The table named.
        name: String,
    },
    /// A write to a read-only view of a table (`_ro`, `_rt`, a table function's result).
    #[error("{name} is a read-only {query} view of a Hudi table; write to the table itself")]
    ReadOnlyView {
        /// The view's name.
        name: String,
        /// The query it runs.
        query: String,
    },
    /// An UPDATE, DELETE or MERGE while the session's read options ask for another query
    /// than the latest snapshot.
    #[error("UPDATE, DELETE and MERGE change the latest snapshot of {table}, but the session's read options ask for another query ({query}); RESET hoodie.datasource.query.type first")]
    ChangeUnderOtherQuery {
        /// The table.
        table: String,
        /// The query the read options ask for.
        query: String,
    },
    /// A value written into a column cannot be cast to the column's type.
    #[error("{0}")]
    ValueDoesNotFit(Box<ValueDoesNotFit>),
    /// A `hoodie.*` option has a value its key does not take.
    #[error("{0}")]
    InvalidOption(#[from] hoodie_format::config::InvalidValue),
    /// A statement nests too deeply to be planned without risking the stack, or deeper than
    /// [`MAX_NESTING`](crate::MAX_NESTING).
    #[error("statement nests about {depth} levels deep (chained operators, parentheses, subqueries), more than the {limit} {} allows; split it up (a long OR chain of equalities is an IN list, a long UNION a VALUES list){}", if *.by_stack { "this thread's stack" } else { "hoodie" }, if *.by_stack { ", or run it on a thread with a larger stack (the hoodie shell uses 256 MiB)" } else { "" })]
    TooDeep {
        /// The estimated nesting of the statement.
        depth: usize,
        /// The deepest nesting allowed here.
        limit: usize,
        /// Whether the limit comes from the calling thread's remaining stack.
        by_stack: bool,
    },
    /// The upgrade a write runs first (the session's `hoodie.write.table.version` is above the
    /// table's, `hoodie.write.auto.upgrade` on) failed; nothing of the write was written.
    #[error("a write to {table} first upgrades it from table version {from} to {to} (the session's hoodie.write.table.version, with hoodie.write.auto.upgrade on), and the upgrade failed, so nothing was written: {source}. SET hoodie.write.auto.upgrade = false (or hoodie.write.table.version = {from}) to write the table in version {from}")]
    AutoUpgrade {
        /// The table written to.
        table: String,
        /// Its version.
        from: u32,
        /// The version the session asks for.
        to: u32,
        /// Why the upgrade failed.
        #[source]
        source: Box<HoodieError>,
    },
    /// A feature hoodie does not support (yet).
    #[error("not supported yet: {feature}")]
    Unsupported {
        /// What is not supported, and what to do instead.
        feature: String,
    },
    /// An I/O error on the local file system (warehouse).
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// The message of a DataFusion error without the wrapping DataFusion adds around errors that
/// hoodie raised itself ("External error: ...").
pub fn df_message(e: &DataFusionError) -> String {
    match e {
        DataFusionError::External(inner) => match inner.downcast_ref::<DataFusionError>() {
            Some(df) => df_message(df),
            None => inner.to_string(),
        },
        // our own analyzer rule's name adds nothing for the user
        DataFusionError::Context(ctx, inner) if ctx == "hudi_dml" => df_message(inner),
        DataFusionError::Context(ctx, inner) => format!("{ctx}: {}", df_message(inner)),
        DataFusionError::Shared(inner) => df_message(inner),
        // one prefix, and the parser's message as it wrote it (not its Debug form)
        DataFusionError::SQL(e, _) => format!("SQL parse error: {}", parser_message(e)),
        other => other.to_string(),
    }
}

/// A parser error's text without the `sql parser error: ` its Display starts with.
pub fn parser_message(e: &sqlparser::parser::ParserError) -> String {
    let text = e.to_string();
    text.strip_prefix("sql parser error: ")
        .map(str::to_string)
        .unwrap_or(text)
}

/// Result alias of this crate.
pub type Result<T, E = HoodieError> = std::result::Result<T, E>;

impl HoodieError {
    /// Converts into a DataFusion error (for trait methods that must return one).
    pub fn into_datafusion(self) -> DataFusionError {
        match self {
            HoodieError::DataFusion(e) => e,
            other => DataFusionError::External(Box::new(other)),
        }
    }
}

/// Converts a format error into a DataFusion error.
pub fn df_err(e: FormatError) -> DataFusionError {
    DataFusionError::External(Box::new(HoodieError::Format(e)))
}

/// A value written into a column that cannot be cast to the column's type
/// ([`HoodieError::ValueDoesNotFit`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot write {value} into column {column} of {table} ({to}): {detail}")]
pub struct ValueDoesNotFit {
    /// The value, or "a value" when it is computed row by row.
    pub value: String,
    /// The column.
    pub column: String,
    /// The table.
    pub table: String,
    /// The column's type.
    pub to: String,
    /// Why the cast failed.
    pub detail: String,
}
