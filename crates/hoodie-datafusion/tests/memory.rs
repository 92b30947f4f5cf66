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

/// A MERGE whose source does not fit the pool fails in the join (the hash table of the source
/// is counted there and does not spill) and writes nothing.
#[tokio::test]
async fn a_merge_source_larger_than_the_pool_fails_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = session_with_table(tmp.path(), Some(8 * 1024 * 1024), CREATE, &loc).await;
    ctx.run("INSERT INTO t SELECT id, 'x' AS v, 1 AS ts FROM (SELECT unnest(range(1, 101)) AS id)")
        .await
        .unwrap();
    // 60,000 source rows of about 200 bytes: about 12 MB to hash
    ctx.run("CREATE TABLE s AS SELECT id, repeat('y', 200) AS v, 2 AS ts FROM (SELECT unnest(range(50, 60001)) AS id)")
        .await
        .unwrap();
    let err = ctx
        .run("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("Resources exhausted"), "{err}");
    assert!(err.contains("HashJoinInput"), "{err}");
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM t WHERE ts = 1").await,
        100
    );
    let instants = std::fs::read_dir(loc.join(".hoodie"))
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().ends_with(".requested")
        })
        .count();
    assert_eq!(instants, 1, "only the INSERT started an instant");
}
