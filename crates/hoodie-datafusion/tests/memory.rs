//! Writes run under the session's DataFusion memory pool. What a write routes by (record keys,
//! partition paths, ordering values) is held in memory and counted there; the rows themselves
//! are spilled to the disk manager's temporary files when the pool has no room, and gathered
//! back a few file groups at a time. A pool too small even for the keys fails the write with
//! a typed error and leaves the table unchanged.

mod common;

use common::{count, session_with_table, text};
use hoodie_datafusion::{HoodieContext, StatementOutput};

const CREATE: &str = "CREATE TABLE t (id BIGINT, v STRING, ts INT) USING hudi TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts')";

/// 20,000 rows of about 200 bytes each: about 4 MB of input.
const WIDE_INSERT: &str = "INSERT INTO t SELECT id, repeat('x', 200) AS v, 1 AS ts \
     FROM (SELECT unnest(range(1, 20001)) AS id)";

fn completed_commits(loc: &std::path::Path) -> usize {
    std::fs::read_dir(common::timeline_dir(loc))
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().ends_with(".commit")
        })
        .count()
}

/// 4 MB of rows through a 1 MiB pool: the rows spill, the write completes, and an upsert and
/// an UPDATE of every row (change sets as large as the table) spill the same way.
#[tokio::test]
async fn a_write_larger_than_the_pool_spills_and_completes() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = session_with_table(tmp.path(), Some(1024 * 1024), CREATE, &loc).await;
    ctx.run(WIDE_INSERT).await.unwrap();
    assert_eq!(count(&ctx, "SELECT count(*) FROM t").await, 20000);
    assert_eq!(
        count(
            &ctx,
            "SELECT count(*) FROM t WHERE length(v) = 200 AND ts = 1"
        )
        .await,
        20000
    );
    // an upsert of half the keys with newer ordering values, and 5,000 new ones
    ctx.run(
        "INSERT INTO t SELECT id, repeat('z', 200) AS v, 2 AS ts \
         FROM (SELECT unnest(range(10001, 25001)) AS id)",
    )
    .await
    .unwrap();
    assert_eq!(count(&ctx, "SELECT count(*) FROM t").await, 25000);
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM t WHERE ts = 2 AND v LIKE 'z%'").await,
        15000
    );
    ctx.run("UPDATE t SET v = 'y', ts = 3").await.unwrap();
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM t WHERE v = 'y' AND ts = 3").await,
        25000
    );
    assert_eq!(completed_commits(&loc), 3);
}

/// A pool too small for the record keys of the write fails it with a typed error that says
/// what to do, and nothing is committed.
#[tokio::test]
async fn a_pool_too_small_for_the_keys_fails_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = session_with_table(tmp.path(), Some(64 * 1024), CREATE, &loc).await;
    ctx.run("INSERT INTO t VALUES (0, 'a', 1)").await.unwrap();
    let err = ctx.run(WIDE_INSERT).await.unwrap_err().to_string();
    assert!(
        err.contains("the memory limit leaves no room for the record keys"),
        "{err}"
    );
    assert!(err.contains("raise the limit"), "{err}");
    assert_eq!(count(&ctx, "SELECT count(*) FROM t").await, 1);
    assert_eq!(completed_commits(&loc), 1);
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

/// 60,000 source rows of about 200 bytes (about 12 MB to hash) into a 20,000-row table; the
/// source is a memory table, or with `using` a table of that format.
async fn merge_setup(
    pool: usize,
    using: Option<&str>,
) -> (tempfile::TempDir, std::path::PathBuf, HoodieContext) {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = session_with_table(tmp.path(), Some(pool), CREATE, &loc).await;
    ctx.run(
        "INSERT INTO t SELECT id, 'x' AS v, 1 AS ts FROM (SELECT unnest(range(1, 20001)) AS id)",
    )
    .await
    .unwrap();
    let using = using.map_or(String::new(), |u| {
        format!("USING {u} LOCATION '{}'", tmp.path().join("s").display())
    });
    ctx.run(&format!("CREATE TABLE s {using} AS SELECT id, repeat('y', 200) AS v, 2 AS ts FROM (SELECT unnest(range(50, 60001)) AS id)"))
        .await
        .unwrap();
    (tmp, loc, ctx)
}

const MERGE_ALL: &str = "MERGE INTO t USING s ON t.id = s.id \
    WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT * \
    WHEN NOT MATCHED BY SOURCE THEN DELETE";

/// A MERGE whose source does not fit an 8 MiB pool runs its join in passes (chosen from the
/// pool and the source's size), one after another, into one commit: every clause sees the
/// rows it would see in one pass.
#[tokio::test]
async fn a_merge_source_larger_than_the_pool_runs_in_passes() {
    for using in [None, Some("hudi"), Some("parquet")] {
        merge_in_passes(using).await;
    }
}

async fn merge_in_passes(using: Option<&str>) {
    let (_tmp, loc, ctx) = merge_setup(8 * 1024 * 1024, using).await;
    // EXPLAIN decides nothing yet, and runs nothing
    let plan = text(&ctx, &format!("EXPLAIN {MERGE_ALL}")).await;
    assert!(plan.contains("HudiMergePasses: passes=auto"), "{plan}");
    assert_eq!(completed_commits(&loc), 1);
    if using.is_none() {
        let out = ctx.run(MERGE_ALL).await.unwrap();
        let StatementOutput::Changed(counts) = out else {
            panic!("{out:?}")
        };
        assert_eq!(
            (counts.inserted, counts.updated, counts.deleted),
            (40000, 19951, 49)
        );
    } else {
        // EXPLAIN ANALYZE runs the MERGE and shows how many passes the measured source took
        let plan = text(&ctx, &format!("EXPLAIN ANALYZE {MERGE_ALL}")).await;
        let passes: u32 = plan
            .split("metrics=[passes=")
            .nth(1)
            .and_then(|rest| rest.split(',').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no passes in the plan:\n{plan}"));
        assert!(passes > 1, "source {using:?}: {plan}");
        // the passes read the source as it was read once, not computed again
        assert!(plan.contains("source_reads=1"), "{plan}");
    }
    assert_eq!(count(&ctx, "SELECT count(*) FROM t").await, 59951);
    assert_eq!(
        count(
            &ctx,
            "SELECT count(*) FROM t WHERE ts = 2 AND length(v) = 200 AND id >= 50"
        )
        .await,
        59951
    );
    assert_eq!(count(&ctx, "SELECT count(DISTINCT id) FROM t").await, 59951);
    assert_eq!(completed_commits(&loc), 2);
}

/// The same MERGE told to run in one pass fails in the join (DataFusion's hash table of the
/// source is counted in the pool and cannot spill), says what to set, and writes nothing.
#[tokio::test]
async fn a_merge_in_one_pass_that_does_not_fit_says_what_to_set() {
    let (_tmp, loc, ctx) = merge_setup(8 * 1024 * 1024, None).await;
    ctx.run("SET hoodie.merge.join.passes = 1").await.unwrap();
    let err = ctx.run(MERGE_ALL).await.unwrap_err().to_string();
    assert!(err.contains("Resources exhausted"), "{err}");
    assert!(err.contains("HashJoinInput"), "{err}");
    // the pool names its largest consumers
    assert!(err.contains("top memory consumers"), "{err}");
    assert!(err.contains("SET hoodie.merge.join.passes = 2"), "{err}");
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM t WHERE ts = 1").await,
        20000
    );
    let instants = std::fs::read_dir(common::timeline_dir(&loc))
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            name.to_string_lossy().ends_with(".requested")
        })
        .count();
    assert_eq!(instants, 1, "only the INSERT started an instant");
    // a bad value is refused at the SET, before anything runs
    let err = ctx
        .run("SET hoodie.merge.join.passes = 0")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("invalid value \"0\" for hoodie.merge.join.passes: expected auto"),
        "{err}"
    );
}

/// An upsert touching every file group of a partitioned table through a 1 MiB pool: the rows
/// are gathered back a few file groups at a time, and every group gets its own rows.
#[tokio::test]
async fn an_upsert_over_many_file_groups_runs_in_waves() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("p");
    let create = "CREATE TABLE p (id BIGINT, v STRING, ts INT, part INT) USING hudi \
                  PARTITIONED BY (part) TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts')";
    let ctx = session_with_table(tmp.path(), Some(1024 * 1024), create, &loc).await;
    ctx.run(
        "INSERT INTO p SELECT id, repeat('x', 200) AS v, 1 AS ts, CAST(id % 8 AS INT) AS part \
         FROM (SELECT unnest(range(0, 16000)) AS id)",
    )
    .await
    .unwrap();
    ctx.run(
        "INSERT INTO p SELECT id, concat(CAST(id AS STRING), repeat('z', 190)) AS v, 2 AS ts, \
         CAST(id % 8 AS INT) AS part FROM (SELECT unnest(range(0, 20000, 3)) AS id)",
    )
    .await
    .unwrap();
    // ids divisible by 3: 5,334 of the stored ones (in all 8 partitions) and 1,333 new ones
    assert_eq!(count(&ctx, "SELECT count(*) FROM p").await, 17333);
    // every updated row carries its own key in v, in the right partition
    assert_eq!(
        count(
            &ctx,
            "SELECT count(*) FROM p WHERE ts = 2 AND v LIKE concat(CAST(id AS STRING), 'z%') \
             AND part = id % 8"
        )
        .await,
        6667
    );
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM p WHERE ts = 1 AND id % 3 <> 0").await,
        10666
    );
    // every one of the 8 file groups was rewritten by the upsert: one file each, all named
    // with the upsert's instant
    assert_eq!(
        count(&ctx, "SELECT count(DISTINCT _hoodie_file_name) FROM p").await,
        8
    );
    assert_eq!(
        count(
            &ctx,
            "SELECT count(DISTINCT split_part(_hoodie_file_name, '_', 3)) FROM p"
        )
        .await,
        1
    );
}
