//! A MERGE's target scan keeps only the rows whose key the source may have
//! (`dml::merge_into::source_keys`), and the MERGE writes what it wrote without that filter.

mod common;

use common::{cells, session_with_table, text};
use hoodie_datafusion::{HoodieContext, StatementOutput};

const TARGET_ROWS: i64 = 20_000;

fn create(kind: &str) -> String {
    format!(
        "CREATE TABLE t (id BIGINT, `userName` STRING, price DOUBLE, ts BIGINT, dt STRING) USING hudi \
         PARTITIONED BY (dt) TBLPROPERTIES (type = '{kind}', primaryKey = 'id,userName', preCombineField = 'ts')"
    )
}

/// The output rows of the target's scan (the Parquet scan whose predicate holds the filter)
/// in `EXPLAIN ANALYZE sql`.
async fn target_scan_rows(ctx: &HoodieContext, sql: &str) -> u64 {
    let plan = text(ctx, &format!("EXPLAIN ANALYZE {sql}")).await;
    let line = plan
        .lines()
        .find(|l| l.contains("DataSourceExec") && l.contains("hoodie_merge_source_may_have"))
        .unwrap_or_else(|| panic!("no target scan with the source-key filter:\n{plan}"));
    let rows = line.split("output_rows=").nth(1).expect("output_rows");
    let figure: String = rows
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ' ' || *c == 'K')
        .collect();
    let figure = figure.trim();
    match figure.strip_suffix(" K") {
        Some(k) => (k.parse::<f64>().unwrap() * 1000.0) as u64,
        None => figure.parse().unwrap(),
    }
}

/// A session with table `t` of `kind` holding keys 0..20000 (`userName` 'u' || id % 3, price
/// id / 1000), and
/// source `s`: 100 keys of `t` (price 1000 + id, newer), 50 new ones, a NULL key and a key of
/// `t` with an older ordering value, which loses.
async fn setup(tmp: &std::path::Path, kind: &str) -> HoodieContext {
    let ctx = session_with_table(tmp, None, &create(kind), &tmp.join("t")).await;
    ctx.run(&format!(
        "INSERT INTO t SELECT id, concat('u', CAST(id % 3 AS STRING)), CAST(id AS DOUBLE) / 1000, 10, \
         CAST(id % 4 AS STRING) FROM (SELECT unnest(range(0, {TARGET_ROWS})) AS id)"
    ))
    .await
    .unwrap();
    ctx.run(
        "CREATE TABLE s AS \
         SELECT id, concat('u', CAST(id % 3 AS STRING)) AS \"userName\", 1000.0 + id AS price, 20 AS ts, \
         CAST(id % 4 AS STRING) AS dt FROM (SELECT unnest(range(100, 20000, 200)) AS id) \
         UNION ALL SELECT id, concat('u', CAST(id % 3 AS STRING)), 1000.0 + id, 20, CAST(id % 4 AS STRING) \
         FROM (SELECT unnest(range(20001, 20051)) AS id) \
         UNION ALL SELECT CAST(NULL AS BIGINT), 'u0', 1.0, 20, '0' \
         UNION ALL SELECT 7, 'u1', -1.0, 5, '3'",
    )
    .await
    .unwrap();
    ctx
}

const MERGE: &str = "MERGE INTO t USING s ON t.id = s.id AND t.userName = s.userName \
     WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED AND s.id IS NOT NULL THEN INSERT *";

async fn check_table(ctx: &HoodieContext) {
    let got = cells(
        ctx,
        "SELECT count(*), count(*) FILTER (WHERE price >= 1000), sum(CASE WHEN price >= 1000 THEN price - 1000 - id END), \
         max(price) FILTER (WHERE id = 7), max(id) FROM t",
    )
    .await;
    // 100 keys updated, 50 inserted, key 7's older update lost, the NULL key not inserted
    assert_eq!(
        got,
        vec![vec![
            (TARGET_ROWS + 50).to_string(),
            "150".into(),
            "0.0".into(),
            "0.007".into(),
            "20050".into()
        ]]
    );
}

#[tokio::test]
async fn the_target_scan_keeps_only_the_rows_the_source_may_match() {
    for kind in ["cow", "mor"] {
        let tmp = tempfile::tempdir().unwrap();
        let ctx = setup(tmp.path(), kind).await;
        // without the join's own dynamic filter, only the source-key filter drops target rows
        ctx.run("SET datafusion.optimizer.enable_join_dynamic_filter_pushdown = false")
            .await
            .unwrap();
        let read = target_scan_rows(&ctx, MERGE).await;
        assert!(
            (100..1_000).contains(&read),
            "{kind}: the target scan passed {read} of {TARGET_ROWS} rows on"
        );
        check_table(&ctx).await;
    }
}

#[tokio::test]
async fn in_passes_each_pass_keeps_the_rows_of_its_own_keys() {
    for kind in ["cow", "mor"] {
        let tmp = tempfile::tempdir().unwrap();
        let ctx = setup(tmp.path(), kind).await;
        ctx.run("SET hoodie.merge.join.passes = 4").await.unwrap();
        let StatementOutput::Changed(c) = ctx.run(MERGE).await.unwrap() else {
            panic!("MERGE returned rows");
        };
        assert_eq!((c.inserted, c.deleted), (50, 0), "{kind}");
        check_table(&ctx).await;
    }
}

#[tokio::test]
async fn not_matched_by_source_reads_every_target_row() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = setup(tmp.path(), "cow").await;
    let plan = text(
        &ctx,
        "EXPLAIN MERGE INTO t USING s ON t.id = s.id AND t.userName = s.userName \
         WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED BY SOURCE THEN DELETE",
    )
    .await;
    assert!(!plan.contains("hoodie_merge_source_may_have"), "{plan}");
    ctx.run(
        "MERGE INTO t USING s ON t.id = s.id AND t.userName = s.userName \
         WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED BY SOURCE THEN DELETE",
    )
    .await
    .unwrap();
    // the 100 keys updated and key 7 (matched, its older update lost) are left
    let got = cells(&ctx, "SELECT count(*), min(price) FROM t").await;
    assert_eq!(got, vec![vec!["101".to_string(), "0.007".to_string()]]);
}
