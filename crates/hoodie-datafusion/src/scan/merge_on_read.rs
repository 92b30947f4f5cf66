//! The snapshot read of merge-on-read file slices that have log files, as a DataFusion plan:
//! each slice read by hoodie-format's [`SliceReader`], the bytes its logs hold reserved in the
//! session's memory pool while its rows flow.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, RecordBatch};
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
        let cache = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(reader.output_schema().clone()),
            Partitioning::UnknownPartitioning(n),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Self {
            reader: Arc::new(reader),
            groups,
            cache,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }
}
impl DisplayAs for MergeOnReadExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let slices: usize = self.groups.iter().map(Vec::len).sum();
        write!(f, "HudiMergeOnReadExec: file_slices={slices}")
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
