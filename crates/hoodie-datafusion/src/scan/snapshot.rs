//! The mark a scan of a Hudi table carries: the timeline it listed, so that a write fed by it
//! (a single writer) starts from that listing instead of listing the timeline again, and which
//! instants it read, so that under optimistic concurrency control the write checks for
//! conflicts with every write it did not see (including those that committed between the scan
//! and the write's start). It passes filters down to the scan and the scan's statistics up.

use std::fmt;
use std::sync::Arc;

use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::Statistics;
use datafusion::config::ConfigOptions;
use datafusion::error::Result as DFResult;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_plan::execution_plan::CardinalityEffect;
use datafusion::physical_plan::filter_pushdown::{FilterDescription, FilterPushdownPhase};
use datafusion::physical_plan::statistics::StatisticsArgs;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PhysicalExpr, PlanProperties,
};
use hoodie_format::concurrency::ReadSnapshot;
use hoodie_format::timeline::Timeline;
use hoodie_format::HudiTable;

use super::opened::Opened;

/// Passes its input through; records what that scan of the table at `location` read.
#[derive(Debug)]
pub struct SnapshotExec {
    input: Arc<dyn ExecutionPlan>,
    location: String,
    /// `None` in a plan a worker decoded: the write that reads it runs where it was planned.
    timeline: Option<Timeline>,
}

impl SnapshotExec {
    /// Marks `input`, a scan of the table at `location`, as a read of `timeline`.
    pub fn new(input: Arc<dyn ExecutionPlan>, location: String, timeline: Timeline) -> Self {
        Self {
            input,
            location,
            timeline: Some(timeline),
        }
    }

    /// The mark of a scan of the table at `location` as a worker of a cluster decodes it: the
    /// same node (a plan's metrics are matched node by node), without the timeline, which
    /// only the statement's own process reads.
    pub fn shipped(input: Arc<dyn ExecutionPlan>, location: String) -> Self {
        Self {
            input,
            location,
            timeline: None,
        }
    }

    /// The location of the table the scan reads.
    pub fn location(&self) -> &str {
        &self.location
    }
}

/// What the plan feeding a write read of its table.
#[derive(Debug, Clone, Default)]
pub struct PlanRead {
    /// The instants all its scans of the table saw (`None`: it does not scan it).
    pub snapshot: Option<ReadSnapshot>,
    /// The timeline its first scan of the table listed.
    pub listed: Option<Timeline>,
    /// What opening the table read while the statement was planned, when no scan took it:
    /// footers the write hands to its session's cache.
    pub opened: Option<Arc<Opened>>,
}

impl PlanRead {
    /// What `plan` read of the table at `location`.
    pub fn of(plan: &Arc<dyn ExecutionPlan>, location: &str) -> Self {
        Self {
            snapshot: read_of(plan, location),
            listed: listed_of(plan, location),
            opened: None,
        }
    }

    /// This read with what opening `table` read: its listing when the plan listed none (a
    /// write without a scan of its table) and is still current.
    pub(crate) fn or_opened(mut self, opened: Opened, table: &HudiTable) -> Self {
        if self.listed.is_none() {
            self.listed = opened.timeline_if_current(table);
        }
        self.opened = Some(Arc::new(opened));
        self
    }
}

/// The timeline the first scan of the table at `location` in `plan` listed.
fn listed_of(plan: &Arc<dyn ExecutionPlan>, location: &str) -> Option<Timeline> {
    match plan.downcast_ref::<SnapshotExec>() {
        Some(s) if s.location == location && s.timeline.is_some() => s.timeline.clone(),
        _ => plan
            .children()
            .into_iter()
            .find_map(|c| listed_of(c, location)),
    }
}

/// What the scans of the table at `location` in `plan` read (the instants all of them saw),
/// or `None` if `plan` does not scan it.
fn read_of(plan: &Arc<dyn ExecutionPlan>, location: &str) -> Option<ReadSnapshot> {
    let mine = plan
        .downcast_ref::<SnapshotExec>()
        .filter(|s| s.location == location)
        .and_then(|s| s.timeline.as_ref())
        .map(ReadSnapshot::of);
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
            timeline: self.timeline.clone(),
        }))
    }

    fn statistics_from_inputs(
        &self,
        input_stats: &[Arc<Statistics>],
        _args: &StatisticsArgs,
    ) -> DFResult<Arc<Statistics>> {
        Ok(input_stats[0].clone())
    }

    fn cardinality_effect(&self) -> CardinalityEffect {
        CardinalityEffect::Equal
    }

    // filters (a FilterExec's, a join's dynamic filters) reach the parquet scan below
    fn gather_filters_for_pushdown(
        &self,
        _phase: FilterPushdownPhase,
        parent_filters: Vec<Arc<dyn PhysicalExpr>>,
        _config: &ConfigOptions,
    ) -> DFResult<FilterDescription> {
        FilterDescription::from_children(parent_filters, &self.children())
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DFResult<SendableRecordBatchStream> {
        self.input.execute(partition, context)
    }
}
