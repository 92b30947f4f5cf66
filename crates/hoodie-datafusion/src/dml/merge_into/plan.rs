//! MERGE INTO on Hudi tables as one change set: the source joined to the target snapshot, one
//! CASE picking the first WHEN clause that holds for each row (Hudi's expression payload,
//! vectorised), the target columns computed per clause, and a delete flag. Rows no clause takes
//! are left alone. The change set is written as one commit, deletes included.

use std::sync::Arc;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Column, DFSchema, TableReference};
use datafusion::datasource::{provider_as_source, TableProvider};
use datafusion::error::Result as DFResult;
use datafusion::logical_expr::dml::{
    DmlStatement, MergeIntoAction, MergeIntoClauseKind, MergeIntoOp,
};
use datafusion::logical_expr::type_coercion::binary::comparison_coercion;
use datafusion::logical_expr::utils::{conjunction, split_conjunction};
use datafusion::logical_expr::ExprSchemable;
use datafusion::logical_expr::{
    cast, lit, BinaryExpr, Expr, Extension, JoinType, LogicalPlan, LogicalPlanBuilder, Operator,
};
use datafusion::scalar::ScalarValue;
use hoodie_format::schema::is_meta_column;

use crate::dml::merge_into::clauses::{
    pick_clause, refers_to_target, ClauseRules, TargetColumns, SOURCE_FLAG, TARGET_FLAG,
};
use crate::dml::merge_into::passes::kept::KeptSourceNode;
use crate::dml::merge_into::passes::udf::pass_filter;
use crate::dml::merge_into::passes::PassPlan;
use crate::dml::merge_into::source_keys::{may_match_source, SourceKeys, SourceKeysNode};
use crate::error::{HoodieError, MergeError};
use crate::provider::HudiTableProvider;
use hoodie_format::write::WriteSpec;

fn unwrap_cast(e: &Expr) -> &Expr {
    match e {
        Expr::Cast(c) => unwrap_cast(&c.expr),
        Expr::TryCast(c) => unwrap_cast(&c.expr),
        other => other,
    }
}

/// A column or a nested field of one (`get_field(t.nested, 'a1')`, as `t.nested.a1` plans) as
/// its relation and dotted path.
fn column_path(e: &Expr) -> Option<(Option<&TableReference>, String)> {
    match unwrap_cast(e) {
        Expr::Column(c) => Some((c.relation.as_ref(), c.name.clone())),
        Expr::ScalarFunction(f) if f.name() == "get_field" && f.args.len() == 2 => {
            let (relation, path) = column_path(&f.args[0])?;
            match &f.args[1] {
                Expr::Literal(ScalarValue::Utf8(Some(name)), _) => {
                    Some((relation, format!("{path}.{name}")))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether `e` is the target's column (or nested field) `key`.
fn is_target_key(e: &Expr, target: &TableReference, key: &str) -> bool {
    column_path(e).is_some_and(|(r, path)| r == Some(target) && path.eq_ignore_ascii_case(key))
}

/// Hudi's rules for the ON condition of a table with a record key: a plain equality between
/// each record key column and a source column (casts allowed on both sides). Returns those
/// equalities, one per key column. With `key_from_source` (optimized writes off) a key column
/// the ON condition leaves out is matched to the source's column of that name, as Hudi then
/// takes the whole key from the source.
fn check_on(
    on: &Expr,
    keys: &[String],
    target: &TableReference,
    key_from_source: Option<&LogicalPlan>,
) -> Result<Vec<Expr>, HoodieError> {
    let conjuncts = split_conjunction(on);
    let mut equalities = Vec::with_capacity(keys.len());
    for key in keys {
        let mut found = None;
        for c in &conjuncts {
            let Expr::BinaryExpr(BinaryExpr {
                left,
                op: Operator::Eq,
                right,
            }) = c
            else {
                continue;
            };
            for (t, s) in [(left, right), (right, left)] {
                let on_key = is_target_key(t, target, key);
                let source_column = column_path(s).is_some();
                if on_key && !refers_to_target(s, target) && !source_column {
                    return Err(MergeError::ConditionNotSimple {
                        found: c.to_string(),
                    }
                    .into());
                }
                if on_key && !refers_to_target(s, target) {
                    found.get_or_insert((*c).clone());
                } else if refers_to_target(t, target)
                    && t.column_refs()
                        .iter()
                        .any(|col| col.name.eq_ignore_ascii_case(key))
                    && column_path(t).is_none()
                {
                    return Err(MergeError::ConditionNotSimple {
                        found: c.to_string(),
                    }
                    .into());
                }
            }
        }
        let from_source = || {
            let source = key_from_source?;
            let column = source
                .schema()
                .columns()
                .into_iter()
                .find(|c| c.name.eq_ignore_ascii_case(key))?;
            let field = Column::new(Some(target.clone()), key);
            Some(Expr::Column(field).eq(Expr::Column(column)))
        };
        match found.or_else(from_source) {
            Some(eq) => equalities.push(eq),
            None if key_from_source.is_some() => {
                return Err(MergeError::KeyNotInSource {
                    key: key.to_string(),
                }
                .into())
            }
            None => {
                return Err(MergeError::KeyNotInCondition {
                    key: key.to_string(),
                    on: on.to_string(),
                }
                .into())
            }
        }
    }
    Ok(equalities)
}

/// How a source row finds its target row on a table with a record key, the way Hudi's index
/// tags it: by key equality only (rule 16: other ON predicates do not decide matching), and,
/// with a partition-scoped (non-global) index, in the partition the source row names (rule
/// 24: the source must project the partition columns by name).
fn key_match(
    key_equalities: Vec<Expr>,
    merge: &MergeIntoOp,
    source: &LogicalPlan,
    target: &TableReference,
    schema: &datafusion::arrow::datatypes::SchemaRef,
    partition_fields: &[String],
    index: &WriteSpec,
) -> Result<Expr, HoodieError> {
    let (global_index, update_partition_path) = (index.global_index, index.update_partition_path);
    let mut conjuncts = key_equalities;
    let source_columns = source.schema().columns();
    let mut missing = Vec::new();
    let mut partition_equalities = Vec::new();
    for p in partition_fields {
        let Some(field) = schema
            .fields()
            .iter()
            .find(|f| f.name().eq_ignore_ascii_case(p))
        else {
            continue;
        };
        match source_columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(p))
        {
            // NULL names the default partition (__HIVE_DEFAULT_PARTITION__) on both sides, as
            // Hudi's key generator makes it: a NULL source value matches a NULL target value
            Some(sc) => partition_equalities.push(Expr::BinaryExpr(BinaryExpr::new(
                Box::new(Expr::Column(Column::new(
                    Some(target.clone()),
                    field.name(),
                ))),
                Operator::IsNotDistinctFrom,
                Box::new(cast(Expr::Column(sc.clone()), field.data_type().clone())),
            ))),
            None => missing.push(p.clone()),
        }
    }
    // a global index finds the key in any partition; without moving records and without an
    // INSERT clause the source's partition value is never used
    let can_insert = merge
        .clauses
        .iter()
        .any(|c| matches!(c.action, MergeIntoAction::Insert { .. }));
    let exempt = global_index && !update_partition_path && !can_insert;
    if !missing.is_empty() && !exempt {
        return Err(MergeError::PartitionNotInSource {
            fields: missing.iter().map(|m| m.to_string()).collect(),
        }
        .into());
    }
    if !global_index {
        conjuncts.extend(partition_equalities);
    }
    Ok(conjunction(conjuncts).expect("a table with a record key has key equalities"))
}

/// The data columns (named as in `schema`) that a MERGE's UPDATE clauses assign: every other
/// column of a row it updates keeps the target's value, so a file group it only updates can be
/// spliced (`WriteSpec::changed_columns`).
pub(crate) fn updated_columns(
    merge: &MergeIntoOp,
    schema: &datafusion::arrow::datatypes::Schema,
) -> Vec<String> {
    schema
        .fields()
        .iter()
        .filter(|f| !is_meta_column(f.name()))
        .filter(|f| {
            merge.clauses.iter().any(|c| match &c.action {
                MergeIntoAction::Update(a) => {
                    a.iter().any(|(n, _)| n.eq_ignore_ascii_case(f.name()))
                }
                _ => false,
            })
        })
        .map(|f| f.name().clone())
        .collect()
}

/// Builds the change set of a MERGE into `hudi`; with `passes`, its join can run in passes
/// ([`crate::dml::merge_into::passes`]): both sides filtered to the pass that runs, the source
/// kept; with `source_keys`, the target's scan drops the rows no source key can match
/// ([`crate::dml::merge_into::source_keys`]).
pub fn plan_merge(
    dml: &DmlStatement,
    merge: &MergeIntoOp,
    provider: Arc<dyn TableProvider>,
    hudi: &HudiTableProvider,
    spec: &WriteSpec,
    (passes, source_keys): (Option<&PassPlan>, Option<&SourceKeys>),
) -> DFResult<LogicalPlan> {
    plan(dml, merge, provider, hudi, spec, (passes, source_keys))
        .map_err(HoodieError::into_datafusion)
}

/// The filters a MERGE puts on the two sides of its join, given the key columns of each.
#[derive(Default)]
struct SideFilters {
    /// The target's and the source's filter to the pass that runs.
    pass: Option<(Expr, Expr)>,
    /// The target's filter to the keys the source may have, and the source's keys noted.
    source_keys: Option<(Expr, Vec<Expr>, SourceKeys)>,
}

impl SideFilters {
    /// `target` and `source` filtered.
    fn apply(
        self,
        target: LogicalPlanBuilder,
        source: LogicalPlan,
    ) -> Result<(LogicalPlanBuilder, LogicalPlan), HoodieError> {
        let (mut target, mut source) = (target, source);
        if let Some((t, s)) = self.pass {
            target = target.filter(t)?;
            source = LogicalPlanBuilder::from(source).filter(s)?.build()?;
        }
        if let Some((t, keys, noted)) = self.source_keys {
            target = target.filter(t)?;
            source = LogicalPlan::Extension(Extension {
                node: Arc::new(SourceKeysNode::new(source, keys, noted)),
            });
        }
        Ok((target, source))
    }
}

/// The two sides of each record key equality of the ON condition, cast to the type the
/// equality compares them in: (target key columns, source expressions), in key order.
fn key_sides(
    equalities: &[Expr],
    target: &TableReference,
    target_schema: &DFSchema,
    source_schema: &DFSchema,
) -> Result<(Vec<Expr>, Vec<Expr>), HoodieError> {
    let mut t_side = Vec::with_capacity(equalities.len());
    let mut s_side = Vec::with_capacity(equalities.len());
    for eq in equalities {
        let Expr::BinaryExpr(BinaryExpr { left, right, .. }) = eq else {
            continue;
        };
        // a key side is the target's column or a nested field of one (`t.nested.a1`)
        let (t, s) = if refers_to_target(left, target) && !refers_to_target(right, target) {
            (left.as_ref().clone(), right.as_ref().clone())
        } else {
            (right.as_ref().clone(), left.as_ref().clone())
        };
        let tt = t.get_type(target_schema)?;
        let st = s.get_type(source_schema)?;
        let common = comparison_coercion(&tt, &st).unwrap_or(DataType::Utf8);
        t_side.push(cast(t, common.clone()));
        s_side.push(cast(s, common));
    }
    Ok((t_side, s_side))
}

/// `plan`'s columns and a column `flag` that is true on every row (NULL after an outer join
/// on the side that found no row).
fn with_flag(plan: LogicalPlanBuilder, flag: &str) -> Result<LogicalPlanBuilder, HoodieError> {
    let mut exprs: Vec<Expr> = plan
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    exprs.push(lit(true).alias(flag));
    Ok(plan.project(exprs)?)
}

fn plan(
    dml: &DmlStatement,
    merge: &MergeIntoOp,
    provider: Arc<dyn TableProvider>,
    hudi: &HudiTableProvider,
    upsert: &WriteSpec,
    (passes, source_keys): (Option<&PassPlan>, Option<&SourceKeys>),
) -> Result<LogicalPlan, HoodieError> {
    let target = dml.table_name.clone();
    let cfg = hudi.table().config();
    let keys = cfg.record_key_fields();
    let schema = provider.schema();
    let data_columns = hoodie_format::schema::data_column_names(&schema);
    let source = Arc::unwrap_or_clone(dml.input.clone());
    // with passes the source is computed once and kept for them
    let source = match passes.filter(|_| !keys.is_empty()) {
        Some(p) => LogicalPlan::Extension(Extension {
            node: Arc::new(KeptSourceNode::new(source, p.kept.clone())?),
        }),
        None => source,
    };
    let (target_plan, base_rows) = target_scan(&target, &provider, hudi, upsert)?;
    let not_by_source = merge
        .clauses
        .iter()
        .any(|c| c.kind == MergeIntoClauseKind::NotMatchedBySource);
    // every target row takes part in a MERGE with WHEN NOT MATCHED BY SOURCE
    let source_keys = source_keys.filter(|_| !not_by_source);
    let mut side_filters = SideFilters::default();
    let on = if keys.is_empty() {
        // without a record key the ON condition decides matching as written
        merge.on.clone()
    } else {
        let key_from_source = (!upsert.optimized_writes).then_some(&source);
        let equalities = check_on(&merge.on, &keys, &target, key_from_source)?;
        if passes.is_some() || source_keys.is_some() {
            let (t, s) = key_sides(&equalities, &target, target_plan.schema(), source.schema())?;
            if let Some(noted) = source_keys {
                let filter = may_match_source(t.clone(), noted);
                side_filters.source_keys = Some((filter, s.clone(), noted.clone()));
            }
            if let Some(p) = passes {
                side_filters.pass =
                    Some((pass_filter(t, &p.selector), pass_filter(s, &p.selector)));
            }
        }
        key_match(
            equalities,
            merge,
            &source,
            &target,
            &schema,
            &cfg.partition_fields(),
            upsert,
        )?
    };
    check_resolution(
        merge,
        &source,
        &target,
        &keys,
        cfg.ordering_field().as_deref(),
    )?;
    ClauseRules::of(cfg, upsert, &target, &data_columns)?.check(merge)?;
    let (target_plan, source) = side_filters.apply(target_plan, source)?;
    let target_plan = with_flag(target_plan, TARGET_FLAG)?.build()?;
    let joined = with_flag(LogicalPlanBuilder::from(source), SOURCE_FLAG)?.join_on(
        target_plan,
        if not_by_source {
            JoinType::Full
        } else {
            JoinType::Left
        },
        vec![on],
    )?;
    let picked = pick_clause(joined, merge, &hudi_clause_order(merge))?;
    // a stored row's key from the key column the join reads anyway, where that is exact
    let stored_key = hoodie_format::keygen::KeyGenerator::from_config(cfg)
        .ok()
        .and_then(|k| {
            k.key_column_of_stored_keys(&schema)
                .map(|f| f.name().clone())
        });
    let columns = TargetColumns {
        merge,
        target: &target,
        data_columns: &data_columns,
        picked: picked.schema(),
        stored_key,
        base_rows,
    };
    let out = columns.exprs(&schema)?;
    Ok(picked.project(out)?.build()?)
}

/// The scan of the MERGE's target, and whether its rows carry their base rows: on
/// merge-on-read tables of version 8 and later, so that the log blocks of the rows it writes
/// back carry record positions (`dml::base_rows`).
fn target_scan(
    target: &TableReference,
    provider: &Arc<dyn TableProvider>,
    hudi: &HudiTableProvider,
    spec: &WriteSpec,
) -> DFResult<(LogicalPlanBuilder, bool)> {
    let base_rows = crate::dml::base_rows::wanted(hudi, spec);
    let scanned: Arc<dyn TableProvider> = match base_rows {
        true => Arc::new(hudi.with_base_rows()),
        false => provider.clone(),
    };
    let scan = LogicalPlanBuilder::scan(target.clone(), provider_as_source(scanned), None)?;
    Ok((scan, base_rows))
}

/// The order in which Hudi's expression payload tries a MERGE's clauses: for a matched row its
/// UPDATE clauses first, in order, and its DELETE clause only after them (whatever the order
/// they are written in); the other clauses as written.
fn hudi_clause_order(merge: &MergeIntoOp) -> Vec<usize> {
    let matched_delete = |k: &usize| {
        let c = &merge.clauses[*k];
        c.kind.canonical() == MergeIntoClauseKind::Matched
            && matches!(c.action, MergeIntoAction::Delete)
    };
    let all = 0..merge.clauses.len();
    all.clone()
        .filter(|k| !matched_delete(k))
        .chain(all.filter(matched_delete))
        .collect()
}

/// Hudi 1.2's resolution of the record key and ordering fields in a MERGE's source: each is a
/// source column of that name, or what an UPDATE clause assigns it from a plain source column
/// (`id = s._id`, not `id = s._id + 0`). A table's ordering field must resolve in every MERGE
/// with one of Hudi's clauses (whatever its merge mode); its record key fields when it has an
/// UPDATE clause.
/// A MERGE has at most one matched DELETE clause.
fn check_resolution(
    merge: &MergeIntoOp,
    source: &LogicalPlan,
    target: &TableReference,
    keys: &[String],
    ordering: Option<&str>,
) -> Result<(), HoodieError> {
    let deletes = merge
        .clauses
        .iter()
        .filter(|c| {
            c.kind.canonical() == MergeIntoClauseKind::Matched
                && matches!(c.action, MergeIntoAction::Delete)
        })
        .count();
    if deletes > 1 {
        return Err(MergeError::TooManyDeletes { count: deletes }.into());
    }
    let columns = source.schema().columns();
    let updates: Vec<&Vec<(String, Expr)>> = merge
        .clauses
        .iter()
        .filter_map(|c| match &c.action {
            MergeIntoAction::Update(a) if c.kind.canonical() == MergeIntoClauseKind::Matched => {
                Some(a)
            }
            _ => None,
        })
        .collect();
    // a nested field (`nested.a2`) resolves through its top-level column
    let resolves = |field: &str| {
        let top = field.split('.').next().unwrap_or(field);
        columns.iter().any(|c| c.name.eq_ignore_ascii_case(top))
            || updates.iter().flat_map(|a| a.iter()).any(|(name, e)| {
                name.eq_ignore_ascii_case(top)
                    && matches!(unwrap_cast(e), Expr::Column(_))
                    && !refers_to_target(e, target)
            })
    };
    if !updates.is_empty() {
        if let Some(k) = keys.iter().find(|k| !resolves(k)) {
            return Err(MergeError::KeyNotInSource { key: k.to_string() }.into());
        }
    }
    // hoodie's WHEN NOT MATCHED BY SOURCE compares no source row: a MERGE of such clauses
    // alone has no source ordering value to resolve
    let hudi_clauses = merge
        .clauses
        .iter()
        .any(|c| c.kind.canonical() != MergeIntoClauseKind::NotMatchedBySource);
    if let Some(o) = ordering.filter(|o| hudi_clauses && !resolves(o)) {
        return Err(MergeError::OrderingNotInSource {
            field: o.to_string(),
        }
        .into());
    }
    Ok(())
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
