//! A write on workers whose commit stands: datafusion-distributed ends a statement by draining
//! its workers (their last messages and metrics), after the head stage has finished, so a
//! worker lost once the write's sink had committed fails the statement that committed. The
//! sink's count comes out only after its commit; an error after it is that wind-down's, and
//! the statement's outcome is the commit.

use std::fmt;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use futures::{Stream, StreamExt};

/// Passes a distributed write's output through, ending it at the sink's count.
#[derive(Debug)]
pub(crate) struct CommittedExec {
    input: Arc<dyn ExecutionPlan>,
}

impl CommittedExec {
    /// `input`: a distributed plan whose head is a write's sink.
    pub(crate) fn new(input: Arc<dyn ExecutionPlan>) -> Self {
        Self { input }
    }
}

impl DisplayAs for CommittedExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HudiCommittedExec")
    }
}

impl ExecutionPlan for CommittedExec {
    fn name(&self) -> &str {
        "HudiCommittedExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match <[_; 1]>::try_from(children) {
            Ok([input]) => Ok(Arc::new(Self::new(input))),
            Err(_) => Err(DataFusionError::Internal(
                "HudiCommittedExec has one child".into(),
            )),
        }
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let input = self.input.execute(partition, context)?;
        let schema = input.schema();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            schema,
            until_counted(input),
        )))
    }
}

/// `output`, a sink's, up to and with its count: nothing after it (the count ends the write).
fn until_counted(
    output: impl Stream<Item = Result<RecordBatch>> + Send + 'static,
) -> impl Stream<Item = Result<RecordBatch>> + Send + 'static {
    let mut counted = false;
    output.take_while(move |item| {
        let go_on = !counted;
        counted |= item.as_ref().is_ok_and(|b| b.num_rows() > 0);
        futures::future::ready(go_on)
    })
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::{ArrayRef, UInt64Array};

    use super::*;

    fn count(n: u64) -> RecordBatch {
        let counts = Arc::new(UInt64Array::from(vec![n])) as ArrayRef;
        RecordBatch::try_from_iter([("count", counts)]).unwrap()
    }

    #[tokio::test]
    async fn an_error_after_the_count_is_dropped_and_one_before_it_is_not() {
        let lost = || DataFusionError::Execution("a worker was lost".into());
        let after = futures::stream::iter(vec![Ok(count(3)), Err(lost())]);
        let out: Vec<_> = until_counted(after).collect().await;
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].as_ref().unwrap(), &count(3));

        let before = futures::stream::iter(vec![Err(lost()), Ok(count(3))]);
        let out: Vec<_> = until_counted(before).collect().await;
        assert!(out[0].is_err(), "{out:?}");
    }
}
