//! [`HudiWriteNode`]: a write into a Hudi table whose mode the front-end decided (INSERT
//! OVERWRITE of named partitions), as a logical plan node, so that the plan a statement
//! shows is the plan that runs.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::{DFSchema, DFSchemaRef};
use datafusion::datasource::TableProvider;
use datafusion::error::Result as DFResult;
use datafusion::logical_expr::{Expr, LogicalPlan, UserDefinedLogicalNodeCore};

use hoodie_format::write::WriteSpec;

/// Writes its input into a Hudi table with a decided [`WriteSpec`].
#[derive(Clone)]
pub struct HudiWriteNode {
    table: String,
    provider: Arc<dyn TableProvider>,
    mode: WriteSpec,
    input: LogicalPlan,
    schema: DFSchemaRef,
}

impl HudiWriteNode {
    /// A node writing `input` into `provider` (table `table`) with `mode`.
    pub fn new(
        table: String,
        provider: Arc<dyn TableProvider>,
        mode: WriteSpec,
        input: LogicalPlan,
    ) -> Self {
        Self {
            table,
            provider,
            mode,
            input,
            schema: count_schema(),
        }
    }

    /// The table written.
    pub fn provider(&self) -> &Arc<dyn TableProvider> {
        &self.provider
    }

    /// How it is written.
    pub fn mode(&self) -> &WriteSpec {
        &self.mode
    }
}

/// DataFusion's one-column result of a DML: the rows it affected.
pub(crate) fn count_schema() -> DFSchemaRef {
    let schema = Schema::new(vec![Field::new("count", DataType::UInt64, false)]);
    Arc::new(DFSchema::try_from(schema).unwrap_or_else(|_| DFSchema::empty()))
}

impl fmt::Debug for HudiWriteNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HudiWrite: table={}", self.table)
    }
}

impl PartialEq for HudiWriteNode {
    fn eq(&self, other: &Self) -> bool {
        self.table == other.table && self.input == other.input
    }
}
impl Eq for HudiWriteNode {}
impl Hash for HudiWriteNode {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.table.hash(state);
        self.input.hash(state);
    }
}
impl PartialOrd for HudiWriteNode {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        match self.table.partial_cmp(&other.table) {
            Some(Ordering::Equal) => self.input.partial_cmp(&other.input),
            o => o,
        }
    }
}

impl UserDefinedLogicalNodeCore for HudiWriteNode {
    fn name(&self) -> &str {
        "HudiWrite"
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
        write!(
            f,
            "HudiWrite: table={}, operation={}",
            self.table,
            self.mode.operation.java_name().to_ascii_lowercase()
        )
    }
    fn with_exprs_and_inputs(
        &self,
        _exprs: Vec<Expr>,
        mut inputs: Vec<LogicalPlan>,
    ) -> DFResult<Self> {
        Ok(Self {
            input: inputs.swap_remove(0),
            ..self.clone()
        })
    }
}
