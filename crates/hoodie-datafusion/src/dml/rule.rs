//! UPDATE and DELETE on Hudi tables, planned from the full input plan.
//!
//! DataFusion's `update` / `delete_from` hooks receive only the WHERE conjuncts it could extract:
//! a subquery or a folded predicate reaches them as "no filters", which reads as "every row".
//! So an analyzer rule turns `LogicalPlan::Dml { Update | Delete }` on a Hudi table into a
//! [`HudiDmlNode`] whose input is the whole DataFusion plan of the rows to change (the target
//! snapshot, filtered by the WHERE as written, with the SET expressions applied) plus a delete
//! flag: a change set. The extension planner writes it through the keyed write path as one
//! commit. Nothing happens until the plan runs, and EXPLAIN shows it all.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::DFSchemaRef;
use datafusion::datasource::source_as_provider;
use datafusion::datasource::TableProvider;
use datafusion::error::Result as DFResult;
use datafusion::logical_expr::dml::{DmlStatement, WriteOp};
use datafusion::logical_expr::{
    cast, lit, Expr, Extension, LogicalPlan, LogicalPlanBuilder, UserDefinedLogicalNodeCore,
};
use datafusion::optimizer::analyzer::type_coercion::TypeCoercion;
use datafusion::optimizer::AnalyzerRule;

use crate::dml::merge_into::passes::{PassPlan, PassSetting};
use crate::dml::merge_into::source_keys::SourceKeys;
use crate::dml::write_node::count_schema;
use crate::dml::{base_rows, named_cast, struct_cast};
use crate::error::{HoodieError, ProtectedAssignment, ProtectedColumn};
use crate::options::write::SessionOptions;
use crate::provider::{as_hudi, HudiTableProvider};
use hoodie_format::keygen::KeyGenerator;
use hoodie_format::meta::RECORD_KEY;
use hoodie_format::write::{WriteSpec, WriteStatement};
use hoodie_format::write::{BASE_ROW, DELETE_FLAG};
use hoodie_format::TableType;

/// What a DML statement does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd)]
pub enum DmlKind {
    /// UPDATE.
    Update,
    /// DELETE.
    Delete,
    /// MERGE INTO.
    Merge,
}

/// A change set to write into a Hudi table.
#[derive(Clone)]
pub struct HudiDmlNode {
    pub(super) table: String,
    pub(super) kind: DmlKind,
    pub(super) provider: Arc<dyn TableProvider>,
    pub(super) input: LogicalPlan,
    pub(super) schema: DFSchemaRef,
    /// The data columns an UPDATE, or a MERGE's UPDATE clauses, assign (None for DELETE).
    pub(super) spec: WriteSpec,
    /// A MERGE whose join may run in passes: the state its plan shares with the passes
    /// ([`crate::dml::merge_into::passes`]).
    pub(super) passes: Option<PassPlan>,
    /// A MERGE into a table with a record key: the keys of its source, noted for the target's
    /// scan ([`crate::dml::merge_into::source_keys`]).
    pub(super) source_keys: Option<SourceKeys>,
}

impl fmt::Debug for HudiDmlNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HudiDml: table={}, op={:?}", self.table, self.kind)
    }
}

impl PartialEq for HudiDmlNode {
    fn eq(&self, other: &Self) -> bool {
        self.table == other.table && self.kind == other.kind && self.input == other.input
    }
}
impl Eq for HudiDmlNode {}
impl Hash for HudiDmlNode {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.table.hash(state);
        self.kind.hash(state);
        self.input.hash(state);
    }
}
impl PartialOrd for HudiDmlNode {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        match self.table.partial_cmp(&other.table) {
            Some(Ordering::Equal) => match self.kind.partial_cmp(&other.kind) {
                Some(Ordering::Equal) => self.input.partial_cmp(&other.input),
                o => o,
            },
            o => o,
        }
    }
}

impl UserDefinedLogicalNodeCore for HudiDmlNode {
    fn name(&self) -> &str {
        "HudiDml"
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
        write!(f, "HudiDml: op={:?} table={}", self.kind, self.table)?;
        if let Some(changed) = &self.spec.changed_columns {
            write!(f, " changes=[{}]", changed.join(", "))?;
        }
        Ok(())
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

/// The analyzer rule that plans UPDATE and DELETE on Hudi tables as change sets.
#[derive(Debug, Default)]
pub struct HudiDmlRule;

impl AnalyzerRule for HudiDmlRule {
    fn name(&self) -> &str {
        "hudi_dml"
    }

    fn analyze(&self, plan: LogicalPlan, config: &ConfigOptions) -> DFResult<LogicalPlan> {
        let session = SessionOptions::of(config);
        // the statement, or the statement under EXPLAIN ANALYZE (an Analyze node)
        plan.transform_down(|node| {
            let node = change_set_of(node, &session, config)?;
            let done =
                matches!(&node, LogicalPlan::Extension(e) if e.node.as_any().is::<HudiDmlNode>());
            Ok(if done {
                Transformed::new(node, true, TreeNodeRecursion::Jump)
            } else {
                Transformed::no(node)
            })
        })
        .map(|t| t.data)
    }
}

/// A `Dml` UPDATE, DELETE or MERGE on a Hudi table as a [`HudiDmlNode`] over its change set;
/// any other plan as it is.
fn change_set_of(
    plan: LogicalPlan,
    session: &SessionOptions,
    config: &ConfigOptions,
) -> DFResult<LogicalPlan> {
    let LogicalPlan::Dml(dml) = &plan else {
        return Ok(plan);
    };
    let provider = source_as_provider(&dml.target)?;
    let Some(hudi) = as_hudi(&provider) else {
        return Ok(plan);
    };
    let kind = match &dml.op {
        WriteOp::Update => DmlKind::Update,
        WriteOp::Delete => DmlKind::Delete,
        WriteOp::MergeInto(_) => DmlKind::Merge,
        // an INSERT stays DataFusion's; its struct values go into struct columns by position
        WriteOp::Insert(_) => {
            let mut dml = dml.clone();
            let input = Arc::unwrap_or_clone(dml.input);
            let input = struct_cast::by_position_in_plan(input)?;
            let table = dml.table_name.to_string();
            dml.input = Arc::new(named_cast::name_columns(input, &table)?);
            return Ok(LogicalPlan::Dml(dml));
        }
        _ => return Ok(plan),
    };
    let table = dml.table_name.to_string();
    hudi.refuse_write().map_err(HoodieError::into_datafusion)?;
    if kind == DmlKind::Update {
        check_assignments(hudi, &table, &dml.input).map_err(HoodieError::into_datafusion)?;
    }
    let changed = match &dml.op {
        WriteOp::Update => assigned_columns(&dml.input),
        WriteOp::MergeInto(merge) => Some(crate::dml::merge_into::plan::updated_columns(
            merge,
            &provider.schema(),
        )),
        _ => None,
    };
    let partial_merge = matches!(&dml.op, WriteOp::MergeInto(_))
        && assigns_some_columns(changed.as_deref(), &provider.schema());
    // the write, resolved once for the statement: the MERGE's rules and the sink read it
    let statement = WriteStatement::ChangeSet {
        delete: kind == DmlKind::Delete,
        changed_columns: changed.clone(),
        partial_merge,
    };
    let spec = hudi
        .write_spec(session, statement)
        .map_err(HoodieError::into_datafusion)?;
    // a MERGE into a table with a record key may run its join in passes
    let keyed = !hudi.table().config().record_key_fields().is_empty();
    let passes = match &dml.op {
        WriteOp::MergeInto(_) if keyed => {
            let setting = PassSetting::from_options(&hudi.write_options(session))
                .map_err(HoodieError::into_datafusion)?;
            PassPlan::of(setting)
        }
        _ => None,
    };
    let source_keys = matches!(&dml.op, WriteOp::MergeInto(_) if keyed).then(SourceKeys::default);
    let change_set = match &dml.op {
        WriteOp::MergeInto(merge) => {
            let plan = crate::dml::merge_into::plan::plan_merge(
                dml,
                merge,
                provider.clone(),
                hudi,
                &spec,
                (passes.as_ref(), source_keys.as_ref()),
            )?;
            // the rule runs after DataFusion's type coercion: the join and the clauses it
            // builds compare columns of both sides (a plain source string with a view one)
            TypeCoercion::new().analyze(plan, config)?
        }
        // the rows to change as the table's columns, plus the delete flag
        _ => update_or_delete_change_set(dml, hudi, &spec, kind, changed.as_deref())?,
    };
    let node = HudiDmlNode {
        table,
        kind,
        provider: provider.clone(),
        input: change_set,
        schema: count_schema(),
        spec,
        passes,
        source_keys,
    };
    Ok(LogicalPlan::Extension(Extension {
        node: Arc::new(node),
    }))
}

/// The change set of an UPDATE or DELETE (`kind`): its rows as the table's columns, plus the
/// delete flag. A DELETE carries only the locating meta columns of its rows; an UPDATE on
/// copy-on-write also its `changed` columns (a merge-on-read table logs whole records: an
/// UPDATE carries every column).
fn update_or_delete_change_set(
    dml: &DmlStatement,
    hudi: &HudiTableProvider,
    spec: &WriteSpec,
    kind: DmlKind,
    changed: Option<&[String]>,
) -> DFResult<LogicalPlan> {
    let table = dml.table_name.to_string();
    let input = struct_cast::by_position_in_plan(Arc::unwrap_or_clone(dml.input.clone()))?;
    let input = named_cast::name_columns(input, &table)?;
    // the rows' base rows, for record positions on the log block (merge-on-read, version 8+)
    let input = match base_rows::wanted(hudi, spec) {
        true => base_rows::add_to_rows(&input, hudi)?.unwrap_or(input),
        false => input,
    };
    let mor = hudi.table().config().table_type().ok() == Some(TableType::MergeOnRead);
    let carried = |f: &Field| match (changed, kind) {
        _ if f.name() == BASE_ROW => true,
        (_, DmlKind::Delete) => carries_column(hudi, &[], f, false),
        (Some(changed), _) if !mor => carries_column(hudi, changed, f, true),
        _ => true,
    };
    let stored_key = stored_key_expr(hudi, &input);
    let mut exprs: Vec<Expr> = Vec::with_capacity(input.schema().fields().len() + 1);
    for (qualifier, field) in input.schema().iter() {
        exprs.push(
            if let Some(key) = stored_key.as_ref().filter(|_| field.name() == RECORD_KEY) {
                key.clone().alias(RECORD_KEY)
            } else if carried(field) {
                Expr::Column(datafusion::common::Column::from((qualifier, field)))
            } else {
                lit(datafusion::common::ScalarValue::try_from(
                    field.data_type(),
                )?)
                .alias(field.name())
            },
        );
    }
    exprs.push(lit(kind == DmlKind::Delete).alias(DELETE_FLAG));
    LogicalPlanBuilder::from(input).project(exprs)?.build()
}

/// The record key of a stored row as an expression of the key column, when the table's keys
/// are exactly that column's text ([`KeyGenerator::key_column_of_stored_keys`]): the scan
/// then reads the key column the predicate usually reads anyway instead of
/// `_hoodie_record_key`, whose values are spread over every page. `input` is the change set's
/// input, the table's rows (an UPDATE may not assign the key column).
///
/// [`KeyGenerator::key_column_of_stored_keys`]: hoodie_format::keygen::KeyGenerator::key_column_of_stored_keys
pub(crate) fn stored_key_expr(hudi: &HudiTableProvider, input: &LogicalPlan) -> Option<Expr> {
    let keygen = KeyGenerator::from_config(hudi.table().config()).ok()?;
    let table = hudi.schema();
    let key = keygen.key_column_of_stored_keys(&table)?;
    let (qualifier, field) = input
        .schema()
        .iter()
        .find(|(_, f)| f.name() == key.name())?;
    Some(cast(
        Expr::Column(datafusion::common::Column::from((qualifier, field))),
        DataType::Utf8,
    ))
}

/// Whether `expr`, the projection of column `name` in an UPDATE's input, leaves it as stored.
fn keeps_column(expr: &Expr, name: &str) -> bool {
    match expr {
        Expr::Alias(a) => matches!(a.expr.as_ref(), Expr::Column(c) if c.name == name),
        Expr::Column(c) => c.name == name,
        _ => false,
    }
}

/// The columns an UPDATE assigns: those its input projection does not pass through as stored.
/// `None` when the input is not such a projection (then any column may change).
fn assigned_columns(input: &LogicalPlan) -> Option<Vec<String>> {
    let LogicalPlan::Projection(p) = input else {
        return None;
    };
    Some(
        p.expr
            .iter()
            .zip(p.schema.fields())
            .filter(|(expr, field)| !keeps_column(expr, field.name()))
            .map(|(_, field)| field.name().clone())
            .collect(),
    )
}

/// Whether an UPDATE's or DELETE's change set carries column `field` (given the columns an
/// UPDATE assigns; none for a DELETE): the meta columns that locate a row (key, partition path,
/// file name), the assigned columns, the key and partition columns, the ordering column when
/// `ordering` (a DELETE's rows are deleted by key without a comparison, so it goes without)
/// and non-nullable ones. The others go as NULL, so the scan never decodes them: the write
/// restamps the commit time and sequence id and takes every other value from the stored rows
/// (`WriteSpec::changed_columns`).
fn carries_column(
    hudi: &HudiTableProvider,
    changed: &[String],
    field: &Field,
    ordering: bool,
) -> bool {
    use hoodie_format::meta::{FILE_NAME, PARTITION_PATH};
    let cfg = hudi.table().config();
    let name = field.name();
    // a nested field (`nested.a2`) is carried in its top-level column
    let top = |n: &str| n.split('.').next().unwrap_or(n).eq_ignore_ascii_case(name);
    let named = |names: &[String]| names.iter().any(|n| top(n));
    !field.is_nullable()
        || [RECORD_KEY, PARTITION_PATH, FILE_NAME].contains(&name.as_str())
        || named(changed)
        || named(&cfg.record_key_fields())
        || named(&cfg.partition_fields())
        || (ordering && cfg.ordering_field().is_some_and(|o| top(&o)))
}

/// Whether `changed` names some of the data columns of `schema` but not all: a MERGE whose
/// UPDATE clauses assign such a set may log partial records.
fn assigns_some_columns(
    changed: Option<&[String]>,
    schema: &datafusion::arrow::datatypes::SchemaRef,
) -> bool {
    let data_columns = (schema.fields().iter())
        .filter(|f| !hoodie_format::schema::is_meta_column(f.name()))
        .count();
    changed.is_some_and(|c| !c.is_empty() && c.len() < data_columns)
}

/// Hudi's rule: an UPDATE may not assign the record key or a partition column.
fn check_assignments(
    hudi: &HudiTableProvider,
    table: &str,
    input: &LogicalPlan,
) -> Result<(), HoodieError> {
    let LogicalPlan::Projection(p) = input else {
        return Ok(());
    };
    let cfg = hudi.table().config();
    let keys = cfg.record_key_fields();
    let parts = cfg.partition_fields();
    for (expr, field) in p.expr.iter().zip(p.schema.fields()) {
        let name = field.name();
        if keeps_column(expr, name) {
            continue;
        }
        if hoodie_format::schema::is_meta_column(name) {
            return Err(ProtectedAssignment {
                kind: ProtectedColumn::Meta,
                column: name.to_string(),
                table: table.to_string(),
            }
            .into());
        }
        if keys.iter().any(|k| k.eq_ignore_ascii_case(name)) {
            return Err(ProtectedAssignment {
                kind: ProtectedColumn::RecordKey,
                column: name.to_string(),
                table: table.to_string(),
            }
            .into());
        }
        if parts.iter().any(|k| k.eq_ignore_ascii_case(name)) {
            return Err(ProtectedAssignment {
                kind: ProtectedColumn::Partition,
                column: name.to_string(),
                table: table.to_string(),
            }
            .into());
        }
    }
    Ok(())
}
