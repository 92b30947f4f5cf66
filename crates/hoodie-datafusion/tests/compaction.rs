//! Compaction of merge-on-read tables: the result rows of run_compaction and show_compaction
//! (they hold instant times, so they are checked here rather than in sql-tests/), the files
//! and timeline a compaction leaves, and failure injection at every object store write of a
//! compaction.

use std::sync::Arc;

mod common;

use common::session_with_table;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use hoodie_datafusion::{HoodieContext, StatementOutput};
use hoodie_format::compaction::{execute_compaction, pending_compactions, schedule_compaction};
use hoodie_format::storage::TableStorage;
use hoodie_format::write::FileSpec;
use hoodie_format::HudiTable;

async fn rows(ctx: &HoodieContext, sql: &str) -> Vec<Vec<String>> {
    let StatementOutput::Rows { batches, .. } = ctx.run(sql).await.unwrap() else {
        panic!("{sql}: rows expected")
    };
    let opts = FormatOptions::default().with_null("NULL");
    let mut out = Vec::new();
    for b in batches {
        let f: Vec<_> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts).unwrap())
            .collect();
        for r in 0..b.num_rows() {
            out.push(f.iter().map(|f| f.value(r).to_string()).collect());
        }
    }
    out
}

fn is_instant(s: &str) -> bool {
    s.len() == 17 && s.bytes().all(|b| b.is_ascii_digit())
}

async fn mor_table(tmp: &std::path::Path) -> (HoodieContext, std::path::PathBuf) {
    mor_table_of(tmp, 6).await
}

/// A partitioned merge-on-read table of `version` with three deltacommits (insert, update,
/// delete), not compacted.
async fn mor_table_of(tmp: &std::path::Path, version: u32) -> (HoodieContext, std::path::PathBuf) {
    let loc = tmp.join("c");
    let ctx = session_with_table(
        tmp,
        None,
        &format!("CREATE TABLE c (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES (type = 'mor', primaryKey = 'id', hoodie.compact.inline = 'false', hoodie.compact.inline.max.delta.commits = '1', 'hoodie.write.table.version' = '{version}')"),
        &loc,
    )
    .await;
    ctx.run("INSERT INTO c VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'x')")
        .await
        .unwrap();
    ctx.run("UPDATE c SET v = upper(v) WHERE id IN (1, 2)")
        .await
        .unwrap();
    ctx.run("DELETE FROM c WHERE id = 3").await.unwrap();
    (ctx, loc)
}

#[tokio::test]
async fn procedures_return_hudis_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let (ctx, _) = mor_table(tmp.path()).await;
    let scheduled = rows(&ctx, "SCHEDULE COMPACTION ON c").await;
    assert_eq!(scheduled.len(), 1);
    let (instant, size, state) = (&scheduled[0][0], &scheduled[0][1], &scheduled[0][2]);
    assert!(is_instant(instant), "{instant}");
    assert_eq!((size.as_str(), state.as_str()), ("2", "REQUESTED"));
    // pending: one row per partition of the plan, no completion time, the plan's log files
    let shown = rows(&ctx, "CALL show_compaction(table => 'c')").await;
    assert_eq!(
        shown,
        [
            [
                instant,
                "NULL",
                "REQUESTED",
                "compaction",
                "1",
                "dt=x",
                "2",
                "0",
                "0",
                "0"
            ],
            [
                instant,
                "NULL",
                "REQUESTED",
                "compaction",
                "1",
                "dt=y",
                "1",
                "0",
                "0",
                "0"
            ],
        ]
    );
    let ran = rows(
        &ctx,
        &format!("CALL run_compaction(op => 'execute', table => 'c', timestamp => {instant})"),
    )
    .await;
    assert_eq!(ran, [[instant.as_str(), "2", "COMPLETED"]]);
    let shown = rows(&ctx, "SHOW COMPACTION ON c LIMIT 5").await;
    assert_eq!(shown.len(), 2);
    for r in &shown {
        assert_eq!(
            (r[0].as_str(), r[2].as_str(), r[3].as_str()),
            (instant.as_str(), "COMPLETED", "commit")
        );
    }
    // dt=x: two logs compacted (an update and a delete), one record updated
    let x = shown.iter().find(|r| r[5] == "dt=x").unwrap();
    assert_eq!((x[6].as_str(), x[7].as_str()), ("2", "1"));
    assert!(
        x[8].parse::<i64>().unwrap() > 0 && x[9].parse::<i64>().unwrap() > 0,
        "{x:?}"
    );
    assert_eq!(
        rows(&ctx, "SELECT id, v FROM c ORDER BY id").await,
        [["1", "A"], ["2", "B"]]
    );
    // the newest first
    ctx.run("UPDATE c SET v = 'z' WHERE id = 1").await.unwrap();
    let second = rows(&ctx, "CALL run_compaction('run', 'c')").await;
    assert_eq!(second.len(), 1);
    assert!(second[0][0] > *instant);
    let all = rows(&ctx, "CALL show_compaction(table => 'c')").await;
    assert_eq!(all[0][0], second[0][0]);
    assert_eq!(all.last().unwrap()[0], *instant);
}

#[tokio::test]
async fn compaction_writes_base_files_of_its_instant_and_a_compact_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let (ctx, loc) = mor_table(tmp.path()).await;
    let before = rows(
        &ctx,
        "SELECT _hoodie_commit_time, _hoodie_commit_seqno, id, v FROM c ORDER BY id",
    )
    .await;
    let ran = rows(&ctx, "RUN COMPACTION ON c").await;
    let instant = ran[0][0].clone();
    // commit times and sequence numbers kept; every record in a base file of the compaction
    let after = rows(&ctx, "SELECT _hoodie_commit_time, _hoodie_commit_seqno, id, v, _hoodie_file_name FROM c ORDER BY id").await;
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(b[..], a[..4]);
        assert!(a[4].ends_with(&format!("_{instant}.parquet")), "{a:?}");
    }
    let storage = TableStorage::local(&loc).unwrap();
    let commit = storage
        .get(&format!(".hoodie/{instant}.commit"))
        .await
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&commit).unwrap();
    assert_eq!(json["operationType"], "COMPACT");
    assert_eq!(json["compacted"], true);
    let stats = json["partitionToWriteStats"]["dt=x"][0].clone();
    assert_eq!(stats["numDeletes"], 1);
    assert_eq!(stats["totalLogFilesCompacted"], 2);
    assert!(stats["prevBaseFile"]
        .as_str()
        .unwrap()
        .ends_with(".parquet"));
    assert!(storage
        .exists(&format!(".hoodie/{instant}.compaction.requested"))
        .await
        .unwrap());
    assert_eq!(
        storage
            .get(&format!(".hoodie/{instant}.compaction.inflight"))
            .await
            .unwrap()
            .len(),
        0
    );
}

#[tokio::test]
async fn a_failed_compaction_leaves_the_table_readable_and_the_next_one_finishes_it() {
    compaction_failing_anywhere(6).await;
}

#[tokio::test]
async fn a_failed_compaction_of_a_version_9_table_is_finished_by_the_next() {
    compaction_failing_anywhere(9).await;
}

async fn compaction_failing_anywhere(version: u32) {
    let tmp = tempfile::tempdir().unwrap();
    let (ctx, loc) = mor_table_of(tmp.path(), version).await;
    let want = rows(&ctx, "SELECT id, v FROM c ORDER BY id").await;
    let storage = TableStorage::local(&loc).unwrap();
    let table = HudiTable::open(storage.clone()).await.unwrap();
    let instant = schedule_compaction(&table, None, 0).await.unwrap().unwrap();
    let mut n = 1;
    loop {
        let store = Arc::new(common::failing::FailingStore::new(
            storage.store().clone(),
            n,
        ));
        let failing = HudiTable::open(storage.with_store(store.clone()))
            .await
            .unwrap();
        match execute_compaction(&failing, &instant, &FileSpec::default()).await {
            Err(e) => {
                assert!(e.to_string().contains("injected failure"), "write {n}: {e}");
                assert_eq!(
                    rows(&ctx, "SELECT id, v FROM c ORDER BY id").await,
                    want,
                    "after failing write {n}"
                );
            }
            Ok(r) => {
                assert_eq!(r.file_groups, 2);
                assert_eq!(
                    store.writes() + 1,
                    n,
                    "the commit completed before write {n}"
                );
                break;
            }
        }
        n += 1;
        assert!(n < 50);
    }
    assert!(n > 4, "only {} write points were exercised", n - 1);
    assert_eq!(rows(&ctx, "SELECT id, v FROM c ORDER BY id").await, want);
    let timeline = table.timeline().await.unwrap();
    assert!(pending_compactions(&timeline).is_empty());
    // one base file per file group and instant: the failed attempts' files were removed
    let mut names: Vec<String> = std::fs::read_dir(loc.join("dt=x"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(&format!("_{instant}.parquet")))
        .collect();
    names.sort();
    assert_eq!(names.len(), 1, "{names:?}");
    let markers = loc.join(format!(".hoodie/.temp/{instant}"));
    let left: Vec<_> = walk(&markers);
    assert!(left.is_empty(), "markers left behind: {left:?}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
