//! Reads of a hoodie table spread over two workers (real gRPC on localhost) give the rows a
//! read in one process gives.

use std::net::SocketAddr;

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
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
    let builder = SessionStateBuilder::new()
        .with_config(SessionConfig::new().with_target_partitions(2))
        .with_default_features()
        .with_hoodie(HoodieOptions::new(warehouse.to_string_lossy()));
    let builder = match workers {
        None => builder,
        Some(addrs) => {
            let urls = (addrs.iter())
                .map(|a| url::Url::parse(&format!("http://{a}")).unwrap())
                .collect();
            hoodie_distributed::with_workers(builder, urls)
                .unwrap()
                // split the scan even though the table is small
                .with_distributed_file_scan_config_bytes_per_partition(1)
                .unwrap()
        }
    };
    SessionContext::new_with_state(builder.build())
}

async fn text(ctx: &SessionContext, sql: &str) -> String {
    let batches = (ctx.sql(sql).await)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    pretty_format_batches(&batches).unwrap().to_string()
}

/// A copy-on-write table of five rows over two commits at `<dir>/t`, and the local session
/// that wrote it.
async fn cow_table(dir: &std::path::Path) -> (SessionContext, std::path::PathBuf) {
    let loc = dir.join("t");
    let local = session(&dir.join("wh"), None);
    text(
        &local,
        &format!(
            "CREATE EXTERNAL TABLE t (id INT, name VARCHAR, ts INT, dt VARCHAR) STORED AS HUDI \
             PARTITIONED BY (dt) LOCATION '{}' \
             OPTIONS ('primaryKey' 'id', 'preCombineField' 'ts', 'type' 'cow')",
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

    let workers = [start_worker().await, start_worker().await];
    let cluster = session(&tmp.path().join("wh"), Some(&workers));
    text(
        &cluster,
        &format!(
            "CREATE EXTERNAL TABLE t STORED AS HUDI LOCATION '{}'",
            loc.display()
        ),
    )
    .await;
    let physical = (cluster.sql(query).await.unwrap())
        .create_physical_plan()
        .await
        .unwrap();
    let plan = datafusion::physical_plan::displayable(physical.as_ref())
        .indent(true)
        .to_string();
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
    text(
        &cluster,
        &format!(
            "CREATE EXTERNAL TABLE t STORED AS HUDI LOCATION '{}'",
            loc.display()
        ),
    )
    .await;
    let e = (cluster
        .sql("SELECT dt, count(*) FROM t GROUP BY dt")
        .await
        .unwrap())
    .collect()
    .await
    .expect_err("a worker of another version runs nothing");
    assert!(e.to_string().contains("this worker runs hoodie"), "{e}");
}
