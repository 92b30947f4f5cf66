//! How often a write statement lists the timeline folder `.hoodie/` (one request on an object
//! store each time): once, to open the table, which the statement that opens it (as a catalog
//! lookup or `CREATE EXTERNAL TABLE` does while it is planned) reads from. A single writer's
//! write starts from that listing (nothing pending on it, nothing written under
//! `.hoodie/` by this process since, listed moments ago); the write itself, the clean and the
//! archival after its commit use the transaction's own view of the timeline; a clean that ran
//! carries the timeline on to the archival. Under optimistic concurrency the write's start, the
//! commit's conflict check and the services after it list it again inside the lock, as other
//! writers may have committed.

mod common;

use common::failing::FailingStore;
use common::{cells, counted_table, register_recorded, register_recorded_table};
use hoodie_format::fs_view::TableListing;
use hoodie_format::storage::TableStorage;

/// The timeline folder a reader lists: `.hoodie/timeline` on versions 8 and 9, `.hoodie` on 6.
fn timeline_path(storage: &TableStorage, loc: &std::path::Path) -> String {
    let dir = common::timeline_dir(loc);
    match dir.ends_with("timeline") {
        true => format!("{}/.hoodie/timeline", storage.base()),
        false => format!("{}/.hoodie", storage.base()),
    }
}

/// The listings of `.hoodie/` made by opening the table at `loc` and running `statement` on
/// it (as table `f`), after `setup` statements on it (as `t`); and the session.
async fn timeline_listings(props: &str, setup: &[&str], statement: &str) -> usize {
    let tmp = tempfile::tempdir().unwrap();
    let (ctx, loc) = counted_table(tmp.path(), props).await;
    for s in setup {
        ctx.run(s).await.unwrap();
    }
    let (storage, store) = register_recorded(&ctx, "f", &loc).await;
    ctx.run(statement).await.unwrap();
    // the statement did what it says
    assert_eq!(
        cells(&ctx, "SELECT id, v FROM t WHERE id = 2").await,
        [["2", "u"]]
    );
    let timeline = timeline_path(&storage, &loc);
    let dirs = store.listed_dirs.lock().unwrap().clone();
    let n = dirs.iter().filter(|d| **d == timeline).count();
    // a clean due after the statement (the only case with cleaner settings) did run
    let cleans = common::files_under(&loc.join(".hoodie"))
        .iter()
        .filter(|f| f.ends_with(".clean"))
        .count();
    assert_eq!(cleans > 0, props.contains("cleaner"), "{cleans} cleans");
    n
}

#[tokio::test]
async fn a_write_lists_the_timeline_once_to_open_read_and_start() {
    let update = "UPDATE f SET v = 'u' WHERE id = 2";
    assert_eq!(timeline_listings("", &[], update).await, 1);
    let v6 = ", 'hoodie.write.table.version' = '6'";
    assert_eq!(timeline_listings(v6, &[], update).await, 1, "version 6");
    assert_eq!(
        timeline_listings(", type = 'mor'", &[], update).await,
        1,
        "merge-on-read"
    );
    let merge = "MERGE INTO f USING (SELECT 2 AS id, 'u' AS v, 'y' AS p) s ON f.id = s.id \
                 WHEN MATCHED THEN UPDATE SET *";
    assert_eq!(timeline_listings("", &[], merge).await, 1, "MERGE");
    // no read of the table before the write: its start takes the open's listing (on a
    // merge-on-read table, the one that found no compaction pending)
    let insert = "INSERT INTO f VALUES (2, 'u', 'y')";
    let upsert = ", 'hoodie.spark.sql.insert.into.operation' = 'upsert'";
    assert_eq!(timeline_listings(upsert, &[], insert).await, 1, "INSERT");
    let mor_upsert = format!(", type = 'mor'{upsert}");
    assert_eq!(
        timeline_listings(&mor_upsert, &[], insert).await,
        1,
        "merge-on-read INSERT"
    );
}

#[tokio::test]
async fn a_statement_after_the_first_lists_the_timeline_again() {
    let tmp = tempfile::tempdir().unwrap();
    let (ctx, loc) = counted_table(tmp.path(), "").await;
    let (storage, store) = register_recorded(&ctx, "f", &loc).await;
    let timeline = timeline_path(&storage, &loc);
    let listings = || {
        let dirs = store.listed_dirs.lock().unwrap().clone();
        dirs.iter().filter(|d| **d == timeline).count()
    };
    cells(&ctx, "SELECT id FROM f").await;
    assert_eq!(
        listings(),
        1,
        "the first statement reads the open's listing"
    );
    // another writer's commit (this session's `t`, the same table) shows in the next read
    ctx.run("UPDATE t SET v = 'z' WHERE id = 3").await.unwrap();
    assert_eq!(cells(&ctx, "SELECT v FROM f WHERE id = 3").await, [["z"]]);
    assert_eq!(listings(), 2, "the second statement lists again");
}

#[tokio::test]
async fn a_write_after_a_failed_one_lists_again_to_roll_it_back() {
    // a failed write's inflight instant (as a killed writer leaves it) is on the read's listing
    let tmp = tempfile::tempdir().unwrap();
    let (ctx, loc) = counted_table(tmp.path(), "").await;
    // (a commit's inflight file is `T.inflight` on every version)
    let dir = common::timeline_dir(&loc);
    let inflight = dir.join("20200101000000000.inflight");
    std::fs::write(dir.join("20200101000000000.commit.requested"), b"").unwrap();
    std::fs::write(&inflight, b"").unwrap();
    let (storage, store) = register_recorded(&ctx, "f", &loc).await;
    ctx.run("UPDATE f SET v = 'u' WHERE id = 2").await.unwrap();
    assert!(!inflight.exists(), "the failed write was rolled back");
    assert_eq!(
        cells(&ctx, "SELECT id, v FROM t ORDER BY id").await,
        [["1", "a"], ["2", "u"], ["3", "c"]]
    );
    let timeline = timeline_path(&storage, &loc);
    let dirs = store.listed_dirs.lock().unwrap().clone();
    // open (and read), then the start lists again (and once more after its rollback)
    assert!(
        dirs.iter().filter(|d| **d == timeline).count() >= 2,
        "{dirs:?}"
    );
}

#[tokio::test]
async fn a_plan_run_after_another_write_starts_from_a_new_listing() {
    let tmp = tempfile::tempdir().unwrap();
    let (ctx, loc) = counted_table(tmp.path(), "").await;
    register_recorded(&ctx, "f", &loc).await;
    let plan = ctx
        .session()
        .sql("UPDATE f SET v = 'u' WHERE id = 1")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    // another write of the same file group (partition x) after the plan's read
    ctx.run("UPDATE t SET v = 'z' WHERE id = 3").await.unwrap();
    datafusion::physical_plan::collect(plan, ctx.session().task_ctx())
        .await
        .unwrap();
    assert_eq!(
        cells(&ctx, "SELECT id, v FROM t ORDER BY id").await,
        [["1", "u"], ["2", ""], ["3", "z"]],
        "the other write's change is kept"
    );
}

#[tokio::test]
async fn a_write_between_the_open_and_the_first_read_is_seen() {
    // the open's listing stands for the first statement only while this process wrote
    // nothing to the table since
    let tmp = tempfile::tempdir().unwrap();
    let (ctx, loc) = counted_table(tmp.path(), ", type = 'mor'").await;
    let (storage, store) = register_recorded(&ctx, "f", &loc).await;
    ctx.run("UPDATE t SET v = NULL WHERE id = 1").await.unwrap();
    ctx.run("DELETE FROM t WHERE id = 3").await.unwrap();
    assert_eq!(
        cells(&ctx, "SELECT id, v FROM f ORDER BY id").await,
        [["1", ""], ["2", ""]]
    );
    let timeline = timeline_path(&storage, &loc);
    let dirs = store.listed_dirs.lock().unwrap().clone();
    assert_eq!(
        dirs.iter().filter(|d| **d == timeline).count(),
        2,
        "the open, then the read"
    );
}

#[tokio::test]
async fn a_clean_after_the_commit_and_the_archival_list_nothing() {
    // one commit retained, a clean due after every commit: the UPDATE's clean runs, from the
    // write's own view of the timeline, and the archival from the clean's
    let props = ", 'hoodie.cleaner.commits.retained' = '1', 'hoodie.clean.max.commits' = '1'";
    let setup = ["UPDATE t SET v = 'w' WHERE id = 2"];
    let n = timeline_listings(props, &setup, "UPDATE f SET v = 'u' WHERE id = 2").await;
    assert_eq!(n, 1);
}

/// The listings of the table's data files (every listing outside `.hoodie/`) `store` recorded.
fn data_listings(storage: &TableStorage, store: &FailingStore) -> Vec<String> {
    let timeline = format!("{}/.hoodie", storage.base());
    let listed = store.listed.lock().unwrap().clone();
    listed
        .into_iter()
        .filter(|d| !d.starts_with(&timeline))
        .collect()
}

#[tokio::test]
async fn a_write_and_its_clean_list_the_data_files_once_and_the_next_statement_not_at_all() {
    // (merge-on-read: a compaction every other deltacommit, so that the cleans delete slices)
    for props in [
        "",
        ", type = 'mor', 'hoodie.compact.inline.max.delta.commits' = '2'",
    ] {
        let props = format!(
            "{props}, 'hoodie.cleaner.commits.retained' = '1', 'hoodie.clean.max.commits' = '1'"
        );
        let tmp = tempfile::tempdir().unwrap();
        let (ctx, loc) = counted_table(tmp.path(), &props).await;
        ctx.run("UPDATE t SET v = 'w' WHERE id = 2").await.unwrap();
        let (storage, store) = register_recorded(&ctx, "f", &loc).await;
        for (i, sql) in [
            "UPDATE f SET v = 'u' WHERE id = 2",
            "DELETE FROM f WHERE id = 3",
            "MERGE INTO f USING (SELECT 4 AS id, NULL AS v, 'y' AS p) s ON f.id = s.id \
             WHEN NOT MATCHED THEN INSERT *",
        ]
        .into_iter()
        .enumerate()
        {
            ctx.run(sql).await.unwrap();
            // the statement's read listed the table once (the first) or not at all: the
            // listing its write and clean changed is the table's
            assert_eq!(
                data_listings(&storage, &store).len(),
                1,
                "{props} statement {i}: {:?}",
                data_listings(&storage, &store)
            );
        }
        let cleans = common::files_under(&loc.join(".hoodie"))
            .iter()
            .filter(|f| f.ends_with(".clean"))
            .count();
        assert!(cleans >= 2, "{props}: cleans that deleted files ({cleans})");
        assert_eq!(
            cells(&ctx, "SELECT id, v FROM f ORDER BY id").await,
            [["1", "a"], ["2", "u"], ["4", ""]]
        );
        assert_eq!(
            data_listings(&storage, &store).len(),
            1,
            "{props}: the query"
        );
    }
}

#[tokio::test]
async fn the_kept_listing_is_the_table_s_files_after_every_kind_of_write() {
    let cases = [
        ", 'hoodie.cleaner.commits.retained' = '1', 'hoodie.clean.max.commits' = '1', \
         'hoodie.keep.min.commits' = '2', 'hoodie.keep.max.commits' = '3'",
        ", type = 'mor', 'hoodie.compact.inline.max.delta.commits' = '2'",
        ", 'hoodie.table.cdc.enabled' = 'true', 'hoodie.cleaner.commits.retained' = '1'",
        ", type = 'mor', 'hoodie.table.cdc.enabled' = 'true', 'hoodie.cleaner.commits.retained' = '2'",
    ];
    for props in cases {
        let tmp = tempfile::tempdir().unwrap();
        let (ctx, loc) = counted_table(tmp.path(), props).await;
        let (storage, _, table) = register_recorded_table(&ctx, "f", &loc).await;
        let mut kept = 0;
        for sql in [
            "UPDATE f SET v = NULL WHERE id = 1",
            "INSERT INTO f VALUES (5, 'e', 'x'), (6, NULL, 'z')",
            "DELETE FROM f WHERE id = 3",
            "MERGE INTO f USING (SELECT 2 AS id, 'm' AS v, 'y' AS p UNION ALL \
             SELECT 7, 'n', 'x') s ON f.id = s.id \
             WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
            "UPDATE f SET v = 'again' WHERE p = 'x'",
            "INSERT OVERWRITE f PARTITION (p = 'z') SELECT 8, 'o'",
            "UPDATE f SET v = 'last' WHERE id = 8",
        ] {
            ctx.run(sql).await.unwrap();
            let timeline = table.timeline().await.unwrap();
            let fresh = TableListing::read(&storage).await.unwrap().files();
            if let Some(listing) = table.kept_listing(&timeline) {
                assert_eq!(listing.files(), fresh, "{props}: after {sql}");
                kept += 1;
            }
        }
        // every statement's commit (and the services after it) carried the listing forward
        assert_eq!(kept, 7, "{props}");
        let compacted = common::files_under(&loc.join(".hoodie"))
            .iter()
            .any(|f| f.ends_with(".compaction.requested"));
        assert_eq!(compacted, props.contains("mor"), "{props}");
        // version 6 archives into `.hoodie/archived`, 8 and 9 into the LSM history
        let archived =
            loc.join(".hoodie/archived").exists() || loc.join(".hoodie/timeline/history").exists();
        assert_eq!(archived, props.contains("keep.max"), "{props}");
    }
}

#[tokio::test]
async fn optimistic_concurrency_lists_it_again_inside_the_lock() {
    let props = ", 'hoodie.write.concurrency.mode' = 'optimistic_concurrency_control'";
    let n = timeline_listings(props, &[], "UPDATE f SET v = 'u' WHERE id = 2").await;
    // open (and read), start, the commit's conflict check, the services after it
    assert_eq!(n, 4);
}
