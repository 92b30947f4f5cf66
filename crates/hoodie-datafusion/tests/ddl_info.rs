//! SHOW CREATE TABLE gives a statement that creates a table like the one shown: run with a new
//! name and location, it makes a table with the same columns, key, ordering field, type,
//! partitioning, CDC and kept write options.

mod common;

use common::{session_with_table, text};

#[tokio::test]
async fn show_create_table_round_trips() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let create = "CREATE TABLE t (id INT, \"userName\" STRING, price DECIMAL(10,2), tags ARRAY<STRING>, ts BIGINT, \"Dt\" STRING) USING hudi PARTITIONED BY (\"Dt\") TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts', 'hoodie.table.cdc.enabled' = 'true', 'hoodie.cleaner.commits.retained' = '4', 'hoodie.compact.inline' = 'false')";
    let ctx = session_with_table(tmp.path(), None, create, &loc).await;
    let shown = text(&ctx, "SHOW CREATE TABLE t").await;
    // the one cell of the printed table, its lines trimmed of the borders
    let statement: String = shown
        .lines()
        .filter(|l| l.starts_with('|') && !l.contains("createtab_stmt"))
        .map(|l| {
            l.trim_matches('|')
                .trim_end()
                .trim_start_matches(' ')
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(statement.starts_with("CREATE TABLE t ("), "{statement}");
    for part in [
        "`userName` string",
        "price decimal(10,2)",
        "tags array<string>",
        "PARTITIONED BY (`Dt`)",
        "'primaryKey' = 'id'",
        "'preCombineField' = 'ts'",
        "'type' = 'mor'",
        "'hoodie.table.cdc.enabled' = 'true'",
        "'hoodie.cleaner.commits.retained' = '4'",
        "'hoodie.compact.inline' = 'false'",
    ] {
        assert!(statement.contains(part), "{part} in {statement}");
    }
    let copy_loc = tmp.path().join("copy");
    let again = statement
        .replacen("CREATE TABLE t (", "CREATE TABLE copy (", 1)
        .replace(&loc.display().to_string(), &copy_loc.display().to_string());
    ctx.run(&again).await.unwrap();
    assert_eq!(
        text(&ctx, "DESCRIBE t").await,
        text(&ctx, "DESCRIBE copy").await
    );
    for key in [
        "primaryKey",
        "preCombineField",
        "hoodie.table.type",
        "hoodie.table.cdc.enabled",
        "hoodie.table.partition.fields",
        "hoodie.cleaner.commits.retained",
    ] {
        let of = |t: &str| format!("SHOW TBLPROPERTIES {t} ('{key}')");
        let (a, b) = (text(&ctx, &of("t")).await, text(&ctx, &of("copy")).await);
        assert_eq!(a, b.replace("copy", "t"), "{key}");
        assert!(!a.contains("does not have"), "{a}");
    }
}
