//! Cleaning on disk: which files a clean deletes (base files, log files of merge-on-read
//! slices, `.cdc` logs), the timeline files it writes (Java's Avro plan and metadata), what
//! `run_clean` and `show_cleans` return, and a clean that fails at any object-store write or
//! delete: the table reads the same, and the next clean finishes it.

mod common;

use std::sync::Arc;

use common::failing::FailingStore;
use common::{cells as rows, files_under, reader, session_with_table, text};
use hoodie_datafusion::HoodieContext;
use hoodie_format::clean::{CleanPolicy, CleanResult, CleanSpec};
use hoodie_format::client::TableServices;
use hoodie_format::concurrency::ConcurrencySpec;
use hoodie_format::fs_view::TableListing;
use hoodie_format::inspect::{parse_clean_metadata, parse_cleaner_plan};
use hoodie_format::storage::TableStorage;
use hoodie_format::HudiTable;

fn named(files: &[String], what: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out: Vec<String> = files.iter().filter(|f| what(f)).cloned().collect();
    out.sort();
    out
}

fn data_files(loc: &std::path::Path) -> Vec<String> {
    named(&files_under(loc), |f| {
        !f.starts_with(".hoodie") && !f.contains(".hoodie_partition_metadata")
    })
}

#[tokio::test]
async fn merge_on_read_slices_go_with_their_logs_and_the_timeline_holds_java_avro() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    // version 6: a log names its slice's base instant (version 9 names its own deltacommit's)
    let create = "CREATE TABLE t (id INT, v STRING) USING hudi TBLPROPERTIES (type = 'mor', primaryKey = 'id', 'hoodie.compact.inline.max.delta.commits' = '1', 'hoodie.cleaner.commits.retained' = '1', 'hoodie.write.table.version' = '6')";
    let ctx = session_with_table(tmp.path(), None, create, &loc).await;
    ctx.run("INSERT INTO t VALUES (1, 'a'), (2, NULL)")
        .await
        .unwrap();
    // each update logs, then compacts: a new slice per statement
    for v in ["b", "c", "d"] {
        ctx.run(&format!("UPDATE t SET v = '{v}' WHERE id = 1"))
            .await
            .unwrap();
    }
    assert_eq!(
        rows(&ctx, "SELECT id, v FROM t ORDER BY id").await,
        [["1", "d"], ["2", ""]]
    );
    let files = data_files(&loc);
    let bases = named(&files, |f| f.ends_with(".parquet"));
    let logs = named(&files, |f| f.contains(".log."));
    // the latest compacted slice and the one a read as of the kept commit needs stay; every
    // older base file and every log of a cleaned slice is gone
    assert_eq!(bases.len(), 2, "{files:?}");
    let kept_instants: Vec<&str> = bases
        .iter()
        .map(|b| b.rsplit('_').next().unwrap().trim_end_matches(".parquet"))
        .collect();
    for log in &logs {
        let base_instant = log.split('_').nth(1).unwrap().split('.').next().unwrap();
        assert!(
            kept_instants.contains(&base_instant),
            "{log} of a cleaned slice: {files:?}"
        );
    }

    let timeline_files = files_under(&loc.join(".hoodie"));
    let requested = named(&timeline_files, |f| f.ends_with(".clean.requested"));
    let completed = named(&timeline_files, |f| f.ends_with(".clean"));
    assert!(!requested.is_empty());
    assert_eq!(requested.len(), completed.len());
    let last = completed.last().unwrap();
    let meta = parse_clean_metadata(
        &std::fs::read(loc.join(".hoodie").join(last)).unwrap(),
        last,
    )
    .unwrap();
    assert_eq!(meta.policy, "KEEP_LATEST_COMMITS");
    assert_eq!(meta.version, 2);
    assert!(!meta.earliest_commit_to_retain.is_empty());
    assert_eq!(last.trim_end_matches(".clean"), meta.start_clean_time);
    let deleted: usize = meta
        .partitions
        .values()
        .map(|p| p.success_delete_files.len())
        .sum();
    assert_eq!(deleted as i32, meta.total_files_deleted);
    // the plan names absolute paths, as Java's cleaner writes them
    let plan_name = format!("{}.clean.requested", meta.start_clean_time);
    let plan = parse_cleaner_plan(
        &std::fs::read(loc.join(".hoodie").join(&plan_name)).unwrap(),
        &plan_name,
    )
    .unwrap();
    let planned: Vec<&String> = plan.files.values().flatten().collect();
    assert_eq!(planned.len(), deleted);
    for p in planned {
        assert!(p.starts_with(&loc.display().to_string()), "{p}");
        assert!(!std::path::Path::new(p).exists(), "{p} still there");
    }
    assert_eq!(
        plan.earliest_instant_to_retain
            .as_ref()
            .map(|e| e.0.as_str()),
        Some(meta.earliest_commit_to_retain.as_str())
    );
}

#[tokio::test]
async fn cdc_logs_of_cleaned_slices_are_deleted() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let create = "CREATE TABLE t (id INT, v STRING) USING hudi TBLPROPERTIES (primaryKey = 'id', 'hoodie.table.cdc.enabled' = 'true', 'hoodie.cleaner.commits.retained' = '1')";
    let ctx = session_with_table(tmp.path(), None, create, &loc).await;
    ctx.run("INSERT INTO t VALUES (1, 'a')").await.unwrap();
    ctx.run("UPDATE t SET v = 'b' WHERE id = 1").await.unwrap();
    let cdc_before = named(&data_files(&loc), |f| f.ends_with(".cdc"));
    assert_eq!(cdc_before.len(), 1);
    for v in ["c", "d"] {
        ctx.run(&format!("UPDATE t SET v = '{v}' WHERE id = 1"))
            .await
            .unwrap();
    }
    let files = data_files(&loc);
    let cdc = named(&files, |f| f.ends_with(".cdc"));
    assert_eq!(
        named(&files, |f| f.ends_with(".parquet")).len(),
        2,
        "{files:?}"
    );
    assert!(!cdc.contains(&cdc_before[0]), "{files:?}");
    assert_eq!(cdc.len(), 2, "{files:?}");
}

/// A table at `loc` that cleans only when asked, with four commits: an insert into two
/// partitions and three updates of both rows (so each file group has four versions).
async fn four_commits(tmp: &std::path::Path, loc: &std::path::Path) -> HoodieContext {
    four_commits_of(tmp, loc, 6).await
}

/// Four commits (an insert and three updates of both rows) on a table of `version`, not
/// cleaned automatically.
async fn four_commits_of(
    tmp: &std::path::Path,
    loc: &std::path::Path,
    version: u32,
) -> HoodieContext {
    let create = format!("CREATE TABLE t (id INT, v INT, p STRING) USING hudi PARTITIONED BY (p) TBLPROPERTIES (primaryKey = 'id', 'hoodie.clean.automatic' = 'false', 'hoodie.write.table.version' = '{version}')");
    let ctx = session_with_table(tmp, None, &create, loc).await;
    ctx.run("INSERT INTO t VALUES (1, 0, 'x'), (2, 0, 'y')")
        .await
        .unwrap();
    for v in 1..=3 {
        ctx.run(&format!("UPDATE t SET v = {v}")).await.unwrap();
    }
    ctx
}

#[tokio::test]
async fn run_clean_and_show_cleans_return_hudis_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = four_commits(tmp.path(), &loc).await;
    assert_eq!(
        data_files(&loc)
            .iter()
            .filter(|f| f.ends_with(".parquet"))
            .count(),
        8
    );
    let out = text(&ctx, "CALL run_clean(table => 't', retain_commits => 2)").await;
    let header: Vec<&str> = out
        .lines()
        .nth(1)
        .unwrap()
        .split('|')
        .map(str::trim)
        .collect();
    assert_eq!(
        header[1..7],
        [
            "start_clean_time",
            "time_taken_in_millis",
            "total_files_deleted",
            "earliest_commit_to_retain",
            "bootstrap_part_metadata",
            "version"
        ]
    );
    // 4 commits, 2 retained: the first version of each group goes
    let ran = rows(
        &ctx,
        "CALL run_clean(table => 't', trigger_max_commits => 0, retain_commits => 1)",
    )
    .await;
    assert_eq!(ran.len(), 1, "{ran:?}");
    assert_eq!(ran[0][2], "2", "{ran:?}");
    assert_eq!(
        data_files(&loc)
            .iter()
            .filter(|f| f.ends_with(".parquet"))
            .count(),
        4
    );
    let cleans = rows(&ctx, "CALL show_cleans(table => 't')").await;
    assert_eq!(cleans.len(), 2, "{cleans:?}");
    // newest first: clean_time, state_transition_time, action, start_clean_time, time taken,
    // files deleted, earliest commit kept, last completed commit, version
    assert!(cleans[0][0] > cleans[1][0]);
    assert_eq!(cleans[0][0], cleans[0][3]);
    assert_eq!(cleans[0][2], "clean");
    assert_eq!((cleans[0][5].as_str(), cleans[1][5].as_str()), ("2", "2"));
    assert_eq!(cleans[0][8], "2");
    let last_commit = rows(&ctx, "SELECT max(_hoodie_commit_time) FROM t").await;
    assert_eq!(cleans[0][7], last_commit[0][0]);
    assert_eq!(
        cleans[0][6], last_commit[0][0],
        "one commit retained: the latest"
    );
    let one = rows(&ctx, "CALL show_cleans('t', 1)").await;
    assert_eq!(one, cleans[..1]);
}

/// Runs a clean through a store that fails its N-th write or delete, for every N, each on a
/// fresh copy of the table, until one completes: after each failure the table reads the same,
/// and the next clean finishes the one left pending, deleting what the completed run deletes.
#[tokio::test]
async fn a_clean_that_fails_anywhere_is_finished_by_the_next() {
    clean_failing_anywhere(6).await;
}

#[tokio::test]
async fn a_clean_of_a_version_9_table_that_fails_anywhere_is_finished_by_the_next() {
    clean_failing_anywhere(9).await;
}

async fn clean_failing_anywhere(version: u32) {
    let tmp = tempfile::tempdir().unwrap();
    let template = tmp.path().join("t");
    let ctx = four_commits_of(tmp.path(), &template, version).await;
    let query = "SELECT id, v, p FROM t ORDER BY id";
    let before = rows(&ctx, query).await;
    let spec = CleanSpec {
        automatic: true,
        policy: CleanPolicy::KeepLatestCommits,
        commits_retained: 1,
        hours_retained: 24,
        file_versions_retained: 3,
        max_commits: 1,
        incremental: true,
    };
    let mut n = 1;
    let expected_files = loop {
        let loc = tmp.path().join(format!("run{n}"));
        let (storage, _store, table) = common::failing_copy(&template, &loc, n).await;
        // the table keeps its listing, as after a statement's read
        let timeline = table.timeline().await.unwrap();
        table.file_slices(&timeline, None).await.unwrap();
        assert!(table.kept_listing(&timeline).is_some());
        let failed = match run_clean(&table, &spec).await {
            Err(e) => {
                assert!(e.to_string().contains("injected failure"), "{n}: {e}");
                // a listing kept across a clean that stopped half-way names what is there
                let now = table.timeline().await.unwrap();
                if let Some(kept) = table.kept_listing(&now) {
                    let there = TableListing::read(&storage).await.unwrap();
                    assert_eq!(kept.files(), there.files(), "failing at {n}");
                }
                true
            }
            Ok(done) => {
                assert_eq!(done.len(), 1, "{done:?}");
                false
            }
        };
        let read = reader(tmp.path(), &loc).await;
        assert_eq!(rows(&read, query).await, before, "after failing at {n}");
        if !failed {
            // the plan, the inflight mark, 4 deletes and the completion
            assert_eq!(n - 1, 7);
            break data_files(&loc);
        }
        let table = HudiTable::open(storage.clone()).await.unwrap();
        let finished = run_clean(&table, &spec).await.unwrap();
        assert_eq!(finished.len(), 1, "at {n}: {finished:?}");
        let timeline = files_under(&loc.join(".hoodie"));
        assert_eq!(
            named(&timeline, |f| f.ends_with(".clean")).len(),
            1,
            "{timeline:?}"
        );
        assert_eq!(
            named(&data_files(&loc), |f| f.ends_with(".parquet")).len(),
            4
        );
        assert_eq!(rows(&read, query).await, before);
        n += 1;
        assert!(n < 50);
    };
    assert_eq!(named(&expected_files, |f| f.ends_with(".parquet")).len(), 4);
}

/// Incremental cleaning: once a clean ran, the next lists only the partitions written since
/// the earliest commit it kept, not the whole table, and still deletes what it should.
#[tokio::test]
async fn a_clean_lists_only_the_partitions_written_since_the_last() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = four_commits(tmp.path(), &loc).await;
    let storage = TableStorage::local(&loc).unwrap();
    let spec = CleanSpec {
        automatic: true,
        policy: CleanPolicy::KeepLatestCommits,
        commits_retained: 1,
        hours_retained: 24,
        file_versions_retained: 3,
        max_commits: 1,
        incremental: true,
    };
    // a first clean, keeping a commit that wrote partition x alone
    ctx.run("UPDATE t SET v = 9 WHERE p = 'x'").await.unwrap();
    let table = HudiTable::open(storage.clone()).await.unwrap();
    assert_eq!(run_clean(&table, &spec).await.unwrap().len(), 1);
    // two more writes to partition x only, then a clean through a store that records listings
    ctx.run("UPDATE t SET v = 10 WHERE p = 'x'").await.unwrap();
    ctx.run("UPDATE t SET v = 11 WHERE p = 'x'").await.unwrap();
    let store = Arc::new(FailingStore::new(storage.store().clone(), usize::MAX));
    let table = HudiTable::open(storage.with_store(store.clone()))
        .await
        .unwrap();
    let done = run_clean(&table, &spec).await.unwrap();
    assert_eq!(done.len(), 1);
    assert_eq!(
        done[0].metadata.partitions.keys().collect::<Vec<_>>(),
        ["p=x"]
    );
    let base = storage.base().to_string();
    let listed = store.listed.lock().unwrap().clone();
    assert!(listed.iter().any(|l| l.ends_with("/p=x")), "{listed:?}");
    assert!(
        !listed.iter().any(|l| l.ends_with("/p=y") || *l == base),
        "{listed:?}"
    );
    // partition x keeps the latest version and the one a read as of the kept commit needs
    let x: Vec<String> = files_under(&loc.join("p=x"))
        .into_iter()
        .filter(|f| f.ends_with(".parquet"))
        .collect();
    assert_eq!(x.len(), 2, "{x:?}");
    // with the mode off the whole table is listed
    ctx.run("UPDATE t SET v = 12 WHERE p = 'x'").await.unwrap();
    let store = Arc::new(FailingStore::new(storage.store().clone(), usize::MAX));
    let table = HudiTable::open(storage.with_store(store.clone()))
        .await
        .unwrap();
    let full = CleanSpec {
        incremental: false,
        ..spec
    };
    run_clean(&table, &full).await.unwrap();
    assert!(store.listed.lock().unwrap().contains(&base));
}

/// Cleans `table` through its table services, as a single writer.
async fn run_clean(table: &HudiTable, spec: &CleanSpec) -> hoodie_format::Result<Vec<CleanResult>> {
    TableServices::new(table, ConcurrencySpec::single_writer())
        .clean(spec)
        .await
}
