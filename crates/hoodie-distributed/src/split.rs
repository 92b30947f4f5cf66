//! How hoodie's scans share out among workers: the planner asks each leaf how many tasks it
//! wants, then has it split into one variant per task.

use std::sync::Arc;

use datafusion::error::{DataFusionError, Result};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_distributed::{
    DesiredTaskCountEvent, DesiredTaskCountEventResponse, DistributedConfig, DistributedLeafExec,
    ScaleUpLeafNodeEvent, ScaleUpLeafNodeEventResponse,
};
use hoodie_datafusion::MergeOnReadExec;

use crate::planner::{node_ships, StaysLocal};

/// The tasks a merge-on-read scan wants: its base bytes over the bytes a partition reads (the
/// session's `distributed.file_scan_config_bytes_per_partition`, as for a parquet scan), over
/// the partitions a task runs; no more tasks than slices.
/// A node no worker can run answers [`StaysLocal`] instead, which plans the statement in one
/// process.
pub(crate) fn desired_tasks(
    ev: DesiredTaskCountEvent,
) -> Option<Result<DesiredTaskCountEventResponse>> {
    if !node_ships(ev.plan.as_ref()) {
        let stays = StaysLocal(ev.plan.name().to_string());
        return Some(Err(DataFusionError::External(Box::new(stays))));
    }
    let node = ev.plan.downcast_ref::<MergeOnReadExec>()?;
    let per_partition = DistributedConfig::from_session_config(ev.session_config)
        .map(|c| c.file_scan_config_bytes_per_partition)
        .unwrap_or(usize::MAX)
        .max(1);
    let bytes = usize::try_from(node.base_bytes()).unwrap_or(usize::MAX);
    let tasks = (bytes.div_ceil(per_partition))
        .div_ceil(ev.session_config.target_partitions().max(1))
        .clamp(1, node.slice_count().max(1));
    Some(Ok(DesiredTaskCountEventResponse::desired(tasks)))
}

/// A merge-on-read scan as one variant per task, each reading its share of the slices.
pub(crate) fn scale_up(ev: ScaleUpLeafNodeEvent) -> Option<Result<ScaleUpLeafNodeEventResponse>> {
    let node = ev.plan.downcast_ref::<MergeOnReadExec>()?;
    let variants =
        (node.split(ev.task_count).into_iter()).map(|n| Arc::new(n) as Arc<dyn ExecutionPlan>);
    let leaf = DistributedLeafExec::try_new(ev.plan.clone(), variants);
    Some(leaf.map(|l| ScaleUpLeafNodeEventResponse::new(Arc::new(l))))
}
