use datafusion::arrow::datatypes::{DataType, Field, Fields, Schema};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

use super::*;

fn spark_table() -> Schema {
    Schema::new(vec![
        Field::new("id", DataType::Int32, true),
        Field::new("isActive", DataType::Boolean, true),
        Field::new("byteField", DataType::Int8, true),
        Field::new(
            "structField",
            DataType::Struct(Fields::from(vec![Field::new(
                "field1",
                DataType::Utf8,
                true,
            )])),
            true,
        ),
    ])
}

fn rewritten(sql: &str, tables: &[(&str, Schema)], case_sensitive: bool) -> Result<String> {
    let mut stmt = Parser::new(&GenericDialect {})
        .try_with_sql(sql)
        .unwrap()
        .parse_statement()
        .unwrap();
    let mut names = Names::new(case_sensitive);
    for (t, s) in tables {
        names.add_table(t, s);
    }
    rewrite::collect_defined(&stmt, &mut names);
    rewrite::rewrite_statement(&mut stmt, &names)?;
    Ok(stmt.to_string())
}

#[test]
fn columns_match_case_insensitively_and_keep_their_spelling() {
    let t = [("t", spark_table())];
    assert_eq!(
        rewritten(
            "SELECT ID, isactive, T.BYTEFIELD FROM t WHERE IsActive",
            &t,
            false
        )
        .unwrap(),
        "SELECT \"id\", \"isActive\", T.\"byteField\" FROM t WHERE \"isActive\""
    );
    // quoted names match too (Spark's backticks), nested fields as well
    assert_eq!(
        rewritten("SELECT \"ISACTIVE\", structfield.FIELD1 FROM t", &t, false).unwrap(),
        "SELECT \"isActive\", \"structField\".\"field1\" FROM t"
    );
    // names nothing defines are left to DataFusion
    assert_eq!(
        rewritten("SELECT nope, count(*) FROM t", &t, false).unwrap(),
        "SELECT nope, count(*) FROM t"
    );
}

#[test]
fn aliases_keep_the_spelling_they_are_written_with() {
    let t = [("t", spark_table())];
    assert_eq!(
        rewritten("SELECT id AS MyId FROM t ORDER BY myid", &t, false).unwrap(),
        "SELECT \"id\" AS \"MyId\" FROM t ORDER BY \"MyId\""
    );
    assert_eq!(
        rewritten(
            "SELECT S.Name FROM (VALUES (1, 'a')) AS s(Id, Name)",
            &t,
            false
        )
        .unwrap(),
        "SELECT S.\"Name\" FROM (VALUES (1, 'a')) AS s (\"Id\", \"Name\")"
    );
}

#[test]
fn dml_targets_are_rewritten() {
    let t = [("t", spark_table())];
    assert_eq!(
        rewritten("UPDATE t SET ISACTIVE = false WHERE Id = 1", &t, false).unwrap(),
        "UPDATE t SET \"isActive\" = false WHERE \"id\" = 1"
    );
    assert_eq!(
        rewritten("INSERT INTO t (ID, ISACTIVE) VALUES (1, true)", &t, false).unwrap(),
        "INSERT INTO t (\"id\", \"isActive\") VALUES (1, true)"
    );
    let merge = "MERGE INTO t USING s ON t.ID = s.ID \
                 WHEN MATCHED THEN UPDATE SET t.ISACTIVE = s.X \
                 WHEN NOT MATCHED THEN INSERT (ID, isactive) VALUES (s.ID, s.X)";
    let s = Schema::new(vec![
        Field::new("ID", DataType::Int32, true),
        Field::new("x", DataType::Boolean, true),
    ]);
    let got = rewritten(merge, &[("t", spark_table()), ("s", s)], false).unwrap();
    assert!(got.contains("ON t.\"id\" = s.\"ID\""), "{got}");
    assert!(got.contains("UPDATE SET t.\"isActive\" = s.\"x\""), "{got}");
    assert!(
        got.contains("INSERT (\"id\", \"isActive\") VALUES (s.\"ID\", s.\"x\")"),
        "{got}"
    );
}

#[test]
fn two_columns_differing_only_in_case_are_ambiguous() {
    let s = Schema::new(vec![
        Field::new("a", DataType::Int32, true),
        Field::new("A", DataType::Int32, true),
    ]);
    let e = rewritten("SELECT a FROM t", &[("t", s)], false).unwrap_err();
    assert_eq!(
        e.to_string(),
        "column name `a` is ambiguous: table t has columns `a`, `A`, which differ only in case \
         (SET spark.sql.caseSensitive = true to tell them apart)"
    );
}

#[test]
fn case_sensitive_resolution_is_exact() {
    let t = [("t", spark_table())];
    assert_eq!(
        rewritten("SELECT isActive, ISACTIVE FROM t", &t, true).unwrap(),
        "SELECT \"isActive\", \"ISACTIVE\" FROM t"
    );
}
