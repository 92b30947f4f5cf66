//! hoodie embedded in a user's own DataFusion session: `SessionStateBuilder::with_hoodie` on a
//! builder with a query planner of the user's, every DML kind through plain `ctx.sql`, the
//! Spark dialect through `hudi_sql`, `SET hoodie.*` taking effect per session, and the write
//! metrics in `EXPLAIN ANALYZE`. Plain SQL names the columns of an INSERT: DataFusion's
//! `INSERT INTO t VALUES` means every column, the five meta columns included (`hudi_sql` takes
//! the data columns alone, as Spark does).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::pretty::pretty_format_batches;
use datafusion::catalog::Session;
use datafusion::error::Result as DFResult;
use datafusion::execution::context::QueryPlanner;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_planner::{DefaultPhysicalPlanner, PhysicalPlanner};
use datafusion::prelude::{SessionConfig, SessionContext};
use hoodie_datafusion::prelude::*;

/// A user's query planner: DataFusion's, counting the plans it is handed.
#[derive(Debug, Default)]
struct CountingPlanner {
    planned: Arc<AtomicUsize>,
}

#[async_trait]
impl QueryPlanner for CountingPlanner {
    async fn create_physical_plan(
        &self,
        plan: &LogicalPlan,
        session: &dyn Session,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        self.planned.fetch_add(1, Ordering::SeqCst);
        DefaultPhysicalPlanner::default()
            .create_physical_plan(plan, session)
            .await
    }
}

/// A user's session over the warehouse `dir`, and the count of plans its own planner made.
fn user_session(dir: &std::path::Path) -> (SessionContext, Arc<AtomicUsize>) {
    let planner = CountingPlanner::default();
    let planned = planner.planned.clone();
    let state = SessionStateBuilder::new()
        .with_config(SessionConfig::new().with_information_schema(true))
        .with_default_features()
        .with_query_planner(Arc::new(planner))
        .with_hoodie(HoodieOptions::new(dir.to_string_lossy()))
        .build();
    (SessionContext::new_with_state(state), planned)
}

async fn rows(ctx: &SessionContext, sql: &str) -> Vec<RecordBatch> {
    ctx.sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

async fn text(ctx: &SessionContext, sql: &str) -> String {
    pretty_format_batches(&rows(ctx, sql).await)
        .unwrap()
        .to_string()
}

/// The one `count` a DML returns.
async fn count(ctx: &SessionContext, sql: &str) -> u64 {
    let batches = rows(ctx, sql).await;
    assert_eq!(batches.len(), 1, "{sql}");
    assert_eq!(batches[0].schema().field(0).name(), "count", "{sql}");
    datafusion::arrow::array::AsArray::as_primitive::<datafusion::arrow::datatypes::UInt64Type>(
        batches[0].column(0).as_ref(),
    )
    .value(0)
}

fn lines(s: &str) -> Vec<&str> {
    s.lines().collect()
}

#[tokio::test]
async fn every_dml_kind_runs_through_plain_sql_in_a_users_session() {
    let tmp = tempfile::tempdir().unwrap();
    let (ctx, planned) = user_session(&tmp.path().join("wh"));
    let loc = tmp.path().join("t");
    // a new table where the location holds none
    rows(
        &ctx,
        &format!(
            "CREATE EXTERNAL TABLE t (id INT, name VARCHAR, ts INT, dt VARCHAR) STORED AS HUDI \
             PARTITIONED BY (dt) LOCATION '{}' \
             OPTIONS ('primaryKey' 'id', 'preCombineField' 'ts', 'type' 'cow', \
             'hoodie.spark.sql.insert.into.operation' 'upsert')",
            loc.display()
        ),
    )
    .await;
    assert!(loc.join(".hoodie/hoodie.properties").is_file());
    assert_eq!(
        count(&ctx, "INSERT INTO t (id, name, ts, dt) VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'x'), (3, NULL, 1, 'y')").await,
        3
    );
    // an upsert: key 1 is updated, not added
    assert_eq!(
        count(
            &ctx,
            "INSERT INTO t (id, name, ts, dt) VALUES (1, 'a2', 2, 'x')"
        )
        .await,
        1
    );
    assert_eq!(count(&ctx, "UPDATE t SET name = 'u' WHERE id = 3").await, 1);
    assert_eq!(count(&ctx, "DELETE FROM t WHERE id = 2").await, 1);
    assert_eq!(
        count(
            &ctx,
            "MERGE INTO t USING (SELECT 1 AS id, 'm' AS name, 5 AS ts, 'x' AS dt \
             UNION ALL SELECT 4, 'n', 1, 'y') s ON t.id = s.id \
             WHEN MATCHED THEN UPDATE SET name = s.name, ts = s.ts \
             WHEN NOT MATCHED THEN INSERT (id, name, ts, dt) VALUES (s.id, s.name, s.ts, s.dt)"
        )
        .await,
        2
    );
    let planned_before = planned.load(Ordering::SeqCst);
    assert_eq!(
        lines(&text(&ctx, "SELECT id, name, ts, dt FROM t ORDER BY id").await),
        [
            "+----+------+----+----+",
            "| id | name | ts | dt |",
            "+----+------+----+----+",
            "| 1  | m    | 5  | x  |",
            "| 3  | u    | 1  | y  |",
            "| 4  | n    | 1  | y  |",
            "+----+------+----+----+",
        ]
    );
    assert!(
        planned.load(Ordering::SeqCst) > planned_before,
        "the user's planner plans queries"
    );
    // the five meta columns come first
    let meta = text(
        &ctx,
        "SELECT _hoodie_record_key, _hoodie_partition_path FROM t WHERE id = 4",
    )
    .await;
    assert_eq!(
        lines(&meta)[3],
        "| 4                  | dt=y                   |",
        "{meta}"
    );
    // reopened from its location, the table is the same
    let (other, _) = user_session(&tmp.path().join("wh"));
    rows(
        &other,
        &format!(
            "CREATE EXTERNAL TABLE t2 STORED AS HUDI LOCATION '{}'",
            loc.display()
        ),
    )
    .await;
    assert_eq!(
        text(&other, "SELECT count(*) AS n FROM t2").await,
        text(&ctx, "SELECT count(*) AS n FROM t").await
    );
    assert_eq!(
        count(
            &ctx,
            "INSERT OVERWRITE t (id, name, ts, dt) VALUES (9, 'o', 1, 'x')"
        )
        .await,
        1
    );
    assert_eq!(
        lines(&text(&ctx, "SELECT id, name FROM t ORDER BY id").await)[3],
        "| 9  | o    |"
    );
}

#[tokio::test]
async fn set_hoodie_options_take_effect_and_show_and_stay_in_their_session() {
    let tmp = tempfile::tempdir().unwrap();
    let wh = tmp.path().join("wh");
    let (a, _) = user_session(&wh);
    let (b, _) = user_session(&wh);
    a.hudi_sql("CREATE TABLE shared (id INT, v STRING, ts INT) USING hudi TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts')")
        .await
        .unwrap();
    // one provider, used from both sessions
    let provider = a.table_provider("hoodie.default.shared").await.unwrap();
    b.register_table("shared", provider).unwrap();
    assert_eq!(
        count(
            &a,
            "INSERT INTO hoodie.default.shared (id, v, ts) VALUES (1, 'a', 1)"
        )
        .await,
        1
    );

    rows(&a, "SET hoodie.spark.sql.insert.into.operation = 'insert'").await;
    rows(&a, "SET hoodie.datasource.insert.dup.policy = 'fail'").await;
    let shown = text(&a, "SHOW hoodie.datasource.insert.dup.policy").await;
    assert!(shown.contains("| fail "), "{shown}");
    let shown = text(&b, "SHOW hoodie.datasource.insert.dup.policy").await;
    assert!(shown.contains("| none "), "{shown}");

    // session a refuses the duplicate key; session b, on the same provider, upserts it
    let err = a
        .sql("INSERT INTO hoodie.default.shared (id, v, ts) VALUES (1, 'dup', 2)")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap_err();
    assert!(
        err.to_string().to_lowercase().contains("duplicate"),
        "{err}"
    );
    assert_eq!(
        count(&b, "INSERT INTO shared (id, v, ts) VALUES (1, 'b', 2)").await,
        1
    );
    assert_eq!(
        lines(&text(&a, "SELECT id, v FROM hoodie.default.shared").await)[3],
        "| 1  | b |"
    );

    // RESET through the Spark dialect (DataFusion 55's RESET covers its own keys only)
    a.hudi_sql("RESET hoodie.datasource.insert.dup.policy")
        .await
        .unwrap();
    let shown = text(&a, "SHOW hoodie.datasource.insert.dup.policy").await;
    assert!(shown.contains("| none "), "{shown}");
    // a bad value is refused at the SET, naming the key, the value and what the key takes,
    // and the session keeps what it had
    let err = b
        .sql("SET hoodie.datasource.write.operation = 'sometimes'")
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("\"sometimes\" for hoodie.datasource.write.operation")
            && err.contains("expected one of insert, upsert"),
        "{err}"
    );
    let shown = text(&b, "SHOW hoodie.datasource.write.operation").await;
    assert!(!shown.contains("sometimes"), "{shown}");
    count(&b, "INSERT INTO shared (id, v, ts) VALUES (2, 'x', 1)").await;
}

#[tokio::test]
async fn explain_analyze_shows_the_write_metrics() {
    let tmp = tempfile::tempdir().unwrap();
    let (ctx, _) = user_session(&tmp.path().join("wh"));
    ctx.hudi_sql("CREATE TABLE m (id INT, v STRING, ts INT, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts')")
        .await
        .unwrap();
    let insert = text(
        &ctx,
        "EXPLAIN ANALYZE INSERT INTO m (id, v, ts, dt) VALUES (1, 'a', 1, 'x'), (2, 'b', 1, 'y')",
    )
    .await;
    assert!(insert.contains("rows_inserted=2"), "{insert}");
    assert!(insert.contains("file_groups_new=2"), "{insert}");
    let update = text(&ctx, "EXPLAIN ANALYZE UPDATE m SET v = 'u' WHERE id = 1").await;
    assert!(update.contains("rows_updated=1"), "{update}");
    assert!(update.contains("file_groups_rewritten=1"), "{update}");
    let delete = text(&ctx, "EXPLAIN ANALYZE DELETE FROM m WHERE id = 2").await;
    assert!(delete.contains("rows_deleted=1"), "{delete}");
    let merge = text(
        &ctx,
        "EXPLAIN ANALYZE MERGE INTO m USING (SELECT 1 AS id, 'm' AS v, 2 AS ts, 'x' AS dt) s \
         ON m.id = s.id WHEN MATCHED THEN UPDATE SET v = s.v, ts = s.ts",
    )
    .await;
    assert!(merge.contains("rows_updated=1"), "{merge}");
    // EXPLAIN alone plans and writes nothing
    let plan = text(&ctx, "EXPLAIN DELETE FROM m").await;
    assert!(plan.contains("HudiSink"), "{plan}");
    assert_eq!(
        lines(&text(&ctx, "SELECT id, v FROM hoodie.default.m").await)[3],
        "| 1  | m |"
    );
}

#[tokio::test]
async fn the_spark_dialect_runs_through_hudi_sql() {
    let tmp = tempfile::tempdir().unwrap();
    let (ctx, _) = user_session(&tmp.path().join("wh"));
    let run = |sql: &'static str| {
        let ctx = ctx.clone();
        async move {
            ctx.hudi_sql(sql)
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"))
                .collect()
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"))
        }
    };
    run("CREATE TABLE s (id INT, userName STRING, ts INT, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts', type = 'mor')").await;
    run("INSERT INTO s PARTITION (dt = 'x') SELECT 1, 'a', 1").await;
    run("CREATE TABLE src AS SELECT 1 AS id, 'b' AS username, 2 AS ts, 'x' AS dt UNION ALL SELECT 2, 'c', 1, 'y'").await;
    run("MERGE INTO s USING src ON s.id = src.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *").await;
    let parts = pretty_format_batches(&run("SHOW PARTITIONS s").await)
        .unwrap()
        .to_string();
    assert!(parts.contains("dt=x") && parts.contains("dt=y"), "{parts}");
    // Spark's names resolve in any case; the table is visible to plain SQL too
    let rows = pretty_format_batches(&run("SELECT id, USERNAME FROM s ORDER BY id").await)
        .unwrap()
        .to_string();
    assert_eq!(
        lines(&rows),
        [
            "+----+----------+",
            "| id | userName |",
            "+----+----------+",
            "| 1  | b        |",
            "| 2  | c        |",
            "+----+----------+",
        ]
    );
    assert_eq!(
        text(&ctx, "SELECT count(*) AS n FROM s").await,
        text(&ctx, "SELECT count(*) AS n FROM hoodie.default.s").await
    );
    run("DROP TABLE s").await;
    assert!(!tmp.path().join("wh/s").exists());
}

#[tokio::test]
async fn a_later_session_finds_the_warehouse_tables_by_their_bare_names() {
    let tmp = tempfile::tempdir().unwrap();
    let wh = tmp.path().join("wh");
    let (first, _) = user_session(&wh);
    first
        .hudi_sql("CREATE TABLE w (id INT, v STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')")
        .await
        .unwrap();
    first
        .hudi_sql("INSERT INTO w VALUES (1, 'a')")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let (later, _) = user_session(&wh);
    // CREATE TABLE exists in the warehouse: refused, or with IF NOT EXISTS made visible
    let err = later
        .hudi_sql("CREATE TABLE w (id INT, v STRING) USING hudi")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
    later
        .hudi_sql("CREATE TABLE IF NOT EXISTS w (id INT, v STRING) USING hudi")
        .await
        .unwrap();
    assert_eq!(
        lines(&text(&later, "SELECT id, v FROM w").await)[3],
        "| 1  | a |"
    );
    // bare names in DML and queries of the dialect (not a CTE of the same name)
    let (other, _) = user_session(&wh);
    for sql in [
        "INSERT INTO w VALUES (2, 'b')",
        "UPDATE w SET v = 'u' WHERE id = 2",
        "MERGE INTO w USING (SELECT 3 AS id, 'c' AS v) s ON w.id = s.id WHEN NOT MATCHED THEN INSERT *",
        "DELETE FROM w WHERE id = 3",
    ] {
        other
            .hudi_sql(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .collect()
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let rows = other
        .hudi_sql("SELECT id, v FROM w ORDER BY id")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert_eq!(
        lines(&pretty_format_batches(&rows).unwrap().to_string())[3..5],
        ["| 1  | a |", "| 2  | u |"]
    );
    let cte = other
        .hudi_sql("WITH w AS (SELECT 42 AS id) SELECT id FROM w")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert!(pretty_format_batches(&cte)
        .unwrap()
        .to_string()
        .contains("| 42 |"));
    let shown = text(&later, "SHOW spark.sql.caseSensitive").await;
    assert!(shown.contains("| false "), "{shown}");
    later.hudi_sql("DROP TABLE w").await.unwrap();
    assert!(!wh.join("w").exists());
    let (third, _) = user_session(&wh);
    third.hudi_sql("DROP TABLE IF EXISTS w").await.unwrap();
    let err = third.hudi_sql("DROP TABLE w").await.unwrap_err();
    assert!(err.to_string().contains("not found"), "{err}");
}

/// A warehouse on an object store works as a local one: CREATE TABLE without LOCATION puts
/// the table in a folder of it, a new session finds it there, DROP TABLE deletes its files;
/// a URL no store takes is refused and creates no local folder named after it.
#[tokio::test]
async fn a_warehouse_on_an_object_store_is_a_catalog() {
    let wh = "memory://embed-wh/warehouse";
    let ctx = HoodieContext::new(HoodieConfig::new(wh)).await.unwrap();
    ctx.run("CREATE TABLE t (id INT, v STRING) USING hudi TBLPROPERTIES (primaryKey = 'id')")
        .await
        .unwrap();
    ctx.run("INSERT INTO t VALUES (1, NULL), (2, 'b')")
        .await
        .unwrap();
    ctx.run("UPDATE t SET v = 'a' WHERE id = 1").await.unwrap();
    let store = hoodie_format::location::open_location(&format!("{wh}/t"), &[]).unwrap();
    assert!(store.exists(".hoodie/hoodie.properties").await.unwrap());
    let other = HoodieContext::new(HoodieConfig::new(wh)).await.unwrap();
    let tables = text(other.session(), "SHOW TABLES").await;
    assert!(tables.contains("| t "), "{tables}");
    let rows = text(other.session(), "SELECT id, v FROM t ORDER BY id").await;
    assert!(
        rows.contains("| 1  | a ") && rows.contains("| 2  | b "),
        "{rows}"
    );
    let hoodie_datafusion::StatementOutput::Rows { batches, .. } =
        other.run("DESCRIBE EXTENDED t").await.unwrap()
    else {
        panic!("DESCRIBE returns rows")
    };
    let desc = pretty_format_batches(&batches).unwrap().to_string();
    assert!(desc.contains("MANAGED"), "{desc}");
    assert!(desc.contains("memory://embed-wh/warehouse/t"), "{desc}");
    let err = other.run("ALTER TABLE t RENAME TO u").await.unwrap_err();
    assert!(err.to_string().contains("object-store warehouse"), "{err}");
    other.run("DROP TABLE t").await.unwrap();
    assert!(
        store.list_all("").await.unwrap().is_empty(),
        "DROP deleted the files"
    );
    let third = HoodieContext::new(HoodieConfig::new(wh)).await.unwrap();
    assert!(!text(third.session(), "SHOW TABLES").await.contains("| t "));
    let err = HoodieContext::new(HoodieConfig::new("ftp://host/warehouse"))
        .await
        .err()
        .expect("refused");
    assert!(err.to_string().contains("scheme ftp://"), "{err}");
    assert!(!std::path::Path::new("ftp:").exists());
}
