//! Key generators: the record key and partition path of every row, as Hudi's Spark writers
//! compute them.

use arrow::array::{Array, ArrayRef, AsArray, StringArray, StringBuilder};
use arrow::compute::{cast, cast_with_options, CastOptions};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use arrow::record_batch::RecordBatch;

use crate::error::{FormatError, Result};
use crate::field_path::FieldPath;
use crate::table_config::{KeyGenKind, TableConfig};

/// Partition value Hive uses for NULL (and empty) values.
pub const HIVE_DEFAULT_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";
/// What a null key part becomes in a complex record key.
pub const NULL_KEY_PART: &str = "__null__";
/// What an empty key part becomes in a complex record key.
pub const EMPTY_KEY_PART: &str = "__empty__";

/// Computes record keys and partition paths of batches for one table.
#[derive(Debug, Clone)]
pub struct KeyGenerator {
    kind: KeyGenKind,
    record_key_fields: Vec<String>,
    partition_fields: Vec<String>,
    hive_style: bool,
}

impl KeyGenerator {
    /// The key generator of a table. Timestamp-based and custom key generators can be read
    /// but not written yet.
    pub fn from_config(config: &TableConfig) -> Result<Self> {
        let kind = config.key_generator();
        if matches!(kind, KeyGenKind::TimestampBased | KeyGenKind::Custom) {
            return Err(FormatError::Unsupported {
                feature: format!("writing with {}", kind.class_name()),
            });
        }
        if config.partition_path_urlencode()? {
            return Err(FormatError::Unsupported {
                feature: "writing with hoodie.datasource.write.partitionpath.urlencode=true".into(),
            });
        }
        Ok(Self {
            kind,
            record_key_fields: config.record_key_fields(),
            partition_fields: if kind == KeyGenKind::NonPartitioned {
                vec![]
            } else {
                config.partition_fields()
            },
            hive_style: config.hive_style_partitioning()?,
        })
    }

    /// A key generator from its parts.
    pub fn new(
        kind: KeyGenKind,
        record_key_fields: Vec<String>,
        partition_fields: Vec<String>,
        hive_style: bool,
    ) -> Self {
        Self {
            kind,
            record_key_fields,
            partition_fields,
            hive_style,
        }
    }

    /// True if the table has no record key fields (keys are generated per write).
    pub fn has_generated_keys(&self) -> bool {
        self.record_key_fields.is_empty()
    }

    /// Partition fields.
    pub fn partition_fields(&self) -> &[String] {
        &self.partition_fields
    }

    /// Record key fields.
    pub fn record_key_fields(&self) -> &[String] {
        &self.record_key_fields
    }

    /// Record keys of every row. Fails on a null or empty key (for complex keys: when every part
    /// is null or empty). Tables without key fields get no keys here (see [`generated_key`]).
    pub fn record_keys(&self, batch: &RecordBatch) -> Result<StringArray> {
        let cols = self
            .record_key_fields
            .iter()
            .map(|f| Ok((f.as_str(), key_strings(batch, f)?)))
            .collect::<Result<Vec<_>>>()?;
        let n = batch.num_rows();
        let mut out = StringBuilder::with_capacity(n, n * 8);
        let complex = self.kind == KeyGenKind::Complex || cols.len() > 1;
        let mut buf = String::new();
        for row in 0..n {
            if !complex {
                let (field, col) = &cols[0];
                if col.is_null(row) {
                    return Err(FormatError::NullRecordKey {
                        field: field.to_string(),
                        value: "null",
                    });
                }
                let v = col.value(row);
                if v.is_empty() {
                    return Err(FormatError::NullRecordKey {
                        field: field.to_string(),
                        value: "",
                    });
                }
                out.append_value(v);
                continue;
            }
            buf.clear();
            let mut all_null = true;
            for (i, (field, col)) in cols.iter().enumerate() {
                if i > 0 {
                    buf.push(',');
                }
                buf.push_str(field);
                buf.push(':');
                if col.is_null(row) {
                    buf.push_str(NULL_KEY_PART);
                } else if col.value(row).is_empty() {
                    buf.push_str(EMPTY_KEY_PART);
                } else {
                    all_null = false;
                    buf.push_str(col.value(row));
                }
            }
            if all_null {
                return Err(FormatError::NullRecordKey {
                    field: self.record_key_fields.join(","),
                    value: "null",
                });
            }
            out.append_value(&buf);
        }
        Ok(out.finish())
    }

    /// Record keys of every row, with null or empty keys rendered as empty strings instead of
    /// failing (for batches whose new rows were validated separately).
    pub fn record_keys_lenient(&self, batch: &RecordBatch) -> Result<StringArray> {
        let n = batch.num_rows();
        let mut out = StringBuilder::with_capacity(n, n * 8);
        for row in 0..n {
            match self.record_keys(&batch.slice(row, 1)) {
                Ok(k) => out.append_value(k.value(0)),
                Err(FormatError::NullRecordKey { .. }) => out.append_value(""),
                Err(e) => return Err(e),
            }
        }
        Ok(out.finish())
    }

    /// The top-level column a stored record key is exactly the text of, when there is one: a
    /// simple (or non-partitioned) key generator on one integer or string column, whose keys
    /// Hudi writes as the bare value (`Long.toString`, the string itself; never null or
    /// empty). A change set can then take a stored row's key from that column instead of
    /// reading `_hoodie_record_key`. Other key types (decimals, floats, timestamps) are
    /// formatted by Java in ways a cast need not match, so they keep the stored key.
    pub fn key_column_of_stored_keys<'a>(&self, schema: &'a Schema) -> Option<&'a Field> {
        if !matches!(self.kind, KeyGenKind::Simple | KeyGenKind::NonPartitioned) {
            return None;
        }
        let [field] = self.record_key_fields.as_slice() else {
            return None;
        };
        let f = schema
            .fields()
            .iter()
            .find(|f| f.name().eq_ignore_ascii_case(field))?;
        let exact = f.data_type().is_integer()
            || matches!(
                f.data_type(),
                DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
            );
        exact.then_some(f.as_ref())
    }

    /// Partition paths of every row (`""` for non-partitioned tables).
    pub fn partition_paths(&self, batch: &RecordBatch) -> Result<StringArray> {
        let n = batch.num_rows();
        if self.partition_fields.is_empty() {
            return Ok(StringArray::from_iter_values(std::iter::repeat_n("", n)));
        }
        let cols = self
            .partition_fields
            .iter()
            .map(|f| key_strings(batch, f))
            .collect::<Result<Vec<_>>>()?;
        let mut out = StringBuilder::with_capacity(n, n * 16);
        let mut buf = String::new();
        for row in 0..n {
            buf.clear();
            for (i, col) in cols.iter().enumerate() {
                if i > 0 {
                    buf.push('/');
                }
                if self.hive_style {
                    buf.push_str(&self.partition_fields[i]);
                    buf.push('=');
                }
                if col.is_null(row) || col.value(row).is_empty() {
                    buf.push_str(HIVE_DEFAULT_PARTITION);
                } else {
                    buf.push_str(col.value(row));
                }
            }
            out.append_value(&buf);
        }
        Ok(out.finish())
    }

    /// Parses a partition path back into one value per partition field (`None` for the
    /// default partition). Returns `None` if the path does not have the table's shape.
    pub fn parse_partition_path(&self, path: &str) -> Option<Vec<Option<String>>> {
        if self.partition_fields.is_empty() {
            return path.is_empty().then(Vec::new);
        }
        let parts: Vec<&str> = path.split('/').collect();
        if parts.len() != self.partition_fields.len() {
            return None;
        }
        parts
            .iter()
            .zip(&self.partition_fields)
            .map(|(p, f)| {
                let v = if self.hive_style {
                    p.strip_prefix(f.as_str())?.strip_prefix('=')?
                } else if let Some((k, v)) = p.split_once('=').filter(|(k, _)| k == f) {
                    // tolerate hive-style paths on tables that do not record the flag
                    let _ = k;
                    v
                } else {
                    p
                };
                Some((v != HIVE_DEFAULT_PARTITION).then(|| v.to_string()))
            })
            .collect()
    }
}

/// The key generated for row `row` of writer task `task` in a table without record key fields
/// (Hudi 1.x auto-generated keys: `<instant>_<task>_<row>`).
pub fn generated_key(instant: &str, task: usize, row: u64) -> String {
    format!("{instant}_{task}_{row}")
}

/// The column `field` (possibly nested, `a.b`) as strings, formatted as Hudi formats key and
/// partition values: timestamps as epoch microseconds, dates as `yyyy-MM-dd`.
fn key_strings(batch: &RecordBatch, field: &str) -> Result<StringArray> {
    let col = column(batch, field)?;
    let col = match col.data_type() {
        DataType::Timestamp(unit, _) => {
            let micros = cast(&col, &DataType::Timestamp(TimeUnit::Microsecond, None))?;
            let _ = unit;
            cast(&micros, &DataType::Int64)?
        }
        _ => col,
    };
    let s = cast_with_options(&col, &DataType::Utf8, &CastOptions::default())?;
    Ok(s.as_string::<i32>().clone())
}

fn column(batch: &RecordBatch, field: &str) -> Result<ArrayRef> {
    let path = FieldPath::resolve(batch.schema_ref(), field)?;
    path.values(batch.column(path.top()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Date32Array, Int32Array, StringArray as S};
    use std::sync::Arc;

    fn batch() -> RecordBatch {
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int32, true),
                Field::new("name", DataType::Utf8, true),
                Field::new("dt", DataType::Date32, true),
            ])),
            vec![
                Arc::new(Int32Array::from(vec![Some(1), Some(2), Some(3)])),
                Arc::new(S::from(vec![Some("a"), None, Some("")])),
                Arc::new(Date32Array::from(vec![Some(19000), None, Some(0)])),
            ],
        )
        .unwrap()
    }

    #[test]
    fn simple_keys_and_hive_paths() {
        let k = KeyGenerator::new(
            KeyGenKind::Simple,
            vec!["id".into()],
            vec!["dt".into()],
            true,
        );
        let keys = k.record_keys(&batch()).unwrap();
        assert_eq!(
            keys.iter().flatten().collect::<Vec<_>>(),
            vec!["1", "2", "3"]
        );
        let p = k.partition_paths(&batch()).unwrap();
        assert_eq!(p.value(0), "dt=2022-01-08");
        assert_eq!(p.value(1), "dt=__HIVE_DEFAULT_PARTITION__");
        assert_eq!(
            k.parse_partition_path("dt=2022-01-08"),
            Some(vec![Some("2022-01-08".to_string())])
        );
        assert_eq!(
            k.parse_partition_path("dt=__HIVE_DEFAULT_PARTITION__"),
            Some(vec![None])
        );
    }

    #[test]
    fn complex_keys() {
        let k = KeyGenerator::new(
            KeyGenKind::Complex,
            vec!["id".into(), "name".into()],
            vec!["id".into(), "name".into()],
            false,
        );
        let keys = k.record_keys(&batch()).unwrap();
        assert_eq!(keys.value(0), "id:1,name:a");
        assert_eq!(keys.value(1), "id:2,name:__null__");
        assert_eq!(keys.value(2), "id:3,name:__empty__");
        assert_eq!(k.partition_paths(&batch()).unwrap().value(0), "1/a");
    }

    #[test]
    fn stored_keys_are_a_column_only_for_simple_integer_or_string_keys() {
        let schema = Schema::new(vec![
            Field::new("Id", DataType::Int64, false),
            Field::new("name", DataType::Utf8View, true),
            Field::new("price", DataType::Float64, true),
            Field::new("dt", DataType::Date32, true),
        ]);
        let of = |kind, keys: &[&str]| {
            let keys = keys.iter().map(|k| k.to_string()).collect();
            KeyGenerator::new(kind, keys, vec![], false)
                .key_column_of_stored_keys(&schema)
                .map(|f| f.name().clone())
        };
        assert_eq!(of(KeyGenKind::Simple, &["id"]), Some("Id".into()));
        assert_eq!(
            of(KeyGenKind::NonPartitioned, &["NAME"]),
            Some("name".into())
        );
        // Java formats doubles and dates its own way; complex keys are `field:value`
        assert_eq!(of(KeyGenKind::Simple, &["price"]), None);
        assert_eq!(of(KeyGenKind::Simple, &["dt"]), None);
        assert_eq!(of(KeyGenKind::Complex, &["id"]), None);
        assert_eq!(of(KeyGenKind::Simple, &["id", "name"]), None);
        assert_eq!(of(KeyGenKind::Simple, &[]), None);
        assert_eq!(of(KeyGenKind::Simple, &["missing"]), None);
    }

    #[test]
    fn null_key_is_an_error() {
        let k = KeyGenerator::new(KeyGenKind::Simple, vec!["name".into()], vec![], false);
        let err = k.record_keys(&batch()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "recordKey value: \"null\" for field: \"name\" cannot be null or empty."
        );
        let k = KeyGenerator::new(KeyGenKind::Simple, vec!["nope".into()], vec![], false);
        assert!(matches!(
            k.record_keys(&batch()),
            Err(FormatError::MissingColumn { .. })
        ));
    }
}
