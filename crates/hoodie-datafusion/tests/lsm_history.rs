//! Archival of tables of version 9 into Hudi 1.x's LSM history (`.hoodie/timeline/history/`):
//! the files an archival writes (a level-0 Parquet file per archival, a manifest per snapshot,
//! `_version_`), their compaction into the next level and the cleaning of old snapshots, the
//! archived timeline read back by the procedures, and an archival that fails at any write or
//! delete: the table reads the same and the next archival goes on.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{cells as rows, reader, session_with_table};
use hoodie_format::archive::{archived_entries, ArchiveSpec, HistorySpec};
use hoodie_format::clean::{CleanPolicy, CleanSpec};
use hoodie_format::client::TableServices;
use hoodie_format::concurrency::ConcurrencySpec;
use hoodie_format::timeline::{Action, State};
use hoodie_format::HudiTable;

fn history(loc: &Path) -> std::path::PathBuf {
    loc.join(".hoodie/timeline/history")
}

/// The names of the history folder's files.
fn history_files(loc: &Path) -> BTreeSet<String> {
    match std::fs::read_dir(history(loc)) {
        Ok(dir) => dir
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => BTreeSet::new(),
    }
}

/// The (file name, length) entries of the snapshot `_version_` names.
fn latest_manifest(loc: &Path) -> Vec<(String, u64)> {
    let version = std::fs::read_to_string(history(loc).join("_version_")).unwrap();
    let text =
        std::fs::read_to_string(history(loc).join(format!("manifest_{}", version.trim()))).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["fileName"].as_str().unwrap().to_string(),
                f["fileLen"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The completed instants on the active timeline whose action is one of `actions`.
fn completed(loc: &Path, actions: &[&str]) -> usize {
    std::fs::read_dir(loc.join(".hoodie/timeline"))
        .unwrap()
        .filter(|e| {
            let n = e
                .as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .into_owned();
            let action = n.rsplit('.').next().unwrap_or_default().to_string();
            n.contains('_') && actions.contains(&action.as_str())
        })
        .count()
}

/// The completed writes on the active timeline.
fn active_writes(loc: &Path) -> usize {
    completed(loc, &["commit", "deltacommit"])
}

/// Writes with automatic archival into the history: level-0 files compacted two at a time,
/// one snapshot kept (plus one per level compacted), the rows and the archived commits read
/// back.
#[tokio::test]
async fn writes_archive_a_version_9_table_into_the_lsm_history() {
    for kind in ["cow", "mor"] {
        let tmp = tempfile::tempdir().unwrap();
        let loc = tmp.path().join("t");
        let create = format!(
            "CREATE TABLE t (id INT, `Name` STRING, p STRING) USING hudi PARTITIONED BY (p) \
             TBLPROPERTIES (type = '{kind}', primaryKey = 'id', \
             'hoodie.write.table.version' = '9', 'hoodie.cleaner.commits.retained' = '1', \
             'hoodie.keep.min.commits' = '2', 'hoodie.keep.max.commits' = '3', \
             'hoodie.compact.inline.max.delta.commits' = '2', \
             'hoodie.timeline.compaction.batch.size' = '2', \
             'hoodie.timeline.manifest.retained.versions' = '1')"
        );
        let ctx = session_with_table(tmp.path(), None, &create, &loc).await;
        ctx.run("INSERT INTO t VALUES (1, NULL, 'x'), (2, 'b', 'y')")
            .await
            .unwrap();
        let writes = 12;
        for n in 1..writes {
            ctx.run(&format!("UPDATE t SET `Name` = 'n{n}' WHERE id = 1"))
                .await
                .unwrap();
        }
        let files = history_files(&loc);
        assert!(files.contains("_version_"), "{kind}: {files:?}");
        let manifest = latest_manifest(&loc);
        assert!(!manifest.is_empty(), "{kind}");
        for (name, len) in &manifest {
            let size = std::fs::metadata(history(&loc).join(name)).unwrap().len();
            assert_eq!(size, *len, "{kind}: {name}");
        }
        assert!(
            manifest.iter().any(|(n, _)| !n.ends_with("_0.parquet")),
            "{kind}: level-0 files were compacted into a deeper level: {manifest:?}"
        );
        // old snapshots and the files only they named were cleaned
        let manifests = files.iter().filter(|f| f.starts_with("manifest_")).count();
        assert!(manifests <= 4, "{kind}: {files:?}");
        let named: BTreeSet<&String> = manifest.iter().map(|(n, _)| n).collect();
        let parquet: BTreeSet<&String> = files.iter().filter(|f| f.ends_with(".parquet")).collect();
        assert!(parquet.len() <= named.len() + 4, "{kind}: {files:?}");
        assert!(active_writes(&loc) <= 4, "{kind}");
        assert_eq!(
            rows(&ctx, "SELECT id, `Name`, p FROM t ORDER BY id").await,
            [["1", "n11", "x"], ["2", "b", "y"]],
            "{kind}"
        );
        // every write is on one timeline or the other, once
        let archived = rows(
            &ctx,
            "CALL show_archived_commits(table => 't', limit => 1000, \
             start_ts => '000', end_ts => '99999999999999999')",
        )
        .await
        .len();
        let active = rows(&ctx, "CALL show_commits(table => 't', limit => 1000)")
            .await
            .len();
        let compactions = if kind == "mor" { writes / 2 } else { 0 };
        assert!(archived > 0, "{kind}");
        assert_eq!(
            archived + active,
            writes + compactions,
            "{kind}: archived {archived}, active {active}"
        );
        // the archived cleans, with their metadata
        let cleans = rows(
            &ctx,
            "CALL show_cleans(table => 't', limit => 1000, showArchived => true)",
        )
        .await
        .len();
        let on_disk = completed(&loc, &["clean"]);
        assert!(cleans > on_disk, "{kind}: archived cleans are listed");
    }
}

fn specs() -> (ArchiveSpec, CleanSpec) {
    let archive = ArchiveSpec {
        automatic: true,
        min_commits: 2,
        max_commits: 3,
        batch: 10,
        beyond_savepoint: false,
        compaction_delta_commits: None,
        history: HistorySpec {
            compaction_batch: 10,
            retained_versions: 3,
        },
    };
    let clean = CleanSpec {
        automatic: false,
        policy: CleanPolicy::KeepLatestCommits,
        commits_retained: 10,
        hours_retained: 24,
        file_versions_retained: 3,
        max_commits: 1,
        incremental: true,
    };
    (archive, clean)
}

/// An archival of a version 9 table failed at its 1st, 2nd, ... write or delete, each on a
/// fresh copy, until one completes: after each failure the table reads the same, and the next
/// archival leaves a bounded timeline and each archived instant once in the history.
#[tokio::test]
async fn an_archival_into_the_history_that_fails_anywhere_leaves_the_table_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let template = tmp.path().join("t");
    let create = "CREATE TABLE t (id INT, v STRING, p STRING) USING hudi PARTITIONED BY (p) \
                  TBLPROPERTIES (primaryKey = 'id', 'hoodie.write.table.version' = '9', \
                  'hoodie.clean.automatic' = 'false', 'hoodie.archive.automatic' = 'false')";
    let ctx = session_with_table(tmp.path(), None, create, &template).await;
    ctx.run("INSERT INTO t VALUES (1, 'a', 'x'), (2, NULL, 'y')")
        .await
        .unwrap();
    for v in ["b", "c", "d", "e", "f"] {
        ctx.run(&format!("UPDATE t SET v = '{v}' WHERE id = 1"))
            .await
            .unwrap();
    }
    let query = "SELECT id, v, p, _hoodie_commit_time FROM t ORDER BY id";
    let before = rows(&ctx, query).await;
    let (spec, clean) = specs();
    let archive = |table: HudiTable| {
        let (spec, clean) = (spec.clone(), clean.clone());
        async move {
            TableServices::new(&table, ConcurrencySpec::single_writer())
                .archive(&spec, &clean)
                .await
        }
    };
    let mut n = 1;
    loop {
        let loc = tmp.path().join(format!("run{n}"));
        let (storage, _store, table) = common::failing_copy(&template, &loc, n).await;
        let failed = match archive(table).await {
            Err(e) => {
                assert!(e.to_string().contains("injected failure"), "{n}: {e}");
                true
            }
            Ok(done) => {
                // four commits, each with its requested, inflight and completed file
                assert_eq!(done.len(), 12, "{done:?}");
                false
            }
        };
        let read = reader(tmp.path(), &loc).await;
        assert_eq!(rows(&read, query).await, before, "after failing at {n}");
        if !failed {
            // the data file, the manifest, _version_ and twelve deletes
            assert_eq!(n - 1, 15);
            assert_eq!(latest_manifest(&loc).len(), 1);
            break;
        }
        let table = HudiTable::open(storage.clone()).await.unwrap();
        archive(table).await.unwrap();
        let active = active_writes(&loc);
        assert!((2..=3).contains(&active), "at {n}: {active}");
        let table = HudiTable::open(storage.clone()).await.unwrap();
        let entries = archived_entries(&table).await.unwrap();
        assert_eq!(entries.len(), 4, "at {n}: each archived commit once");
        assert!(entries
            .iter()
            .all(|e| e.instant.action == Action::Commit && e.instant.state == State::Completed));
        assert!(entries.iter().all(|e| e.commit_metadata_json().is_some()));
        assert_eq!(rows(&read, query).await, before);
        n += 1;
        assert!(n < 50);
    }
}
