//! Scans of Hudi tables: base files through DataFusion's parquet scan, merge-on-read slices
//! with log files through [`merged::MergedSliceExec`].

pub mod cdc;
pub(crate) mod footers;
pub(crate) mod functions;
pub(crate) mod history;
pub(crate) mod merged;
pub(crate) mod opened;
pub mod read_kind;
pub(crate) mod snapshot;

use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::ScalarValue;
use datafusion::error::Result as DFResult;
use datafusion::physical_plan::ExecutionPlan;
use hoodie_format::fs_view::FileSlice;
use hoodie_format::log::keys::KeySource;
use hoodie_format::log::merge::MergeRules;
use hoodie_format::log::read::Admission;
use hoodie_format::timeline::Timeline;
use hoodie_format::HudiTable;

use crate::error::df_err;
use merged::{MergeScan, MergedSliceExec, SliceJob};

/// The plan that merges `slices` (each with log files) for a scan of `projection` of
/// `schema`; `dropped` names the partition columns the files leave out and
/// `partition_values` gives their values for a partition path.
#[allow(clippy::too_many_arguments)]
pub(crate) fn merge_on_read_plan(
    table: &HudiTable,
    schema: &SchemaRef,
    timeline: &Timeline,
    as_of: Option<&str>,
    slices: Vec<FileSlice>,
    projection: Option<&Vec<usize>>,
    dropped: &[String],
    partition_values: &dyn Fn(&str) -> DFResult<Vec<ScalarValue>>,
    partitions: usize,
) -> DFResult<Arc<dyn ExecutionPlan>> {
    let cfg = table.config();
    let keys = KeySource::for_table(cfg, schema).map_err(df_err)?;
    let wanted: Vec<usize> = match projection {
        Some(p) => p.clone(),
        None => (0..schema.fields().len()).collect(),
    };
    // the merge's own columns: the record key, the ordering field, the delete marker
    let mut needed = wanted.clone();
    let mut add = |name: &str| {
        let top = name.split('.').next().unwrap_or(name);
        if let Ok(i) = schema.index_of(top) {
            needed.push(i);
        }
    };
    match keys.column() {
        Some(c) => add(c),
        None => cfg.record_key_fields().iter().for_each(|k| add(k)),
    }
    if let Some(o) = cfg.ordering_field() {
        add(&o);
    }
    add("_hoodie_is_deleted");
    needed.sort_unstable();
    needed.dedup();
    let working = Arc::new(schema.project(&needed)?);
    let output: Vec<usize> = wanted
        .iter()
        .map(|w| needed.binary_search(w).expect("a wanted column is read"))
        .collect();
    let out_schema = Arc::new(schema.project(&wanted)?);
    let mode = cfg.merge_mode().map_err(df_err)?;
    let rules = MergeRules::new(&working, mode, cfg.ordering_field().as_deref());
    // (position in `working`, position among the dropped columns)
    let dropped_at: Vec<(usize, usize)> = dropped
        .iter()
        .enumerate()
        .filter_map(|(j, d)| working.index_of(d).ok().map(|i| (i, j)))
        .collect();
    let mut jobs = Vec::with_capacity(slices.len());
    for slice in slices {
        let values = if dropped_at.is_empty() {
            Vec::new()
        } else {
            let all = partition_values(&slice.partition_path)?;
            dropped_at.iter().map(|(_, j)| all[*j].clone()).collect()
        };
        jobs.push(SliceJob {
            slice,
            partition_values: values,
        });
    }
    let scan = MergeScan {
        storage: table.storage().clone(),
        admission: Admission::of(timeline, as_of),
        working,
        output,
        out_schema,
        rules,
        keys,
        dropped: dropped_at.iter().map(|(i, _)| *i).collect(),
    };
    Ok(Arc::new(MergedSliceExec::new(scan, jobs, partitions)))
}
