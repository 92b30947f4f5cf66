//! Change data capture as Hudi 1.2 writes and reads it.
//!
//! Writing: with `hoodie.table.cdc.enabled`, a write that rewrites an existing file group logs
//! the records it changed to a `.cdc` log file beside the new base file (a CDC_DATA block in the
//! schema of the table's supplemental logging mode, [`log`]), and names it in the write stat's
//! `cdcStats` (`crate::write::cdc_log`). New file groups, whole file groups deleted, replaced file groups and
//! merge-on-read log files get no `.cdc` log: a reader infers their changes.
//!
//! Reading: [`extract`] picks, per commit of a window and file group, how its changes are
//! found (Hudi's five inference cases), and [`changes`] turns each such split into change rows
//! of [`change_schema`]: `op`, `ts_ms`, `before`, `after`.

pub(crate) mod changes;
pub(crate) mod extract;
pub(crate) mod json;
pub(crate) mod log;

use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, StringArray, StructArray};
use arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef};

use crate::error::{FormatError, Result};

pub use changes::ChangeReader;
pub use extract::{cdc_splits, CdcSplit};
pub use json::{json_change_schema, with_json_images};

/// What a CDC log holds per changed record (`hoodie.table.cdc.supplemental.logging.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CdcMode {
    /// The operation and the record key.
    OpKeyOnly,
    /// The operation, the record key and the before image.
    DataBefore,
    /// The operation, the instant and both images.
    DataBeforeAfter,
}

impl CdcMode {
    /// Parses a mode name, case-insensitively (as Hudi's `valueOf(value.toUpperCase())`).
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim().to_ascii_uppercase().as_str() {
            "OP_KEY_ONLY" => Ok(Self::OpKeyOnly),
            "DATA_BEFORE" => Ok(Self::DataBefore),
            "DATA_BEFORE_AFTER" => Ok(Self::DataBeforeAfter),
            _ => Err(FormatError::InvalidProperty {
                key: crate::config::CDC_LOGGING_MODE.key.into(),
                value: s.into(),
                reason: "expected OP_KEY_ONLY, DATA_BEFORE or DATA_BEFORE_AFTER".into(),
            }),
        }
    }

    /// The mode's name as Hudi spells it.
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::OpKeyOnly => "OP_KEY_ONLY",
            Self::DataBefore => "DATA_BEFORE",
            Self::DataBeforeAfter => "DATA_BEFORE_AFTER",
        }
    }
}

/// A change's operation (`HoodieCDCOperation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CdcOp {
    /// A new record: no before image.
    Insert,
    /// A changed record: both images.
    Update,
    /// A removed record: no after image.
    Delete,
}

impl CdcOp {
    /// The code Hudi writes and reads: `i`, `u` or `d`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Insert => "i",
            Self::Update => "u",
            Self::Delete => "d",
        }
    }

    /// The operation of a code.
    pub fn of_code(code: &str) -> Option<Self> {
        match code {
            "i" => Some(Self::Insert),
            "u" => Some(Self::Update),
            "d" => Some(Self::Delete),
            _ => None,
        }
    }
}

/// Name of the operation column of change rows.
pub const OP: &str = "op";
/// Name of the instant column of change rows (Hudi's `ts_ms`: the commit's requested time).
pub const TS_MS: &str = "ts_ms";
/// Name of the before-image column.
pub const BEFORE: &str = "before";
/// Name of the after-image column.
pub const AFTER: &str = "after";

/// The struct type of an image: the table's data columns (no meta columns), all nullable (an
/// image read back from a log or inferred from a file is checked by nothing else).
pub fn image_fields(table: &Schema) -> Fields {
    crate::schema::data_schema(table)
        .fields()
        .iter()
        .map(|f| Arc::new(f.as_ref().clone().with_nullable(true)))
        .collect()
}

/// The schema of change rows of a table: `op`, `ts_ms` (strings), `before` and `after`
/// (structs of [`image_fields`], NULL where a change has no such image).
pub fn change_schema(table: &Schema) -> SchemaRef {
    let image = DataType::Struct(image_fields(table));
    Arc::new(Schema::new(vec![
        Field::new(OP, DataType::Utf8, false),
        Field::new(TS_MS, DataType::Utf8, true),
        Field::new(BEFORE, image.clone(), true),
        Field::new(AFTER, image, true),
    ]))
}

/// Collects change rows of one instant in pieces of one operation each.
pub struct ChangeRows {
    schema: SchemaRef,
    fields: Fields,
    instant: String,
    pieces: Vec<RecordBatch>,
}

impl ChangeRows {
    /// Change rows of `instant` in `schema` ([`change_schema`]).
    pub fn new(schema: SchemaRef, instant: &str) -> Self {
        let DataType::Struct(fields) = schema.field(2).data_type().clone() else {
            unreachable!("change_schema's before column is a struct")
        };
        Self {
            schema,
            fields,
            instant: instant.to_string(),
            pieces: Vec::new(),
        }
    }

    /// Adds `rows` changes of operation `op`: `before` and `after` are table rows (any columns;
    /// the image's columns are taken by name), `None` where the operation has no such image.
    pub fn push(
        &mut self,
        op: CdcOp,
        rows: usize,
        before: Option<&RecordBatch>,
        after: Option<&RecordBatch>,
    ) -> Result<()> {
        if rows == 0 {
            return Ok(());
        }
        let cols: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from(vec![op.code(); rows])),
            Arc::new(StringArray::from(vec![self.instant.as_str(); rows])),
            Arc::new(image(&self.fields, before, rows)?),
            Arc::new(image(&self.fields, after, rows)?),
        ];
        self.pieces
            .push(RecordBatch::try_new(self.schema.clone(), cols)?);
        Ok(())
    }

    /// Adds change rows already in the schema.
    pub fn push_batch(&mut self, batch: RecordBatch) {
        if batch.num_rows() > 0 {
            self.pieces.push(batch);
        }
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// The pieces added, in order.
    pub fn into_batches(self) -> Vec<RecordBatch> {
        self.pieces
    }
}

/// An image column of `rows` rows: the columns of `fields` taken from `rows_of` by name (a
/// column it lacks is NULL), or all NULL.
fn image(fields: &Fields, rows_of: Option<&RecordBatch>, rows: usize) -> Result<StructArray> {
    let Some(batch) = rows_of else {
        return Ok(StructArray::new_null(fields.clone(), rows));
    };
    let cols = fields
        .iter()
        .map(|f| match batch.column_by_name(f.name()) {
            Some(c) if c.data_type() == f.data_type() => Ok(c.clone()),
            Some(c) => Ok(arrow::compute::cast(c, f.data_type())?),
            None => Ok(arrow::array::new_null_array(f.data_type(), rows)),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(StructArray::try_new(fields.clone(), cols, None)?)
}
