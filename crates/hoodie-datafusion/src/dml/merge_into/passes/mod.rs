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
//! The MERGE is planned once: its change-set plan filters both sides by a pass filter whose
//! pass ([`udf::PassSelector`]) is set before each run, and reads its source through a
//! [`kept::KeptSourceNode`]. [`MergePassesExec`] runs that one logical plan once per pass (the
//! first pass with its physical plan, later ones with a fresh physical plan of it, since a
//! hash join's run state outlives a reset), so the plan EXPLAIN shows is the plan that runs.
//!
//! How many: `hoodie.merge.join.passes`, a number, or `auto`: one pass under an unbounded pool;
//! under a bounded one the source's size decides ([`size::auto_passes`]). With passes, the
//! source is read once when the MERGE runs: measured, and kept in a temporary Arrow IPC file
//! that every pass reads ([`spill`]), so a costly source is not computed again and a source
//! calling volatile functions (`random()`) gives every pass the same rows. Tables without a
//! record key join on any ON condition: they run in one pass.

mod exec;
pub(crate) mod kept;
mod size;
mod spill;
pub(crate) mod udf;

use std::sync::Arc;

use datafusion::catalog::Session;
use datafusion::error::Result as DFResult;
use datafusion::execution::memory_pool::MemoryLimit;
use datafusion::execution::session_state::SessionState;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_planner::ExtensionPlanner;
use hoodie_format::config;

pub use exec::{MergePassesExec, PassCount, Replanner};
pub use kept::{KeptSource, KeptSourceExec, KeptSourceNode};
pub use udf::{Pass, PassSelector};

use super::source_keys::SourceKeys;
use crate::error::HoodieError;
use crate::options::write::WriteOptions;

/// What `hoodie.merge.join.passes` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

/// The shared state of a MERGE whose join may run in passes: the pass its filters keep and
/// the kept copy of its source.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PassPlan {
    /// The pass that runs now.
    pub selector: PassSelector,
    /// The source, once kept.
    pub kept: KeptSource,
    /// What `hoodie.merge.join.passes` asked for when the MERGE was planned.
    pub setting: PassSetting,
}

impl PassPlan {
    /// The pass plan of a MERGE into a table with a record key under `setting`; none when it
    /// runs in one pass whatever the pool (`hoodie.merge.join.passes = 1`).
    pub fn of(setting: PassSetting) -> Option<Self> {
        (setting != PassSetting::Fixed(1)).then(|| Self {
            selector: PassSelector::default(),
            kept: KeptSource::default(),
            setting,
        })
    }
}

/// The input of a MERGE's sink, and the cap on the rows the sink keeps in memory while it
/// runs (a quarter of a bounded pool when there may be several passes, so that a later pass's
/// join finds room; lifted when the input has ended). The input is the change-set plan in
/// one pass, or a [`MergePassesExec`] that reads the source once when it runs and then runs
/// the plan once per pass: as many as `hoodie.merge.join.passes` asks for, or for `auto`
/// under a bounded pool as many as the measured source needs (so that EXPLAIN reads nothing).
/// `source_keys`, the keys the plan notes of its source, start afresh before each pass.
pub fn merge_input(
    (passes, source_keys): (Option<&PassPlan>, Option<SourceKeys>),
    keyed: bool,
    (logical, planned): (&LogicalPlan, Arc<dyn ExecutionPlan>),
    session: &dyn Session,
    extension: Arc<dyn ExtensionPlanner + Send + Sync>,
) -> DFResult<(Arc<dyn ExecutionPlan>, Option<usize>)> {
    let one_pass = || {
        Ok((
            Arc::new(MergePassesExec::one(
                planned.clone(),
                keyed,
                source_keys.clone(),
            )) as _,
            None,
        ))
    };
    let Some(passes) = passes.filter(|_| keyed) else {
        return one_pass();
    };
    let limit = session.runtime_env().memory_pool.memory_limit();
    let count = match (passes.setting, &limit) {
        (PassSetting::Fixed(1), _) => return one_pass(),
        (PassSetting::Auto, MemoryLimit::Finite(limit)) => PassCount::Auto { limit: *limit },
        (PassSetting::Auto, _) => return one_pass(),
        (PassSetting::Fixed(n), _) => PassCount::Fixed(n),
    };
    let cap = match limit {
        MemoryLimit::Finite(l) => Some(l / 4),
        _ => None,
    };
    let Some(state) = session.as_any().downcast_ref::<SessionState>() else {
        // the passes after the first are planned by a SessionState
        return match count {
            PassCount::Fixed(n) => Err(HoodieError::Unsupported {
                feature: format!("{} = {n} in a session that is not a DataFusion SessionState (set it to 1 or auto)", config::MERGE_JOIN_PASSES.key),
            }
            .into_datafusion()),
            PassCount::Auto { .. } => one_pass(),
        };
    };
    let replan = Replanner::new(logical.clone(), state.clone(), extension);
    let exec = MergePassesExec::passes(planned, passes.clone(), count, replan, source_keys);
    Ok((Arc::new(exec), cap))
}
