//! Merge-on-read log files: the block framing, the data and delete blocks, reading a slice's
//! logs and merging them with its base file, writing new log files.

pub mod apply;
pub mod base_ordering;
pub mod block;
mod by_position;
mod compose;
pub mod delete;
mod int_filter;
pub mod keys;
mod logged;
mod overlay;
pub mod partial;
pub(crate) mod positions;
pub mod read;
mod replay;
mod rules;
pub mod slice;
pub mod write;

#[cfg(test)]
mod partial_tests;
#[cfg(test)]
mod tests;
