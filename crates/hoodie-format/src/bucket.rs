//! Hudi's simple bucket index (`hoodie.index.type = BUCKET`, engine SIMPLE): every partition has
//! a fixed number of buckets, a record's bucket is a hash of its key values, and bucket `n` is
//! the one file group whose id starts with `n` as eight digits. The hash and the ids are Java
//! Hudi's (`BucketIdentifier`), so Spark and hoodie put a key in the same bucket.

use crate::error::{FormatError, Result};

/// How a table's records are hashed to buckets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketSpec {
    /// Buckets per partition (`hoodie.bucket.index.num.buckets`).
    pub num_buckets: u32,
    /// The record key fields hashed (`hoodie.bucket.index.hash.field`; the record key fields
    /// when not set).
    pub hash_fields: Vec<String>,
}

impl BucketSpec {
    /// A spec for a table with record key `key_fields`: `hash_field` (comma-separated) must be
    /// a subset of them, as Hudi requires.
    pub fn new(num_buckets: u32, hash_field: Option<&str>, key_fields: &[String]) -> Result<Self> {
        if num_buckets == 0 {
            return Err(FormatError::InvalidProperty {
                key: "hoodie.bucket.index.num.buckets".into(),
                value: "0".into(),
                reason: "a table needs at least one bucket".into(),
            });
        }
        if key_fields.is_empty() {
            return Err(FormatError::Unsupported {
                feature: "a BUCKET index on a table without a record key".into(),
            });
        }
        let hash_fields: Vec<String> = match hash_field {
            Some(h) if !h.trim().is_empty() => h.split(',').map(|f| f.trim().to_string()).collect(),
            _ => key_fields.to_vec(),
        };
        for f in &hash_fields {
            if !key_fields.iter().any(|k| k.eq_ignore_ascii_case(f)) {
                return Err(FormatError::InvalidProperty {
                    key: "hoodie.bucket.index.hash.field".into(),
                    value: hash_fields.join(","),
                    reason: format!(
                        "the hash fields must be record key fields ({})",
                        key_fields.join(",")
                    ),
                });
            }
        }
        Ok(Self {
            num_buckets,
            hash_fields,
        })
    }

    /// The bucket of a record, from its record key (`id:1,name:a` or `1`), as Java Hudi
    /// computes it: `(List<String>.hashCode() & Integer.MAX_VALUE) % numBuckets` over the hash
    /// fields' values taken from the key, in the key's order.
    pub fn bucket_of(&self, record_key: &str) -> u32 {
        let values = hash_values(record_key, &self.hash_fields);
        let hash = values.iter().fold(1i32, |h, v| {
            h.wrapping_mul(31)
                .wrapping_add(v.as_deref().map_or(0, java_string_hash))
        });
        ((hash & i32::MAX) as u32) % self.num_buckets
    }
}

/// Java's `String.hashCode()`: over UTF-16 code units, wrapping.
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// The values of `fields` in a record key (`KeyGenUtils.extractRecordKeysByFields`): a key
/// without `field:value` pairs is one value; `__null__` is NULL and `__empty__` the empty
/// string; a value may hold `,` or `:` (a pair starts at a `,` followed by a known field name
/// and `:`).
fn hash_values(record_key: &str, fields: &[String]) -> Vec<Option<String>> {
    if !record_key.contains(',') && !record_key.contains(':') {
        return vec![Some(record_key.to_string())];
    }
    let starts_pair = |rest: &str| {
        rest.split_once(':')
            .is_some_and(|(f, _)| fields.iter().any(|k| k == f) || !f.contains(','))
    };
    let mut pairs: Vec<(String, String)> = Vec::new();
    for part in record_key.split(',') {
        match (part.split_once(':'), pairs.last_mut()) {
            (Some((f, v)), _) if starts_pair(part) => pairs.push((f.to_string(), v.to_string())),
            (_, Some(last)) => {
                last.1.push(',');
                last.1.push_str(part);
            }
            (_, None) => return vec![Some(record_key.to_string())],
        }
    }
    let values: Vec<Option<String>> = pairs
        .into_iter()
        .filter(|(f, _)| fields.is_empty() || fields.iter().any(|k| k == f))
        .map(|(_, v)| match v.as_str() {
            "__null__" => None,
            "__empty__" => Some(String::new()),
            _ => Some(v),
        })
        .collect();
    if values.is_empty() {
        vec![Some(record_key.to_string())]
    } else {
        values
    }
}

/// The file id of a new file group for bucket `bucket`: a random UUID whose first eight
/// characters are the bucket number, zero-padded, then `-0` (`BucketIdentifier`).
pub fn new_bucket_file_id(bucket: u32) -> String {
    let uuid = uuid::Uuid::new_v4().to_string();
    format!("{bucket:08}{}-0", &uuid[8..])
}

/// The bucket a file group belongs to, from the first eight characters of its id.
pub fn bucket_of_file_id(file_id: &str) -> Option<u32> {
    file_id.get(..8).and_then(|p| p.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_string_hash_matches_java() {
        // values from java.lang.String#hashCode
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("hello"), 99162322);
        assert_eq!(java_string_hash("polygenelubricants"), i32::MIN);
        assert_eq!(java_string_hash("ÄÖ"), 196 * 31 + 214);
    }

    #[test]
    fn buckets_follow_list_hash_code() {
        let spec = BucketSpec::new(8, None, &["id".into()]).unwrap();
        // List.of("1").hashCode() = 31 + 49 = 80; 80 % 8 = 0
        assert_eq!(spec.bucket_of("1"), 0);
        // List.of("2").hashCode() = 81 -> 1
        assert_eq!(spec.bucket_of("2"), 1);
        // composite key: List.of("1", "a") = (31 + 49) * 31 + 97 = 2577 -> 1
        let two = BucketSpec::new(8, None, &["id".into(), "name".into()]).unwrap();
        assert_eq!(two.bucket_of("id:1,name:a"), 2577 % 8);
        // only the hash fields count, in the key's order
        let by_name = BucketSpec::new(8, Some("name"), &["id".into(), "name".into()]).unwrap();
        assert_eq!(by_name.bucket_of("id:1,name:a"), (31 + 97) % 8);
        // NULL hashes as 0, empty as ""
        assert_eq!(two.bucket_of("id:__null__,name:__empty__"), (31 * 31) % 8);
        // a negative hash keeps its low bits (& Integer.MAX_VALUE, not abs)
        let neg = java_string_hash("polygenelubricants");
        let h = 31i32.wrapping_add(neg);
        let spec3 = BucketSpec::new(3, None, &["k".into()]).unwrap();
        assert_eq!(
            spec3.bucket_of("polygenelubricants"),
            ((h & i32::MAX) as u32) % 3
        );
    }

    #[test]
    fn values_may_hold_commas_and_colons() {
        let fields = ["ts".to_string(), "id".to_string()];
        assert_eq!(
            hash_values("ts:2024-01-01 10:00:00,id:a,b", &fields),
            vec![Some("2024-01-01 10:00:00".into()), Some("a,b".into())]
        );
    }

    #[test]
    fn file_ids_carry_the_bucket() {
        let id = new_bucket_file_id(7);
        assert!(id.starts_with("00000007-") && id.ends_with("-0"), "{id}");
        assert_eq!(id.len(), 38);
        assert_eq!(bucket_of_file_id(&id), Some(7));
        assert_eq!(bucket_of_file_id("abc"), None);
        assert!(BucketSpec::new(4, Some("other"), &["id".into()]).is_err());
        assert!(BucketSpec::new(0, None, &["id".into()]).is_err());
    }
}
