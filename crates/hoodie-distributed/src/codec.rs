//! The plan nodes of hoodie that cross to a worker, as bytes.

use std::sync::Arc;

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use hoodie_datafusion::{CdcExec, MergeOnReadExec, SnapshotExec};

use crate::HoodieStores;

/// The first byte of every node this codec writes: a worker of another format refuses it.
const FORMAT: u8 = 2;
/// [`SnapshotExec`]: a read's mark, only needed where the statement was planned.
const SNAPSHOT: u8 = b'S';
/// [`MergeOnReadExec`]: merge-on-read slices with log files.
const MERGE_ON_READ: u8 = b'M';
/// [`CdcExec`]: the change rows of a CDC read.
const CDC: u8 = b'C';

/// Encodes and decodes hoodie's plan nodes for datafusion-distributed; a decoded scan reads
/// its table through the codec's stores.
#[derive(Debug, Clone)]
pub struct HoodieCodec {
    stores: Arc<HoodieStores>,
}

impl HoodieCodec {
    /// A codec whose decoded scans open their tables through `stores` (a worker's, with its
    /// storage options).
    pub fn new(stores: Arc<HoodieStores>) -> Self {
        Self { stores }
    }

    /// Whether the codec can send `node` to a worker.
    pub fn ships(node: &dyn ExecutionPlan) -> bool {
        node.downcast_ref::<SnapshotExec>().is_some()
            || node.downcast_ref::<MergeOnReadExec>().is_some()
            || node.downcast_ref::<CdcExec>().is_some()
    }
}

impl Default for HoodieCodec {
    fn default() -> Self {
        Self::new(Arc::new(HoodieStores::new(Vec::new())))
    }
}

impl PhysicalExtensionCodec for HoodieCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        _ctx: &TaskContext,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match (buf, inputs) {
            // the mark records what the statement read for its write, which runs where the
            // statement was planned: on a worker it only passes the scan through
            ([FORMAT, SNAPSHOT, location @ ..], [input]) => {
                let location = String::from_utf8(location.to_vec())
                    .map_err(|e| DataFusionError::Internal(format!("a snapshot's location: {e}")))?;
                Ok(Arc::new(SnapshotExec::shipped(input.clone(), location)))
            }
            ([FORMAT, MERGE_ON_READ, node @ ..], []) => {
                let open = |location: &str| self.stores.storage(location);
                Ok(Arc::new(MergeOnReadExec::from_bytes(node, open)?))
            }
            ([FORMAT, CDC, node @ ..], []) => {
                let open = |location: &str| self.stores.storage(location);
                Ok(Arc::new(CdcExec::from_bytes(node, open)?))
            }
            ([FORMAT, kind, ..], _) => Err(DataFusionError::Internal(format!(
                "a hoodie plan node of kind {kind} with {} inputs",
                inputs.len()
            ))),
            ([format, ..], _) => Err(DataFusionError::Plan(format!(
                "a hoodie plan node of format {format}, this worker decodes format {FORMAT}: run workers of the same hoodie version as the session"
            ))),
            ([], _) => Err(DataFusionError::Internal(
                "an empty hoodie plan node".to_string(),
            )),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        if let Some(snapshot) = node.downcast_ref::<SnapshotExec>() {
            buf.extend_from_slice(&[FORMAT, SNAPSHOT]);
            buf.extend_from_slice(snapshot.location().as_bytes());
            return Ok(());
        }
        if let Some(merge) = node.downcast_ref::<MergeOnReadExec>() {
            buf.extend_from_slice(&[FORMAT, MERGE_ON_READ]);
            buf.extend_from_slice(&merge.to_bytes()?);
            return Ok(());
        }
        if let Some(cdc) = node.downcast_ref::<CdcExec>() {
            buf.extend_from_slice(&[FORMAT, CDC]);
            buf.extend_from_slice(&cdc.to_bytes()?);
            return Ok(());
        }
        Err(DataFusionError::NotImplemented(format!(
            "running {} on a worker",
            node.name()
        )))
    }
}
