//! The mark a scan of a Hudi table carries under optimistic concurrency control: which
//! instants it read, so that a write fed by it checks for conflicts with every write it did
//! not see (including those that committed between the scan and the write's start).

use std::fmt;
use std::sync::Arc;

use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::Result as DFResult;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PhysicalExpr, PlanProperties,
};
use hoodie_format::concurrency::conflict::ReadSnapshot;

/// Passes its input through; records what that scan of the table at `location` read.
#[derive(Debug)]
pub struct SnapshotExec {
    input: Arc<dyn ExecutionPlan>,
    location: String,
    read: ReadSnapshot,
}

impl SnapshotExec {
    /// Marks `input`, a scan of the table at `location`, as having read `read`.
    pub fn new(input: Arc<dyn ExecutionPlan>, location: String, read: ReadSnapshot) -> Self {
        Self {
            input,
            location,
            read,
        }
    }
}

/// What the scans of the table at `location` in `plan` read (the instants all of them saw),
/// or `None` if `plan` does not scan it under optimistic concurrency.
pub fn read_of(plan: &Arc<dyn ExecutionPlan>, location: &str) -> Option<ReadSnapshot> {
    let mine = plan
        .downcast_ref::<SnapshotExec>()
        .filter(|s| s.location == location)
        .map(|s| s.read.clone());
    plan.children()
        .into_iter()
        .filter_map(|c| read_of(c, location))
        .fold(mine, |acc, r| match acc {
            Some(a) => Some(a.common(&r)),
            None => Some(r),
        })
}

impl DisplayAs for SnapshotExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HudiSnapshotExec: table={}", self.location)
    }
}

impl ExecutionPlan for SnapshotExec {
    fn name(&self) -> &str {
        "HudiSnapshotExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DFResult<TreeNodeRecursion>,
    ) -> DFResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(SnapshotExec {
            input: children.swap_remove(0),
            location: self.location.clone(),
            read: self.read.clone(),
        }))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DFResult<SendableRecordBatchStream> {
        self.input.execute(partition, context)
    }
}
