//! MERGE INTO: the change set of the statement ([`plan`]: Hudi's rules, the join, the
//! clauses), its join in passes under a bounded memory pool ([`passes`]), and the target rows
//! no source key can match dropped in the target's scan ([`source_keys`]).

pub mod passes;
pub mod plan;
pub mod source_keys;
