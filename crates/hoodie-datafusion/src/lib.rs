//! hoodie-datafusion: Apache Hudi tables with SQL DML, native to Apache DataFusion.
//!
//! The entry point is [`HoodieContext`]: a DataFusion `SessionContext` with the Hudi table
//! factory (`STORED AS HUDI`), the warehouse catalog and the SQL front-end for Hudi's Spark SQL
//! grammar (`CREATE TABLE ... USING hudi`, `SET hoodie.*`, `SHOW PARTITIONS`, ...).

pub mod catalog;
pub mod context;
pub mod create;
pub mod dml;
pub mod error;
pub mod factory;
pub mod frontend;
pub mod insert;
pub mod merge;
pub mod merge_passes;
pub mod names;

pub mod options;
pub mod provider;
pub mod sink;
pub mod statements;

pub use context::{HoodieConfig, HoodieContext, StatementOutput};
pub use error::HoodieError;
pub use statements::split_statements;
