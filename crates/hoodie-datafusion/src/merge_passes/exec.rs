//! [`MergePassesExec`]: runs the passes of a MERGE's join one after another as one stream.

use std::fmt;
use std::sync::Arc;

use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::{DataFusionError, Result as DFResult};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, ExecutionPlanProperties,
    PlanProperties,
};
use futures::{StreamExt, TryStreamExt};

use super::size::auto_passes;
use super::spill::read_source;
use super::PassPlanner;

/// How many passes a MERGE read at run time takes.
#[derive(Debug, Clone, Copy)]
pub enum PassCount {
    /// As many as the measured source needs under a pool of this many bytes.
    Auto {
        /// The memory pool's size.
        limit: usize,
    },
    /// This many.
    Fixed(u32),
}

/// Which passes run.
#[derive(Debug, Clone)]
enum Passes {
    /// The change set in one pass, planned already.
    One(Arc<dyn ExecutionPlan>),
    /// Decided when it runs: `source` is read once (measured, and kept for the passes to read),
    /// then the passes `planner` plans run. `one`, the change set in one pass, is what EXPLAIN
    /// shows of them.
    Run {
        one: Arc<dyn ExecutionPlan>,
        source: Arc<dyn ExecutionPlan>,
        planner: Arc<PassPlanner>,
        count: PassCount,
    },
}

/// The change set of a MERGE, from its passes ([`crate::merge_passes`]) one after another:
/// pass `i + 1` starts (and its join builds its hash table) only when pass `i` has ended and
/// freed its memory. One output partition, fed to the one sink. Its metrics give the number of
/// passes, the bytes measured of the source and how many times the source was computed (1 when
/// the passes read the kept copy).
#[derive(Debug)]
pub struct MergePassesExec {
    passes: Passes,
    /// Whether the table has a record key (passes can be added).
    keyed: bool,
    cache: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl MergePassesExec {
    /// Runs `plan`, the change set in one pass.
    pub fn one(plan: Arc<dyn ExecutionPlan>, keyed: bool) -> Self {
        Self::new(Passes::One(plan), keyed)
    }

    /// Reads `source` once when it runs, then runs the passes `planner` plans (`count` of them,
    /// or for `auto` as many as the source's size needs); `one` is the plan of one pass.
    pub fn passes(
        one: Arc<dyn ExecutionPlan>,
        source: Arc<dyn ExecutionPlan>,
        planner: Arc<PassPlanner>,
        count: PassCount,
    ) -> Self {
        Self::new(
            Passes::Run {
                one,
                source,
                planner,
                count,
            },
            true,
        )
    }

    fn new(passes: Passes, keyed: bool) -> Self {
        let schema = match &passes {
            Passes::One(one) | Passes::Run { one, .. } => one.schema(),
        };
        let cache = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(schema),
            Partitioning::UnknownPartitioning(1),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Self {
            passes,
            keyed,
            cache,
            metrics: ExecutionPlanMetricsSet::new(),
        }
    }
}

impl DisplayAs for MergePassesExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.passes {
            Passes::One(_) => write!(f, "HudiMergePasses: passes=1"),
            Passes::Run {
                count: PassCount::Fixed(n),
                ..
            } => write!(
                f,
                "HudiMergePasses: passes={n}, one after another over the source read once (the plan of one pass, then the source's)"
            ),
            Passes::Run {
                count: PassCount::Auto { limit },
                ..
            } => write!(
                f,
                "HudiMergePasses: passes=auto, one after another over the source read once and measured (twice a pass's share must fit a quarter of the {limit}-byte pool; the plan of one pass, then the source's)"
            ),
        }
    }
}

/// An out-of-memory error of a pass, with what to do about it.
fn with_advice(e: DataFusionError, passes: usize, keyed: bool) -> DataFusionError {
    let DataFusionError::ResourcesExhausted(message) = e.find_root() else {
        return e;
    };
    let advice = if keyed {
        format!("MERGE INTO ran its join in {passes} pass(es) and one did not fit the memory pool; each further pass holds less of the source at once: SET hoodie.merge.join.passes = {} (or raise the memory limit)", passes * 2)
    } else {
        "MERGE INTO on a table without a record key runs its join in one pass, which did not fit the memory pool: raise the memory limit".to_string()
    };
    DataFusionError::ResourcesExhausted(format!("{message}\n{advice}"))
}

/// The rows of `passes`, one pass after another. A pass is executed (its tasks spawned) only
/// when the stream before it has ended: `try_flatten` asks for the next inner stream once the
/// current one is exhausted.
fn in_turn(
    passes: Vec<Arc<dyn ExecutionPlan>>,
    context: Arc<TaskContext>,
    keyed: bool,
) -> impl futures::Stream<Item = DFResult<datafusion::arrow::array::RecordBatch>> + Send {
    let count = passes.len();
    futures::stream::iter(passes)
        .map(move |pass| single(pass).execute(0, context.clone()))
        .try_flatten()
        .map_err(move |e| with_advice(e, count, keyed))
}

fn single(plan: Arc<dyn ExecutionPlan>) -> Arc<dyn ExecutionPlan> {
    if plan.output_partitioning().partition_count() > 1 {
        Arc::new(CoalescePartitionsExec::new(plan))
    } else {
        plan
    }
}

impl ExecutionPlan for MergePassesExec {
    fn name(&self) -> &'static str {
        "MergePassesExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.cache
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        match &self.passes {
            Passes::One(one) => vec![one],
            Passes::Run { one, source, .. } => vec![one, source],
        }
    }

    fn required_input_distribution(&self) -> Vec<Distribution> {
        vec![Distribution::SinglePartition; self.children().len()]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false; self.children().len()]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DFResult<TreeNodeRecursion>,
    ) -> DFResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        if children.len() != self.children().len() || children.is_empty() {
            return Err(DataFusionError::Internal(format!(
                "MergePassesExec has {} children, got {}",
                self.children().len(),
                children.len()
            )));
        }
        let passes = match &self.passes {
            Passes::One(_) => Passes::One(children.swap_remove(0)),
            Passes::Run { planner, count, .. } => {
                let source = children.pop().expect("two children");
                let one = children.pop().expect("two children");
                Passes::Run {
                    one,
                    source,
                    planner: planner.clone(),
                    count: *count,
                }
            }
        };
        Ok(Arc::new(Self::new(passes, self.keyed)))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DFResult<SendableRecordBatchStream> {
        if partition != 0 {
            return Err(DataFusionError::Internal(format!(
                "MergePassesExec has one partition, asked for {partition}"
            )));
        }
        let keyed = self.keyed;
        let passes_metric = MetricBuilder::new(&self.metrics).counter("passes", 0);
        let schema = self.schema();
        match self.passes.clone() {
            Passes::One(one) => {
                passes_metric.add(1);
                let rows = in_turn(vec![one], context, keyed);
                Ok(Box::pin(RecordBatchStreamAdapter::new(schema, rows)))
            }
            Passes::Run {
                source,
                planner,
                count,
                ..
            } => {
                let measured = MetricBuilder::new(&self.metrics).gauge("source_bytes", 0);
                let source_reads = MetricBuilder::new(&self.metrics).counter("source_reads", 0);
                let rows = futures::stream::once(async move {
                    let (bytes, kept) = read_source(single(source), context.clone()).await?;
                    measured.set(bytes);
                    let count = match count {
                        PassCount::Auto { limit } => auto_passes(limit, bytes),
                        PassCount::Fixed(n) => n,
                    };
                    let (passes, reads_kept) = planner.plan(count, Some(&kept)).await?;
                    passes_metric.add(passes.len());
                    source_reads.add(if reads_kept { 1 } else { 1 + passes.len() });
                    // the kept source lives until the last pass has read it
                    let rows = in_turn(passes, context, keyed).map(move |r| {
                        let _ = &kept;
                        r
                    });
                    Ok::<_, DataFusionError>(rows)
                })
                .try_flatten();
                Ok(Box::pin(RecordBatchStreamAdapter::new(schema, rows)))
            }
        }
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }
}
