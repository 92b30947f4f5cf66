//! [`HudiTableProvider`]: a Hudi table as a DataFusion table.

use std::any::Any;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::error::{DataFusionError, Result as DFResult};
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;
use hoodie_format::timeline::Timeline;
use hoodie_format::write::{WriteStatement, BASE_ROW};
use hoodie_format::HudiTable;

use crate::error::{df_err, HoodieError};
use crate::options::write::SessionOptions;
use crate::scan::opened::OpenRead;
use crate::scan::read_kind::ReadKind;

mod read;
mod write;

#[cfg(test)]
mod tests;

/// A Hudi table registered in a DataFusion session.
#[derive(Debug)]
pub struct HudiTableProvider {
    name: String,
    table: HudiTable,
    schema: SchemaRef,
    /// The query a read runs; `None`: the session's read options decide (the snapshot query
    /// when they name none).
    read: Option<ReadKind>,
    /// A read-only view of the table (an `_ro`/`_rt` table, a table function's result).
    read_only: bool,
    /// What opening the table read, for the statement that opened it.
    opened: OpenRead,
    /// Whether the rows carry their rows in their base files as a last column
    /// ([`HudiTableProvider::with_base_rows`]).
    base_rows: bool,
}

impl HudiTableProvider {
    /// Opens the provider for `table`, reading its schema from the latest snapshot.
    ///
    /// The first statement that reads or writes the table through the provider starts from
    /// what this read (the timeline's listing, the newest base file's footer) when it is
    /// planned moments later, as it is when a catalog or `CREATE EXTERNAL TABLE` opens the
    /// table for that statement.
    pub async fn try_new(name: impl Into<String>, table: HudiTable) -> Result<Self, HoodieError> {
        let (opened, schema) = OpenRead::open(&table).await?;
        Ok(Self {
            name: name.into(),
            table,
            schema,
            read: None,
            read_only: false,
            opened,
            base_rows: false,
        })
    }

    /// The timeline a statement planned now reads: the open's listing while it is current,
    /// else a new listing.
    async fn statement_timeline(&self, runtime: &RuntimeEnv) -> DFResult<Timeline> {
        match self.opened.take_timeline(&self.table, runtime) {
            Some(t) => Ok(t),
            None => self.table.timeline().await.map_err(df_err),
        }
    }

    /// A read-only view of this table: the read-optimized query (base files alone) or the
    /// snapshot query, as Hudi's `_ro` and `_rt` tables and `hudi_query` give them.
    pub fn view(&self, read_optimized: bool) -> Self {
        self.read_view(if read_optimized {
            ReadKind::ReadOptimized
        } else {
            ReadKind::Snapshot
        })
    }

    /// A read-only view of this table that runs `read` (time travel, an incremental query, ...).
    pub fn read_view(&self, read: ReadKind) -> Self {
        Self {
            name: self.name.clone(),
            table: self.table.clone(),
            schema: self.schema.clone(),
            read: Some(read),
            read_only: true,
            opened: self.opened.clone(),
            base_rows: false,
        }
    }

    /// This table, its rows with their row in their file slice's base file as a last column
    /// ([`BASE_ROW`], NULL for a row no base file holds; a time-travel or incremental read of
    /// it is refused), for UPDATE, DELETE and MERGE INTO on a merge-on-read table: a row
    /// they write back then carries its record position, so that the log block can be merged
    /// by position. Its rows go nowhere else: it is never registered.
    pub fn with_base_rows(&self) -> Self {
        Self {
            name: self.name.clone(),
            table: self.table.clone(),
            schema: self.schema.clone(),
            read: self.read.clone(),
            read_only: self.read_only,
            opened: self.opened.clone(),
            base_rows: true,
        }
    }

    /// Whether writes are refused (a view of the table).
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Whether this provider reads base files alone.
    pub fn is_read_optimized(&self) -> bool {
        self.read == Some(ReadKind::ReadOptimized)
    }

    /// The query a read in a session with `session` options runs: the view's own, else the
    /// one the session's read options name, else the snapshot query.
    pub fn read_kind(&self, session: &SessionOptions) -> Result<ReadKind, HoodieError> {
        if let Some(r) = &self.read {
            return Ok(r.clone());
        }
        let zone = crate::scan::read_kind::instant_zone(self.table.config());
        match crate::scan::read_kind::read_from_options(|k| session.get(k), zone)? {
            // change rows are not the table's columns, which the statement was planned with
            Some(ReadKind::Changes { .. }) => Err(HoodieError::CdcAsSessionOption {
                table: self.name.clone(),
            }),
            other => Ok(other.unwrap_or(ReadKind::Snapshot)),
        }
    }

    /// The change rows a CDC view reads, if this is one.
    fn changes(&self) -> Option<Result<crate::scan::cdc::CdcTableProvider, HoodieError>> {
        let Some(ReadKind::Changes { begin, end, images }) = &self.read else {
            return None;
        };
        Some(crate::scan::cdc::CdcTableProvider::try_new(
            self.table.clone(),
            self.schema.clone(),
            begin.clone(),
            end.clone(),
            *images,
        ))
    }

    /// Fails unless this view can be read (a CDC view of a table that logs no changes).
    pub fn check_readable(&self) -> Result<(), HoodieError> {
        self.changes().transpose().map(|_| ())
    }

    /// The table.
    pub fn table(&self) -> &HudiTable {
        &self.table
    }

    /// The table name in the session.
    pub fn name(&self) -> &str {
        &self.name
    }
}

#[async_trait]
impl TableProvider for HudiTableProvider {
    fn schema(&self) -> SchemaRef {
        match self.changes() {
            Some(Ok(cdc)) => cdc.schema(),
            _ if self.base_rows => {
                let mut fields = self.schema.fields().to_vec();
                fields.push(base_row_field());
                let metadata = self.schema.metadata().clone();
                Arc::new(datafusion::arrow::datatypes::Schema::new_with_metadata(
                    fields, metadata,
                ))
            }
            _ => self.schema.clone(),
        }
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DFResult<Vec<TableProviderFilterPushDown>> {
        Ok(vec![TableProviderFilterPushDown::Inexact; filters.len()])
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        if let Some(cdc) = self.changes() {
            let cdc = cdc.map_err(HoodieError::into_datafusion)?;
            return cdc.scan(state, projection, filters, limit).await;
        }
        let timeline = self.statement_timeline(state.runtime_env()).await?;
        // the base rows, the schema's last column, are the reader's: the table's columns are
        // the others, and the output has the base rows where the projection names them
        let n = self.schema.fields().len();
        let mut columns = projection.cloned();
        let mut base_row = None;
        if self.base_rows {
            let mut p = columns.unwrap_or_else(|| (0..=n).collect());
            base_row = p.iter().position(|&i| i == n);
            p.retain(|&i| i != n);
            columns = Some(p);
        }
        let wanted = read::Wanted {
            projection: columns.as_ref(),
            limit,
            base_row,
        };
        let plan = self.scan_files(state, &timeline, wanted, filters).await?;
        Ok(self.mark_read(&timeline, plan))
    }

    async fn insert_into(
        &self,
        state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        self.refuse_write().map_err(HoodieError::into_datafusion)?;
        let session = SessionOptions::of_session(state);
        let mode = match insert_op {
            InsertOp::Append => self.write_spec(&session, WriteStatement::InsertInto),
            // without a PARTITION clause (the front-end handles INSERT OVERWRITE ... PARTITION)
            InsertOp::Overwrite => self.write_spec(
                &session,
                WriteStatement::InsertOverwrite {
                    static_prefix: None,
                    full_static: false,
                },
            ),
            InsertOp::Replace => Err(HoodieError::Unsupported {
                feature:
                    "REPLACE INTO on Hudi tables (use INSERT INTO, which upserts on keyed tables)"
                        .into(),
            }),
        }
        .map_err(HoodieError::into_datafusion)?;
        Ok(self.write_plan(input, mode))
    }

    async fn delete_from(
        &self,
        _state: &dyn Session,
        _filters: Vec<Expr>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        Err(planned_by_rule("DELETE"))
    }

    async fn update(
        &self,
        _state: &dyn Session,
        _a: Vec<(String, Expr)>,
        _f: Vec<Expr>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        Err(planned_by_rule("UPDATE"))
    }

    async fn truncate(&self, _state: &dyn Session) -> DFResult<Arc<dyn ExecutionPlan>> {
        Err(unsupported_dml("TRUNCATE"))
    }
}

/// The field of [`BASE_ROW`]: the parquet reader's row number of a row in its file.
pub(crate) fn base_row_field() -> datafusion::arrow::datatypes::FieldRef {
    use datafusion::arrow::datatypes::{DataType, Field};
    Arc::new(
        Field::new(BASE_ROW, DataType::Int64, true)
            .with_extension_type(datafusion::parquet::arrow::RowNumber),
    )
}

fn planned_by_rule(what: &str) -> DataFusionError {
    DataFusionError::Plan(format!("{what} on Hudi tables is planned by hoodie's analyzer rule, which this session lacks: build the session with SessionStateBuilder::with_hoodie (hoodie_datafusion::prelude)"))
}

fn unsupported_dml(what: &str) -> DataFusionError {
    HoodieError::Unsupported {
        feature: format!("{what} on Hudi tables"),
    }
    .into_datafusion()
}

/// For downcasts of `dyn TableProvider`.
pub fn as_hudi(provider: &Arc<dyn TableProvider>) -> Option<&HudiTableProvider> {
    let any: &dyn Any = provider.as_ref();
    any.downcast_ref::<HudiTableProvider>()
}
