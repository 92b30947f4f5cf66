//! The write side of a Hudi table: a DataFusion `DataSink` that writes one commit.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;

use datafusion::arrow::array::{new_null_array, Array, ArrayRef, RecordBatch};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::datasource::sink::DataSink;
use datafusion::error::{DataFusionError, Result as DFResult};
use datafusion::execution::memory_pool::MemoryConsumer;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::metrics::MetricsSet;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType};
use futures::StreamExt;
use hoodie_format::client::{StatementRead, WriteClient, Written};
use hoodie_format::keygen::KeyGenerator;
use hoodie_format::schema::is_meta_column;
use hoodie_format::write::ChangeSetSchema;
use hoodie_format::write::{Budgets, Incoming, IncomingBuilder, KeySource, SpillSpace};
use hoodie_format::write::{WriteKind, WriteSpec};
use hoodie_format::HudiTable;

use crate::error::df_err;
use crate::scan::snapshot::PlanRead;

mod budget;
mod metrics;

use budget::{DiskSpill, PoolBudget};
pub use metrics::WriteCounts;
use metrics::WriteMetrics;

/// Writes its input as one commit of a Hudi table.
#[derive(Debug)]
pub struct HudiSink {
    table: HudiTable,
    name: String,
    /// What the write did, for `DataSink::metrics`.
    metrics: WriteMetrics,
    schema: SchemaRef,
    mode: WriteSpec,
    /// At most this many bytes of rows stay in memory (None: as many as the pool grants).
    rows_in_memory: Option<usize>,
    /// What the plan feeding the sink read of the table: the timeline a single writer may
    /// start from, and under optimistic concurrency the writes it saw (those it did not see
    /// are the ones that can conflict).
    read: PlanRead,
}

impl HudiSink {
    /// Keeps at most `cap` bytes of rows in memory before spilling (None: the pool decides).
    pub fn with_rows_in_memory(mut self, cap: Option<usize>) -> Self {
        self.rows_in_memory = cap;
        self
    }

    /// Records what the plan feeding the sink read of the table.
    pub(crate) fn with_read(mut self, read: PlanRead) -> Self {
        self.read = read;
        self
    }

    /// The write the sink runs.
    pub fn spec(&self) -> &WriteSpec {
        &self.mode
    }

    /// A sink writing into `table` (whose full schema is `schema`).
    pub fn new(table: HudiTable, name: String, schema: SchemaRef, mode: WriteSpec) -> Self {
        Self {
            table,
            name,
            metrics: WriteMetrics::new(),
            schema,
            mode,
            rows_in_memory: None,
            read: PlanRead::default(),
        }
    }
}

impl DisplayAs for HudiSink {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spec = &self.mode;
        let ordering = spec.ordering_field.as_deref().unwrap_or("none");
        let detail = match &spec.kind {
            WriteKind::Insert => {
                format!("precombine={}", spec.precombine_field().unwrap_or("none"))
            }
            WriteKind::Upsert => format!(
                "ordering={ordering}, merge_mode={}, index={}",
                spec.merge_mode.as_str(),
                if spec.global_index {
                    "global"
                } else {
                    "partition"
                }
            ),
            WriteKind::Overwrite(scope) => format!("replace={scope:?}"),
            WriteKind::ChangeSet => {
                format!(
                    "ordering={ordering}, merge_mode={}",
                    spec.merge_mode.as_str()
                )
            }
        };
        write!(
            f,
            "HudiSink: table={}, operation={}, {detail}",
            self.name,
            self.mode.operation.java_name().to_ascii_lowercase()
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

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.set().clone_inner())
    }

    async fn write_all(
        &self,
        data: SendableRecordBatchStream,
        context: &Arc<TaskContext>,
    ) -> DFResult<u64> {
        // the statement's rows are held until the commit: what they route by stays in memory,
        // the rows themselves are counted against the session's memory pool and spilled
        // through its disk manager when the pool has no room
        let pool = context.memory_pool();
        // footers the statement's scan read are not read again
        let table = crate::scan::footers::with_session_footers(&self.table, &context.runtime_env());
        if let Some(opened) = &self.read.opened {
            opened.hand_over(&context.runtime_env());
        }
        let rows = MemoryConsumer::new(format!("HudiSink[{}]", self.name))
            .with_can_spill(true)
            .register(pool);
        let routing = MemoryConsumer::new(format!("HudiSink[{}] keys", self.name)).register(pool);
        let rows_budget = Arc::new(PoolBudget::new(rows, self.rows_in_memory));
        let spill = DiskSpill(context.runtime_env().disk_manager.clone());
        let change_set = change_set_of(&self.schema, &self.mode)?;
        let table_schema = table_schema_of(&self.schema, change_set.as_ref());
        let mut builder = incoming_builder(
            &table,
            &table_schema,
            &self.mode,
            Budgets {
                rows: rows_budget.clone(),
                routing: Arc::new(PoolBudget::new(routing, None)),
            },
            Some(Arc::new(spill)),
        )?;
        let mut data = data;
        while let Some(b) = data.next().await {
            let b = b?;
            match &change_set {
                Some(c) => {
                    let change = c.split(&b).map_err(df_err)?;
                    builder.push_change_set(change).map_err(df_err)?;
                }
                None => builder
                    .push(to_table_batch(&b, &self.schema)?, None)
                    .map_err(df_err)?,
            }
        }
        // the plan that fed the rows has ended and freed its memory: the waves may use the pool
        rows_budget.lift_cap();
        let incoming = builder.finish().map_err(df_err)?;
        let counts = write_incoming(
            &table,
            &table_schema,
            &self.mode,
            incoming,
            self.read.clone(),
        )
        .await?;
        self.metrics.record(&counts);
        Ok(counts.affected())
    }
}

/// The change-set schema of a sink's input, when `mode` writes a change set.
fn change_set_of(schema: &SchemaRef, mode: &WriteSpec) -> DFResult<Option<ChangeSetSchema>> {
    if mode.prepped() {
        return Ok(Some(ChangeSetSchema::of(schema).map_err(df_err)?));
    }
    Ok(None)
}

/// The table rows' schema of a sink's input.
fn table_schema_of(schema: &SchemaRef, change_set: Option<&ChangeSetSchema>) -> SchemaRef {
    change_set.map_or_else(|| schema.clone(), |c| c.table_schema().clone())
}

/// `columns` cast to the types of `schema`'s fields, in order (a column of the right type is
/// kept as it is).
pub(crate) fn cast_columns(
    columns: &[ArrayRef],
    schema: &Schema,
) -> Result<Vec<ArrayRef>, datafusion::arrow::error::ArrowError> {
    columns
        .iter()
        .zip(schema.fields())
        .map(|(c, f)| {
            if c.data_type() == f.data_type() {
                Ok(c.clone())
            } else {
                cast(c, f.data_type())
            }
        })
        .collect()
}

/// A collector of the rows `mode` writes into `table` (`table_schema`: the table's columns).
/// Record keys are validated as the rows arrive, so bad input fails before the write starts.
fn incoming_builder(
    table: &HudiTable,
    table_schema: &SchemaRef,
    mode: &WriteSpec,
    budgets: Budgets,
    spill: Option<Arc<dyn SpillSpace>>,
) -> DFResult<IncomingBuilder> {
    let keygen = KeyGenerator::from_config(table.config()).map_err(df_err)?;
    let (source, ordering) = match &mode.kind {
        WriteKind::Insert | WriteKind::Overwrite(_) => match mode.precombine_field() {
            Some(f) => (KeySource::Keep, Some(f)),
            // a bucket index routes each row by its key; pre-combining without an ordering
            // field keeps the later row of each key
            None if mode.bucket.is_some() || mode.precombine => (KeySource::Keep, None),
            None => (KeySource::Validate, None),
        },
        WriteKind::Upsert => (KeySource::Keep, mode.ordering_field.as_deref()),
        WriteKind::ChangeSet => (KeySource::Prepped, mode.ordering_field.as_deref()),
    };
    IncomingBuilder::new(
        table_schema.clone(),
        keygen,
        source,
        ordering,
        budgets,
        spill,
    )
    .map_err(df_err)
}

/// Writes `batches` (the sink's schema: the table schema, or for a change set the table
/// schema plus the delete flag) as one commit, holding them in memory; returns what it
/// inserted, updated and deleted.
pub async fn write_batches(
    table: &HudiTable,
    schema: &SchemaRef,
    mode: &WriteSpec,
    batches: Vec<RecordBatch>,
) -> DFResult<WriteCounts> {
    let change_set = change_set_of(schema, mode)?;
    let table_schema = table_schema_of(schema, change_set.as_ref());
    let mut builder = incoming_builder(table, &table_schema, mode, Budgets::unbounded(), None)?;
    for b in batches {
        match &change_set {
            Some(c) => {
                let change = c.split(&b).map_err(df_err)?;
                builder.push_change_set(change).map_err(df_err)?;
            }
            None => builder.push(b, None).map_err(df_err)?,
        }
    }
    let incoming = builder.finish().map_err(df_err)?;
    write_incoming(table, &table_schema, mode, incoming, PlanRead::default()).await
}

/// Writes `incoming` (rows of `table_schema`) as one commit through the write client;
/// `read` is what the statement read of the table before the write began, if it did.
async fn write_incoming(
    table: &HudiTable,
    table_schema: &SchemaRef,
    mode: &WriteSpec,
    incoming: Incoming,
    read: PlanRead,
) -> DFResult<WriteCounts> {
    let read = StatementRead {
        snapshot: read.snapshot,
        listed: read.listed,
    };
    let outcome = WriteClient::new(table, mode.clone())
        .write(table_schema, incoming, read)
        .await
        .map_err(df_err)?;
    let counts = match &outcome.written {
        Written::Inserted(r) => WriteCounts::inserts(r.rows, r.files),
        Written::Upserted(r) => WriteCounts::of_upsert(r),
    };
    Ok(match &outcome.commit {
        Some(commit) => counts.with_commit(commit),
        None => counts,
    })
}
