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
