//! Time travel and incremental reads of Spark-written tables (the rows the fixtures' README
//! asserts, by table version), and Hudi's refusal to read as of an instant a write that has
//! not completed may still change.

mod common;

use common::fixtures::{extract, open, rows};
use hoodie_datafusion::{HoodieConfig, HoodieContext};

async fn ctx(tmp: &std::path::Path) -> HoodieContext {
    HoodieContext::new(HoodieConfig::new(tmp.join("wh")))
        .await
        .unwrap()
}

#[tokio::test]
async fn spark_tables_as_of_their_first_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = ctx(tmp.path()).await;
    // v6 merge-on-read, Avro log block: rider-D's fare before its update
    open(
        &ctx,
        "t6",
        &extract(tmp.path(), "quickstart_trips_table/mor/avro/v6_trips_8i1u"),
    )
    .await;
    let sql = "SELECT fare FROM t6 TIMESTAMP AS OF '20250331030642808' WHERE rider = 'rider-D'";
    assert_eq!(rows(&ctx, sql).await.unwrap(), ["33.9"]);
    let sql = "SELECT fare FROM t6 WHERE rider = 'rider-D'";
    assert_eq!(rows(&ctx, sql).await.unwrap(), ["25.0"]);
    // v8 merge-on-read with a compaction: riders F and J before they were deleted
    open(
        &ctx,
        "t8",
        &extract(
            tmp.path(),
            "quickstart_trips_table/mor/avro/v8_trips_8i3u1d",
        ),
    )
    .await;
    let sql = "SELECT rider, fare FROM t8 TIMESTAMP AS OF '20251220210108078' \
               WHERE rider IN ('rider-F', 'rider-J') ORDER BY rider";
    assert_eq!(
        rows(&ctx, sql).await.unwrap(),
        ["rider-F,34.15", "rider-J,17.85"]
    );
    let sql = "SELECT count(*) FROM t8 WHERE rider IN ('rider-F', 'rider-J')";
    assert_eq!(rows(&ctx, sql).await.unwrap(), ["0"]);
}

#[tokio::test]
async fn spark_tables_incremental_windows() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = ctx(tmp.path()).await;
    let base = extract(
        tmp.path(),
        "sample_table/cow/v6_simplekeygen_nonhivestyle_overwritetable",
    );
    open(&ctx, "ow6", &base).await;
    let (c1, c2, c3) = (
        "20240707001301554",
        "20240707001302376",
        "20240707001303088",
    );
    let window = |b: &str, e: Option<&str>| {
        let end = e.map(|e| format!(", '{e}'")).unwrap_or_default();
        format!("SELECT id, name, isActive FROM hudi_table_changes('ow6', 'latest_state', '{b}'{end}) ORDER BY id")
    };
    let cases: [(&str, Option<&str>, &[&str]); 5] = [
        (
            "000",
            Some(c1),
            &["1,Alice,true", "2,Bob,false", "3,Carol,true"],
        ),
        (c1, Some(c2), &["1,Alice,false", "4,Diana,true"]),
        (c2, Some(c3), &["4,Diana,false"]),
        (c1, None, &["4,Diana,false"]),
        (c3, None, &[]),
    ];
    for (b, e, want) in cases {
        assert_eq!(
            rows(&ctx, &window(b, e)).await.unwrap(),
            want,
            "({b}, {e:?}]"
        );
    }
    // table version 9 ranges on completion times
    open(
        &ctx,
        "ow9",
        &extract(tmp.path(), "sample_table/cow/v9_txns_simple_overwrite"),
    )
    .await;
    let sql = "SELECT txn_id FROM hudi_table_changes('ow9', 'latest_state', \
               '20260403183958943', '20260403184000568') ORDER BY txn_id";
    assert_eq!(rows(&ctx, sql).await.unwrap(), ["TXN-007", "TXN-008"]);
    // the same bounds as requested times name other commits: (c1 requested, c2 requested]
    // holds c1 (completed after its requested time) and nothing of c2
    let sql = "SELECT count(*) FROM hudi_table_changes('ow9', 'latest_state', \
               '20260403183955124', '20260403183959838')";
    assert_eq!(rows(&ctx, sql).await.unwrap(), ["6"]);
}

#[tokio::test]
async fn time_travel_past_a_write_that_has_not_completed_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = ctx(tmp.path()).await;
    ctx.run("CREATE TABLE p (id INT, v STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')")
        .await
        .unwrap();
    ctx.run("INSERT INTO p VALUES (1, 'a')").await.unwrap();
    let first = rows(&ctx, "SELECT _hoodie_commit_time FROM p")
        .await
        .unwrap();
    // a write that started (requested and inflight) and never completed
    let hoodie = common::timeline_dir(&tmp.path().join("wh/p"));
    for f in [
        "20991231000000000.commit.requested",
        "20991231000000000.inflight",
    ] {
        std::fs::write(hoodie.join(f), b"").unwrap();
    }
    let sql = format!("SELECT v FROM p TIMESTAMP AS OF '{}'", first[0]);
    assert_eq!(rows(&ctx, &sql).await.unwrap(), ["a"]);
    let e = rows(&ctx, "SELECT v FROM p TIMESTAMP AS OF '2999-01-01'")
        .await
        .unwrap_err();
    assert!(
        e.contains("Time travel's timestamp '29990101000000000' must be earlier than the first incomplete commit timestamp '20991231000000000'."),
        "{e}"
    );
}
