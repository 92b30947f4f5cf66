//! A write to a Hudi table reports what it inserted, updated and deleted: a MERGE that does all
//! three in one commit says how many of each, an UPDATE or DELETE only its kind, an upsert its
//! inserts and updates.

mod common;

use common::{count, session_with_table};
use hoodie_datafusion::WriteCounts;
use hoodie_datafusion::{HoodieContext, StatementOutput};

async fn changed(ctx: &HoodieContext, sql: &str) -> WriteCounts {
    match ctx.run(sql).await.unwrap() {
        StatementOutput::Changed(c) => c,
        other => panic!("{sql}: expected write counts, got {other:?}"),
    }
}

/// The kinds of change of a write.
fn kinds(c: WriteCounts) -> (u64, u64, u64) {
    (c.inserted, c.updated, c.deleted)
}

fn counts(inserted: u64, updated: u64, deleted: u64) -> (u64, u64, u64) {
    (inserted, updated, deleted)
}

#[tokio::test]
async fn each_write_reports_its_kinds_of_change() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = session_with_table(
        tmp.path(),
        None,
        "CREATE TABLE t (id INT, v STRING, ts INT, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts')",
        &tmp.path().join("t"),
    )
    .await;
    assert_eq!(
        kinds(
            changed(
                &ctx,
                "INSERT INTO t VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'x'), (3, 'c', 1, 'y')"
            )
            .await
        ),
        counts(3, 0, 0)
    );
    // an upsert: one update, one insert
    assert_eq!(
        kinds(
            changed(
                &ctx,
                "INSERT INTO t VALUES (1, 'a2', 2, 'x'), (4, 'd', 1, 'y')"
            )
            .await
        ),
        counts(1, 1, 0)
    );
    // MERGE: key 1 updated, key 2 deleted, key 5 inserted, key 3 untouched
    assert_eq!(
        kinds(
            changed(
                &ctx,
                "MERGE INTO t USING (SELECT 1 AS id, 'm' AS v, 3 AS ts, 'x' AS dt, 0 AS op \
             UNION ALL SELECT 2, 'm', 3, 'x', 1 \
             UNION ALL SELECT 5, 'm', 3, 'y', 0) s ON t.id = s.id \
             WHEN MATCHED AND s.op = 0 THEN UPDATE SET * \
             WHEN MATCHED THEN DELETE \
             WHEN NOT MATCHED THEN INSERT *"
            )
            .await
        ),
        counts(1, 1, 1)
    );
    assert_eq!(
        kinds(changed(&ctx, "UPDATE t SET v = 'u', ts = 9 WHERE dt = 'y'").await),
        counts(0, 3, 0)
    );
    assert_eq!(
        kinds(changed(&ctx, "DELETE FROM t WHERE id IN (1, 3)").await),
        counts(0, 0, 2)
    );
    assert_eq!(count(&ctx, "SELECT count(*) FROM t").await, 2); // keys 4 and 5
}

/// The sink's metrics say which file groups a write created and rewrote, how many bytes it
/// wrote and what its index lookup read.
#[tokio::test]
async fn writes_report_file_groups_bytes_and_lookups() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = session_with_table(
        tmp.path(),
        None,
        "CREATE TABLE t (id INT, v STRING, ts INT, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts')",
        &tmp.path().join("t"),
    )
    .await;
    let first = changed(
        &ctx,
        "INSERT INTO t VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'y')",
    )
    .await;
    assert_eq!((first.new_file_groups, first.rewritten_file_groups), (2, 0));
    assert!(first.bytes_written > 0, "{first:?}");
    let update = changed(&ctx, "UPDATE t SET v = 'u' WHERE id = 1").await;
    assert_eq!(
        (
            update.updated,
            update.new_file_groups,
            update.rewritten_file_groups
        ),
        (1, 0, 1),
        "{update:?}"
    );
    assert!(update.bytes_written > 0);
    let older = changed(&ctx, "INSERT INTO t VALUES (2, 'old', 0, 'y')").await;
    assert_eq!((older.dropped, older.affected()), (1, 0), "{older:?}");
    assert!(older.lookup_candidates >= 1, "{older:?}");
}

/// A merge-on-read write reports the file groups it gave a log file apart from those it
/// rewrote: updates and deletes go to logs, an upsert's event-time loser is dropped against the
/// merged value.
#[tokio::test]
async fn merge_on_read_writes_report_logged_file_groups() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = session_with_table(
        tmp.path(),
        None,
        "CREATE TABLE t (id INT, v STRING, ts INT, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', type = 'mor', primaryKey = 'id', preCombineField = 'ts', hoodie.compact.inline = 'false')",
        &tmp.path().join("t"),
    )
    .await;
    let first = changed(
        &ctx,
        "INSERT INTO t VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'y'), (3, 'c', 1, 'y')",
    )
    .await;
    assert_eq!(
        (first.new_file_groups, first.logged_file_groups),
        (2, 0),
        "{first:?}"
    );
    let update = changed(&ctx, "UPDATE t SET v = 'u' WHERE id IN (1, 2)").await;
    assert_eq!(
        (
            update.updated,
            update.logged_file_groups,
            update.rewritten_file_groups,
            update.new_file_groups
        ),
        (2, 2, 0, 0),
        "{update:?}"
    );
    let delete = changed(&ctx, "DELETE FROM t WHERE id = 3").await;
    assert_eq!(
        (
            delete.deleted,
            delete.logged_file_groups,
            delete.rewritten_file_groups
        ),
        (1, 1, 0),
        "{delete:?}"
    );
    // ts 0 loses to the merged ts 1 of id 2; id 3 was deleted in a log, so it is an insert
    let upsert = changed(
        &ctx,
        "INSERT INTO t VALUES (2, 'old', 0, 'y'), (3, 'again', 0, 'y')",
    )
    .await;
    assert_eq!(
        (upsert.inserted, upsert.updated, upsert.dropped),
        (1, 0, 1),
        "{upsert:?}"
    );
    assert_eq!(
        count(&ctx, "SELECT count(*) FROM t WHERE v IN ('u', 'again')").await,
        3
    );
}

/// An INSERT OVERWRITE requests its replacecommit the way Java does: the requested file is an
/// Avro container holding one all-null `HoodieRequestedReplaceMetadata`, while the requested
/// file of a plain commit is empty.
#[tokio::test]
async fn an_overwrite_requests_its_replacecommit_in_avro() {
    use apache_avro::types::Value;
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = session_with_table(
        tmp.path(),
        None,
        "CREATE TABLE t (id INT, v STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')",
        &loc,
    )
    .await;
    ctx.run("INSERT INTO t VALUES (1, 'a')").await.unwrap();
    assert_eq!(
        kinds(changed(&ctx, "INSERT OVERWRITE t VALUES (2, 'b')").await),
        counts(1, 0, 0)
    );
    let mut requested: Vec<_> = std::fs::read_dir(common::timeline_dir(&loc))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".requested"))
        .collect();
    requested.sort();
    assert_eq!(requested.len(), 2, "{requested:?}");
    let commit = std::fs::read(&requested[0]).unwrap();
    assert!(requested[0]
        .to_string_lossy()
        .ends_with(".commit.requested"));
    assert!(commit.is_empty());
    assert!(requested[1]
        .to_string_lossy()
        .ends_with(".replacecommit.requested"));
    let replace = std::fs::read(&requested[1]).unwrap();
    let reader = apache_avro::Reader::new(&replace[..]).unwrap();
    let apache_avro::Schema::Record(record) = reader.writer_schema().clone() else {
        panic!("not a record schema");
    };
    assert_eq!(
        record.name.fullname(None),
        "org.apache.hudi.avro.model.HoodieRequestedReplaceMetadata"
    );
    let records: Vec<Value> = reader.map(|r| r.unwrap()).collect();
    assert_eq!(records.len(), 1);
    let Value::Record(fields) = &records[0] else {
        panic!("{:?}", records[0]);
    };
    assert!(fields
        .iter()
        .all(|(_, v)| matches!(v, Value::Union(_, inner) if **inner == Value::Null)));
}
