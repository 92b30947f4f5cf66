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
mod tests {
    use super::*;

    use std::collections::HashMap;
    use std::fs::File;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use arrow::array::{Array, AsArray};
    use arrow::datatypes::DataType;
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::arrow::ProjectionMask;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    // ---------------------------------------------------------------------------------------
    // Golden values. They were produced by running the Java code of Apache Hudi's
    // `MurmurHash`, `HashFunction`, `InternalBloomFilter`, `InternalDynamicBloomFilter` and
    // `BloomFilterUtils` (JDK 17) on the keys of `java_key` below, and printing
    // `Base64.getEncoder()` of the `DataOutputStream` bytes, i.e. what `serializeToString`
    // writes into Parquet footers.
    // ---------------------------------------------------------------------------------------

    /// The key family used for the Java goldens (Java: `"key-" + i`, `"clé-" + i + "-ü"`,
    /// `"\uD83D\uDD11" + i`): ASCII, 2-byte and 4-byte UTF-8, so tails contain bytes >= 0x80.
    fn java_key(i: usize) -> String {
        match i % 3 {
            0 => format!("key-{i}"),
            1 => format!("clé-{i}-ü"),
            _ => format!("\u{1F511}{i}"),
        }
    }

    /// `(length, seed, Java MurmurHash.hash(data, 0, length, seed))` for
    /// `data[j] = (byte) (0x80 + 37 * j)`.
    const MURMUR_GOLDENS: [(usize, i32, i32); 26] = [
        (0, 0, 0),
        (1, 0, -39096812),
        (2, 0, -1777451749),
        (3, 0, -1661733374),
        (4, 0, 1923846748),
        (5, 0, -1076657271),
        (6, 0, 50902994),
        (7, 0, -701285039),
        (8, 0, 709888353),
        (9, 0, 846617593),
        (10, 0, -1282689757),
        (11, 0, -1924724446),
        (12, 0, -1182565271),
        (0, -123456789, 232786258),
        (1, -123456789, -1205406299),
        (2, -123456789, -175624198),
        (3, -123456789, -763959920),
        (4, -123456789, 211980160),
        (5, -123456789, 322518144),
        (6, -123456789, 1543644480),
        (7, -123456789, 1004353031),
        (8, -123456789, -1718037050),
        (9, -123456789, -1738301490),
        (10, -123456789, -41924809),
        (11, -123456789, 782304504),
        (12, -123456789, 1194900642),
    ];

    /// Java dynamic filter (n=10, fpp=0.01, max=30; 96 bits, 7 hashes) after `java_key(0..100)`:
    /// three rows, then 70 keys round-robin.
    const JAVA_DYN_10_001_30_100KEYS: &str = concat!(
        "/////wAAAAcBAAAAYAAAAAoAAABQAAAAA/////8AAAAHAQAAAGD////3X/f////f////////AAAA",
        "BwEAAABg+/vf+//99/v7//3//////wAAAAcBAAAAYP7////9///zut//9w==",
    );

    /// Java dynamic filter (n=10, fpp=0.01, max=25) after `java_key(0..47)`: the bound is not a
    /// multiple of the row size (3 rows).
    const JAVA_DYN_10_001_25_47KEYS: &str = concat!(
        "/////wAAAAcBAAAAYAAAAAoAAAAbAAAAA/////8AAAAHAQAAAGDN9fp3W7c39/sf9f//////AAAA",
        "BwEAAABgMrnf+bfJELPw2/X9/////wAAAAcBAAAAYHL/9fTVf+/BKt9ntA==",
    );

    /// Java dynamic filter (n=50, fpp=1e-3, max=120; 719 bits, 10 hashes) after
    /// `java_key(0..200)`: rows are only partly filled, so every misplaced bit would show.
    const JAVA_DYN_50_0001_120_200KEYS: &str = concat!(
        "/////wAAAAoBAAACzwAAADIAAABkAAAAA/////8AAAAKAQAAAs8+ftYzagH7/e+lvv3eTM98cq/r",
        "VdKPkd7a6r/flWet7m1bnmy6l3n/OG9O0tHmHugvvqnzT+fu9/7SnXpdHGkcbqJmKj6v83Gq/36q",
        "BkpNIbsYf//cv26u/nv/////AAAACgEAAALPO5tZ8/Gzc8LVP607Pasfx2u1Enqt51ccqPfIYNnJ",
        "2ef9fbKPyr3e9z68W7VfcL/71RyfF/H/LX5FLn4S7H9Fl7n+ukuOdpm3OYruEl+uueMPTbjPzXaX",
        "IvJt/////wAAAAoBAAACz87EHuPvFuf7zzqv/7YhS5RgHJWaApSXtnrnya77Htzdt3zWfWJn+HcF",
        "11a54S1iUi9d3BPgbw/i8ml+7v7kH8v/7OqQW4utP/JRrDyQDhm/T6+Wd/FLku/vTA==",
    );

    /// Java simple filter (n=20, fpp=0.05; 125 bits, 5 hashes) after `java_key(0..50)`.
    const JAVA_SIMPLE_20_005_50KEYS: &str = "/////wAAAAUBAAAAfX+////+v7/+9/v/7/fv/xY=";

    /// Java simple filter (n=100, fpp=0.01; 959 bits, 7 hashes) after `java_key(0..40)`.
    const JAVA_SIMPLE_100_001_40KEYS: &str = concat!(
        "/////wAAAAcBAAADvzgEVqEcAsA8EgAgLYBEAAmACisUkoFAgQQBQ4DjTBjkIIEJBAAgegCAIAES",
        "iY0/0xAQKpeAOoBABCjBCgFhEAFAQQYGCkIMoqhCIQgSQgQQAZKEIpZDyCAAABEASBKFNhcBRgAA",
        "ySrYAAAAAYCQIhJcZbOCAB5ACw==",
    );

    /// Java: deserialize an empty dynamic filter (n=10, fpp=0.01, max=30), then add
    /// `java_key(0..25)`. `maxNr` is lost by `readFields`, so no row is ever added.
    const JAVA_DYN_READ_THEN_ADD_25KEYS: &str =
        "/////wAAAAcBAAAAYAAAAAoAAAAZAAAAAf////8AAAAHAQAAAGD///zf8/t39/vf5/8=";

    fn filter_with(
        mut filter: HoodieBloomFilter,
        keys: impl IntoIterator<Item = String>,
    ) -> HoodieBloomFilter {
        for key in keys {
            filter.add(&key);
        }
        filter
    }

    #[test]
    fn murmur_matches_java() {
        for (len, seed, expected) in MURMUR_GOLDENS {
            let data: Vec<u8> = (0..len).map(|j| (0x80 + 37 * j) as u8).collect();
            assert_eq!(murmur_hash(&data, seed), expected, "len={len} seed={seed}");
        }
    }

    #[test]
    fn sizing_matches_java() {
        assert_eq!(java_sizing(60_000, 1e-9).unwrap(), (2_587_966, 30));
        assert_eq!(java_sizing(10, 1e-6).unwrap(), (288, 20));
        assert_eq!(java_sizing(1000, 1e-6).unwrap(), (28_756, 20));
        assert_eq!(java_sizing(200, 1e-6).unwrap(), (5752, 20));
        assert_eq!(java_sizing(20, 0.05).unwrap(), (125, 5));
        assert_eq!(java_sizing(10, 0.01).unwrap(), (96, 7));
        assert_eq!(java_sizing(50, 1e-3).unwrap(), (719, 10));
        let filter = HoodieBloomFilter::default_dynamic();
        assert_eq!(filter.kind(), BloomFilterType::DynamicV0);
        assert_eq!(filter.vector_size(), 2_587_966);
        assert_eq!(filter.num_hashes(), 30);
        assert_eq!(filter.num_rows(), 1);
        // header + 3 ints + one row (header + ceil(2587966 / 8) bytes)
        assert_eq!(filter.to_bytes().len(), 13 + 12 + 13 + 323_496);
    }

    #[test]
    fn invalid_sizing_is_rejected() {
        for (n, fpp) in [
            (0, 0.01),
            (10, 1.0),
            (10, 2.0),
            (10, f64::NAN),
            (10, 0.0),
            (10, -0.5),
        ] {
            let err = HoodieBloomFilter::try_new_simple(n, fpp).unwrap_err();
            assert!(
                matches!(err, BloomError::InvalidSizing { .. }),
                "{n} {fpp}: {err:?}"
            );
        }
        let err = HoodieBloomFilter::try_new_dynamic(1 << 31, 0.01, 10).unwrap_err();
        assert!(matches!(err, BloomError::InvalidSizing { .. }), "{err:?}");
        let err = HoodieBloomFilter::try_new_dynamic(10, 0.01, 1 << 31).unwrap_err();
        assert!(
            matches!(err, BloomError::MaxEntriesTooLarge { max_entries } if max_entries == 1 << 31),
            "{err:?}"
        );
    }

    #[test]
    fn filters_match_java_goldens_byte_for_byte() {
        let cases: [(HoodieBloomFilter, usize, &str); 5] = [
            (
                HoodieBloomFilter::new_dynamic(10, 0.01, 30),
                100,
                JAVA_DYN_10_001_30_100KEYS,
            ),
            (
                HoodieBloomFilter::new_dynamic(10, 0.01, 25),
                47,
                JAVA_DYN_10_001_25_47KEYS,
            ),
            (
                HoodieBloomFilter::new_dynamic(50, 1e-3, 120),
                200,
                JAVA_DYN_50_0001_120_200KEYS,
            ),
            (
                HoodieBloomFilter::new_simple(20, 0.05),
                50,
                JAVA_SIMPLE_20_005_50KEYS,
            ),
            (
                HoodieBloomFilter::new_simple(100, 0.01),
                40,
                JAVA_SIMPLE_100_001_40KEYS,
            ),
        ];
        for (empty, count, golden) in cases {
            let kind = empty.kind();
            let mut batched = empty.clone();
            batched.add_all((0..count).map(java_key));
            assert_eq!(
                batched.to_base64(),
                golden,
                "{kind} filter of {count} keys (add_all)"
            );
            let filter = filter_with(empty, (0..count).map(java_key));
            assert_eq!(filter.to_base64(), golden, "{kind} filter of {count} keys");
            let decoded = HoodieBloomFilter::from_base64(golden, kind).unwrap();
            assert_eq!(decoded.to_base64(), golden);
            for i in 0..count {
                assert!(decoded.might_contain(&java_key(i)), "{kind}: key {i}");
            }
        }
        let dynamic = HoodieBloomFilter::from_base64(
            JAVA_DYN_50_0001_120_200KEYS,
            BloomFilterType::DynamicV0,
        )
        .unwrap();
        assert_eq!(dynamic.num_rows(), 3);
        assert_eq!((dynamic.vector_size(), dynamic.num_hashes()), (719, 10));
    }

    #[test]
    fn decoded_dynamic_filter_keeps_adding_like_java() {
        let empty = HoodieBloomFilter::new_dynamic(10, 0.01, 30).to_base64();
        let decoded = HoodieBloomFilter::from_base64(&empty, BloomFilterType::DynamicV0).unwrap();
        let filter = filter_with(decoded, (0..25).map(java_key));
        assert_eq!(filter.num_rows(), 1);
        assert_eq!(filter.to_base64(), JAVA_DYN_READ_THEN_ADD_25KEYS);
    }

    /// Default filter (60000 keys per row, max 100000) with 130000 keys: a second row after
    /// 60000 keys, round-robin over both rows after 120000. Java produced 647043 bytes with
    /// CRC-32 0xfe549582, whose Base64 (862724 chars) has CRC-32 0x71de81c8.
    #[test]
    fn default_dynamic_growth_matches_java() {
        let keys: Vec<String> = (0..130_000).map(java_key).collect();
        let mut filter = HoodieBloomFilter::default_dynamic();
        filter.add_all(&keys);
        assert_eq!(filter.num_rows(), 2);
        let bytes = filter.to_bytes();
        assert_eq!(bytes.len(), 647_043);
        assert_eq!(crc32fast::hash(&bytes), 0xfe54_9582);
        let encoded = filter.to_base64();
        assert_eq!(encoded.len(), 862_724);
        assert_eq!(crc32fast::hash(encoded.as_bytes()), 0x71de_81c8);
        // keysInCurrentRow keeps counting in round-robin mode: 130000 - 60000.
        assert_eq!(&bytes[17..21], &70_000i32.to_be_bytes());
        let decoded = HoodieBloomFilter::from_base64(&encoded, BloomFilterType::DynamicV0).unwrap();
        assert_eq!(decoded, filter);
        assert_eq!(growth_state(&filter), Some((100_000, true, 9_999)));
        assert_eq!(growth_state(&decoded), Some((0, false, 0)));
        assert!((0..130_000).all(|i| decoded.might_contain(&java_key(i))));
    }

    /// A dynamic filter whose outer header says 7 hashes / 96 bits but whose single row says
    /// 5 hashes / 125 bits (Java uses each row's own header), with 3 keys in that row.
    fn mixed_parameter_filter() -> HoodieBloomFilter {
        let mut bytes = Vec::new();
        write_header(&mut bytes, 7, 96);
        for value in [10i32, 3, 1] {
            bytes.extend_from_slice(&value.to_be_bytes());
        }
        let row = BASE64.decode(JAVA_SIMPLE_20_005_50KEYS).unwrap();
        bytes.extend_from_slice(&row);
        HoodieBloomFilter::from_bytes(&bytes, BloomFilterType::DynamicV0).unwrap()
    }

    #[test]
    fn add_all_equals_adding_one_by_one() {
        // Lengths 0..=300: every tail length, equal and unequal lengths within a batch, and keys
        // longer than the 256 bytes the interleaved hasher takes.
        let lengths = [
            37, 37, 37, 37, 5, 300, 36, 0, 1, 2, 3, 4, 257, 256, 255, 8, 9, 10, 11,
        ];
        let keys: Vec<String> = lengths
            .iter()
            .enumerate()
            .map(|(i, &len)| {
                // Exactly `len` bytes, with 2-byte characters so tails hold bytes >= 0x80.
                let mut key = String::new();
                let mut j = i;
                while key.len() < len {
                    if j % 3 == 0 && len - key.len() >= 2 {
                        key.push('é');
                    } else {
                        key.push(char::from(b'a' + (j % 26) as u8));
                    }
                    j += 7;
                }
                assert_eq!(key.len(), len);
                key
            })
            .collect();
        let empty_decoded = HoodieBloomFilter::from_base64(
            &HoodieBloomFilter::new_dynamic(3, 0.01, 9).to_base64(),
            BloomFilterType::DynamicV0,
        )
        .unwrap();
        let starts = [
            HoodieBloomFilter::new_simple(20, 0.05),
            // More hash functions than the stack buffer holds.
            HoodieBloomFilter::new_simple(10, 1e-30),
            HoodieBloomFilter::default_dynamic(),
            // New rows and round-robin in the middle of batches.
            HoodieBloomFilter::new_dynamic(3, 0.01, 9),
            HoodieBloomFilter::new_dynamic(2, 0.01, 100),
            empty_decoded,
            mixed_parameter_filter(),
        ];
        assert!(starts[1].num_hashes() > LANE_HASHES as u32);
        for start in starts {
            for count in 0..=keys.len() {
                let mut one_by_one = start.clone();
                for key in &keys[..count] {
                    one_by_one.add(key);
                }
                let mut batched = start.clone();
                batched.add_all(&keys[..count]);
                assert!(
                    batched == one_by_one,
                    "{start:?}: add_all of {count} keys differs from add"
                );
                assert_eq!(growth_state(&batched), growth_state(&one_by_one));
                assert_eq!(batched.to_base64(), one_by_one.to_base64());
            }
        }
        let mut grown = HoodieBloomFilter::new_dynamic(3, 0.01, 9);
        grown.add_all(&keys);
        assert_eq!(grown.num_rows(), 3);
        assert!(keys.iter().all(|key| grown.might_contain(key)));
    }

    /// The dynamic filter state that is not serialized: (max entries, round-robin started,
    /// round-robin index).
    fn growth_state(filter: &HoodieBloomFilter) -> Option<(i32, bool, usize)> {
        match &filter.inner {
            Inner::Simple(_) => None,
            Inner::Dynamic(d) => Some((d.max_entries, d.reached_max, d.round_robin_index)),
        }
    }

    #[test]
    fn round_trip_contains_added_keys_only() {
        let keys: Vec<String> = (0..5000).map(|i| format!("uuid-{i:08}-rec")).collect();
        // All within capacity: one row, five full rows of 1000, one simple filter.
        for empty in [
            HoodieBloomFilter::default_dynamic(),
            HoodieBloomFilter::new_dynamic(1000, 1e-6, 10_000),
            HoodieBloomFilter::new_simple(5000, 1e-6),
        ] {
            let kind = empty.kind();
            let filter = filter_with(empty, keys.iter().cloned());
            let encoded = filter.to_base64();
            let decoded = HoodieBloomFilter::from_base64(&encoded, kind).unwrap();
            assert_eq!(decoded.kind(), kind);
            assert_eq!(decoded.to_base64(), encoded);
            for key in &keys {
                assert!(decoded.might_contain(key), "{kind}: {key}");
            }
            let false_positives = (0..5000)
                .filter(|i| decoded.might_contain(&format!("absent-{i}")))
                .count();
            assert!(
                false_positives <= 2,
                "{kind}: {false_positives} false positives"
            );
            assert!(!decoded.might_contain("uuid-00005000-rec"));
        }
        let grown = filter_with(
            HoodieBloomFilter::new_dynamic(1000, 1e-6, 10_000),
            keys.iter().cloned(),
        );
        assert_eq!(grown.num_rows(), 5);
        // Beyond the bound (3 rows of 1000, then round-robin) keys are still all found, though the
        // false positive rate is no longer bounded.
        let bounded = filter_with(
            HoodieBloomFilter::new_dynamic(1000, 1e-6, 3000),
            keys.iter().cloned(),
        );
        assert_eq!(bounded.num_rows(), 3);
        let decoded =
            HoodieBloomFilter::from_base64(&bounded.to_base64(), BloomFilterType::DynamicV0)
                .unwrap();
        assert!(keys.iter().all(|key| decoded.might_contain(key)));
    }

    #[test]
    fn debug_output_is_a_summary() {
        let filter = HoodieBloomFilter::default_dynamic();
        assert_eq!(
            format!("{filter:?}"),
            "HoodieBloomFilter { kind: DynamicV0, vector_size: 2587966, num_hashes: 30, \
             num_rows: 1, entries_per_row: 60000, keys_in_current_row: 0, .. }"
        );
    }

    #[test]
    fn type_codes() {
        assert_eq!(BloomFilterType::Simple.as_code(), "SIMPLE");
        assert_eq!(BloomFilterType::DynamicV0.as_code(), "DYNAMIC_V0");
        assert_eq!(
            BloomFilterType::from_code("DYNAMIC_V0").unwrap(),
            BloomFilterType::DynamicV0
        );
        assert_eq!(
            BloomFilterType::from_code("dynamic_v0").unwrap(),
            BloomFilterType::DynamicV0
        );
        assert_eq!(
            "SIMPLE".parse::<BloomFilterType>().unwrap(),
            BloomFilterType::Simple
        );
        assert_eq!(BloomFilterType::DynamicV0.to_string(), "DYNAMIC_V0");
        let err = BloomFilterType::from_code("DYNAMIC_V1").unwrap_err();
        assert!(matches!(&err, BloomError::UnknownTypeCode { code } if code == "DYNAMIC_V1"));
        // A footer without a type code holds a SIMPLE filter.
        let simple = HoodieBloomFilter::from_footer(JAVA_SIMPLE_20_005_50KEYS, None).unwrap();
        assert_eq!(simple.kind(), BloomFilterType::Simple);
        let dynamic =
            HoodieBloomFilter::from_footer(JAVA_DYN_10_001_30_100KEYS, Some("DYNAMIC_V0")).unwrap();
        assert_eq!(dynamic.kind(), BloomFilterType::DynamicV0);
    }

    #[test]
    fn malformed_input_is_rejected() {
        let simple = BASE64.decode(JAVA_SIMPLE_20_005_50KEYS).unwrap();
        let dynamic = BASE64.decode(JAVA_DYN_10_001_30_100KEYS).unwrap();
        let decode = |bytes: &[u8], kind| HoodieBloomFilter::from_bytes(bytes, kind).unwrap_err();

        let err =
            HoodieBloomFilter::from_base64("not base64!", BloomFilterType::Simple).unwrap_err();
        assert!(matches!(err, BloomError::InvalidBase64 { .. }), "{err:?}");

        let err = decode(&simple[..simple.len() - 1], BloomFilterType::Simple);
        assert!(
            matches!(
                err,
                BloomError::Truncated {
                    offset: 13,
                    needed: 16,
                    got: 15
                }
            ),
            "{err:?}"
        );
        let err = decode(&simple[..5], BloomFilterType::Simple);
        assert!(
            matches!(
                err,
                BloomError::Truncated {
                    offset: 4,
                    needed: 4,
                    got: 1
                }
            ),
            "{err:?}"
        );

        let mut longer = simple.clone();
        longer.push(0);
        let err = decode(&longer, BloomFilterType::Simple);
        assert!(
            matches!(err, BloomError::TrailingBytes { count: 1 }),
            "{err:?}"
        );
        // A dynamic filter decoded as SIMPLE leaves bytes over.
        let err = decode(&dynamic, BloomFilterType::Simple);
        assert!(matches!(err, BloomError::TrailingBytes { .. }), "{err:?}");

        let mut jenkins = simple.clone();
        jenkins[8] = 0;
        let err = decode(&jenkins, BloomFilterType::Simple);
        assert!(
            matches!(err, BloomError::UnsupportedHashType { hash_type: 0 }),
            "{err:?}"
        );
        let mut unversioned = simple.clone();
        unversioned[..4].copy_from_slice(&5i32.to_be_bytes());
        let err = decode(&unversioned, BloomFilterType::Simple);
        assert!(
            matches!(err, BloomError::UnsupportedHashType { hash_type: 0 }),
            "{err:?}"
        );
        let mut version = simple.clone();
        version[..4].copy_from_slice(&(-2i32).to_be_bytes());
        let err = decode(&version, BloomFilterType::Simple);
        assert!(
            matches!(err, BloomError::UnsupportedVersion { version: -2 }),
            "{err:?}"
        );
        let mut no_hashes = simple.clone();
        no_hashes[4..8].copy_from_slice(&0i32.to_be_bytes());
        let err = decode(&no_hashes, BloomFilterType::Simple);
        assert!(
            matches!(err, BloomError::InvalidNumHashes { num_hashes: 0 }),
            "{err:?}"
        );
        let mut no_bits = simple.clone();
        no_bits[9..13].copy_from_slice(&(-8i32).to_be_bytes());
        let err = decode(&no_bits, BloomFilterType::Simple);
        assert!(
            matches!(err, BloomError::InvalidVectorSize { vector_size: -8 }),
            "{err:?}"
        );

        let mut no_rows = dynamic.clone();
        no_rows[21..25].copy_from_slice(&0i32.to_be_bytes());
        let err = decode(&no_rows, BloomFilterType::DynamicV0);
        assert!(
            matches!(err, BloomError::InvalidRowCount { rows: 0 }),
            "{err:?}"
        );
        let mut many_rows = dynamic.clone();
        many_rows[21..25].copy_from_slice(&i32::MAX.to_be_bytes());
        let err = decode(&many_rows, BloomFilterType::DynamicV0);
        assert!(matches!(err, BloomError::Truncated { .. }), "{err:?}");
    }

    #[test]
    fn padding_bits_beyond_vector_size_are_dropped() {
        // 125-bit vector: the top 3 bits of the last byte are padding, ignored by Java.
        let mut bytes = BASE64.decode(JAVA_SIMPLE_20_005_50KEYS).unwrap();
        let last = bytes.len() - 1;
        let clean = bytes[last];
        bytes[last] |= 0xE0;
        let filter = HoodieBloomFilter::from_bytes(&bytes, BloomFilterType::Simple).unwrap();
        assert_eq!(filter.to_bytes()[last], clean & 0x1F);
        assert_eq!(filter.to_base64(), JAVA_SIMPLE_20_005_50KEYS);
    }

    #[test]
    fn java_string_order() {
        assert_eq!(java_string_cmp("a", "b"), Ordering::Less);
        assert_eq!(java_string_cmp("id:10", "id:9"), Ordering::Less);
        assert_eq!(java_string_cmp("same", "same"), Ordering::Equal);
        // U+FF61 (one UTF-16 unit 0xFF61) sorts after U+1F511 (surrogates 0xD83D 0xDD11) in
        // Java, although its code point (and UTF-8) is smaller.
        assert_eq!(java_string_cmp("\u{FF61}", "\u{1F511}"), Ordering::Greater);
        assert_eq!("\u{FF61}".cmp("\u{1F511}"), Ordering::Less);
        assert_eq!(java_string_cmp("é", "z"), Ordering::Greater);
    }

    // ---------------------------------------------------------------------------------------
    // Spark-written fixture tables.
    // ---------------------------------------------------------------------------------------

    /// The shared fixture directory (`.../hudi-tables`): `$HOODIE_FIXTURES`, else
    /// `<repo>/../shared/fixtures/hudi-tables`. Panics when it does not exist.
    fn fixtures_dir() -> PathBuf {
        let dir = match std::env::var_os("HOODIE_FIXTURES") {
            Some(dir) => PathBuf::from(dir),
            None => {
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures/hudi-tables")
            }
        };
        assert!(
            dir.join("data").is_dir(),
            "Hudi fixture tables not found at {} (expected a `data` folder there); set \
             HOODIE_FIXTURES to the `hudi-tables` fixture directory",
            dir.display()
        );
        dir
    }

    /// Extracts a fixture zip (path relative to `<fixtures>/data`) into a fresh temporary
    /// directory with `unzip`, dropping the macOS `__MACOSX` junk.
    fn extract_fixture(zip: &str) -> tempfile::TempDir {
        let zip_path = fixtures_dir().join("data").join(zip);
        assert!(
            zip_path.is_file(),
            "fixture zip {} is missing",
            zip_path.display()
        );
        let dir = tempfile::tempdir().expect("create temp dir");
        let status = Command::new("unzip")
            .arg("-q")
            .arg(&zip_path)
            .arg("-d")
            .arg(dir.path())
            .status()
            .expect("run `unzip` (is it installed?)");
        assert!(
            status.success(),
            "unzip {} failed: {status}",
            zip_path.display()
        );
        let junk = dir.path().join("__MACOSX");
        if junk.exists() {
            std::fs::remove_dir_all(&junk).expect("remove __MACOSX");
        }
        dir
    }

    /// Data-file `.parquet` files under `dir` (skipping `.hoodie` and AppleDouble `._*` files),
    /// sorted for determinism.
    fn parquet_base_files(dir: &Path) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut pending = vec![dir.to_path_buf()];
        while let Some(current) = pending.pop() {
            for entry in std::fs::read_dir(&current).expect("read fixture dir") {
                let path = entry.expect("dir entry").path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if path.is_dir() {
                    if name != ".hoodie" {
                        pending.push(path);
                    }
                } else if name.ends_with(".parquet") && !name.starts_with("._") {
                    found.push(path);
                }
            }
        }
        found.sort();
        found
    }

    /// Footer key/value metadata of a Parquet file.
    fn footer_metadata(path: &Path) -> HashMap<String, String> {
        let reader = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
        reader
            .metadata()
            .file_metadata()
            .key_value_metadata()
            .map(|kvs| {
                kvs.iter()
                    .filter_map(|kv| kv.value.clone().map(|v| (kv.key.clone(), v)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The `_hoodie_record_key` column in file row order (`None` for nulls), or `None` when the
    /// file has no such column.
    fn record_keys(path: &Path) -> Option<Vec<Option<String>>> {
        let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
        let schema = builder.parquet_schema();
        let leaf = schema
            .columns()
            .iter()
            .position(|c| c.path().string() == "_hoodie_record_key")?;
        let mask = ProjectionMask::leaves(schema, [leaf]);
        let reader = builder.with_projection(mask).build().unwrap();
        let mut keys = Vec::new();
        for batch in reader {
            let column = arrow::compute::cast(batch.unwrap().column(0), &DataType::Utf8).unwrap();
            let strings = column.as_string::<i32>();
            keys.extend(
                (0..strings.len())
                    .map(|i| strings.is_valid(i).then(|| strings.value(i).to_string())),
            );
        }
        Some(keys)
    }

    /// Every `.zip` under the fixture `data` directory, relative to it, sorted.
    fn all_fixture_zips() -> Vec<String> {
        let data = fixtures_dir().join("data");
        let mut zips = Vec::new();
        let mut pending = vec![data.clone()];
        while let Some(current) = pending.pop() {
            for entry in std::fs::read_dir(&current).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    pending.push(path);
                } else if path.extension().is_some_and(|e| e == "zip") {
                    zips.push(
                        path.strip_prefix(&data)
                            .unwrap()
                            .to_string_lossy()
                            .into_owned(),
                    );
                }
            }
        }
        zips.sort();
        zips
    }

    /// Result of checking one Spark-written base file.
    struct CheckedFile {
        keys: usize,
    }

    /// Checks one base file's footer against its `_hoodie_record_key` column. Returns `None`
    /// when the footer has no bloom filter.
    fn check_base_file(path: &Path) -> Option<CheckedFile> {
        let footer = footer_metadata(path);
        let what = path.display();
        let Some(encoded) = footer.get(BLOOM_FILTER_FOOTER_KEY) else {
            // Only tables written with hoodie.populate.meta.fields=false lack the filter; their
            // record key column is absent or unpopulated.
            let keys = record_keys(path).unwrap_or_default();
            assert!(
                keys.iter().all(|k| k.as_deref().is_none_or(str::is_empty)),
                "{what}: no bloom filter although record keys are populated"
            );
            assert!(!footer.contains_key(MIN_RECORD_KEY_FOOTER_KEY), "{what}");
            return None;
        };
        let type_code = footer.get(BLOOM_FILTER_TYPE_CODE_KEY).map(String::as_str);
        assert_eq!(type_code, Some("DYNAMIC_V0"), "{what}: type code");
        let decoded = HoodieBloomFilter::from_footer(encoded, type_code)
            .unwrap_or_else(|e| panic!("{what}: decoding the footer bloom filter failed: {e}"));
        assert_eq!(decoded.kind(), BloomFilterType::DynamicV0);
        // Written with Hudi's defaults.
        assert_eq!(
            (decoded.vector_size(), decoded.num_hashes()),
            (2_587_966, 30),
            "{what}"
        );

        let keys: Vec<String> = record_keys(path)
            .unwrap_or_else(|| panic!("{what}: bloom filter but no _hoodie_record_key column"))
            .into_iter()
            .map(|k| k.unwrap_or_else(|| panic!("{what}: null record key")))
            .collect();
        for key in &keys {
            assert!(
                decoded.might_contain(key),
                "{what}: key {key:?} not in its file's filter"
            );
        }

        // The strong check: the filter we build from the file's keys, added in row order, is the
        // footer value byte for byte (bit vectors, header, row count and keysInCurrentRow).
        let mut rebuilt = HoodieBloomFilter::default_dynamic();
        rebuilt.add_all(&keys);
        assert_eq!(
            rebuilt.to_base64(),
            *encoded,
            "{what}: rebuilt filter differs from Java's"
        );

        let min = keys.iter().min_by(|a, b| java_string_cmp(a, b));
        let max = keys.iter().max_by(|a, b| java_string_cmp(a, b));
        assert_eq!(
            footer.get(MIN_RECORD_KEY_FOOTER_KEY),
            min,
            "{what}: min record key"
        );
        assert_eq!(
            footer.get(MAX_RECORD_KEY_FOOTER_KEY),
            max,
            "{what}: max record key"
        );
        Some(CheckedFile { keys: keys.len() })
    }

    #[test]
    fn spark_footers_are_reproduced_exactly() {
        // The two tables named in the format notes first, then every other fixture table.
        for zip in [
            "sample_table/cow/v6_nonpartitioned.zip",
            "sample_table/cow/v6_complexkeygen_hivestyle.zip",
        ] {
            let dir = extract_fixture(zip);
            let files = parquet_base_files(dir.path());
            assert!(!files.is_empty(), "{zip}: no parquet base files");
            for file in &files {
                let checked = check_base_file(file)
                    .unwrap_or_else(|| panic!("{}: no bloom filter", file.display()));
                assert!(checked.keys > 0, "{}: empty file", file.display());
            }
        }

        let (mut with_filter, mut without_filter, mut keys) = (0, 0, 0);
        for zip in all_fixture_zips() {
            let dir = extract_fixture(&zip);
            for file in parquet_base_files(dir.path()) {
                match check_base_file(&file) {
                    Some(checked) => {
                        with_filter += 1;
                        keys += checked.keys;
                    }
                    None => without_filter += 1,
                }
            }
        }
        // Census of the fixture set (see the format notes, section 7): 263 Spark base files with
        // a filter, 9 from tables without meta fields. Update if the fixture set changes.
        eprintln!(
            "checked {with_filter} base files ({keys} keys); {without_filter} without filter"
        );
        assert_eq!(
            (with_filter, without_filter),
            (263, 9),
            "fixture census changed"
        );
        assert_eq!(keys, 638, "record keys across the fixture base files");
    }
}
