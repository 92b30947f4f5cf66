//! Reading Avro values: the fields of records (through unions), their text, and the single
//! record of a timeline file's object container.

use apache_avro::types::Value;
use apache_avro::Reader;

use crate::error::{FormatError, Result};

/// The value of field `name` of an Avro record, through a union.
pub(crate) fn field<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    let Value::Record(fields) = v else {
        return None;
    };
    let v = fields.iter().find(|(n, _)| n == name).map(|(_, v)| v)?;
    Some(match v {
        Value::Union(_, inner) => inner.as_ref(),
        v => v,
    })
}

/// The text of an Avro string value.
pub(crate) fn string(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// The first record of an Avro object container file (the one a timeline file holds); `what`
/// names it in the error when there is none.
pub(crate) fn first_record(bytes: &[u8], path: &str, what: &str) -> Result<Value> {
    let corrupt = |reason: String| FormatError::Corrupt {
        path: path.to_string(),
        reason,
    };
    let mut reader = Reader::new(bytes).map_err(|e| corrupt(e.to_string()))?;
    reader
        .next()
        .ok_or_else(|| corrupt(format!("no {what} record")))?
        .map_err(|e| corrupt(e.to_string()))
}
