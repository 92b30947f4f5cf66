//! The merge rules of a table: how two versions of a record, or a record and a delete,
//! compare under its merge mode (see [`super::merge`] for the order the merge applies them).

use std::cmp::Ordering;

use arrow::array::{Array, AsArray};
use arrow::datatypes::*;

use super::delete::OrderingValue;
use crate::field_path::FieldPath;
use crate::precedence::newer_wins;
use crate::table_config::MergeMode;

/// A comparable ordering value.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum OrdKey {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    Decimal(i128),
}

impl OrdKey {
    /// Values of one type compare as values; NULL is below every value (as a copy-on-write
    /// rewrite compares them: an update to a NULL ordering value loses); values of different
    /// types do not compare (the newer record wins).
    pub(super) fn cmp(&self, other: &OrdKey) -> Option<Ordering> {
        use OrdKey::*;
        match (self, other) {
            (Null, Null) => Some(Ordering::Equal),
            (Null, _) => Some(Ordering::Less),
            (_, Null) => Some(Ordering::Greater),
            (Bool(a), Bool(b)) => Some(a.cmp(b)),
            (Int(a), Int(b)) => Some(a.cmp(b)),
            (Float(a), Float(b)) => a.partial_cmp(b),
            (Str(a), Str(b)) => Some(a.cmp(b)),
            (Bytes(a), Bytes(b)) => Some(a.cmp(b)),
            (Decimal(a), Decimal(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }

    pub(super) fn of_delete(v: &OrderingValue) -> OrdKey {
        use OrderingValue as O;
        match v {
            O::Null => OrdKey::Null,
            O::Boolean(b) => OrdKey::Bool(*b),
            O::Int(i) | O::Date(i) => OrdKey::Int(*i as i64),
            O::Long(i) | O::TimeMicros(i) | O::TimestampMicros(i) => OrdKey::Int(*i),
            O::Float(f) => OrdKey::Float(*f as f64),
            O::Double(f) => OrdKey::Float(*f),
            O::String(s) => OrdKey::Str(s.clone()),
            O::Bytes(b) => OrdKey::Bytes(b.clone()),
            O::Decimal(b) => OrdKey::Decimal(crate::avro::datum::be_to_i128(b).unwrap_or(0)),
            O::Array(items) => items.first().map_or(OrdKey::Null, OrdKey::of_delete),
        }
    }

    pub(super) fn of_array(a: &dyn Array, row: usize) -> OrdKey {
        if a.is_null(row) {
            return OrdKey::Null;
        }
        match a.data_type() {
            DataType::Boolean => OrdKey::Bool(a.as_boolean().value(row)),
            DataType::Int8 => OrdKey::Int(a.as_primitive::<Int8Type>().value(row) as i64),
            DataType::Int16 => OrdKey::Int(a.as_primitive::<Int16Type>().value(row) as i64),
            DataType::Int32 => OrdKey::Int(a.as_primitive::<Int32Type>().value(row) as i64),
            DataType::Int64 => OrdKey::Int(a.as_primitive::<Int64Type>().value(row)),
            DataType::Date32 => OrdKey::Int(a.as_primitive::<Date32Type>().value(row) as i64),
            DataType::Timestamp(_, _) => {
                let a = arrow::compute::cast(&a.slice(row, 1), &DataType::Int64)
                    .expect("a timestamp casts to its integer");
                OrdKey::Int(a.as_primitive::<Int64Type>().value(0))
            }
            DataType::Float32 => OrdKey::Float(a.as_primitive::<Float32Type>().value(row) as f64),
            DataType::Float64 => OrdKey::Float(a.as_primitive::<Float64Type>().value(row)),
            DataType::Decimal128(_, _) => {
                OrdKey::Decimal(a.as_primitive::<Decimal128Type>().value(row))
            }
            DataType::Utf8 => OrdKey::Str(a.as_string::<i32>().value(row).to_string()),
            DataType::LargeUtf8 => OrdKey::Str(a.as_string::<i64>().value(row).to_string()),
            DataType::Utf8View => OrdKey::Str(a.as_string_view().value(row).to_string()),
            DataType::Binary => OrdKey::Bytes(a.as_binary::<i32>().value(row).to_vec()),
            _ => OrdKey::Null,
        }
    }
}

/// The merge rules of a table.
#[derive(Debug, Clone)]
pub struct Precedence {
    /// The ordering field (event-time ordering only).
    pub ordering: Option<FieldPath>,
    /// The `_hoodie_is_deleted` column, if the schema has one.
    pub is_deleted: Option<usize>,
}

impl Precedence {
    /// The rules for rows of `schema` under `mode` with ordering field `ordering`.
    pub fn new(schema: &Schema, mode: MergeMode, ordering: Option<&str>) -> Self {
        let ordering = match mode {
            MergeMode::EventTimeOrdering => {
                ordering.and_then(|f| FieldPath::resolve(schema, f).ok())
            }
            _ => None,
        };
        Self {
            ordering,
            is_deleted: schema.index_of(crate::meta::IS_DELETED).ok(),
        }
    }

    pub(super) fn event_time(&self) -> bool {
        self.ordering.is_some()
    }

    /// Record (newer) over record (older).
    pub(super) fn record_over_record(&self, new: &OrdKey, old: &OrdKey) -> bool {
        !self.event_time() || newer_wins(new.cmp(old))
    }

    /// Delete (newer) over record (older).
    pub(super) fn delete_over_record(&self, del: &OrderingValue, old: &OrdKey) -> bool {
        !self.event_time() || del.is_default() || newer_wins(OrdKey::of_delete(del).cmp(old))
    }

    /// Record (newer) over delete (older).
    pub(super) fn record_over_delete(&self, new: &OrdKey, del: &OrderingValue) -> bool {
        !self.event_time() || del.is_default() || newer_wins(new.cmp(&OrdKey::of_delete(del)))
    }
}
