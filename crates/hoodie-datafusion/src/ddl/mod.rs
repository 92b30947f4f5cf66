//! Tables: what a `CREATE TABLE` declares ([`spec`]), the `STORED AS HUDI` factory that
//! opens or creates a table at a location ([`factory`]), the warehouse as a schema of the
//! session ([`catalog`]), and the object stores of plain tables' locations ([`stores`]).

pub mod catalog;
pub mod factory;
pub mod spec;
pub mod stores;
pub mod table_name;
