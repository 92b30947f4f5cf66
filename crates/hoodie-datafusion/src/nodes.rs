//! hoodie's own physical plan nodes and scalar functions, for an engine that sends plans to
//! other processes: a node needs a codec there, a function is registered there by name, and a
//! plan holding one that cannot go runs where it was planned.

use std::sync::Arc;

use datafusion::logical_expr::ScalarUDF;
use datafusion::physical_plan::ExecutionPlan;

/// hoodie's scalar functions that a plan sent to another process may hold, for that process
/// to register: their settings are their arguments, so they run by name anywhere.
pub fn shipped_functions() -> Vec<Arc<ScalarUDF>> {
    vec![
        Arc::new(ScalarUDF::from(crate::dml::named_cast::StoreCast::default())),
        Arc::new(ScalarUDF::from(
            crate::dml::struct_cast::ByPosition::default(),
        )),
    ]
}

/// Whether `name` names one of hoodie's scalar functions that run only in the process that
/// planned them: they share a MERGE's state with its other nodes.
pub fn is_process_bound_function(name: &str) -> bool {
    matches!(
        name,
        "hoodie_in_merge_pass" | "hoodie_merge_source_may_have"
    )
}

/// Whether `node` is one of hoodie's physical plan nodes (not DataFusion's).
pub fn is_hoodie_node(node: &dyn ExecutionPlan) -> bool {
    use crate::dml::merge_into::passes::kept::KeptSourceExec;
    use crate::dml::merge_into::passes::MergePassesExec;
    use crate::dml::merge_into::source_keys::SourceKeysExec;
    use crate::scan::cdc::CdcExec;
    use crate::scan::merge_on_read::MergeOnReadExec;
    use crate::scan::snapshot::SnapshotExec;
    node.downcast_ref::<SnapshotExec>().is_some()
        || node.downcast_ref::<MergeOnReadExec>().is_some()
        || node.downcast_ref::<CdcExec>().is_some()
        || node.downcast_ref::<MergePassesExec>().is_some()
        || node.downcast_ref::<KeptSourceExec>().is_some()
        || node.downcast_ref::<SourceKeysExec>().is_some()
}
