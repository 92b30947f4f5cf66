//! hoodie-datafusion: Apache Hudi tables with SQL DML, native to Apache DataFusion.
//!
//! Install hoodie into any DataFusion session with
//! [`SessionStateBuilderExt::with_hoodie`]; then `ctx.sql(...)` runs what DataFusion's
//! grammar expresses (`CREATE EXTERNAL TABLE ... STORED AS HUDI`, `INSERT`, `UPDATE`,
//! `DELETE`, `MERGE INTO`, `SET hoodie.*`, queries) and [`HudiSqlExt::hudi_sql`] runs Hudi's
//! Spark SQL dialect (`CREATE TABLE ... USING hudi`, CTAS, `MERGE ... UPDATE SET *`,
//! `INSERT ... PARTITION`, `SHOW PARTITIONS`, ...). [`HoodieContext`] is the session the
//! `hoodie` shell runs: the same, with the warehouse as its default schema.

#![warn(missing_docs)]

mod blocking;
mod context;
mod ddl;
mod dml;
mod error;
mod frontend;
mod names;
mod nodes;
mod options;
mod provider;
mod scan;
mod session;
mod sink;
mod sql;
mod statements;
mod table_functions;

pub mod prelude;

pub use context::{HoodieConfig, HoodieContext, SessionExtension, StatementOutput};
pub use ddl::catalog::WarehouseSchema;
pub use ddl::factory::HudiTableFactory;
pub use dml::write_node::HudiWriteNode;
pub use dml::{HudiDmlNode, HudiDmlRule};
pub use error::{
    df_message, AddColumnError, DdlError, HoodieError, InsertError, MergeError, PartitionError,
    ProcedureError, ProtectedAssignment, ProtectedColumn, ValueDoesNotFit,
};
pub use hoodie_format::write::{WriteKind, WriteSpec, WriteStatement};
pub use nodes::{is_hoodie_node, is_process_bound_function, shipped_functions};
pub use options::session::{HoodieSessionConfig, SparkSessionConfig};
pub use options::write::SessionOptions;
pub use provider::HudiTableProvider;
pub use scan::cdc::CdcExec;
pub use scan::merge_on_read::MergeOnReadExec;
pub use scan::read_kind::ReadKind;
pub use scan::snapshot::SnapshotExec;
pub use session::install::{HoodieOptions, SessionStateBuilderExt};
pub use session::planner::{hoodie_extension_planner, HoodieQueryPlanner};
pub use sink::{to_table_batch, write_batches, HudiSink, WriteCounts};
pub use sql::depth::MAX_NESTING;
pub use sql::HudiSqlExt;
pub use statements::split_statements;
