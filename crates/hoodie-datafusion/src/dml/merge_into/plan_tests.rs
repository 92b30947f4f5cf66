//! Unit tests of the MERGE planner's rules on logical expressions: the ON condition's key
//! equalities (and what it refuses), the order Hudi tries clauses in, the columns UPDATE
//! clauses assign, and fields named through `get_field`.

use datafusion::arrow::datatypes::{Field, Schema};
use datafusion::logical_expr::dml::MergeIntoClause;
use datafusion::prelude::get_field;

use super::*;

fn t() -> TableReference {
    TableReference::bare("t")
}

fn target(name: &str) -> Expr {
    Expr::Column(Column::new(Some(t()), name))
}

fn source(name: &str) -> Expr {
    Expr::Column(Column::new(Some(TableReference::bare("s")), name))
}

fn keys(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

fn clause(kind: MergeIntoClauseKind, action: MergeIntoAction) -> MergeIntoClause {
    MergeIntoClause {
        kind,
        predicate: None,
        action,
    }
}

fn update(columns: &[&str]) -> MergeIntoAction {
    MergeIntoAction::Update(columns.iter().map(|c| (c.to_string(), lit(1))).collect())
}

#[test]
fn the_on_condition_gives_one_equality_per_key_column_whatever_its_side_or_case() {
    // the other predicates do not decide matching (Hudi matches by key)
    let on = target("id").eq(source("sid")).and(target("v").gt(lit(1)));
    let found = check_on(&on, &keys(&["id"]), &t(), None).unwrap();
    assert_eq!(found, vec![target("id").eq(source("sid"))]);
    let on = source("sid").eq(target("ID"));
    let found = check_on(&on, &keys(&["id"]), &t(), None).unwrap();
    assert_eq!(found, vec![source("sid").eq(target("ID"))]);
    // casts on either side are allowed
    let on = cast(target("id"), DataType::Int64).eq(cast(source("sid"), DataType::Int64));
    assert_eq!(check_on(&on, &keys(&["id"]), &t(), None).unwrap().len(), 1);
}

#[test]
fn a_key_compared_with_an_expression_or_left_out_is_refused() {
    let on = target("id").eq(source("sid") + lit(1));
    let e = check_on(&on, &keys(&["id"]), &t(), None).unwrap_err();
    assert!(
        matches!(e, HoodieError::Merge(MergeError::ConditionNotSimple { .. })),
        "{e}"
    );
    let on = (target("id") + lit(0)).eq(source("sid"));
    let e = check_on(&on, &keys(&["id"]), &t(), None).unwrap_err();
    assert!(
        matches!(e, HoodieError::Merge(MergeError::ConditionNotSimple { .. })),
        "{e}"
    );
    let on = target("id").eq(source("sid"));
    let e = check_on(&on, &keys(&["id", "region"]), &t(), None).unwrap_err();
    assert!(
        matches!(&e, HoodieError::Merge(MergeError::KeyNotInCondition { key, .. }) if key == "region"),
        "{e}"
    );
}

#[test]
fn with_the_key_from_the_source_a_key_the_condition_leaves_out_matches_its_source_column() {
    let plan = LogicalPlanBuilder::values(vec![vec![lit(1), lit("eu")]])
        .unwrap()
        .project(vec![
            Expr::Column(Column::from_name("column1")).alias("sid"),
            Expr::Column(Column::from_name("column2")).alias("Region"),
        ])
        .unwrap()
        .build()
        .unwrap();
    let on = target("id").eq(source("sid"));
    let found = check_on(&on, &keys(&["id", "region"]), &t(), Some(&plan)).unwrap();
    assert_eq!(
        found,
        vec![
            target("id").eq(source("sid")),
            target("region").eq(Expr::Column(Column::from_name("Region"))),
        ]
    );
    let e = check_on(&on, &keys(&["id", "day"]), &t(), Some(&plan)).unwrap_err();
    assert!(
        matches!(&e, HoodieError::Merge(MergeError::KeyNotInSource { key }) if key == "day"),
        "{e}"
    );
}

#[test]
fn a_matched_delete_is_tried_after_the_updates_whatever_its_place() {
    let merge = MergeIntoOp {
        on: lit(true),
        clauses: vec![
            clause(MergeIntoClauseKind::Matched, MergeIntoAction::Delete),
            clause(MergeIntoClauseKind::Matched, update(&["v"])),
            clause(
                MergeIntoClauseKind::NotMatched,
                MergeIntoAction::Insert {
                    columns: vec![],
                    values: vec![],
                },
            ),
            clause(MergeIntoClauseKind::Matched, update(&["w"])),
        ],
    };
    assert_eq!(hudi_clause_order(&merge), vec![1, 2, 3, 0]);
}

#[test]
fn updated_columns_are_the_data_columns_an_update_clause_assigns() {
    let schema = Schema::new(vec![
        Field::new("_hoodie_commit_time", DataType::Utf8, true),
        Field::new("id", DataType::Int32, false),
        Field::new("Price", DataType::Float64, true),
        Field::new("note", DataType::Utf8, true),
    ]);
    let merge = MergeIntoOp {
        on: lit(true),
        clauses: vec![
            clause(
                MergeIntoClauseKind::Matched,
                update(&["price", "_hoodie_commit_time"]),
            ),
            clause(MergeIntoClauseKind::Matched, MergeIntoAction::Delete),
        ],
    };
    assert_eq!(updated_columns(&merge, &schema), vec!["Price".to_string()]);
}

#[test]
fn a_nested_field_is_named_by_its_dotted_path() {
    let e = get_field(target("nested"), "a1");
    assert_eq!(column_path(&e), Some((Some(&t()), "nested.a1".to_string())));
    assert!(is_target_key(&e, &t(), "NESTED.A1"));
    assert_eq!(column_path(&(target("id") + lit(1))), None);
}
