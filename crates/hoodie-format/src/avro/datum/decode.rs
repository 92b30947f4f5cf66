//! Avro binary datums of a record schema into Arrow columns of a target schema: flat columns
//! are decoded straight into Arrow builders, nested ones through a small value tree.

use std::sync::Arc;

use arrow::array::*;
use arrow::datatypes::{DataType, Field, FieldRef, Fields, SchemaRef, TimeUnit};
use arrow::record_batch::RecordBatch;

use super::schema::AvroType;
use super::{be_to_i128, read_blocks, read_bytes, read_long, take};
use crate::error::{FormatError, Result};

/// Decodes the datums of one writer schema into batches of a target schema: target columns
/// are matched to writer fields by name; a target column the writer lacks is NULL, a writer
/// field the target lacks is skipped.
pub struct RowDecoder {
    target: SchemaRef,
    /// Per writer field: its type and the target column it fills, if any; the fields after
    /// the last that fills a column are left out (each datum is framed on its own, so its
    /// tail need not be walked).
    fields: Vec<(AvroType, Option<usize>)>,
    sinks: Vec<Option<Sink>>,
    rows: usize,
}

impl RowDecoder {
    /// A decoder of datums written with `writer_schema` (JSON) into `target`.
    pub fn new(writer_schema: &str, target: SchemaRef) -> Result<Self> {
        let AvroType::Record(writer) = AvroType::parse(writer_schema)? else {
            return Err(corrupt("the writer schema is not a record"));
        };
        let mut sinks: Vec<Option<Sink>> = (0..target.fields().len()).map(|_| None).collect();
        let mut fields = Vec::with_capacity(writer.len());
        for (name, t) in writer {
            let at = target.index_of(&name).ok().filter(|&i| sinks[i].is_none());
            if let Some(i) = at {
                sinks[i] = Some(Sink::new(&t, target.field(i).data_type()));
            }
            fields.push((t, at));
        }
        let used = fields
            .iter()
            .rposition(|(_, at)| at.is_some())
            .map_or(0, |i| i + 1);
        fields.truncate(used);
        Ok(Self {
            target,
            fields,
            sinks,
            rows: 0,
        })
    }

    /// Decodes one datum as a row (the fields after the last the target has are not read).
    pub fn push(&mut self, datum: &[u8]) -> Result<()> {
        let mut buf = datum;
        for (t, at) in &self.fields {
            let ok = match at {
                Some(i) => self.sinks[*i].as_mut().expect("a sink").push(t, &mut buf),
                None => skip(t, &mut buf),
            };
            if ok.is_none() {
                return Err(corrupt("a record is shorter than its schema"));
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// Per column of the target schema, whether the writer schema has a field for it (the
    /// others come out NULL).
    pub fn filled(&self) -> Vec<bool> {
        self.sinks.iter().map(Option::is_some).collect()
    }

    /// The rows decoded so far, as a batch of the target schema (the decoder starts empty
    /// again).
    pub fn finish(&mut self) -> Result<RecordBatch> {
        let rows = std::mem::take(&mut self.rows);
        let mut cols = Vec::with_capacity(self.sinks.len());
        for (i, f) in self.target.fields().iter().enumerate() {
            let col = match self.sinks[i].as_mut() {
                Some(s) => s.finish(f)?,
                None => new_null_array(f.data_type(), rows),
            };
            cols.push(col);
        }
        let opts = RecordBatchOptions::new().with_row_count(Some(rows));
        Ok(RecordBatch::try_new_with_options(
            self.target.clone(),
            cols,
            &opts,
        )?)
    }
}

fn corrupt(reason: &str) -> FormatError {
    FormatError::Corrupt {
        path: "log data block".into(),
        reason: reason.into(),
    }
}

/// Where one column's values go.
enum Sink {
    Bool(BooleanBuilder),
    Int(Int32Builder),
    Date(Date32Builder),
    Long(Int64Builder),
    Micros(Int64Builder),
    Float(Float32Builder),
    Double(Float64Builder),
    Str(StringBuilder),
    Bin(BinaryBuilder),
    Decimal(Decimal128Builder, u8, i8),
    /// A record into a struct column: field by field into child sinks.
    Record(Box<RecordSink>),
    /// Anything else: values kept as a tree, built into an array at the end.
    Tree(Vec<Val>),
}

/// A record column decoded straight into builders, a child sink per target field (a CDC log's
/// images are such records, one per change).
struct RecordSink {
    fields: Fields,
    /// Per writer field: the target field it fills, if any.
    at: Vec<Option<usize>>,
    children: Vec<Option<Sink>>,
    valid: Vec<bool>,
}

impl RecordSink {
    fn new(writer: &[(String, AvroType)], fields: &Fields) -> Self {
        let mut children: Vec<Option<Sink>> = (0..fields.len()).map(|_| None).collect();
        let at = writer
            .iter()
            .map(|(name, t)| {
                let c = fields
                    .iter()
                    .position(|f| f.name() == name)
                    .filter(|&c| children[c].is_none())?;
                children[c] = Some(Sink::new(t, fields[c].data_type()));
                Some(c)
            })
            .collect();
        Self {
            fields: fields.clone(),
            at,
            children,
            valid: Vec::new(),
        }
    }

    fn push(&mut self, writer: &[(String, AvroType)], buf: &mut &[u8]) -> Option<()> {
        for ((_, t), at) in writer.iter().zip(&self.at) {
            match at {
                Some(c) => self.children[*c].as_mut()?.push(t, buf)?,
                None => skip(t, buf)?,
            }
        }
        self.valid.push(true);
        Some(())
    }

    fn push_null(&mut self) {
        for child in self.children.iter_mut().flatten() {
            child.push_null();
        }
        self.valid.push(false);
    }

    fn finish(&mut self) -> Result<ArrayRef> {
        let rows = self.valid.len();
        let cols = self
            .fields
            .iter()
            .zip(self.children.iter_mut())
            .map(|(f, child)| match child {
                Some(s) => s.finish(f),
                None => Ok(new_null_array(f.data_type(), rows)),
            })
            .collect::<Result<Vec<_>>>()?;
        let valid = std::mem::take(&mut self.valid);
        Ok(Arc::new(StructArray::try_new(
            self.fields.clone(),
            cols,
            Some(valid.into()),
        )?))
    }
}

impl Sink {
    fn new(t: &AvroType, target: &DataType) -> Sink {
        let inner = match t {
            AvroType::Union(b) => match AvroType::nullable_branch(b) {
                Some((_, inner)) => inner,
                None => return Sink::Tree(Vec::new()),
            },
            t => t,
        };
        match inner {
            AvroType::Boolean => Sink::Bool(BooleanBuilder::new()),
            AvroType::Int => Sink::Int(Int32Builder::new()),
            AvroType::Date => Sink::Date(Date32Builder::new()),
            AvroType::Long => Sink::Long(Int64Builder::new()),
            AvroType::Micros | AvroType::Millis => Sink::Micros(Int64Builder::new()),
            AvroType::Float => Sink::Float(Float32Builder::new()),
            AvroType::Double => Sink::Double(Float64Builder::new()),
            AvroType::String | AvroType::Enum(_) => Sink::Str(StringBuilder::new()),
            AvroType::Bytes | AvroType::Fixed(_) => Sink::Bin(BinaryBuilder::new()),
            AvroType::Decimal {
                precision, scale, ..
            } => Sink::Decimal(Decimal128Builder::new(), *precision, *scale),
            AvroType::Record(writer) => match target {
                DataType::Struct(fields) => Sink::Record(Box::new(RecordSink::new(writer, fields))),
                _ => Sink::Tree(Vec::new()),
            },
            _ => Sink::Tree(Vec::new()),
        }
    }

    fn push(&mut self, t: &AvroType, buf: &mut &[u8]) -> Option<()> {
        if let Sink::Tree(vals) = self {
            vals.push(read_val(t, buf)?);
            return Some(());
        }
        let t = match t {
            AvroType::Union(b) => {
                let (null_at, inner) = AvroType::nullable_branch(b)?;
                if read_long(buf)? as usize == null_at {
                    self.push_null();
                    return Some(());
                }
                inner
            }
            t => t,
        };
        match (self, t) {
            (Sink::Bool(b), _) => b.append_value(*take(buf, 1)?.first()? != 0),
            (Sink::Int(b), _) => b.append_value(read_long(buf)? as i32),
            (Sink::Date(b), _) => b.append_value(read_long(buf)? as i32),
            (Sink::Long(b), _) => b.append_value(read_long(buf)?),
            (Sink::Micros(b), AvroType::Millis) => b.append_value(read_long(buf)? * 1000),
            (Sink::Micros(b), _) => b.append_value(read_long(buf)?),
            (Sink::Float(b), _) => {
                b.append_value(f32::from_le_bytes(take(buf, 4)?.try_into().ok()?))
            }
            (Sink::Double(b), _) => {
                b.append_value(f64::from_le_bytes(take(buf, 8)?.try_into().ok()?))
            }
            (Sink::Str(b), AvroType::Enum(symbols)) => {
                b.append_value(symbols.get(read_long(buf)? as usize)?)
            }
            (Sink::Str(b), _) => b.append_value(std::str::from_utf8(read_bytes(buf)?).ok()?),
            (Sink::Bin(b), AvroType::Fixed(n)) => b.append_value(take(buf, *n)?),
            (Sink::Bin(b), _) => b.append_value(read_bytes(buf)?),
            (Sink::Decimal(b, _, _), AvroType::Decimal { fixed, .. }) => {
                let bytes = match fixed {
                    Some(n) => take(buf, *n)?,
                    None => read_bytes(buf)?,
                };
                b.append_value(be_to_i128(bytes)?)
            }
            (Sink::Record(r), AvroType::Record(writer)) => r.push(writer, buf)?,
            _ => return None,
        }
        Some(())
    }

    fn push_null(&mut self) {
        match self {
            Sink::Bool(b) => b.append_null(),
            Sink::Int(b) => b.append_null(),
            Sink::Date(b) => b.append_null(),
            Sink::Long(b) | Sink::Micros(b) => b.append_null(),
            Sink::Float(b) => b.append_null(),
            Sink::Double(b) => b.append_null(),
            Sink::Str(b) => b.append_null(),
            Sink::Bin(b) => b.append_null(),
            Sink::Decimal(b, _, _) => b.append_null(),
            Sink::Record(r) => r.push_null(),
            Sink::Tree(v) => v.push(Val::Null),
        }
    }

    /// The column as `field`'s type.
    fn finish(&mut self, field: &Field) -> Result<ArrayRef> {
        let target = field.data_type();
        let natural: ArrayRef = match self {
            Sink::Bool(b) => Arc::new(b.finish()),
            Sink::Int(b) => Arc::new(b.finish()),
            Sink::Date(b) => Arc::new(b.finish()),
            Sink::Long(b) => Arc::new(b.finish()),
            Sink::Micros(b) => {
                let tz = match target {
                    DataType::Timestamp(_, tz) => tz.clone(),
                    _ => Some("UTC".into()),
                };
                let ints = b.finish();
                Arc::new(
                    TimestampMicrosecondArray::new(ints.values().clone(), ints.nulls().cloned())
                        .with_timezone_opt(tz),
                )
            }
            Sink::Float(b) => Arc::new(b.finish()),
            Sink::Double(b) => Arc::new(b.finish()),
            Sink::Str(b) => Arc::new(b.finish()),
            Sink::Bin(b) => Arc::new(b.finish()),
            Sink::Decimal(b, p, s) => Arc::new(b.finish().with_precision_and_scale(*p, *s)?),
            Sink::Record(r) => r.finish()?,
            Sink::Tree(vals) => return vals_to_array(&std::mem::take(vals), target),
        };
        Ok(if natural.data_type() == target {
            natural
        } else {
            arrow::compute::cast(&natural, target)?
        })
    }
}

/// A decoded value of a nested column.
#[derive(Debug, Clone)]
enum Val {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    Decimal(i128),
    Record(Vec<(String, Val)>),
    Array(Vec<Val>),
    Map(Vec<(String, Val)>),
}

fn read_val(t: &AvroType, buf: &mut &[u8]) -> Option<Val> {
    Some(match t {
        AvroType::Null => Val::Null,
        AvroType::Boolean => Val::Bool(*take(buf, 1)?.first()? != 0),
        AvroType::Int | AvroType::Long | AvroType::Date | AvroType::Micros => {
            Val::Int(read_long(buf)?)
        }
        AvroType::Millis => Val::Int(read_long(buf)? * 1000),
        AvroType::Float => Val::Float(f32::from_le_bytes(take(buf, 4)?.try_into().ok()?) as f64),
        AvroType::Double => Val::Float(f64::from_le_bytes(take(buf, 8)?.try_into().ok()?)),
        AvroType::String => Val::Str(String::from_utf8(read_bytes(buf)?.to_vec()).ok()?),
        AvroType::Bytes => Val::Bytes(read_bytes(buf)?.to_vec()),
        AvroType::Fixed(n) => Val::Bytes(take(buf, *n)?.to_vec()),
        AvroType::Enum(symbols) => Val::Str(symbols.get(read_long(buf)? as usize)?.clone()),
        AvroType::Decimal { fixed, .. } => Val::Decimal(be_to_i128(match fixed {
            Some(n) => take(buf, *n)?,
            None => read_bytes(buf)?,
        })?),
        AvroType::Union(branches) => read_val(branches.get(read_long(buf)? as usize)?, buf)?,
        AvroType::Record(fields) => Val::Record(
            fields
                .iter()
                .map(|(n, t)| Some((n.clone(), read_val(t, buf)?)))
                .collect::<Option<_>>()?,
        ),
        AvroType::Array(items) => {
            let mut out = Vec::new();
            read_blocks(buf, |b| {
                out.push(read_val(items, b)?);
                Some(())
            })?;
            Val::Array(out)
        }
        AvroType::Map(values) => {
            let mut out = Vec::new();
            read_blocks(buf, |b| {
                let k = String::from_utf8(read_bytes(b)?.to_vec()).ok()?;
                out.push((k, read_val(values, b)?));
                Some(())
            })?;
            Val::Map(out)
        }
    })
}

/// Skips one value of type `t` without decoding it (a column the reader does not ask for).
fn skip(t: &AvroType, buf: &mut &[u8]) -> Option<()> {
    match t {
        AvroType::Null => {}
        AvroType::Boolean => {
            take(buf, 1)?;
        }
        AvroType::Int
        | AvroType::Long
        | AvroType::Date
        | AvroType::Micros
        | AvroType::Millis
        | AvroType::Enum(_) => {
            read_long(buf)?;
        }
        AvroType::Float => {
            take(buf, 4)?;
        }
        AvroType::Double => {
            take(buf, 8)?;
        }
        AvroType::Bytes | AvroType::String | AvroType::Decimal { fixed: None, .. } => {
            read_bytes(buf)?;
        }
        AvroType::Fixed(n) | AvroType::Decimal { fixed: Some(n), .. } => {
            take(buf, *n)?;
        }
        AvroType::Union(branches) => skip(branches.get(read_long(buf)? as usize)?, buf)?,
        AvroType::Record(fields) => {
            for (_, t) in fields {
                skip(t, buf)?;
            }
        }
        AvroType::Array(items) => read_blocks(buf, |b| skip(items, b))?,
        AvroType::Map(values) => read_blocks(buf, |b| {
            read_bytes(b)?;
            skip(values, b)
        })?,
    }
    Some(())
}

fn mismatch(v: &Val, dt: &DataType) -> FormatError {
    FormatError::Corrupt {
        path: "log data block".into(),
        reason: format!("a value {v:?} does not fit the column type {dt}"),
    }
}

/// Builds an array of type `dt` from nested values.
fn vals_to_array(vals: &[Val], dt: &DataType) -> Result<ArrayRef> {
    macro_rules! prim {
        ($arr:ty, $pat:pat => $e:expr) => {{
            let mut out: Vec<Option<_>> = Vec::with_capacity(vals.len());
            for v in vals {
                out.push(match v {
                    Val::Null => None,
                    $pat => Some($e),
                    other => return Err(mismatch(other, dt)),
                });
            }
            Arc::new(<$arr>::from(out)) as ArrayRef
        }};
    }
    Ok(match dt {
        DataType::Boolean => prim!(BooleanArray, Val::Bool(b) => *b),
        DataType::Int8 => prim!(Int8Array, Val::Int(i) => *i as i8),
        DataType::Int16 => prim!(Int16Array, Val::Int(i) => *i as i16),
        DataType::Int32 => prim!(Int32Array, Val::Int(i) => *i as i32),
        DataType::Int64 => prim!(Int64Array, Val::Int(i) => *i),
        DataType::Date32 => prim!(Date32Array, Val::Int(i) => *i as i32),
        DataType::Float32 => prim!(Float32Array, Val::Float(f) => *f as f32),
        DataType::Float64 => prim!(Float64Array, Val::Float(f) => *f),
        DataType::Utf8 => prim!(StringArray, Val::Str(s) => s.as_str()),
        DataType::Binary => prim!(BinaryArray, Val::Bytes(b) => b.as_slice()),
        DataType::Timestamp(TimeUnit::Microsecond, tz) => {
            let a = prim!(TimestampMicrosecondArray, Val::Int(i) => *i);
            Arc::new(
                a.as_primitive::<arrow::datatypes::TimestampMicrosecondType>()
                    .clone()
                    .with_timezone_opt(tz.clone()),
            )
        }
        DataType::Decimal128(p, s) => {
            let a = prim!(Decimal128Array, Val::Decimal(d) => *d);
            Arc::new(
                a.as_primitive::<arrow::datatypes::Decimal128Type>()
                    .clone()
                    .with_precision_and_scale(*p, *s)?,
            )
        }
        DataType::Struct(fields) => struct_array(vals, fields)?,
        DataType::List(item) => {
            let mut offsets = vec![0i32];
            let mut flat = Vec::new();
            let mut valid = Vec::with_capacity(vals.len());
            for v in vals {
                match v {
                    Val::Null => valid.push(false),
                    Val::Array(items) => {
                        flat.extend(items.iter().cloned());
                        valid.push(true);
                    }
                    other => return Err(mismatch(other, dt)),
                }
                offsets.push(flat.len() as i32);
            }
            let child = vals_to_array(&flat, item.data_type())?;
            Arc::new(ListArray::try_new(
                item.clone(),
                arrow::buffer::OffsetBuffer::new(offsets.into()),
                child,
                Some(valid.into()),
            )?)
        }
        DataType::Map(entries, sorted) => {
            let DataType::Struct(kv) = entries.data_type() else {
                return Err(mismatch(&Val::Null, dt));
            };
            let mut offsets = vec![0i32];
            let mut rows = Vec::new();
            let mut valid = Vec::with_capacity(vals.len());
            for v in vals {
                match v {
                    Val::Null => valid.push(false),
                    Val::Map(items) => {
                        rows.extend(items.iter().map(|(k, v)| {
                            Val::Record(vec![
                                (kv[0].name().clone(), Val::Str(k.clone())),
                                (kv[1].name().clone(), v.clone()),
                            ])
                        }));
                        valid.push(true);
                    }
                    other => return Err(mismatch(other, dt)),
                }
                offsets.push(rows.len() as i32);
            }
            let entries_arr = struct_array(&rows, kv)?;
            let entries_arr = entries_arr.as_struct().clone();
            Arc::new(MapArray::try_new(
                entries.clone(),
                arrow::buffer::OffsetBuffer::new(offsets.into()),
                entries_arr,
                Some(valid.into()),
                *sorted,
            )?)
        }
        other => {
            return Err(FormatError::UnsupportedType {
                column: "log record".into(),
                data_type: other.to_string(),
                reason: "not read from log blocks".into(),
            })
        }
    })
}

fn struct_array(vals: &[Val], fields: &Fields) -> Result<ArrayRef> {
    let mut children = Vec::with_capacity(fields.len());
    for f in fields.iter() {
        let child: Vec<Val> = vals
            .iter()
            .map(|v| match v {
                Val::Record(kv) => kv
                    .iter()
                    .find(|(n, _)| n == f.name())
                    .map_or(Val::Null, |(_, v)| v.clone()),
                _ => Val::Null,
            })
            .collect();
        children.push(vals_to_array(&child, f.data_type())?);
    }
    let valid: Vec<bool> = vals.iter().map(|v| !matches!(v, Val::Null)).collect();
    let fields: Vec<FieldRef> = fields.iter().cloned().collect();
    Ok(Arc::new(StructArray::try_new(
        fields.into(),
        children,
        Some(valid.into()),
    )?))
}
