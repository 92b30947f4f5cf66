//! A session that runs its statements on workers, and the worker that runs them.

use std::sync::Arc;

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::SessionStateBuilder;
use datafusion_distributed::{
    DistributedExt, SessionStateBuilderExt as _, Worker, WorkerQueryContext, WorkerResolver,
};
use url::Url;

use crate::{HoodieCodec, HoodieStores};

/// What a session and its workers must agree on: hoodie's version.
pub const PLAN_VERSION: &str = concat!("hoodie ", env!("CARGO_PKG_VERSION"));
/// The header that carries [`PLAN_VERSION`] with every task a session sends.
pub const VERSION_HEADER: &str = "x-hoodie-version";

/// The fixed list of a session's workers.
#[derive(Debug, Clone)]
pub struct WorkerUrls(pub Vec<Url>);

impl WorkerResolver for WorkerUrls {
    fn get_urls(&self) -> Result<Vec<Url>, DataFusionError> {
        Ok(self.0.clone())
    }
}

/// `builder` (a hoodie session: `with_hoodie` applied first) running its statements on
/// `workers`.
pub fn with_workers(
    builder: SessionStateBuilder,
    workers: Vec<Url>,
) -> Result<SessionStateBuilder> {
    let mut headers = http::HeaderMap::new();
    headers.insert(VERSION_HEADER, http::HeaderValue::from_static(PLAN_VERSION));
    builder
        .with_distributed_planner()
        .with_distributed_worker_resolver(WorkerUrls(workers))
        .with_distributed_user_codec(HoodieCodec)
        .with_distributed_passthrough_headers(headers)
}

/// A worker that decodes hoodie's plan nodes and opens tables' stores with `options`; it
/// refuses tasks from a session of another hoodie version.
pub fn worker(options: Vec<(String, String)>) -> Result<Worker> {
    let runtime = RuntimeEnvBuilder::new()
        .with_object_store_registry(Arc::new(HoodieStores::new(options)))
        .build_arc()?;
    Ok(Worker::from_session_builder(|ctx: WorkerQueryContext| async move {
        let theirs = ctx.headers.get(VERSION_HEADER).and_then(|v| v.to_str().ok());
        if theirs != Some(PLAN_VERSION) {
            return Err(DataFusionError::Plan(format!(
                "this worker runs {PLAN_VERSION}, the session {}: run workers of the session's hoodie version",
                theirs.unwrap_or("an unknown version")
            )));
        }
        Ok(ctx.builder.with_distributed_user_codec(HoodieCodec).build())
    })
    .with_runtime_env(runtime)
    .with_version(PLAN_VERSION))
}
