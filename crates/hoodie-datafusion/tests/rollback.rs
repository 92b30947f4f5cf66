//! `rollback_to_instant` on disk: the rolled-back commit's files are gone, and a rollback that
//! fails at any object-store write or delete leaves the table reading as before it or as
//! after it; running it again (or the next write's rollback of what it left) finishes it.

mod common;

use common::{files_under, reader, session_with_table, text};
use hoodie_format::client::TableServices;
use hoodie_format::concurrency::ConcurrencySpec;
use hoodie_format::storage::TableStorage;
use hoodie_format::HudiTable;

const QUERY: &str = "SELECT id, v, p FROM t ORDER BY id";

#[tokio::test]
async fn a_rollback_that_fails_anywhere_is_finished_later() {
    let tmp = tempfile::tempdir().unwrap();
    let template = tmp.path().join("t");
    let create = "CREATE TABLE t (id INT, v STRING, p STRING) USING hudi PARTITIONED BY (p) TBLPROPERTIES (primaryKey = 'id', 'hoodie.table.cdc.enabled' = 'true')";
    let ctx = session_with_table(tmp.path(), None, create, &template).await;
    ctx.run("INSERT INTO t VALUES (1, 'a', 'x'), (2, NULL, 'y')")
        .await
        .unwrap();
    let before = text(&ctx, QUERY).await;
    ctx.run("UPDATE t SET v = 'b'").await.unwrap();
    let after = text(&ctx, QUERY).await;
    let table = HudiTable::open(TableStorage::local(&template).unwrap())
        .await
        .unwrap();
    let timeline = table.timeline().await.unwrap();
    let last = timeline.last_completed_write().unwrap().timestamp.clone();
    let files_before: Vec<String> = files_under(&template)
        .into_iter()
        .filter(|f| !f.starts_with(".hoodie"))
        .collect();
    let mut n = 1;
    loop {
        let loc = tmp.path().join(format!("run{n}"));
        let (storage, store, table) = common::failing_copy(&template, &loc, n).await;
        let services = TableServices::new(&table, ConcurrencySpec::single_writer());
        let result = services.rollback(&last).await;
        // the run no failure reached (a failed marker cleanup is not reported: it is harmless)
        let untouched = store.writes() < n;
        assert!(result.is_ok() || !untouched);
        let read = reader(tmp.path(), &loc).await;
        let now = text(&read, QUERY).await;
        assert!(now == before || now == after, "after failing at {n}: {now}");
        // finish it: again while the commit is there, else the next write rolls back the rest
        let table = HudiTable::open(storage.clone()).await.unwrap();
        if now == after {
            let services = TableServices::new(&table, ConcurrencySpec::single_writer());
            services.rollback(&last).await.unwrap();
        }
        read.run("INSERT INTO t VALUES (3, 'c', 'x')")
            .await
            .unwrap();
        read.run("DELETE FROM t WHERE id = 3").await.unwrap();
        assert_eq!(text(&read, QUERY).await, before, "at {n}");
        let timeline = table.timeline().await.unwrap();
        assert!(timeline.pending_writes().is_empty(), "at {n}");
        assert!(timeline.completed_writes().all(|i| i.timestamp != last));
        if untouched {
            // the update's base files and .cdc logs are gone; the insert's are as they were
            let left: Vec<String> = files_under(&loc)
                .into_iter()
                .filter(|f| !f.starts_with(".hoodie") && !f.contains(&last))
                .collect();
            for f in &files_before {
                if !f.contains(&last) {
                    assert!(left.contains(f), "{f} of the first commit is gone");
                }
            }
            let stale: Vec<String> = files_under(&loc)
                .into_iter()
                .filter(|f| f.contains(&format!("_{last}.")))
                .collect();
            assert!(stale.is_empty(), "{stale:?}");
            assert!(n > 4, "{n}");
            break;
        }
        n += 1;
        assert!(n < 60);
    }
}
