//! The read side of [`HudiTableProvider`]: the file slices a scan reads, pruned by partition,
//! as DataFusion's parquet scan for base files and a merge-on-read plan for slices with logs.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder, ParquetSource};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::error::Result as DFResult;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::union::UnionExec;
use datafusion::physical_plan::ExecutionPlan;
use hoodie_format::fs_view::FileSlice;
use hoodie_format::keygen::KeyGenerator;

use crate::error::{df_err, HoodieError, PartitionError};
use crate::options::write::SessionOptions;
use crate::scan::read_kind::ReadKind;

use hoodie_format::FormatError;

use super::HudiTableProvider;

/// What a scan of file slices gives.
#[derive(Clone, Copy)]
pub(super) struct Wanted<'a> {
    /// The table's columns it projects (all: `None`).
    pub projection: Option<&'a Vec<usize>>,
    /// The rows it may stop after.
    pub limit: Option<usize>,
    /// Where in its output each row's row in its base file goes
    /// ([`HudiTableProvider::with_base_rows`]), if it is wanted.
    pub base_row: Option<usize>,
}

impl Wanted<'_> {
    /// The schema of the rows of `schema` (the table's) it gives.
    fn schema(&self, schema: &SchemaRef) -> DFResult<SchemaRef> {
        let projected = match self.projection {
            Some(p) => schema.project(p)?,
            None => schema.as_ref().clone(),
        };
        let Some(at) = self.base_row else {
            return Ok(Arc::new(projected));
        };
        let mut fields = projected.fields().to_vec();
        fields.insert(at, super::base_row_field());
        Ok(Arc::new(Schema::new_with_metadata(
            fields,
            projected.metadata().clone(),
        )))
    }
}

impl HudiTableProvider {
    /// The partition columns the data files leave out (`drop.partition.columns`), as the last
    /// fields of the table schema, in order.
    pub(super) fn dropped_partition_fields(
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
    pub(super) fn partition_values(
        &self,
        partition_path: &str,
        fields: &[datafusion::arrow::datatypes::FieldRef],
    ) -> Result<Vec<ScalarValue>, HoodieError> {
        let keygen = KeyGenerator::from_config(self.table.config())?;
        let values = keygen.parse_partition_path(partition_path).ok_or_else(|| {
            HoodieError::from(PartitionError::PathUnreadable {
                path: partition_path.to_string(),
                table: self.name.clone(),
            })
        })?;
        values
            .into_iter()
            .zip(fields)
            .map(|(v, f)| Ok(ScalarValue::Utf8(v).cast_to(f.data_type())?))
            .collect()
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
    pub(super) fn prune_partitions(
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
    pub(super) fn plan_slices(
        &self,
        state: &dyn Session,
        timeline: &hoodie_format::timeline::Timeline,
        slices: Vec<FileSlice>,
        wanted: Wanted<'_>,
        read_optimized: bool,
        as_of: Option<&str>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let projection = wanted.projection;
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
                use_positions: use_record_positions(state)?,
                base_row: wanted.base_row.map(|at| (at, super::base_row_field())),
            };
            plans.push(crate::scan::merge_on_read_plan(
                scan,
                merged,
                &values,
                state.config().target_partitions(),
            )?);
        }
        match self.parquet_scan(state, &slices, wanted, dropped)? {
            Some(scan) => plans.push(scan),
            None if plans.is_empty() => {
                return Ok(Arc::new(EmptyExec::new(wanted.schema(&self.schema)?)))
            }
            None => {}
        }
        if plans.len() == 1 {
            return Ok(plans.remove(0));
        }
        UnionExec::try_new(plans)
    }

    /// DataFusion's parquet scan of the base files of `slices` (`None`: they have none); the
    /// base rows, when wanted, are the parquet reader's row numbers.
    pub(super) fn parquet_scan(
        &self,
        state: &dyn Session,
        slices: &[FileSlice],
        wanted: Wanted<'_>,
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
        let n = self.schema.fields().len() - dropped.len();
        let mut table_schema = TableSchema::builder(Arc::new(Schema::new_with_metadata(
            self.schema.fields()[..n].to_vec(),
            self.schema.metadata().clone(),
        )))
        .with_table_partition_cols(dropped);
        // the row number is the last column of the scan's schema: the projection names it
        // where the base rows go in the output
        let mut projection = wanted.projection.cloned();
        if let Some(at) = wanted.base_row {
            table_schema = table_schema.with_virtual_columns(vec![super::base_row_field()]);
            let all = || (0..self.schema.fields().len()).collect();
            projection
                .get_or_insert_with(all)
                .insert(at, self.schema.fields().len());
        }
        let table_schema = table_schema.build();
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
            .with_projection_indices(projection)?
            .with_limit(wanted.limit)
            .build();
        Ok(Some(DataSourceExec::from_data_source(config)))
    }
    /// The scan of `timeline`'s files (see [`TableProvider::scan`]).
    pub(super) async fn scan_files(
        &self,
        state: &dyn Session,
        timeline: &hoodie_format::timeline::Timeline,
        wanted: Wanted<'_>,
        filters: &[Expr],
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let projection = wanted.projection;
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
            let table_version = self.table.config().version().map_err(df_err)?;
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
                // Hudi 1.x's reader of versions 8 and 9 reads the slices as of the window's
                // end that are still there and fails on none (only its fallback looks at the
                // files the commits wrote); version 6's fails, as Hudi 0.x's does
                Err(FormatError::IncrementalFilesCleaned { .. }) if table_version >= 8 => {}
                other => other.map_err(df_err)?,
            }
        }
        let slices = self.prune_partitions(state, slices, filters)?;
        // base rows count rows of the latest base files, which a statement writes against (the
        // DML rule refuses the other reads before it plans a scan)
        if wanted.base_row.is_some() && (history.window().is_some() || history.as_of().is_some()) {
            return Err(HoodieError::Unsupported {
                feature: "base-file rows of a time-travel or incremental read".into(),
            }
            .into_datafusion());
        }
        let plan = match history.window() {
            None => {
                let read_optimized = read == ReadKind::ReadOptimized;
                let as_of = history.as_of();
                self.plan_slices(state, &timeline, slices, wanted, read_optimized, as_of)?
            }
            Some(window) => {
                let (inner, commit_time) =
                    crate::scan::history::with_commit_time(&self.schema, projection)?;
                let inner = Wanted {
                    projection: inner.as_ref(),
                    limit: None,
                    base_row: None,
                };
                let plan =
                    self.plan_slices(state, &timeline, slices, inner, false, history.as_of())?;
                let keep = projection.map(Vec::len);
                crate::scan::history::filter_window(plan, window, commit_time, keep)?
            }
        };
        Ok(plan)
    }

    /// Marks `plan` (a scan of `timeline`) with the timeline it read, for the write it may
    /// feed.
    pub(super) fn mark_read(
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

/// Whether the session lets merge-on-read slices merge by record position
/// (`hoodie.merge.use.record.positions`, default true); a bad value is an error.
fn use_record_positions(state: &dyn Session) -> DFResult<bool> {
    let key = &hoodie_format::config::MERGE_USE_RECORD_POSITIONS;
    let session = SessionOptions::of_session(state);
    let value = key.resolve(|k| session.get(k)).unwrap_or("true");
    key.check(value)
        .map_err(|e| HoodieError::from(e).into_datafusion())?;
    Ok(value.trim().eq_ignore_ascii_case("true"))
}
