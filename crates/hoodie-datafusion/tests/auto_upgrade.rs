//! `hoodie.write.auto.upgrade`: a write in a session whose `hoodie.write.table.version` is above
//! its table's version upgrades the table first (as `CALL upgrade_table` does), then writes the
//! same rows it would have written to the old version; with the option off, or without the
//! session asking, the table keeps its version; an upgrade that cannot run fails the write
//! with nothing changed.

mod common;

use common::{cells, files_under, reader, session_with_table, set_property, UNUPGRADABLE};
use hoodie_datafusion::HoodieContext;

/// A version 6 table `t` (merge-on-read when `mor`) at `loc` with three rows.
async fn version_6_table(tmp: &std::path::Path, loc: &std::path::Path, mor: bool) -> HoodieContext {
    let kind = if mor { "mor" } else { "cow" };
    let create = format!(
        "CREATE TABLE t (Id INT, Name STRING, ts BIGINT, dt STRING) USING hudi PARTITIONED BY (dt) \
         TBLPROPERTIES (type = '{kind}', primaryKey = 'Id', preCombineField = 'ts', \
         'hoodie.write.table.version' = '6')"
    );
    let ctx = session_with_table(tmp, None, &create, loc).await;
    ctx.run("INSERT INTO t VALUES (1, 'a', 1, 'x'), (2, NULL, 1, 'y'), (3, 'c', 1, 'x')")
        .await
        .unwrap();
    ctx
}

fn version(loc: &std::path::Path) -> String {
    let p = std::fs::read_to_string(loc.join(".hoodie/hoodie.properties")).unwrap();
    p.lines()
        .find_map(|l| l.strip_prefix("hoodie.table.version="))
        .unwrap()
        .to_string()
}

const ROWS: &str = "SELECT Id, Name, ts, dt FROM t ORDER BY Id, ts";

const WRITES: [&str; 5] = [
    "INSERT INTO t VALUES (4, 'd', 2, 'z'), (1, 'A', 2, 'x')",
    "INSERT OVERWRITE t SELECT Id, Name, ts + 1, dt FROM t WHERE Id < 3",
    "UPDATE t SET Name = 'B', ts = 5 WHERE Id = 2",
    "DELETE FROM t WHERE Id = 3",
    "MERGE INTO t USING (SELECT 1 AS Id, 'A' AS Name, CAST(7 AS BIGINT) AS ts, 'x' AS dt) s \
     ON t.Id = s.Id WHEN MATCHED THEN UPDATE SET *",
];

/// Every write statement upgrades the table of version 6 when the session asks for 9, and
/// leaves the rows its twin (the same statement with `hoodie.write.auto.upgrade = false`)
/// leaves on a table that stays at 6; the write after goes on at 9.
#[tokio::test]
async fn each_write_upgrades_when_the_session_asks_for_a_higher_version() {
    for mor in [false, true] {
        for write in WRITES {
            let tmp = tempfile::tempdir().unwrap();
            let (up, kept) = (tmp.path().join("up"), tmp.path().join("kept"));
            let a = version_6_table(&tmp.path().join("a"), &up, mor).await;
            let b = version_6_table(&tmp.path().join("b"), &kept, mor).await;
            a.run("SET hoodie.write.table.version = 9").await.unwrap();
            b.run("SET hoodie.write.table.version = 9").await.unwrap();
            b.run("SET hoodie.write.auto.upgrade = false")
                .await
                .unwrap();
            a.run(write).await.unwrap();
            b.run(write).await.unwrap();
            assert_eq!(version(&up), "9", "{write} (mor: {mor})");
            assert_eq!(version(&kept), "6", "{write} (mor: {mor})");
            assert!(up.join(".hoodie/timeline").is_dir(), "{write}");
            assert_eq!(cells(&a, ROWS).await, cells(&b, ROWS).await, "{write}");
            // the next write is an ordinary version 9 write
            let next = "UPDATE t SET ts = ts + 10 WHERE Id = 1";
            a.run(next).await.unwrap();
            b.run(next).await.unwrap();
            assert_eq!(cells(&a, ROWS).await, cells(&b, ROWS).await, "{write}");
            assert_eq!(version(&up), "9");
        }
    }
}

/// Without a version set in the session the table keeps its own, whatever Hudi's default (a
/// table created as version 6 stays so for its Hudi 0.x readers); a version at or below the
/// table's, an EXPLAIN and a read change nothing either.
#[tokio::test]
async fn a_table_keeps_its_version_unless_the_session_asks_for_a_higher_one() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    drop(version_6_table(tmp.path(), &loc, false).await);
    let ctx = reader(tmp.path(), &loc).await;
    ctx.run("INSERT INTO t VALUES (5, 'e', 1, 'x')")
        .await
        .unwrap();
    assert_eq!(version(&loc), "6");
    ctx.run("SET hoodie.write.table.version = 6").await.unwrap();
    ctx.run("DELETE FROM t WHERE Id = 5").await.unwrap();
    assert_eq!(version(&loc), "6");
    ctx.run("SET hoodie.write.table.version = 8").await.unwrap();
    ctx.run("EXPLAIN INSERT INTO t VALUES (6, 'f', 1, 'x')")
        .await
        .unwrap();
    ctx.run(ROWS).await.unwrap();
    assert_eq!(version(&loc), "6");
    // then a write upgrades it to the version asked for, and a lower one after keeps it there
    ctx.run("UPDATE t SET Name = 'C' WHERE Id = 3")
        .await
        .unwrap();
    assert_eq!(version(&loc), "8");
    ctx.run("SET hoodie.write.table.version = 6").await.unwrap();
    ctx.run("UPDATE t SET Name = 'c' WHERE Id = 3")
        .await
        .unwrap();
    assert_eq!(version(&loc), "8");
    assert_eq!(
        cells(&ctx, ROWS).await,
        [
            ["1", "a", "1", "x"],
            ["2", "", "1", "y"],
            ["3", "c", "1", "x"]
        ]
    );
}

/// An upgrade the write cannot run (a custom payload class, a Spark-made metadata table) fails
/// the write before anything is written, saying why and what to do; once what stood in the way
/// is settled (`hoodie.metadata.enable = false` removes the metadata table) the write upgrades
/// the table and goes on.
#[tokio::test]
async fn a_refused_upgrade_fails_the_write_with_nothing_changed() {
    for (key, value, why) in UNUPGRADABLE {
        let tmp = tempfile::tempdir().unwrap();
        let loc = tmp.path().join("t");
        drop(version_6_table(tmp.path(), &loc, false).await);
        set_property(&loc, key, value);
        std::fs::create_dir_all(loc.join(".hoodie/metadata/files")).unwrap();
        let files = files_under(&loc);
        let ctx = reader(tmp.path(), &loc).await;
        ctx.run("SET hoodie.write.table.version = 9").await.unwrap();
        let err = ctx
            .run("INSERT INTO t VALUES (4, 'd', 1, 'z')")
            .await
            .unwrap_err()
            .to_string();
        for part in [
            "first upgrades it from table version 6 to 9",
            why,
            "nothing was written",
            "SET hoodie.write.auto.upgrade = false",
        ] {
            assert!(err.contains(part), "{key}: {part}: {err}");
        }
        assert_eq!(files_under(&loc), files, "{key}");
        if key == "hoodie.table.metadata.partitions" {
            ctx.run("SET hoodie.metadata.enable = false").await.unwrap();
            ctx.run("INSERT INTO t VALUES (4, 'd', 1, 'z')")
                .await
                .unwrap();
            assert_eq!(version(&loc), "9");
            assert!(!loc.join(".hoodie/metadata").exists());
            assert_eq!(cells(&ctx, "SELECT count(*) FROM t").await, [["4"]]);
        }
    }
}
