//! CDC reads: `hudi_table_changes(t, 'cdc', begin[, end])` as a table of change rows (`op`,
//! `ts_ms`, `before`, `after`). Planning picks the splits (per commit of the window and file
//! group, how its changes are found, `hoodie_format::cdc::cdc_splits`); the scan reads them on
//! as many partitions as the session runs, each split's files alone.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::datasource::TableType;
use datafusion::error::Result as DFResult;
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::Expr;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::metrics::{ExecutionPlanMetricsSet, MetricBuilder, MetricsSet};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
};
use futures::StreamExt;
use hoodie_format::cdc::ChangeReader;
use hoodie_format::cdc::{cdc_splits, CdcSplit};
use hoodie_format::storage::TableStorage;
use hoodie_format::wire::{Chunks, Frames};
use hoodie_format::HudiTable;

use crate::error::df_err;

/// How a CDC read gives its images (`hoodie.datafusion.cdc.image.format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    /// JSON text, as Hudi.
    Json,
    /// Struct columns of the table's data columns.
    Struct,
}

impl ImageFormat {
    /// The format an option value names (`json` when unset).
    pub fn parse(value: Option<&str>) -> Result<Self, crate::error::HoodieError> {
        let Some(v) = value else {
            return Ok(Self::Json);
        };
        hoodie_format::config::CDC_IMAGE_FORMAT
            .check(v.trim())
            .map_err(hoodie_format::FormatError::from)?;
        Ok(if v.trim().eq_ignore_ascii_case("struct") {
            Self::Struct
        } else {
            Self::Json
        })
    }
}

/// The change rows of a window of a CDC table's commits.
#[derive(Debug)]
pub struct CdcTableProvider {
    table: HudiTable,
    table_schema: SchemaRef,
    begin: String,
    end: Option<String>,
    images: ImageFormat,
    schema: SchemaRef,
}

impl CdcTableProvider {
    /// The changes of `table` (its records in `table_schema`) in `(begin, end]`, normalised
    /// instants; fails unless the table logs changes.
    pub fn try_new(
        table: HudiTable,
        table_schema: SchemaRef,
        begin: String,
        end: Option<String>,
        images: ImageFormat,
    ) -> Result<Self, crate::error::HoodieError> {
        if table.config().cdc_mode()?.is_none() {
            return Err(hoodie_format::FormatError::NotCdcTable {
                location: table.storage().location().trim_end_matches('/').to_string(),
            }
            .into());
        }
        let schema = match images {
            ImageFormat::Json => hoodie_format::cdc::json_change_schema(),
            ImageFormat::Struct => hoodie_format::cdc::change_schema(&table_schema),
        };
        Ok(Self {
            table,
            table_schema,
            begin,
            end,
            images,
            schema,
        })
    }
}

#[async_trait]
impl TableProvider for CdcTableProvider {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::View
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let timeline = self.table.timeline().await.map_err(df_err)?;
        hoodie_format::archive::check_cdc_start(&self.table, &timeline, &self.begin)
            .await
            .map_err(df_err)?;
        let splits = cdc_splits(
            self.table.storage(),
            &timeline,
            &self.begin,
            self.end.as_deref(),
        )
        .await
        .map_err(df_err)?;
        let reader =
            ChangeReader::new(&self.table, &timeline, self.table_schema.clone()).map_err(df_err)?;
        let partitions = state
            .config_options()
            .execution
            .target_partitions
            .clamp(1, splits.len().max(1));
        let exec = CdcExec::new(
            Arc::new(reader),
            splits,
            (self.images, projection.cloned()),
            partitions,
        )?;
        Ok(Arc::new(exec))
    }
}

/// Reads CDC splits: partition `p` takes every split whose index is `p` modulo the partitions.
#[derive(Debug)]
pub struct CdcExec {
    properties: Arc<PlanProperties>,
    reader: Arc<ChangeReader>,
    splits: Arc<Vec<CdcSplit>>,
    images: ImageFormat,
    projection: Option<Vec<usize>>,
    schema: SchemaRef,
    metrics: ExecutionPlanMetricsSet,
}

impl CdcExec {
    /// Reads `splits` with `reader` on `partitions` partitions, its images in `images`'s
    /// format and its columns `projection` of them.
    fn new(
        reader: Arc<ChangeReader>,
        splits: Vec<CdcSplit>,
        (images, projection): (ImageFormat, Option<Vec<usize>>),
        partitions: usize,
    ) -> DFResult<Self> {
        let all = match images {
            ImageFormat::Json => hoodie_format::cdc::json_change_schema(),
            ImageFormat::Struct => reader.change_schema().clone(),
        };
        let schema = match &projection {
            Some(p) => Arc::new(all.project(p)?),
            None => all,
        };
        Ok(Self {
            properties: Arc::new(PlanProperties::new(
                EquivalenceProperties::new(schema.clone()),
                Partitioning::UnknownPartitioning(partitions.max(1)),
                EmissionType::Incremental,
                Boundedness::Bounded,
            )),
            reader,
            splits: Arc::new(splits),
            images,
            projection,
            schema,
            metrics: ExecutionPlanMetricsSet::new(),
        })
    }

    /// The location of the table whose changes the node reads.
    pub fn location(&self) -> &str {
        self.reader.location()
    }

    /// The number of splits (file groups of commits) the node reads.
    pub fn split_count(&self) -> usize {
        self.splits.len()
    }

    /// The node split into `tasks` nodes of as many partitions as it has, which together read
    /// each of its splits once (for workers that each run one of them).
    pub fn split(&self, tasks: usize) -> DFResult<Vec<CdcExec>> {
        let tasks = tasks.max(1);
        let partitions = self.properties.partitioning.partition_count();
        (0..tasks)
            .map(|t| {
                let mine = self.splits.iter().skip(t).step_by(tasks).cloned().collect();
                let format = (self.images, self.projection.clone());
                CdcExec::new(self.reader.clone(), mine, format, partitions)
            })
            .collect()
    }

    /// The node as bytes, for a worker in another process ([`CdcExec::from_bytes`]).
    pub fn to_bytes(&self) -> DFResult<Vec<u8>> {
        let mut frames = Frames::new(WHAT);
        frames.bytes(&self.reader.to_bytes().map_err(df_err)?);
        let shape = Shape {
            splits: self.splits.as_ref().clone(),
            struct_images: self.images == ImageFormat::Struct,
            projection: self.projection.clone(),
            partitions: self.properties.partitioning.partition_count(),
        };
        frames.json(&shape).map_err(df_err)?;
        Ok(frames.into_bytes())
    }

    /// The node of [`CdcExec::to_bytes`], reading the table's files from the storage `open`
    /// gives for its location.
    pub fn from_bytes(
        bytes: &[u8],
        open: impl FnOnce(&str) -> hoodie_format::Result<TableStorage>,
    ) -> DFResult<Self> {
        let mut chunks = Chunks::new(WHAT, bytes);
        let reader =
            ChangeReader::from_bytes(chunks.bytes().map_err(df_err)?, open).map_err(df_err)?;
        let shape: Shape = chunks.json().map_err(df_err)?;
        let images = match shape.struct_images {
            true => ImageFormat::Struct,
            false => ImageFormat::Json,
        };
        let format = (images, shape.projection);
        CdcExec::new(Arc::new(reader), shape.splits, format, shape.partitions)
    }
}

/// What the errors call the node's bytes.
const WHAT: &str = "CDC scan";

/// A [`CdcExec`] besides its reader, as JSON.
#[derive(serde::Serialize, serde::Deserialize)]
struct Shape {
    splits: Vec<CdcSplit>,
    struct_images: bool,
    projection: Option<Vec<usize>>,
    partitions: usize,
}

impl DisplayAs for CdcExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        let groups: std::collections::HashSet<(&str, &str)> = self
            .splits
            .iter()
            .map(|s| (s.partition_path.as_str(), s.file_id.as_str()))
            .collect();
        write!(
            f,
            "CdcExec: splits={}, file_groups={}, images={:?}",
            self.splits.len(),
            groups.len(),
            self.images
        )
    }
}

impl ExecutionPlan for CdcExec {
    fn name(&self) -> &str {
        "CdcExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DFResult<TreeNodeRecursion>,
    ) -> DFResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn metrics(&self) -> Option<MetricsSet> {
        Some(self.metrics.clone_inner())
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> DFResult<SendableRecordBatchStream> {
        let count = self.properties.partitioning.partition_count();
        let mine: Vec<usize> = (partition..self.splits.len()).step_by(count).collect();
        let output_rows = MetricBuilder::new(&self.metrics).output_rows(partition);
        let read = MetricBuilder::new(&self.metrics).counter("splits_read", partition);
        let (reader, splits, images) = (self.reader.clone(), self.splits.clone(), self.images);
        let projection = self.projection.clone();
        let stream = futures::stream::iter(mine)
            .then(move |i| {
                let (reader, splits, read) = (reader.clone(), splits.clone(), read.clone());
                async move {
                    read.add(1);
                    reader.changes(&splits[i]).await.map_err(df_err)
                }
            })
            .flat_map(move |batches| {
                let out: Vec<DFResult<RecordBatch>> = match batches {
                    Err(e) => vec![Err(e)],
                    Ok(bs) => bs
                        .iter()
                        .map(|b| {
                            let b = match images {
                                ImageFormat::Json => {
                                    hoodie_format::cdc::with_json_images(b).map_err(df_err)?
                                }
                                ImageFormat::Struct => b.clone(),
                            };
                            let b = match &projection {
                                Some(p) => b.project(p)?,
                                None => b,
                            };
                            output_rows.add(b.num_rows());
                            Ok(b)
                        })
                        .collect(),
                };
                futures::stream::iter(out)
            });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            stream,
        )))
    }
}
