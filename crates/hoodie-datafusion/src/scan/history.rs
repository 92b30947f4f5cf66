//! Reads of a table's history: time travel (the slices as of an instant, after Hudi's checks)
//! and incremental windows (the file groups a window of commits wrote, read as of its last
//! commit, filtered to the records those commits wrote).

use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::ScalarValue;
use datafusion::error::Result as DFResult;
use datafusion::physical_expr::expressions::{in_list, Column, Literal};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::ExecutionPlan;
use hoodie_format::fs_view::FileSlice;
use hoodie_format::history::{check_as_of, IncrementalWindow};
use hoodie_format::meta::COMMIT_TIME;
use hoodie_format::timeline::Timeline;
use hoodie_format::{FormatError, HudiTable};

use super::read_kind::ReadKind;

/// What a read takes from the table's history: the instant it reads as of, and for an
/// incremental read the window of commits.
#[derive(Debug, Default)]
pub(crate) struct HistoryRead {
    as_of: Option<String>,
    window: Option<IncrementalWindow>,
}

impl HistoryRead {
    /// The history `read` needs from `table` with `timeline`, checked as Hudi checks it;
    /// `fallback` (`hoodie.datasource.read.incr.fallback.fulltablescan.enable`) turns an
    /// incremental window that reaches archived commits into a full table scan.
    pub(crate) async fn resolve(
        table: &HudiTable,
        timeline: &Timeline,
        read: &ReadKind,
        fallback: bool,
    ) -> Result<Self, FormatError> {
        match read {
            ReadKind::Snapshot | ReadKind::ReadOptimized => Ok(Self::default()),
            ReadKind::AsOf(t) => {
                check_as_of(table.storage(), timeline, t).await?;
                Ok(Self {
                    as_of: Some(t.clone()),
                    window: None,
                })
            }
            ReadKind::Changes { .. } => Err(FormatError::Unsupported {
                feature: "change rows through a scan of the table's columns (a CDC read is planned by its own provider)".into(),
            }),
            ReadKind::Incremental { begin, end } => {
                if !table.config().populate_meta_fields()? {
                    return Err(FormatError::Unsupported {
                        feature: "Incremental queries are not supported when meta fields are disabled (hoodie.populate.meta.fields = false)".into(),
                    });
                }
                let version = table.config().version()?;
                if fallback
                    && IncrementalWindow::reaches_archived(
                        timeline,
                        version,
                        begin,
                        end.as_deref(),
                    )
                {
                    return Ok(Self::full_table_scan(begin, end.as_deref()));
                }
                // versions 8 and 9: a window from before the active timeline covers the
                // archived writes too, read from the LSM history
                let archived = if IncrementalWindow::needs_archived(timeline, version, begin) {
                    hoodie_format::archive::archived_writes(table).await?
                } else {
                    Vec::new()
                };
                let window = IncrementalWindow::load(
                    table.storage(),
                    timeline,
                    version,
                    (begin, end.as_deref()),
                    &archived,
                )
                .await?;
                // a window of archived writes reads the latest snapshot, as Spark's
                let as_of = if window.from_archived {
                    None
                } else {
                    window.last().map(str::to_string)
                };
                Ok(Self {
                    as_of,
                    window: Some(window),
                })
            }
        }
    }

    /// A full table scan of the window `(begin, end]`: the latest slices, every file group.
    pub(crate) fn full_table_scan(begin: &str, end: Option<&str>) -> Self {
        Self {
            as_of: None,
            window: Some(IncrementalWindow::full_table_scan(begin, end)),
        }
    }

    /// The instant the slices are taken as of (`None`: the latest).
    pub(crate) fn as_of(&self) -> Option<&str> {
        self.as_of.as_deref()
    }

    /// The incremental window, for an incremental read.
    pub(crate) fn window(&self) -> Option<&IncrementalWindow> {
        self.window.as_ref()
    }

    /// The slices the read needs: for an incremental read those of the file groups its window
    /// wrote, else all.
    pub(crate) fn keep_slices(&self, mut slices: Vec<FileSlice>) -> Vec<FileSlice> {
        // a window of archived writes reads every latest slice, as Spark's does: a record of
        // its commits may since have moved to a file group they did not write (clustering)
        let narrowed = |w: &&IncrementalWindow| w.full_scan.is_none() && !w.from_archived;
        if let Some(w) = self.window.as_ref().filter(narrowed) {
            slices.retain(|s| {
                w.file_groups
                    .contains(&(s.partition_path.clone(), s.file_id.clone()))
            });
        }
        slices
    }
}

/// The projection an incremental read scans (`projection` plus `_hoodie_commit_time`, which
/// its filter needs) and where `_hoodie_commit_time` is in that scan's output.
pub(crate) fn with_commit_time(
    schema: &SchemaRef,
    projection: Option<&Vec<usize>>,
) -> DFResult<(Option<Vec<usize>>, usize)> {
    let at = schema.index_of(COMMIT_TIME)?;
    Ok(match projection {
        None => (None, at),
        Some(p) => match p.iter().position(|&i| i == at) {
            Some(pos) => (Some(p.clone()), pos),
            None => {
                let mut inner = p.clone();
                inner.push(at);
                (Some(inner), p.len())
            }
        },
    })
}

/// Keeps the rows of `plan` whose `_hoodie_commit_time` (column `commit_time`) is a commit
/// of `window`, then the first `keep` columns (`None`: all).
pub(crate) fn filter_window(
    plan: Arc<dyn ExecutionPlan>,
    window: &IncrementalWindow,
    commit_time: usize,
    keep: Option<usize>,
) -> DFResult<Arc<dyn ExecutionPlan>> {
    let schema = plan.schema();
    let field = schema.field(commit_time);
    let column: Arc<dyn PhysicalExpr> = Arc::new(Column::new(field.name(), commit_time));
    if let Some((begin, end)) = &window.full_scan {
        let filtered = Arc::new(FilterExec::try_new(
            range_filter(column, field.data_type(), begin, end.as_deref())?,
            plan,
        )?);
        return keep_columns(filtered, keep);
    }
    let list = window
        .instants
        .iter()
        .map(|i| {
            let v = ScalarValue::Utf8(Some(i.clone())).cast_to(field.data_type())?;
            Ok(Arc::new(Literal::new(v)) as Arc<dyn PhysicalExpr>)
        })
        .collect::<DFResult<Vec<_>>>()?;
    let filtered: Arc<dyn ExecutionPlan> = if list.is_empty() {
        Arc::new(datafusion::physical_plan::empty::EmptyExec::new(
            schema.clone(),
        ))
    } else {
        Arc::new(FilterExec::try_new(
            in_list(column, list, &false, &schema)?,
            plan,
        )?)
    };
    keep_columns(filtered, keep)
}

/// `commit_time > begin AND commit_time <= end` (either side left out when open).
fn range_filter(
    column: Arc<dyn PhysicalExpr>,
    data_type: &datafusion::arrow::datatypes::DataType,
    begin: &str,
    end: Option<&str>,
) -> DFResult<Arc<dyn PhysicalExpr>> {
    use datafusion::logical_expr::Operator;
    use datafusion::physical_expr::expressions::binary;
    let schema =
        datafusion::arrow::datatypes::Schema::new(vec![datafusion::arrow::datatypes::Field::new(
            "c",
            data_type.clone(),
            true,
        )]);
    let value = |t: &str| -> DFResult<Arc<dyn PhysicalExpr>> {
        let v = ScalarValue::Utf8(Some(t.to_string())).cast_to(data_type)?;
        Ok(Arc::new(Literal::new(v)))
    };
    let open = begin.bytes().all(|b| b == b'0');
    let mut expr: Arc<dyn PhysicalExpr> = if open {
        Arc::new(datafusion::physical_expr::expressions::IsNotNullExpr::new(
            column.clone(),
        ))
    } else {
        binary(column.clone(), Operator::Gt, value(begin)?, &schema)?
    };
    if let Some(end) = end {
        let upper = binary(column, Operator::LtEq, value(end)?, &schema)?;
        expr = binary(expr, Operator::And, upper, &schema)?;
    }
    Ok(expr)
}

/// The first `keep` columns of `filtered` (`None`: all).
fn keep_columns(
    filtered: Arc<dyn ExecutionPlan>,
    keep: Option<usize>,
) -> DFResult<Arc<dyn ExecutionPlan>> {
    let schema = filtered.schema();
    match keep {
        Some(n) if n < schema.fields().len() => {
            let exprs: Vec<(Arc<dyn PhysicalExpr>, String)> = (0..n)
                .map(|i| {
                    let f = schema.field(i);
                    (
                        Arc::new(Column::new(f.name(), i)) as Arc<dyn PhysicalExpr>,
                        f.name().clone(),
                    )
                })
                .collect();
            Ok(Arc::new(ProjectionExec::try_new(exprs, filtered)?))
        }
        _ => Ok(filtered),
    }
}
