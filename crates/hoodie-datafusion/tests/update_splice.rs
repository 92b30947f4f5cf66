//! A rewrite copies the column chunks of the columns that do not change byte for byte from the
//! old base file; only the changed columns and the meta columns a rewrite restamps are encoded
//! again. An UPDATE (and a MERGE's UPDATE clauses) say which columns change, and EXPLAIN names
//! them; for an upsert the updated rows are compared with the stored ones. A compaction whose
//! logs delete nothing splices the base file the same way.

mod common;

use std::path::Path;

use common::{count, fixture, text, Fixture};

use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};

fn footer(path: &Path) -> ParquetMetaData {
    let bytes = bytes::Bytes::from(std::fs::read(path).unwrap());
    ParquetMetaDataReader::new()
        .parse_and_finish(&bytes)
        .unwrap()
}

/// The bytes of column chunk `column` (by name) of the file's only row group.
fn chunk(path: &Path, column: &str) -> Vec<u8> {
    let meta = footer(path);
    let rg = meta.row_group(0);
    let c = (0..rg.num_columns())
        .find(|&c| rg.column(c).column_path().string() == column)
        .unwrap();
    let (start, len) = rg.column(c).byte_range();
    std::fs::read(path).unwrap()[start as usize..(start + len) as usize].to_vec()
}

const CREATE: &str = "CREATE TABLE t (id INT, name STRING, note STRING, price DOUBLE, ts INT, p INT) USING hudi PARTITIONED BY (p) TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts')";

/// 2000 rows over partitions p=0 (even ids) and p=1 (odd ids); ts is 1, price id + 0.5.
async fn two_partitions(tmp: &Path) -> Fixture {
    let rows = (0..2000)
        .map(|i| {
            let note = format!("note {i} {}", "z".repeat(i % 13));
            format!("({i}, 'n{i}', '{note}', {i}.5, 1, {})", i % 2)
        })
        .collect();
    fixture(tmp, CREATE, rows).await
}

#[tokio::test]
async fn update_copies_the_chunks_of_unassigned_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let f = two_partitions(tmp.path()).await;
    let ctx = &f.ctx;
    let kept = "SELECT id, name, note, ts, p FROM t ORDER BY id";
    let kept_before = text(ctx, kept).await;

    let update = "UPDATE t SET price = price * 2 WHERE id % 5 = 3";
    let plan = text(ctx, &format!("EXPLAIN {update}")).await;
    assert!(
        plan.contains("HudiDml: op=Update table=t changes=[price]"),
        "{plan}"
    );
    ctx.run(update).await.unwrap();

    assert_eq!(text(ctx, kept).await, kept_before);
    let doubled = "SELECT count(*) FROM t WHERE price = (id + 0.5) * 2";
    assert_eq!(count(ctx, doubled).await, 400);
    assert_eq!(
        count(ctx, "SELECT count(*) FROM t WHERE price = id + 0.5").await,
        1600
    );
    let restamped = "SELECT count(DISTINCT _hoodie_commit_seqno) FROM t WHERE id % 5 = 3 AND _hoodie_commit_time = (SELECT max(_hoodie_commit_time) FROM t)";
    assert_eq!(count(ctx, restamped).await, 400);

    use hoodie_format::inspect::{
        BLOOM_FILTER_FOOTER_KEY, MAX_RECORD_KEY_FOOTER_KEY, MIN_RECORD_KEY_FOOTER_KEY,
    };
    let rewrites = f.rewrites().await;
    assert_eq!(rewrites.len(), 2);
    for (_, old, new) in rewrites {
        let copied = [
            "_hoodie_record_key",
            "_hoodie_partition_path",
            "id",
            "name",
            "note",
            "ts",
            "p",
        ];
        for column in copied {
            assert_eq!(
                chunk(&new, column),
                chunk(&old, column),
                "{column} is copied"
            );
        }
        let encoded = [
            "price",
            "_hoodie_commit_time",
            "_hoodie_commit_seqno",
            "_hoodie_file_name",
        ];
        for column in encoded {
            assert_ne!(
                chunk(&new, column),
                chunk(&old, column),
                "{column} is encoded again"
            );
        }
        // the key index carries over
        for key in [
            BLOOM_FILTER_FOOTER_KEY,
            MIN_RECORD_KEY_FOOTER_KEY,
            MAX_RECORD_KEY_FOOTER_KEY,
        ] {
            let value = |p: &Path| {
                hoodie_format::inspect::footer_value(&footer(p), key).map(str::to_string)
            };
            assert!(value(&old).is_some());
            assert_eq!(value(&new), value(&old), "{key}");
        }
    }
}

/// A MERGE whose clauses update some columns splices the file groups it changes; the rows it
/// inserts into one follow as a row group of their own. Every other column keeps its stored
/// values.
#[tokio::test]
async fn merge_with_partial_updates_copies_the_other_chunks() {
    let tmp = tempfile::tempdir().unwrap();
    let f = two_partitions(tmp.path()).await;
    let ctx = &f.ctx;
    let notes = "SELECT id, name, note, p FROM t WHERE id < 2000 ORDER BY id";
    let notes_before = text(ctx, notes).await;

    // p=0 gets updates only (ids 10, 20); p=1 gets an update (id 11) and an insert (id 2001)
    let merge = "MERGE INTO t USING (SELECT * FROM (VALUES (10, -1.0, 2, 0), (20, -1.0, 2, 0), (11, -1.0, 2, 1), (2001, -1.0, 2, 1)) AS v(id, price, ts, p)) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET price = s.price, ts = s.ts WHEN NOT MATCHED THEN INSERT (id, name, note, price, ts, p) VALUES (s.id, 'new', 'new', s.price, s.ts, s.p)";
    let plan = text(ctx, &format!("EXPLAIN {merge}")).await;
    assert!(
        plan.contains("HudiDml: op=Merge table=t changes=[price, ts]"),
        "{plan}"
    );
    ctx.run(merge).await.unwrap();

    assert_eq!(text(ctx, notes).await, notes_before);
    assert_eq!(
        count(ctx, "SELECT count(*) FROM t WHERE price = -1.0").await,
        4
    );
    assert_eq!(
        count(
            ctx,
            "SELECT count(*) FROM t WHERE id = 2001 AND note = 'new'"
        )
        .await,
        1
    );
    for (partition, old, new) in f.rewrites().await {
        // both are spliced; p=1's insert follows as a row group of its own
        assert_eq!(chunk(&new, "note"), chunk(&old, "note"), "{partition}");
        let row_groups = footer(&new).num_row_groups();
        assert_eq!(
            row_groups,
            if partition == "p=1" { 2 } else { 1 },
            "{partition}"
        );
    }
}

/// An upsert replaces whole rows; the columns whose incoming values equal the stored ones in
/// every updated row of a file group are copied, the others encoded again.
#[tokio::test]
async fn upsert_copies_the_columns_whose_values_do_not_change() {
    let tmp = tempfile::tempdir().unwrap();
    let rows = (0..1000)
        .map(|i| format!("({i}, NULL, 'note {i}', {i}.0, 1, {})", i % 2))
        .collect();
    let f = fixture(tmp.path(), CREATE, rows).await;
    let ctx = &f.ctx;
    // p=0: new prices, the same notes and NULL names, and a new key (2000) that joins the
    // small file as a row group of its own; p=1: one note changes (id 11)
    ctx.run("INSERT INTO t VALUES (10, NULL, 'note 10', -1.0, 2, 0), (20, NULL, 'note 20', -1.0, 2, 0), (2000, NULL, 'note 2000', -1.0, 2, 0), (11, NULL, 'changed', -1.0, 2, 1), (13, NULL, 'note 13', -1.0, 2, 1)")
        .await
        .unwrap();
    assert_eq!(
        count(ctx, "SELECT count(*) FROM t WHERE price = -1.0").await,
        5
    );
    let same_note = "SELECT count(*) FROM t WHERE note = 'note ' || CAST(id AS STRING)";
    assert_eq!(count(ctx, same_note).await, 1000);
    assert_eq!(
        count(
            ctx,
            "SELECT count(*) FROM t WHERE id = 11 AND note = 'changed'"
        )
        .await,
        1
    );
    assert_eq!(
        count(ctx, "SELECT count(*) FROM t WHERE name IS NULL").await,
        1001
    );
    for (partition, old, new) in f.rewrites().await {
        let copied = |c: &str| chunk(&new, c) == chunk(&old, c);
        assert!(copied("id") && copied("name") && copied("p"), "{partition}");
        assert!(!copied("price") && !copied("ts"), "{partition}");
        assert_eq!(copied("note"), partition == "p=0", "{partition}");
        let row_groups = footer(&new).num_row_groups();
        assert_eq!(
            row_groups,
            if partition == "p=0" { 2 } else { 1 },
            "{partition}"
        );
    }
    // the new key is in the file's key index: upserting it again updates it
    ctx.run("INSERT INTO t VALUES (2000, NULL, 'again', -2.0, 3, 0)")
        .await
        .unwrap();
    assert_eq!(
        count(ctx, "SELECT count(*) FROM t WHERE id = 2000").await,
        1
    );
    let again = "SELECT count(*) FROM t WHERE id = 2000 AND note = 'again'";
    assert_eq!(count(ctx, again).await, 1);
}

/// The columns the scan of table `t` in `plan` (an EXPLAIN's text) reads.
fn scanned(plan: &str) -> Vec<String> {
    let line = plan.lines().find(|l| l.contains("TableScan: t "));
    let line = line.unwrap_or_else(|| panic!("{plan}"));
    let list = line
        .split("projection=[")
        .nth(1)
        .unwrap()
        .split(']')
        .next()
        .unwrap();
    list.split(", ").map(str::to_string).collect()
}

/// A DELETE's change set carries only the columns that locate its rows (not the ordering
/// value: a statement's delete wins without a comparison), and a MERGE does not read the
/// target's commit time or sequence id: the target scans leave the rest out. With a simple key
/// on an integer column the stored key is that column's text, so neither reads
/// `_hoodie_record_key`.
#[tokio::test]
async fn change_sets_read_only_what_the_write_needs() {
    let tmp = tempfile::tempdir().unwrap();
    let f = two_partitions(tmp.path()).await;
    let ctx = &f.ctx;

    let plan = text(ctx, "EXPLAIN DELETE FROM t WHERE id % 5 = 3").await;
    let want = ["_hoodie_partition_path", "_hoodie_file_name", "id", "p"];
    assert_eq!(scanned(&plan), want, "{plan}");
    assert!(
        plan.contains("CAST(t.id AS Utf8) AS _hoodie_record_key"),
        "{plan}"
    );

    let merge = "EXPLAIN MERGE INTO t USING (SELECT 3 AS id, 'n' AS name, 'm' AS note, 1.0 AS price, 9 AS ts, 1 AS p) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *";
    let plan = text(ctx, merge).await;
    let want = ["_hoodie_partition_path", "_hoodie_file_name", "id", "p"];
    assert_eq!(scanned(&plan), want, "{plan}");

    // and they still do what they say
    ctx.run("DELETE FROM t WHERE id % 5 = 3").await.unwrap();
    assert_eq!(count(ctx, "SELECT count(*) FROM t").await, 1600);
    assert_eq!(
        count(ctx, "SELECT count(*) FROM t WHERE note LIKE 'note %'").await,
        1600
    );
}

/// Where a stored key is not exactly the text of one column (a complex key, a decimal key
/// Java formats its own way), change sets read `_hoodie_record_key` itself; where it is (a
/// mixed-case string key, on COW and MOR), they take it from the column, and every statement
/// keeps the stored keys.
#[tokio::test]
async fn stored_keys_come_from_the_key_column_only_where_that_is_exact() {
    let cases = [
        (
            "(a INT, b STRING, v INT)",
            "'a,b'",
            "(1, 'x', 1), (2, 'y', 2), (3, 'z', 3)",
            "t.a = s.a AND t.b = s.b",
            false,
        ),
        (
            "(d DECIMAL(10,2), v INT)",
            "'d'",
            "(1.50, 1), (2.00, 2), (3.25, 3)",
            "t.d = s.d",
            false,
        ),
        (
            "(\"UserId\" STRING, v INT)",
            "'UserId'",
            "('u1', 1), ('U2', 2), ('u3', 3)",
            "t.userid = s.\"UserId\"",
            true,
        ),
    ];
    for (columns, key, rows, on, derived) in cases {
        for ty in ["cow", "mor"] {
            let tmp = tempfile::tempdir().unwrap();
            let create = format!(
                "CREATE TABLE t {columns} USING hudi TBLPROPERTIES (type = '{ty}', primaryKey = {key})"
            );
            let f = fixture(tmp.path(), &create, vec![rows.to_string()]).await;
            let ctx = &f.ctx;
            let plan = text(ctx, "EXPLAIN DELETE FROM t WHERE v = 1").await;
            let reads_key = scanned(&plan).contains(&"_hoodie_record_key".to_string());
            assert_eq!(reads_key, !derived, "{columns} {ty}: {plan}");
            let keys = "SELECT _hoodie_record_key, v FROM t ORDER BY v";
            let before = text(ctx, keys).await;
            ctx.run("DELETE FROM t WHERE v = 1").await.unwrap();
            ctx.run("UPDATE t SET v = v + 10 WHERE v = 2")
                .await
                .unwrap();
            // the UPDATE assigns the key too: a version 6 merge-on-read table needs it (Hudi 1.2)
            let assign = on.replace("t.", "").replace(" AND ", ", ");
            let merge = format!("MERGE INTO t USING (SELECT * FROM t WHERE v = 3) s ON {on} WHEN MATCHED THEN UPDATE SET v = 30, {assign}");
            ctx.run(&merge).await.unwrap();
            let after = text(ctx, keys).await;
            let key_of = |table: &str, v: &str| -> String {
                let line = table.lines().find(|l| l.contains(&format!("| {v} ")));
                line.unwrap_or_else(|| panic!("{v} in {table}"))
                    .split('|')
                    .nth(1)
                    .unwrap()
                    .trim()
                    .to_string()
            };
            assert_eq!(
                key_of(&after, "12"),
                key_of(&before, "2"),
                "{before}{after}"
            );
            assert_eq!(
                key_of(&after, "30"),
                key_of(&before, "3"),
                "{before}{after}"
            );
            assert_eq!(count(ctx, "SELECT count(*) FROM t").await, 2, "{after}");
        }
    }
}

/// A compaction of a slice whose logs delete nothing splices its base file: every record
/// stays where it is, the logged versions replace theirs (an older one under event-time
/// ordering does not), and only the columns the logged records change and the restamped meta
/// columns are encoded again. A slice whose logs delete a record is merged whole.
#[tokio::test]
async fn compaction_of_updates_copies_the_chunks_they_do_not_change() {
    let tmp = tempfile::tempdir().unwrap();
    let create = CREATE.replace(
        "preCombineField = 'ts'",
        "preCombineField = 'ts', type = 'mor', 'hoodie.compact.inline' = 'false'",
    );
    let rows = (0..2000)
        .map(|i| {
            let note = format!("'note {i} {}'", "z".repeat(i % 13));
            let note = if i % 7 == 0 { "NULL".to_string() } else { note };
            format!("({i}, 'n{i}', {note}, {i}.5, 1, {})", i % 2)
        })
        .collect();
    // the base files in zstd, the compaction's in snappy: a chunk the compaction encoded
    // anew differs from the stored one even where its values do not
    let create = create.replace(
        "type = 'mor'",
        "type = 'mor', 'hoodie.parquet.compression.codec' = 'zstd'",
    );
    let f = fixture(tmp.path(), &create, rows).await;
    let ctx = &f.ctx;
    ctx.run("ALTER TABLE t SET TBLPROPERTIES ('hoodie.parquet.compression.codec' = 'snappy')")
        .await
        .unwrap();
    // 400 records get a NULL price and ts 2, one of them twice; id 4's older version loses
    for update in [
        "UPDATE t SET price = NULL, ts = 2 WHERE id % 5 = 3",
        "UPDATE t SET price = 7.5, ts = 3 WHERE id = 13",
        "UPDATE t SET price = -1, ts = 0 WHERE id = 4",
    ] {
        ctx.run(update).await.unwrap();
    }
    // p=0's logs also delete a record: that slice is merged whole
    ctx.run("DELETE FROM t WHERE id = 0").await.unwrap();
    let all = "SELECT _hoodie_commit_time, _hoodie_commit_seqno, _hoodie_record_key, \
               _hoodie_partition_path, id, name, note, price, ts, p FROM t ORDER BY id";
    let before = text(ctx, all).await;
    assert_eq!(
        count(ctx, "SELECT count(*) FROM t WHERE price IS NULL").await,
        399
    );
    assert_eq!(
        count(ctx, "SELECT count(*) FROM t WHERE id = 4 AND price = 4.5").await,
        1
    );

    ctx.run("RUN COMPACTION ON t").await.unwrap();
    assert_eq!(text(ctx, all).await, before);
    let instant = text(ctx, "SELECT max(_hoodie_commit_time) FROM t").await;
    let files = "SELECT count(*) FROM t WHERE _hoodie_file_name NOT LIKE '%.parquet'";
    assert_eq!(count(ctx, files).await, 0, "{instant}");

    let rewrites = f.rewrites().await;
    assert_eq!(rewrites.len(), 2);
    for (partition, old, new) in rewrites {
        let copied = |c: &str| chunk(&new, c) == chunk(&old, c);
        let spliced = [
            "_hoodie_record_key",
            "_hoodie_partition_path",
            "id",
            "name",
            "note",
            "p",
        ];
        for column in spliced {
            assert_eq!(copied(column), partition == "p=1", "{partition}: {column}");
        }
        for column in ["price", "ts", "_hoodie_commit_seqno", "_hoodie_file_name"] {
            assert!(!copied(column), "{partition}: {column} is encoded again");
        }
        if partition == "p=1" {
            // the key index carries over
            use hoodie_format::inspect::BLOOM_FILTER_FOOTER_KEY;
            let bloom = |p: &Path| {
                hoodie_format::inspect::footer_value(&footer(p), BLOOM_FILTER_FOOTER_KEY)
                    .map(str::to_string)
            };
            assert!(bloom(&old).is_some());
            assert_eq!(bloom(&new), bloom(&old));
        }
    }
    // a new session reads the compacted table alike, and finds keys through the carried index
    let fresh = common::reader(tmp.path(), &f.loc).await;
    assert_eq!(text(&fresh, all).await, before);
    fresh
        .run("UPDATE t SET name = 'found', ts = 9 WHERE id = 13")
        .await
        .unwrap();
    assert_eq!(
        count(&fresh, "SELECT count(*) FROM t WHERE name = 'found'").await,
        1
    );
}

/// `hoodie.parquet.block.size` closes a base file's row group once it reaches that many
/// encoded bytes, on a full write and for the inserts a splice appends; the rows read back.
#[tokio::test]
async fn the_block_size_bounds_the_row_groups_of_base_files() {
    let tmp = tempfile::tempdir().unwrap();
    let create = "CREATE TABLE t (id INT, name STRING, note STRING, price DOUBLE, ts INT, p INT) USING hudi PARTITIONED BY (p) TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts', 'hoodie.parquet.block.size' = '8192')";
    let rows = (0..20000)
        .map(|i| {
            format!(
                "({i}, 'n{i}', 'note {i} {}', {i}.5, 1, {})",
                "z".repeat(i % 13),
                i % 2
            )
        })
        .collect();
    let f = fixture(tmp.path(), create, rows).await;
    let ctx = &f.ctx;
    let groups = |path: &Path| {
        let meta = footer(path);
        let rows: Vec<i64> = meta.row_groups().iter().map(|g| g.num_rows()).collect();
        assert_eq!(rows.iter().sum::<i64>(), meta.file_metadata().num_rows());
        rows
    };
    for slice in &f.before {
        let path = f.loc.join(&slice.base_file.as_ref().unwrap().rel_path);
        assert!(groups(&path).len() > 1, "{}", path.display());
    }
    // 10000 rows a file, given to the writer 8192 at a time: two row groups each.
    // An update of both partitions and 600 inserts into p=1: the splice appends the inserts
    // as row groups of about the block size too
    let inserts: Vec<String> = (20000..20600)
        .map(|i| format!("({i}, 'n{i}', 'note {i}', {i}.5, 1, 1)"))
        .collect();
    ctx.run(&format!(
        "INSERT INTO t VALUES (10, 'ten', 'note 10', -1.0, 2, 0), (11, 'eleven', 'note 11', -1.0, 2, 1), {}",
        inserts.join(", ")
    ))
    .await
    .unwrap();
    for (partition, old, new) in f.rewrites().await {
        let (old_groups, new_groups) = (groups(&old), groups(&new));
        let appended = new_groups.len() - old_groups.len();
        assert_eq!(
            appended > 1,
            partition == "p=1",
            "{partition}: {new_groups:?}"
        );
    }
    assert_eq!(count(ctx, "SELECT count(*) FROM t").await, 20600);
    assert_eq!(
        count(ctx, "SELECT count(*) FROM t WHERE price = -1.0").await,
        2
    );
    assert_eq!(
        count(ctx, "SELECT count(*) FROM t WHERE id >= 20000 AND p = 1").await,
        600
    );
}
