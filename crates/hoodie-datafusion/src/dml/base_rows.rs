//! The rows an UPDATE, DELETE or MERGE INTO reads from a merge-on-read table of version 8 or
//! 9, each with its row in its file slice's base file ([`BASE_ROW`]): the write then gives the
//! log block of the rows it writes back their record positions, as Hudi 1.x's writer does for
//! the records its index finds in a base file, so that a reader merges the slice by position
//! instead of hashing every base record's key. Spark's own DML carries none (its rows reach
//! the writer "prepped", without their positions); the write drops them where the slice's
//! base file is not the one the statement read.

use std::sync::Arc;

use datafusion::common::Column;
use datafusion::datasource::{provider_as_source, source_as_provider, TableProvider};
use datafusion::error::Result as DFResult;
use datafusion::logical_expr::{
    Expr, Filter, LogicalPlan, Projection, SubqueryAlias, TableScan, TableScanBuilder,
};
use hoodie_format::write::{WriteSpec, BASE_ROW};
use hoodie_format::TableType;

use crate::provider::{as_hudi, HudiTableProvider};

/// Whether the statement's rows should carry their base rows: the table is merge-on-read of
/// version 8 or later (whose log blocks carry record positions) and the write `spec` writes
/// positions (`hoodie.write.record.positions`; without them the scan spares the row numbers).
pub(crate) fn wanted(hudi: &HudiTableProvider, spec: &WriteSpec) -> bool {
    let cfg = hudi.table().config();
    spec.files.record_positions
        && cfg.table_type().ok() == Some(TableType::MergeOnRead)
        && cfg.version().is_ok_and(|v| v >= 8)
        && !hudi.is_read_only()
}

/// `input`, an UPDATE's or DELETE's rows (a projection, filters and the scan of the target,
/// as DataFusion plans them), with the base rows as its last column; `None` when it has
/// another shape (its rows then carry none).
pub(crate) fn add_to_rows(
    input: &LogicalPlan,
    hudi: &HudiTableProvider,
) -> DFResult<Option<LogicalPlan>> {
    Ok(Some(match input {
        LogicalPlan::TableScan(scan) => {
            let Some(scan) = scan_with_base_rows(scan, hudi)? else {
                return Ok(None);
            };
            LogicalPlan::TableScan(scan)
        }
        LogicalPlan::Filter(f) => {
            let Some(rows) = add_to_rows(&f.input, hudi)? else {
                return Ok(None);
            };
            LogicalPlan::Filter(Filter::try_new(f.predicate.clone(), Arc::new(rows))?)
        }
        LogicalPlan::SubqueryAlias(a) => {
            let Some(rows) = add_to_rows(&a.input, hudi)? else {
                return Ok(None);
            };
            LogicalPlan::SubqueryAlias(SubqueryAlias::try_new(Arc::new(rows), a.alias.clone())?)
        }
        LogicalPlan::Projection(p) => {
            let Some(rows) = add_to_rows(&p.input, hudi)? else {
                return Ok(None);
            };
            let mut exprs = p.expr.clone();
            exprs.push(column_of(&rows)?);
            LogicalPlan::Projection(Projection::try_new(exprs, Arc::new(rows))?)
        }
        _ => return Ok(None),
    }))
}

/// The base-row column of `plan`'s output.
pub(crate) fn column_of(plan: &LogicalPlan) -> DFResult<Expr> {
    let (qualifier, field) = plan
        .schema()
        .qualified_field_with_unqualified_name(BASE_ROW)?;
    Ok(Expr::Column(Column::from((qualifier, field))))
}

/// `scan`, of `hudi`'s table, through the provider whose rows carry their base rows, the base
/// rows its last column; `None` when it scans another table.
fn scan_with_base_rows(scan: &TableScan, hudi: &HudiTableProvider) -> DFResult<Option<TableScan>> {
    let provider = source_as_provider(&scan.source)?;
    let Some(scanned) = as_hudi(&provider) else {
        return Ok(None);
    };
    if scanned.table().storage().location() != hudi.table().storage().location() {
        return Ok(None);
    }
    let n = scanned.schema().fields().len();
    let mut projection = scan.projection.clone().unwrap_or_else(|| (0..n).collect());
    projection.push(n);
    let source = provider_as_source(Arc::new(scanned.with_base_rows()));
    let scan = TableScanBuilder::new(scan.table_name.clone(), source)
        .with_projection(Some(projection))
        .with_filters(scan.filters.clone())
        .with_fetch(scan.fetch)
        .build()?;
    Ok(Some(scan))
}
