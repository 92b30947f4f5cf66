//! hoodie on a cluster of DataFusion workers, through datafusion-distributed (issue 38; the
//! design is in docs/distributed-design.md).
//!
//! A session becomes distributed with [`with_workers`]: its planner (hoodie's, wrapped) cuts
//! the physical plan into stages, the stages below the head run on the workers, and the head
//! stage (a write's sink and its commit) stays in the session's process. A worker is a
//! [`worker`] served over gRPC; it decodes hoodie's plan nodes with [`HoodieCodec`] and opens
//! the tables' stores itself ([`HoodieStores`]).

mod codec;
mod committed;
mod planner;
mod split;
mod stores;
mod workers;

pub use codec::HoodieCodec;
pub use stores::HoodieStores;
pub use workers::{
    parse_workers, with_workers, worker, worker_with, workers_extension, WorkerListError,
    WorkerUrls, PLAN_VERSION, VERSION_HEADER,
};
