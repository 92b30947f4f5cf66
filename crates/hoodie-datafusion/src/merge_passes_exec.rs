//! [`MergePassesExec`]: runs the passes of a MERGE's join one after another as one stream.

use std::fmt;
use std::sync::Arc;

use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::{DataFusionError, Result as DFResult};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, Distribution, ExecutionPlan, ExecutionPlanProperties,
    PlanProperties,
};
use futures::{StreamExt, TryStreamExt};

/// The change set of a MERGE, from its passes ([`crate::merge_passes`]) one after another:
/// pass `i + 1` starts (and its join builds its hash table) only when pass `i` has ended and
/// freed its memory. One output partition, fed to the one sink.
#[derive(Debug)]
pub struct MergePassesExec {
    passes: Vec<Arc<dyn ExecutionPlan>>,
    /// Whether the table has a record key (passes can be added).
    keyed: bool,
    cache: Arc<PlanProperties>,
}

impl MergePassesExec {
    /// Runs `passes` (at least one, all with the same schema) in turn.
    pub fn new(passes: Vec<Arc<dyn ExecutionPlan>>, keyed: bool) -> Self {
        let schema = passes[0].schema();
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
        }
    }

    /// How many passes.
    pub fn pass_count(&self) -> usize {
        self.passes.len()
    }
}

impl DisplayAs for MergePassesExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "HudiMergePasses: passes={}, one after another",
            self.passes.len()
        )
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

impl ExecutionPlan for MergePassesExec {
    fn name(&self) -> &'static str {
        "MergePassesExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.cache
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        self.passes.iter().collect()
    }

    fn required_input_distribution(&self) -> Vec<Distribution> {
        vec![Distribution::SinglePartition; self.passes.len()]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false; self.passes.len()]
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
        if children.len() != self.passes.len() || children.is_empty() {
            return Err(DataFusionError::Internal(format!(
                "MergePassesExec has {} passes, got {} children",
                self.passes.len(),
                children.len()
            )));
        }
        Ok(Arc::new(Self::new(children, self.keyed)))
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
        let (count, keyed) = (self.passes.len(), self.keyed);
        // a pass is executed (its tasks spawned) only when the stream before it has ended:
        // `try_flatten` asks for the next inner stream once the current one is exhausted
        let streams = futures::stream::iter(self.passes.clone()).map(move |pass| {
            let pass = if pass.output_partitioning().partition_count() > 1 {
                Arc::new(CoalescePartitionsExec::new(pass)) as Arc<dyn ExecutionPlan>
            } else {
                pass
            };
            pass.execute(0, context.clone())
        });
        let rows = streams
            .try_flatten()
            .map_err(move |e| with_advice(e, count, keyed));
        Ok(Box::pin(RecordBatchStreamAdapter::new(self.schema(), rows)))
    }
}
