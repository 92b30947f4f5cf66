//! Partial-update log blocks (table versions 8 and 9): a MERGE INTO on a merge-on-read table
//! whose UPDATE clauses assign some of the data columns logs its updates as partial records,
//! as Hudi 1.x does with `hoodie.spark.sql.merge.into.partial.updates` (default true): an
//! AVRO_DATA block with `IS_PARTIAL = "true"` whose `SCHEMA` holds the meta fields and the
//! assigned columns in the table's order, with record positions. Whole records on version 6,
//! with the option off, or when every column is assigned; new records in a file group's log
//! (a bucket table's) go whole, in a block of their own after the partial one.

mod common;

use std::path::Path;

use common::{cells, files_under, log_blocks, session_with_table};

/// `SCHEMA`, `RECORD_POSITIONS` and `IS_PARTIAL` (HeaderMetadataType).
const SCHEMA: i32 = 2;
const RECORD_POSITIONS: i32 = 5;
const IS_PARTIAL: i32 = 7;

/// A data or delete block: its type, its `IS_PARTIAL` header, its schema's field names, and
/// whether it has record positions.
#[derive(Debug, Clone, PartialEq)]
struct Block {
    kind: i32,
    partial: Option<String>,
    fields: Vec<String>,
    positioned: bool,
}

/// The blocks of every log file of the table at `loc`, file by file (sorted by name).
fn blocks(loc: &Path) -> Vec<Vec<Block>> {
    let mut out = Vec::new();
    for f in files_under(loc) {
        if !f.contains(".log.") || f.ends_with(".crc") {
            continue;
        }
        let bytes = std::fs::read(loc.join(&f)).unwrap();
        let described = log_blocks(&bytes)
            .into_iter()
            .map(|(kind, headers)| {
                let schema: serde_json::Value = serde_json::from_str(&headers[&SCHEMA]).unwrap();
                let fields = schema["fields"].as_array().unwrap().iter();
                Block {
                    kind,
                    partial: headers.get(&IS_PARTIAL).cloned(),
                    fields: fields.map(|f| f["name"].as_str().unwrap().into()).collect(),
                    positioned: headers.contains_key(&RECORD_POSITIONS),
                }
            })
            .collect();
        out.push(described);
    }
    out
}

const META: [&str; 5] = [
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
];

/// The meta fields, then `columns`.
fn with_meta(columns: &[&str]) -> Vec<String> {
    META.iter().chain(columns).map(|c| c.to_string()).collect()
}

const CREATE: &str =
    "CREATE TABLE t (id INT, V STRING, w STRING, ts BIGINT, dt STRING) USING hudi \
    PARTITIONED BY (dt) TBLPROPERTIES (type = 'mor', primaryKey = 'id', \
    preCombineField = 'ts', hoodie.record.merge.mode = 'COMMIT_TIME_ORDERING', \
    hoodie.compact.inline = 'false'";

/// 300 records in partitions a (even ids) and b (odd), `w` = `w<id>`.
async fn table(tmp: &Path, loc: &Path, props: &str) -> hoodie_datafusion::HoodieContext {
    let ctx = session_with_table(tmp, None, &format!("{CREATE}{props})"), loc).await;
    ctx.run(
        "INSERT INTO t SELECT CAST(value AS INT), CONCAT('v', CAST(value AS STRING)), \
         CONCAT('w', CAST(value AS STRING)), 1, \
         CASE WHEN value % 2 = 0 THEN 'a' ELSE 'b' END FROM generate_series(1, 300)",
    )
    .await
    .unwrap();
    ctx
}

/// A MERGE of 250 (in a) and 7 (in b, to a NULL `V`) that assigns `set`.
fn merge(set: &str) -> String {
    format!(
        "MERGE INTO t USING (SELECT * FROM (VALUES (250, 'x', 'y', CAST(2 AS BIGINT), 'a'), \
         (7, NULL, 'z', CAST(2 AS BIGINT), 'b')) AS s(id, V, w, ts, dt)) s ON t.id = s.id \
         WHEN MATCHED THEN UPDATE SET {set}"
    )
}

#[tokio::test]
async fn a_merge_that_assigns_some_columns_logs_partial_records() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = table(tmp.path(), &loc, "").await;
    ctx.run(&merge("ts = s.ts, v = s.V")).await.unwrap();
    let logs = blocks(&loc);
    let partial = Block {
        kind: 3,
        partial: Some("true".into()),
        fields: with_meta(&["V", "ts"]),
        positioned: true,
    };
    assert_eq!(logs, [[partial.clone()], [partial]]);
    let want = [["7", "", "w7", "2"], ["250", "x", "w250", "2"]];
    let read = "SELECT id, V, w, ts FROM t WHERE id IN (7, 250) ORDER BY id";
    assert_eq!(cells(&ctx, read).await, want);
    // a second MERGE of other columns over the first keeps what the first set
    ctx.run(&merge("w = s.w, ts = s.ts + 1")).await.unwrap();
    let want = [["7", "", "z", "3"], ["250", "x", "y", "3"]];
    assert_eq!(cells(&ctx, read).await, want);
    // and compaction writes the merged records whole
    ctx.run("SET hoodie.compact.inline.max.delta.commits = 1")
        .await
        .unwrap();
    ctx.run("CALL run_compaction(op => 'schedule', table => 't')")
        .await
        .unwrap();
    ctx.run("CALL run_compaction(op => 'run', table => 't')")
        .await
        .unwrap();
    assert_eq!(cells(&ctx, read).await, want);
    let read_optimized = "SELECT id, V, w, ts FROM hudi_query('t', 'read_optimized') \
        WHERE id IN (7, 250) ORDER BY id";
    assert_eq!(cells(&ctx, read_optimized).await, want);
}

#[tokio::test]
async fn whole_records_on_version_6_with_the_option_off_or_every_column_assigned() {
    let v6 = ", 'hoodie.write.table.version' = '6'";
    let off = ", 'hoodie.spark.sql.merge.into.partial.updates' = 'false'";
    let some = "id = s.id, V = s.V, ts = s.ts";
    let every = "id = s.id, V = s.V, w = s.w, ts = s.ts, dt = s.dt";
    for (props, set, positioned) in [(v6, some, false), (off, some, true), ("", every, true)] {
        let tmp = tempfile::tempdir().unwrap();
        let loc = tmp.path().join("t");
        let ctx = table(tmp.path(), &loc, props).await;
        ctx.run(&merge(set)).await.unwrap();
        let whole = Block {
            kind: 3,
            partial: None,
            fields: with_meta(&["id", "V", "w", "ts", "dt"]),
            positioned,
        };
        assert_eq!(blocks(&loc), [[whole.clone()], [whole]], "{props} {set}");
        let w = if set == every { "z" } else { "w7" };
        assert_eq!(
            cells(&ctx, "SELECT V, w FROM t WHERE id = 7").await,
            [["", w]],
            "{props} {set}"
        );
    }
}

/// A bucket table's file group takes new records in its log: they go whole, in a block after
/// the partial updates, both read back.
#[tokio::test]
async fn new_records_in_the_log_go_whole_after_the_partial_updates() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("b");
    let ctx = session_with_table(
        tmp.path(),
        None,
        "CREATE TABLE b (id INT, v STRING, w STRING, ts BIGINT) USING hudi \
         TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts', \
         hoodie.record.merge.mode = 'COMMIT_TIME_ORDERING', hoodie.index.type = 'BUCKET', hoodie.bucket.index.num.buckets = '4', \
         hoodie.compact.inline = 'false')",
        &loc,
    )
    .await;
    // keys 1 and 5 hash to bucket 0
    ctx.run("INSERT INTO b VALUES (1, 'v1', 'w1', 1)")
        .await
        .unwrap();
    ctx.run(
        "MERGE INTO b USING (SELECT * FROM (VALUES (1, 'x', CAST(2 AS BIGINT)), \
         (5, 'y', CAST(2 AS BIGINT))) AS s(id, v, ts)) s ON b.id = s.id \
         WHEN MATCHED THEN UPDATE SET v = s.v, ts = s.ts \
         WHEN NOT MATCHED THEN INSERT (id, v, w, ts) VALUES (s.id, s.v, 'new', s.ts)",
    )
    .await
    .unwrap();
    let logs = blocks(&loc);
    assert_eq!(logs.len(), 1, "{logs:?}");
    let [partial, whole] = &logs[0][..] else {
        panic!("two blocks: {logs:?}")
    };
    assert_eq!(partial.partial.as_deref(), Some("true"));
    assert_eq!(partial.fields, with_meta(&["v", "ts"]));
    assert_eq!((whole.kind, whole.partial.as_ref()), (3, None));
    assert_eq!(whole.fields, with_meta(&["id", "v", "w", "ts"]));
    assert!(!whole.positioned, "an insert has no row in the base file");
    assert_eq!(
        cells(&ctx, "SELECT id, v, w, ts FROM b ORDER BY id").await,
        [["1", "x", "w1", "2"], ["5", "y", "new", "2"]]
    );
}

/// Under event-time ordering a MERGE logs whole records: Hudi's readers merge partial records
/// pairwise, so a partial winner laid over a record that lost in the log (an UPDATE's, here)
/// would take the loser's other columns (the fuzzer's seed 175).
#[tokio::test]
async fn event_time_ordering_logs_whole_records() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let create = CREATE.replace(", hoodie.record.merge.mode = 'COMMIT_TIME_ORDERING'", "");
    let ctx = session_with_table(tmp.path(), None, &format!("{create})"), &loc).await;
    ctx.run("INSERT INTO t VALUES (7, 'v7', 'w7', 4, 'b')")
        .await
        .unwrap();
    // a losing UPDATE in the log, then a winning MERGE of some columns over it
    ctx.run("UPDATE t SET w = 'lost', ts = 2 WHERE id = 7")
        .await
        .unwrap();
    ctx.run(&merge("id = s.id, V = s.V, ts = s.ts + 3"))
        .await
        .unwrap();
    let whole = with_meta(&["id", "V", "w", "ts", "dt"]);
    assert!(blocks(&loc)
        .iter()
        .flatten()
        .all(|b| b.partial.is_none() && b.fields == whole));
    assert_eq!(
        cells(&ctx, "SELECT id, V, w, ts FROM t").await,
        [["7", "", "w7", "5"]]
    );
}
