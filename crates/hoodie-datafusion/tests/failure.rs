//! A write that fails at any point leaves the table readable and unchanged; the next writer
//! rolls back what the failed one left (deletes its files, records a rollback).
//! Failures are injected by failing the N-th object store write of an INSERT, for every N.

use std::sync::atomic::Ordering;
use std::sync::Arc;

mod common;

use common::{files_under, session_with_table};
use datafusion::arrow::array::{Float64Array, Int32Array, RecordBatch, StringArray};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use hoodie_datafusion::HudiTableProvider;
use hoodie_datafusion::{to_table_batch, write_batches, WriteKind, WriteStatement};
use hoodie_datafusion::{HoodieContext, StatementOutput};
use hoodie_format::storage::TableStorage;
use hoodie_format::write::WriteOperation;
use hoodie_format::HudiTable;

use common::failing::FailingStore;

async fn snapshot(ctx: &HoodieContext) -> Vec<String> {
    let StatementOutput::Rows { batches, .. } = ctx
        .run("SELECT id, name, price, dt FROM t ORDER BY id, name")
        .await
        .unwrap()
    else {
        panic!("rows expected")
    };
    let mut out = Vec::new();
    for b in batches {
        for r in 0..b.num_rows() {
            out.push(format!(
                "{:?}",
                (0..b.num_columns())
                    .map(|c| datafusion::arrow::util::display::array_value_to_string(
                        b.column(c),
                        r
                    )
                    .unwrap())
                    .collect::<Vec<_>>()
            ));
        }
    }
    out
}

#[tokio::test]
async fn failed_inserts_leave_the_table_unchanged_and_are_rolled_back() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = session_with_table(
        tmp.path(),
        None,
        "CREATE TABLE t (id INT, name STRING, price DOUBLE, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id')",
        &loc,
    )
    .await;
    ctx.run("INSERT INTO t VALUES (1, 'a', 1.0, 'x'), (2, 'b', 2.0, 'y')")
        .await
        .unwrap();
    let before = snapshot(&ctx).await;
    assert_eq!(before.len(), 2);

    let data_schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("price", DataType::Float64, true),
        Field::new("dt", DataType::Utf8, true),
    ]));
    let batch = RecordBatch::try_new(
        data_schema,
        vec![
            Arc::new(Int32Array::from(vec![3, 4, 5])),
            Arc::new(StringArray::from(vec!["c", "d", "e"])),
            Arc::new(Float64Array::from(vec![3.0, 4.0, 5.0])),
            Arc::new(StringArray::from(vec!["x", "z", "z"])),
        ],
    )
    .unwrap();

    let storage = TableStorage::local(&loc).unwrap();
    let mut failures = 0;
    let mut n = 1;
    loop {
        let store = Arc::new(FailingStore::new(storage.store().clone(), n));
        let table = HudiTable::open(storage.with_store(store.clone()))
            .await
            .unwrap();
        let provider = HudiTableProvider::try_new("t", table.clone())
            .await
            .unwrap();
        let schema = datafusion::datasource::TableProvider::schema(&provider);
        let input = to_table_batch(&batch, &schema).unwrap();
        // an insert into new file groups, as `insert` with no duplicate policy writes
        let mut mode = provider
            .write_spec(&Default::default(), WriteStatement::InsertInto)
            .unwrap();
        mode.operation = WriteOperation::Insert;
        mode.kind = WriteKind::Insert;
        let result = write_batches(&table, &schema, &mode, vec![input]).await;
        match result {
            Err(e) => {
                assert!(
                    e.to_string().contains("injected failure"),
                    "write {n}: unexpected error {e}"
                );
                failures += 1;
                // the table reads exactly as before
                assert_eq!(snapshot(&ctx).await, before, "after failing write {n}");
            }
            Ok(rows) => {
                // the fault came after the commit point (or not at all): the insert is visible
                assert_eq!(rows.affected(), 3);
                assert_eq!(
                    store.writes.load(Ordering::SeqCst) + 1,
                    n,
                    "write {n} was never reached, so the commit completed"
                );
                break;
            }
        }
        n += 1;
        assert!(n < 100, "the insert never succeeded");
    }
    // requested, inflight, two partition metadata files, markers, files, commit: several writes
    assert!(failures >= 6, "only {failures} write points were exercised");

    // the successful write rolled back every failed attempt: no files of pending instants remain
    let after = snapshot(&ctx).await;
    assert_eq!(after.len(), 5);
    let files = files_under(&loc);
    common::assert_nothing_uncommitted(&storage, &files).await;
    let rollbacks = files
        .iter()
        .filter(|f| f.starts_with(".hoodie/") && f.ends_with(".rollback"))
        .count();
    assert!(rollbacks >= 1, "no rollback was recorded: {files:?}");
    assert!(
        !files.iter().any(|f| f.starts_with(".hoodie/.temp/")),
        "markers left behind: {files:?}"
    );
}

/// A table made with `props` holding ids 1 to 3 (partitions x and y), and the change set of
/// `UPDATE t SET name = 'zz' WHERE id >= 2` written through a store that fails each of its
/// writes in turn (the table reads as before after every failure). Returns the session, the
/// table's location and how many write points failed.
async fn fail_every_write_of_an_update(
    tmp: &std::path::Path,
    props: &str,
) -> (HoodieContext, std::path::PathBuf, usize) {
    let loc = tmp.join("t");
    let ctx = session_with_table(
        tmp,
        None,
        &format!("CREATE TABLE t (id INT, name STRING, price DOUBLE, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES ({props})"),
        &loc,
    )
    .await;
    ctx.run("INSERT INTO t VALUES (1, 'a', 1.0, 'x'), (2, 'b', 2.0, 'y'), (3, 'c', 3.0, 'y')")
        .await
        .unwrap();
    let before = snapshot(&ctx).await;
    let StatementOutput::Rows { batches, .. } = ctx
        .run("SELECT _hoodie_commit_time, _hoodie_commit_seqno, _hoodie_record_key, _hoodie_partition_path, _hoodie_file_name, id, 'zz' AS name, price, dt, false AS __hoodie_is_delete FROM t WHERE id >= 2")
        .await
        .unwrap()
    else {
        panic!("rows expected")
    };
    let storage = TableStorage::local(&loc).unwrap();
    let points = fail_every_write_of_change_set(&ctx, &storage, &batches, 2, &before).await;
    let after = snapshot(&ctx).await;
    assert!(
        after.iter().filter(|r| r.contains("\"zz\"")).count() == 2,
        "{after:?}"
    );
    let timeline = HudiTable::open(storage)
        .await
        .unwrap()
        .timeline()
        .await
        .unwrap();
    assert!(timeline.pending_writes().is_empty());
    (ctx, loc, points)
}

#[tokio::test]
async fn failed_updates_leave_the_table_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, _, points) = fail_every_write_of_an_update(tmp.path(), "primaryKey = 'id'").await;
    assert!(points > 4, "only {points} write points were exercised");
}

#[tokio::test]
async fn failed_updates_of_a_version_9_table_leave_it_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let props = "primaryKey = 'id', 'hoodie.write.table.version' = '9'";
    let (_, loc, points) = fail_every_write_of_an_update(tmp.path(), props).await;
    assert!(points > 4, "only {points} write points were exercised");
    // every failed attempt was rolled back in the layout-2 timeline, nothing outside it
    let timeline: Vec<String> = files_under(&loc.join(".hoodie"))
        .into_iter()
        .filter(|f| !f.starts_with(".temp") && !f.starts_with(".heartbeat"))
        .collect();
    assert!(
        timeline
            .iter()
            .all(|f| f == "hoodie.properties" || f.starts_with("timeline/")),
        "{timeline:?}"
    );
    assert!(
        timeline.iter().any(|f| f.ends_with(".rollback")),
        "{timeline:?}"
    );
}

/// A partitioned merge-on-read table `t` under `dir`: ids 1 (partition x), 2 and 3 (y), and a
/// first log in partition y (an update of id 3), so that later writes add versions after it.
async fn mor_table_with_a_log(dir: &std::path::Path) -> (HoodieContext, std::path::PathBuf) {
    mor_table_with_a_log_of(dir, 6).await
}

/// [`mor_table_with_a_log`] as a table of `version`.
async fn mor_table_with_a_log_of(
    dir: &std::path::Path,
    version: u32,
) -> (HoodieContext, std::path::PathBuf) {
    let loc = dir.join("t");
    let ctx = session_with_table(
        dir,
        None,
        &format!("CREATE TABLE t (id INT, name STRING, price DOUBLE, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id', type = 'mor', 'hoodie.write.table.version' = '{version}')"),
        &loc,
    )
    .await;
    ctx.run("INSERT INTO t VALUES (1, 'a', 1.0, 'x'), (2, 'b', 2.0, 'y'), (3, 'c', 3.0, 'y')")
        .await
        .unwrap();
    ctx.run("UPDATE t SET price = 30.0 WHERE id = 3")
        .await
        .unwrap();
    (ctx, loc)
}

#[tokio::test]
async fn failed_merge_on_read_changes_leave_the_table_unchanged() {
    failing_merge_on_read_changes(6).await;
}

#[tokio::test]
async fn failed_merge_on_read_changes_of_a_version_9_table_leave_it_unchanged() {
    failing_merge_on_read_changes(9).await;
}

async fn failing_merge_on_read_changes(version: u32) {
    let tmp = tempfile::tempdir().unwrap();
    let (ctx, loc) = mor_table_with_a_log_of(tmp.path(), version).await;
    let before = snapshot(&ctx).await;
    let base_files: Vec<String> = files_under(&loc)
        .into_iter()
        .filter(|f| f.ends_with(".parquet"))
        .collect();

    // the change set of an UPDATE of ids 1 and 2 and a DELETE of id 3, in one write
    let StatementOutput::Rows { batches, .. } = ctx
        .run("SELECT _hoodie_commit_time, _hoodie_commit_seqno, _hoodie_record_key, _hoodie_partition_path, _hoodie_file_name, id, 'zz' AS name, price, dt, id = 3 AS __hoodie_is_delete FROM t")
        .await
        .unwrap()
    else {
        panic!("rows expected")
    };
    let storage = TableStorage::local(&loc).unwrap();
    let points = fail_every_write_of_change_set(&ctx, &storage, &batches, 3, &before).await;
    assert!(points > 4, "only {points} write points were exercised");
    let after = snapshot(&ctx).await;
    assert_eq!(
        after,
        [
            r#"["1", "zz", "1.0", "x"]"#.to_string(),
            r#"["2", "zz", "2.0", "y"]"#.to_string()
        ]
    );
    let files = files_under(&loc);
    // no base file was written or rewritten; each touched file group got one log file beside
    // the first one (every failed attempt's log was rolled back)
    let now_base: Vec<String> = files
        .iter()
        .filter(|f| f.ends_with(".parquet"))
        .cloned()
        .collect();
    assert_eq!(now_base, base_files);
    let logs: Vec<&String> = files.iter().filter(|f| f.contains(".log.")).collect();
    assert_eq!(logs.len(), 3, "{logs:?}");
    let timeline = HudiTable::open(storage)
        .await
        .unwrap()
        .timeline()
        .await
        .unwrap();
    assert!(timeline.pending_writes().is_empty());
    assert!(
        !files.iter().any(|f| f.starts_with(".hoodie/.temp/")),
        "markers left behind: {files:?}"
    );
}

#[tokio::test]
async fn failed_updates_of_a_cdc_table_leave_no_cdc_log() {
    let tmp = tempfile::tempdir().unwrap();
    let (ctx, loc, points) = fail_every_write_of_an_update(
        tmp.path(),
        "primaryKey = 'id', 'hoodie.table.cdc.enabled' = 'true'",
    )
    .await;
    assert!(points > 5, "only {points} write points were exercised");
    // one rewrite of partition y's file group, so one .cdc log: every failed attempt's was
    // rolled back with its instant
    let files = files_under(&loc);
    let cdc: Vec<&String> = files.iter().filter(|f| f.ends_with(".cdc")).collect();
    assert_eq!(cdc.len(), 1, "{files:?}");
    assert!(cdc[0].starts_with("dt=y/."), "{cdc:?}");
    assert_eq!(
        common::count(
            &ctx,
            "SELECT count(*) FROM hudi_table_changes('t', 'cdc', 'earliest') WHERE op = 'u'"
        )
        .await,
        2
    );
    assert!(
        !files.iter().any(|f| f.starts_with(".hoodie/.temp/")),
        "markers left behind: {files:?}"
    );
}

/// Writes the change set `batches` through a store that fails its N-th write, for N = 1, 2, ...
/// until the write succeeds (with `affected` rows): after each failure the table reads `before`.
/// Returns how many write points failed.
async fn fail_every_write_of_change_set(
    ctx: &HoodieContext,
    storage: &TableStorage,
    batches: &[RecordBatch],
    affected: u64,
    before: &[String],
) -> usize {
    let change_schema = batches[0].schema();
    let mut n = 1;
    loop {
        let store = Arc::new(FailingStore::new(storage.store().clone(), n));
        let table = HudiTable::open(storage.with_store(store.clone()))
            .await
            .unwrap();
        let provider = HudiTableProvider::try_new("t", table.clone())
            .await
            .unwrap();
        let statement = WriteStatement::ChangeSet {
            delete: false,
            changed_columns: None,
            partial_merge: false,
        };
        let mode = provider.write_spec(&Default::default(), statement).unwrap();
        match write_batches(&table, &change_schema, &mode, batches.to_vec()).await {
            Err(e) => {
                assert!(e.to_string().contains("injected failure"), "write {n}: {e}");
                assert_eq!(snapshot(ctx).await, before, "after failing write {n}");
            }
            Ok(rows) => {
                assert_eq!(rows.affected(), affected);
                assert_eq!(store.writes() + 1, n);
                return n - 1;
            }
        }
        n += 1;
        assert!(n < 100);
    }
}

/// A query reads the table's files through the table's own object store (the one its writes
/// use), not through the session's local file system.
#[tokio::test]
async fn scans_read_through_the_tables_store() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = session_with_table(
        tmp.path(),
        None,
        "CREATE TABLE t (id INT, name STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')",
        &loc,
    )
    .await;
    ctx.run("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
        .await
        .unwrap();
    let storage = TableStorage::local(&loc).unwrap();
    let store = Arc::new(FailingStore::new(storage.store().clone(), usize::MAX));
    let table = HudiTable::open(storage.with_store(store.clone()))
        .await
        .unwrap();
    let provider = HudiTableProvider::try_new("counted", table).await.unwrap();
    ctx.session()
        .register_table("counted", Arc::new(provider))
        .unwrap();
    let StatementOutput::Rows { batches, .. } = ctx
        .run("SELECT name FROM counted WHERE id = 2")
        .await
        .unwrap()
    else {
        panic!("rows expected")
    };
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
    assert!(store.parquet_reads.load(Ordering::SeqCst) > 0);
}

/// A merge-on-read write whose one wave both rewrites a small file (the base-only group that
/// takes an insert) and appends a log (a group with a log already), the two running at once:
/// at every failed write the table is as it was, and the write that succeeds does both.
#[tokio::test]
async fn a_failed_rewrite_beside_a_log_append_leaves_the_table_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let (ctx, loc) = mor_table_with_a_log(tmp.path()).await;
    let before = snapshot(&ctx).await;
    // an update of id 3 (partition y, logged) and a new id 4 in partition x (a small file)
    let StatementOutput::Rows { batches, .. } = ctx
        .run("SELECT _hoodie_commit_time, _hoodie_commit_seqno, _hoodie_record_key, _hoodie_partition_path, _hoodie_file_name, id, 'zz' AS name, price, dt, false AS __hoodie_is_delete FROM t WHERE id = 3 \
              UNION ALL SELECT NULL, NULL, NULL, NULL, NULL, 4, 'new', 4.0, 'x', false")
        .await
        .unwrap()
    else {
        panic!("rows expected")
    };
    let storage = TableStorage::local(&loc).unwrap();
    let points = fail_every_write_of_change_set(&ctx, &storage, &batches, 2, &before).await;
    assert!(points > 4, "only {points} write points were exercised");
    assert_eq!(
        snapshot(&ctx).await,
        [
            r#"["1", "a", "1.0", "x"]"#.to_string(),
            r#"["2", "b", "2.0", "y"]"#.to_string(),
            r#"["3", "zz", "30.0", "y"]"#.to_string(),
            r#"["4", "new", "4.0", "x"]"#.to_string()
        ]
    );
    let files = files_under(&loc);
    let in_x = |f: &&String| f.starts_with("dt=x/") && f.ends_with(".parquet");
    assert_eq!(
        files.iter().filter(in_x).count(),
        2,
        "x rewritten once: {files:?}"
    );
    let logs = files.iter().filter(|f| f.contains(".log.")).count();
    assert_eq!(logs, 2, "y got one more log: {files:?}");
    assert!(
        !files.iter().any(|f| f.starts_with(".hoodie/.temp/")),
        "markers left behind: {files:?}"
    );
}
