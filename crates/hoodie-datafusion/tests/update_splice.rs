//! An UPDATE rewrites a file group by copying the column chunks of the columns it does not
//! assign byte for byte from the old base file; only the assigned columns and the meta columns
//! a rewrite restamps are encoded again. EXPLAIN names the assigned columns.

mod common;

use std::path::Path;

use common::{count, session_with_table};
use hoodie_datafusion::StatementOutput;
use hoodie_format::storage::TableStorage;
use hoodie_format::HudiTable;
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

async fn text(ctx: &hoodie_datafusion::HoodieContext, sql: &str) -> String {
    let StatementOutput::Rows { batches, .. } = ctx.run(sql).await.unwrap() else {
        panic!("{sql} returned no rows");
    };
    datafusion::arrow::util::pretty::pretty_format_batches(&batches)
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn update_copies_the_chunks_of_unassigned_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = session_with_table(
        tmp.path(),
        None,
        "CREATE TABLE t (id INT, name STRING, note STRING, price DOUBLE, ts INT, p INT) USING hudi PARTITIONED BY (p) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')",
        &loc,
    )
    .await;
    let values: Vec<String> = (0..2000)
        .map(|i| {
            format!(
                "({i}, 'n{i}', 'note {i} {}', {i}.5, 1, {})",
                "z".repeat(i % 13),
                i % 2
            )
        })
        .collect();
    ctx.run(&format!("INSERT INTO t VALUES {}", values.join(", ")))
        .await
        .unwrap();
    let table = HudiTable::open(TableStorage::local(&loc).unwrap())
        .await
        .unwrap();
    let before = table
        .file_slices(&table.timeline().await.unwrap(), None)
        .await
        .unwrap();
    assert_eq!(before.len(), 2);
    let kept = "SELECT id, name, note, ts, p FROM t ORDER BY id";
    let kept_before = text(&ctx, kept).await;

    let plan = text(
        &ctx,
        "EXPLAIN UPDATE t SET price = price * 2 WHERE id % 5 = 3",
    )
    .await;
    assert!(
        plan.contains("HudiDml: op=Update table=t changes=[price]"),
        "{plan}"
    );
    ctx.run("UPDATE t SET price = price * 2 WHERE id % 5 = 3")
        .await
        .unwrap();

    assert_eq!(text(&ctx, kept).await, kept_before);
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM t WHERE price = (id + 0.5) * 2").await,
        400
    );
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM t WHERE price = id + 0.5").await,
        1600
    );
    let restamped = "SELECT count(DISTINCT _hoodie_commit_seqno) FROM t WHERE id % 5 = 3 AND _hoodie_commit_time = (SELECT max(_hoodie_commit_time) FROM t)";
    assert_eq!(count(&ctx, restamped).await, 400);

    let after = table
        .file_slices(&table.timeline().await.unwrap(), None)
        .await
        .unwrap();
    for s in &after {
        let old = before.iter().find(|b| b.file_id == s.file_id).unwrap();
        let old_path = loc.join(&old.base_file.as_ref().unwrap().rel_path);
        let new_path = loc.join(&s.base_file.as_ref().unwrap().rel_path);
        assert_ne!(old_path, new_path, "{} was rewritten", s.partition_path);
        for column in [
            "_hoodie_record_key",
            "_hoodie_partition_path",
            "id",
            "name",
            "note",
            "ts",
            "p",
        ] {
            assert_eq!(
                chunk(&new_path, column),
                chunk(&old_path, column),
                "{column} is copied"
            );
        }
        for column in [
            "price",
            "_hoodie_commit_time",
            "_hoodie_commit_seqno",
            "_hoodie_file_name",
        ] {
            assert_ne!(
                chunk(&new_path, column),
                chunk(&old_path, column),
                "{column} is encoded again"
            );
        }
        // the key index carries over
        use hoodie_format::bloom::{
            BLOOM_FILTER_FOOTER_KEY, MAX_RECORD_KEY_FOOTER_KEY, MIN_RECORD_KEY_FOOTER_KEY,
        };
        for key in [
            BLOOM_FILTER_FOOTER_KEY,
            MIN_RECORD_KEY_FOOTER_KEY,
            MAX_RECORD_KEY_FOOTER_KEY,
        ] {
            let value =
                |p: &Path| hoodie_format::footer::footer_value(&footer(p), key).map(str::to_string);
            assert!(value(&old_path).is_some());
            assert_eq!(value(&new_path), value(&old_path), "{key}");
        }
    }
}

/// A MERGE whose clauses update some columns splices the file groups it only updates; one that
/// also inserts into a file group rewrites that one whole. Either way every other column keeps
/// its stored values.
#[tokio::test]
async fn merge_with_partial_updates_copies_the_other_chunks() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = session_with_table(
        tmp.path(),
        None,
        "CREATE TABLE t (id INT, note STRING, price DOUBLE, ts INT, p INT) USING hudi PARTITIONED BY (p) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')",
        &loc,
    )
    .await;
    let values: Vec<String> = (0..1000)
        .map(|i| format!("({i}, 'note {i}', {i}.0, 1, {})", i % 2))
        .collect();
    ctx.run(&format!("INSERT INTO t VALUES {}", values.join(", ")))
        .await
        .unwrap();
    let table = HudiTable::open(TableStorage::local(&loc).unwrap())
        .await
        .unwrap();
    let before = table
        .file_slices(&table.timeline().await.unwrap(), None)
        .await
        .unwrap();
    let notes = "SELECT id, note, p FROM t WHERE id < 1000 ORDER BY id";
    let notes_before = text(&ctx, notes).await;

    // p=0 gets updates only (ids 10, 20); p=1 gets an update (id 11) and an insert (id 2001)
    let merge = "MERGE INTO t USING (SELECT * FROM (VALUES (10, -1.0, 2, 0), (20, -1.0, 2, 0), (11, -1.0, 2, 1), (2001, -1.0, 2, 1)) AS v(id, price, ts, p)) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET price = s.price, ts = s.ts WHEN NOT MATCHED THEN INSERT (id, note, price, ts, p) VALUES (s.id, 'new', s.price, s.ts, s.p)";
    let plan = text(&ctx, &format!("EXPLAIN {merge}")).await;
    assert!(
        plan.contains("HudiDml: op=Merge table=t changes=[price, ts]"),
        "{plan}"
    );
    ctx.run(merge).await.unwrap();

    assert_eq!(text(&ctx, notes).await, notes_before);
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM t WHERE price = -1.0").await,
        4
    );
    assert_eq!(
        count(
            &ctx,
            "SELECT count(*) FROM t WHERE id = 2001 AND note = 'new'"
        )
        .await,
        1
    );
    let after = table
        .file_slices(&table.timeline().await.unwrap(), None)
        .await
        .unwrap();
    for s in &after {
        let old = before.iter().find(|b| b.file_id == s.file_id).unwrap();
        let old_path = loc.join(&old.base_file.as_ref().unwrap().rel_path);
        let new_path = loc.join(&s.base_file.as_ref().unwrap().rel_path);
        assert_ne!(old_path, new_path);
        let copied = chunk(&new_path, "note") == chunk(&old_path, "note");
        // p=0 is spliced; p=1 holds one more row, so its file is written whole
        assert_eq!(copied, s.partition_path == "p=0", "{}", s.partition_path);
    }
}
