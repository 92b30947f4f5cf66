//! How hoodie's scans (merge-on-read and CDC) share out among workers: the planner asks each leaf how many tasks it
//! wants, then has it split into one variant per task.

use std::sync::Arc;

use datafusion::error::{DataFusionError, Result};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_distributed::{
    DesiredTaskCountEvent, DesiredTaskCountEventResponse, DistributedConfig, DistributedLeafExec,
    ScaleUpLeafNodeEvent, ScaleUpLeafNodeEventResponse,
};
use hoodie_datafusion::{CdcExec, MergeOnReadExec};

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
    let (bytes, units) = if let Some(node) = ev.plan.downcast_ref::<MergeOnReadExec>() {
        (node.base_bytes(), node.slice_count())
    } else if let Some(node) = ev.plan.downcast_ref::<CdcExec>() {
        let splits = node.split_count() as u64;
        (splits.saturating_mul(CDC_SPLIT_BYTES), node.split_count())
    } else {
        return None;
    };
    let per_partition = DistributedConfig::from_session_config(ev.session_config)
        .map(|c| c.file_scan_config_bytes_per_partition)
        .unwrap_or(usize::MAX)
        .max(1);
    let bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
    let tasks = (bytes.div_ceil(per_partition))
        .div_ceil(ev.session_config.target_partitions().max(1))
        .clamp(1, units.max(1));
    Some(Ok(DesiredTaskCountEventResponse::desired(tasks)))
}

/// What a CDC split is taken to read, for its tasks (its files' sizes are not known when it
/// is planned): a file group's base file of a commit, at Hudi's default size (120 MiB) over
/// what its columns usually compress to.
const CDC_SPLIT_BYTES: u64 = 32 * 1024 * 1024;

/// A merge-on-read or CDC scan as one variant per task, each reading its share of the
/// slices or splits.
pub(crate) fn scale_up(ev: ScaleUpLeafNodeEvent) -> Option<Result<ScaleUpLeafNodeEventResponse>> {
    let variants: Vec<Arc<dyn ExecutionPlan>> =
        if let Some(node) = ev.plan.downcast_ref::<MergeOnReadExec>() {
            (node.split(ev.task_count).into_iter())
                .map(|n| Arc::new(n) as _)
                .collect()
        } else if let Some(node) = ev.plan.downcast_ref::<CdcExec>() {
            match node.split(ev.task_count) {
                Ok(split) => split.into_iter().map(|n| Arc::new(n) as _).collect(),
                Err(e) => return Some(Err(e)),
            }
        } else {
            return None;
        };
    let leaf = DistributedLeafExec::try_new(ev.plan.clone(), variants);
    Some(leaf.map(|l| ScaleUpLeafNodeEventResponse::new(Arc::new(l))))
}
