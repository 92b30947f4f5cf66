//! Tables: what a `CREATE TABLE` declares ([`spec`]), the `STORED AS HUDI` factory that
//! opens or creates a table at a location ([`factory`]), and the warehouse as a schema of the
//! session ([`catalog`]).

pub mod catalog;
pub mod factory;
pub mod spec;
