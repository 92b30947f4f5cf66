//! How hoodie lives in a DataFusion session: the one call that installs it into a
//! `SessionStateBuilder`, and the query planner it composes with the session's. Its options
//! are in [`crate::options`].

pub mod install;
pub mod planner;
