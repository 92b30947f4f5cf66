//! What a MERGE's clauses do: Hudi's rules for what each may assign ([`ClauseRules`]), which
//! clause each joined row takes ([`pick_clause`]), and the table columns it writes
//! ([`TargetColumns`]).

use datafusion::arrow::datatypes::DataType;
use datafusion::arrow::datatypes::{Field, SchemaRef};
use datafusion::common::{Column, DFSchema, TableReference};
use datafusion::logical_expr::conditional_expressions::CaseBuilder;
use datafusion::logical_expr::dml::{
    MergeIntoAction, MergeIntoClause, MergeIntoClauseKind, MergeIntoOp,
};
use datafusion::logical_expr::{cast, lit, when, Expr, ExprSchemable, LogicalPlanBuilder};
use datafusion::scalar::ScalarValue;
use hoodie_format::meta::{FILE_NAME, PARTITION_PATH, RECORD_KEY};
use hoodie_format::schema::is_meta_column;
use hoodie_format::table_config::{MergeMode, TableType};
use hoodie_format::write::WriteSpec;
use hoodie_format::write::{BASE_ROW, DELETE_FLAG};
use hoodie_format::TableConfig;
use std::ops::Not;

use crate::dml::{named_cast, struct_cast};
use crate::error::{HoodieError, MergeError};

pub(super) const TARGET_FLAG: &str = "__hoodie_t";
pub(super) const SOURCE_FLAG: &str = "__hoodie_s";
pub(super) const CLAUSE: &str = "__hoodie_clause";

/// Whether `e` reads a column of the target.
pub(super) fn refers_to_target(e: &Expr, target: &TableReference) -> bool {
    e.column_refs()
        .iter()
        .any(|c| c.relation.as_ref() == Some(target))
}

/// Hudi's rules for a MERGE's clauses on one table: what each clause must and may assign.
pub(super) struct ClauseRules<'a> {
    target: &'a TableReference,
    data_columns: &'a [String],
    keys: Vec<String>,
    /// The ordering field, under event-time ordering.
    ordering: Option<String>,
    mor: bool,
    /// Whether Hudi 1.2 writes partial updates here (table version 8 and up, no global index,
    /// `hoodie.spark.sql.merge.into.partial.updates` not false).
    partial_updates: bool,
}

impl<'a> ClauseRules<'a> {
    /// The rules on the table of `cfg`, written as `upsert` says.
    pub(super) fn of(
        cfg: &TableConfig,
        upsert: &WriteSpec,
        target: &'a TableReference,
        data_columns: &'a [String],
    ) -> Result<Self, HoodieError> {
        Ok(Self {
            target,
            data_columns,
            keys: cfg.record_key_fields(),
            ordering: cfg
                .ordering_field()
                .filter(|_| upsert.merge_mode == MergeMode::EventTimeOrdering),
            mor: cfg.table_type()? == TableType::MergeOnRead,
            partial_updates: cfg.version()? >= 8 && upsert.partial_updates,
        })
    }

    /// Refuses the first clause of `merge` that breaks a rule, as Hudi does.
    pub(super) fn check(&self, merge: &MergeIntoOp) -> Result<(), HoodieError> {
        merge.clauses.iter().try_for_each(|c| self.check_clause(c))
    }

    fn check_clause(&self, clause: &MergeIntoClause) -> Result<(), HoodieError> {
        let target = self.target;
        let assigned: Vec<String> = match &clause.action {
            MergeIntoAction::Update(a) => a.iter().map(|(c, _)| c.clone()).collect(),
            MergeIntoAction::Insert { columns, .. } if columns.is_empty() => {
                self.data_columns.to_vec()
            }
            MergeIntoAction::Insert { columns, .. } => columns.clone(),
            MergeIntoAction::Delete => return Ok(()),
        };
        if let Some(c) = assigned
            .iter()
            .find(|c| !self.data_columns.iter().any(|d| d.eq_ignore_ascii_case(c)))
        {
            return Err(MergeError::UnknownTargetColumn {
                column: c.to_string(),
                table: target.to_string(),
            }
            .into());
        }
        // a nested field (`nested.a2`) is assigned with its top-level column
        let has = |name: &str| {
            let top = name.split('.').next().unwrap_or(name);
            assigned.iter().any(|c| c.eq_ignore_ascii_case(top))
        };
        if let Some(o) = self.ordering.as_deref().filter(|o| !has(o)) {
            return Err(MergeError::OrderingNotAssigned {
                field: o.to_string(),
            }
            .into());
        }
        // an INSERT clause assigns the record key; so does a matched UPDATE clause on a
        // merge-on-read table where Hudi 1.2 writes no partial updates (table version 6, or a
        // global index)
        let must_assign_key = match clause.action {
            MergeIntoAction::Insert { .. } => true,
            MergeIntoAction::Update(_) => {
                self.mor
                    && !self.partial_updates
                    && clause.kind.canonical() == MergeIntoClauseKind::Matched
            }
            MergeIntoAction::Delete => false,
        };
        if let Some(k) = self.keys.iter().find(|k| must_assign_key && !has(k)) {
            return Err(MergeError::KeyNotAssigned {
                field: k.to_string(),
            }
            .into());
        }
        if let (MergeIntoAction::Update(a), true) = (&clause.action, self.mor) {
            if let Some((c, _)) = a.iter().find(|(_, e)| refers_to_target(e, target)) {
                return Err(MergeError::ReadsTargetInUpdate {
                    column: c.to_string(),
                }
                .into());
            }
        }
        Ok(())
    }
}

/// `joined` (source and target rows, each side's presence flag) with the column [`CLAUSE`]:
/// the clause each row takes, tried in `order`; rows no clause takes are left out.
pub(super) fn pick_clause(
    joined: LogicalPlanBuilder,
    merge: &MergeIntoOp,
    order: &[usize],
) -> Result<LogicalPlanBuilder, HoodieError> {
    let t_present = Expr::Column(Column::from_name(TARGET_FLAG)).is_not_null();
    let s_present = Expr::Column(Column::from_name(SOURCE_FLAG)).is_not_null();
    let mut case: Option<CaseBuilder> = None;
    for &k in order {
        let clause = &merge.clauses[k];
        let base = match clause.kind.canonical() {
            MergeIntoClauseKind::Matched => t_present.clone().and(s_present.clone()),
            MergeIntoClauseKind::NotMatchedBySource => {
                t_present.clone().and(s_present.clone().not())
            }
            _ => s_present.clone().and(t_present.clone().not()),
        };
        let cond = match &clause.predicate {
            Some(p) => base.and(p.clone()),
            None => base,
        };
        case = Some(match case {
            None => when(cond, lit(k as i32)),
            Some(mut b) => b.when(cond, lit(k as i32)),
        });
    }
    let clause_expr = case.expect("MERGE has at least one clause").end()?;
    let mut with_clause: Vec<Expr> = joined
        .schema()
        .columns()
        .into_iter()
        .map(Expr::Column)
        .collect();
    with_clause.push(clause_expr.alias(CLAUSE));
    Ok(joined
        .project(with_clause)?
        .filter(Expr::Column(Column::from_name(CLAUSE)).is_not_null())?)
}

/// The table columns a MERGE writes from the rows [`pick_clause`] gave a clause, and the
/// delete flag.
pub(super) struct TargetColumns<'a> {
    pub merge: &'a MergeIntoOp,
    pub target: &'a TableReference,
    pub data_columns: &'a [String],
    /// The schema of the rows with their clause.
    pub picked: &'a DFSchema,
    /// The target's column whose text is a stored row's record key, where that is exact.
    pub stored_key: Option<String>,
    /// Whether the target's rows carry their base rows ([`BASE_ROW`]), which the change set
    /// passes on.
    pub base_rows: bool,
}

impl TargetColumns<'_> {
    /// One expression per column of the table (`schema`), the base rows when the target's
    /// rows carry them, then the delete flag.
    pub(super) fn exprs(&self, schema: &SchemaRef) -> Result<Vec<Expr>, HoodieError> {
        let mut out: Vec<Expr> = Vec::with_capacity(schema.fields().len() + 2);
        for f in schema.fields() {
            out.push(self.column(f)?);
        }
        if self.base_rows {
            let rows = Column::new(Some(self.target.clone()), BASE_ROW);
            out.push(Expr::Column(rows).alias(BASE_ROW));
        }
        out.push(self.delete_flag().alias(DELETE_FLAG));
        Ok(out)
    }

    /// Whether the row's clause deletes it.
    fn delete_flag(&self) -> Expr {
        let deletes: Vec<Expr> = (self.merge.clauses.iter().enumerate())
            .filter(|(_, c)| matches!(c.action, MergeIntoAction::Delete))
            .map(|(k, _)| lit(k as i32))
            .collect();
        match deletes.is_empty() {
            true => lit(false),
            false => clause_col().in_list(deletes, false),
        }
    }
}

impl TargetColumns<'_> {
    /// Column `f`: the value the row's clause assigns, else the target's.
    fn column(&self, f: &Field) -> Result<Expr, HoodieError> {
        let current = Expr::Column(Column::new(Some(self.target.clone()), f.name()));
        if f.name() == RECORD_KEY {
            if let Some(k) = &self.stored_key {
                let key = Expr::Column(Column::new(Some(self.target.clone()), k));
                return Ok(cast(key, DataType::Utf8).alias(RECORD_KEY));
            }
        }
        if is_meta_column(f.name()) {
            // the write restamps the commit time and sequence id of every row it changes: only
            // the columns that locate a row are read from the target
            let locates = [RECORD_KEY, PARTITION_PATH, FILE_NAME].contains(&f.name().as_str());
            return Ok(if locates {
                current.alias(f.name())
            } else {
                lit(ScalarValue::try_from(f.data_type())?).alias(f.name())
            });
        }
        let mut b: Option<CaseBuilder> = None;
        for (k, clause) in self.merge.clauses.iter().enumerate() {
            if let Some(v) = self.assigned(clause, f)? {
                let cond = clause_col().eq(lit(k as i32));
                b = Some(match b {
                    None => when(cond, v),
                    Some(mut b) => b.when(cond, v),
                });
            }
        }
        // when every clause that keeps the row assigns the column, the target's value is never
        // used: leave it out so the target scan reads only the columns it needs
        let always_assigned = self.merge.clauses.iter().all(|c| match &c.action {
            MergeIntoAction::Delete => true,
            MergeIntoAction::Update(a) => a.iter().any(|(n, _)| n.eq_ignore_ascii_case(f.name())),
            MergeIntoAction::Insert { .. } => true,
        });
        let e = match b {
            Some(b) if always_assigned => b.end()?,
            Some(mut b) => b.otherwise(current)?,
            None => current,
        };
        Ok(e.alias(f.name()))
    }

    /// The value `clause` assigns to column `f`, cast to its type (None: it assigns none).
    fn assigned(&self, clause: &MergeIntoClause, f: &Field) -> Result<Option<Expr>, HoodieError> {
        let value = match &clause.action {
            MergeIntoAction::Update(a) => a
                .iter()
                .find(|(c, _)| c.eq_ignore_ascii_case(f.name()))
                .map(|(_, e)| e.clone()),
            MergeIntoAction::Insert { columns, values } => {
                let pos = if columns.is_empty() {
                    self.data_columns.iter().position(|c| c == f.name())
                } else {
                    columns
                        .iter()
                        .position(|c| c.eq_ignore_ascii_case(f.name()))
                };
                Some(
                    pos.and_then(|p| values.get(p).cloned())
                        .unwrap_or(Expr::Literal(ScalarValue::Null, None)),
                )
            }
            MergeIntoAction::Delete => None,
        };
        let Some(v) = value else {
            return Ok(None);
        };
        // DataFusion's MERGE planning may have cast the value to the column already
        let v = struct_cast::by_position_in_expr(v, self.picked)?.data;
        let from = v.get_type(self.picked)?;
        let v = struct_cast::cast_by_position(v, &from, f.data_type());
        // a value that does not fit names its column
        Ok(Some(named_cast::named(
            v,
            f.name(),
            &self.target.to_string(),
        )?))
    }
}

fn clause_col() -> Expr {
    Expr::Column(Column::from_name(CLAUSE))
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::datatypes::Schema;
    use datafusion::prelude::col;
    use hoodie_format::new_table::NewTable;
    use hoodie_format::write::WriteOptions;
    use hoodie_format::write::WriteStatement;

    fn config(table_type: TableType) -> TableConfig {
        let columns = Schema::new(vec![
            Field::new("id", DataType::Int32, false),
            Field::new("v", DataType::Utf8, true),
            Field::new("ts", DataType::Int64, true),
        ]);
        let mut new = NewTable::new("t", columns);
        new.table_type = table_type;
        new.record_keys = vec!["id".into()];
        new.ordering_field = Some("ts".into());
        new.merge_mode = MergeMode::EventTimeOrdering;
        // version 6: merge-on-read without partial updates
        new.version = 6;
        TableConfig::from_properties(new.properties().unwrap()).unwrap()
    }

    fn check(table_type: TableType, clause: MergeIntoClause) -> Result<(), String> {
        let cfg = config(table_type);
        let upsert = WriteSpec::resolve(
            &WriteOptions::new(Default::default(), &cfg),
            WriteStatement::ChangeSet {
                delete: false,
                changed_columns: None,
                partial_merge: false,
            },
        )
        .unwrap();
        let target = TableReference::bare("t");
        let data_columns = vec!["id".to_string(), "v".into(), "ts".into()];
        let merge = MergeIntoOp {
            on: lit(true),
            clauses: vec![clause],
        };
        ClauseRules::of(&cfg, &upsert, &target, &data_columns)
            .unwrap()
            .check(&merge)
            .map_err(|e| e.to_string())
    }

    fn update(assign: &[(&str, Expr)]) -> MergeIntoClause {
        MergeIntoClause {
            kind: MergeIntoClauseKind::Matched,
            predicate: None,
            action: MergeIntoAction::Update(
                assign
                    .iter()
                    .map(|(c, e)| (c.to_string(), e.clone()))
                    .collect(),
            ),
        }
    }

    fn insert(columns: &[&str]) -> MergeIntoClause {
        MergeIntoClause {
            kind: MergeIntoClauseKind::NotMatched,
            predicate: None,
            action: MergeIntoAction::Insert {
                columns: columns.iter().map(|c| c.to_string()).collect(),
                values: columns.iter().map(|_| lit(1)).collect(),
            },
        }
    }

    #[test]
    fn hudi_refuses_clauses_that_leave_out_the_key_or_the_ordering_field() {
        let cow = TableType::CopyOnWrite;
        let mor = TableType::MergeOnRead;
        // an INSERT must assign the record key, every clause the ordering field
        let err = check(cow, insert(&["v", "ts"])).unwrap_err();
        assert!(err.contains("record key field `id`"), "{err}");
        let err = check(cow, update(&[("v", lit("x"))])).unwrap_err();
        assert!(err.contains("ordering field `ts`"), "{err}");
        assert!(check(cow, update(&[("v", lit("x")), ("TS", lit(2))])).is_ok());
        assert!(
            check(cow, insert(&[])).is_ok(),
            "INSERT * assigns every column"
        );
        // on merge-on-read (version 6: no partial updates) a matched UPDATE assigns the key
        // too, and cannot read the target
        let err = check(mor, update(&[("v", lit("x")), ("ts", lit(2))])).unwrap_err();
        assert!(err.contains("record key field `id`"), "{err}");
        let reads_target = col("t.v");
        let err = check(
            mor,
            update(&[("id", lit(1)), ("v", reads_target), ("ts", lit(2))]),
        )
        .unwrap_err();
        assert!(err.contains("cannot read target columns"), "{err}");
        // a column the table lacks
        let err = check(cow, update(&[("w", lit(1)), ("ts", lit(2))])).unwrap_err();
        assert!(err.contains("cannot assign `w`"), "{err}");
        // a DELETE assigns nothing
        let delete = MergeIntoClause {
            kind: MergeIntoClauseKind::Matched,
            predicate: None,
            action: MergeIntoAction::Delete,
        };
        assert!(check(mor, delete).is_ok());
    }
}
