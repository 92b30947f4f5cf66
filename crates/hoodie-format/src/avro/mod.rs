//! The Avro metadata Java writes on the timeline beside the JSON commits: the requested
//! replace metadata of a replacecommit, the rollback plan and metadata, the cleaner plan and
//! clean metadata, the compaction plan, savepoints and restores.

pub mod archive;
pub mod clean;
pub(crate) mod commit;
pub mod compaction_plan;
pub mod datum;
pub mod requested_replace;
pub mod rollback;
pub mod savepoint;
pub mod value;
