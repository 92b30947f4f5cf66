//! How hoodie lives in a DataFusion session: its options as config extensions, the one call
//! that installs it into a `SessionStateBuilder`, and the query planner it composes with the
//! session's.

pub mod config;
pub mod install;
pub mod planner;
pub mod write_options;
