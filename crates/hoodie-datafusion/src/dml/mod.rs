//! Writes of DML statements into Hudi tables, in the order a statement flows: the analyzer
//! [`rule`] turns UPDATE, DELETE and MERGE into change sets ([`merge_into`] for MERGE), the
//! [`insert`] rewrite fits Spark's INSERT grammar to DataFusion's, [`write_node`] carries a
//! write whose mode the front-end decided, and the [`planner`] plans them into the sink.
//! [`struct_cast`] writes struct values into struct columns by position, as Spark does;
//! [`named_cast`] makes a value that does not fit its column name the column.

pub(crate) mod base_rows;
pub mod insert;
pub mod merge_into;
pub(crate) mod named_cast;
pub mod planner;
pub mod rule;
pub(crate) mod struct_cast;
pub mod write_node;

pub use planner::HudiDmlPlanner;
pub use rule::{HudiDmlNode, HudiDmlRule};
