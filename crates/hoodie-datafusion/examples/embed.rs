//! hoodie in a plain DataFusion session: the quickstart's statements through `ctx.sql` (what
//! DataFusion's grammar expresses) and `hudi_sql` (Hudi's Spark SQL dialect).
//!
//! Run it with `cargo run --example embed [-- <warehouse dir>]`; without a directory it uses
//! a temporary one.

use datafusion::error::Result;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};
use hoodie_datafusion::prelude::*;

#[tokio::main]
async fn main() -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let warehouse = std::env::args()
        .nth(1)
        .unwrap_or_else(|| tmp.path().join("warehouse").display().to_string());
    let state = SessionStateBuilder::new()
        .with_config(SessionConfig::new().with_information_schema(true))
        .with_default_features()
        .with_hoodie(HoodieOptions::new(&warehouse))
        .build();
    let ctx = SessionContext::new_with_state(state);

    // Hudi's dialect: CREATE TABLE ... USING hudi (in the warehouse, catalog hoodie.default)
    ctx.hudi_sql("DROP TABLE IF EXISTS trips").await?;
    ctx.hudi_sql(
        "CREATE TABLE trips (uuid STRING, rider STRING, driver STRING, fare DOUBLE, ts BIGINT, city STRING) \
         USING hudi PARTITIONED BY (city) \
         TBLPROPERTIES (primaryKey = 'uuid', preCombineField = 'ts', type = 'cow')",
    )
    .await?;
    // plain DataFusion SQL: an INSERT names its columns (without a list DataFusion expects the
    // five meta columns too); a keyed table with an ordering field upserts
    let written = ctx
        .sql(
            "INSERT INTO trips (uuid, rider, driver, fare, ts, city) VALUES \
             ('334e26e9', 'rider-A', 'driver-K', 19.10, 1695159649087, 'san_francisco'), \
             ('e96c4396', 'rider-B', 'driver-L', 27.70, 1695091554788, 'san_francisco'), \
             ('9909a8b1', 'rider-C', 'driver-M', 33.90, 1695046462179, 'sao_paulo'), \
             ('7a84095f', 'rider-D', 'driver-N', 34.15, 1695332066204, 'chennai')",
        )
        .await?
        .collect()
        .await?;
    datafusion::arrow::util::pretty::print_batches(&written)?;
    // the Spark dialect's INSERT ... PARTITION, with the data columns alone
    ctx.hudi_sql("INSERT INTO trips PARTITION (city = 'chennai') VALUES ('c8abbe79', 'rider-E', 'driver-O', 17.85, 1695115999911)")
        .await?
        .collect()
        .await?;
    ctx.sql("SET hoodie.datasource.write.operation = 'upsert'")
        .await?;
    ctx.sql("INSERT INTO trips (uuid, rider, driver, fare, ts, city) VALUES ('334e26e9', 'rider-A', 'driver-K', 25.00, 1695159649088, 'san_francisco')")
        .await?
        .collect()
        .await?;
    ctx.sql(
        "UPDATE trips SET fare = round(fare * 1.1, 2) WHERE city = 'san_francisco' AND fare > 26",
    )
    .await?
    .collect()
    .await?;
    ctx.sql("DELETE FROM trips WHERE rider = 'rider-C'")
        .await?
        .collect()
        .await?;
    // MERGE in DataFusion's grammar (the source carries the partition and ordering columns,
    // as Hudi requires) ...
    ctx.sql(
        "MERGE INTO trips USING (SELECT '7a84095f' AS uuid, 36.0 AS fare, 1695332066205 AS ts, 'chennai' AS city) s \
         ON trips.uuid = s.uuid WHEN MATCHED THEN UPDATE SET fare = s.fare, ts = s.ts",
    )
    .await?
    .collect()
    .await?;
    // ... and in Spark's, with UPDATE SET * / INSERT *
    ctx.hudi_sql(
        "MERGE INTO trips USING (SELECT 'b2c3d4e5' AS uuid, 'rider-H' AS rider, 'driver-R' AS driver, \
         22.0 AS fare, 1695700000000 AS ts, 'chennai' AS city) AS changes ON trips.uuid = changes.uuid \
         WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
    )
    .await?
    .collect()
    .await?;
    // what a write did, as its sink's metrics
    ctx.sql("EXPLAIN ANALYZE DELETE FROM trips WHERE rider = 'rider-E'")
        .await?
        .show()
        .await?;
    ctx.sql("SELECT _hoodie_record_key, rider, fare, city FROM trips ORDER BY rider")
        .await?
        .show()
        .await?;
    ctx.hudi_sql("SHOW PARTITIONS trips").await?.show().await?;
    Ok(())
}
