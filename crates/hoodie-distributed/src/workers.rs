//! A session that runs its statements on workers, and the worker that runs them.

use std::sync::Arc;

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::{FunctionRegistry as _, SessionStateBuilder};
use datafusion_distributed::{
    DistributedExt, SessionStateBuilderExt as _, Worker, WorkerQueryContext, WorkerResolver,
};
use url::Url;

use crate::planner::WorkersWherePossible;
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
    mut builder: SessionStateBuilder,
    workers: Vec<Url>,
) -> Result<SessionStateBuilder> {
    let mut headers = http::HeaderMap::new();
    headers.insert(VERSION_HEADER, http::HeaderValue::from_static(PLAN_VERSION));
    let local = builder.query_planner().clone();
    let mut builder = builder
        .with_distributed_planner()
        .with_distributed_worker_resolver(WorkerUrls(workers))
        .with_distributed_user_codec(HoodieCodec::default())
        .with_distributed_desired_task_count_handler(crate::split::desired_tasks)
        .with_distributed_scale_up_leaf_node_handler(crate::split::scale_up)
        .with_distributed_passthrough_headers(headers)?;
    let distributed = builder.query_planner().take().ok_or_else(|| {
        DataFusionError::Internal("datafusion-distributed set no query planner".into())
    })?;
    let planner = WorkersWherePossible { distributed, local };
    Ok(builder.with_query_planner(Arc::new(planner)))
}

/// A worker that decodes hoodie's plan nodes and opens tables' stores with `options`; it
/// refuses tasks from a session of another hoodie version.
pub fn worker(options: Vec<(String, String)>) -> Result<Worker> {
    worker_with(options, |builder| builder)
}

/// [`worker`], each of its task sessions changed by `extend` first (a test's in-memory
/// channels between workers, for one).
pub fn worker_with(
    options: Vec<(String, String)>,
    extend: impl Fn(SessionStateBuilder) -> SessionStateBuilder + Send + Sync + 'static,
) -> Result<Worker> {
    let stores = Arc::new(HoodieStores::new(options));
    let runtime = RuntimeEnvBuilder::new()
        .with_object_store_registry(stores.clone())
        .build_arc()?;
    let codec = HoodieCodec::new(stores);
    let extend = Arc::new(extend);
    let session = move |ctx: WorkerQueryContext| {
        let (codec, extend) = (codec.clone(), extend.clone());
        async move {
            check_version(&ctx.headers)?;
            let builder = extend(ctx.builder.with_distributed_user_codec(codec));
            let mut state = builder.build();
            // hoodie's functions in a plan are decoded by name from the session's registry
            for function in hoodie_datafusion::shipped_functions() {
                state.register_udf(function)?;
            }
            Ok(state)
        }
    };
    Ok(Worker::from_session_builder(session)
        .with_runtime_env(runtime)
        .with_version(PLAN_VERSION))
}

/// Refuses a task whose session sent another hoodie version than this worker's.
fn check_version(headers: &http::HeaderMap) -> Result<()> {
    let theirs = headers.get(VERSION_HEADER).and_then(|v| v.to_str().ok());
    if theirs == Some(PLAN_VERSION) {
        return Ok(());
    }
    Err(DataFusionError::Plan(format!(
        "this worker runs {PLAN_VERSION}, the session {}: run workers of the session's hoodie \
         version",
        theirs.unwrap_or("an unknown version")
    )))
}

/// A worker list that is not `HOST:PORT[,HOST:PORT...]`.
#[derive(Debug, thiserror::Error)]
#[error("a worker is HOST:PORT (or http://HOST:PORT), got {given:?}: {reason}")]
pub struct WorkerListError {
    given: String,
    reason: String,
}

/// The workers of `list`, `HOST:PORT` (or `http://HOST:PORT`) separated by commas, as the
/// shell's and `hoodie-slt`'s `--workers` take them.
pub fn parse_workers(list: &str) -> std::result::Result<Vec<Url>, WorkerListError> {
    let bad = |given: &str, reason: String| WorkerListError {
        given: given.to_string(),
        reason,
    };
    let mut urls = Vec::new();
    for given in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let text = match given.contains("://") {
            true => given.to_string(),
            false => format!("http://{given}"),
        };
        let url = Url::parse(&text).map_err(|e| bad(given, e.to_string()))?;
        if url.port_or_known_default().is_none() || url.host_str().is_none() {
            return Err(bad(given, "no host and port".into()));
        }
        urls.push(url);
    }
    match urls.is_empty() {
        true => Err(bad(list, "no worker given".into())),
        false => Ok(urls),
    }
}

/// The change that makes a [`hoodie_datafusion::HoodieContext`] run its statements on
/// `workers` (see [`with_workers`]); with `bytes_per_partition`, a scan takes a worker task
/// per that many bytes of its files, over the session's target partitions (else
/// datafusion-distributed's default, 16 MiB; 1 spreads even the smallest scan).
pub fn workers_extension(
    workers: Vec<Url>,
    bytes_per_partition: Option<usize>,
) -> hoodie_datafusion::SessionExtension {
    hoodie_datafusion::SessionExtension(Arc::new(move |builder| {
        let builder = with_workers(builder, workers.clone())?;
        match bytes_per_partition {
            Some(bytes) => builder.with_distributed_file_scan_config_bytes_per_partition(bytes),
            None => Ok(builder),
        }
    }))
}
