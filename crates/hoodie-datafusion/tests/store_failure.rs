//! Failure injection on an S3 server: every object-store write of a copy-on-write commit (INSERT,
//! UPDATE, DELETE, MERGE), of a merge-on-read deltacommit (log appends) and of a compaction
//! fails in turn. After each failure the table reads as before; the write that finally succeeds
//! has rolled back what the failed attempts left (no pending instant, no marker, no data file of
//! an instant that never completed).
//!
//! These need a server: `tests/s3/run.sh` starts moto and runs them with `--ignored`, giving
//! `HOODIE_TEST_S3_URL` (a folder on the server, such as `s3://hoodie/failure`) and the store's
//! settings as `AWS_*` environment variables, as hoodie takes them anywhere.

use std::sync::Arc;

mod common;

use common::cells;
use common::failing::FailingStore;
use hoodie_datafusion::{HoodieConfig, HoodieContext, HudiTableProvider};
use hoodie_format::location::open_location;
use hoodie_format::storage::TableStorage;
use hoodie_format::HudiTable;

const QUERY: &str = "SELECT id, name, price, dt FROM t ORDER BY id";

/// A folder of its own on the server for table `name`.
fn location(name: &str) -> String {
    let root = std::env::var("HOODIE_TEST_S3_URL")
        .expect("HOODIE_TEST_S3_URL names a folder on an S3 server (tests/s3/run.sh sets it)");
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{}/{name}-{nanos}", root.trim_end_matches('/'))
}

/// A session (its warehouse on local disk) with table `t` at `url` holding ids 1 to 3.
async fn table_on_s3(tmp: &std::path::Path, url: &str, props: &str) -> HoodieContext {
    let ctx = HoodieContext::new(HoodieConfig::new(tmp.join("wh")))
        .await
        .unwrap();
    ctx.run(&format!(
        "CREATE TABLE t (id INT, name STRING, price DOUBLE, dt STRING) USING hudi \
         PARTITIONED BY (dt) LOCATION '{url}' TBLPROPERTIES (primaryKey = 'id', {props})"
    ))
    .await
    .unwrap();
    ctx.run("INSERT INTO t VALUES (1, 'a', 1.0, 'x'), (2, NULL, 2.0, 'y'), (3, 'c', NULL, 'y')")
        .await
        .unwrap();
    ctx
}

/// Runs `statement` (on table `f`: table `t` through a store that fails its N-th write) for
/// N = 1, 2, ... until it succeeds; after each failure `t` reads as before. Returns how many
/// write points failed.
async fn fail_every_write(ctx: &HoodieContext, storage: &TableStorage, statement: &str) -> usize {
    let before = cells(ctx, QUERY).await;
    for n in 1..200 {
        let store = Arc::new(FailingStore::new(storage.store().clone(), n));
        let table = HudiTable::open(storage.with_store(store.clone()))
            .await
            .unwrap();
        let provider = HudiTableProvider::try_new("f", table).await.unwrap();
        ctx.session().deregister_table("f").unwrap();
        ctx.session()
            .register_table("f", Arc::new(provider))
            .unwrap();
        match ctx.run(statement).await {
            Err(e) => {
                assert!(
                    e.to_string().contains("injected failure"),
                    "{statement}, write {n}: {e}"
                );
                assert_eq!(
                    cells(ctx, QUERY).await,
                    before,
                    "{statement}: after failing write {n}"
                );
            }
            Ok(_) => {
                assert_eq!(
                    store.writes() + 1,
                    n,
                    "{statement}: the commit completed before write {n}"
                );
                return n - 1;
            }
        }
    }
    panic!("{statement} never succeeded");
}

/// No pending instant, no marker and no data file of an instant that never completed (a log
/// file's name carries its slice's base instant, not its deltacommit's: the callers count the
/// logs instead).
async fn nothing_left_behind(storage: &TableStorage) {
    let files = listed(storage).await;
    assert!(
        !files.iter().any(|f| f.starts_with(".hoodie/.temp/")),
        "markers left behind: {files:?}"
    );
    common::assert_nothing_uncommitted(storage, &files).await;
}

/// Every file of the table, relative to it, sorted.
async fn listed(storage: &TableStorage) -> Vec<String> {
    let mut v: Vec<String> = storage
        .list_all("")
        .await
        .unwrap()
        .iter()
        .map(|m| storage.relative(&m.location))
        .collect();
    v.sort();
    v
}

/// Every DML kind on a copy-on-write table on S3.
#[tokio::test]
#[ignore = "needs an S3 server: tests/s3/run.sh runs it"]
async fn failed_writes_on_s3_leave_the_table_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let url = location("cow");
    let ctx = table_on_s3(tmp.path(), &url, "type = 'cow'").await;
    let storage = open_location(&url, &[]).unwrap();
    for (statement, want) in [
        (
            "INSERT INTO f VALUES (4, 'd', 4.0, 'z'), (5, NULL, NULL, 'x')",
            5,
        ),
        ("UPDATE f SET name = 'zz' WHERE id >= 2", 5),
        ("DELETE FROM f WHERE id = 1", 4),
        (
            "MERGE INTO f USING (SELECT 2 AS id, 'm' AS name, 9.0 AS price, 'y' AS dt UNION ALL \
             SELECT 6, NULL, 6.0, 'z') s ON f.id = s.id \
             WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
            5,
        ),
    ] {
        let points = fail_every_write(&ctx, &storage, statement).await;
        assert!(points > 4, "{statement}: only {points} write points");
        assert_eq!(cells(&ctx, QUERY).await.len(), want, "{statement}");
        nothing_left_behind(&storage).await;
    }
    assert_eq!(
        cells(&ctx, QUERY).await,
        [
            ["2", "m", "9.0", "y"],
            ["3", "zz", "", "y"],
            ["4", "zz", "4.0", "z"],
            ["5", "zz", "", "x"],
            ["6", "", "6.0", "z"],
        ]
    );
}

/// Log appends of a merge-on-read table on S3, then the compaction of its logs.
#[tokio::test]
#[ignore = "needs an S3 server: tests/s3/run.sh runs it"]
async fn failed_deltacommits_and_compactions_on_s3_leave_the_table_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let url = location("mor");
    let ctx = table_on_s3(
        tmp.path(),
        &url,
        "type = 'mor', hoodie.compact.inline = 'false', hoodie.compact.inline.max.delta.commits = '1'",
    )
    .await;
    let storage = open_location(&url, &[]).unwrap();
    let base_files = |files: &[String]| -> Vec<String> {
        files
            .iter()
            .filter(|f| f.ends_with(".parquet"))
            .cloned()
            .collect()
    };
    let before = base_files(&listed(&storage).await);
    for statement in [
        "UPDATE f SET price = 30.0 WHERE id = 3",
        "MERGE INTO f USING (SELECT 1 AS id, 'm' AS name, 10.0 AS price, 'x' AS dt) s \
         ON f.id = s.id WHEN MATCHED THEN UPDATE SET *",
        "DELETE FROM f WHERE id = 2",
    ] {
        let points = fail_every_write(&ctx, &storage, statement).await;
        assert!(points > 3, "{statement}: only {points} write points");
        nothing_left_behind(&storage).await;
    }
    let files = listed(&storage).await;
    // the updates and the delete went to logs: no base file was written or rewritten
    assert_eq!(base_files(&files), before);
    assert_eq!(
        files.iter().filter(|f| f.contains(".log.")).count(),
        3,
        "one log per deltacommit and file group: {files:?}"
    );
    let want = [["1", "m", "10.0", "x"], ["3", "c", "30.0", "y"]];
    assert_eq!(cells(&ctx, QUERY).await, want);

    ctx.run("SCHEDULE COMPACTION ON t").await.unwrap();
    let points = fail_every_write(&ctx, &storage, "RUN COMPACTION ON f").await;
    assert!(points > 3, "compaction: only {points} write points");
    nothing_left_behind(&storage).await;
    assert_eq!(cells(&ctx, QUERY).await, want);
    let timeline = HudiTable::open(storage.clone())
        .await
        .unwrap()
        .timeline()
        .await
        .unwrap();
    assert!(hoodie_format::compaction::pending_compactions(&timeline).is_empty());
    // one new base file per compacted file group (the failed attempts' files were removed)
    let compacted = base_files(&listed(&storage).await).len() - before.len();
    assert_eq!(compacted, 2, "{:?}", listed(&storage).await);
}
