//! Set-up shared by the integration tests (each test file uses part of it).
#![allow(dead_code)]

use std::path::Path;

use hoodie_datafusion::{HoodieConfig, HoodieContext, StatementOutput};

/// A session over `tmp/wh` (with `memory_limit` as its pool, if any) in which `create` (a
/// `CREATE TABLE ... USING hudi` without its LOCATION) has made a table at `location`.
pub async fn session_with_table(
    tmp: &Path,
    memory_limit: Option<usize>,
    create: &str,
    location: &Path,
) -> HoodieContext {
    let mut config = HoodieConfig::new(tmp.join("wh"));
    config.memory_limit = memory_limit;
    let ctx = HoodieContext::new(config).await.unwrap();
    ctx.run(&format!("{create} LOCATION '{}'", location.display()))
        .await
        .unwrap();
    ctx
}

/// The single BIGINT a query like `SELECT count(*) ...` returns.
pub async fn count(ctx: &HoodieContext, sql: &str) -> i64 {
    let StatementOutput::Rows { batches, .. } = ctx.run(sql).await.unwrap() else {
        panic!("{sql} returned no rows");
    };
    datafusion::arrow::array::AsArray::as_primitive::<datafusion::arrow::datatypes::Int64Type>(
        batches[0].column(0).as_ref(),
    )
    .value(0)
}
