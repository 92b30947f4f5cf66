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

/// Footer key under which pre-Apache ("com.uber.hoodie") writers stored the bloom filter.
/// Java readers also accept it; new files never use it.
pub const LEGACY_BLOOM_FILTER_FOOTER_KEY: &str = "com.uber.hoodie.bloomfilter";

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
/// use hoodie_format::bloom::{BloomFilterType, HoodieBloomFilter};
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

/// Java `BloomFilterUtils.getBitSize` / `getNumHashes`, with Java's double arithmetic and
/// saturating `(int)` casts (Rust's `as i32` from `f64` saturates and maps NaN to 0 alike).
fn java_sizing(num_entries: usize, fpp: f64) -> Result<(i32, i32), BloomError> {
    let invalid = || BloomError::InvalidSizing { num_entries, fpp };
    // Java would size a filter for fpp <= 0 too (up to Integer.MAX_VALUE bits); reject it here.
    if !(fpp > 0.0 && fpp < 1.0) {
        return Err(invalid());
    }
    let n = i32::try_from(num_entries).map_err(|_| invalid())?;
    let ln2 = 2f64.ln();
    let log2_squared = ln2 * ln2;
    let vector_size = (f64::from(n) * (-fpp.ln() / log2_squared)).ceil() as i32;
    if vector_size <= 0 {
        return Err(invalid());
    }
    let num_hashes = (ln2 * f64::from(vector_size) / f64::from(n)).ceil() as i32;
    if num_hashes <= 0 {
        return Err(invalid());
    }
    Ok((vector_size, num_hashes))
}

const MURMUR_M: i32 = 0x5bd1_e995;

/// Hudi's `MurmurHash.hash(data, 0, data.length, seed)`: MurmurHash2 (32 bit) with Java's tail
/// handling (tail bytes sign-extended; the first tail byte is shifted highest).
#[inline]
fn murmur_hash(data: &[u8], seed: i32) -> i32 {
    // Java takes the length as an int; arrays longer than i32::MAX cannot exist there.
    let mut h = seed ^ (data.len() as i32);
    let mut chunks = data.chunks_exact(4);
    for chunk in &mut chunks {
        h = h.wrapping_mul(MURMUR_M) ^ murmur_block(chunk);
    }
    if let Some(tail) = murmur_tail(chunks.remainder()) {
        h = (h ^ tail).wrapping_mul(MURMUR_M);
    }
    murmur_finish(h)
}

/// The mixed value of one 4-byte (little-endian) block; it does not depend on the seed.
#[inline(always)]
fn murmur_block(chunk: &[u8]) -> i32 {
    let mut k = i32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
    k = k.wrapping_mul(MURMUR_M);
    k ^= ((k as u32) >> 24) as i32;
    k.wrapping_mul(MURMUR_M)
}

/// The value 1 to 3 tail bytes are xor-ed in as (`None` without a tail); it does not depend on
/// the seed. Java: `(int) data[length - 3] << 16`, `(int) data[length - 2] << 8`,
/// `data[length - 1]` on signed bytes, so each byte is sign-extended before shifting.
#[inline(always)]
fn murmur_tail(tail: &[u8]) -> Option<i32> {
    let len = tail.len();
    if len == 0 {
        return None;
    }
    let mut value = i32::from(tail[len - 1] as i8);
    if len >= 2 {
        value ^= i32::from(tail[len - 2] as i8) << 8;
    }
    if len >= 3 {
        value ^= i32::from(tail[len - 3] as i8) << 16;
    }
    Some(value)
}

#[inline(always)]
fn murmur_finish(mut h: i32) -> i32 {
    h ^= ((h as u32) >> 13) as i32;
    h = h.wrapping_mul(MURMUR_M);
    h ^ ((h as u32) >> 15) as i32
}

/// Java `Math.abs(h % vectorSize)`: `%` truncates like Java's, and the remainder's magnitude is
/// below `vector_size`, so the absolute value cannot overflow.
#[inline(always)]
fn bit_position(hash: i32, vector_size: i32) -> usize {
    (hash % vector_size).unsigned_abs() as usize
}

/// Keys hashed together by [`HoodieBloomFilter::add_all`].
const LANES: usize = 4;

/// Keys up to this many 4-byte blocks (256 bytes) take the interleaved path of
/// [`HoodieBloomFilter::add_all`]; longer ones are added one at a time.
const LANE_BLOCKS: usize = 64;

/// Filters with up to this many hash functions (the default has 30) buffer the positions of
/// [`HoodieBloomFilter::add_all`]'s keys on the stack.
const LANE_HASHES: usize = 64;

/// Hashes [`LANES`] keys at once. Java re-hashes the whole key for each of the chained hash
/// functions, and every chain step depends on the previous one, so a single key is bound by
/// multiply latency. Here the seed-independent block mixing is done once per key and the chains
/// of several keys are interleaved; the values are exactly [`murmur_hash`]'s.
struct LaneKeys {
    blocks: [[i32; LANE_BLOCKS]; LANES],
    num_blocks: [usize; LANES],
    tails: [Option<i32>; LANES],
    lens: [i32; LANES],
    same_num_blocks: bool,
}

impl LaneKeys {
    /// `None` if a key is too long for the lane buffers.
    #[inline]
    fn new(keys: [&[u8]; LANES]) -> Option<Self> {
        if keys.iter().any(|k| k.len() > 4 * LANE_BLOCKS) {
            return None;
        }
        let mut lanes = LaneKeys {
            blocks: [[0; LANE_BLOCKS]; LANES],
            num_blocks: [0; LANES],
            tails: [None; LANES],
            lens: [0; LANES],
            same_num_blocks: true,
        };
        for (lane, key) in keys.iter().enumerate() {
            let chunks = key.chunks_exact(4);
            lanes.tails[lane] = murmur_tail(chunks.remainder());
            lanes.num_blocks[lane] = key.len() / 4;
            lanes.lens[lane] = key.len() as i32;
            for (slot, chunk) in lanes.blocks[lane].iter_mut().zip(chunks) {
                *slot = murmur_block(chunk);
            }
        }
        lanes.same_num_blocks = lanes.num_blocks.iter().all(|&n| n == lanes.num_blocks[0]);
        Some(lanes)
    }

    /// `murmur_hash(key[lane], seeds[lane])` for every lane.
    #[inline(always)]
    fn hash(&self, seeds: [i32; LANES]) -> [i32; LANES] {
        let mut h: [i32; LANES] = std::array::from_fn(|lane| seeds[lane] ^ self.lens[lane]);
        if self.same_num_blocks {
            for block in 0..self.num_blocks[0] {
                for (h, blocks) in h.iter_mut().zip(&self.blocks) {
                    *h = h.wrapping_mul(MURMUR_M) ^ blocks[block];
                }
            }
        } else {
            for ((h, blocks), &n) in h.iter_mut().zip(&self.blocks).zip(&self.num_blocks) {
                for &k in &blocks[..n] {
                    *h = h.wrapping_mul(MURMUR_M) ^ k;
                }
            }
        }
        for (h, tail) in h.iter_mut().zip(self.tails) {
            if let Some(tail) = tail {
                *h = (*h ^ tail).wrapping_mul(MURMUR_M);
            }
            *h = murmur_finish(*h);
        }
        h
    }
}

/// The bit positions Java's `HashFunction.hash` yields for a key, without allocating.
struct HashPositions<'a> {
    key: &'a [u8],
    remaining: i32,
    hash: i32,
    vector_size: i32,
}

impl<'a> HashPositions<'a> {
    #[inline]
    fn new(key: &'a [u8], num_hashes: i32, vector_size: i32) -> Self {
        Self {
            key,
            remaining: num_hashes,
            hash: 0,
            vector_size,
        }
    }
}

impl Iterator for HashPositions<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.remaining <= 0 {
            return None;
        }
        self.remaining -= 1;
        self.hash = murmur_hash(self.key, self.hash);
        Some(bit_position(self.hash, self.vector_size))
    }
}

/// One plain bloom filter (Java `InternalBloomFilter`): a header and a bit vector.
#[derive(Clone, PartialEq, Eq)]
struct BitRow {
    /// Positive (validated on read, computed positive on creation).
    num_hashes: i32,
    /// Positive (validated on read, computed positive on creation).
    vector_size: i32,
    /// Bit `i` is bit `i % 64` of `words[i / 64]`; bits at or beyond `vector_size` stay zero.
    words: Vec<u64>,
}

impl BitRow {
    fn new(num_hashes: i32, vector_size: i32) -> Self {
        Self {
            num_hashes,
            vector_size,
            words: vec![0; (vector_size as usize).div_ceil(64)],
        }
    }

    #[inline]
    fn add(&mut self, key: &[u8]) {
        for pos in HashPositions::new(key, self.num_hashes, self.vector_size) {
            self.set(pos);
        }
    }

    #[inline(always)]
    fn set(&mut self, pos: usize) {
        self.words[pos >> 6] |= 1u64 << (pos & 63);
    }

    #[inline]
    fn contains(&self, key: &[u8]) -> bool {
        HashPositions::new(key, self.num_hashes, self.vector_size)
            .all(|pos| self.words[pos >> 6] & (1u64 << (pos & 63)) != 0)
    }

    fn bit_bytes(&self) -> usize {
        (self.vector_size as usize).div_ceil(8)
    }

    fn serialized_len(&self) -> usize {
        HEADER_LEN + self.bit_bytes()
    }

    fn write(&self, out: &mut Vec<u8>) {
        write_header(out, self.num_hashes, self.vector_size);
        // Little-endian words give exactly Java's layout: byte j holds bits 8j..8j+7, LSB first.
        let end = out.len() + self.bit_bytes();
        for word in &self.words {
            out.extend_from_slice(&word.to_le_bytes());
        }
        out.truncate(end);
    }

    fn read(reader: &mut Reader<'_>) -> Result<Self, BloomError> {
        let (num_hashes, vector_size) = read_header(reader)?;
        let mut row = BitRow::new(num_hashes, vector_size);
        let bits = reader.take(row.bit_bytes())?;
        for (word, chunk) in row.words.iter_mut().zip(bits.chunks(8)) {
            let mut buf = [0u8; 8];
            buf[..chunk.len()].copy_from_slice(chunk);
            *word = u64::from_le_bytes(buf);
        }
        // Java's readFields only looks at bits below vectorSize.
        let used = vector_size as u32 % 64;
        if used != 0 {
            if let Some(last) = row.words.last_mut() {
                *last &= (1u64 << used) - 1;
            }
        }
        Ok(row)
    }
}

/// Java `InternalDynamicBloomFilter` (Hudi's bounded variant of Hadoop's `DynamicBloomFilter`).
#[derive(Clone)]
struct DynamicFilter {
    /// Outer header: parameters for rows added later.
    num_hashes: i32,
    vector_size: i32,
    /// Java `nr`: keys per row before a new row is started.
    entries_per_row: i32,
    /// Java `currentNbRecord`: keys added since the last row was started (it keeps counting once
    /// keys go round-robin).
    keys_in_current_row: i32,
    /// Java `maxNr` (not serialized; 0 after decoding, as in Java).
    max_entries: i32,
    /// Java `reachedMax` (not serialized).
    reached_max: bool,
    /// Java `curMatrixIndex` (not serialized).
    round_robin_index: usize,
    /// Java `matrix`; never empty.
    rows: Vec<BitRow>,
}

impl DynamicFilter {
    #[inline]
    fn add(&mut self, key: &[u8]) {
        let row = self.next_row();
        self.rows[row].add(key);
    }

    /// The row the next key goes to, counting that key (Java `add` minus the hashing).
    #[inline]
    fn next_row(&mut self) -> usize {
        let row = self.active_row();
        self.keys_in_current_row = self.keys_in_current_row.wrapping_add(1);
        row
    }

    /// Java `getActiveStandardBF` plus the row creation in `add`, step by step (with Java's
    /// wrapping `int` arithmetic for `matrix.length * nr`).
    #[inline]
    fn active_row(&mut self) -> usize {
        if self.reached_max {
            let row = self.round_robin_index % self.rows.len();
            self.round_robin_index = self.round_robin_index.wrapping_add(1);
            return row;
        }
        if self.keys_in_current_row >= self.entries_per_row {
            let capacity = (self.rows.len() as i32).wrapping_mul(self.entries_per_row);
            if capacity < self.max_entries {
                self.rows
                    .push(BitRow::new(self.num_hashes, self.vector_size));
                self.keys_in_current_row = 0;
            } else {
                // The first key after the bound goes to row 0, and so does the next one: Java
                // returns matrix[0] here without advancing curMatrixIndex.
                self.reached_max = true;
                return 0;
            }
        }
        self.rows.len() - 1
    }
}

fn write_header(out: &mut Vec<u8>, num_hashes: i32, vector_size: i32) {
    out.extend_from_slice(&VERSION.to_be_bytes());
    out.extend_from_slice(&num_hashes.to_be_bytes());
    out.push(MURMUR_HASH);
    out.extend_from_slice(&vector_size.to_be_bytes());
}

/// Reads and validates a filter header, returning `(num_hashes, vector_size)`.
fn read_header(reader: &mut Reader<'_>) -> Result<(i32, i32), BloomError> {
    let version = reader.read_i32()?;
    if version > 0 {
        // Hadoop's unversioned format: the field is the hash count and the hash is Jenkins.
        return Err(BloomError::UnsupportedHashType { hash_type: 0 });
    }
    if version != VERSION {
        return Err(BloomError::UnsupportedVersion { version });
    }
    let num_hashes = reader.read_i32()?;
    let hash_type = reader.take(1)?[0] as i8;
    let vector_size = reader.read_i32()?;
    if hash_type != MURMUR_HASH as i8 {
        return Err(BloomError::UnsupportedHashType { hash_type });
    }
    if num_hashes <= 0 {
        return Err(BloomError::InvalidNumHashes { num_hashes });
    }
    if vector_size <= 0 {
        return Err(BloomError::InvalidVectorSize { vector_size });
    }
    Ok((num_hashes, vector_size))
}

/// A cursor over big-endian bytes (Java `DataInput`).
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], BloomError> {
        if self.remaining() < n {
            return Err(BloomError::Truncated {
                offset: self.pos,
                needed: n,
                got: self.remaining(),
            });
        }
        let slice = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(slice)
    }

    fn read_i32(&mut self) -> Result<i32, BloomError> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
}

#[cfg(test)]
mod tests;
