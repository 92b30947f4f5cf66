//! A table's history as a query: the instant a time-travel read names, the checks Hudi makes
//! before it reads as of that instant, and the commits an incremental window holds.

pub(crate) mod incremental;
pub(crate) mod instant_text;
pub(crate) mod time_travel;

pub use incremental::IncrementalWindow;
pub use instant_text::{incremental_instant, query_instant, InstantZone};
pub use time_travel::{check_as_of, earliest_commit_kept};
