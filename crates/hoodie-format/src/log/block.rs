//! The framing of log blocks (`#HUDI#` magic, sizes, header, content, footer), all integers
//! big-endian, as `HoodieLogFormatWriter` writes them.

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::error::{FormatError, Result};

/// The magic every block starts with.
pub const MAGIC: &[u8; 6] = b"#HUDI#";

/// Log format version written in each block.
const LOG_FORMAT_VERSION: i32 = 1;

/// What a block holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockType {
    /// A rollback command (no content).
    Command,
    /// Deleted keys.
    Delete,
    /// A block a crashed writer left unreadable.
    Corrupt,
    /// Avro records.
    AvroData,
    /// HFile records (the metadata table).
    HFileData,
    /// A Parquet file of records.
    ParquetData,
    /// CDC records.
    CdcData,
}

impl BlockType {
    fn from_code(code: i32) -> Option<Self> {
        Some(match code {
            0 => Self::Command,
            1 => Self::Delete,
            2 => Self::Corrupt,
            3 => Self::AvroData,
            4 => Self::HFileData,
            5 => Self::ParquetData,
            6 => Self::CdcData,
            _ => return None,
        })
    }

    fn code(self) -> i32 {
        match self {
            Self::Command => 0,
            Self::Delete => 1,
            Self::Corrupt => 2,
            Self::AvroData => 3,
            Self::HFileData => 4,
            Self::ParquetData => 5,
            Self::CdcData => 6,
        }
    }
}

/// Header keys (`HeaderMetadataType` ordinals).
pub mod header {
    /// The instant that wrote the block.
    pub const INSTANT_TIME: u32 = 0;
    /// The instant a command block targets.
    pub const TARGET_INSTANT_TIME: u32 = 1;
    /// The Avro schema of the records (meta fields included).
    pub const SCHEMA: u32 = 2;
    /// The command of a command block (`"0"` = rollback).
    pub const COMMAND_BLOCK_TYPE: u32 = 3;
    /// The rows of the slice's base file a block's records update or delete (Base64 of a
    /// portable `Roaring64NavigableMap`, see `log::positions`), in the records' order.
    pub const RECORD_POSITIONS: u32 = 5;
    /// `"true"` on a data block of partial updates (table version 8 and later): its records
    /// hold the meta columns and the columns an update assigns, and its SCHEMA header is that
    /// partial schema.
    pub const IS_PARTIAL: u32 = 7;
    /// The instant of the base file `RECORD_POSITIONS` counts rows of.
    pub const BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS: u32 = 8;
}

/// One block of a log file.
#[derive(Debug, Clone)]
pub struct LogBlock {
    /// Its type.
    pub block_type: BlockType,
    /// Header entries by key.
    pub header: BTreeMap<u32, String>,
    /// The content bytes.
    pub content: Bytes,
}

impl LogBlock {
    /// A header value.
    pub fn header(&self, key: u32) -> Option<&str> {
        self.header.get(&key).map(String::as_str)
    }

    /// Whether the block holds partial updates (its `IS_PARTIAL` header parses as `true`,
    /// as Java's `Boolean.parseBoolean` reads it).
    pub fn is_partial(&self) -> bool {
        self.header(header::IS_PARTIAL)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }
}

struct Cursor<'a> {
    bytes: &'a Bytes,
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Option<Bytes> {
        let end = self.at.checked_add(n)?;
        if end > self.bytes.len() {
            return None;
        }
        let b = self.bytes.slice(self.at..end);
        self.at = end;
        Some(b)
    }
    fn i32(&mut self) -> Option<i32> {
        Some(i32::from_be_bytes(self.take(4)?.as_ref().try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_be_bytes(self.take(8)?.as_ref().try_into().ok()?))
    }
    fn len(&mut self) -> Option<usize> {
        usize::try_from(self.i64()?).ok()
    }
}

/// The blocks of a log file. A last block cut short (a writer that died mid-block) ends the
/// file; bytes that are not a block at all are an error.
pub fn parse_blocks(bytes: &Bytes, path: &str) -> Result<Vec<LogBlock>> {
    let corrupt = |reason: String| FormatError::Corrupt {
        path: path.to_string(),
        reason,
    };
    let mut blocks = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let rest = &bytes[at..];
        if !MAGIC.starts_with(&rest[..rest.len().min(MAGIC.len())])
            || (rest.len() >= MAGIC.len() && &rest[..MAGIC.len()] != MAGIC)
        {
            return Err(corrupt(format!("no log block magic at byte {at}")));
        }
        if rest.len() < MAGIC.len() + 8 {
            break; // a truncated last block
        }
        let mut c = Cursor {
            bytes,
            at: at + MAGIC.len(),
        };
        let size = c.len().ok_or_else(|| corrupt("bad block size".into()))?;
        let Some(end) = c.at.checked_add(size).filter(|&e| e <= bytes.len()) else {
            break; // a truncated last block
        };
        let block = read_block(&mut c).ok_or_else(|| corrupt(format!("bad block at byte {at}")))?;
        blocks.push(block);
        at = end;
    }
    Ok(blocks)
}

fn read_block(c: &mut Cursor) -> Option<LogBlock> {
    let _version = c.i32()?;
    let block_type = BlockType::from_code(c.i32()?)?;
    let n = c.i32()?;
    let mut header = BTreeMap::new();
    for _ in 0..n {
        let key = c.i32()? as u32;
        let len = usize::try_from(c.i32()?).ok()?;
        let value = String::from_utf8(c.take(len)?.to_vec()).ok()?;
        header.insert(key, value);
    }
    let content_len = c.len()?;
    let content = c.take(content_len)?;
    Some(LogBlock {
        block_type,
        header,
        content,
    })
}

/// Appends one block to `out`: `header` entries in key order, an empty footer.
pub fn encode_block(
    block_type: BlockType,
    header: &[(u32, &str)],
    content: &[u8],
    out: &mut Vec<u8>,
) {
    let mut head = Vec::new();
    head.extend_from_slice(&(header.len() as i32).to_be_bytes());
    for (k, v) in header {
        head.extend_from_slice(&(*k as i32).to_be_bytes());
        head.extend_from_slice(&(v.len() as i32).to_be_bytes());
        head.extend_from_slice(v.as_bytes());
    }
    let footer = 0i32.to_be_bytes();
    let size = 4 + 4 + head.len() + 8 + content.len() + footer.len() + 8;
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(size as i64).to_be_bytes());
    out.extend_from_slice(&LOG_FORMAT_VERSION.to_be_bytes());
    out.extend_from_slice(&block_type.code().to_be_bytes());
    out.extend_from_slice(&head);
    out.extend_from_slice(&(content.len() as i64).to_be_bytes());
    out.extend_from_slice(content);
    out.extend_from_slice(&footer);
    out.extend_from_slice(&((size + MAGIC.len()) as i64).to_be_bytes());
}
