//! Where the merge of a file slice takes each row's record key from, and the keys of a batch
//! as the merge matches them.
//!
//! A simple key on an integer column is that column's text (Hudi writes `Long.toString` of it),
//! so the merge matches such keys as integers read from the key column: no `_hoodie_record_key`
//! strings decoded, hashed and compared for every base row.

use arrow::array::{Array, ArrayRef, AsArray, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Int64Type, Schema};

use crate::error::{FormatError, Result};
use crate::keygen::KeyGenerator;
use crate::table_config::TableConfig;

/// Where the record key of a row comes from.
#[derive(Debug, Clone)]
pub enum KeySource {
    /// The `_hoodie_record_key` column.
    Meta,
    /// Computed from the key columns (tables that do not populate the meta columns).
    Computed(KeyGenerator),
    /// An integer column whose text is the record key.
    IntColumn(String),
}

/// The record keys of a batch of rows, as the merge matches them.
#[derive(Debug, Clone)]
pub enum RecordKeys {
    /// The keys' text.
    Text(StringArray),
    /// Integer keys, each the integer whose text is the key (a null matches no key).
    Int(Int64Array),
}

impl KeySource {
    /// The key source of a table's rows read with `schema`: the integer key column when the
    /// table's keys are exactly its text
    /// ([`KeyGenerator::key_column_of_stored_keys`]), else the stored or computed keys.
    pub fn for_table(cfg: &TableConfig, schema: &Schema) -> Result<Self> {
        let keygen = KeyGenerator::from_config(cfg);
        if let Ok(k) = &keygen {
            if let Some(f) = k.key_column_of_stored_keys(schema) {
                if f.data_type().is_integer() {
                    return Ok(KeySource::IntColumn(f.name().clone()));
                }
            }
        }
        if cfg.populate_meta_fields()? {
            Ok(KeySource::Meta)
        } else {
            Ok(KeySource::Computed(keygen?))
        }
    }

    /// The top-level column a read must include for the keys (none for computed keys: the
    /// key generator's fields).
    pub fn column(&self) -> Option<&str> {
        match self {
            KeySource::Meta => Some(crate::meta::RECORD_KEY),
            KeySource::IntColumn(c) => Some(c),
            KeySource::Computed(_) => None,
        }
    }

    /// Whether keys are matched as integers.
    pub fn is_int(&self) -> bool {
        matches!(self, KeySource::IntColumn(_))
    }

    /// The keys of `batch`'s rows.
    pub fn keys(&self, batch: &RecordBatch) -> Result<RecordKeys> {
        match self {
            KeySource::Meta => {
                let col = column(batch, crate::meta::RECORD_KEY)?;
                let text = match col.data_type() {
                    DataType::Utf8 => col.as_string::<i32>().clone(),
                    _ => arrow::compute::cast(col, &DataType::Utf8)?
                        .as_string::<i32>()
                        .clone(),
                };
                Ok(RecordKeys::Text(text))
            }
            KeySource::Computed(k) => Ok(RecordKeys::Text(k.record_keys(batch)?)),
            KeySource::IntColumn(name) => {
                let col = column(batch, name)?;
                let ints = arrow::compute::cast(col, &DataType::Int64)?;
                Ok(RecordKeys::Int(ints.as_primitive::<Int64Type>().clone()))
            }
        }
    }
}

fn column<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a ArrayRef> {
    batch
        .column_by_name(name)
        .ok_or_else(|| FormatError::MissingColumn {
            column: name.into(),
        })
}

/// The integer whose text `key` is exactly (`Long.toString`), if there is one.
pub(crate) fn int_of_key(key: &str) -> Option<i64> {
    let v: i64 = key.parse().ok()?;
    (v.to_string() == key).then_some(v)
}

impl From<StringArray> for RecordKeys {
    fn from(a: StringArray) -> Self {
        RecordKeys::Text(a)
    }
}

impl RecordKeys {
    /// Number of keys.
    pub fn len(&self) -> usize {
        match self {
            RecordKeys::Text(a) => a.len(),
            RecordKeys::Int(a) => a.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_canonical_text_of_an_integer_is_its_key() {
        assert_eq!(int_of_key("0"), Some(0));
        assert_eq!(int_of_key("-17"), Some(-17));
        assert_eq!(int_of_key("9223372036854775807"), Some(i64::MAX));
        for not in [
            "+1",
            "01",
            "-0",
            "",
            "1.0",
            " 1",
            "9223372036854775808",
            "x",
        ] {
            assert_eq!(int_of_key(not), None, "{not}");
        }
    }
}
