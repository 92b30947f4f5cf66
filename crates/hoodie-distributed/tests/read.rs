//! Reads of a hoodie table spread over two workers (real gRPC on localhost) give the rows a
//! read in one process gives.

mod common;

use std::net::SocketAddr;

use common::{hoodie_builder, on_workers, text};
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::SessionContext;
use datafusion_distributed::DistributedExt;
use hoodie_datafusion::{HoodieOptions, SessionStateBuilderExt};

/// A worker serving on a free local port.
async fn start_worker() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let worker = hoodie_distributed::worker(vec![]).unwrap();
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(worker.into_worker_server())
            .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
    );
    addr
}

fn session(warehouse: &std::path::Path, workers: Option<&[SocketAddr]>) -> SessionContext {
    let builder = hoodie_builder(warehouse);
    let builder = match workers {
        None => builder,
        Some(addrs) => {
            let urls = (addrs.iter())
                .map(|a| url::Url::parse(&format!("http://{a}")).unwrap())
                .collect();
            on_workers(builder, urls)
        }
    };
    SessionContext::new_with_state(builder.build())
}

/// A session on two new workers over the warehouse `<dir>/wh`, with the table at `loc` as `t`.
async fn on_two_workers(dir: &std::path::Path, loc: &std::path::Path) -> SessionContext {
    let workers = [start_worker().await, start_worker().await];
    let cluster = session(&dir.join("wh"), Some(&workers));
    register(&cluster, loc).await;
    cluster
}

/// Names the table at `loc` `t` in `ctx`.
async fn register(ctx: &SessionContext, loc: &std::path::Path) {
    let sql = format!(
        "CREATE EXTERNAL TABLE t STORED AS HUDI LOCATION '{}'",
        loc.display()
    );
    text(ctx, &sql).await;
}

/// The physical plan of `sql` in `ctx`, as text.
async fn plan_of(ctx: &SessionContext, sql: &str) -> String {
    let physical = (ctx.sql(sql).await.unwrap())
        .create_physical_plan()
        .await
        .unwrap();
    let text = datafusion::physical_plan::displayable(physical.as_ref())
        .indent(true)
        .to_string();
    text
}

/// A copy-on-write table of five rows over two commits at `<dir>/t`, and the local session
/// that wrote it.
async fn cow_table(dir: &std::path::Path) -> (SessionContext, std::path::PathBuf) {
    table(dir, "cow").await
}

/// A table of `kind` (`cow`, `mor`) of five rows over two commits at `<dir>/t`, and the local
/// session that wrote it.
async fn table(dir: &std::path::Path, kind: &str) -> (SessionContext, std::path::PathBuf) {
    table_with(dir, kind, "").await
}

/// [`table`], created with the table options `more` (`, 'key' 'value'` each).
async fn table_with(
    dir: &std::path::Path,
    kind: &str,
    more: &str,
) -> (SessionContext, std::path::PathBuf) {
    let loc = dir.join("t");
    let local = session(&dir.join("wh"), None);
    text(
        &local,
        &format!(
            "CREATE EXTERNAL TABLE t (id INT, name VARCHAR, ts INT, dt VARCHAR) STORED AS HUDI \
             PARTITIONED BY (dt) LOCATION '{}' \
             OPTIONS ('primaryKey' 'id', 'preCombineField' 'ts', 'type' '{kind}'{more})",
            loc.display()
        ),
    )
    .await;
    text(
        &local,
        "INSERT INTO t (id, name, ts, dt) VALUES (1, 'a', 10, 'x'), (2, NULL, 11, 'y'), (3, 'c', 12, 'x')",
    )
    .await;
    text(
        &local,
        "INSERT INTO t (id, name, ts, dt) VALUES (4, 'd', 13, 'y'), (5, 'e', 14, 'z')",
    )
    .await;
    (local, loc)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_on_write_table_reads_the_same_on_two_workers() {
    let tmp = tempfile::tempdir().unwrap();
    let (local, loc) = cow_table(tmp.path()).await;
    let query = "SELECT dt, count(*) AS n, sum(id) AS ids, count(name) AS names FROM t GROUP BY dt ORDER BY dt";
    let expected = text(&local, query).await;

    let cluster = on_two_workers(tmp.path(), &loc).await;
    let plan = plan_of(&cluster, query).await;
    assert!(
        plan.contains("Network"),
        "the plan has no network boundary:\n{plan}"
    );
    assert_eq!(text(&cluster, query).await, expected);
    let rows = text(&cluster, "SELECT id, name FROM t WHERE id > 1 ORDER BY id").await;
    assert_eq!(
        rows,
        text(&local, "SELECT id, name FROM t WHERE id > 1 ORDER BY id").await
    );
    assert!(rows.contains("| 5  | e    |"), "{rows}");

    // EXPLAIN shows the stages: an UPDATE's scan on the workers, its sink (the write and the
    // commit) above them in the session's process
    let explained = text(&cluster, "EXPLAIN UPDATE t SET name = 'z' WHERE id > 3").await;
    let sink = explained.find("HudiSink").expect(&explained);
    let stage = explained.find("Stage 1").expect(&explained);
    assert!(
        sink < stage && explained.contains("HudiSnapshotExec"),
        "{explained}"
    );
    assert_eq!(
        text(&local, "SELECT count(*) AS n FROM t WHERE name = 'z'").await,
        text(&local, "SELECT 0 AS n").await,
        "EXPLAIN wrote nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_on_read_table_merges_its_logs_on_two_workers() {
    merge_on_read_on_workers("").await;
}

/// The files leave the partition column out: each slice's value travels with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_on_read_table_without_its_partition_column_in_its_files_merges_on_workers() {
    merge_on_read_on_workers(", 'hoodie.datasource.write.drop.partition.columns' 'true'").await;
}

/// A merge-on-read table with logs, created with `more`, reads the same on two workers as in
/// one process, its merge running on the workers.
async fn merge_on_read_on_workers(more: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let (local, loc) = table_with(tmp.path(), "mor", more).await;
    // log files (two delta commits: a fifth would compact the table inline): updates, one to
    // NULL, and a delete
    text(
        &local,
        "UPDATE t SET name = CASE WHEN id = 5 THEN NULL ELSE upper(name) END, ts = ts + 100 \
         WHERE id IN (1, 4, 5)",
    )
    .await;
    text(&local, "DELETE FROM t WHERE id = 3").await;
    let query = "SELECT id, name, ts, dt FROM t ORDER BY id";
    let expected = text(&local, query).await;
    assert!(expected.contains("| 1  | A    | 110 | x  |"), "{expected}");
    assert!(expected.contains("| 5  |      | 114 | z  |"), "{expected}");
    assert!(!expected.contains("| 3 "), "{expected}");

    let cluster = on_two_workers(tmp.path(), &loc).await;
    let plan = plan_of(&cluster, query).await;
    assert!(
        plan.contains("Network") && plan.contains("HudiMergeOnReadExec"),
        "the merge does not run on workers:\n{plan}"
    );
    assert_eq!(text(&cluster, query).await, expected);
    let counted = "SELECT dt, count(*) AS n, count(name) AS names FROM t GROUP BY dt ORDER BY dt";
    assert_eq!(text(&cluster, counted).await, text(&local, counted).await);
    // an incremental read merges the slices' logs on the workers too
    let changes = "SELECT id, name, ts FROM hudi_table_changes('t', 'latest_state', '2000-01-01') \
                   ORDER BY id";
    let plan = plan_of(&cluster, changes).await;
    assert!(
        plan.contains("HudiMergeOnReadExec") && plan.contains("Network"),
        "{plan}"
    );
    assert_eq!(text(&cluster, changes).await, text(&local, changes).await);
}

/// An incremental read of base files runs on the workers; a MERGE (its passes share the
/// statement's state) and an INSERT (its writers are not on workers yet) run in the session's
/// process, as without workers. Both give the same
/// answers as in one process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_incremental_read_runs_on_workers_and_a_merge_in_the_sessions_process() {
    let tmp = tempfile::tempdir().unwrap();
    let (local, loc) = table(tmp.path(), "mor").await;
    let changes =
        "SELECT id, name FROM hudi_table_changes('t', 'latest_state', '2000-01-01') ORDER BY id";
    let expected = text(&local, changes).await;
    assert!(expected.contains("| 5  | e    |"), "{expected}");

    let cluster = on_two_workers(tmp.path(), &loc).await;
    let plan = plan_of(&cluster, changes).await;
    assert!(plan.contains("Network"), "{plan}");
    assert_eq!(text(&cluster, changes).await, expected);

    let merge = "MERGE INTO t USING (SELECT 2 AS id, 'b2' AS name, 20 AS ts, 'y' AS dt) s \
                 ON t.id = s.id WHEN MATCHED THEN UPDATE SET name = s.name, ts = s.ts";
    let plan = plan_of(&cluster, merge).await;
    assert!(!plan.contains("Network"), "{plan}");
    // an insert too: all its rows would cross to the session, where they are written
    let insert = "INSERT INTO t (id, name, ts, dt) SELECT id + 10, name, ts, dt FROM t";
    let plan = plan_of(&cluster, insert).await;
    assert!(!plan.contains("Network"), "{plan}");
    text(&cluster, merge).await;
    let rows = text(&local, "SELECT id, name, ts FROM t WHERE id = 2").await;
    assert!(rows.contains("| 2  | b2   | 20 |"), "{rows}");
}

/// A CDC read of a merge-on-read table (changes inferred from its logs) and of a copy-on-write
/// one (`.cdc` logs) runs its splits on the workers and gives the change rows one process
/// gives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cdc_read_runs_its_splits_on_two_workers() {
    for kind in ["mor", "cow"] {
        let tmp = tempfile::tempdir().unwrap();
        let cdc = ", 'hoodie.table.cdc.enabled' 'true'";
        let (local, loc) = table_with(tmp.path(), kind, cdc).await;
        text(&local, "UPDATE t SET name = upper(name) WHERE id IN (1, 4)").await;
        text(&local, "DELETE FROM t WHERE id = 3").await;
        let changes = "SELECT op, before, after FROM hudi_table_changes('t', 'cdc', '2000-01-01') \
                       ORDER BY op, before, after";
        let expected = text(&local, changes).await;
        assert!(expected.contains("\"name\":\"A\""), "{kind}: {expected}");
        assert!(expected.contains("| d "), "{kind}: {expected}");

        let cluster = on_two_workers(tmp.path(), &loc).await;
        let plan = plan_of(&cluster, changes).await;
        assert!(
            plan.contains("Network") && plan.contains("CdcExec"),
            "{kind}: the CDC read does not run on workers:\n{plan}"
        );
        assert_eq!(text(&cluster, changes).await, expected, "{kind}: {plan}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_refuses_a_session_of_another_version() {
    let tmp = tempfile::tempdir().unwrap();
    let (_, loc) = cow_table(tmp.path()).await;
    let workers = [start_worker().await, start_worker().await];
    let urls = (workers.iter())
        .map(|a| url::Url::parse(&format!("http://{a}")).unwrap())
        .collect();
    let mut other = http::HeaderMap::new();
    other.insert(
        hoodie_distributed::VERSION_HEADER,
        http::HeaderValue::from_static("hoodie 0.0.0"),
    );
    let state = hoodie_distributed::with_workers(
        SessionStateBuilder::new()
            .with_default_features()
            .with_hoodie(HoodieOptions::new(tmp.path().join("wh").to_string_lossy())),
        urls,
    )
    .unwrap()
    .with_distributed_file_scan_config_bytes_per_partition(1)
    .unwrap()
    .with_distributed_passthrough_headers(other)
    .unwrap()
    .build();
    let cluster = SessionContext::new_with_state(state);
    register(&cluster, &loc).await;
    let e = (cluster
        .sql("SELECT dt, count(*) FROM t GROUP BY dt")
        .await
        .unwrap())
    .collect()
    .await
    .expect_err("a worker of another version runs nothing");
    assert!(e.to_string().contains("this worker runs hoodie"), "{e}");
}
