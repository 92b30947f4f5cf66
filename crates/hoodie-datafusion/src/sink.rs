//! The write side of a Hudi table: a DataFusion `DataSink` that writes one commit.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{new_null_array, ArrayRef, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::datasource::sink::DataSink;
use datafusion::error::{DataFusionError, Result as DFResult};
use datafusion::execution::memory_pool::MemoryConsumer;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::{DisplayAs, DisplayFormatType};
use futures::StreamExt;
use hoodie_format::insert::{write_inserts, InsertOptions};
use hoodie_format::keygen::KeyGenerator;
use hoodie_format::overwrite::{write_overwrite, OverwriteScope};
use hoodie_format::schema::{avro_schema, is_meta_column};
use hoodie_format::transaction::{Transaction, WriteOperation};
use hoodie_format::upsert::{write_upserts, UpsertOptions};
use hoodie_format::HudiTable;

/// How a write runs.
#[derive(Debug, Clone)]
pub enum WriteMode {
    /// insert / bulk_insert into new file groups.
    Insert {
        /// The operation recorded in the commit.
        operation: WriteOperation,
        /// Pre-combine and file settings.
        options: InsertOptions,
    },
    /// A keyed write: upsert, or insert with a duplicate policy.
    Upsert {
        /// The operation recorded in the commit.
        operation: WriteOperation,
        /// Ordering, index and file settings.
        options: UpsertOptions,
    },
    /// A change set read from the table (UPDATE / DELETE): the table's columns plus a delete
    /// flag as the last column.
    ChangeSet {
        /// The operation recorded in the commit.
        operation: WriteOperation,
        /// Ordering and file settings (`prepped` is set).
        options: UpsertOptions,
    },
    /// INSERT OVERWRITE: a replacecommit.
    Overwrite {
        /// The operation recorded in the commit.
        operation: WriteOperation,
        /// Pre-combine and file settings.
        options: InsertOptions,
        /// What is replaced.
        scope: OverwriteScope,
    },
}

impl WriteMode {
    /// The operation recorded in the commit.
    pub fn operation(&self) -> WriteOperation {
        match self {
            WriteMode::Insert { operation, .. }
            | WriteMode::Upsert { operation, .. }
            | WriteMode::ChangeSet { operation, .. }
            | WriteMode::Overwrite { operation, .. } => *operation,
        }
    }
}

use crate::error::df_err;

/// What one write did, by kind of change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteCounts {
    /// Records inserted.
    pub inserted: u64,
    /// Records updated (replaced or merged).
    pub updated: u64,
    /// Records deleted.
    pub deleted: u64,
}

impl WriteCounts {
    /// Rows the statement affected: inserted + updated + deleted.
    pub fn affected(&self) -> u64 {
        self.inserted + self.updated + self.deleted
    }

    fn inserts(rows: u64) -> Self {
        WriteCounts {
            inserted: rows,
            ..Default::default()
        }
    }

    fn of_upsert(r: &hoodie_format::upsert::UpsertResult) -> Self {
        WriteCounts {
            inserted: r.inserted,
            updated: r.updated,
            deleted: r.deleted,
        }
    }
}

/// Writes its input as one commit of a Hudi table.
#[derive(Debug)]
pub struct HudiSink {
    table: HudiTable,
    name: String,
    /// What the last `write_all` wrote (read back by `HoodieContext` to report the breakdown).
    last: std::sync::Mutex<Option<WriteCounts>>,
    schema: SchemaRef,
    mode: WriteMode,
}

impl HudiSink {
    /// A sink writing into `table` (whose full schema is `schema`).
    pub fn new(table: HudiTable, name: String, schema: SchemaRef, mode: WriteMode) -> Self {
        Self {
            table,
            name,
            last: std::sync::Mutex::new(None),
            schema,
            mode,
        }
    }
}

impl DisplayAs for HudiSink {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let detail = match &self.mode {
            WriteMode::Insert { options, .. } => format!(
                "precombine={}",
                options.precombine_field.as_deref().unwrap_or("none")
            ),
            WriteMode::Upsert { options, .. } => format!(
                "ordering={}, merge_mode={}, index={}",
                options.ordering_field.as_deref().unwrap_or("none"),
                options.merge_mode.as_str(),
                if options.global_index {
                    "global"
                } else {
                    "partition"
                }
            ),
            WriteMode::Overwrite { scope, .. } => format!("replace={scope:?}"),
            WriteMode::ChangeSet { options, .. } => format!(
                "ordering={}, merge_mode={}",
                options.ordering_field.as_deref().unwrap_or("none"),
                options.merge_mode.as_str()
            ),
        };
        write!(
            f,
            "HudiSink: table={}, operation={}, {detail}",
            self.name,
            self.mode.operation().java_name().to_ascii_lowercase()
        )
    }
}

/// Brings a batch into the table schema: meta columns (null; the writer fills them), then the
/// data columns matched by name and cast to their stored types.
pub fn to_table_batch(batch: &RecordBatch, schema: &SchemaRef) -> DFResult<RecordBatch> {
    let n = batch.num_rows();
    let input = batch.schema();
    let mut cols: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    for (i, f) in schema.fields().iter().enumerate() {
        if is_meta_column(f.name()) {
            cols.push(new_null_array(f.data_type(), n));
            continue;
        }
        let idx = input
            .index_of(f.name())
            .ok()
            .or_else(|| {
                input
                    .fields()
                    .iter()
                    .position(|g| g.name().eq_ignore_ascii_case(f.name()))
            })
            .or_else(|| (input.fields().len() == schema.fields().len()).then_some(i));
        let col = match idx {
            Some(idx) => batch.column(idx).clone(),
            None => {
                return Err(DataFusionError::Plan(format!(
                    "column {} missing from the data written to the table",
                    f.name()
                )))
            }
        };
        cols.push(if col.data_type() == f.data_type() {
            col
        } else {
            cast(&col, f.data_type())?
        });
    }
    Ok(RecordBatch::try_new(schema.clone(), cols)?)
}

#[async_trait]
impl DataSink for HudiSink {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    async fn write_all(
        &self,
        data: SendableRecordBatchStream,
        context: &Arc<TaskContext>,
    ) -> DFResult<u64> {
        // the statement's input is held until the commit: count it against the session's
        // memory pool, so a write that does not fit fails with ResourcesExhausted (and nothing
        // committed) instead of exhausting the machine
        let reservation =
            MemoryConsumer::new(format!("HudiSink[{}]", self.name)).register(context.memory_pool());
        let mut data = data;
        let mut batches: Vec<RecordBatch> = Vec::new();
        let change_set = matches!(self.mode, WriteMode::ChangeSet { .. });
        while let Some(b) = data.next().await {
            let b = b?;
            let b = if change_set {
                b
            } else {
                to_table_batch(&b, &self.schema)?
            };
            reservation.try_grow(b.get_array_memory_size())?;
            batches.push(b);
        }
        let counts = write_batches(&self.table, &self.schema, &self.mode, batches).await;
        reservation.free();
        let counts = counts?;
        *self.last.lock().expect("write counts lock") = Some(counts);
        Ok(counts.affected())
    }
}

impl HudiSink {
    /// For `dyn Any` downcasts in tests.
    pub fn as_any(&self) -> &dyn Any {
        self
    }

    /// What the last completed write of this sink wrote, by kind of change.
    pub fn last_counts(&self) -> Option<WriteCounts> {
        *self.last.lock().expect("write counts lock")
    }
}

/// Writes `batches` (table schema) as one commit; returns what it inserted, updated and
/// deleted.
pub async fn write_batches(
    table: &HudiTable,
    schema: &SchemaRef,
    mode: &WriteMode,
    batches: Vec<RecordBatch>,
) -> DFResult<WriteCounts> {
    let keygen = KeyGenerator::from_config(table.config()).map_err(df_err)?;
    if let WriteMode::ChangeSet { options, .. } = mode {
        return write_change_set(table, schema, mode.operation(), options, batches).await;
    }
    // Validate keys before anything is written, so bad input leaves no trace on the timeline.
    if !keygen.has_generated_keys() {
        for b in &batches {
            keygen.record_keys(b).map_err(df_err)?;
        }
    }
    let avro = avro_schema(table.config().name(), schema)
        .map_err(df_err)?
        .to_string();
    let mut txn = Transaction::begin(table, mode.operation())
        .await
        .map_err(df_err)?;
    let rows = match mode {
        WriteMode::Insert { options, .. } => WriteCounts::inserts(
            write_inserts(&mut txn, &keygen, schema, batches, options)
                .await
                .map_err(df_err)?
                .rows,
        ),
        WriteMode::Upsert { options, .. } => WriteCounts::of_upsert(
            &write_upserts(&mut txn, &keygen, schema, batches, None, options)
                .await
                .map_err(df_err)?,
        ),
        WriteMode::ChangeSet { .. } => unreachable!("handled above"),
        WriteMode::Overwrite { options, scope, .. } => WriteCounts::inserts(
            write_overwrite(&mut txn, &keygen, schema, batches, options, scope)
                .await
                .map_err(df_err)?
                .rows,
        ),
    };
    txn.commit(avro).await.map_err(df_err)?;
    Ok(rows)
}

/// Writes a change set (the table's columns plus a trailing delete flag; `schema` is the
/// change-set schema) as one commit.
async fn write_change_set(
    table: &HudiTable,
    schema: &SchemaRef,
    operation: WriteOperation,
    options: &UpsertOptions,
    batches: Vec<RecordBatch>,
) -> DFResult<WriteCounts> {
    use datafusion::arrow::array::{Array, AsArray, BooleanArray};
    let n = schema.fields().len() - 1;
    let table_schema: SchemaRef = Arc::new(datafusion::arrow::datatypes::Schema::new(
        schema.fields()[..n].to_vec(),
    ));
    let mut flags: Vec<bool> = Vec::new();
    let mut rows = Vec::with_capacity(batches.len());
    for b in batches {
        let flag = b.column(n).as_boolean();
        flags.extend((0..flag.len()).map(|i| flag.is_valid(i) && flag.value(i)));
        let cols = b.columns()[..n]
            .iter()
            .zip(table_schema.fields())
            .map(|(c, f)| {
                if c.data_type() == f.data_type() {
                    Ok(c.clone())
                } else {
                    cast(c, f.data_type())
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        rows.push(RecordBatch::try_new(table_schema.clone(), cols)?);
    }
    if flags.is_empty() {
        return Ok(WriteCounts::default());
    }
    let keygen = KeyGenerator::from_config(table.config()).map_err(df_err)?;
    // new rows (MERGE inserts, no meta columns yet) must have valid keys: check before the
    // commit starts, so bad input leaves no pending instant behind
    if !keygen.has_generated_keys() {
        for b in &rows {
            let meta = b.column(2);
            if meta.null_count() > 0 {
                let idx: Vec<u32> = (0..meta.len())
                    .filter(|&i| meta.is_null(i))
                    .map(|i| i as u32)
                    .collect();
                let fresh = datafusion::arrow::compute::take_record_batch(
                    b,
                    &datafusion::arrow::array::UInt32Array::from(idx),
                )?;
                keygen.record_keys(&fresh).map_err(df_err)?;
            }
        }
    }
    let avro = avro_schema(table.config().name(), &table_schema)
        .map_err(df_err)?
        .to_string();
    let mut txn = Transaction::begin(table, operation).await.map_err(df_err)?;
    let result = write_upserts(
        &mut txn,
        &keygen,
        &table_schema,
        rows,
        Some(BooleanArray::from(flags)),
        options,
    )
    .await
    .map_err(df_err)?;
    txn.commit(avro).await.map_err(df_err)?;
    Ok(WriteCounts::of_upsert(&result))
}
