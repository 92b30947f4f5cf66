//! A hoodie session on an in-memory cluster (datafusion-distributed's in-memory transport: a
//! gRPC worker served over an in-process duplex, every worker URL answered by it). The plans
//! are encoded and decoded as over a network, and the worker opens the table's store itself
//! (its own runtime): a write through the session, then reads and a change of the table on the
//! cluster equal the same statements in one process.

mod common;

use async_trait::async_trait;
use datafusion::error::DataFusionError;
use datafusion::prelude::SessionContext;
use datafusion_distributed::{grpc, ChannelResolver, DistributedExt, WorkerChannel};
use hyper_util::rt::TokioIo;
use tonic::transport::{Endpoint, Server};

use common::{hoodie_builder, on_workers, text};

const URL: &str = "http://in-memory:50051";

/// Channels to one worker served over an in-process duplex.
#[derive(Clone)]
struct InMemory {
    channel: grpc::BoxCloneSyncChannel,
}

impl InMemory {
    /// Starts the worker (its sessions reach the others through the same channels).
    fn start() -> Self {
        let (client, server) = tokio::io::duplex(1024 * 1024);
        let mut client = Some(client);
        let channel = Endpoint::try_from(URL)
            .unwrap()
            .connect_with_connector_lazy(tower::service_fn(move |_| {
                let client = client.take().expect("one connection");
                async move { Ok::<_, std::io::Error>(TokioIo::new(client)) }
            }));
        let this = Self {
            channel: grpc::BoxCloneSyncChannel::new(channel),
        };
        let peers = this.clone();
        let worker = hoodie_distributed::worker_with(vec![], move |builder| {
            builder.with_distributed_channel_resolver(peers.clone())
        })
        .unwrap();
        tokio::spawn(
            Server::builder()
                .add_service(worker.into_worker_server())
                .serve_with_incoming(tokio_stream::once(Ok::<_, std::io::Error>(server))),
        );
        this
    }
}

#[async_trait]
impl ChannelResolver for InMemory {
    async fn get_worker_client_for_url(
        &self,
        _: &url::Url,
    ) -> Result<Box<dyn WorkerChannel>, DataFusionError> {
        Ok(grpc::create_worker_client(self.channel.clone()))
    }
}

fn session(warehouse: &std::path::Path, cluster: Option<InMemory>) -> SessionContext {
    let builder = hoodie_builder(warehouse);
    let builder = match cluster {
        None => builder,
        Some(cluster) => {
            let urls = vec![url::Url::parse(URL).unwrap(); 3];
            on_workers(builder, urls).with_distributed_channel_resolver(cluster)
        }
    };
    SessionContext::new_with_state(builder.build())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statements_on_an_in_memory_cluster_give_the_tables_of_one_process() {
    let tmp = tempfile::tempdir().unwrap();
    let cluster = session(&tmp.path().join("wh"), Some(InMemory::start()));
    let local = session(&tmp.path().join("wh"), None);
    let sessions = [(&cluster, "cluster"), (&local, "local")];
    for (kind, (ctx, on)) in ["cow", "mor"]
        .into_iter()
        .flat_map(|k| sessions.map(|s| (k, s)))
    {
        let loc = tmp.path().join(format!("{kind}_{on}"));
        text(
            ctx,
            &format!(
                "CREATE EXTERNAL TABLE {kind}_{on} (id INT, \"Name\" VARCHAR, ts INT, dt VARCHAR) \
                 STORED AS HUDI PARTITIONED BY (dt) LOCATION '{}' \
                 OPTIONS ('primaryKey' 'id', 'preCombineField' 'ts', 'type' '{kind}')",
                loc.display()
            ),
        )
        .await;
        let t = format!("{kind}_{on}");
        for sql in [
            format!(
                "INSERT INTO {t} (id, \"Name\", ts, dt) \
                 VALUES (1, 'a', 1, 'x'), (2, NULL, 1, 'y'), (3, 'c', 1, 'x')"
            ),
            format!(
                "INSERT INTO {t} (id, \"Name\", ts, dt) VALUES (4, 'd', 1, 'y'), (5, 'e', 1, 'z')"
            ),
            format!("UPDATE {t} SET \"Name\" = upper(\"Name\"), ts = 2 WHERE id IN (1, 4)"),
            format!("DELETE FROM {t} WHERE id = 3"),
        ] {
            text(ctx, &sql).await;
        }
    }
    for kind in ["cow", "mor"] {
        let query = |on: &str| {
            format!("SELECT id, \"Name\", ts, dt, _hoodie_record_key FROM {kind}_{on} ORDER BY id")
        };
        let on_cluster = text(&cluster, &query("cluster")).await;
        assert_eq!(on_cluster, text(&local, &query("local")).await, "{kind}");
        assert!(
            on_cluster.contains("| 4  | D    | 2  | y  |"),
            "{on_cluster}"
        );
        // the table the local session wrote, read on the cluster, and the other way round
        for (ctx, on) in [(&cluster, "local"), (&local, "cluster")] {
            let loc = tmp.path().join(format!("{kind}_{on}"));
            let sql = format!(
                "CREATE EXTERNAL TABLE {kind}_{on} STORED AS HUDI LOCATION '{}'",
                loc.display()
            );
            text(ctx, &sql).await;
        }
        assert_eq!(
            text(&cluster, &query("local")).await,
            text(&local, &query("cluster")).await,
            "{kind}"
        );
        let explained = text(&cluster, &format!("EXPLAIN {}", query("cluster"))).await;
        assert!(
            explained.contains("Stage"),
            "{kind}: not on the workers:\n{explained}"
        );
    }
}
