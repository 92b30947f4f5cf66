//! Writes run under the session's DataFusion memory pool: the input a write holds until its
//! commit is counted there, so a write that does not fit fails with "Resources exhausted" and
//! leaves the table unchanged, while the same write fits a larger pool.

mod common;

use common::{count, session_with_table};

const CREATE: &str = "CREATE TABLE t (id BIGINT, v STRING, ts INT) USING hudi TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')";

/// 20,000 rows of about 200 bytes each: about 4 MB of input.
const WIDE_INSERT: &str = "INSERT INTO t SELECT id, repeat('x', 200) AS v, 1 AS ts \
     FROM (SELECT unnest(range(1, 20001)) AS id)";

#[tokio::test]
async fn a_write_larger_than_the_pool_fails_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = session_with_table(tmp.path(), Some(1024 * 1024), CREATE, &loc).await;
    ctx.run("INSERT INTO t VALUES (0, 'a', 1)").await.unwrap();
    let err = ctx.run(WIDE_INSERT).await.unwrap_err().to_string();
    assert!(err.contains("Resources exhausted"), "{err}");
    assert!(err.contains("HudiSink[t]"), "{err}");
    // nothing was committed
    assert_eq!(count(&ctx, "SELECT count(*) FROM t").await, 1);
    let commits = std::fs::read_dir(loc.join(".hoodie"))
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().ends_with(".commit")
        })
        .count();
    assert_eq!(commits, 1);
}

#[tokio::test]
async fn the_same_write_fits_a_larger_pool() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = session_with_table(tmp.path(), Some(64 * 1024 * 1024), CREATE, &loc).await;
    ctx.run(WIDE_INSERT).await.unwrap();
    assert_eq!(count(&ctx, "SELECT count(*) FROM t").await, 20000);
    // an UPDATE of every row is a change set of the whole table: it fits too
    ctx.run("UPDATE t SET v = 'y', ts = 2").await.unwrap();
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM t WHERE v = 'y'").await,
        20000
    );
}
