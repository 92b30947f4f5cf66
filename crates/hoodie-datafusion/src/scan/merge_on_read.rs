//! The snapshot read of merge-on-read file slices that have log files, as a DataFusion plan:
//! each slice read by hoodie-format's [`SliceReader`], the bytes its logs hold reserved in the
//! session's memory pool while its rows flow.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, RecordBatch};
use datafusion::arrow::compute::concat;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::{DataFusionError, Result as DFResult};
use datafusion::execution::memory_pool::{MemoryConsumer, MemoryReservation};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{
    Count, ExecutionPlanMetricsSet, MetricBuilder, MetricsSet,
};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use hoodie_format::fs_view::FileSlice;
use hoodie_format::read::SliceReader;
use hoodie_format::storage::TableStorage;
use hoodie_format::wire::{Chunks, Frames};

use crate::error::df_err;

/// One slice to merge, with the values (arrays of one element) of the partition columns its
/// files leave out.
#[derive(Debug, Clone)]
pub(crate) struct SliceJob {
    pub slice: FileSlice,
    pub partition_values: Vec<ArrayRef>,
}

/// Reads merge-on-read slices with log files, the slices spread over its partitions.
#[derive(Debug)]
pub struct MergeOnReadExec {
    reader: Arc<SliceReader>,
    groups: Vec<Vec<SliceJob>>,
    cache: Arc<PlanProperties>,
    /// `slices_by_position` and `slices_by_key`: how the slices' logs met their base files.
    metrics: ExecutionPlanMetricsSet,
}

impl MergeOnReadExec {
    pub(crate) fn new(reader: SliceReader, jobs: Vec<SliceJob>, partitions: usize) -> Self {
        let n = partitions.max(1).min(jobs.len().max(1));
        let mut groups: Vec<Vec<SliceJob>> = vec![Vec::new(); n];
        for (i, j) in jobs.into_iter().enumerate() {
            groups[i % n].push(j);
        }
        Self::of_groups(Arc::new(reader), groups)
    }

    /// The node reading `groups[p]` in partition `p`.
    fn of_groups(reader: Arc<SliceReader>, groups: Vec<Vec<SliceJob>>) -> Self {
        let cache = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(reader.output_schema().clone()),
            Partitioning::UnknownPartitioning(groups.len().max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Self {
            reader,
            groups,
            cache,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }

    /// The location of the table the node reads.
    pub fn location(&self) -> &str {
        self.reader.location()
    }

    /// The number of slices the node reads.
    pub fn slice_count(&self) -> usize {
        self.groups.iter().map(Vec::len).sum()
    }

    /// The bytes of the base files the node reads, a log-only slice counting one: how much a
    /// scan has to share among workers.
    pub fn base_bytes(&self) -> u64 {
        let size = |j: &SliceJob| j.slice.base_file.as_ref().map_or(1, |b| b.size.max(1));
        self.groups.iter().flatten().map(size).sum()
    }

    /// The node split into `tasks` nodes of as many partitions as it has, which together read
    /// each of its slices once (for workers that each run one of them).
    pub fn split(&self, tasks: usize) -> Vec<MergeOnReadExec> {
        let (tasks, partitions) = (tasks.max(1), self.groups.len().max(1));
        let mut split = vec![vec![Vec::new(); partitions]; tasks];
        let jobs = self.groups.iter().flatten().cloned();
        for (i, job) in jobs.enumerate() {
            let slot = i % (tasks * partitions);
            split[slot % tasks][slot / tasks].push(job);
        }
        let reader = &self.reader;
        (split.into_iter())
            .map(|groups| Self::of_groups(reader.clone(), groups))
            .collect()
    }

    /// The node as bytes, for a worker in another process ([`MergeOnReadExec::from_bytes`]):
    /// its reader, the slices of each partition and, when the files leave partition columns
    /// out, their values.
    pub fn to_bytes(&self) -> DFResult<Vec<u8>> {
        let mut frames = Frames::new(WHAT);
        frames.bytes(&self.reader.to_bytes().map_err(df_err)?);
        let slices: Vec<Vec<&FileSlice>> = self
            .groups
            .iter()
            .map(|g| g.iter().map(|j| &j.slice).collect())
            .collect();
        frames.json(&slices).map_err(df_err)?;
        if self.reader.needs_partition_values() {
            for group in self.groups.iter().filter(|g| !g.is_empty()) {
                frames.batch(&values_batch(group)?).map_err(df_err)?;
            }
        }
        Ok(frames.into_bytes())
    }

    /// The node of [`MergeOnReadExec::to_bytes`], reading the table's files from the storage
    /// `open` gives for its location.
    pub fn from_bytes(
        bytes: &[u8],
        open: impl FnOnce(&str) -> hoodie_format::Result<TableStorage>,
    ) -> DFResult<Self> {
        let mut chunks = Chunks::new(WHAT, bytes);
        let reader =
            SliceReader::from_bytes(chunks.bytes().map_err(df_err)?, open).map_err(df_err)?;
        let slices: Vec<Vec<FileSlice>> = chunks.json().map_err(df_err)?;
        let mut groups = Vec::with_capacity(slices.len());
        for group in slices {
            let values = match reader.needs_partition_values() && !group.is_empty() {
                true => Some(chunks.batch().map_err(df_err)?),
                false => None,
            };
            if values.as_ref().is_some_and(|v| v.num_rows() != group.len()) {
                return Err(df_err(chunks.corrupt("partition values of other slices")));
            }
            let jobs = group.into_iter().enumerate().map(|(i, slice)| SliceJob {
                slice,
                partition_values: values
                    .iter()
                    .flat_map(|v| v.columns().iter().map(move |c| c.slice(i, 1)))
                    .collect(),
            });
            groups.push(jobs.collect());
        }
        Ok(Self::of_groups(Arc::new(reader), groups))
    }
}

/// What the errors call the node's bytes.
const WHAT: &str = "merge-on-read scan";

/// The partition values of `jobs`, a row each, a column per value.
fn values_batch(jobs: &[SliceJob]) -> DFResult<RecordBatch> {
    let width = jobs.first().map_or(0, |j| j.partition_values.len());
    let mut columns = Vec::with_capacity(width);
    for c in 0..width {
        let values: Vec<&dyn Array> = jobs
            .iter()
            .map(|j| j.partition_values.get(c).map(|v| v.as_ref()))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                DataFusionError::Internal("slices with unequal partition values".into())
            })?;
        columns.push((c.to_string(), concat(&values)?));
    }
    Ok(RecordBatch::try_from_iter(columns)?)
}
impl DisplayAs for MergeOnReadExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HudiMergeOnReadExec: file_slices={}", self.slice_count())
    }
}

impl ExecutionPlan for MergeOnReadExec {
    fn name(&self) -> &'static str {
        "HudiMergeOnReadExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.cache
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DFResult<TreeNodeRecursion>,
    ) -> DFResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        if !children.is_empty() {
            return Err(DataFusionError::Internal(
                "HudiMergeOnReadExec has no children".into(),
            ));
        }
        Ok(self)
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DFResult<SendableRecordBatchStream> {
        let jobs = self.groups.get(partition).cloned().unwrap_or_default();
        let reader = self.reader.clone();
        let pool = context.memory_pool().clone();
        let merged = Merged {
            by_position: MetricBuilder::new(&self.metrics).counter("slices_by_position", partition),
            by_key: MetricBuilder::new(&self.metrics).counter("slices_by_key", partition),
        };
        let rows = stream::iter(jobs)
            .map(move |job| {
                let reservation = MemoryConsumer::new(format!("hoodie merge-on-read[{partition}]"))
                    .register(&pool);
                slice_stream(reader.clone(), job, reservation, merged.clone())
            })
            .flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.reader.output_schema().clone(),
            rows,
        )))
    }
}

/// The counts of slices merged by record position and by key.
#[derive(Clone)]
struct Merged {
    by_position: Count,
    by_key: Count,
}

/// The merged rows of one slice, the bytes its logs hold reserved while they flow.
fn slice_stream(
    reader: Arc<SliceReader>,
    job: SliceJob,
    reservation: MemoryReservation,
    merged: Merged,
) -> BoxStream<'static, DFResult<RecordBatch>> {
    let open = async move {
        let opened = reader
            .open(&job.slice, job.partition_values)
            .await
            .map_err(df_err)?;
        match opened.by_position {
            true => merged.by_position.add(1),
            false => merged.by_key.add(1),
        }
        reservation.try_grow(opened.memory_size)?;
        // the reservation lives as long as the rows do
        let rows = opened.rows.map(move |b| {
            let _held = &reservation;
            b.map_err(df_err)
        });
        Ok::<_, DataFusionError>(rows)
    };
    stream::once(open).try_flatten().boxed()
}
