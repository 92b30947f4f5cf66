//! A MERGE's join in passes (`hoodie.merge.join.passes`) gives the table one pass gives: the
//! same rows, the same partitions, the same counts, one commit.

mod common;

use common::{session_with_table, text};
use hoodie_datafusion::{HoodieContext, StatementOutput};

const CREATE: &str = "CREATE TABLE t1 (id INT, name STRING, price DOUBLE, ts BIGINT, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts')";

/// The passes EXPLAIN shows for `sql`.
async fn passes(ctx: &HoodieContext, sql: &str) -> u32 {
    let plan = text(ctx, &format!("EXPLAIN {sql}")).await;
    plan.split("HudiMergePasses: passes=")
        .nth(1)
        .and_then(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .unwrap_or_else(|| panic!("no passes in the plan:\n{plan}"))
}

async fn merge(ctx: &HoodieContext, table: &str) -> (u64, u64, u64) {
    let sql = format!(
        "MERGE INTO {table} USING s ON {table}.id = s.id \
         WHEN MATCHED AND s.flag BETWEEN 1 AND 6 THEN UPDATE SET * \
         WHEN MATCHED AND s.flag = 0 THEN DELETE \
         WHEN NOT MATCHED AND s.flag <> 3 THEN INSERT * \
         WHEN NOT MATCHED BY SOURCE AND {table}.id % 3 = 0 THEN UPDATE SET name = 'gone', ts = {table}.ts + 1"
    );
    match ctx.run(&sql).await.unwrap() {
        StatementOutput::Changed(c) => (c.inserted, c.updated, c.deleted),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_merge_in_five_passes_writes_what_one_pass_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = session_with_table(tmp.path(), None, CREATE, &tmp.path().join("t1")).await;
    ctx.run(&format!(
        "{} LOCATION '{}'",
        CREATE.replace("t1", "t2"),
        tmp.path().join("t2").display()
    ))
    .await
    .unwrap();
    for t in ["t1", "t2"] {
        ctx.run(&format!(
            "INSERT INTO {t} SELECT CAST(id AS INT) AS id, concat('t', CAST(id AS STRING)) AS name, \
             CAST(id AS DOUBLE) AS price, 100 AS ts, CAST(id % 7 AS STRING) AS dt \
             FROM (SELECT unnest(range(0, 3000)) AS id)"
        ))
        .await
        .unwrap();
    }
    // keys 2000..4999, a third of them twice with different ordering values
    ctx.run(
        "CREATE TABLE s AS SELECT id, concat('s', CAST(id AS STRING), '-', CAST(ts AS STRING)) AS name, \
         CAST(id AS DOUBLE) / 2 AS price, ts, CAST(id % 7 AS STRING) AS dt, (id * 7 + ts) % 10 AS flag \
         FROM (SELECT unnest(range(2000, 5000)) AS id) CROSS JOIN (SELECT unnest([101, 99]) AS ts) \
         WHERE ts = 101 OR id % 3 = 0",
    )
    .await
    .unwrap();

    let mut counts = Vec::new();
    for (table, n) in [("t1", 1), ("t2", 5)] {
        ctx.run(&format!("SET hoodie.merge.join.passes = {n}"))
            .await
            .unwrap();
        let probe =
            format!("MERGE INTO {table} USING s ON {table}.id = s.id WHEN MATCHED THEN DELETE");
        assert_eq!(passes(&ctx, &probe).await, n);
        counts.push(merge(&ctx, table).await);
    }
    let (one, five) = (counts[0], counts[1]);
    assert_eq!(one, five);
    assert!(one.0 > 0 && one.1 > 0 && one.2 > 0, "{one:?}");

    let rows = |t: &str| {
        format!(
            "SELECT id, name, price, ts, dt, _hoodie_record_key, _hoodie_partition_path, \
             count(*) OVER () AS n, count(DISTINCT _hoodie_commit_time) OVER () AS commits \
             FROM {t} ORDER BY id"
        )
    };
    let (a, b) = (text(&ctx, &rows("t1")).await, text(&ctx, &rows("t2")).await);
    assert_eq!(a, b);
    // and the values are the merge's: an unmatched target row with id % 3 = 0 was renamed
    assert!(a.contains("| 3    | gone "), "{a}");
}

/// The `metrics=[...]` of `HudiMergePasses` in an EXPLAIN ANALYZE.
async fn pass_metrics(ctx: &HoodieContext, sql: &str) -> String {
    let plan = text(ctx, &format!("EXPLAIN ANALYZE {sql}")).await;
    plan.split("HudiMergePasses")
        .nth(1)
        .and_then(|rest| rest.split("metrics=[").nth(1))
        .and_then(|rest| rest.split(']').next())
        .unwrap_or_else(|| panic!("no metrics in the plan:\n{plan}"))
        .to_string()
}

/// The passes read the source kept from its one read, whatever its shape: a source with two
/// qualifiers (a join) and one calling a volatile function are computed once too, so every
/// pass sees the same rows.
#[tokio::test]
async fn passes_read_the_source_kept_from_its_one_read_whatever_its_shape() {
    let tmp = tempfile::tempdir().unwrap();
    let create = "CREATE TABLE c (id INT, v STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')";
    let ctx = session_with_table(tmp.path(), None, create, &tmp.path().join("c")).await;
    for sql in [
        "INSERT INTO c VALUES (1, 'a'), (2, 'b')",
        "CREATE TABLE ja AS SELECT * FROM (VALUES (1, 'x'), (3, 'y')) AS q(id, v)",
        "CREATE TABLE jb AS SELECT * FROM (VALUES (1, 10), (3, 30)) AS q(id, w)",
        "SET hoodie.merge.join.passes = 3",
    ] {
        ctx.run(sql).await.unwrap();
    }
    let kept = pass_metrics(
        &ctx,
        "MERGE INTO c USING ja ON c.id = ja.id WHEN MATCHED THEN UPDATE SET *",
    )
    .await;
    assert!(kept.starts_with("passes=3, source_reads=1,"), "{kept}");
    let joined = pass_metrics(
        &ctx,
        "MERGE INTO c USING (ja JOIN jb ON ja.id = jb.id) ON c.id = ja.id \
         WHEN MATCHED THEN UPDATE SET v = concat(ja.v, CAST(jb.w AS STRING))",
    )
    .await;
    assert!(joined.starts_with("passes=3, source_reads=1,"), "{joined}");
    assert!(
        text(&ctx, "SELECT id, v FROM c ORDER BY id")
            .await
            .contains("| 1  | x10 |"),
        "the joined source's values were written"
    );
    let volatile = pass_metrics(
        &ctx,
        "MERGE INTO c USING (SELECT id, random() AS r FROM jb) jr ON c.id = jr.id \
         WHEN MATCHED THEN UPDATE SET v = CAST(jr.r AS STRING) \
         WHEN NOT MATCHED THEN INSERT (id, v) VALUES (jr.id, CAST(jr.r AS STRING))",
    )
    .await;
    assert!(
        volatile.starts_with("passes=3, source_reads=1,"),
        "{volatile}"
    );
    // each source row reached the table once: key 1 updated, key 3 inserted, key 2 untouched
    let rows = text(&ctx, "SELECT count(*) AS n, count(DISTINCT v) AS d FROM c").await;
    assert!(rows.contains("| 3 | 3 |"), "{rows}");
}
