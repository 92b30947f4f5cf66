//! The source of a MERGE in passes, computed once and kept: [`KeptSourceNode`] marks the
//! source in the MERGE's one change-set plan, [`KeptSourceExec`] is what it plans into. Until
//! the source is kept the exec runs its input; once [`super::MergePassesExec`] has read the
//! source into a spill file ([`super::spill`]), every pass's exec reads that file instead.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::ipc::reader::FileReader;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::common::{DFSchema, DFSchemaRef};
use datafusion::error::Result as DFResult;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{Expr, LogicalPlan, UserDefinedLogicalNodeCore};
use datafusion::physical_expr::{EquivalenceProperties, Partitioning, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, ExecutionPlanProperties, PlanProperties,
};

use futures::StreamExt;

use super::spill::{plain_schema, plain_type, SpilledSource};
use crate::sink::cast_columns;

/// The kept copy of a MERGE's source, shared by the plan nodes that read it and the
/// [`super::MergePassesExec`] that fills it.
#[derive(Debug, Clone, Default)]
pub struct KeptSource(Arc<Mutex<Option<SpilledSource>>>);

impl KeptSource {
    /// From now on the source is read from `spilled`.
    pub fn keep(&self, spilled: SpilledSource) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(spilled);
    }

    fn get(&self) -> Option<SpilledSource> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl PartialEq for KeptSource {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
impl Eq for KeptSource {}
impl Hash for KeptSource {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (Arc::as_ptr(&self.0) as usize).hash(state);
    }
}

/// The source of a MERGE that may run in passes, with its string and binary view columns as
/// plain ones: a pass keeps a fraction of the source's rows, and view arrays keep the buffers of
/// every row, so the pass's hash join would hold (and count) all of them; the plain copy is
/// also what the kept file holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeptSourceNode {
    input: LogicalPlan,
    kept: KeptSource,
    schema: DFSchemaRef,
}

/// `schema` with its view types as plain ones, qualifiers kept.
fn plain_df_schema(schema: &DFSchemaRef) -> DFResult<DFSchemaRef> {
    let fields = schema
        .iter()
        .map(|(q, f)| {
            let field = match plain_type(f.data_type()) {
                Some(t) => Arc::new(f.as_ref().clone().with_data_type(t)),
                None => f.clone(),
            };
            (q.cloned(), field)
        })
        .collect();
    Ok(Arc::new(DFSchema::new_with_metadata(
        fields,
        schema.metadata().clone(),
    )?))
}

impl KeptSourceNode {
    /// `input`, read from `kept` once it is kept.
    pub fn new(input: LogicalPlan, kept: KeptSource) -> DFResult<Self> {
        let schema = plain_df_schema(input.schema())?;
        Ok(Self {
            input,
            kept,
            schema,
        })
    }

    /// The kept copy.
    pub fn kept(&self) -> &KeptSource {
        &self.kept
    }
}

impl PartialOrd for KeptSourceNode {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        self.input.partial_cmp(&other.input)
    }
}

impl UserDefinedLogicalNodeCore for KeptSourceNode {
    fn name(&self) -> &str {
        "HudiMergeSource"
    }
    fn inputs(&self) -> Vec<&LogicalPlan> {
        vec![&self.input]
    }
    fn schema(&self) -> &DFSchemaRef {
        &self.schema
    }
    fn expressions(&self) -> Vec<Expr> {
        vec![]
    }
    fn fmt_for_explain(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "HudiMergeSource: computed once, kept for the passes")
    }
    fn with_exprs_and_inputs(
        &self,
        _exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> DFResult<Self> {
        Self::new(inputs.swap_remove(0), self.kept.clone())
    }
    // the columns the MERGE reads of its source, pushed into the source
    fn necessary_children_exprs(&self, output_columns: &[usize]) -> Option<Vec<Vec<usize>>> {
        Some(vec![output_columns.to_vec()])
    }
}

/// Runs its input (views cast to plain arrays), or once the source is kept reads the kept copy
/// (all of it from partition 0; it claims no distribution of its rows).
#[derive(Debug)]
pub struct KeptSourceExec {
    input: Arc<dyn ExecutionPlan>,
    kept: KeptSource,
    cache: Arc<PlanProperties>,
}

impl KeptSourceExec {
    /// `input`, read from `kept` once it is kept.
    pub fn new(input: Arc<dyn ExecutionPlan>, kept: KeptSource) -> Self {
        let cache = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(plain_schema(&input.schema())),
            Partitioning::UnknownPartitioning(input.output_partitioning().partition_count()),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Self { input, kept, cache }
    }

    /// The source as planned.
    pub fn input(&self) -> &Arc<dyn ExecutionPlan> {
        &self.input
    }
}

impl DisplayAs for KeptSourceExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HudiMergeSourceExec: computed once, kept for the passes")
    }
}

impl ExecutionPlan for KeptSourceExec {
    fn name(&self) -> &'static str {
        "HudiMergeSourceExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.cache
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

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(Self::new(
            crate::dml::merge_into::one_child("HudiMergeSourceExec", children)?,
            self.kept.clone(),
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> DFResult<SendableRecordBatchStream> {
        let schema = self.schema();
        let Some(spilled) = self.kept.get() else {
            let out = schema.clone();
            let rows = self.input.execute(partition, context)?.map(move |batch| {
                let batch = batch?;
                let columns = cast_columns(batch.columns(), &out)?;
                Ok(RecordBatch::try_new(out.clone(), columns)?)
            });
            return Ok(Box::pin(RecordBatchStreamAdapter::new(schema, rows)));
        };
        if partition > 0 {
            let empty = futures::stream::empty::<DFResult<RecordBatch>>();
            return Ok(Box::pin(RecordBatchStreamAdapter::new(schema, empty)));
        }
        // the file is read on a blocking thread, a couple of batches ahead
        let (tx, rx) = tokio::sync::mpsc::channel::<DFResult<RecordBatch>>(2);
        let out = schema.clone();
        tokio::task::spawn_blocking(move || {
            let read = || -> DFResult<()> {
                let file = std::fs::File::open(spilled.path())?;
                for batch in FileReader::try_new(std::io::BufReader::new(file), None)? {
                    let batch = batch?;
                    let columns = cast_columns(batch.columns(), &out)?;
                    if tx
                        .blocking_send(Ok(RecordBatch::try_new(out.clone(), columns)?))
                        .is_err()
                    {
                        break; // the pass stopped reading
                    }
                }
                Ok(())
            };
            if let Err(e) = read() {
                let _ = tx.blocking_send(Err(e));
            }
            drop(spilled);
        });
        let rows =
            futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|r| (r, rx)) });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, rows)))
    }
}
