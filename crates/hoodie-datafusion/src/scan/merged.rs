//! The snapshot read of merge-on-read file slices that have log files: each slice's base file
//! streamed batch by batch through the merge with its logs (read once per slice, held in the
//! memory pool), then the logged records no base record held.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::{RecordBatch, RecordBatchOptions};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::ScalarValue;
use datafusion::error::{DataFusionError, Result as DFResult};
use datafusion::execution::memory_pool::{MemoryConsumer, MemoryReservation};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use hoodie_format::fs_view::FileSlice;
use hoodie_format::log::base_ordering::unneeded_base_ordering;
use hoodie_format::log::keys::KeySource;
use hoodie_format::log::merge::{LogMerger, MergeRules};
use hoodie_format::log::read::{read_slice_logs, Admission};
use hoodie_format::storage::TableStorage;
use hoodie_format::FormatError;

use crate::error::df_err;

/// What every slice of one merge-on-read scan shares.
#[derive(Debug)]
pub(crate) struct MergeScan {
    /// The table's store.
    pub storage: TableStorage,
    /// Which log blocks are read.
    pub admission: Admission,
    /// The columns the merge reads: the query's plus the key, ordering and delete columns.
    pub working: SchemaRef,
    /// The query's columns, as positions in `working`.
    pub output: Vec<usize>,
    /// The scan's schema.
    pub out_schema: SchemaRef,
    /// The table's merge rules over `working`.
    pub rules: MergeRules,
    /// Where record keys come from.
    pub keys: KeySource,
    /// Partition columns the files leave out, as positions in `working`.
    pub dropped: Vec<usize>,
}

/// One slice to merge, with the values of the partition columns its files leave out.
#[derive(Debug, Clone)]
pub(crate) struct SliceJob {
    pub slice: FileSlice,
    pub partition_values: Vec<ScalarValue>,
}

/// Reads merge-on-read slices with log files, the slices spread over its partitions.
#[derive(Debug)]
pub struct MergedSliceExec {
    scan: Arc<MergeScan>,
    groups: Vec<Vec<SliceJob>>,
    cache: Arc<PlanProperties>,
}

impl MergedSliceExec {
    pub(crate) fn new(scan: MergeScan, jobs: Vec<SliceJob>, partitions: usize) -> Self {
        let n = partitions.max(1).min(jobs.len().max(1));
        let mut groups: Vec<Vec<SliceJob>> = vec![Vec::new(); n];
        for (i, j) in jobs.into_iter().enumerate() {
            groups[i % n].push(j);
        }
        let cache = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(scan.out_schema.clone()),
            Partitioning::UnknownPartitioning(n),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Self {
            scan: Arc::new(scan),
            groups,
            cache,
        }
    }
}

impl DisplayAs for MergedSliceExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let slices: usize = self.groups.iter().map(Vec::len).sum();
        write!(f, "HudiMergeOnReadExec: file_slices={slices}")
    }
}

impl ExecutionPlan for MergedSliceExec {
    fn name(&self) -> &'static str {
        "HudiMergeOnReadExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.cache
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
        let scan = self.scan.clone();
        let pool = context.memory_pool().clone();
        let rows = stream::iter(jobs)
            .map(move |job| {
                let reservation = MemoryConsumer::new(format!("hoodie merge-on-read[{partition}]"))
                    .register(&pool);
                slice_stream(scan.clone(), job, reservation)
            })
            .flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.scan.out_schema.clone(),
            rows,
        )))
    }
}

/// The merged rows of one slice.
fn slice_stream(
    scan: Arc<MergeScan>,
    job: SliceJob,
    reservation: MemoryReservation,
) -> BoxStream<'static, DFResult<RecordBatch>> {
    stream::once(open_slice(scan, job, reservation))
        .try_flatten()
        .boxed()
}

enum Phase {
    Base(BoxStream<'static, hoodie_format::Result<RecordBatch>>),
    Rest,
    Done,
}

async fn open_slice(
    scan: Arc<MergeScan>,
    job: SliceJob,
    reservation: MemoryReservation,
) -> DFResult<BoxStream<'static, DFResult<RecordBatch>>> {
    let gate = scan.clone();
    let admits = move |i: &str| gate.admission.admits(i);
    let logs = read_slice_logs(&scan.storage, &job.slice.log_files, &admits, &scan.working)
        .await
        .map_err(df_err)?;
    let merger = LogMerger::new(&scan.working, logs.contents, &scan.keys, scan.rules.clone())
        .map_err(df_err)?;
    reservation.try_grow(merger.memory_size())?;
    let phase = match &job.slice.base_file {
        Some(b) => {
            let dropped: Vec<String> = scan
                .dropped
                .iter()
                .map(|&i| scan.working.field(i).name().clone())
                .collect();
            // the query's columns are read whatever the merge needs
            let ordering_wanted = scan
                .rules
                .ordering
                .as_ref()
                .is_some_and(|p| scan.output.contains(&p.top()));
            let (s, _) = hoodie_format::base_file::stream_base_file_without(
                &scan.storage,
                &b.rel_path,
                &scan.working,
                &dropped,
                |footer| {
                    (!ordering_wanted)
                        .then(|| unneeded_base_ordering(&merger, &scan.working, footer))
                        .flatten()
                },
            )
            .await
            .map_err(df_err)?;
            Phase::Base(s.boxed())
        }
        None => Phase::Rest,
    };
    let projection = scan.clone();
    let out = stream::unfold(
        (merger, phase, reservation),
        move |(mut merger, phase, reservation)| {
            let (scan, job) = (scan.clone(), job.clone());
            async move {
                let (item, next) = match phase {
                    Phase::Base(mut s) => match s.next().await {
                        Some(Ok(b)) => {
                            let merged = fill_dropped(&scan, &job, b)
                                .and_then(|b| merger.merge_base(&b))
                                .map_err(df_err);
                            (Some(merged), Phase::Base(s))
                        }
                        Some(Err(e)) => (Some(Err(df_err(e))), Phase::Done),
                        None => (None, Phase::Rest),
                    },
                    Phase::Rest => (merger.remaining().map_err(df_err).transpose(), Phase::Done),
                    Phase::Done => return None,
                };
                Some((item, (merger, next, reservation)))
            }
        },
    )
    .filter_map(|item| async move { item })
    .map(move |b| b.and_then(|b| project(&projection, &b)));
    Ok(out.boxed())
}

/// Puts the partition values of the columns the files leave out into a base batch.
fn fill_dropped(
    scan: &MergeScan,
    job: &SliceJob,
    b: RecordBatch,
) -> hoodie_format::Result<RecordBatch> {
    if scan.dropped.is_empty() {
        return Ok(b);
    }
    let mut cols = b.columns().to_vec();
    for (&i, v) in scan.dropped.iter().zip(&job.partition_values) {
        cols[i] = v
            .to_array_of_size(b.num_rows())
            .map_err(|e| FormatError::Corrupt {
                path: job.slice.partition_path.clone(),
                reason: e.to_string(),
            })?;
    }
    Ok(RecordBatch::try_new(b.schema(), cols)?)
}

/// The query's columns of a merged batch.
fn project(scan: &MergeScan, b: &RecordBatch) -> DFResult<RecordBatch> {
    let cols = scan.output.iter().map(|&i| b.column(i).clone()).collect();
    Ok(RecordBatch::try_new_with_options(
        scan.out_schema.clone(),
        cols,
        &RecordBatchOptions::new().with_row_count(Some(b.num_rows())),
    )?)
}
