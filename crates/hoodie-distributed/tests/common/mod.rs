//! What the cluster tests share: hoodie sessions, local or on workers, and results as text.

use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::execution::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use datafusion_distributed::DistributedExt;
use hoodie_datafusion::{HoodieOptions, SessionStateBuilderExt};

/// A hoodie session over `warehouse` (two target partitions), before any workers.
pub fn hoodie_builder(warehouse: &std::path::Path) -> SessionStateBuilder {
    SessionStateBuilder::new()
        .with_config(SessionConfig::new().with_target_partitions(2))
        .with_default_features()
        .with_hoodie(HoodieOptions::new(warehouse.to_string_lossy()))
}

/// `builder` on the workers at `urls`, every scan split over them however small its table.
pub fn on_workers(builder: SessionStateBuilder, urls: Vec<url::Url>) -> SessionStateBuilder {
    hoodie_distributed::with_workers(builder, urls)
        .unwrap()
        .with_distributed_file_scan_config_bytes_per_partition(1)
        .unwrap()
}

/// The result of `sql` in `ctx` as a table of text (a failure panics, naming the SQL).
pub async fn text(ctx: &SessionContext, sql: &str) -> String {
    let batches = (ctx.sql(sql).await)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    pretty_format_batches(&batches).unwrap().to_string()
}
