//! Record positions on merge-on-read log blocks (table versions 8 and 9): an upsert's block of
//! updates and deletes of records found in the slice's base file names their rows there
//! (`RECORD_POSITIONS`, with the base file's instant), its records in that order, as Hudi 1.x
//! writes them; so do UPDATE, DELETE and MERGE INTO, whose rows carry their rows in the base
//! files they were read from; nothing does on version 6 or with the option off.

mod common;

use std::path::Path;

use common::{cells, files_under, log_blocks as blocks_of, session_with_table, text};
use datafusion::arrow::array::{Array, AsArray};

/// `RECORD_POSITIONS` and `BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS` (HeaderMetadataType).
const RECORD_POSITIONS: i32 = 5;
const BASE_INSTANT: i32 = 8;

/// The record keys of a base file, in row order.
fn base_keys(file: &Path) -> Vec<String> {
    use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(file).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let mut keys = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let col = batch.column_by_name("_hoodie_record_key").unwrap();
        let col = col.as_string::<i32>();
        keys.extend((0..col.len()).map(|i| col.value(i).to_string()));
    }
    keys
}

/// The number of row groups of a parquet file.
fn row_groups(file: &Path) -> usize {
    use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(file).unwrap())
        .unwrap()
        .metadata()
        .num_row_groups()
}

/// Per log file of the table at `loc`: per block, (its type, its positions decoded, its base
/// instant header).
/// A block's type, its positions decoded and its base instant header.
type Positioned = (i32, Option<Vec<u64>>, Option<String>);

fn block_positions(loc: &Path) -> Vec<(String, Vec<Positioned>)> {
    let mut out = Vec::new();
    for f in files_under(loc) {
        if !f.contains(".log.") || f.ends_with(".crc") {
            continue;
        }
        let bytes = std::fs::read(loc.join(&f)).unwrap();
        let described = blocks_of(&bytes)
            .into_iter()
            .map(|(kind, headers)| {
                let positions = headers
                    .get(&RECORD_POSITIONS)
                    .map(|h| hoodie_format::decode_positions(h).unwrap());
                (kind, positions, headers.get(&BASE_INSTANT).cloned())
            })
            .collect();
        out.push((f, described));
    }
    out.sort();
    out
}

const CREATE: &str =
    "CREATE TABLE t (id INT, v STRING, ts BIGINT, dt STRING) USING hudi PARTITIONED BY (dt) \
    TBLPROPERTIES (type = 'mor', primaryKey = 'id', preCombineField = 'ts', \
    hoodie.spark.sql.insert.into.operation = 'upsert', hoodie.compact.inline = 'false'";

async fn table(tmp: &Path, loc: &Path, props: &str) -> hoodie_datafusion::HoodieContext {
    let ctx = session_with_table(tmp, None, &format!("{CREATE}{props})"), loc).await;
    ctx.run(
        "INSERT INTO t SELECT CAST(value AS INT), CONCAT('v', CAST(value AS STRING)), 1, \
         CASE WHEN value % 2 = 0 THEN 'a' ELSE 'b' END FROM generate_series(1, 300)",
    )
    .await
    .unwrap();
    ctx
}

/// In partition a 250 and 120 updated (given out of order); in b 7 and 299 updated and 3
/// dropped (an older ordering value). (A new key would go into the small base file of its
/// partition, which rewrites it rather than logging.)
const UPSERT: &str = "INSERT INTO t VALUES (250, 'x', 2, 'a'), (7, NULL, 2, 'b'), \
    (120, 'y', 2, 'a'), (3, 'old', 0, 'b'), (299, 'z', 3, 'b')";

#[tokio::test]
async fn an_upsert_names_the_base_file_rows_of_the_records_it_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = table(tmp.path(), &loc, "").await;
    ctx.run(UPSERT).await.unwrap();
    let logs = block_positions(&loc);
    assert_eq!(logs.len(), 2, "{logs:?}");
    for (file, blocks) in &logs {
        let partition = Path::new(file).parent().unwrap();
        let base = files_under(&loc.join(partition))
            .into_iter()
            .find(|f| f.ends_with(".parquet"))
            .unwrap();
        let keys = base_keys(&loc.join(partition).join(&base));
        let base_instant = base
            .trim_end_matches(".parquet")
            .rsplit('_')
            .next()
            .unwrap();
        let (kind, positions, instant) = &blocks[0];
        assert_eq!(*kind, 3, "an AVRO_DATA block");
        assert_eq!(instant.as_deref(), Some(base_instant), "{file}");
        let named: Vec<&str> = positions
            .as_ref()
            .unwrap()
            .iter()
            .map(|&p| keys[p as usize].as_str())
            .collect();
        let want: &[&str] = if partition.ends_with("dt=a") {
            &["120", "250"]
        } else {
            &["7", "299"]
        };
        assert_eq!(named, want, "{file}");
    }
    assert_eq!(
        cells(
            &ctx,
            "SELECT id, v, ts FROM t WHERE id IN (3, 7, 120, 250, 299) ORDER BY id"
        )
        .await,
        [
            ["3", "v3", "1"],
            ["7", "", "2"],
            ["120", "y", "2"],
            ["250", "x", "2"],
            ["299", "z", "3"]
        ]
    );
}

/// `(slices_by_position, slices_by_key)` of the merge-on-read scan of `sql`'s EXPLAIN ANALYZE.
async fn merged_by(ctx: &hoodie_datafusion::HoodieContext, sql: &str) -> (String, String) {
    let plan = text(ctx, &format!("EXPLAIN ANALYZE {sql}")).await;
    let metric = |name: &str| {
        plan.split(&format!("{name}="))
            .nth(1)
            .and_then(|rest| rest.split([',', ']']).next())
            .unwrap_or_else(|| panic!("no {name} in the plan:\n{plan}"))
            .to_string()
    };
    (metric("slices_by_position"), metric("slices_by_key"))
}

/// A scan after an upsert merges its slices by the positions the upsert wrote (every block of
/// theirs names base rows), to the rows a merge by key gives; a slice one of whose blocks has
/// no positions (an UPDATE's) merges by key, as every slice does with
/// `hoodie.merge.use.record.positions = false`.
#[tokio::test]
async fn a_scan_merges_by_the_positions_an_upsert_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = table(tmp.path(), &loc, "").await;
    ctx.run(UPSERT).await.unwrap();
    // the key column is not asked for: merged by position, it is not read at all
    let sums = "SELECT count(*), sum(ts), count(v), sum(length(v)) FROM t";
    let keyed = "SELECT id, v, ts FROM t WHERE ts > 1 ORDER BY id";
    let want_keyed = [
        ["7", "", "2"],
        ["120", "y", "2"],
        ["250", "x", "2"],
        ["299", "z", "3"],
    ];
    // 300 rows at ts 1, four of them now 2, 2, 2 and 3; 7's v NULL, three others one letter
    let want_sums = [["300", "305", "299"]];
    let sum_len = |c: &Vec<Vec<String>>| c[0][3].clone();
    let lengths = sum_len(&cells(&ctx, sums).await);
    for sql in [sums, keyed] {
        assert_eq!(
            merged_by(&ctx, sql).await,
            ("2".into(), "0".into()),
            "{sql}"
        );
    }
    assert_eq!(cells(&ctx, sums).await[0][..3], want_sums[0]);
    assert_eq!(cells(&ctx, keyed).await, want_keyed);
    ctx.run("SET hoodie.merge.use.record.positions = false")
        .await
        .unwrap();
    assert_eq!(merged_by(&ctx, sums).await, ("0".into(), "2".into()));
    assert_eq!(sum_len(&cells(&ctx, sums).await), lengths);
    assert_eq!(cells(&ctx, keyed).await, want_keyed);
    ctx.run("SET hoodie.merge.use.record.positions = true")
        .await
        .unwrap();
    // an UPDATE's rows carry their base rows: its block in partition a has positions too
    ctx.run("UPDATE t SET ts = 4 WHERE id = 120").await.unwrap();
    assert_eq!(merged_by(&ctx, sums).await, ("2".into(), "0".into()));
    assert_eq!(cells(&ctx, sums).await[0][..3], ["300", "307", "299"]);
    // with the write option off, its next block has none: partition a merges by key
    ctx.run("SET hoodie.write.record.positions = false")
        .await
        .unwrap();
    ctx.run("UPDATE t SET ts = 5 WHERE id = 120").await.unwrap();
    assert_eq!(merged_by(&ctx, sums).await, ("1".into(), "1".into()));
    assert_eq!(cells(&ctx, sums).await[0][..3], ["300", "308", "299"]);
    let err = ctx
        .run("SET hoodie.merge.use.record.positions = maybe")
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("hoodie.merge.use.record.positions"),
        "{err}"
    );
}

#[tokio::test]
async fn no_positions_on_version_6_or_with_the_option_off() {
    let v6 = ", 'hoodie.write.table.version' = '6'";
    let off = ", 'hoodie.write.record.positions' = 'false'";
    for (props, write) in [
        (v6, "INSERT INTO t VALUES (250, 'x', 2, 'a')"),
        (v6, "UPDATE t SET v = 'x' WHERE id = 250"),
        (off, "INSERT INTO t VALUES (250, 'x', 2, 'a')"),
        (off, "UPDATE t SET v = 'x' WHERE id = 250"),
        (off, "DELETE FROM t WHERE id = 250"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let loc = tmp.path().join("t");
        let ctx = table(tmp.path(), &loc, props).await;
        ctx.run(write).await.unwrap();
        let logs = block_positions(&loc);
        assert_eq!(logs.len(), 1, "{props} {write}");
        for (_, blocks) in logs {
            for (_, positions, instant) in blocks {
                assert!(positions.is_none() && instant.is_none(), "{props} {write}");
            }
        }
    }
}

/// A DELETE, an UPDATE and a MERGE read their rows' row numbers only where their log blocks
/// carry positions: with the option off their scans number no rows.
#[tokio::test]
async fn the_option_off_spares_the_row_numbers_of_the_statement_scan() {
    let merge = "MERGE INTO t USING (SELECT 250 AS id, 'x' AS v, 2 AS ts, 'a' AS dt) s \
        ON t.id = s.id WHEN MATCHED THEN UPDATE SET *";
    for statement in [
        "DELETE FROM t WHERE id = 250",
        "UPDATE t SET v = 'x' WHERE id = 250",
        merge,
    ] {
        for (props, numbered) in [
            ("", true),
            (", 'hoodie.write.record.positions' = 'false'", false),
        ] {
            let tmp = tempfile::tempdir().unwrap();
            let loc = tmp.path().join("t");
            let ctx = table(tmp.path(), &loc, props).await;
            let plan = text(&ctx, &format!("EXPLAIN {statement}")).await;
            assert_eq!(
                plan.contains(hoodie_format::write::BASE_ROW),
                numbered,
                "{props} {statement}\n{plan}"
            );
        }
    }
}

/// With string keys (matched by `_hoodie_record_key`), and with a composite key, a scan after
/// an upsert merges by position too, the key column left unread when not asked for.
#[tokio::test]
async fn string_and_composite_keys_merge_by_position() {
    for (key, cols) in [("k", "k STRING"), ("k,n", "k STRING, n INT")] {
        let tmp = tempfile::tempdir().unwrap();
        let loc = tmp.path().join("s");
        let ctx = session_with_table(
            tmp.path(),
            None,
            &format!(
                "CREATE TABLE s ({cols}, v STRING, ts BIGINT) USING hudi \
                 TBLPROPERTIES (type = 'mor', primaryKey = '{key}', preCombineField = 'ts', \
                 hoodie.spark.sql.insert.into.operation = 'upsert', \
                 hoodie.compact.inline = 'false')"
            ),
            &loc,
        )
        .await;
        let n = if key.contains(',') { ", 1" } else { "" };
        ctx.run(&format!(
            "INSERT INTO s SELECT CONCAT('k', CAST(value AS STRING)){n}, 'v', 1 \
             FROM generate_series(1, 200)"
        ))
        .await
        .unwrap();
        ctx.run(&format!(
            "INSERT INTO s VALUES ('k7'{n}, 'Seven', 2), ('k150'{n}, NULL, 3), ('k9'{n}, 'old', 0)"
        ))
        .await
        .unwrap();
        let sums = "SELECT count(*), sum(ts), count(v), max(v) FROM s";
        assert_eq!(
            merged_by(&ctx, sums).await,
            ("1".into(), "0".into()),
            "{key}"
        );
        assert_eq!(
            cells(&ctx, sums).await,
            [["200", "203", "199", "v"]],
            "{key}"
        );
        assert_eq!(
            cells(&ctx, "SELECT k, v, ts FROM s WHERE ts <> 1 ORDER BY k").await,
            [["k150", "", "3"], ["k7", "Seven", "2"]],
            "{key}"
        );
    }
}

/// A value of `hoodie.write.record.positions` other than true or false fails the write with
/// the key and the values it takes, and nothing is committed (Java would read it as false).
#[tokio::test]
async fn a_bad_record_positions_value_fails_the_write() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = session_with_table(
        tmp.path(),
        None,
        &format!("{CREATE}, 'hoodie.write.record.positions' = 'maybe')"),
        &loc,
    )
    .await;
    let err = ctx
        .run("INSERT INTO t VALUES (1, 'a', 1, 'a')")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("\"maybe\" for hoodie.write.record.positions: expected true or false"),
        "{err}"
    );
    let committed: Vec<String> = files_under(&loc.join(".hoodie"))
        .into_iter()
        .filter(|f| f.ends_with(".deltacommit") || f.ends_with(".commit"))
        .collect();
    assert!(committed.is_empty(), "{committed:?}");
    assert_eq!(cells(&ctx, "SELECT count(*) FROM t").await, [["0"]]);
}

/// The table's rows read with slices merged by position and by key (`SET
/// hoodie.merge.use.record.positions`), which must agree, and the by-position read's
/// `(slices_by_position, slices_by_key)`.
async fn both_reads(
    ctx: &hoodie_datafusion::HoodieContext,
) -> (Vec<Vec<String>>, (String, String)) {
    let all = "SELECT id, dt, v, ts FROM t ORDER BY id, dt";
    let by = merged_by(ctx, all).await;
    let rows = cells(ctx, all).await;
    ctx.run("SET hoodie.merge.use.record.positions = false")
        .await
        .unwrap();
    assert_eq!(cells(ctx, all).await, rows, "merged by key");
    ctx.run("SET hoodie.merge.use.record.positions = true")
        .await
        .unwrap();
    (rows, by)
}

/// UPDATE, DELETE and MERGE INTO read their rows from the table with their rows in the base
/// files, so their log blocks carry record positions and the next scan merges every slice
/// by position, to the rows a merge by key gives: with row groups pruned by the WHERE (the
/// rows keep their numbers in the file), after deletes in the logs (the merged rows keep
/// theirs), with NULLs written, partitioned and not, with a simple and a composite key.
#[tokio::test]
async fn dml_log_blocks_carry_the_positions_of_the_rows_they_read() {
    for (key, partitioned) in [("id", " PARTITIONED BY (dt)"), ("id,dt", "")] {
        let tmp = tempfile::tempdir().unwrap();
        let loc = tmp.path().join("t");
        let ctx = session_with_table(
            tmp.path(),
            None,
            &format!(
                "CREATE TABLE t (id INT, v STRING, ts BIGINT, dt STRING) USING hudi{partitioned} \
                 TBLPROPERTIES (type = 'mor', primaryKey = '{key}', preCombineField = 'ts', \
                 hoodie.compact.inline = 'false', hoodie.parquet.block.size = '4096')"
            ),
            &loc,
        )
        .await;
        // row groups of 8192 rows (the writer measures the block size in such pieces)
        ctx.run(
            "INSERT INTO t SELECT CAST(value AS INT), CONCAT('v', CAST(value AS STRING)), 1, \
             CASE WHEN value % 2 = 0 THEN 'a' ELSE 'b' END FROM generate_series(1, 20000)",
        )
        .await
        .unwrap();
        let slices = if partitioned.is_empty() { "1" } else { "2" };
        let groups: Vec<usize> = files_under(&loc)
            .iter()
            .filter(|f| f.ends_with(".parquet"))
            .map(|f| row_groups(&loc.join(f)))
            .collect();
        assert!(groups.iter().all(|&g| g >= 2), "{key} {groups:?}");
        let mut want = cells(&ctx, "SELECT id, dt, v, ts FROM t ORDER BY id, dt").await;
        let statements = [
            // row groups without ids in range are pruned
            "UPDATE t SET v = CONCAT(v, '!'), ts = ts + 1 WHERE id > 19950 OR id < 20",
            "DELETE FROM t WHERE id BETWEEN 100 AND 130",
            // read through the logs, with deletes ahead of the rows in the base files
            "UPDATE t SET v = NULL, ts = 5 WHERE id > 300 AND id < 320 OR id = 19955",
            "MERGE INTO t USING (SELECT 301 AS id, 'm' AS v, 9 AS ts, 'b' AS dt \
             UNION ALL SELECT 302, 'gone', 9, 'a' UNION ALL SELECT 70001, 'new', 9, 'a') s \
             ON t.id = s.id AND t.dt = s.dt \
             WHEN MATCHED AND s.v = 'gone' THEN DELETE \
             WHEN MATCHED AND s.v <> 'gone' THEN UPDATE SET v = s.v, ts = s.ts \
             WHEN NOT MATCHED THEN INSERT *",
        ];
        for sql in statements {
            ctx.run(sql).await.unwrap();
            let (rows, by) = both_reads(&ctx).await;
            assert_eq!(by, (slices.into(), "0".into()), "{key} {sql}");
            apply_to_model(&mut want, sql);
            let differ: Vec<_> = rows
                .iter()
                .zip(&want)
                .filter(|(a, b)| a != b)
                .take(3)
                .collect();
            assert_eq!((rows.len(), differ), (want.len(), vec![]), "{key} {sql}");
        }
        for (file, blocks) in block_positions(&loc) {
            assert!(
                blocks.iter().all(|(_, p, i)| p.is_some() && i.is_some()),
                "{key} {file}: {blocks:?}"
            );
        }
    }
}

/// The rows `sql`, one of the statements above, leaves in `rows` (id, dt, v, ts as text).
fn apply_to_model(rows: &mut Vec<Vec<String>>, sql: &str) {
    let id = |r: &Vec<String>| r[0].parse::<i64>().unwrap();
    let set = |r: &mut Vec<String>, v: &str, ts: &str| {
        r[2] = v.to_string();
        r[3] = ts.to_string();
    };
    match &sql[..6] {
        "UPDATE" if sql.contains("'!'") => {
            for r in rows.iter_mut().filter(|r| id(r) > 19950 || id(r) < 20) {
                let (v, ts) = (format!("{}!", r[2]), (r[3].parse::<i64>().unwrap() + 1));
                set(r, &v, &ts.to_string());
            }
        }
        "DELETE" => rows.retain(|r| !(100..=130).contains(&id(r))),
        "UPDATE" => {
            for r in rows
                .iter_mut()
                .filter(|r| (id(r) > 300 && id(r) < 320) || id(r) == 19955)
            {
                set(r, "", "5");
            }
        }
        _ => {
            rows.retain(|r| id(r) != 302);
            if let Some(r) = rows.iter_mut().find(|r| id(r) == 301) {
                set(r, "m", "9");
            }
            rows.push(vec!["70001".into(), "a".into(), "new".into(), "9".into()]);
            rows.sort_by_key(|r| (id(r), r[1].clone()));
        }
    }
}

/// A statement whose rows were read while a compaction of their file group was pending, which
/// the write then runs first, writes no positions for them (they count rows of the base file
/// the compaction replaced); the next statement's rows count rows of the compaction's base
/// file and carry them. The reads agree with a merge by key throughout.
#[tokio::test]
async fn no_positions_against_a_base_file_a_compaction_replaced_since_the_read() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let props = ", hoodie.compact.inline.max.delta.commits = '1'";
    let ctx = table(tmp.path(), &loc, props).await;
    let update = |v: &str, ids: &str| format!("UPDATE t SET v = '{v}' WHERE id IN ({ids})");
    ctx.run(&update("one", "10, 11")).await.unwrap();
    ctx.run("CALL run_compaction(op => 'schedule', table => 't')")
        .await
        .unwrap();
    let logged = |loc: &Path| {
        block_positions(loc)
            .into_iter()
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let before = logged(&loc);
    ctx.run(&update("two", "10, 12")).await.unwrap();
    let written: Vec<_> = logged(&loc)
        .into_iter()
        .filter(|(f, _)| !before.contains_key(f))
        .collect();
    assert_eq!(written.len(), 1, "{written:?}");
    assert_eq!(written[0].1, [(3, None, None)], "{written:?}");
    let (rows, _) = both_reads(&ctx).await;
    let changed = |rows: &[Vec<String>]| -> Vec<String> {
        rows.iter()
            .filter(|r| r[2] != format!("v{}", r[0]))
            .map(|r| format!("{}={}", r[0], r[2]))
            .collect()
    };
    assert_eq!(changed(&rows), ["10=two", "11=one", "12=two"]);
    ctx.run("CALL run_compaction(op => 'run', table => 't')")
        .await
        .unwrap();
    let before = logged(&loc);
    ctx.run(&update("three", "10, 13")).await.unwrap();
    let bases = files_under(&loc);
    for (f, blocks) in logged(&loc)
        .into_iter()
        .filter(|(f, _)| !before.contains_key(f))
    {
        let (_, positions, instant) = &blocks[0];
        assert!(positions.is_some(), "{f} {blocks:?}");
        // the newest base file of its group: the compaction's (which the read saw complete)
        let group = f.split("/.").nth(1).unwrap().split('_').next().unwrap();
        let newest = bases
            .iter()
            .filter(|b| b.ends_with(".parquet") && b.contains(group))
            .map(|b| b.trim_end_matches(".parquet").rsplit('_').next().unwrap())
            .max();
        assert_eq!(instant.as_deref(), newest, "{f}");
    }
    let (rows, by) = both_reads(&ctx).await;
    assert_eq!(by.1, "0");
    assert_eq!(changed(&rows), ["10=three", "11=one", "12=two", "13=three"]);
}
