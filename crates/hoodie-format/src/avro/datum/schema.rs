//! An Avro writer schema (JSON) compiled into the tree the datum decoder walks.

use std::collections::HashMap;

use serde_json::Value;

use crate::error::{FormatError, Result};

/// One Avro type, logical types resolved.
#[derive(Debug, Clone)]
pub(crate) enum AvroType {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    String,
    Fixed(usize),
    Enum(Vec<String>),
    Date,
    /// Microseconds (`timestamp-micros`, `local-timestamp-micros`, `time-micros`).
    Micros,
    /// Milliseconds (`timestamp-millis`, `local-timestamp-millis`), read as microseconds.
    Millis,
    Decimal {
        precision: u8,
        scale: i8,
        /// The `fixed` size, or `None` for `bytes`.
        fixed: Option<usize>,
    },
    Union(Vec<AvroType>),
    Record(Vec<(String, AvroType)>),
    Array(Box<AvroType>),
    Map(Box<AvroType>),
}

impl AvroType {
    /// Compiles a JSON Avro schema.
    pub(crate) fn parse(json: &str) -> Result<AvroType> {
        let v: Value = serde_json::from_str(json).map_err(|e| bad(e.to_string()))?;
        Compiler::default().compile(&v, "")
    }

    /// The single non-null branch of a `["null", T]` union and the null branch's index.
    pub(crate) fn nullable_branch(branches: &[AvroType]) -> Option<(usize, &AvroType)> {
        match branches {
            [AvroType::Null, t] => Some((0, t)),
            [t, AvroType::Null] => Some((1, t)),
            _ => None,
        }
    }
}

fn bad(reason: String) -> FormatError {
    FormatError::Corrupt {
        path: "log block SCHEMA header".into(),
        reason,
    }
}

#[derive(Default)]
struct Compiler {
    named: HashMap<String, AvroType>,
}

impl Compiler {
    fn compile(&mut self, v: &Value, namespace: &str) -> Result<AvroType> {
        match v {
            Value::String(s) => self.primitive_or_named(s, namespace),
            Value::Array(branches) => Ok(AvroType::Union(
                branches
                    .iter()
                    .map(|b| self.compile(b, namespace))
                    .collect::<Result<_>>()?,
            )),
            Value::Object(o) => {
                let ty = o
                    .get("type")
                    .ok_or_else(|| bad(format!("a type without \"type\": {v}")))?;
                let logical = o.get("logicalType").and_then(Value::as_str);
                let int = |k: &str| o.get(k).and_then(Value::as_u64);
                let name_of = |o: &serde_json::Map<String, Value>| -> (String, String) {
                    let name = o.get("name").and_then(Value::as_str).unwrap_or_default();
                    let ns = o
                        .get("namespace")
                        .and_then(Value::as_str)
                        .unwrap_or(namespace);
                    let full = match (name.contains('.'), ns.is_empty()) {
                        (true, _) | (_, true) => name.to_string(),
                        _ => format!("{ns}.{name}"),
                    };
                    let ns = full.rsplit_once('.').map_or("", |(n, _)| n).to_string();
                    (full, ns)
                };
                let t = match (ty.as_str(), logical) {
                    (Some("int"), Some("date")) => AvroType::Date,
                    (Some("long"), Some(l)) if l.ends_with("-micros") => AvroType::Micros,
                    (Some("long"), Some(l)) if l.ends_with("-millis") => AvroType::Millis,
                    (Some("bytes"), Some("decimal")) => AvroType::Decimal {
                        precision: int("precision").unwrap_or(38) as u8,
                        scale: int("scale").unwrap_or(0) as i8,
                        fixed: None,
                    },
                    (Some("fixed"), _) => {
                        let size = int("size")
                            .ok_or_else(|| bad(format!("fixed without size: {v}")))?
                            as usize;
                        let t = if logical == Some("decimal") {
                            AvroType::Decimal {
                                precision: int("precision").unwrap_or(38) as u8,
                                scale: int("scale").unwrap_or(0) as i8,
                                fixed: Some(size),
                            }
                        } else {
                            AvroType::Fixed(size)
                        };
                        self.named.insert(name_of(o).0, t.clone());
                        t
                    }
                    (Some("enum"), _) => {
                        let symbols = o
                            .get("symbols")
                            .and_then(Value::as_array)
                            .map(|s| {
                                s.iter()
                                    .filter_map(|x| x.as_str().map(str::to_string))
                                    .collect()
                            })
                            .unwrap_or_default();
                        let t = AvroType::Enum(symbols);
                        self.named.insert(name_of(o).0, t.clone());
                        t
                    }
                    (Some("record"), _) | (Some("error"), _) => {
                        let (full, ns) = name_of(o);
                        let mut fields = Vec::new();
                        for f in o
                            .get("fields")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                        {
                            let name = f
                                .get("name")
                                .and_then(Value::as_str)
                                .ok_or_else(|| bad(format!("a field without a name in {full}")))?;
                            let t = self.compile(f.get("type").unwrap_or(&Value::Null), &ns)?;
                            fields.push((name.to_string(), t));
                        }
                        let t = AvroType::Record(fields);
                        self.named.insert(full, t.clone());
                        t
                    }
                    (Some("array"), _) => AvroType::Array(Box::new(
                        self.compile(o.get("items").unwrap_or(&Value::Null), namespace)?,
                    )),
                    (Some("map"), _) => AvroType::Map(Box::new(
                        self.compile(o.get("values").unwrap_or(&Value::Null), namespace)?,
                    )),
                    _ => self.compile(ty, namespace)?,
                };
                Ok(t)
            }
            other => Err(bad(format!("not an Avro type: {other}"))),
        }
    }

    fn primitive_or_named(&self, s: &str, namespace: &str) -> Result<AvroType> {
        Ok(match s {
            "null" => AvroType::Null,
            "boolean" => AvroType::Boolean,
            "int" => AvroType::Int,
            "long" => AvroType::Long,
            "float" => AvroType::Float,
            "double" => AvroType::Double,
            "bytes" => AvroType::Bytes,
            "string" => AvroType::String,
            name => {
                let full = if name.contains('.') || namespace.is_empty() {
                    name.to_string()
                } else {
                    format!("{namespace}.{name}")
                };
                self.named
                    .get(&full)
                    .or_else(|| self.named.get(name))
                    .cloned()
                    .ok_or_else(|| bad(format!("unknown Avro type {name:?}")))?
            }
        })
    }
}
