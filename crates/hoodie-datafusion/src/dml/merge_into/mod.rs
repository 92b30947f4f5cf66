//! MERGE INTO: the change set of the statement ([`plan`]: the ON condition and the join;
//! [`clauses`]: Hudi's rules for them, the clause each row takes, the columns it writes), its join in passes under a bounded memory pool ([`passes`]), and the target rows
//! no source key can match dropped in the target's scan ([`source_keys`]).

pub(crate) mod clauses;
pub mod passes;
pub mod plan;
pub mod source_keys;

use std::sync::Arc;

use datafusion::error::{DataFusionError, Result as DFResult};
use datafusion::physical_plan::ExecutionPlan;

/// The one child `children` must hold, for the `with_new_children` of plan node `name`.
pub(crate) fn one_child(
    name: &str,
    mut children: Vec<Arc<dyn ExecutionPlan>>,
) -> DFResult<Arc<dyn ExecutionPlan>> {
    if children.len() != 1 {
        return Err(DataFusionError::Internal(format!(
            "{name} has one child, got {}",
            children.len()
        )));
    }
    Ok(children.swap_remove(0))
}
