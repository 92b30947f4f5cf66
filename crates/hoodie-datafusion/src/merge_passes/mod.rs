//! A MERGE's join in passes, so that it runs inside a bounded memory pool.
//!
//! DataFusion's hash join holds its build side (the source, usually) in memory and cannot
//! spill; its sort-merge join can fail inside its external sort (apache/datafusion#16979). So a
//! MERGE on a table with a record key splits the join, the way a grace hash join does: pass `i`
//! of `n` joins the source rows whose record key hashes to `i` with the target rows whose key
//! hashes to `i`. A source row and the target row it matches have equal keys, so they meet in
//! the same pass; a target row no source row matches is seen, unmatched, in exactly one pass (so
//! `WHEN NOT MATCHED BY SOURCE` holds). The passes run one after another ([`MergePassesExec`])
//! into the one sink and the one commit; each pass reads the kept source and the target's key
//! column, and holds a hash table of 1/n of the source.
//!
//! How many: `hoodie.merge.join.passes`, a number, or `auto`: one pass under an unbounded pool;
//! under a bounded one the source's size decides ([`size::auto_passes`]). With more than one
//! pass, the source is read once when the MERGE runs: measured, and kept in a temporary Arrow
//! IPC file that every pass reads ([`spill`]), so a costly source is not computed again and a
//! source calling volatile functions (`random()`) gives every pass the same rows. Tables
//! without a record key join on any ON condition: they run in one pass.

mod exec;
mod size;
mod spill;
pub(crate) mod udf;

use std::sync::Arc;

use datafusion::catalog::Session;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::datasource::TableProvider;
use datafusion::error::{DataFusionError, Result as DFResult};
use datafusion::execution::memory_pool::MemoryLimit;
use datafusion::execution::session_state::SessionState;
use datafusion::logical_expr::dml::{DmlStatement, WriteOp};
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::ExecutionPlan;
use hoodie_format::config;

pub use exec::{MergePassesExec, PassCount};

pub use udf::Pass;

use crate::error::HoodieError;
use crate::provider::{as_hudi, HudiTableProvider};
use crate::session::write_options::{SessionOptions, WriteOptions};
use spill::SpilledSource;

/// What `hoodie.merge.join.passes` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassSetting {
    /// Chosen from the memory pool and the source's size.
    Auto,
    /// This many.
    Fixed(u32),
}

impl PassSetting {
    /// Reads the option (session over table over default).
    pub fn from_options(options: &WriteOptions) -> Result<Self, HoodieError> {
        let key = config::MERGE_JOIN_PASSES;
        let v = options.get(&key).unwrap_or_default();
        key.check(&v)?;
        Ok(match v.trim().parse::<u32>() {
            Ok(n) => PassSetting::Fixed(n),
            Err(_) => PassSetting::Auto,
        })
    }
}

/// Whether a plan (its subqueries included) calls a volatile function.
fn calls_volatile(plan: &LogicalPlan) -> bool {
    let mut volatile = false;
    let _ = plan.apply_with_subqueries(|node| {
        node.apply_expressions(|e| {
            volatile |= e.is_volatile();
            Ok(TreeNodeRecursion::Continue)
        })?;
        Ok(if volatile {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    });
    volatile
}

/// Plans the passes of one MERGE: each its own change-set plan, analyzed, optimized and
/// planned by the session.
#[derive(Debug)]
pub struct PassPlanner {
    dml: Arc<DmlStatement>,
    provider: Arc<dyn TableProvider>,
    state: SessionState,
    /// Whether the source calls volatile functions: then it may be read only once.
    volatile: bool,
}

impl PassPlanner {
    /// The physical plans of passes `0..count`, reading the source from `kept` when it can
    /// (and whether they do).
    pub async fn plan(
        &self,
        count: u32,
        kept: Option<&SpilledSource>,
    ) -> DFResult<(Vec<Arc<dyn ExecutionPlan>>, bool)> {
        let (WriteOp::MergeInto(merge), Some(hudi)) = (&self.dml.op, as_hudi(&self.provider))
        else {
            return Err(DataFusionError::Internal(
                "merge passes planned for a statement that is not a MERGE into a Hudi table".into(),
            ));
        };
        let mut dml = self.dml.as_ref().clone();
        let mut reads_kept = false;
        if let Some(source) = kept {
            if let Some(read) = source.plan_in_place_of(&dml.input)? {
                dml.input = Arc::new(read);
                reads_kept = true;
            }
        }
        // computed again in every pass, a volatile source would give each pass other rows
        let count = if self.volatile && !reads_kept {
            1
        } else {
            count
        };
        let mut passes = Vec::with_capacity(count as usize);
        for index in 0..count {
            let pass = Pass { index, count };
            let plan = crate::merge::plan_merge_pass(
                &dml,
                merge,
                self.provider.clone(),
                hudi,
                &SessionOptions::of(self.state.config_options()),
                pass,
            )?;
            passes.push(self.state.create_physical_plan(&plan).await?);
        }
        Ok((passes, reads_kept))
    }

    /// The physical plan of the MERGE's source.
    async fn source(&self) -> DFResult<Arc<dyn ExecutionPlan>> {
        self.state.create_physical_plan(&self.dml.input).await
    }
}

/// The input of a MERGE's sink, and the cap on the rows the sink keeps in memory while it
/// runs (a quarter of a bounded pool when there may be several passes, so that a later pass's
/// join finds room; lifted when the input has ended). The input is the change-set plan already
/// planned (one pass), or a [`MergePassesExec`] that reads the source once when it runs and
/// then plans the passes: as many as `hoodie.merge.join.passes` asks for, or for `auto` under a
/// bounded pool as many as the measured source needs (so that EXPLAIN reads nothing).
pub async fn merge_input(
    dml: &DmlStatement,
    hudi: &HudiTableProvider,
    provider: Arc<dyn TableProvider>,
    planned: Arc<dyn ExecutionPlan>,
    session: &dyn Session,
) -> DFResult<(Arc<dyn ExecutionPlan>, Option<usize>)> {
    if !matches!(dml.op, WriteOp::MergeInto(_)) {
        return Ok((planned, None));
    }
    let keyed = !hudi.table().config().record_key_fields().is_empty();
    let setting =
        PassSetting::from_options(&hudi.write_options(&SessionOptions::of_session(session)))
            .map_err(HoodieError::into_datafusion)?;
    let one_pass = || {
        Ok((
            Arc::new(MergePassesExec::one(planned.clone(), keyed)) as _,
            None,
        ))
    };
    let Some(state) = session.as_any().downcast_ref::<SessionState>() else {
        // passes are planned by a SessionState; another Session can only run one
        return match setting {
            PassSetting::Fixed(n) if n > 1 && keyed => Err(HoodieError::Unsupported {
                feature: format!("{} = {n} in a session that is not a DataFusion SessionState (set it to 1 or auto)", config::MERGE_JOIN_PASSES.key),
            }
            .into_datafusion()),
            _ => one_pass(),
        };
    };
    let limit = session.runtime_env().memory_pool.memory_limit();
    let count = match (keyed, setting, &limit) {
        (false, _, _) | (_, PassSetting::Fixed(1), _) => return one_pass(),
        (true, PassSetting::Auto, MemoryLimit::Finite(limit)) => PassCount::Auto { limit: *limit },
        (true, PassSetting::Auto, _) => return one_pass(),
        (true, PassSetting::Fixed(n), _) => PassCount::Fixed(n),
    };
    let planner = PassPlanner {
        dml: Arc::new(dml.clone()),
        provider,
        state: state.clone(),
        volatile: calls_volatile(&dml.input),
    };
    let source = planner.source().await?;
    let cap = match limit {
        MemoryLimit::Finite(l) => Some(l / 4),
        _ => None,
    };
    let exec = MergePassesExec::passes(planned, source, Arc::new(planner), count);
    Ok((Arc::new(exec), cap))
}
