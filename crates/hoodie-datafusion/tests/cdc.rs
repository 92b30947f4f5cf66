//! CDC on disk, as Hudi 1.2 writes it: a rewrite of an existing file group writes one `.cdc`
//! log (`.<fileId>_<instant>.log.1_<token>.cdc`, CDC_DATA blocks with the instant and the
//! mode's schema in their headers) named with its size in the write stat's `cdcStats`; new file
//! groups, emptied ones and merge-on-read log appends get none. A CDC read of one commit plans
//! only the file groups it wrote.

mod common;

use std::path::Path;

use hoodie_datafusion::{HoodieConfig, HoodieContext};
use hoodie_format::inspect::{header, parse_blocks, BlockType};

async fn ctx(tmp: &Path) -> HoodieContext {
    HoodieContext::new(HoodieConfig::new(tmp.join("wh")))
        .await
        .unwrap()
}

/// Files under `dir` ending in `suffix`, relative to it.
fn files(dir: &Path, suffix: &str) -> Vec<String> {
    common::files_under(dir)
        .into_iter()
        .filter(|f| f.ends_with(suffix))
        .collect()
}

/// The completed commit file of the latest write, parsed.
fn last_commit(table: &Path) -> serde_json::Value {
    let mut commits: Vec<String> = std::fs::read_dir(table.join(".hoodie"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| {
            n.ends_with(".commit") || n.ends_with(".deltacommit") || n.ends_with(".replacecommit")
        })
        .collect();
    commits.sort();
    let text =
        std::fs::read_to_string(table.join(".hoodie").join(commits.last().unwrap())).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn stats(commit: &serde_json::Value) -> Vec<serde_json::Value> {
    commit["partitionToWriteStats"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|v| v.as_array().unwrap().clone())
        .collect()
}

#[tokio::test]
async fn a_rewrite_logs_its_changes_beside_the_new_base_file() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = ctx(tmp.path()).await;
    let t = tmp.path().join("wh").join("t");
    ctx.run("CREATE TABLE t (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id', 'hoodie.table.cdc.enabled' = 'true', 'hoodie.write.table.version' = '6')")
        .await
        .unwrap();
    let props = std::fs::read_to_string(t.join(".hoodie/hoodie.properties")).unwrap();
    assert!(props.contains("hoodie.table.cdc.enabled=true"), "{props}");
    assert!(
        props.contains("hoodie.table.cdc.supplemental.logging.mode=DATA_BEFORE_AFTER"),
        "{props}"
    );
    // new file groups: no log, no cdcStats
    ctx.run("INSERT INTO t VALUES (1, 'a', 'x'), (2, 'b', 'x'), (3, 'c', 'y')")
        .await
        .unwrap();
    assert!(files(&t, ".cdc").is_empty());
    assert!(stats(&last_commit(&t))
        .iter()
        .all(|s| s["cdcStats"].is_null()));

    ctx.run("UPDATE t SET v = 'b2' WHERE id = 2").await.unwrap();
    let commit = last_commit(&t);
    let cdc = files(&t, ".cdc");
    assert_eq!(cdc.len(), 1, "{cdc:?}");
    let stat = stats(&commit)
        .into_iter()
        .find(|s| !s["cdcStats"].is_null())
        .unwrap();
    let logged = stat["cdcStats"].as_object().unwrap();
    assert_eq!(logged.len(), 1);
    let (path, size) = logged.iter().next().unwrap();
    assert_eq!(path, &cdc[0]);
    let bytes = std::fs::read(t.join(path)).unwrap();
    assert_eq!(size.as_i64().unwrap(), bytes.len() as i64);
    // `.<fileId>_<instant>.log.1_<token>.cdc`, the file id and instant of the new base file
    let file_id = stat["fileId"].as_str().unwrap();
    let base = stat["path"].as_str().unwrap();
    let instant = base
        .rsplit('_')
        .next()
        .unwrap()
        .trim_end_matches(".parquet");
    let name = path.rsplit('/').next().unwrap();
    assert!(
        name.starts_with(&format!(".{file_id}_{instant}.log.1_")),
        "{name}"
    );
    let blocks = parse_blocks(&bytes.into(), path).unwrap();
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0].block_type, BlockType::CdcData);
    assert_eq!(blocks[0].header(header::INSTANT_TIME), Some(instant));
    let schema: serde_json::Value =
        serde_json::from_str(blocks[0].header(header::SCHEMA).unwrap()).unwrap();
    assert_eq!(schema["name"], "CDC");
    let fields: Vec<&str> = schema["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["op", "ts_ms", "before", "after"]);

    // a file group every record of which is deleted: no log (the reader infers the deletes)
    ctx.run("DELETE FROM t WHERE dt = 'y'").await.unwrap();
    assert_eq!(files(&t, ".cdc").len(), 1);
    assert!(stats(&last_commit(&t))
        .iter()
        .all(|s| s["cdcStats"].is_null()));
    assert_eq!(
        common::count(
            &ctx,
            "SELECT count(*) FROM hudi_table_changes('t', 'cdc', 'earliest') WHERE op = 'd' AND before LIKE '%\"id\":3%'"
        )
        .await,
        1
    );
}

#[tokio::test]
async fn merge_on_read_log_appends_write_no_cdc_log() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = ctx(tmp.path()).await;
    let t = tmp.path().join("wh").join("m");
    ctx.run("CREATE TABLE m (id INT, v STRING) USING hudi TBLPROPERTIES (type = 'mor', primaryKey = 'id', 'hoodie.table.cdc.enabled' = 'true', 'hoodie.table.cdc.supplemental.logging.mode' = 'op_key_only')")
        .await
        .unwrap();
    ctx.run("INSERT INTO m VALUES (1, 'a'), (2, 'b')")
        .await
        .unwrap();
    ctx.run("UPDATE m SET v = 'a2' WHERE id = 1").await.unwrap();
    ctx.run("DELETE FROM m WHERE id = 2").await.unwrap();
    assert_eq!(files(&t, ".cdc"), Vec::<String>::new());
    assert_eq!(files(&t, ".parquet").len(), 1);
    let logs: Vec<String> = files(&t, "")
        .into_iter()
        .filter(|f| f.contains(".log."))
        .collect();
    assert_eq!(logs.len(), 2, "{logs:?}");
    let got = common::text(
        &ctx,
        "SELECT op, before, after FROM hudi_table_changes('m', 'cdc', 'earliest') WHERE op <> 'i' ORDER BY op",
    )
    .await;
    assert!(got.contains(r#"| d  | {"id":2,"v":"b"} |"#), "{got}");
    assert!(
        got.contains(r#"| u  | {"id":1,"v":"a"} | {"id":1,"v":"a2"} |"#),
        "{got}"
    );
}

#[tokio::test]
async fn a_cdc_read_of_one_commit_plans_the_file_groups_it_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = ctx(tmp.path()).await;
    ctx.run("CREATE TABLE p (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id', 'hoodie.table.cdc.enabled' = 'true', 'hoodie.write.table.version' = '6')")
        .await
        .unwrap();
    ctx.run("INSERT INTO p VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'z')")
        .await
        .unwrap();
    let first = common::text(&ctx, "SELECT max(_hoodie_commit_time) AS t FROM p").await;
    let first = first
        .lines()
        .nth(3)
        .unwrap()
        .trim_matches(|c| c == '|' || c == ' ')
        .to_string();
    ctx.run("UPDATE p SET v = 'b2' WHERE id = 2").await.unwrap();
    let plan = common::text(
        &ctx,
        &format!("EXPLAIN ANALYZE SELECT count(*) FROM hudi_table_changes('p', 'cdc', '{first}')"),
    )
    .await;
    assert!(plan.contains("CdcExec: splits=1, file_groups=1"), "{plan}");
    assert!(plan.contains("splits_read=1"), "{plan}");
    let all = common::text(
        &ctx,
        "EXPLAIN SELECT count(*) FROM hudi_table_changes('p', 'cdc', 'earliest')",
    )
    .await;
    assert!(all.contains("CdcExec: splits=4, file_groups=3"), "{all}");
}

#[tokio::test]
async fn a_log_after_a_cdc_log_takes_the_next_version() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = ctx(tmp.path()).await;
    let t = tmp.path().join("wh").join("f");
    ctx.run("CREATE TABLE f (id INT, v STRING, ts BIGINT) USING hudi TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', type = 'mor', primaryKey = 'id', preCombineField = 'ts', 'hoodie.table.cdc.enabled' = 'true', 'hoodie.write.table.version' = '6')")
        .await
        .unwrap();
    ctx.run("INSERT INTO f VALUES (1, 'a', 1)").await.unwrap();
    // a new key fills the small base-only file group: a rewrite, with its .cdc log (version 1)
    ctx.run("INSERT INTO f VALUES (2, 'b', 1)").await.unwrap();
    ctx.run("UPDATE f SET v = 'a2' WHERE id = 1").await.unwrap();
    let cdc = files(&t, ".cdc");
    assert_eq!(cdc.len(), 1, "{cdc:?}");
    assert!(cdc[0].contains(".log.1_"), "{cdc:?}");
    let logs: Vec<String> = files(&t, "")
        .into_iter()
        .filter(|f| f.contains(".log.") && !f.ends_with(".cdc"))
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    assert!(logs[0].contains(".log.2_"), "{logs:?}");
    assert_eq!(
        common::count(&ctx, "SELECT count(*) FROM f WHERE v = 'a2'").await,
        1
    );
}
