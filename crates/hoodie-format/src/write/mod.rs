//! Writing a commit, in the order a write flows: the [`incoming`] rows (keys validated,
//! pre-combined, spilled when the pool is full), the [`transaction`] that begins and commits
//! an instant, and the writes themselves: [`insert`] into new file groups, [`upsert`] (index
//! lookup, then each touched file group rewritten through [`splice`]), [`overwrite`]
//! (replacecommit), [`delete_partition`] (a replacecommit that writes nothing), the
//! [`change_set`] of UPDATE/DELETE/MERGE, and the base-file [`writer`]. A write's files may
//! come from many writers at once, each reporting a [`status::WriteStatus`] to the commit.
//! What a write does is one [`spec::WriteSpec`], resolved from the [`options`] it sees.
//!
//! The submodules are the crate's own; an engine uses what this module re-exports.

pub(crate) mod abandoned;
pub(crate) mod alter_schema;
pub(crate) mod cdc_log;
pub(crate) mod change_set;
pub(crate) mod column_diff;
pub(crate) mod delete_partition;
pub(crate) mod incoming;
pub(crate) mod insert;
mod markers;
pub(crate) mod options;
pub(crate) mod overwrite;
pub(crate) mod rollback;
pub(crate) mod spec;
pub(crate) mod splice;
pub(crate) mod status;
pub(crate) mod transaction;
mod upload;
pub(crate) mod upsert;
pub(crate) mod writer;

// What an engine writes with: the spec and options of a write, its rows, the statuses of a
// split write's file groups, and the writes that change the timeline outside a commit of rows.
pub use abandoned::{
    has_abandoned_writes, rollback_abandoned_writes, wait_for_no_writes, RolledBack,
};
pub use alter_schema::commit_schema;
pub use change_set::{ChangeRows, ChangeSetSchema, BASE_ROW, DELETE_FLAG};
pub use delete_partition::{delete_partitions, selected_partitions, PartitionSelection};
pub use incoming::{
    Budgets, Incoming, IncomingBuilder, KeySource, MemoryBudget, SpillFile, SpillSpace,
};
pub use insert::{write_inserts, InsertResult};
pub use options::WriteOptions;
pub use spec::{ignored_options, WriteKind, WriteSpec, WriteStatement};
pub use status::{FileGroupWriter, RowCounts, WriteHandle, WriteStatus};
pub use transaction::{Transaction, WriteOperation, LISTING_REUSE_AGE};
pub use upsert::{FileGroupTask, UpsertResult, UpsertTasks};
pub use writer::FileSpec;
