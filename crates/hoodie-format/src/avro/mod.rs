//! The Avro metadata Java writes on the timeline beside the JSON commits: the requested
//! replace metadata of a replacecommit and the rollback plan and metadata.

pub mod clean;
pub mod compaction_plan;
pub mod datum;
pub mod requested_replace;
pub mod rollback;
