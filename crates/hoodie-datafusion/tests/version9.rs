//! Writing tables of version 9 (Hudi 1.1 and 1.2) and 8: DML onto the Spark-written version-9
//! fixtures, and tables hoodie creates with `hoodie.write.table.version`. Each commit is a
//! layout-2 instant (`.hoodie/timeline/T_C.<action>`, Avro metadata), each merge-on-read log
//! is named by its deltacommit, and the rows read back as written.

mod common;

use std::path::Path;

use common::fixtures::{extract, open, rows};
use hoodie_datafusion::{HoodieConfig, HoodieContext};

async fn context(tmp: &Path) -> HoodieContext {
    HoodieContext::new(HoodieConfig::new(tmp.join("wh")))
        .await
        .unwrap()
}

/// The completed instants of the table at `base` (names under `.hoodie/timeline/`).
fn completed(base: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(base.join(".hoodie/timeline"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".requested") && !n.ends_with(".inflight") && n.contains('_'))
        .collect();
    names.sort();
    names
}

/// Checks that every completed instant is `T_C.<action>` with `C` after `T`, and that the
/// commit files hold Avro; returns the completed instants added since `before`.
fn new_instants(base: &Path, before: &[String]) -> Vec<String> {
    let now = completed(base);
    for name in &now {
        let (times, action) = name.split_once('.').unwrap();
        let (requested, completion) = times.split_once('_').unwrap();
        assert!(completion > requested, "{name}");
        if ["commit", "deltacommit", "replacecommit"].contains(&action) {
            let bytes = std::fs::read(base.join(".hoodie/timeline").join(name)).unwrap();
            assert!(bytes.starts_with(b"Obj\x01"), "{name} is not Avro");
        }
    }
    assert!(
        !base.join(".hoodie").read_dir().unwrap().any(|e| {
            let n = e.unwrap().file_name().to_string_lossy().into_owned();
            n.ends_with(".commit") || n.ends_with(".deltacommit")
        }),
        "an instant was written outside .hoodie/timeline"
    );
    now.into_iter().filter(|n| !before.contains(n)).collect()
}

async fn ids(ctx: &HoodieContext, sql: &str) -> String {
    rows(ctx, sql).await.unwrap().join(";")
}

#[tokio::test]
async fn dml_on_a_spark_written_version_9_copy_on_write_table() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = context(tmp.path()).await;
    let base = extract(tmp.path(), "sample_table/cow/v9_txns_simple_nometa");
    open(&ctx, "t", &base).await;
    let before = completed(&base);
    ctx.run("UPDATE t SET txn_type = 'refund' WHERE txn_id = 'TXN-001'")
        .await
        .unwrap();
    ctx.run("DELETE FROM t WHERE txn_id = 'TXN-003'")
        .await
        .unwrap();
    // Hudi's MERGE wants the key, partition and ordering columns in the source, by name
    ctx.run(
        "MERGE INTO t USING (SELECT txn_id, region, txn_ts + 1 AS txn_ts, 'merged' AS kind \
         FROM t WHERE txn_id = 'TXN-007' UNION ALL SELECT 'TXN-900', 'eu', 1, 'new') s \
         ON t.txn_id = s.txn_id \
         WHEN MATCHED THEN UPDATE SET txn_type = s.kind, txn_ts = s.txn_ts \
         WHEN NOT MATCHED THEN INSERT (txn_id, account_id, txn_ts, txn_type, region) \
         VALUES (s.txn_id, 'ACC-9', s.txn_ts, s.kind, s.region)",
    )
    .await
    .unwrap();
    let added = new_instants(&base, &before);
    assert_eq!(added.len(), 3, "{added:?}");
    assert!(added.iter().all(|n| n.ends_with(".commit")), "{added:?}");
    assert_eq!(
        ids(
            &ctx,
            "SELECT txn_id, txn_type FROM t WHERE txn_id IN ('TXN-001', 'TXN-003', 'TXN-007', 'TXN-900') ORDER BY txn_id"
        )
        .await,
        "TXN-001,refund;TXN-007,merged;TXN-900,new"
    );
    assert_eq!(
        ids(&ctx, "SELECT count(*) FROM t").await,
        "12",
        "12 rows, one deleted, one inserted"
    );
    // the table is still version 9 and its properties as Spark wrote them
    let props = std::fs::read_to_string(base.join(".hoodie/hoodie.properties")).unwrap();
    assert!(props.contains("hoodie.table.version=9"), "{props}");
}

#[tokio::test]
async fn dml_on_a_spark_written_version_9_merge_on_read_table_then_compaction() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = context(tmp.path()).await;
    let base = extract(tmp.path(), "sample_table/mor/avro/v9_txns_simple_nometa");
    open(&ctx, "m", &base).await;
    let all = "SELECT txn_id, txn_type FROM m ORDER BY txn_id";
    let mut expected: Vec<String> = rows(&ctx, all).await.unwrap();
    let before = completed(&base);
    ctx.run("UPDATE m SET txn_type = 'refund' WHERE txn_id = 'TXN-011'")
        .await
        .unwrap();
    ctx.run("DELETE FROM m WHERE txn_id = 'TXN-012'")
        .await
        .unwrap();
    let added = new_instants(&base, &before);
    assert_eq!(added.len(), 2, "{added:?}");
    assert!(
        added.iter().all(|n| n.ends_with(".deltacommit")),
        "{added:?}"
    );
    // each log is named by the deltacommit that wrote it
    let eu: Vec<String> = std::fs::read_dir(base.join("region=eu"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".log."))
        .collect();
    for instant in &added {
        let requested = instant.split('_').next().unwrap();
        assert!(
            eu.iter()
                .any(|n| n.contains(&format!("_{requested}.log.1_"))),
            "no log of {requested} in {eu:?}"
        );
    }
    for row in expected.iter_mut() {
        if row.starts_with("TXN-011,") {
            *row = "TXN-011,refund".into();
        }
    }
    expected.retain(|r| !r.starts_with("TXN-012,"));
    assert_eq!(rows(&ctx, all).await.unwrap(), expected);
    // two deltacommits since the last compaction: plan it whatever the count
    ctx.run("SET hoodie.compact.inline.max.delta.commits = 1")
        .await
        .unwrap();
    ctx.run("CALL run_compaction(op => 'scheduleandexecute', table => 'm')")
        .await
        .unwrap();
    let compacted = new_instants(&base, &completed(&base));
    assert!(compacted.is_empty());
    assert!(
        completed(&base)
            .iter()
            .filter(|n| !before.contains(n))
            .any(|n| n.ends_with(".commit")),
        "compaction completes as a layout-2 commit"
    );
    assert_eq!(rows(&ctx, all).await.unwrap(), expected);
}

#[tokio::test]
async fn tables_created_as_version_9_and_8_have_spark_s_properties_and_take_every_dml() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = context(tmp.path()).await;
    for (version, kind) in [("9", "cow"), ("9", "mor"), ("8", "mor")] {
        let name = format!("v{version}_{kind}");
        let loc = tmp.path().join(&name);
        ctx.run(&format!(
            "CREATE TABLE {name} (id INT, Name STRING, ts BIGINT, dt STRING) USING hudi \
             PARTITIONED BY (dt) TBLPROPERTIES (type = '{kind}', primaryKey = 'id', \
             preCombineField = 'ts', 'hoodie.write.table.version' = '{version}') \
             LOCATION '{}'",
            loc.display()
        ))
        .await
        .unwrap();
        let props = std::fs::read_to_string(loc.join(".hoodie/hoodie.properties")).unwrap();
        for line in [
            format!("hoodie.table.version={version}"),
            format!("hoodie.table.initial.version={version}"),
            "hoodie.timeline.layout.version=2".into(),
            "hoodie.table.ordering.fields=ts".into(),
            "hoodie.record.merge.mode=EVENT_TIME_ORDERING".into(),
            "hoodie.table.keygenerator.type=SIMPLE".into(),
        ] {
            assert!(
                props.lines().any(|l| l == line),
                "{name}: no {line} in {props}"
            );
        }
        assert!(!props.contains("hoodie.write.table.version"), "{props}");
        assert!(!props.contains("precombine"), "{props}");
        ctx.run(&format!(
            "INSERT INTO {name} VALUES (1, 'a', 1, 'x'), (2, NULL, 1, 'y'), (3, 'c', 1, 'x')"
        ))
        .await
        .unwrap();
        ctx.run(&format!(
            "UPDATE {name} SET Name = 'b', ts = 2 WHERE id = 2"
        ))
        .await
        .unwrap();
        ctx.run(&format!("DELETE FROM {name} WHERE id = 3"))
            .await
            .unwrap();
        ctx.run(&format!(
            "MERGE INTO {name} t USING (SELECT 1 AS id, 'late' AS n, CAST(0 AS BIGINT) AS ts, \
             'x' AS dt UNION ALL SELECT 4, 'd', 5, 'y') s ON t.id = s.id \
             WHEN MATCHED THEN UPDATE SET Name = s.n, ts = s.ts \
             WHEN NOT MATCHED THEN INSERT (id, Name, ts, dt) VALUES (s.id, s.n, s.ts, s.dt)"
        ))
        .await
        .unwrap();
        ctx.run(&format!(
            "INSERT OVERWRITE {name} PARTITION (dt = 'x') SELECT 5, 'e', 1"
        ))
        .await
        .unwrap();
        assert_eq!(
            ids(
                &ctx,
                &format!("SELECT id, Name, ts, dt FROM {name} ORDER BY id")
            )
            .await,
            // the MERGE's update of id 1 has a lower ordering value and loses; id 1 then goes
            // with the overwrite of dt = 'x'
            "2,b,2,y;4,d,5,y;5,e,1,x",
            "{name}"
        );
        let added = new_instants(&loc, &[]);
        let write = if kind == "cow" {
            ".commit"
        } else {
            ".deltacommit"
        };
        assert_eq!(
            added.iter().filter(|n| n.ends_with(write)).count(),
            4,
            "{name}: {added:?}"
        );
        assert_eq!(
            added
                .iter()
                .filter(|n| n.ends_with(".replacecommit"))
                .count(),
            1,
            "{name}: {added:?}"
        );
    }
}

#[tokio::test]
async fn a_version_9_table_is_cleaned_and_rolls_back_a_failed_write() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = context(tmp.path()).await;
    let loc = tmp.path().join("c");
    ctx.run(&format!(
        "CREATE TABLE c (id INT, v INT) USING hudi TBLPROPERTIES (primaryKey = 'id', \
         'hoodie.write.table.version' = '9', 'hoodie.cleaner.commits.retained' = '1', \
         'hoodie.clean.max.commits' = '1') LOCATION '{}'",
        loc.display()
    ))
    .await
    .unwrap();
    ctx.run("INSERT INTO c VALUES (1, 0)").await.unwrap();
    for v in 1..=4 {
        ctx.run(&format!("UPDATE c SET v = {v}")).await.unwrap();
    }
    let names = new_instants(&loc, &[]);
    assert!(
        names.iter().any(|n| n.ends_with(".clean")),
        "a clean ran: {names:?}"
    );
    let parquet = std::fs::read_dir(&loc)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".parquet")
        })
        .count();
    assert!(
        parquet <= 2,
        "the clean deleted old file versions: {parquet} left"
    );
    // a write that never completed: its requested and inflight instants and a data file
    let failed = "20200101000000000";
    let timeline = loc.join(".hoodie/timeline");
    std::fs::write(timeline.join(format!("{failed}.commit.requested")), b"").unwrap();
    std::fs::write(timeline.join(format!("{failed}.inflight")), b"").unwrap();
    let stray = loc.join(format!(
        "00000000-aaaa-0000-0000-000000000000-0_0-1-1_{failed}.parquet"
    ));
    std::fs::copy(
        std::fs::read_dir(&loc)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "parquet"))
            .unwrap(),
        &stray,
    )
    .unwrap();
    assert_eq!(ids(&ctx, "SELECT id, v FROM c").await, "1,4");
    ctx.run("INSERT INTO c VALUES (2, 1)").await.unwrap();
    assert!(!stray.exists(), "the next write rolled the failed one back");
    let names = new_instants(&loc, &names);
    assert!(
        names.iter().any(|n| n.ends_with(".rollback")),
        "a rollback instant: {names:?}"
    );
    assert!(!timeline.join(format!("{failed}.inflight")).exists());
    assert_eq!(
        ids(&ctx, "SELECT id, v FROM c ORDER BY id").await,
        "1,4;2,1"
    );
    // archival on demand moves the oldest commits into the LSM history; the rows stay
    ctx.run("CALL archive_commits(table => 'c', min_commits => 1, max_commits => 2)")
        .await
        .unwrap();
    let history = loc.join(".hoodie/timeline/history");
    assert!(history.join("_version_").exists());
    assert!(history.join("manifest_1").exists());
    assert_eq!(
        ids(&ctx, "SELECT id, v FROM c ORDER BY id").await,
        "1,4;2,1"
    );
}

#[tokio::test]
async fn a_table_of_version_10_is_refused_with_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = context(tmp.path()).await;
    let base = extract(tmp.path(), "sample_table/cow/v9_txns_simple_nometa");
    let props = base.join(".hoodie/hoodie.properties");
    let text = std::fs::read_to_string(&props)
        .unwrap()
        .replace("hoodie.table.version=9", "hoodie.table.version=10");
    std::fs::write(&props, text).unwrap();
    let err = ctx
        .run(&format!(
            "CREATE EXTERNAL TABLE t STORED AS HUDI LOCATION '{}'",
            base.display()
        ))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("table version 10") && err.contains("downgrade"),
        "{err}"
    );
}

/// A window whose files the cleaner deleted: version 6 fails, as Hudi 0.x's reader does;
/// version 9 reads the slices as of the window's end that are left, as Hudi 1.x's does.
#[tokio::test]
async fn a_cleaned_window_fails_on_version_6_and_reads_what_is_left_on_9() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = context(tmp.path()).await;
    for version in [6, 9] {
        let name = format!("w{version}");
        ctx.run(&format!(
            "CREATE TABLE {name} (id INT, v INT) USING hudi TBLPROPERTIES (primaryKey = 'id', \
             'hoodie.write.table.version' = '{version}', 'hoodie.cleaner.commits.retained' = '1') \
             LOCATION '{}'",
            tmp.path().join(&name).display()
        ))
        .await
        .unwrap();
        ctx.run(&format!("INSERT INTO {name} VALUES (1, 0)"))
            .await
            .unwrap();
        for v in 1..=3 {
            ctx.run(&format!("UPDATE {name} SET v = {v}"))
                .await
                .unwrap();
        }
        let end = rows(
            &ctx,
            &format!("SELECT min(_hoodie_commit_time) FROM {name}"),
        )
        .await
        .unwrap();
        // the first commit's time: its file was cleaned long ago
        let first = std::fs::read_dir(tmp.path().join(&name).join(if version == 9 {
            ".hoodie/timeline"
        } else {
            ".hoodie"
        }))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".commit"))
        .min()
        .unwrap();
        let bound = first
            .split('.')
            .next()
            .unwrap()
            .rsplit('_')
            .next()
            .unwrap()
            .to_string();
        let read = rows(
            &ctx,
            &format!("SELECT id, v FROM hudi_table_changes('{name}', 'latest_state', 'earliest', '{bound}')"),
        )
        .await;
        match version {
            6 => assert!(
                read.unwrap_err().contains("cleaner has since deleted"),
                "{end:?}"
            ),
            _ => assert_eq!(read.unwrap(), Vec::<String>::new()),
        }
    }
}
