//! MERGE INTO: the change set of the statement ([`plan`]: Hudi's rules, the join, the
//! clauses) and its join in passes under a bounded memory pool ([`passes`]).

pub mod passes;
pub mod plan;
