//! The planner of a session with workers: datafusion-distributed's, unless the plan holds what
//! no worker can run or is not worth running on one: a hoodie node without a codec (a MERGE's
//! passes) or a MERGE's function bound to this process, a scan of base-file row numbers
//! (DataFusion's plan encoding drops a scan's virtual columns), a table in this process's
//! memory (`memory://`), or the sink of an insert (its rows would all cross to here). The
//! distributed planner asks every node how many tasks it wants
//! ([`crate::split::desired_tasks`]); such a node answers [`StaysLocal`], which ends that
//! planning, and the statement is planned again to run in the session's process, as without
//! workers.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::display::{PlanType, StringifiedPlan};
use datafusion::common::format::ExplainFormat;
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::datasource::physical_plan::FileScanConfig;
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::source::DataSourceExec;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::context::QueryPlanner;
use datafusion::logical_expr::{Explain, LogicalPlan};
use datafusion::physical_expr::ScalarFunctionExpr;
use datafusion::physical_plan::explain::ExplainExec;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_planner::{DefaultPhysicalPlanner, PhysicalPlanner};
use hoodie_datafusion::{
    is_hoodie_node, is_process_bound_function, CdcExec, HudiSink, MergeOnReadExec, WriteKind,
};
use hoodie_format::location::is_process_local;
use hoodie_format::storage::location_of_store_url;

use crate::committed::CommittedExec;
use crate::HoodieCodec;

/// Plans with `distributed`, or with `local` where a worker could not run the plan.
#[derive(Debug)]
pub(crate) struct WorkersWherePossible {
    pub distributed: Arc<dyn QueryPlanner + Send + Sync>,
    /// The session's planner before it was distributed (`None`: DataFusion's default).
    pub local: Option<Arc<dyn QueryPlanner + Send + Sync>>,
}

/// The answer of a node no worker can run, which ends the distributed planning.
#[derive(Debug, thiserror::Error)]
#[error("{0} runs in the session's process")]
pub(crate) struct StaysLocal(pub String);

#[async_trait]
impl QueryPlanner for WorkersWherePossible {
    async fn create_physical_plan(
        &self,
        logical: &LogicalPlan,
        state: &dyn Session,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match logical {
            // an EXPLAIN shows the plan that would run: its stages on the workers, or the
            // plan of one process (verbose and other formats: DataFusion's own EXPLAIN)
            LogicalPlan::Explain(explain)
                if !explain.verbose && explain.explain_format == ExplainFormat::Indent =>
            {
                let plan = self.plan(&explain.plan, state).await?;
                // the stages, below the node that ends a write at its commit
                let shown = match plan.downcast_ref::<CommittedExec>() {
                    Some(_) => plan.children()[0].clone(),
                    None => plan,
                };
                Ok(explained(explain, shown.as_ref()))
            }
            _ => self.plan(logical, state).await,
        }
    }
}

impl WorkersWherePossible {
    /// The plan of `logical`: distributed, or in one process where a worker cannot run it.
    async fn plan(
        &self,
        logical: &LogicalPlan,
        state: &dyn Session,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match self.distributed.create_physical_plan(logical, state).await {
            Ok(plan) if writes_on_workers(&plan) => Ok(Arc::new(CommittedExec::new(plan))),
            Err(e) if stays_local(&e) => match &self.local {
                Some(local) => local.create_physical_plan(logical, state).await,
                None => {
                    DefaultPhysicalPlanner::default()
                        .create_physical_plan(logical, state)
                        .await
                }
            },
            planned => planned,
        }
    }
}

/// The EXPLAIN of `explain` planned as `plan`: its logical plan, then `plan` with its stages.
fn explained(explain: &Explain, plan: &dyn ExecutionPlan) -> Arc<dyn ExecutionPlan> {
    let mut plans: Vec<StringifiedPlan> = (explain.stringified_plans.iter())
        .filter(|p| p.should_display(false))
        .cloned()
        .collect();
    let physical = datafusion_distributed::display_plan_ascii(plan, false);
    plans.push(StringifiedPlan::new(PlanType::FinalPhysicalPlan, physical));
    let schema = Arc::new(explain.schema.as_arrow().clone());
    Arc::new(ExplainExec::new(schema, plans, false))
}

/// Whether `plan` is distributed with a write's sink at its head.
fn writes_on_workers(plan: &Arc<dyn ExecutionPlan>) -> bool {
    plan.downcast_ref::<datafusion_distributed::DistributedExec>()
        .and_then(|d| d.children().first().cloned())
        .is_some_and(|head| head.downcast_ref::<DataSinkExec>().is_some())
}

/// Whether `e` is a node's [`StaysLocal`].
fn stays_local(e: &DataFusionError) -> bool {
    match e {
        DataFusionError::External(e) => e.downcast_ref::<StaysLocal>().is_some(),
        DataFusionError::Context(_, e) => stays_local(e),
        DataFusionError::Shared(e) => stays_local(e),
        _ => false,
    }
}

/// Whether a worker can run `node` (its children aside), or, for a write's sink, whether its
/// input is worth running on workers.
pub(crate) fn node_ships(node: &dyn ExecutionPlan) -> bool {
    if calls_process_bound_function(node) {
        return false;
    }
    if let Some(sink) = node.downcast_ref::<DataSinkExec>() {
        return !writes_every_row_here(sink);
    }
    if let Some(merge) = node.downcast_ref::<MergeOnReadExec>() {
        return !is_process_local(merge.location());
    }
    if let Some(cdc) = node.downcast_ref::<CdcExec>() {
        return !is_process_local(cdc.location());
    }
    if let Some(scan) = node.downcast_ref::<DataSourceExec>() {
        let Some(files) = scan.data_source().downcast_ref::<FileScanConfig>() else {
            return true;
        };
        let local = location_of_store_url(files.object_store_url.as_ref())
            .is_some_and(|l| is_process_local(&l));
        let virtual_columns = files.file_source().table_schema().virtual_columns();
        return !local && virtual_columns.is_empty();
    }
    !is_hoodie_node(node) || HoodieCodec::ships(node)
}

/// Whether `sink` writes every row of its input in this process: an insert, an INSERT
/// OVERWRITE or a CTAS, whose writers do not run on workers yet, so that every row its input
/// read on the workers would cross to here only to be written (measured at 10M rows: a CTAS
/// took 1.45x the CPU and 1.5x this process's memory on workers). An UPDATE's or a DELETE's
/// change set, the rows it changes, is what crosses.
fn writes_every_row_here(sink: &DataSinkExec) -> bool {
    sink.sink()
        .downcast_ref::<HudiSink>()
        .is_some_and(|s| matches!(s.spec().kind, WriteKind::Insert | WriteKind::Overwrite(_)))
}

/// Whether an expression of `node` calls a hoodie function bound to this process.
fn calls_process_bound_function(node: &dyn ExecutionPlan) -> bool {
    let mut bound = false;
    let _ = node.apply_expressions(&mut |expr| {
        expr.apply(|e| {
            let function = e.downcast_ref::<ScalarFunctionExpr>();
            bound |= function.is_some_and(|f| is_process_bound_function(f.name()));
            Ok(match bound {
                true => TreeNodeRecursion::Stop,
                false => TreeNodeRecursion::Continue,
            })
        })
    });
    bound
}
