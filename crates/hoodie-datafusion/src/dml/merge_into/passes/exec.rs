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

use datafusion::execution::session_state::SessionState;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_planner::{ExtensionPlanner, PhysicalPlanner};

use super::kept::KeptSourceExec;
use super::size::auto_passes;
use super::spill::read_source;
use super::{Pass, PassPlan};
use crate::dml::merge_into::source_keys::SourceKeys;

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
    /// Decided when it runs: the source (the input of the plan's [`KeptSourceExec`]) is read
    /// once, measured and kept, then the passes run, `passes.selector` set to each: the first
    /// with `plan`, later ones with a fresh physical plan from `replan`.
    Run {
        plan: Arc<dyn ExecutionPlan>,
        passes: PassPlan,
        count: PassCount,
        replan: Arc<Replanner>,
    },
}

/// The change set of a MERGE, from its passes ([`crate::dml::merge_into::passes`]) one after another:
/// pass `i + 1` starts (and its join builds its hash table) only when pass `i` has ended and
/// freed its memory. One output partition, fed to the one sink. Its metrics give the number of
/// passes, the bytes measured of the source and how many times the source was computed (1 when
/// the passes read the kept copy).
#[derive(Debug)]
pub struct MergePassesExec {
    passes: Passes,
    /// Whether the table has a record key (passes can be added).
    keyed: bool,
    /// The keys the plan notes of its source, begun afresh before each pass.
    source_keys: Option<SourceKeys>,
    cache: Arc<PlanProperties>,
    metrics: ExecutionPlanMetricsSet,
}

impl MergePassesExec {
    /// Runs `plan`, the change set in one pass.
    pub fn one(plan: Arc<dyn ExecutionPlan>, keyed: bool, source_keys: Option<SourceKeys>) -> Self {
        Self::new(Passes::One(plan), keyed, source_keys)
    }

    /// Reads the source of `plan` once when it runs, then runs `plan` once per pass (`count`
    /// of them, or for `auto` as many as the source's size needs).
    pub fn passes(
        plan: Arc<dyn ExecutionPlan>,
        passes: PassPlan,
        count: PassCount,
        replan: Replanner,
        source_keys: Option<SourceKeys>,
    ) -> Self {
        Self::new(
            Passes::Run {
                plan,
                passes,
                count,
                replan: Arc::new(replan),
            },
            true,
            source_keys,
        )
    }

    fn new(passes: Passes, keyed: bool, source_keys: Option<SourceKeys>) -> Self {
        let schema = match &passes {
            Passes::One(plan) | Passes::Run { plan, .. } => plan.schema(),
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
            source_keys,
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
                "HudiMergePasses: passes={n}, one after another over the source read once"
            ),
            Passes::Run {
                count: PassCount::Auto { limit },
                ..
            } => write!(
                f,
                "HudiMergePasses: passes=auto, one after another over the source read once and measured (twice a pass's share must fit a quarter of the {limit}-byte pool)"
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

/// The physical plan of a pass after the first: the MERGE's one (optimized) logical
/// change-set plan planned afresh, because DataFusion's joins keep run state that resetting
/// the physical plan does not clear everywhere (the dynamic filter a hash join pushed into the
/// scan it probes keeps the first pass's build side).
pub struct Replanner {
    logical: LogicalPlan,
    state: SessionState,
    extension: Arc<dyn ExtensionPlanner + Send + Sync>,
}

impl fmt::Debug for Replanner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Replanner")
    }
}

impl Replanner {
    /// Plans `logical` (optimized already) in `state`, its hoodie nodes with `extension`.
    pub fn new(
        logical: LogicalPlan,
        state: SessionState,
        extension: Arc<dyn ExtensionPlanner + Send + Sync>,
    ) -> Self {
        Self {
            logical,
            state,
            extension,
        }
    }

    async fn plan(&self) -> DFResult<Arc<dyn ExecutionPlan>> {
        let planner =
            datafusion::physical_planner::DefaultPhysicalPlanner::with_extension_planners(vec![
                self.extension.clone(),
            ]);
        planner
            .create_physical_plan(&self.logical, &self.state)
            .await
    }
}

/// The rows of the passes of `count`, one pass after another: the first runs `first`, the
/// others a fresh plan from `replan`; `set` is told each pass before it runs. A pass is
/// executed (its tasks spawned) only when the stream before it has ended: `try_flatten` asks
/// for the next inner stream once the current one is exhausted.
fn in_turn(
    first: Arc<dyn ExecutionPlan>,
    count: u32,
    replan: Option<Arc<Replanner>>,
    set: impl Fn(Pass) + Send + Sync + 'static,
    context: Arc<TaskContext>,
    keyed: bool,
) -> impl futures::Stream<Item = DFResult<datafusion::arrow::array::RecordBatch>> + Send {
    futures::stream::iter(0..count)
        .then(move |index| {
            set(Pass { index, count });
            let (first, replan, context) = (first.clone(), replan.clone(), context.clone());
            async move {
                let plan = match replan {
                    Some(r) if index > 0 => r.plan().await?,
                    _ => first,
                };
                single(plan).execute(0, context)
            }
        })
        .try_flatten()
        .map_err(move |e| with_advice(e, count as usize, keyed))
}

/// The source a plan reads through its [`KeptSourceExec`].
fn kept_source(plan: &Arc<dyn ExecutionPlan>) -> Option<Arc<dyn ExecutionPlan>> {
    let any: &dyn std::any::Any = plan.as_ref();
    if let Some(kept) = any.downcast_ref::<KeptSourceExec>() {
        return Some(kept.input().clone());
    }
    plan.children().into_iter().find_map(kept_source)
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
            Passes::One(plan) | Passes::Run { plan, .. } => vec![plan],
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
        let plan = children.swap_remove(0);
        let passes = match &self.passes {
            Passes::One(_) => Passes::One(plan),
            Passes::Run {
                passes,
                count,
                replan,
                ..
            } => Passes::Run {
                plan,
                passes: passes.clone(),
                count: *count,
                replan: replan.clone(),
            },
        };
        Ok(Arc::new(Self::new(
            passes,
            self.keyed,
            self.source_keys.clone(),
        )))
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
        let source_keys = self.source_keys.clone();
        let begin = move || {
            if let Some(k) = &source_keys {
                k.begin();
            }
        };
        let passes_metric = MetricBuilder::new(&self.metrics).counter("passes", 0);
        let schema = self.schema();
        match self.passes.clone() {
            Passes::One(plan) => {
                passes_metric.add(1);
                let rows = in_turn(plan, 1, None, move |_| begin(), context, keyed);
                Ok(Box::pin(RecordBatchStreamAdapter::new(schema, rows)))
            }
            Passes::Run {
                plan,
                passes,
                count,
                replan,
            } => {
                let measured = MetricBuilder::new(&self.metrics).gauge("source_bytes", 0);
                let source_reads = MetricBuilder::new(&self.metrics).counter("source_reads", 0);
                let rows = futures::stream::once(async move {
                    let source = kept_source(&plan).ok_or_else(|| {
                        DataFusionError::Internal(
                            "a MERGE in passes without its kept source".into(),
                        )
                    })?;
                    let (bytes, spilled) = read_source(single(source), context.clone()).await?;
                    measured.set(bytes);
                    source_reads.add(1);
                    passes.kept.keep(spilled);
                    let count = match count {
                        PassCount::Auto { limit } => auto_passes(limit, bytes),
                        PassCount::Fixed(n) => n,
                    };
                    passes_metric.add(count as usize);
                    let selector = passes.selector.clone();
                    Ok::<_, DataFusionError>(in_turn(
                        plan,
                        count,
                        Some(replan),
                        move |pass| {
                            begin();
                            selector.set(pass)
                        },
                        context,
                        keyed,
                    ))
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
