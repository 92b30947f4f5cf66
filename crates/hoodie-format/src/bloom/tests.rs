//! Tests of the bloom filter: round trips, Java goldens, Spark fixture footers.
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
    let dynamic =
        HoodieBloomFilter::from_base64(JAVA_DYN_50_0001_120_200KEYS, BloomFilterType::DynamicV0)
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
        HoodieBloomFilter::from_base64(&bounded.to_base64(), BloomFilterType::DynamicV0).unwrap();
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

    let err = HoodieBloomFilter::from_base64("not base64!", BloomFilterType::Simple).unwrap_err();
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
/// `<repo>/tests/fixtures/hudi-tables`. Panics when it does not exist.
fn fixtures_dir() -> PathBuf {
    let dir = match std::env::var_os("HOODIE_FIXTURES") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/hudi-tables"),
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
            (0..strings.len()).map(|i| strings.is_valid(i).then(|| strings.value(i).to_string())),
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
    eprintln!("checked {with_filter} base files ({keys} keys); {without_filter} without filter");
    assert_eq!(
        (with_filter, without_filter),
        (263, 9),
        "fixture census changed"
    );
    assert_eq!(keys, 638, "record keys across the fixture base files");
}

/// A dynamic filter resumed from its serialized form (beyond Java's decoding: the bound is
/// given back) and then extended holds exactly what a filter given every key at once holds,
/// byte for byte, before, at and past its bound: a rewrite that keeps every stored key
/// in order can extend the old file's filter with its inserts instead of rehashing every key.
#[test]
fn a_deserialized_dynamic_filter_extends_like_the_original() {
    let keys: Vec<String> = (0..2_500).map(|i| format!("key-{i:05}")).collect();
    for split in [0, 1, 999, 1_000, 1_001, 1_999, 2_000, 2_001, 2_002, 2_499] {
        // rows of 1,000 keys: the split lands before, at and after a row boundary
        let mut whole = HoodieBloomFilter::new_dynamic(1_000, 1e-6, 2_000);
        whole.add_all(keys.iter().map(|k| k.as_str()));
        let mut first = HoodieBloomFilter::new_dynamic(1_000, 1e-6, 2_000);
        first.add_all(keys[..split].iter().map(|k| k.as_str()));
        let mut resumed = HoodieBloomFilter::resume_dynamic(&first.to_base64(), 2_000).unwrap();
        resumed.add_all(keys[split..].iter().map(|k| k.as_str()));
        assert_eq!(resumed.to_base64(), whole.to_base64(), "split at {split}");
    }
}
