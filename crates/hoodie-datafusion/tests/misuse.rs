//! What a user's mistakes and accidents do: names that are not one folder, a damaged
//! `hoodie.properties`, a data file deleted or damaged, one broken table among good ones. Each
//! is refused with a message that says what is wrong and what to do, and nothing is lost.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::failing::FailingStore;
use common::{cells, files_under};
use hoodie_datafusion::{HoodieConfig, HoodieContext};
use hoodie_format::storage::TableStorage;
use hoodie_format::HudiTable;

async fn session(wh: &Path) -> HoodieContext {
    HoodieContext::new(HoodieConfig::new(wh)).await.unwrap()
}

async fn error(ctx: &HoodieContext, sql: &str) -> String {
    match ctx.run(sql).await {
        Ok(_) => panic!("{sql} succeeded"),
        Err(e) => e.to_string(),
    }
}

#[tokio::test]
async fn a_name_that_is_not_one_folder_is_refused_and_drop_never_deletes_the_warehouse() {
    let tmp = tempfile::tempdir().unwrap();
    let wh = tmp.path().join("wh");
    let ctx = session(&wh).await;
    ctx.run("CREATE TABLE keep (id INT) USING hudi")
        .await
        .unwrap();
    ctx.run("INSERT INTO keep VALUES (1)").await.unwrap();
    for name in [
        r#""""#,
        r#"".""#,
        r#""..""#,
        r#""a/b""#,
        r#""a\b""#,
        "\"tab\tname\"",
    ] {
        let err = error(&ctx, &format!("CREATE TABLE {name} (id INT) USING hudi")).await;
        assert!(err.contains("is not a valid table name"), "{name}: {err}");
        let err = error(
            &ctx,
            &format!("CREATE TABLE {name} USING hudi AS SELECT 1 AS id"),
        )
        .await;
        assert!(err.contains("is not a valid table name"), "{name}: {err}");
        let err = error(&ctx, &format!("ALTER TABLE keep RENAME TO {name}")).await;
        assert!(err.contains("is not a valid table name"), "{name}: {err}");
        // DROP of such a name finds no table: nothing is deleted
        assert!(ctx.run(&format!("DROP TABLE {name} PURGE")).await.is_err());
    }
    let err = error(&ctx, r#"CREATE TABLE "x/y".t (id INT) USING hudi"#).await;
    assert!(err.contains("is not a valid database name"), "{err}");
    let err = error(&ctx, "CREATE TABLE other.t (id INT) USING hudi").await;
    assert!(err.contains("database other does not exist"), "{err}");
    // the warehouse's own database name is the warehouse
    ctx.run("CREATE TABLE default.d (id INT) USING hudi")
        .await
        .unwrap();
    assert!(wh.join("d/.hoodie/hoodie.properties").is_file());
    // a LOCATION that is the warehouse or above it
    for location in [wh.clone(), tmp.path().to_path_buf()] {
        let sql = format!(
            "CREATE TABLE e (id INT) USING hudi LOCATION '{}'",
            location.display()
        );
        let err = error(&ctx, &sql).await;
        assert!(err.contains("is the warehouse"), "{err}");
        let sql = format!(
            "CREATE EXTERNAL TABLE e (id INT) STORED AS HUDI LOCATION '{}'",
            location.display()
        );
        let err = error(&ctx, &sql).await;
        assert!(err.contains("is the warehouse"), "{err}");
    }
    assert!(!wh.join(".hoodie").exists(), "the warehouse is no table");
    assert!(!tmp.path().join(".hoodie").exists());
    // the warehouse and its tables are intact
    assert_eq!(cells(&ctx, "SELECT id FROM keep").await, vec![vec!["1"]]);
    // a managed table's DROP says what it deleted
    ctx.run("DROP TABLE d").await.unwrap();
    let warnings = ctx.take_warnings();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("deleted the table's folder")
                && w.contains(&wh.join("d").display().to_string())),
        "{warnings:?}"
    );
    assert!(!wh.join("d").exists() && wh.join("keep").is_dir());
}

/// Every prefix of a table's `hoodie.properties` short of the whole file.
fn cut_points(text: &str) -> Vec<usize> {
    text.char_indices()
        .filter(|(_, c)| *c == '\n')
        .map(|(i, _)| i + 1)
        .filter(|i| *i < text.len())
        .chain([0, text.len() - 2])
        .collect()
}

#[tokio::test]
async fn a_damaged_hoodie_properties_is_refused_or_read_from_its_backup() {
    let tmp = tempfile::tempdir().unwrap();
    let wh = tmp.path().join("wh");
    let ctx = session(&wh).await;
    ctx.run("CREATE TABLE good (id INT) USING hudi")
        .await
        .unwrap();
    ctx.run("INSERT INTO good VALUES (7)").await.unwrap();
    ctx.run(
        "CREATE TABLE t (id INT, v STRING, ts INT) USING hudi \
         TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')",
    )
    .await
    .unwrap();
    ctx.run("INSERT INTO t VALUES (1, 'a', 1)").await.unwrap();
    let props = wh.join("t/.hoodie/hoodie.properties");
    let backup = wh.join("t/.hoodie/hoodie.properties.backup");
    let whole = std::fs::read_to_string(&props).unwrap();
    for cut in cut_points(&whole) {
        std::fs::write(&props, &whole[..cut]).unwrap();
        // a new session: nothing cached
        let ctx = session(&wh).await;
        for sql in [
            "SELECT * FROM t",
            "INSERT INTO t VALUES (1, 'dup', 2)",
            "DROP TABLE t",
        ] {
            let err = error(&ctx, sql).await;
            assert!(
                err.contains("cannot be opened")
                    && err.contains(&wh.join("t").display().to_string())
                    && err.contains("restore .hoodie/hoodie.properties"),
                "cut at {cut}, {sql}: {err}"
            );
        }
        // the other tables are listed and read; the broken one is listed and named
        let listed = cells(&ctx, "SHOW TABLES").await;
        for name in ["good", "t"] {
            assert!(listed.iter().any(|r| r[2] == name), "{listed:?}");
        }
        let warnings = ctx.take_warnings();
        assert!(
            warnings
                .iter()
                .any(|w| w.starts_with("table t cannot be opened")),
            "{warnings:?}"
        );
        assert_eq!(cells(&ctx, "SELECT id FROM good").await, vec![vec!["7"]]);
        // with the backup an update leaves, the table reads as it was
        std::fs::write(&backup, &whole).unwrap();
        let ctx = session(&wh).await;
        assert_eq!(
            cells(&ctx, "SELECT id, v FROM t").await,
            vec![vec!["1", "a"]]
        );
        std::fs::remove_file(&backup).unwrap();
    }
    // a checksum that is not the table name's
    let renamed = whole.replace("hoodie.table.name=t", "hoodie.table.name=u");
    std::fs::write(&props, renamed).unwrap();
    let err = error(&session(&wh).await, "SELECT * FROM t").await;
    assert!(err.contains("hoodie.table.checksum"), "{err}");
    // put back, the table is as it was: the refused INSERTs wrote nothing
    std::fs::write(&props, &whole).unwrap();
    let ctx = session(&wh).await;
    assert_eq!(
        cells(&ctx, "SELECT id, v FROM t").await,
        vec![vec!["1", "a"]]
    );
}

#[tokio::test]
async fn a_properties_update_stopped_at_any_step_leaves_a_readable_table() {
    let tmp = tempfile::tempdir().unwrap();
    let wh = tmp.path().join("wh");
    let ctx = session(&wh).await;
    ctx.run(
        "CREATE TABLE t (id INT, ts INT) USING hudi \
         TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')",
    )
    .await
    .unwrap();
    ctx.run("INSERT INTO t VALUES (1, 1)").await.unwrap();
    let loc = wh.join("t");
    let mut finished = false;
    let mut current: Option<String> = None;
    for n in 1..20 {
        let storage = TableStorage::local(&loc).unwrap();
        let store = Arc::new(FailingStore::with_deletes(storage.store().clone(), n));
        let mut table = HudiTable::open(storage.with_store(store)).await.unwrap();
        let mut config = table.config().clone();
        config.set("hoodie.cleaner.commits.retained", n.to_string());
        let result = table.update_config(config).await;
        // whatever step failed, a reader finds the old settings or the new ones
        let read = HudiTable::open(TableStorage::local(&loc).unwrap())
            .await
            .unwrap_or_else(|e| panic!("after failing at write {n}: {e}"));
        let retained = read
            .config()
            .properties()
            .get("hoodie.cleaner.commits.retained")
            .map(str::to_string);
        match result {
            Ok(()) => {
                assert_eq!(retained, Some(n.to_string()));
                finished = true;
                break;
            }
            Err(e) => {
                assert!(e.to_string().contains("injected failure"), "{n}: {e}");
                // the step that failed came before the new file was whole (the old
                // settings), or after (the new ones, the backup left for the next update)
                assert!(
                    retained == current || retained == Some(n.to_string()),
                    "{n}: {retained:?}"
                );
            }
        }
        current = retained;
        assert_eq!(
            cells(&session(&wh).await, "SELECT id FROM t").await,
            vec![vec!["1"]]
        );
    }
    assert!(finished, "an update takes fewer than 20 writes");
    assert!(!loc.join(".hoodie/hoodie.properties.backup").exists());
}

/// The newest file of `dir` whose name passes `pick`.
fn newest(dir: &Path, pick: impl Fn(&str) -> bool) -> std::path::PathBuf {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| pick(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect();
    files.sort_by_key(|p| std::fs::metadata(p).unwrap().modified().unwrap());
    files.pop().unwrap()
}

/// A table `t` of `kind` with two versions of key 1: its latest file (a base file, or a log
/// file on merge-on-read) was written by the UPDATE.
async fn two_versions(wh: &Path, kind: &str) -> HoodieContext {
    let ctx = session(wh).await;
    ctx.run(&format!(
        "CREATE TABLE t (id INT, v STRING, ts INT) USING hudi \
         TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = '{kind}')"
    ))
    .await
    .unwrap();
    ctx.run("INSERT INTO t VALUES (1, 'old', 1), (2, 'b', 1)")
        .await
        .unwrap();
    ctx.run("UPDATE t SET v = 'new' WHERE id = 1")
        .await
        .unwrap();
    ctx
}

#[tokio::test]
async fn a_deleted_or_damaged_data_file_is_an_error_never_the_previous_rows() {
    for (kind, log) in [("cow", false), ("mor", true)] {
        for damage in ["delete", "truncate"] {
            let tmp = tempfile::tempdir().unwrap();
            let wh = tmp.path().join("wh");
            two_versions(&wh, kind).await;
            let loc = wh.join("t");
            let file = if log {
                newest(&loc, |n| n.starts_with('.') && n.contains(".log."))
            } else {
                newest(&loc, |n| n.ends_with(".parquet"))
            };
            match damage {
                "delete" => std::fs::remove_file(&file).unwrap(),
                _ => {
                    let bytes = std::fs::read(&file).unwrap();
                    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
                }
            }
            let before = files_under(&loc);
            let ctx = session(&wh).await;
            let name = file.file_name().unwrap().to_string_lossy().to_string();
            for sql in [
                "SELECT id, v FROM t",
                "INSERT INTO t VALUES (3, 'c', 1)",
                "UPDATE t SET v = 'x' WHERE id = 2",
                "DELETE FROM t WHERE id = 2",
                "MERGE INTO t USING (SELECT 2 AS id, 'm' AS v, 2 AS ts) s ON t.id = s.id \
                 WHEN MATCHED THEN UPDATE SET *",
                "CALL run_clean(table => 't', retain_commits => 1)",
            ] {
                let err = error(&ctx, sql).await;
                assert!(
                    err.contains(&name)
                        && err.contains(if damage == "delete" {
                            "is missing"
                        } else {
                            "is damaged"
                        })
                        && err.contains("rollback_to_instant"),
                    "{kind} {damage} {sql}: {err}"
                );
            }
            // no write started
            assert_eq!(files_under(&loc), before, "{kind} {damage}");
            // the timeline still shows, and rolling back the commit that wrote the file
            // gives the table as it was before it
            let commits = cells(&ctx, "CALL show_commits(table => 't')").await;
            let latest = &commits[0][0];
            ctx.run(&format!(
                "CALL rollback_to_instant(table => 't', instant_time => '{latest}')"
            ))
            .await
            .unwrap();
            let rows = cells(&session(&wh).await, "SELECT id, v FROM t ORDER BY id").await;
            assert_eq!(
                rows,
                vec![vec!["1", "old"], vec!["2", "b"]],
                "{kind} {damage}"
            );
        }
    }
}

/// A plain INSERT reads nothing of the table, so it lists only the partitions it adds to:
/// into a partition that lost a file it is refused before it starts; into another one it
/// writes, and the table stays an error to read.
#[tokio::test]
async fn a_plain_insert_into_a_partition_that_lost_a_file_does_not_start() {
    for kind in ["cow", "mor"] {
        let tmp = tempfile::tempdir().unwrap();
        let wh = tmp.path().join("wh");
        let ctx = session(&wh).await;
        ctx.run(&format!(
            "CREATE TABLE t (id INT, v STRING, P STRING) USING hudi PARTITIONED BY (P) \
             TBLPROPERTIES (primaryKey = 'id', type = '{kind}')"
        ))
        .await
        .unwrap();
        ctx.run("INSERT INTO t VALUES (1, 'a1', 'a'), (2, 'b1', 'b')")
            .await
            .unwrap();
        let part = wh.join("t").join("P=a");
        std::fs::remove_file(newest(&part, |n| n.ends_with(".parquet"))).unwrap();
        let before = files_under(&wh.join("t"));
        let ctx = session(&wh).await;
        let err = error(&ctx, "INSERT INTO t VALUES (3, 'a3', 'a')").await;
        assert!(
            err.contains("P=a/") && err.contains("is missing"),
            "{kind}: {err}"
        );
        assert_eq!(
            files_under(&wh.join("t")),
            before,
            "{kind}: a write started"
        );
        ctx.run("INSERT INTO t VALUES (4, 'b4', 'b')")
            .await
            .unwrap();
        assert_eq!(
            cells(&ctx, "CALL show_commits(table => 't')").await.len(),
            2,
            "{kind}"
        );
        // a read lists the whole table, so even one of the good partition is refused
        let err = error(&ctx, "SELECT id FROM t WHERE P = 'b'").await;
        assert!(err.contains("is missing"), "{kind}: {err}");
    }
}

#[tokio::test]
async fn a_damaged_footer_names_the_file_and_how_to_recover() {
    let tmp = tempfile::tempdir().unwrap();
    let wh = tmp.path().join("wh");
    two_versions(&wh, "cow").await;
    let file = newest(&wh.join("t"), |n| n.ends_with(".parquet"));
    // the same size, its footer overwritten: only reading it finds the damage
    let mut bytes = std::fs::read(&file).unwrap();
    let n = bytes.len();
    bytes[n - 12..n - 4].copy_from_slice(b"XXXXXXXX");
    std::fs::write(&file, bytes).unwrap();
    let err = error(&session(&wh).await, "SELECT id, v FROM t").await;
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    assert!(
        err.contains(&format!("cannot read {name}"))
            && err.contains("the file is damaged")
            && !err.contains("Parquet error: Parquet error"),
        "{err}"
    );
}

#[tokio::test]
async fn a_table_created_without_using_in_the_warehouse_is_a_hudi_table_that_stays() {
    let tmp = tempfile::tempdir().unwrap();
    let wh = tmp.path().join("wh");
    let ctx = session(&wh).await;
    ctx.run("CREATE TABLE kept (id INT, v STRING)")
        .await
        .unwrap();
    ctx.run("INSERT INTO kept VALUES (1, 'a')").await.unwrap();
    ctx.run("CREATE TABLE kept_too AS SELECT 2 AS id")
        .await
        .unwrap();
    // DataFusion's in-memory tables stay where DataFusion keeps them
    ctx.run("CREATE TABLE datafusion.public.scratch (id INT)")
        .await
        .unwrap();
    assert!(!wh.join("scratch").exists());
    drop(ctx);
    let ctx = session(&wh).await;
    assert_eq!(
        cells(&ctx, "SELECT id, v FROM kept").await,
        vec![vec!["1", "a"]]
    );
    assert_eq!(
        cells(&ctx, "SELECT id FROM kept_too").await,
        vec![vec!["2"]]
    );
    assert!(wh.join("kept/.hoodie/hoodie.properties").is_file());
}

#[tokio::test]
async fn a_value_of_the_wrong_type_names_its_column_and_bad_sets_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = session(&tmp.path().join("wh")).await;
    ctx.run("CREATE TABLE t (id INT, ts INT) USING hudi TBLPROPERTIES (primaryKey = 'id')")
        .await
        .unwrap();
    for sql in [
        "INSERT INTO t VALUES ('x', 1)",
        "INSERT INTO t (ts, id) VALUES (1, 'x')",
        "INSERT INTO t SELECT 'x', 1",
        "INSERT INTO t SELECT s, 1 FROM (SELECT 'x' AS s)",
    ] {
        let err = error(&ctx, sql).await;
        assert!(
            err.starts_with("cannot write x into column id of t (Int32)")
                && !err.contains("Optimizer rule"),
            "{sql}: {err}"
        );
    }
    // values computed row by row name the column at run time
    ctx.run("CREATE TABLE datafusion.public.src AS VALUES ('1', 1), ('x', 2)")
        .await
        .unwrap();
    ctx.run("INSERT INTO t VALUES (1, 1)").await.unwrap();
    for sql in [
        "INSERT INTO t SELECT column1, column2 FROM datafusion.public.src",
        "UPDATE t SET ts = (SELECT max(column1) FROM datafusion.public.src) WHERE id = 1",
        "UPDATE t SET ts = concat('x', id) WHERE id = 1",
        "MERGE INTO t USING (SELECT 1 AS id, column1 AS ts FROM datafusion.public.src \
         WHERE column1 = 'x') s ON t.id = s.id WHEN MATCHED THEN UPDATE SET ts = s.ts",
        "MERGE INTO t USING (SELECT 5 AS id) s ON t.id = s.id \
         WHEN NOT MATCHED THEN INSERT (id, ts) VALUES (s.id, 'x')",
    ] {
        let err = error(&ctx, sql).await;
        assert!(
            err.starts_with("cannot write a value into column ")
                && err.contains("Cannot cast string 'x"),
            "{sql}: {err}"
        );
    }
    let err = error(&ctx, "SET hoodie.index.type = 'NOPE'").await;
    assert!(
        err.contains(r#"invalid value "NOPE" for hoodie.index.type: expected one of SIMPLE"#),
        "{err}"
    );
    let err = error(&ctx, "SET hoodie.index.type = 'RECORD_INDEX'").await;
    assert!(err.contains("hoodie does not write with it yet"), "{err}");
    // a parse error has one prefix and says where
    let err = error(&ctx, "SELEC 1").await;
    assert!(
        err.starts_with("SQL parse error: Expected") && err.contains("Line: 1, Column: 1"),
        "{err}"
    );
    // nothing but the one good row was written
    assert_eq!(
        cells(&ctx, "SELECT id, ts FROM t").await,
        vec![vec!["1", "1"]]
    );
}

#[tokio::test]
async fn a_duplicate_policy_a_bulk_insert_ignores_is_a_warning_at_the_set_and_the_insert() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = session(&tmp.path().join("wh")).await;
    ctx.run("CREATE TABLE t (id INT, ts INT) USING hudi TBLPROPERTIES (primaryKey = 'id')")
        .await
        .unwrap();
    ctx.run("INSERT INTO t VALUES (1, 1)").await.unwrap();
    ctx.run("SET hoodie.datasource.write.operation = 'bulk_insert'")
        .await
        .unwrap();
    assert!(ctx.take_warnings().is_empty());
    ctx.run("SET hoodie.datasource.insert.dup.policy = 'fail'")
        .await
        .unwrap();
    let warnings = ctx.take_warnings();
    assert!(
        warnings.len() == 1 && warnings[0].contains("will have no effect"),
        "{warnings:?}"
    );
    // the INSERT runs as Hudi runs it (the duplicate is written), and says the policy went unused
    ctx.run("INSERT INTO t VALUES (1, 2)").await.unwrap();
    let warnings = ctx.take_warnings();
    assert!(
        warnings.len() == 1
            && warnings[0].contains("has no effect on this INSERT: it runs as bulk_insert"),
        "{warnings:?}"
    );
    assert_eq!(cells(&ctx, "SELECT count(*) FROM t").await, vec![vec!["2"]]);
    // under the insert operation the policy applies, and nothing is said
    ctx.run("RESET hoodie.datasource.write.operation")
        .await
        .unwrap();
    assert!(ctx.run("INSERT INTO t VALUES (1, 3)").await.is_err());
    assert!(ctx.take_warnings().is_empty());
}

/// A table with Hudi's metadata table (as Spark makes one by default): hoodie keeps none, so a
/// write or a table service is refused while `hoodie.metadata.enable` is true (Hudi's default)
/// and nothing changes; with false, hoodie removes the metadata table and its property first,
/// as a Hudi writer with metadata disabled does, and writes.
#[tokio::test]
async fn a_metadata_table_is_refused_by_default_and_removed_when_disabled() {
    let tmp = tempfile::tempdir().unwrap();
    let wh = tmp.path().join("wh");
    let ctx = session(&wh).await;
    ctx.run("CREATE TABLE m (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id')")
        .await
        .unwrap();
    ctx.run("INSERT INTO m VALUES (1, 'a', 'x'), (2, NULL, 'y')")
        .await
        .unwrap();
    drop(ctx);
    // what a Spark writer leaves: the metadata table's folder and the property naming it
    let loc = wh.join("m");
    let mdt = loc.join(".hoodie/metadata");
    std::fs::create_dir_all(mdt.join(".hoodie")).unwrap();
    std::fs::create_dir_all(mdt.join("files")).unwrap();
    std::fs::write(
        mdt.join(".hoodie/hoodie.properties"),
        "hoodie.table.name=m_metadata\n",
    )
    .unwrap();
    std::fs::write(
        mdt.join("files/.files-0000-0_00000000000000010.log.1_0-0-0"),
        b"x",
    )
    .unwrap();
    let mut table = HudiTable::open(TableStorage::local(&loc).unwrap())
        .await
        .unwrap();
    let mut config = table.config().clone();
    config.set("hoodie.table.metadata.partitions", "files");
    table.update_config(config).await.unwrap();
    let before = files_under(&loc);

    let ctx = session(&wh).await;
    let query = "SELECT id, v, dt FROM m ORDER BY id";
    let rows = cells(&ctx, query).await;
    for sql in [
        "INSERT INTO m VALUES (3, 'c', 'x')",
        "UPDATE m SET v = 'b' WHERE id = 2",
        "DELETE FROM m WHERE id = 1",
        "MERGE INTO m USING (SELECT 1 AS id, 'z' AS v, 'x' AS dt) s ON m.id = s.id WHEN MATCHED THEN UPDATE SET *",
        "INSERT OVERWRITE m SELECT 9, 'z', 'x'",
        "ALTER TABLE m DROP PARTITION (dt = 'y')",
        "CALL run_clean(table => 'm')",
    ] {
        let err = error(&ctx, sql).await;
        assert!(
            err.contains("has a metadata table (hoodie.table.metadata.partitions = files)")
                && err.contains("hoodie.metadata.enable = false"),
            "{sql}: {err}"
        );
    }
    assert_eq!(cells(&ctx, query).await, rows);
    assert_eq!(
        files_under(&loc),
        before,
        "a refused statement changed the table"
    );

    let err = error(&ctx, "SET hoodie.metadata.enable = maybe").await;
    assert!(err.contains("hoodie.metadata.enable"), "{err}");
    ctx.run("SET hoodie.metadata.enable = false").await.unwrap();
    ctx.run("INSERT INTO m VALUES (3, 'c', 'x')").await.unwrap();
    assert!(!mdt.exists(), "the metadata table is still there");
    let props = std::fs::read_to_string(loc.join(".hoodie/hoodie.properties")).unwrap();
    assert!(
        props.contains("hoodie.table.metadata.partitions=\n"),
        "{props}"
    );
    let got = cells(&ctx, query).await;
    assert_eq!(got.len(), 3, "{got:?}");
    // another session, metadata enabled again: the table has none now, so it writes
    let ctx = session(&wh).await;
    ctx.run("UPDATE m SET v = 'b' WHERE id = 2").await.unwrap();
    assert_eq!(
        cells(&ctx, "SELECT v FROM m WHERE id = 2").await,
        vec![vec!["b".to_string()]]
    );
}
