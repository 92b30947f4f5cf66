//! hoodie-format: the Apache Hudi table format with no query engine attached.
//!
//! Configuration and `hoodie.properties`, the timeline and its instants, file naming, the meta
//! columns, key generators, commit metadata, the Java-compatible bloom filter, the file-system
//! view and the commit protocol. Everything works on plain Arrow record batches.

pub mod archive;
pub(crate) mod avro;
pub(crate) mod base_file;
pub(crate) mod bloom;
pub(crate) mod bucket;
pub mod cdc;
pub mod clean;
pub mod client;
pub mod compaction;
pub mod concurrency;
pub mod config;
pub mod error;
pub(crate) mod field_path;
pub(crate) mod file_name;
pub mod footer;
pub mod fs_view;
pub mod history;
pub(crate) mod index;
pub mod inspect;
pub mod keygen;
pub mod location;
pub(crate) mod log;
pub mod meta;
pub mod metadata_table;
pub mod new_table;
pub(crate) mod precedence;
pub mod properties;
pub(crate) mod properties_file;
pub mod read;
pub mod refusal;
pub mod savepoint;
pub mod schema;
pub mod storage;
pub(crate) mod table;
pub mod table_config;
mod tasks;
pub mod timeline;
pub mod upgrade;
pub mod wire;
pub mod write;

pub use error::{FormatError, Result};
/// The rows of a base file a log block's `RECORD_POSITIONS` header names (for readers that
/// merge by position).
pub use log::positions::decode_positions;
pub use table::HudiTable;
pub use table_config::{TableConfig, TableType};
