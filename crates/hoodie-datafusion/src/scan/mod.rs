//! Scans of Hudi tables: base files through DataFusion's parquet scan, merge-on-read slices
//! with log files through [`merged::MergeOnReadExec`].

pub mod cdc;
pub(crate) mod footers;
pub(crate) mod history;
pub(crate) mod merge_on_read;
pub(crate) mod opened;
pub mod read_kind;
pub(crate) mod snapshot;

use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::ScalarValue;
use datafusion::error::Result as DFResult;
use datafusion::physical_plan::ExecutionPlan;
use hoodie_format::fs_view::FileSlice;
use hoodie_format::read::SliceReader;
use hoodie_format::timeline::Timeline;
use hoodie_format::HudiTable;

use crate::error::df_err;
use merge_on_read::{MergeOnReadExec, SliceJob};

/// What a merge-on-read scan reads: the table as of an instant of its timeline, the columns
/// of its schema it projects, and which of them the files leave out.
pub(crate) struct MergeOnReadScan<'a> {
    pub table: &'a HudiTable,
    pub schema: &'a SchemaRef,
    pub timeline: &'a Timeline,
    pub as_of: Option<&'a str>,
    pub projection: Option<&'a Vec<usize>>,
    /// The partition columns the files leave out.
    pub dropped: &'a [String],
    /// Whether slices may merge by record position (`hoodie.merge.use.record.positions`).
    pub use_positions: bool,
    /// Where in the output each row's row in its base file goes, and its field, if wanted.
    pub base_row: Option<(usize, datafusion::arrow::datatypes::FieldRef)>,
}

/// The plan that merges `slices` (each with log files) for `scan`, in up to `partitions`
/// partitions; `partition_values` gives the values of `scan.dropped` for a partition path.
pub(crate) fn merge_on_read_plan(
    scan: MergeOnReadScan<'_>,
    slices: Vec<FileSlice>,
    partition_values: &dyn Fn(&str) -> DFResult<Vec<ScalarValue>>,
    partitions: usize,
) -> DFResult<Arc<dyn ExecutionPlan>> {
    let reader = SliceReader::new(
        scan.table,
        scan.schema,
        (scan.timeline, scan.as_of),
        scan.projection.map(Vec::as_slice),
        scan.dropped,
    )
    .map_err(df_err)?
    .with_record_positions(scan.use_positions);
    let reader = match scan.base_row {
        Some((at, field)) => reader.with_base_rows(at, field).map_err(df_err)?,
        None => reader,
    };
    let mut jobs = Vec::with_capacity(slices.len());
    for slice in slices {
        let values = match reader.needs_partition_values() {
            false => Vec::new(),
            true => partition_values(&slice.partition_path)?
                .iter()
                .map(|v| v.to_array_of_size(1))
                .collect::<DFResult<_>>()?,
        };
        jobs.push(SliceJob {
            slice,
            partition_values: values,
        });
    }
    Ok(Arc::new(MergeOnReadExec::new(reader, jobs, partitions)))
}
