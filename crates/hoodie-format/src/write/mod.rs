//! Writing a commit, in the order a write flows: the [`incoming`] rows (keys validated,
//! pre-combined, spilled when the pool is full), the [`transaction`] that begins and commits
//! an instant, and the writes themselves: [`insert`] into new file groups, [`upsert`] (index
//! lookup, then each touched file group rewritten through [`splice`]), [`overwrite`]
//! (replacecommit), [`delete_partition`] (a replacecommit that writes nothing), the
//! [`change_set`] of UPDATE/DELETE/MERGE, and the base-file [`writer`]. A write's files may
//! come from many writers at once, each reporting a [`status::WriteStatus`] to the commit.
//! What a write does is one [`spec::WriteSpec`], resolved from the [`options`] it sees.

pub mod abandoned;
pub mod alter_schema;
pub(crate) mod cdc_log;
pub mod change_set;
pub(crate) mod column_diff;
pub mod delete_partition;
pub mod incoming;
pub mod insert;
mod markers;
pub mod options;
pub(crate) mod overwrite;
pub mod rollback;
pub mod spec;
pub(crate) mod splice;
pub mod status;
pub mod transaction;
mod upload;
pub mod upsert;
pub mod writer;
