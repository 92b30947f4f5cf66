//! The plan nodes of hoodie that cross to a worker, as bytes.

use std::sync::Arc;

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use hoodie_datafusion::SnapshotExec;

/// The first byte of every node this codec writes: a worker of another format refuses it.
const FORMAT: u8 = 1;
/// [`SnapshotExec`]: a read's mark, only needed where the statement was planned.
const SNAPSHOT: u8 = b'S';

/// Encodes and decodes hoodie's plan nodes for datafusion-distributed.
#[derive(Debug, Default, Clone)]
pub struct HoodieCodec;

impl PhysicalExtensionCodec for HoodieCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        _ctx: &TaskContext,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match buf {
            [FORMAT, SNAPSHOT, ..] => match inputs {
                // the mark records what the statement read for its write, which runs where
                // the statement was planned: a worker passes the scan through as it is
                [input] => Ok(input.clone()),
                _ => Err(DataFusionError::Internal(format!(
                    "a hoodie snapshot node with {} inputs",
                    inputs.len()
                ))),
            },
            [format, ..] if *format != FORMAT => Err(DataFusionError::Plan(format!(
                "a hoodie plan node of format {format}, this worker decodes format {FORMAT}: run workers of the same hoodie version as the session"
            ))),
            _ => Err(DataFusionError::Internal(
                "not a hoodie plan node".to_string(),
            )),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        match node.downcast_ref::<SnapshotExec>() {
            Some(snapshot) => {
                buf.extend_from_slice(&[FORMAT, SNAPSHOT]);
                buf.extend_from_slice(snapshot.location().as_bytes());
                Ok(())
            }
            None => Err(DataFusionError::NotImplemented(format!(
                "running {} on a worker",
                node.name()
            ))),
        }
    }
}
