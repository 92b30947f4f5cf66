//! [`HudiTableProvider`]: a Hudi table as a DataFusion table.

use std::any::Any;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder, ParquetSource};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::error::{DataFusionError, Result as DFResult};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::union::UnionExec;
use datafusion::physical_plan::ExecutionPlan;
use hoodie_format::fs_view::FileSlice;
use hoodie_format::keygen::KeyGenerator;
use hoodie_format::timeline::Timeline;
use hoodie_format::write::spec::{WriteSpec, WriteStatement};
use hoodie_format::HudiTable;

use crate::error::{df_err, HoodieError};
use crate::scan::opened::OpenRead;
use crate::scan::read_kind::ReadKind;
use crate::scan::snapshot::PlanRead;
use crate::session::write_options::{SessionOptions, WriteOptions};
use crate::sink::HudiSink;
use hoodie_format::FormatError;

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

    /// What `input`, the plan feeding a write, read of the table, or else what the open read.
    fn plan_read(&self, input: &Arc<dyn ExecutionPlan>) -> PlanRead {
        let read = PlanRead::of(input, self.table.storage().location());
        match self.opened.take() {
            Some(opened) => read.or_opened(opened, &self.table),
            None => read,
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
        }
    }

    /// Whether writes are refused (a view of the table).
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The error a write to a view gets.
    pub fn refuse_write(&self) -> Result<(), HoodieError> {
        if !self.read_only {
            return Ok(());
        }
        Err(HoodieError::Invalid {
            message: format!(
                "{} is a read-only {} view of a Hudi table; write to the table itself",
                self.name,
                self.read.as_ref().unwrap_or(&ReadKind::Snapshot).describe()
            ),
        })
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
            Some(ReadKind::Changes { .. }) => Err(HoodieError::Invalid {
                message: format!(
                    "a CDC read (hoodie.datasource.query.incremental.format = cdc) as a session option of {}: CDC rows have their own columns; use hudi_table_changes('{}', 'cdc', ...) or CREATE EXTERNAL TABLE ... OPTIONS with the read options",
                    self.name, self.name
                ),
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

    /// The options a write to this table sees in a session with `session` options.
    pub fn write_options(&self, session: &SessionOptions) -> WriteOptions {
        WriteOptions::new(session.all().clone(), self.table.config())
    }

    /// The write `statement` runs into this table in a session with `session` options,
    /// resolved and validated.
    pub fn write_spec(
        &self,
        session: &SessionOptions,
        statement: WriteStatement,
    ) -> Result<WriteSpec, HoodieError> {
        // UPDATE, DELETE and MERGE find their rows in the latest snapshot, whatever the
        // session's read options ask other reads for
        if matches!(statement, WriteStatement::ChangeSet { .. }) {
            let read = self.read_kind(session)?;
            if read != ReadKind::Snapshot {
                return Err(HoodieError::Invalid {
                    message: format!("UPDATE, DELETE and MERGE change the latest snapshot of {}, but the session's read options ask for another query ({}); RESET hoodie.datasource.query.type first", self.name, read.describe()),
                });
            }
        }
        Ok(WriteSpec::resolve(&self.write_options(session), statement)?)
    }

    /// The partition columns the data files leave out (`drop.partition.columns`), as the last
    /// fields of the table schema, in order.
    fn dropped_partition_fields(
        &self,
    ) -> Result<Vec<datafusion::arrow::datatypes::FieldRef>, HoodieError> {
        let dropped = self.table.config().dropped_columns()?;
        let n = self.schema.fields().len();
        let tail = &self.schema.fields()[n.saturating_sub(dropped.len())..];
        if tail.iter().map(|f| f.name()).ne(dropped.iter()) {
            return Err(HoodieError::Unsupported {
                feature: format!("a table that drops its partition columns ({}) from its files but does not have them as its last columns", dropped.join(", ")),
            });
        }
        Ok(tail.to_vec())
    }

    /// The values of the partition columns `fields` for the files under `partition_path`.
    fn partition_values(
        &self,
        partition_path: &str,
        fields: &[datafusion::arrow::datatypes::FieldRef],
    ) -> Result<Vec<ScalarValue>, HoodieError> {
        let keygen = KeyGenerator::from_config(self.table.config())?;
        let values = keygen.parse_partition_path(partition_path).ok_or_else(|| {
            HoodieError::Invalid {
                message: format!("partition path {partition_path:?} of table {} does not name its partition columns", self.name),
            }
        })?;
        values
            .into_iter()
            .zip(fields)
            .map(|(v, f)| Ok(ScalarValue::Utf8(v).cast_to(f.data_type())?))
            .collect()
    }

    /// A plan that runs `input` through `mode` as one commit.
    pub fn write_plan(
        &self,
        input: Arc<dyn ExecutionPlan>,
        mode: WriteSpec,
    ) -> Arc<dyn ExecutionPlan> {
        let read = self.plan_read(&input);
        let sink = HudiSink::new(
            self.table.clone(),
            self.name.clone(),
            self.schema.clone(),
            mode,
        )
        .with_read(read);
        Arc::new(DataSinkExec::new(input, Arc::new(sink), None))
    }

    /// A plan that writes a change set (the table's columns plus a delete flag) as one commit;
    /// `rows_in_memory` caps the bytes of rows the write holds in memory before it spills (so
    /// that the plan feeding it keeps room in the pool), `None` leaves it to the pool.
    pub fn change_set_plan(
        &self,
        input: Arc<dyn ExecutionPlan>,
        mode: WriteSpec,
        rows_in_memory: Option<usize>,
    ) -> Arc<dyn ExecutionPlan> {
        let schema = change_set_schema(&input.schema(), &self.schema);
        let read = self.plan_read(&input);
        let sink = HudiSink::new(self.table.clone(), self.name.clone(), schema, mode)
            .with_rows_in_memory(rows_in_memory)
            .with_read(read);
        Arc::new(DataSinkExec::new(input, Arc::new(sink), None))
    }

    /// The partition path prefix of static partition values (`[(column, value)]`), which must
    /// name leading partition columns. Returns the prefix and whether it names them all.
    pub fn static_partition_prefix(
        &self,
        values: &[(String, String)],
    ) -> Result<Option<(String, bool)>, HoodieError> {
        if values.is_empty() {
            return Ok(None);
        }
        let cfg = self.table.config();
        let fields = cfg.partition_fields();
        let hive = cfg.hive_style_partitioning()?;
        let mut parts = Vec::new();
        for f in &fields {
            match values.iter().find(|(c, _)| c.eq_ignore_ascii_case(f)) {
                Some((_, v)) => parts.push(if hive { format!("{f}={v}") } else { v.clone() }),
                None => break,
            }
        }
        if parts.len() != values.len() {
            return Err(HoodieError::Unsupported {
                feature:
                    "static PARTITION values after a dynamic partition column in INSERT OVERWRITE"
                        .into(),
            });
        }
        Ok(Some((parts.join("/"), parts.len() == fields.len())))
    }

    /// Partition paths of the latest snapshot.
    pub async fn partitions(&self) -> Result<Vec<String>, HoodieError> {
        let timeline = self.table.timeline().await?;
        let mut parts: Vec<String> = self
            .table
            .file_slices(&timeline, None)
            .await?
            .into_iter()
            .map(|s| s.partition_path)
            .collect();
        parts.sort();
        parts.dedup();
        Ok(parts)
    }

    /// Keeps the slices whose partition values can satisfy the filters on partition columns.
    fn prune_partitions(
        &self,
        state: &dyn Session,
        slices: Vec<FileSlice>,
        filters: &[Expr],
    ) -> DFResult<Vec<FileSlice>> {
        let keygen = match KeyGenerator::from_config(self.table.config()) {
            Ok(k) if !k.partition_fields().is_empty() => k,
            _ => return Ok(slices),
        };
        let part_fields: Vec<Field> = keygen
            .partition_fields()
            .iter()
            .filter_map(|p| self.schema.field_with_name(p).ok().cloned())
            .collect();
        if part_fields.len() != keygen.partition_fields().len() {
            return Ok(slices);
        }
        let names: Vec<&str> = part_fields.iter().map(|f| f.name().as_str()).collect();
        let usable: Vec<Expr> = filters
            .iter()
            .filter(|f| {
                let refs = f.column_refs();
                !refs.is_empty() && refs.iter().all(|c| names.contains(&c.name.as_str()))
            })
            .cloned()
            .collect();
        let Some(pred) = conjunction(usable) else {
            return Ok(slices);
        };
        let mut paths: Vec<String> = slices.iter().map(|s| s.partition_path.clone()).collect();
        paths.sort();
        paths.dedup();
        let parsed: Vec<Option<Vec<Option<String>>>> = paths
            .iter()
            .map(|p| keygen.parse_partition_path(p))
            .collect();
        let schema = Arc::new(Schema::new(
            part_fields
                .iter()
                .map(|f| f.clone().with_nullable(true))
                .collect::<Vec<_>>(),
        ));
        let mut cols: Vec<ArrayRef> = Vec::new();
        for (i, f) in part_fields.iter().enumerate() {
            let strings: StringArray = parsed
                .iter()
                .map(|p| p.as_ref().and_then(|v| v[i].clone()))
                .collect();
            let arr: ArrayRef = Arc::new(strings);
            cols.push(cast(&arr, f.data_type()).unwrap_or_else(|_| {
                datafusion::arrow::array::new_null_array(f.data_type(), paths.len())
            }));
        }
        let batch = RecordBatch::try_new(schema.clone(), cols)?;
        let df_schema = DFSchema::try_from(schema.as_ref().clone())?;
        let phys = state.create_physical_expr(pred, &df_schema)?;
        let result = phys.evaluate(&batch)?.into_array(batch.num_rows())?;
        let keep = result.as_any().downcast_ref::<BooleanArray>().cloned();
        let Some(keep) = keep else { return Ok(slices) };
        let kept: std::collections::HashSet<&str> = paths
            .iter()
            .enumerate()
            // a path we could not parse is kept (never drop data we do not understand)
            .filter(|(i, _)| parsed[*i].is_none() || (keep.is_valid(*i) && keep.value(*i)))
            .map(|(_, p)| p.as_str())
            .collect();
        Ok(slices
            .into_iter()
            .filter(|s| kept.contains(s.partition_path.as_str()))
            .collect())
    }

    /// The scan of `slices`: DataFusion's parquet scan of the slices without logs (all of them
    /// in a read-optimized read), beside the merge of those with logs (as of `as_of`).
    #[allow(clippy::too_many_arguments)]
    fn plan_slices(
        &self,
        state: &dyn Session,
        timeline: &hoodie_format::timeline::Timeline,
        slices: Vec<FileSlice>,
        projection: Option<&Vec<usize>>,
        limit: Option<usize>,
        read_optimized: bool,
        as_of: Option<&str>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let dropped = self
            .dropped_partition_fields()
            .map_err(HoodieError::into_datafusion)?;
        // slices with log files are merged (a read-optimized read takes base files alone)
        let (merged, slices): (Vec<FileSlice>, Vec<FileSlice>) = if read_optimized {
            (Vec::new(), slices)
        } else {
            slices.into_iter().partition(|s| !s.log_files.is_empty())
        };
        let mut plans: Vec<Arc<dyn ExecutionPlan>> = Vec::new();
        if !merged.is_empty() {
            let names: Vec<String> = dropped.iter().map(|f| f.name().clone()).collect();
            let values = |p: &str| {
                self.partition_values(p, &dropped)
                    .map_err(HoodieError::into_datafusion)
            };
            let scan = crate::scan::MergeOnReadScan {
                table: &crate::scan::footers::with_session_footers(
                    &self.table,
                    state.runtime_env(),
                ),
                schema: &self.schema,
                timeline,
                as_of,
                projection,
                dropped: &names,
            };
            plans.push(crate::scan::merge_on_read_plan(
                scan,
                merged,
                &values,
                state.config().target_partitions(),
            )?);
        }
        let projected = match projection {
            Some(p) => Arc::new(self.schema.project(p)?),
            None => self.schema.clone(),
        };
        match self.parquet_scan(state, &slices, projection, limit, dropped)? {
            Some(scan) => plans.push(scan),
            None if plans.is_empty() => return Ok(Arc::new(EmptyExec::new(projected))),
            None => {}
        }
        if plans.len() == 1 {
            return Ok(plans.remove(0));
        }
        UnionExec::try_new(plans)
    }

    /// DataFusion's parquet scan of the base files of `slices` (`None`: they have none).
    fn parquet_scan(
        &self,
        state: &dyn Session,
        slices: &[FileSlice],
        projection: Option<&Vec<usize>>,
        limit: Option<usize>,
        dropped: Vec<datafusion::arrow::datatypes::FieldRef>,
    ) -> DFResult<Option<Arc<dyn ExecutionPlan>>> {
        let storage = self.table.storage();
        let mut files: Vec<PartitionedFile> = Vec::with_capacity(slices.len());
        for s in slices {
            let Some(b) = s.base_file.as_ref() else {
                continue;
            };
            // the store path itself: a path's text would be percent-encoded a second time
            let mut file = PartitionedFile::new_from_meta(crate::scan::footers::object_meta(
                storage.path(&b.rel_path),
                b.size,
            ));
            if !dropped.is_empty() {
                file.partition_values = self
                    .partition_values(&s.partition_path, &dropped)
                    .map_err(HoodieError::into_datafusion)?;
            }
            files.push(file);
        }
        if files.is_empty() {
            return Ok(None);
        }
        let n_groups = state.config().target_partitions().max(1).min(files.len());
        let mut groups: Vec<Vec<PartitionedFile>> = vec![Vec::new(); n_groups];
        for (i, f) in files.into_iter().enumerate() {
            groups[i % n_groups].push(f);
        }
        // filters are Inexact: DataFusion keeps a FilterExec above the scan and pushes the
        // predicate into the parquet source for row-group pruning (and, with the session's
        // `datafusion.execution.parquet.pushdown_filters`, for decoding only matching rows)
        let parquet = datafusion::config::TableParquetOptions {
            global: state.config_options().execution.parquet.clone(),
            ..Default::default()
        };
        // a table that drops its partition columns from the files gets them from the paths, as
        // DataFusion's partition columns (they are the table's last columns)
        let table_schema = if dropped.is_empty() {
            TableSchema::from(self.schema.clone())
        } else {
            let n = self.schema.fields().len() - dropped.len();
            TableSchema::builder(Arc::new(Schema::new(self.schema.fields()[..n].to_vec())))
                .with_table_partition_cols(dropped)
                .build()
        };
        // the scan reads through the table's own store, registered under its URL, and keeps
        // the footers it reads for the statement's write
        let url = ObjectStoreUrl::parse(storage.store_url())?;
        let runtime = state.runtime_env();
        let source = ParquetSource::new(table_schema)
            .with_table_parquet_options(parquet)
            .with_parquet_file_reader_factory(crate::scan::footers::reader_factory(
                storage, runtime,
            ));
        if runtime.object_store(&url).is_err() {
            runtime.register_object_store(url.as_ref(), storage.store().clone());
        }
        let config = FileScanConfigBuilder::new(url, Arc::new(source))
            .with_file_groups(groups.into_iter().map(FileGroup::new).collect())
            .with_projection_indices(projection.cloned())?
            .with_limit(limit)
            .build();
        Ok(Some(DataSourceExec::from_data_source(config)))
    }
    /// The scan of `timeline`'s files (see [`TableProvider::scan`]).
    async fn scan_files(
        &self,
        state: &dyn Session,
        timeline: &hoodie_format::timeline::Timeline,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let timeline = timeline.clone();
        let read = self
            .read_kind(&SessionOptions::of_session(state))
            .map_err(HoodieError::into_datafusion)?;
        let fallback_key = hoodie_format::config::INCR_FALLBACK_FULL_TABLE_SCAN;
        let fallback = match SessionOptions::of_session(state).get(fallback_key.key) {
            Some(v) => {
                fallback_key
                    .check(v)
                    .map_err(|e| df_err(FormatError::from(e)))?;
                v.trim().eq_ignore_ascii_case("true")
            }
            None => false,
        };
        let mut history =
            crate::scan::history::HistoryRead::resolve(&self.table, &timeline, &read, fallback)
                .await
                .map_err(df_err)?;
        let mut slices = self
            .table
            .file_slices(&timeline, history.as_of())
            .await
            .map_err(df_err)?;
        slices = history.keep_slices(slices);
        if let Some(window) = history.window() {
            match window.check_files(self.table.storage(), &slices).await {
                // Hudi's fallback when a window's files were cleaned: the latest snapshot
                Err(FormatError::IncrementalFilesCleaned { .. }) if fallback => {
                    let ReadKind::Incremental { begin, end } = &read else {
                        unreachable!("a window is an incremental read's")
                    };
                    history =
                        crate::scan::history::HistoryRead::full_table_scan(begin, end.as_deref());
                    slices = self
                        .table
                        .file_slices(&timeline, None)
                        .await
                        .map_err(df_err)?;
                }
                other => other.map_err(df_err)?,
            }
        }
        let slices = self.prune_partitions(state, slices, filters)?;
        let Some(window) = history.window() else {
            let read_optimized = read == ReadKind::ReadOptimized;
            return self.plan_slices(
                state,
                &timeline,
                slices,
                projection,
                limit,
                read_optimized,
                history.as_of(),
            );
        };
        let (inner, commit_time) =
            crate::scan::history::with_commit_time(&self.schema, projection)?;
        let plan = self.plan_slices(
            state,
            &timeline,
            slices,
            inner.as_ref(),
            None,
            false,
            history.as_of(),
        )?;
        crate::scan::history::filter_window(plan, window, commit_time, projection.map(Vec::len))
    }

    /// Marks `plan` (a scan of `timeline`) with the timeline it read, for the write it may
    /// feed.
    fn mark_read(
        &self,
        timeline: &hoodie_format::timeline::Timeline,
        plan: Arc<dyn ExecutionPlan>,
    ) -> Arc<dyn ExecutionPlan> {
        Arc::new(crate::scan::snapshot::SnapshotExec::new(
            plan,
            self.table.storage().location().to_string(),
            timeline.clone(),
        ))
    }
}

#[async_trait]
impl TableProvider for HudiTableProvider {
    fn schema(&self) -> SchemaRef {
        match self.changes() {
            Some(Ok(cdc)) => cdc.schema(),
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
        let plan = self
            .scan_files(state, &timeline, projection, filters, limit)
            .await?;
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

/// The schema a change set is written with: the plan's columns, each as nullable as the table
/// declares it (the plan's nullability describes only the changed rows: a `SET qty = 5` column
/// is non-null there, while the file group it is written into holds NULLs in `qty`).
fn change_set_schema(plan: &SchemaRef, table: &SchemaRef) -> SchemaRef {
    let fields: Vec<Field> = plan
        .fields()
        .iter()
        .map(|f| {
            let nullable = table
                .field_with_name(f.name())
                .map_or(true, |t| t.is_nullable());
            f.as_ref().clone().with_nullable(nullable)
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, plan.metadata().clone()))
}
