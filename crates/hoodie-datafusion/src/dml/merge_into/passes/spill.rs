//! The source of a MERGE in passes, read once: measured, and kept in an Arrow IPC file of the
//! session's disk manager that every pass reads instead of computing the source again.

use std::path::PathBuf;
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use datafusion::arrow::ipc::writer::FileWriter;
use datafusion::error::{DataFusionError, Result as DFResult};
use datafusion::execution::{SpillFile, TaskContext};
use datafusion::physical_plan::{execute_stream, ExecutionPlan};
use futures::StreamExt;

use super::size::plain_bytes;
use crate::sink::cast_columns;

/// The source's rows in a temporary Arrow IPC file (removed when the last pass is done with it).
#[derive(Clone)]
pub struct SpilledSource {
    /// Keeps the file alive.
    _file: Arc<dyn SpillFile>,
    path: PathBuf,
}

pub(super) fn plain_type(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Utf8View => Some(DataType::Utf8),
        DataType::BinaryView => Some(DataType::Binary),
        _ => None,
    }
}

/// `schema` with its view types as plain ones.
pub(super) fn plain_schema(schema: &Schema) -> SchemaRef {
    Arc::new(Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| match plain_type(f.data_type()) {
                Some(t) => Field::new(f.name(), t, f.is_nullable()),
                None => f.as_ref().clone(),
            })
            .collect::<Vec<_>>(),
    ))
}

/// Runs `source` once: adds up the plain Arrow bytes of its rows and writes them (views cast
/// to plain arrays, so no page buffer goes with them) to a temporary file.
pub async fn read_source(
    source: Arc<dyn ExecutionPlan>,
    context: Arc<TaskContext>,
) -> DFResult<(usize, SpilledSource)> {
    let schema = plain_schema(&source.schema());
    let file = context
        .runtime_env()
        .disk_manager
        .create_tmp_file("the source of a MERGE in passes")?;
    let path = file
        .path()
        .ok_or_else(|| {
            DataFusionError::Execution(
                "the disk manager's spill files are not local files: a MERGE cannot keep its source between passes".into(),
            )
        })?
        .to_path_buf();
    // the file is written on a blocking thread, a couple of batches behind the source
    let (tx, mut rx) = tokio::sync::mpsc::channel::<RecordBatch>(2);
    let (out_path, out_schema) = (path.clone(), schema.clone());
    let writing = tokio::task::spawn_blocking(move || -> DFResult<()> {
        let out = std::fs::File::create(&out_path)?;
        let mut writer = FileWriter::try_new(std::io::BufWriter::new(out), &out_schema)?;
        while let Some(batch) = rx.blocking_recv() {
            writer.write(&batch)?;
        }
        writer.finish()?;
        Ok(())
    });
    let mut rows = execute_stream(source, context)?;
    let mut bytes = 0usize;
    while let Some(batch) = rows.next().await {
        let batch = batch?;
        let columns = cast_columns(batch.columns(), &schema)?;
        let batch = RecordBatch::try_new(schema.clone(), columns)?;
        bytes = bytes.saturating_add(plain_bytes(&batch));
        if tx.send(batch).await.is_err() {
            // the writer stopped: its error is reported below
            break;
        }
    }
    drop(tx);
    writing
        .await
        .map_err(|e| DataFusionError::External(Box::new(e)))??;
    Ok((bytes, SpilledSource { _file: file, path }))
}

impl std::fmt::Debug for SpilledSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SpilledSource({})", self.path.display())
    }
}

impl SpilledSource {
    /// The file holding the rows.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
}
