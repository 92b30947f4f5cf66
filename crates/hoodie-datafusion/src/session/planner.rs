//! The query planner hoodie installs, composed with the session's own.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::Session;
use datafusion::common::tree_node::TreeNode;
use datafusion::error::Result as DFResult;
use datafusion::execution::context::QueryPlanner;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_planner::{DefaultPhysicalPlanner, ExtensionPlanner, PhysicalPlanner};

use crate::dml::merge_into::passes::KeptSourceNode;
use crate::dml::merge_into::source_keys::SourceKeysNode;
use crate::dml::write_node::HudiWriteNode;
use crate::dml::{HudiDmlNode, HudiDmlPlanner};

/// hoodie's extension planner, for a session that builds its own `DefaultPhysicalPlanner`
/// (what [`HoodieQueryPlanner`] adds for plans that write Hudi tables).
pub fn hoodie_extension_planner() -> Arc<dyn ExtensionPlanner + Send + Sync> {
    Arc::new(HudiDmlPlanner)
}

/// Plans a statement that writes a Hudi table (an UPDATE, DELETE or MERGE change set) with
/// DataFusion's planner plus [`hoodie_extension_planner`]; every other plan with the planner
/// the session had before hoodie was installed (DataFusion's default when it had none), so a
/// user's own query planner keeps planning their queries.
#[derive(Debug, Default)]
pub struct HoodieQueryPlanner {
    inner: Option<Arc<dyn QueryPlanner + Send + Sync>>,
}

impl HoodieQueryPlanner {
    /// A planner that hands plans without hoodie nodes to `inner`.
    pub fn new(inner: Option<Arc<dyn QueryPlanner + Send + Sync>>) -> Self {
        Self { inner }
    }
}

/// Whether `plan` (under EXPLAIN and ANALYZE too) holds a node only hoodie can plan.
fn writes_hudi(plan: &LogicalPlan) -> bool {
    plan.exists(|p| {
        Ok(matches!(p, LogicalPlan::Extension(e)
            if e.node.as_any().is::<HudiDmlNode>()
                || e.node.as_any().is::<HudiWriteNode>()
                || e.node.as_any().is::<KeptSourceNode>()
                || e.node.as_any().is::<SourceKeysNode>()))
    })
    .unwrap_or(false)
}

#[async_trait]
impl QueryPlanner for HoodieQueryPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session: &dyn Session,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        match &self.inner {
            Some(inner) if !writes_hudi(logical_plan) => {
                inner.create_physical_plan(logical_plan, session).await
            }
            _ => {
                DefaultPhysicalPlanner::with_extension_planners(vec![hoodie_extension_planner()])
                    .create_physical_plan(logical_plan, session)
                    .await
            }
        }
    }
}
