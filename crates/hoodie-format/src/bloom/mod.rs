//! Record-key bloom filters, byte-compatible with Apache Hudi's Java implementation.
//!
//! Every Parquet base file written by Hudi's Java/Spark writers carries, in its footer key/value
//! metadata, a bloom filter over the UTF-8 bytes of the file's `_hoodie_record_key` values
//! ([`BLOOM_FILTER_FOOTER_KEY`]), the filter kind ([`BLOOM_FILTER_TYPE_CODE_KEY`], written only for
//! `DYNAMIC_V0`; absent means `SIMPLE`) and the smallest/largest record key
//! ([`MIN_RECORD_KEY_FOOTER_KEY`], [`MAX_RECORD_KEY_FOOTER_KEY`]). Java's `BLOOM`/`GLOBAL_BLOOM`
//! indexes read them, so files written by this crate must carry them in exactly the same form.
//!
//! # Wire format
//!
//! The footer value is standard, padded Base64 of the big-endian Java `DataOutput` form:
//!
//! * header (13 bytes): `i32 version = -1`, `i32 numHashes`, `u8 hashType = 1` (murmur),
//!   `i32 vectorSize`;
//! * `SIMPLE` (Hadoop/Hudi `BloomFilter`): header, then the bit vector in `ceil(vectorSize / 8)`
//!   bytes, bit `i` stored as bit `i % 8` (least significant first) of byte `i / 8`;
//! * `DYNAMIC_V0` (`HoodieDynamicBoundedBloomFilter` wrapping `InternalDynamicBloomFilter`):
//!   header, `i32 numEntriesPerRow`, `i32 keysInCurrentRow`, `i32 rows`, then each row as a
//!   `SIMPLE` filter (its own header followed by its bit vector).
//!
//! Hash positions come from Hudi's MurmurHash2 port (`org.apache.hudi.common.util.hash.MurmurHash`,
//! whose tail bytes are sign-extended and mixed in reverse order compared to the C original):
//! `h_1 = murmur(key, 0)`, `h_i = murmur(key, h_{i-1})`, position `|h_i % vectorSize|`.
//!
//! The implementation follows the Java classes `InternalBloomFilter`, `InternalDynamicBloomFilter`,
//! `HashFunction`, `MurmurHash` and `BloomFilterUtils` step by step (including Java's `int`
//! arithmetic), so that adding the same keys in the same order yields the same bytes. Tests check
//! that against filters produced by that Java algorithm and against the footers of Spark-written
//! fixture tables.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

/// Parquet footer key holding the Base64-serialized record-key bloom filter.
pub const BLOOM_FILTER_FOOTER_KEY: &str = "org.apache.hudi.bloomfilter";

/// Parquet footer key holding the bloom filter type code ([`BloomFilterType::as_code`]).
/// Java writes it only for dynamic filters; when it is absent the filter is `SIMPLE`.
pub const BLOOM_FILTER_TYPE_CODE_KEY: &str = "hoodie_bloom_filter_type_code";

/// Parquet footer key holding the smallest `_hoodie_record_key` of the file.
pub const MIN_RECORD_KEY_FOOTER_KEY: &str = "hoodie_min_record_key";

/// Parquet footer key holding the largest `_hoodie_record_key` of the file.
pub const MAX_RECORD_KEY_FOOTER_KEY: &str = "hoodie_max_record_key";

/// Default `hoodie.index.bloom.num_entries`: keys per filter row.
pub const DEFAULT_NUM_ENTRIES: usize = 60_000;

/// Default `hoodie.index.bloom.fpp`: target false positive probability.
pub const DEFAULT_FPP: f64 = 0.000_000_001;

/// Default `hoodie.bloom.index.filter.dynamic.max.entries`: bound on the keys a dynamic filter
/// grows for (after that, rows are reused round-robin).
pub const DEFAULT_MAX_ENTRIES: usize = 100_000;

/// Serialization version written by Java's `InternalFilter` (negative marks the versioned format).
const VERSION: i32 = -1;

/// Java `Hash.MURMUR_HASH`, the only hash type Hudi writers use.
const MURMUR_HASH: u8 = 1;

/// Size of a filter header: version, number of hashes, hash type, vector size.
const HEADER_LEN: usize = 4 + 4 + 1 + 4;

/// Kind of a Hudi bloom filter (Java `BloomFilterTypeCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BloomFilterType {
    /// A single fixed-size bloom filter (`SIMPLE`, Java `SimpleBloomFilter`).
    Simple,
    /// A bounded dynamic bloom filter (`DYNAMIC_V0`, Java `HoodieDynamicBoundedBloomFilter`),
    /// the default of Hudi writers.
    DynamicV0,
}

impl BloomFilterType {
    /// The type code as written to the [`BLOOM_FILTER_TYPE_CODE_KEY`] footer entry and used in
    /// `hoodie.bloom.index.filter.type`: `"SIMPLE"` or `"DYNAMIC_V0"`.
    pub fn as_code(&self) -> &'static str {
        match self {
            BloomFilterType::Simple => "SIMPLE",
            BloomFilterType::DynamicV0 => "DYNAMIC_V0",
        }
    }

    /// Parses a type code. Like Java's `BloomFilterFactory`, the comparison ignores ASCII case.
    pub fn from_code(code: &str) -> Result<Self, BloomError> {
        if code.eq_ignore_ascii_case("SIMPLE") {
            Ok(BloomFilterType::Simple)
        } else if code.eq_ignore_ascii_case("DYNAMIC_V0") {
            Ok(BloomFilterType::DynamicV0)
        } else {
            Err(BloomError::UnknownTypeCode {
                code: code.to_string(),
            })
        }
    }
}

impl fmt::Display for BloomFilterType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_code())
    }
}

impl FromStr for BloomFilterType {
    type Err = BloomError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::from_code(s)
    }
}

/// Errors from building or decoding a bloom filter.
#[derive(Debug, thiserror::Error)]
pub enum BloomError {
    /// The footer value is not valid standard (padded) Base64.
    #[error("bloom filter is not valid base64: {source}")]
    InvalidBase64 {
        /// The decoder's error.
        source: base64::DecodeError,
    },
    /// The serialized filter ended before a field or bit vector was complete.
    #[error("bloom filter truncated at byte {offset}: needed {needed} more bytes, got {got}")]
    Truncated {
        /// Offset in the decoded bytes where the incomplete item starts.
        offset: usize,
        /// Bytes the item needs.
        needed: usize,
        /// Bytes that were left.
        got: usize,
    },
    /// Bytes remain after the filter was fully read. Java ignores them, but they mean the value is
    /// corrupt or was decoded as the wrong [`BloomFilterType`].
    #[error("bloom filter has {count} unexpected trailing bytes")]
    TrailingBytes {
        /// Number of bytes left over.
        count: usize,
    },
    /// The filter header carries a version other than `-1`. (Positive values denote Hadoop's
    /// unversioned format, which implies the Jenkins hash.)
    #[error("unsupported bloom filter serialization version {version}")]
    UnsupportedVersion {
        /// The version found.
        version: i32,
    },
    /// The filter uses a hash other than murmur (`1`), e.g. Jenkins (`0`).
    #[error("unsupported bloom filter hash type {hash_type} (only murmur, 1, is supported)")]
    UnsupportedHashType {
        /// The hash type found (Java reads it as a signed byte).
        hash_type: i8,
    },
    /// The header's vector size is not positive.
    #[error("invalid bloom filter vector size {vector_size}")]
    InvalidVectorSize {
        /// The vector size found.
        vector_size: i32,
    },
    /// The header's number of hash functions is not positive.
    #[error("invalid bloom filter hash count {num_hashes}")]
    InvalidNumHashes {
        /// The number of hashes found.
        num_hashes: i32,
    },
    /// A dynamic filter declares fewer than one row.
    #[error("invalid dynamic bloom filter row count {rows}")]
    InvalidRowCount {
        /// The row count found.
        rows: i32,
    },
    /// The type code is neither `SIMPLE` nor `DYNAMIC_V0`.
    #[error("unknown bloom filter type code {code:?}")]
    UnknownTypeCode {
        /// The code found.
        code: String,
    },
    /// The number of entries and false positive probability give no usable filter size: `fpp`
    /// is not in `(0, 1)`, or `num_entries` is zero or exceeds Java's `int`.
    #[error("invalid bloom filter sizing: num_entries={num_entries}, fpp={fpp}")]
    InvalidSizing {
        /// Requested keys per filter (row).
        num_entries: usize,
        /// Requested false positive probability.
        fpp: f64,
    },
    /// The dynamic filter bound exceeds Java's `int` range.
    #[error("dynamic bloom filter max entries {max_entries} exceeds i32::MAX")]
    MaxEntriesTooLarge {
        /// Requested bound.
        max_entries: usize,
    },
}

/// A Hudi record-key bloom filter, either `SIMPLE` or `DYNAMIC_V0`.
///
/// Keys are added and tested as the UTF-8 bytes of the record key, as Java does.
///
/// ```
/// use hoodie_format::inspect::{BloomFilterType, HoodieBloomFilter};
///
/// let mut filter = HoodieBloomFilter::default_dynamic();
/// filter.add("id:1");
/// let footer_value = filter.to_base64();
/// let decoded = HoodieBloomFilter::from_base64(&footer_value, BloomFilterType::DynamicV0).unwrap();
/// assert!(decoded.might_contain("id:1"));
/// assert!(!decoded.might_contain("id:2"));
/// ```
///
/// Two filters are equal when they serialize to the same bytes. (A dynamic filter also carries
/// state that Java does not serialize either, see [`Self::from_bytes`]; it is not compared.)
#[derive(Clone)]
pub struct HoodieBloomFilter {
    inner: Inner,
}

impl PartialEq for HoodieBloomFilter {
    fn eq(&self, other: &Self) -> bool {
        match (&self.inner, &other.inner) {
            (Inner::Simple(a), Inner::Simple(b)) => a == b,
            (Inner::Dynamic(a), Inner::Dynamic(b)) => {
                a.num_hashes == b.num_hashes
                    && a.vector_size == b.vector_size
                    && a.entries_per_row == b.entries_per_row
                    && a.keys_in_current_row == b.keys_in_current_row
                    && a.rows == b.rows
            }
            _ => false,
        }
    }
}

impl Eq for HoodieBloomFilter {}

/// Summarizes the filter; the bit vectors (hundreds of KB by default) are left out.
impl fmt::Debug for HoodieBloomFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("HoodieBloomFilter");
        s.field("kind", &self.kind())
            .field("vector_size", &self.vector_size())
            .field("num_hashes", &self.num_hashes())
            .field("num_rows", &self.num_rows());
        if let Inner::Dynamic(d) = &self.inner {
            s.field("entries_per_row", &d.entries_per_row)
                .field("keys_in_current_row", &d.keys_in_current_row);
        }
        s.finish_non_exhaustive()
    }
}

#[derive(Clone)]
enum Inner {
    Simple(BitRow),
    Dynamic(DynamicFilter),
}

impl HoodieBloomFilter {
    /// Creates an empty `DYNAMIC_V0` filter as Java's
    /// `BloomFilterFactory.createBloomFilter(numEntries, fpp, maxEntries, "DYNAMIC_V0")` does:
    /// rows of `num_entries` keys sized for `fpp`, growing by a row whenever the current one holds
    /// `num_entries` keys, until `rows * num_entries >= max_entries`; after that keys go to the
    /// rows round-robin (and the false positive rate is no longer bounded).
    ///
    /// # Panics
    /// If the parameters give no usable filter (see [`Self::try_new_dynamic`]).
    pub fn new_dynamic(num_entries: usize, fpp: f64, max_entries: usize) -> Self {
        Self::try_new_dynamic(num_entries, fpp, max_entries)
            .unwrap_or_else(|e| panic!("HoodieBloomFilter::new_dynamic: {e}"))
    }

    /// Fallible [`Self::new_dynamic`]: fails with [`BloomError::InvalidSizing`] when `fpp` is not
    /// in `(0, 1)` or `num_entries` is zero or above `i32::MAX` (so that Java's sizing yields no
    /// positive vector size and hash count), and with
    /// [`BloomError::MaxEntriesTooLarge`] when `max_entries` exceeds `i32::MAX`.
    pub fn try_new_dynamic(
        num_entries: usize,
        fpp: f64,
        max_entries: usize,
    ) -> Result<Self, BloomError> {
        let (vector_size, num_hashes) = java_sizing(num_entries, fpp)?;
        let max_entries = i32::try_from(max_entries)
            .map_err(|_| BloomError::MaxEntriesTooLarge { max_entries })?;
        // `java_sizing` checked that num_entries fits in an i32.
        let entries_per_row = num_entries as i32;
        Ok(Self {
            inner: Inner::Dynamic(DynamicFilter {
                num_hashes,
                vector_size,
                entries_per_row,
                keys_in_current_row: 0,
                max_entries,
                reached_max: false,
                round_robin_index: 0,
                rows: vec![BitRow::new(num_hashes, vector_size)],
            }),
        })
    }

    /// Creates an empty `SIMPLE` filter sized for `num_entries` keys at false positive
    /// probability `fpp`, as Java's `SimpleBloomFilter(numEntries, fpp, MURMUR_HASH)`.
    ///
    /// # Panics
    /// If the parameters give no usable filter (see [`Self::try_new_simple`]).
    pub fn new_simple(num_entries: usize, fpp: f64) -> Self {
        Self::try_new_simple(num_entries, fpp)
            .unwrap_or_else(|e| panic!("HoodieBloomFilter::new_simple: {e}"))
    }

    /// Fallible [`Self::new_simple`]: fails with [`BloomError::InvalidSizing`] under the same
    /// conditions as [`Self::try_new_dynamic`].
    pub fn try_new_simple(num_entries: usize, fpp: f64) -> Result<Self, BloomError> {
        let (vector_size, num_hashes) = java_sizing(num_entries, fpp)?;
        Ok(Self {
            inner: Inner::Simple(BitRow::new(num_hashes, vector_size)),
        })
    }

    /// The filter Hudi writers use by default: `DYNAMIC_V0` with [`DEFAULT_NUM_ENTRIES`] (60000)
    /// keys per row, [`DEFAULT_FPP`] (1e-9) and [`DEFAULT_MAX_ENTRIES`] (100000), i.e. rows of
    /// 2,587,966 bits and 30 hash functions.
    pub fn default_dynamic() -> Self {
        Self::new_dynamic(DEFAULT_NUM_ENTRIES, DEFAULT_FPP, DEFAULT_MAX_ENTRIES)
    }

    /// The kind of this filter.
    pub fn kind(&self) -> BloomFilterType {
        match &self.inner {
            Inner::Simple(_) => BloomFilterType::Simple,
            Inner::Dynamic(_) => BloomFilterType::DynamicV0,
        }
    }

    /// Number of hash functions (of the outer header for a dynamic filter).
    pub fn num_hashes(&self) -> u32 {
        match &self.inner {
            Inner::Simple(row) => row.num_hashes as u32,
            Inner::Dynamic(d) => d.num_hashes as u32,
        }
    }

    /// Bits per filter (per row for a dynamic filter).
    pub fn vector_size(&self) -> u32 {
        match &self.inner {
            Inner::Simple(row) => row.vector_size as u32,
            Inner::Dynamic(d) => d.vector_size as u32,
        }
    }

    /// Number of bit-vector rows: 1 for a simple filter.
    pub fn num_rows(&self) -> usize {
        match &self.inner {
            Inner::Simple(_) => 1,
            Inner::Dynamic(d) => d.rows.len(),
        }
    }

    /// Adds a record key (its UTF-8 bytes).
    ///
    /// Java rejects empty keys (`HashFunction` throws); here an empty key is hashed like any other
    /// byte string, which Java readers can never match. Hudi record keys are never empty.
    #[inline]
    pub fn add(&mut self, key: &str) {
        self.add_bytes(key.as_bytes());
    }

    /// Adds a key given as raw bytes (the UTF-8 bytes of a record key, e.g. straight from an
    /// Arrow string array).
    pub fn add_bytes(&mut self, key: &[u8]) {
        match &mut self.inner {
            Inner::Simple(row) => row.add(key),
            Inner::Dynamic(d) => d.add(key),
        }
    }

    /// Adds keys in iteration order; the result is identical to calling [`Self::add_bytes`] for
    /// each, but several keys are hashed together, which is about twice as fast. Use it when
    /// writing a file's record keys.
    pub fn add_all<I>(&mut self, keys: I)
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        let mut keys = keys.into_iter();
        loop {
            let mut batch: [Option<I::Item>; LANES] = std::array::from_fn(|_| None);
            let mut filled = 0;
            for slot in batch.iter_mut() {
                match keys.next() {
                    Some(key) => {
                        *slot = Some(key);
                        filled += 1;
                    }
                    None => break,
                }
            }
            if filled < LANES {
                for key in batch.iter().flatten() {
                    self.add_bytes(key.as_ref());
                }
                return;
            }
            let batch: [&[u8]; LANES] =
                std::array::from_fn(|i| batch[i].as_ref().map_or(&[][..], |k| k.as_ref()));
            self.add_lanes(batch);
        }
    }

    /// Adds exactly [`LANES`] keys, in order, through the interleaved hasher.
    fn add_lanes(&mut self, keys: [&[u8]; LANES]) {
        // Pick each key's row first, in key order, exactly as one-by-one adds would (the choice
        // depends only on how many keys came before, not on the keys).
        let (rows, targets): (&mut [BitRow], [usize; LANES]) = match &mut self.inner {
            Inner::Simple(row) => (std::slice::from_mut(row), [0; LANES]),
            Inner::Dynamic(d) => {
                let mut targets = [0; LANES];
                for target in &mut targets {
                    *target = d.next_row();
                }
                (d.rows.as_mut_slice(), targets)
            }
        };
        let (num_hashes, vector_size) = (rows[targets[0]].num_hashes, rows[targets[0]].vector_size);
        // Rows of one filter share their parameters unless a decoded filter said otherwise.
        let uniform = targets
            .iter()
            .all(|&t| rows[t].num_hashes == num_hashes && rows[t].vector_size == vector_size);
        let Some(lanes) = LaneKeys::new(keys).filter(|_| uniform) else {
            for (key, &target) in keys.iter().zip(&targets) {
                rows[target].add(key);
            }
            return;
        };
        let num_hashes = num_hashes as usize;
        let mut hashes = [0i32; LANES];
        if num_hashes <= LANE_HASHES {
            // Hash all lanes together, then set each key's bits in its own row.
            let mut positions = [[0u32; LANES]; LANE_HASHES];
            for step in positions.iter_mut().take(num_hashes) {
                hashes = lanes.hash(hashes);
                for (slot, hash) in step.iter_mut().zip(hashes) {
                    // Below vector_size, itself an i32.
                    *slot = bit_position(hash, vector_size) as u32;
                }
            }
            for (lane, &target) in targets.iter().enumerate() {
                let row = &mut rows[target];
                for step in &positions[..num_hashes] {
                    row.set(step[lane] as usize);
                }
            }
        } else {
            for _ in 0..num_hashes {
                hashes = lanes.hash(hashes);
                for (hash, &target) in hashes.iter().zip(&targets) {
                    rows[target].set(bit_position(*hash, vector_size));
                }
            }
        }
    }

    /// Whether the key may have been added: `false` means it definitely was not.
    #[inline]
    pub fn might_contain(&self, key: &str) -> bool {
        self.might_contain_bytes(key.as_bytes())
    }

    /// [`Self::might_contain`] for a key given as raw bytes.
    pub fn might_contain_bytes(&self, key: &[u8]) -> bool {
        match &self.inner {
            Inner::Simple(row) => row.contains(key),
            Inner::Dynamic(d) => d.rows.iter().any(|row| row.contains(key)),
        }
    }

    /// Serializes the filter into its footer form: Base64 of the Java `DataOutput` bytes.
    pub fn to_base64(&self) -> String {
        BASE64.encode(self.to_bytes())
    }

    /// The raw Java `DataOutput` bytes (what [`Self::to_base64`] encodes).
    pub fn to_bytes(&self) -> Vec<u8> {
        match &self.inner {
            Inner::Simple(row) => {
                let mut out = Vec::with_capacity(row.serialized_len());
                row.write(&mut out);
                out
            }
            Inner::Dynamic(d) => {
                let rows_len: usize = d.rows.iter().map(BitRow::serialized_len).sum();
                let mut out = Vec::with_capacity(HEADER_LEN + 12 + rows_len);
                write_header(&mut out, d.num_hashes, d.vector_size);
                out.extend_from_slice(&d.entries_per_row.to_be_bytes());
                out.extend_from_slice(&d.keys_in_current_row.to_be_bytes());
                // A filter holds far fewer than i32::MAX rows (each is a non-empty bit vector
                // that was either read from an i32 count or grown towards an i32 bound).
                out.extend_from_slice(&(d.rows.len() as i32).to_be_bytes());
                for row in &d.rows {
                    row.write(&mut out);
                }
                out
            }
        }
    }

    /// Decodes a footer value (Base64 of the Java `DataOutput` bytes) of the given kind.
    pub fn from_base64(s: &str, kind: BloomFilterType) -> Result<Self, BloomError> {
        let bytes = BASE64
            .decode(s)
            .map_err(|source| BloomError::InvalidBase64 { source })?;
        Self::from_bytes(&bytes, kind)
    }

    /// Decodes a footer's bloom filter given the values of [`BLOOM_FILTER_FOOTER_KEY`] and
    /// (optionally) [`BLOOM_FILTER_TYPE_CODE_KEY`]; a missing type code means `SIMPLE`, as in Java.
    pub fn from_footer(bloom_base64: &str, type_code: Option<&str>) -> Result<Self, BloomError> {
        let kind = match type_code {
            Some(code) => BloomFilterType::from_code(code)?,
            None => BloomFilterType::Simple,
        };
        Self::from_base64(bloom_base64, kind)
    }

    /// Decodes a `DYNAMIC_V0` filter written with `max_entries` as its bound and restores the
    /// state Java does not serialize (the bound, whether it was reached, the round-robin
    /// position), so that adding keys to it gives exactly the filter that adding every key to a
    /// fresh [`Self::new_dynamic`] with the same parameters gives. A rewrite that keeps a
    /// file's keys in order extends the old filter with its new keys instead of rehashing all.
    pub fn resume_dynamic(bloom_base64: &str, max_entries: usize) -> Result<Self, BloomError> {
        let mut filter = Self::from_base64(bloom_base64, BloomFilterType::DynamicV0)?;
        let max_entries = i32::try_from(max_entries)
            .map_err(|_| BloomError::MaxEntriesTooLarge { max_entries })?;
        if let Inner::Dynamic(d) = &mut filter.inner {
            d.max_entries = max_entries;
            let capacity = (d.rows.len() as i32).wrapping_mul(d.entries_per_row);
            // past the bound every key is counted on and goes round-robin; the first one went
            // to row 0 without advancing the index
            if capacity >= max_entries && d.keys_in_current_row > d.entries_per_row {
                d.reached_max = true;
                d.round_robin_index = (d.keys_in_current_row - d.entries_per_row - 1) as usize;
            }
        }
        Ok(filter)
    }

    /// Decodes raw Java `DataOutput` bytes of the given kind.
    ///
    /// Like Java's `readFields`, bits beyond `vectorSize` in the last byte of a bit vector are
    /// dropped. Unlike Java, trailing bytes after the filter are an error
    /// ([`BloomError::TrailingBytes`]), which also catches decoding with the wrong kind.
    ///
    /// A decoded dynamic filter behaves as Java's does after `readFields`: the `max_entries`
    /// bound is not serialized, so keys added after decoding fill the last row up to
    /// `numEntriesPerRow` and then go to the rows round-robin, never adding a row.
    pub fn from_bytes(bytes: &[u8], kind: BloomFilterType) -> Result<Self, BloomError> {
        let mut reader = Reader { bytes, pos: 0 };
        let inner = match kind {
            BloomFilterType::Simple => Inner::Simple(BitRow::read(&mut reader)?),
            BloomFilterType::DynamicV0 => {
                let (num_hashes, vector_size) = read_header(&mut reader)?;
                let entries_per_row = reader.read_i32()?;
                let keys_in_current_row = reader.read_i32()?;
                let row_count = reader.read_i32()?;
                if row_count < 1 {
                    return Err(BloomError::InvalidRowCount { rows: row_count });
                }
                // Do not trust the count for pre-allocation: each row needs at least a header.
                let mut rows =
                    Vec::with_capacity((row_count as usize).min(reader.remaining() / HEADER_LEN));
                for _ in 0..row_count {
                    rows.push(BitRow::read(&mut reader)?);
                }
                Inner::Dynamic(DynamicFilter {
                    num_hashes,
                    vector_size,
                    entries_per_row,
                    keys_in_current_row,
                    // Java's no-arg constructor + readFields leave these at their defaults.
                    max_entries: 0,
                    reached_max: false,
                    round_robin_index: 0,
                    rows,
                })
            }
        };
        if reader.remaining() != 0 {
            return Err(BloomError::TrailingBytes {
                count: reader.remaining(),
            });
        }
        Ok(Self { inner })
    }
}

/// Compares two strings as Java's `String.compareTo` does (by UTF-16 code units), the order of
/// the [`MIN_RECORD_KEY_FOOTER_KEY`]/[`MAX_RECORD_KEY_FOOTER_KEY`] values written through Hudi's
/// Avro write path.
///
/// It differs from Rust's `str` (byte / code point) order only when a character above U+FFFF is
/// compared with one in U+E000..=U+FFFF. (Spark's row-writer path compares `UTF8String`s by bytes,
/// i.e. in Rust's order; for such keys the two Java paths themselves disagree.)
pub fn java_string_cmp(a: &str, b: &str) -> Ordering {
    if a.is_ascii() && b.is_ascii() {
        return a.cmp(b);
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

mod bits;
mod hash;

use bits::*;
use hash::*;

#[cfg(test)]
mod tests;
