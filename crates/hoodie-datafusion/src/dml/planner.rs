//! hoodie's extension planner: [`HudiDmlNode`] change sets into the keyed write,
//! [`HudiWriteNode`] writes with a decided mode, and the kept source of a MERGE in passes.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::error::{DataFusionError, Result as DFResult};
use datafusion::logical_expr::{LogicalPlan, UserDefinedLogicalNode};
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::{ExecutionPlan, ExecutionPlanProperties};
use datafusion::physical_planner::{ExtensionPlanner, PhysicalPlanner};

use super::merge_into::passes::{merge_input, KeptSourceExec, KeptSourceNode};
use super::merge_into::source_keys::{SourceKeysExec, SourceKeysNode};
use super::rule::{DmlKind, HudiDmlNode};
use super::write_node::HudiWriteNode;
use crate::provider::as_hudi;

/// Plans [`HudiDmlNode`]s into the keyed write.
#[derive(Debug, Default)]
pub struct HudiDmlPlanner;

#[async_trait]
impl ExtensionPlanner for HudiDmlPlanner {
    async fn plan_extension(
        &self,
        planner: &dyn PhysicalPlanner,
        node: &dyn UserDefinedLogicalNode,
        logical_inputs: &[&LogicalPlan],
        physical_inputs: &[Arc<dyn ExecutionPlan>],
        session: &dyn Session,
        ctx: &datafusion::logical_expr::physical_planning_context::PhysicalPlanningContext,
    ) -> DFResult<Option<Arc<dyn ExecutionPlan>>> {
        if let Some(write) = node.as_any().downcast_ref::<HudiWriteNode>() {
            let hudi = as_hudi(write.provider()).ok_or_else(|| {
                DataFusionError::Internal("HudiWrite on a table that is not Hudi".into())
            })?;
            let mut input = physical_inputs[0].clone();
            if input.output_partitioning().partition_count() > 1 {
                input = Arc::new(CoalescePartitionsExec::new(input));
            }
            return Ok(Some(hudi.write_plan(input, write.mode().clone())));
        }
        if let Some(kept) = node.as_any().downcast_ref::<KeptSourceNode>() {
            let exec = KeptSourceExec::new(physical_inputs[0].clone(), kept.kept().clone());
            return Ok(Some(Arc::new(exec)));
        }
        if let Some(keys) = node.as_any().downcast_ref::<SourceKeysNode>() {
            let schema = logical_inputs[0].schema();
            let exprs = keys
                .keys()
                .iter()
                .map(|k| planner.create_physical_expr(k, schema, session, ctx))
                .collect::<DFResult<Vec<_>>>()?;
            let exec = SourceKeysExec::new(physical_inputs[0].clone(), exprs, keys.noted().clone());
            return Ok(Some(Arc::new(exec)));
        }
        let Some(node) = node.as_any().downcast_ref::<HudiDmlNode>() else {
            return Ok(None);
        };
        let hudi = as_hudi(&node.provider).ok_or_else(|| {
            DataFusionError::Internal("HudiDml on a table that is not Hudi".into())
        })?;
        let mut input = physical_inputs[0].clone();
        let mut rows_in_memory = None;
        if node.kind == DmlKind::Merge {
            let keyed = !hudi.table().config().record_key_fields().is_empty();
            (input, rows_in_memory) = merge_input(
                (node.passes.as_ref(), node.source_keys.clone()),
                keyed,
                (logical_inputs[0], input),
                session,
                Arc::new(HudiDmlPlanner),
            )?;
        }
        if input.output_partitioning().partition_count() > 1 {
            input = Arc::new(CoalescePartitionsExec::new(input));
        }
        Ok(Some(hudi.change_set_plan(
            input,
            node.spec.clone(),
            rows_in_memory,
        )))
    }
}
