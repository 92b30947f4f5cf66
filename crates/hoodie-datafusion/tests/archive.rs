//! Archival on disk: which timeline files move into `.hoodie/archived/` (every state of the
//! oldest instants, none the cleaner, a savepoint or a pending write still needs), what the
//! archive file holds (Java's `HoodieArchivedMetaEntry` log blocks, the commit metadata
//! recoverable), and an archival that fails at any object-store write or delete: the table
//! reads the same, and the next archival goes on from what is left.

mod common;

use common::{cells as rows, files_under, reader, session_with_table};
use hoodie_datafusion::HoodieContext;
use hoodie_format::archive::{archived_entries, ArchiveSpec};
use hoodie_format::clean::{CleanPolicy, CleanSpec};
use hoodie_format::client::TableServices;
use hoodie_format::concurrency::ConcurrencySpec;
use hoodie_format::inspect::parse_archive_file;
use hoodie_format::storage::TableStorage;
use hoodie_format::timeline::CommitMetadata;
use hoodie_format::timeline::{Action, State};
use hoodie_format::HudiTable;

/// The timeline files of a table (the `.hoodie` folder's own files).
fn timeline_files(loc: &std::path::Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(loc.join(".hoodie"))
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            e.file_type()
                .unwrap()
                .is_file()
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
        .filter(|n| n.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .collect();
    out.sort();
    out
}

fn completed_commits(loc: &std::path::Path) -> Vec<String> {
    timeline_files(loc)
        .into_iter()
        .filter(|f| f.ends_with(".commit") || f.ends_with(".deltacommit"))
        .collect()
}

fn archive_files(loc: &std::path::Path) -> Vec<String> {
    let mut out: Vec<String> = files_under(&loc.join(".hoodie").join("archived"));
    out.sort();
    out
}

fn clean_spec(retained: usize) -> CleanSpec {
    CleanSpec {
        automatic: false,
        policy: CleanPolicy::KeepLatestCommits,
        commits_retained: retained,
        hours_retained: 24,
        file_versions_retained: 3,
        max_commits: 1,
        incremental: true,
    }
}

fn archive_spec(min: usize, max: usize) -> ArchiveSpec {
    ArchiveSpec {
        automatic: true,
        min_commits: min,
        max_commits: max,
        batch: 10,
        beyond_savepoint: false,
        compaction_delta_commits: None,
        history: hoodie_format::archive::HistorySpec {
            compaction_batch: 10,
            retained_versions: 3,
        },
    }
}

/// A copy-on-write table at `loc` with six commits in two partitions, archived only when
/// asked (and never cleaned).
async fn six_commits(tmp: &std::path::Path, loc: &std::path::Path) -> HoodieContext {
    let create = "CREATE TABLE t (id INT, v STRING, p STRING) USING hudi PARTITIONED BY (p) TBLPROPERTIES (primaryKey = 'id', 'hoodie.clean.automatic' = 'false', 'hoodie.archive.automatic' = 'false', 'hoodie.write.table.version' = '6')";
    let ctx = session_with_table(tmp, None, create, loc).await;
    ctx.run("INSERT INTO t VALUES (1, 'a', 'x'), (2, NULL, 'y')")
        .await
        .unwrap();
    for v in ["b", "c", "d", "e", "f"] {
        ctx.run(&format!("UPDATE t SET v = '{v}' WHERE id = 1"))
            .await
            .unwrap();
    }
    ctx
}

#[tokio::test]
async fn the_oldest_instants_move_with_every_state_and_their_metadata() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = six_commits(tmp.path(), &loc).await;
    let before_files = timeline_files(&loc);
    let commits = completed_commits(&loc);
    assert_eq!(commits.len(), 6);
    let originals: Vec<CommitMetadata> = commits[..4]
        .iter()
        .map(|c| {
            CommitMetadata::parse(&std::fs::read(loc.join(".hoodie").join(c)).unwrap(), c).unwrap()
        })
        .collect();
    let query = "SELECT id, v, p, _hoodie_commit_time FROM t ORDER BY id";
    let before = rows(&ctx, query).await;

    let table = HudiTable::open(TableStorage::local(&loc).unwrap())
        .await
        .unwrap();
    let archived = run_archive(&table, &archive_spec(2, 3), &clean_spec(10))
        .await
        .unwrap();
    // six commits > 3: the oldest four go, each with its requested, inflight and completed file
    assert_eq!(archived.len(), 12, "{archived:?}");
    let after_files = timeline_files(&loc);
    assert_eq!(completed_commits(&loc), commits[4..]);
    for c in &commits[..4] {
        let ts = c.trim_end_matches(".commit");
        assert!(
            !after_files.iter().any(|f| f.starts_with(ts)),
            "{after_files:?}"
        );
    }
    assert_eq!(before_files.len() - after_files.len(), 12);

    let archives = archive_files(&loc);
    assert_eq!(archives, [".commits_.archive.1_1-0-1"]);
    let path = loc.join(".hoodie/archived").join(&archives[0]);
    let entries =
        parse_archive_file(&bytes::Bytes::from(std::fs::read(&path).unwrap()), "a").unwrap();
    assert_eq!(entries.len(), 12);
    for state in [State::Requested, State::Inflight, State::Completed] {
        assert_eq!(
            entries.iter().filter(|e| e.instant.state == state).count(),
            4
        );
    }
    let done: Vec<_> = entries
        .iter()
        .filter(|e| e.instant.state == State::Completed)
        .collect();
    for (e, original) in done.iter().zip(&originals) {
        assert_eq!(e.instant.action, Action::Commit);
        let m = CommitMetadata::parse(&e.commit_metadata_json().unwrap(), "j").unwrap();
        let pick = |m: &CommitMetadata| -> Vec<String> {
            m.write_stats()
                .map(|s| {
                    format!(
                        "{:?} {:?} {} {} {}",
                        s.file_id, s.path, s.num_writes, s.num_update_writes, s.total_write_bytes
                    )
                })
                .collect()
        };
        assert_eq!(pick(&m), pick(original));
        assert_eq!(m.operation_type, original.operation_type);
        assert_eq!(m.schema(), original.schema());
    }

    // the table reads the same: the dt=y record's commit is archived, hence committed
    let read = reader(tmp.path(), &loc).await;
    assert_eq!(rows(&read, query).await, before);
    // nothing more is due
    let table = HudiTable::open(TableStorage::local(&loc).unwrap())
        .await
        .unwrap();
    assert!(run_archive(&table, &archive_spec(2, 3), &clean_spec(10))
        .await
        .unwrap()
        .is_empty());
    assert_eq!(archived_entries(&table).await.unwrap().len(), 12);
}

#[tokio::test]
async fn the_cleaners_retention_and_a_pending_write_bound_archival() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let _ctx = six_commits(tmp.path(), &loc).await;
    let table = HudiTable::open(TableStorage::local(&loc).unwrap())
        .await
        .unwrap();
    // four commits retained: the earliest kept is the third, so the bounds rise to 3 + 2 = 5
    // kept, 6 at most: nothing to archive
    assert!(run_archive(&table, &archive_spec(2, 3), &clean_spec(4))
        .await
        .unwrap()
        .is_empty());
    // a write left inflight after the second commit (a failed writer's, not yet rolled back)
    let commits = completed_commits(&loc);
    let second: u64 = commits[1].trim_end_matches(".commit").parse().unwrap();
    let pending = format!("{}.inflight", second + 1);
    assert!(pending.as_str() < commits[2].as_str());
    std::fs::write(loc.join(".hoodie").join(&pending), b"").unwrap();
    let table = HudiTable::open(TableStorage::local(&loc).unwrap())
        .await
        .unwrap();
    let archived = run_archive(&table, &archive_spec(2, 3), &clean_spec(10))
        .await
        .unwrap();
    // the commit before the pending write stays: only the first goes
    let times: std::collections::BTreeSet<&str> =
        archived.iter().map(|i| i.timestamp.as_str()).collect();
    assert_eq!(
        times.into_iter().collect::<Vec<_>>(),
        [commits[0].trim_end_matches(".commit")]
    );
    assert!(timeline_files(&loc).contains(&pending));
}

/// Runs an archival through a store that fails its N-th write or delete, for every N, each
/// on a fresh copy of the table, until one completes: after each failure the table reads the
/// same, and the next archival leaves a bounded timeline and one archived entry per state.
#[tokio::test]
async fn an_archival_that_fails_anywhere_leaves_the_table_readable_and_the_next_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let template = tmp.path().join("t");
    let ctx = six_commits(tmp.path(), &template).await;
    let query = "SELECT id, v, p, _hoodie_commit_time FROM t ORDER BY id";
    let before = rows(&ctx, query).await;
    let (spec, clean) = (archive_spec(2, 3), clean_spec(10));
    let mut n = 1;
    let expected = loop {
        let loc = tmp.path().join(format!("run{n}"));
        let (storage, _store, table) = common::failing_copy(&template, &loc, n).await;
        let failed = match run_archive(&table, &spec, &clean).await {
            Err(e) => {
                assert!(e.to_string().contains("injected failure"), "{n}: {e}");
                true
            }
            Ok(done) => {
                assert_eq!(done.len(), 12, "{done:?}");
                false
            }
        };
        let read = reader(tmp.path(), &loc).await;
        assert_eq!(rows(&read, query).await, before, "after failing at {n}");
        if !failed {
            // the archive file and twelve deletes
            assert_eq!(n - 1, 13);
            break timeline_files(&loc);
        }
        // the next archival runs from what is left: a failure after the archive file was
        // written leaves instants in both timelines (readers of the archive keep one entry per
        // state), one in the completed commits' deletes a timeline of three commits at most
        let table = HudiTable::open(storage.clone()).await.unwrap();
        run_archive(&table, &spec, &clean).await.unwrap();
        let active = completed_commits(&loc).len();
        assert!((2..=3).contains(&active), "at {n}: {active}");
        let entries = archived_entries(&table).await.unwrap();
        assert_eq!(
            entries.len(),
            12,
            "at {n}: one entry per archived instant state"
        );
        assert_eq!(rows(&read, query).await, before);
        n += 1;
        assert!(n < 50);
    };
    assert_eq!(
        expected.iter().filter(|f| f.ends_with(".commit")).count(),
        2
    );
}

#[tokio::test]
async fn writes_archive_merge_on_read_tables_with_their_compactions() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let create = "CREATE TABLE t (id INT, v STRING) USING hudi TBLPROPERTIES (type = 'mor', primaryKey = 'id', 'hoodie.compact.inline.max.delta.commits' = '2', 'hoodie.cleaner.commits.retained' = '1', 'hoodie.keep.min.commits' = '2', 'hoodie.keep.max.commits' = '3', 'hoodie.write.table.version' = '6')";
    let ctx = session_with_table(tmp.path(), None, create, &loc).await;
    ctx.run("INSERT INTO t VALUES (1, 'a'), (2, NULL)")
        .await
        .unwrap();
    for v in ["b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"] {
        ctx.run(&format!("UPDATE t SET v = '{v}' WHERE id = 1"))
            .await
            .unwrap();
    }
    let table = HudiTable::open(TableStorage::local(&loc).unwrap())
        .await
        .unwrap();
    let entries = archived_entries(&table).await.unwrap();
    let actions: std::collections::BTreeSet<&str> =
        entries.iter().map(|e| e.instant.action.as_str()).collect();
    // deltacommits, compactions (their plans and commits) and cleans were archived
    for a in ["deltacommit", "compaction", "commit", "clean"] {
        assert!(actions.contains(a), "{actions:?}");
    }
    assert!(entries
        .iter()
        .any(|e| e.instant.action == Action::Compaction && e.compaction_operations().is_some()));
    assert!(entries
        .iter()
        .any(|e| e.instant.action == Action::Clean && e.clean_metadata().is_some()));
    let compacted = entries
        .iter()
        .filter(|e| e.instant.action == Action::Commit && e.instant.state == State::Completed)
        .map(|e| CommitMetadata::parse(&e.commit_metadata_json().unwrap(), "j").unwrap())
        .next()
        .unwrap();
    assert_eq!(compacted.operation_type.as_deref(), Some("COMPACT"));
    // show_compaction lists the archived compactions too with showArchived, newest last
    let times = |rows: Vec<Vec<String>>| {
        let mut t: Vec<String> = rows.into_iter().map(|r| r[0].clone()).collect();
        t.dedup();
        t
    };
    let active = times(rows(&ctx, "CALL show_compaction(table => 't', limit => 100)").await);
    let all = times(
        rows(
            &ctx,
            "CALL show_compaction(table => 't', limit => 100, showArchived => true)",
        )
        .await,
    );
    let archived_compactions = entries
        .iter()
        .filter(|e| e.instant.action == Action::Compaction && e.instant.state == State::Requested)
        .count();
    assert!(archived_compactions > 0);
    assert_eq!(all.len(), active.len() + archived_compactions, "{all:?}");
    assert_eq!(all[..active.len()], active[..]);
    assert!(
        timeline_files(&loc)
            .iter()
            .filter(|f| f.ends_with("commit"))
            .count()
            <= 4
    );
    assert_eq!(
        rows(&ctx, "SELECT id, v FROM t ORDER BY id").await,
        [["1", "m"], ["2", ""]]
    );
}

/// Archives `table` through its table services, as a single writer.
async fn run_archive(
    table: &HudiTable,
    spec: &ArchiveSpec,
    clean: &CleanSpec,
) -> hoodie_format::Result<Vec<hoodie_format::timeline::Instant>> {
    TableServices::new(table, ConcurrencySpec::single_writer())
        .archive(spec, clean)
        .await
}
