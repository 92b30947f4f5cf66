//! Optimistic concurrency control between sessions on one table: a write planned before
//! another writer's conflicting commit fails with the conflict error and leaves the table as
//! the other writer left it; writes to other file groups commit; a live writer's pending
//! instant is left alone while a dead one's is rolled back.

mod common;

use std::path::Path;

use common::{files_under, reader, session_with_table, text};
use datafusion::physical_plan::collect;
use hoodie_datafusion::HoodieContext;
use hoodie_format::concurrency::ConcurrencySpec;
use hoodie_format::storage::TableStorage;
use hoodie_format::timeline::{Action, State};
use hoodie_format::write::{Transaction, WriteOperation};
use hoodie_format::HudiTable;

const QUERY: &str = "SELECT id, v, p FROM t ORDER BY id";

async fn occ_table(tmp: &Path, kind: &str) -> (HoodieContext, std::path::PathBuf) {
    let loc = tmp.join(format!("t_{kind}"));
    let create = format!(
        "CREATE TABLE t (id INT, v STRING, p STRING) USING hudi PARTITIONED BY (p) TBLPROPERTIES (primaryKey = 'id', type = '{kind}', 'hoodie.write.concurrency.mode' = 'optimistic_concurrency_control')"
    );
    let ctx = session_with_table(tmp, None, &create, &loc).await;
    ctx.run("INSERT INTO t VALUES (1, 'a', 'x'), (2, NULL, 'y'), (3, 'c', 'x')")
        .await
        .unwrap();
    (ctx, loc)
}

async fn table_at(loc: &Path) -> HudiTable {
    HudiTable::open(TableStorage::local(loc).unwrap())
        .await
        .unwrap()
}

/// Plans `sql` in `ctx` now (its scans read the table), to be run later.
async fn planned(
    ctx: &HoodieContext,
    sql: &str,
) -> std::sync::Arc<dyn datafusion::physical_plan::ExecutionPlan> {
    let df = ctx.session().sql(sql).await.unwrap();
    df.create_physical_plan().await.unwrap()
}

#[tokio::test]
async fn a_write_planned_before_a_conflicting_commit_fails_and_leaves_no_trace() {
    for kind in ["cow", "mor"] {
        let tmp = tempfile::tempdir().unwrap();
        let (a, loc) = occ_table(tmp.path(), kind).await;
        let b = reader(tmp.path(), &loc).await;
        let plan = planned(&a, "UPDATE t SET v = 'from_a' WHERE id = 1").await;
        let shown = datafusion::physical_plan::displayable(plan.as_ref())
            .indent(false)
            .to_string();
        assert!(shown.contains("HudiSnapshotExec"), "{shown}");
        // b changes the same file group (partition x) after a read it
        b.run("UPDATE t SET v = 'from_b' WHERE id = 3")
            .await
            .unwrap();
        let err = collect(plan, a.session().task_ctx()).await.unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("Cannot resolve conflicts for overlapping writes"),
            "{msg}"
        );
        assert!(
            msg.contains("p=x/") || msg.contains("x/"),
            "names the file group: {msg}"
        );
        assert_eq!(
            text(&b, QUERY).await,
            text(&reader(tmp.path(), &loc).await, QUERY).await
        );
        let rows = text(&b, QUERY).await;
        assert!(
            rows.contains("from_b") && !rows.contains("from_a"),
            "{kind}: {rows}"
        );
        let timeline = table_at(&loc).await.timeline().await.unwrap();
        assert!(
            timeline.pending_writes().is_empty(),
            "{kind}: no pending write"
        );
        assert!(
            timeline
                .instants()
                .iter()
                .any(|i| i.action == Action::Rollback && i.state == State::Completed),
            "{kind}: the conflicting write was rolled back"
        );
        let left: Vec<String> = files_under(&loc)
            .into_iter()
            .filter(|f| f.starts_with(".hoodie/.temp/") || f.starts_with(".hoodie/.heartbeat/"))
            .collect();
        assert!(
            left.is_empty(),
            "{kind}: markers or heartbeats left: {left:?}"
        );
        // the next write goes on
        a.run("UPDATE t SET v = 'again' WHERE id = 1")
            .await
            .unwrap();
        assert!(text(&a, QUERY).await.contains("again"));
    }
}

#[tokio::test]
async fn writes_to_other_file_groups_all_commit() {
    for kind in ["cow", "mor"] {
        let tmp = tempfile::tempdir().unwrap();
        let (a, loc) = occ_table(tmp.path(), kind).await;
        let b = reader(tmp.path(), &loc).await;
        let plan = planned(&a, "UPDATE t SET v = 'from_a' WHERE id = 2").await;
        b.run("UPDATE t SET v = 'from_b' WHERE id = 1")
            .await
            .unwrap();
        collect(plan, a.session().task_ctx()).await.unwrap();
        let rows = text(&reader(tmp.path(), &loc).await, QUERY).await;
        assert!(
            rows.contains("from_a") && rows.contains("from_b"),
            "{kind}: {rows}"
        );
    }
}

#[tokio::test]
async fn a_live_writers_instant_is_left_alone_and_a_dead_ones_rolled_back() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, loc) = occ_table(tmp.path(), "cow").await;
    let b = reader(tmp.path(), &loc).await;
    let table = table_at(&loc).await;
    let spec = ConcurrencySpec::of_table(table.config()).unwrap();
    assert!(spec.optimistic);
    let txn = Transaction::begin_with(&table, WriteOperation::Upsert, &spec, None)
        .await
        .unwrap();
    let instant = txn.instant().to_string();
    let heartbeat = loc.join(".hoodie/.heartbeat").join(&instant);
    assert!(
        heartbeat.exists(),
        "a write under LAZY cleaning keeps a heartbeat"
    );
    b.run("INSERT INTO t VALUES (4, 'd', 'z')").await.unwrap();
    let pending = |t: &hoodie_format::timeline::Timeline| {
        t.pending_writes().iter().any(|i| i.timestamp == instant)
    };
    assert!(
        pending(&table.timeline().await.unwrap()),
        "a live write is not rolled back"
    );
    // the writer's heartbeat stops beating and expires (a missing file is an expired one)
    std::fs::remove_file(&heartbeat).unwrap();
    b.run("INSERT INTO t VALUES (5, 'e', 'z')").await.unwrap();
    assert!(
        !pending(&table.timeline().await.unwrap()),
        "a dead write is rolled back"
    );
    let err = txn.commit(String::new()).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("another writer rolled the write back"),
        "{err}"
    );
    let rows = text(&b, QUERY).await;
    assert!(rows.contains("| 4 ") && rows.contains("| 5 "), "{rows}");
}

#[tokio::test]
async fn procedures_that_change_the_timeline_wait_for_the_table_lock() {
    let tmp = tempfile::tempdir().unwrap();
    let (ctx, loc) = occ_table(tmp.path(), "cow").await;
    ctx.run("SET hoodie.write.lock.wait_time_ms = 200")
        .await
        .unwrap();
    let table = table_at(&loc).await;
    let spec = ConcurrencySpec::of_table(table.config()).unwrap();
    let held = hoodie_format::concurrency::TableLock::acquire(table.storage(), &spec.lock)
        .await
        .unwrap();
    for call in [
        "CALL run_clean(table => 't', retain_commits => 1, trigger_max_commits => 0)",
        "CALL archive_commits(table => 't')",
    ] {
        let err = ctx.run(call).await.unwrap_err();
        assert!(
            err.to_string().contains("Unable to acquire lock"),
            "{call}: {err}"
        );
    }
    // reads do not take it
    assert!(text(&ctx, QUERY).await.contains("| 1 "));
    held.release().await.unwrap();
    ctx.run("CALL run_clean(table => 't', retain_commits => 1, trigger_max_commits => 0)")
        .await
        .unwrap();
}

#[tokio::test]
async fn compaction_commands_wait_for_the_table_lock() {
    let tmp = tempfile::tempdir().unwrap();
    let (ctx, loc) = occ_table(tmp.path(), "mor").await;
    ctx.run("UPDATE t SET v = 'u' WHERE id = 2").await.unwrap();
    ctx.run("SET hoodie.write.lock.wait_time_ms = 200")
        .await
        .unwrap();
    let table = table_at(&loc).await;
    let spec = ConcurrencySpec::of_table(table.config()).unwrap();
    let held = hoodie_format::concurrency::TableLock::acquire(table.storage(), &spec.lock)
        .await
        .unwrap();
    for command in [
        "SCHEDULE COMPACTION ON t",
        "RUN COMPACTION ON t",
        "CALL run_compaction(op => 'scheduleandexecute', table => 't')",
    ] {
        let err = ctx.run(command).await.unwrap_err();
        assert!(
            err.to_string().contains("Unable to acquire lock"),
            "{command}: {err}"
        );
    }
    let timeline = table_at(&loc).await.timeline().await.unwrap();
    assert!(hoodie_format::compaction::pending_compactions(&timeline).is_empty());
    held.release().await.unwrap();
    ctx.run("SCHEDULE COMPACTION ON t").await.unwrap();
    ctx.run("RUN COMPACTION ON t").await.unwrap();
    let timeline = table_at(&loc).await.timeline().await.unwrap();
    assert!(hoodie_format::compaction::pending_compactions(&timeline).is_empty());
    assert_eq!(common::cells(&ctx, QUERY).await[1], ["2", "u", "y"]);
}
