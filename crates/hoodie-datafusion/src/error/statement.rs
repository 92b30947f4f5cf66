//! The structured refusals of statements hoodie checks itself: a MERGE INTO, an assignment
//! to a column a write may not change, a procedure call's arguments, a partition spec, a view
//! or a query a write cannot go through. Their messages are Spark-Hudi's where Spark has one
//! (so that scripts matching Spark's errors match ours); the fields let a caller match the
//! condition without reading the text.

/// A MERGE INTO Hudi refuses.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// An assignment to a column the target does not have.
    #[error("MERGE INTO cannot assign `{column}`: it is not a column of {table} (MERGE does not evolve the schema)")]
    UnknownTargetColumn {
        /// The column assigned.
        column: String,
        /// The target table.
        table: String,
    },
    /// A clause that must assign the target's ordering field does not.
    #[error("No matching assignment found for target table ordering field `{field}`")]
    OrderingNotAssigned {
        /// The ordering field.
        field: String,
    },
    /// A clause that must assign a record key field does not.
    #[error("No matching assignment found for target table record key field `{field}`")]
    KeyNotAssigned {
        /// The record key field.
        field: String,
    },
    /// An UPDATE of a merge-on-read table reads a target column on its right-hand side.
    #[error("MERGE INTO a merge-on-read table cannot read target columns on the right-hand side of an UPDATE assignment (`{column}`)")]
    ReadsTargetInUpdate {
        /// The column assigned.
        column: String,
    },
    /// An ON condition on a key or partition column that is not `t.col = s.col`.
    #[error("Only simple conditions of the form `t.id = s.id` are allowed on the primary-key and partition path column. Found `{found}`")]
    ConditionNotSimple {
        /// The condition found.
        found: String,
    },
    /// The source does not give a record key field.
    #[error("MERGE INTO field resolution error: Failed to resolve primary key `{key}` w/in the source-table output")]
    KeyNotInSource {
        /// The record key field.
        key: String,
    },
    /// The ON condition leaves out a record key column.
    #[error("Hudi tables with record key are required to match on all record key columns. Column: '{key}' not found in the ON condition `{on}`")]
    KeyNotInCondition {
        /// The record key field.
        key: String,
        /// The ON condition.
        on: String,
    },
    /// The source does not project the partition columns a global index needs.
    #[error("MERGE INTO field resolution error: Failed to resolve partition fields `{}` w/in the source-table output; the source must project the partition column(s) by name (neither the ON condition nor an UPDATE assignment can supply them)", .fields.join("`, `"))]
    PartitionNotInSource {
        /// The partition fields missing.
        fields: Vec<String>,
    },
    /// The source does not give the ordering field.
    #[error("MERGE INTO field resolution error: Failed to resolve ordering fields `{field}` w/in the source-table output")]
    OrderingNotInSource {
        /// The ordering field.
        field: String,
    },
    /// More than one DELETE clause.
    #[error("Only one deleting action is supported in MERGE INTO statement (provided {count})")]
    TooManyDeletes {
        /// How many DELETE clauses the statement has.
        count: usize,
    },
    /// `UPDATE SET *` or `INSERT *` names a target column the source lacks.
    #[error("MERGE INTO field resolution error: cannot resolve target column `{column}` in the source (UPDATE SET * and INSERT * match columns by name)")]
    StarColumnNotInSource {
        /// The target column.
        column: String,
    },
}

/// A column an UPDATE may not assign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProtectedColumn {
    /// One of the five `_hoodie_*` meta columns.
    Meta,
    /// A record key field.
    RecordKey,
    /// A partition field.
    Partition,
}

/// An UPDATE assigning a column it may not change.
#[derive(Debug, thiserror::Error)]
#[error("{}", match .kind {
    ProtectedColumn::Meta => format!("UPDATE cannot assign the Hudi meta column {}", .column),
    ProtectedColumn::RecordKey => format!("Detected disallowed assignment clause in UPDATE statement for record key field `{}` for table `{}`. Please remove the assignment clause to avoid the error.", .column, .table),
    ProtectedColumn::Partition => format!("Detected disallowed assignment clause in UPDATE statement for partition field `{}` for table `{}`. Please remove the assignment clause to avoid the error.", .column, .table),
})]
pub struct ProtectedAssignment {
    /// What kind of column it is.
    pub kind: ProtectedColumn,
    /// The column.
    pub column: String,
    /// The table.
    pub table: String,
}

/// A `CALL` whose arguments do not bind to the procedure's parameters.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProcedureError {
    /// No procedure has that name.
    #[error("there is no procedure named {name}; hoodie has: {}", .known.join(", "))]
    NoSuchProcedure {
        /// The name called.
        name: String,
        /// The procedures hoodie has.
        known: Vec<String>,
    },
    /// A named argument the procedure does not take.
    #[error("procedure {procedure} has no parameter {argument}; its parameters are: {parameters}")]
    NoSuchParameter {
        /// The procedure.
        procedure: String,
        /// The argument's name.
        argument: String,
        /// The procedure's parameters, joined by ", ".
        parameters: String,
    },
    /// More positional arguments than parameters.
    #[error("procedure {procedure} takes at most {count} arguments ({parameters})")]
    TooManyArguments {
        /// The procedure.
        procedure: String,
        /// How many parameters it has.
        count: usize,
        /// The procedure's parameters, joined by ", ".
        parameters: String,
    },
    /// One parameter given twice.
    #[error("argument {argument} of {procedure} is given twice")]
    GivenTwice {
        /// The procedure.
        procedure: String,
        /// The parameter.
        argument: String,
    },
    /// A required parameter not given.
    #[error("procedure {procedure} needs argument {argument}; its parameters are: {parameters}")]
    MissingArgument {
        /// The procedure.
        procedure: String,
        /// The parameter.
        argument: String,
        /// The procedure's parameters, joined by ", ".
        parameters: String,
    },
    /// Neither `table` nor `path` given.
    #[error("procedure {procedure} needs table => '<name>' or path => '<location>'")]
    NoTarget {
        /// The procedure.
        procedure: String,
    },
    /// An argument whose value is not of the parameter's kind.
    #[error("argument {argument} of {procedure} must be {expected}, got {value:?}")]
    BadValue {
        /// The procedure.
        procedure: String,
        /// The parameter.
        argument: String,
        /// What it takes ("a number", "true or false").
        expected: &'static str,
        /// The value given.
        value: String,
    },
    /// An argument value hoodie does not support yet.
    #[error("{procedure}({argument}) is not supported yet{why}")]
    UnsupportedArgument {
        /// The procedure.
        procedure: String,
        /// The argument as given (`include_in_flight => true`).
        argument: &'static str,
        /// What to do instead, with its lead-in (`; filter the result with WHERE`).
        why: &'static str,
    },
    /// A local path that does not exist.
    #[error("{procedure}: {path} does not exist (give a local folder or file)")]
    NoSuchPath {
        /// The procedure.
        procedure: String,
        /// The path.
        path: String,
    },
    /// A folder of an object store that cannot be listed.
    #[error("{procedure} cannot list {path:?}: {reason}")]
    CannotList {
        /// The procedure.
        procedure: String,
        /// The folder.
        path: String,
        /// The store's error.
        reason: String,
    },
    /// An instant that is not a completed write of the table.
    #[error("Commit {instant} not found in Commits of {table}: give the instant of a completed write (CALL show_commits lists them)")]
    NoSuchCommit {
        /// The instant.
        instant: String,
        /// The table's location.
        table: String,
    },
    /// A compaction operation `run_compaction` does not know.
    #[error("unsupported compaction operation {operation:?}: use schedule, execute, scheduleandexecute or run")]
    UnknownCompactionOperation {
        /// The operation given.
        operation: String,
    },
    /// A compaction procedure on a copy-on-write table.
    #[error("Cannot show compaction on a Non Merge On Read table.")]
    NotMergeOnRead,
    /// `options => '...'` that is not `k=v` pairs.
    #[error("{procedure} options are k=v pairs separated by commas, got {pair:?}")]
    BadOptions {
        /// The procedure.
        procedure: String,
        /// The pair that is not `k=v`.
        pair: String,
    },
}

/// A partition spec that names no partition of the table.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PartitionError {
    /// A partition statement on a table without partition columns.
    #[error("Operation not allowed: {statement} is not supported for tables that are not partitioned: {table}")]
    NotPartitioned {
        /// The statement (`TRUNCATE TABLE ... PARTITION`, `ALTER TABLE ... DROP PARTITION`).
        statement: &'static str,
        /// The table.
        table: String,
    },
    /// A partition DROP PARTITION names that the table does not have.
    #[error("The partition {partition} cannot be found in table {table}: verify the partition specification, or use DROP IF EXISTS PARTITION")]
    NotFound {
        /// The partition, as a path.
        partition: String,
        /// The table.
        table: String,
    },
    /// A spec entry that is not a partition column.
    #[error("{column} is not a partition column of {table} (its partition columns: {})", .columns.join(", "))]
    NotAPartitionColumn {
        /// The column named.
        column: String,
        /// The table.
        table: String,
        /// Its partition columns.
        columns: Vec<String>,
    },
    /// A spec that leaves out a partition column.
    #[error("the PARTITION spec must give every partition column of {table} ({}); {column} is missing", .columns.join(", "))]
    ColumnMissing {
        /// The column left out.
        column: String,
        /// The table.
        table: String,
        /// Its partition columns.
        columns: Vec<String>,
    },
    /// A partition path of the table that its key generator cannot read values from.
    #[error("partition path {path:?} of table {table} does not name its partition columns")]
    PathUnreadable {
        /// The partition path.
        path: String,
        /// The table.
        table: String,
    },
}

/// A CREATE, DROP, ALTER or RENAME of a table that hoodie refuses.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DdlError {
    /// The session has no warehouse to create the table in.
    #[error(
        "this session has no hoodie warehouse: build it with SessionStateBuilder::with_hoodie"
    )]
    NoWarehouse,
    /// A table name qualified with a database other than the warehouse's.
    #[error("database {database} does not exist: the warehouse is database {warehouse} (create the table as {warehouse}.{table} or {table})")]
    NoSuchDatabase {
        /// The database named.
        database: String,
        /// The warehouse's database.
        warehouse: String,
        /// The table.
        table: String,
    },
    /// Two declared columns whose names differ only in case.
    #[error("[COLUMN_ALREADY_EXISTS] The column `{column}` already exists: names differ only in case (SET spark.sql.caseSensitive = true to tell them apart)")]
    ColumnExists {
        /// The column, lower-cased (as Spark names it).
        column: String,
    },
    /// A declared column named like one of Hudi's meta columns.
    #[error("column {column} is a Hudi meta column and cannot be declared")]
    MetaColumnDeclared {
        /// The column.
        column: String,
    },
    /// CREATE TABLE ... AS SELECT of an `_ro`/`_rt` view.
    #[error("Not support CTAS for the ro/rt table")]
    CtasOfView,
    /// A plain table's OPTIONS naming one key twice.
    #[error("Option {key} is specified multiple times")]
    RepeatedOption {
        /// The key.
        key: String,
    },
    /// CREATE TABLE ... AS SELECT with a column list.
    #[error("CREATE TABLE ... AS SELECT takes its columns from the query; drop the column list")]
    CtasColumnList,
    /// CREATE TABLE ... AS SELECT where a Hudi table already is.
    #[error("CREATE TABLE ... AS SELECT: a Hudi table already exists at {location}")]
    CtasOverTable {
        /// The location.
        location: String,
    },
    /// An `_ro`/`_rt` table over a location without a Hudi table.
    #[error("Creating ro/rt table need the existence of the base table.")]
    ViewWithoutTable,
    /// An `_ro`/`_rt` table over a copy-on-write table.
    #[error("Creating ro/rt table should only apply to a mor table.")]
    ViewOfCopyOnWrite,
    /// A RENAME onto a table or folder that exists.
    #[error("cannot rename {name} to {new_name}: {existing} exists")]
    RenameOntoExisting {
        /// The table.
        name: String,
        /// The name asked for.
        new_name: String,
        /// What is in the way (`table <name> already`, or a folder).
        existing: String,
    },
    /// ALTER TABLE ... SET TBLPROPERTIES of a property fixed at creation.
    #[error("{key} cannot be changed after the table is created")]
    FixedProperty {
        /// The property.
        key: String,
    },
    /// A DROP TABLE that would delete what is not one table's folder.
    #[error("refusing to delete {location}: {why}; nothing was dropped")]
    UnsafeDelete {
        /// The folder.
        location: String,
        /// Why it is not deleted.
        why: String,
    },
    /// A LOCATION that is the warehouse or above it.
    #[error("LOCATION '{location}' is the warehouse {warehouse} or a folder above it; give the table a folder of its own (or leave LOCATION out to create it in the warehouse)")]
    LocationHoldsWarehouse {
        /// The location given.
        location: String,
        /// The warehouse.
        warehouse: String,
    },
}

/// An INSERT (or INSERT OVERWRITE) hoodie refuses.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InsertError {
    /// `INSERT ... PARTITION (...)` without VALUES or a query.
    #[error("INSERT ... PARTITION needs VALUES or a SELECT")]
    NoSource,
    /// A PARTITION spec entry that is not `column = value`.
    #[error("PARTITION spec entries must be column = value, found {entry}")]
    PartitionEntryNotAssignment {
        /// The entry as written.
        entry: String,
    },
    /// A PARTITION spec entry hoodie cannot read.
    #[error("unsupported PARTITION spec entry {entry}")]
    UnsupportedPartitionEntry {
        /// The entry as written.
        entry: String,
    },
    /// As many data columns as the table's, Spark's arity rule.
    #[error("Cannot write to {table}, the reason is {}: table columns: {} ({expected}{}), data columns: {given}", if .given > .expected { "too many data columns" } else { "not enough data columns" }, .columns.join(", "), if *.static_partitions { ", not counting static partition columns" } else { "" })]
    ColumnCount {
        /// The table.
        table: String,
        /// The table's columns the data fills.
        columns: Vec<String>,
        /// How many that is.
        expected: usize,
        /// Whether static partition values fill the others.
        static_partitions: bool,
        /// How many data columns were given.
        given: usize,
    },
    /// The statement's target is not a table name.
    #[error("{statement} needs a table name")]
    TargetNotATable {
        /// The statement.
        statement: &'static str,
    },
}

/// An `ALTER TABLE ... ADD COLUMNS` hoodie refuses.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AddColumnError {
    /// The table has a column of that name (in any case).
    #[error("Cannot add column {column}: table {table} already has a column {existing}")]
    Exists {
        /// The column added.
        column: String,
        /// The table.
        table: String,
        /// The table's column of that name.
        existing: String,
    },
    /// The statement adds one column twice.
    #[error("column {column} is added twice")]
    Twice {
        /// The column.
        column: String,
    },
    /// A NOT NULL column, which the rows written before have no value for.
    #[error("column {column} cannot be NOT NULL: the rows written before it was added have no value for it")]
    NotNull {
        /// The column.
        column: String,
    },
}
