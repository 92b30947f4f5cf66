//! Readers of Hudi's metadata and file internals for tests and diagnostic tools: the Avro
//! records of the timeline and the archive, log blocks, base-file footers and the key index
//! they carry. An engine reads and writes tables through [`crate::HudiTable`],
//! [`crate::client::WriteClient`] and [`crate::read::SliceReader`]; these are for checking
//! what was written, byte for byte, against what Hudi writes.

pub use crate::avro::archive::{parse_archive_file, ArchivedEntry};
pub use crate::avro::clean::{parse_clean_metadata, parse_cleaner_plan, CleanerPlan};
pub use crate::avro::compaction_plan::{parse_compaction_plan, CompactionPlan};
pub use crate::base_file::read_record_keys;
pub use crate::bloom::{
    BloomFilterType, HoodieBloomFilter, BLOOM_FILTER_FOOTER_KEY, MAX_RECORD_KEY_FOOTER_KEY,
    MIN_RECORD_KEY_FOOTER_KEY,
};
pub use crate::footer::{footer_value, read_footer};
pub use crate::log::block::{header, parse_blocks, BlockType, LogBlock};
