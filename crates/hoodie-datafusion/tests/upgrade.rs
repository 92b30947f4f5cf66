//! `CALL upgrade_table`: tables of version 6 upgraded to 8 and 9 as Hudi's upgrade handlers
//! do. The table reads the same rows at every commit after as before, its timeline is in
//! `.hoodie/timeline/` with completion times and Avro commit metadata, writes and table
//! services go on at the new version, and an upgrade that fails at any write leaves the table
//! readable (as the old version or the new) and the next one finishes it. The archived timeline
//! of version 6 moves into the LSM history.

mod common;

use common::{cells, files_under, has, properties, reader, set_property, UNUPGRADABLE};
use hoodie_datafusion::HoodieContext;

/// A version 6 table `t` at `loc` (`props` added to its properties) after an insert, an
/// update, a delete and a merge: four commits (deltacommits on merge-on-read).
async fn version_6_table(
    tmp: &std::path::Path,
    loc: &std::path::Path,
    props: &str,
) -> HoodieContext {
    let props = format!(", 'hoodie.write.table.version' = '6'{props}");
    common::table_after_every_dml(tmp, loc, &props, false).await
}

const ROWS: &str = "SELECT id, name, ts, dt, _hoodie_commit_time FROM t ORDER BY id";

/// The table's rows as of each of its active commits, and now.
async fn history(ctx: &HoodieContext) -> Vec<Vec<Vec<String>>> {
    let commits = common::commit_times(ctx).await;
    common::rows_as_of(ctx, &commits, ROWS).await
}

#[tokio::test]
async fn a_version_6_table_upgrades_to_9_and_reads_and_writes_as_before() {
    for (props, mor) in [
        ("", false),
        (
            ", type = 'mor', 'hoodie.compact.inline' = 'false', \
             'hoodie.compact.inline.max.delta.commits' = '1'",
            true,
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let loc = tmp.path().join("t");
        let ctx = version_6_table(tmp.path(), &loc, props).await;
        if mor {
            ctx.run("SCHEDULE COMPACTION ON t").await.unwrap();
        }
        let before = history(&ctx).await;
        let commits = cells(&ctx, "CALL show_commits(table => 't', limit => 100)").await;
        let result = cells(
            &ctx,
            "CALL upgrade_table(table => 't', to_version => 'NINE')",
        )
        .await;
        assert_eq!(result, [["true"]], "{props}");
        let p = properties(&loc);
        for line in [
            "hoodie.table.version=9",
            "hoodie.table.initial.version=6",
            "hoodie.timeline.layout.version=2",
            "hoodie.timeline.path=timeline",
            "hoodie.table.keygenerator.type=SIMPLE",
            "hoodie.record.merge.mode=EVENT_TIME_ORDERING",
        ] {
            assert!(has(&p, line), "{props}: {line} in\n{p}");
        }
        // as Hudi 1.2's upgrade leaves it: the payload class retired, the ordering field named
        assert!(has(&p, "hoodie.table.ordering.fields=ts"), "{p}");
        assert!(!p.contains("hoodie.table.precombine.field"), "{p}");
        assert!(!p.contains("hoodie.compaction.payload.class"), "{p}");
        assert!(has(&p, "hoodie.table.legacy.payload.class=org.apache.hudi.common.model.DefaultHoodieRecordPayload"), "{p}");
        // every instant moved: none left in .hoodie, each completed one named T_C.action
        let top: Vec<String> = std::fs::read_dir(loc.join(".hoodie"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('2'))
            .collect();
        assert!(top.is_empty(), "{top:?}");
        let moved = files_under(&loc.join(".hoodie/timeline"));
        let action = if mor { "deltacommit" } else { "commit" };
        for c in &commits {
            let done = moved
                .iter()
                .find(|f| f.starts_with(&format!("{}_", c[0])) && f.ends_with(action))
                .unwrap_or_else(|| panic!("{} in {moved:?}", c[0]));
            let body = std::fs::read(loc.join(".hoodie/timeline").join(done)).unwrap();
            assert!(body.starts_with(b"Obj\x01"), "{done} is Avro");
        }
        // the session reads the same table at every commit, and a new session too
        assert_eq!(history(&ctx).await, before, "{props}");
        let fresh = reader(tmp.path(), &loc).await;
        assert_eq!(history(&fresh).await, before, "{props}: a new session");
        assert_eq!(
            cells(&ctx, "CALL show_commits(table => 't', limit => 100)")
                .await
                .len(),
            commits.len()
        );
        // writes go on at version 9, and a compaction planned before the upgrade runs
        ctx.run("UPDATE t SET name = 'z', ts = 9 WHERE id = 4")
            .await
            .unwrap();
        if mor {
            ctx.run("RUN COMPACTION ON t").await.unwrap();
            assert!(moved.iter().any(|f| f.ends_with(".compaction.requested")));
        }
        assert_eq!(
            cells(&ctx, "SELECT id, name FROM t ORDER BY id").await,
            [["1", "A"], ["2", "B"], ["4", "z"]]
        );
        assert!(has(&properties(&loc), "hoodie.table.version=9"));
        let now = files_under(&loc.join(".hoodie/timeline"));
        assert!(now.len() > moved.len(), "{now:?}");
    }
}

#[tokio::test]
async fn version_8_then_9_and_what_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = version_6_table(tmp.path(), &loc, "").await;
    let before = cells(&ctx, ROWS).await;
    ctx.run("CALL upgrade_table(table => 't', to_version => 'EIGHT')")
        .await
        .unwrap();
    let p = properties(&loc);
    assert!(has(&p, "hoodie.table.version=8"), "{p}");
    assert!(!p.contains("hoodie.table.format"), "{p}");
    assert_eq!(cells(&ctx, ROWS).await, before);
    let refused = [
        ("SEVEN", "among versions 6, 8 and 9, not to 7"),
        ("TEN", "among versions 6, 8 and 9, not to 10"),
        ("eleven", "must be a table version"),
    ];
    for (to, why) in refused {
        let sql = format!("CALL downgrade_table(table => 't', to_version => '{to}')");
        let err = ctx.run(&sql).await.unwrap_err().to_string();
        assert!(err.contains(why), "{to}: {err}");
        assert_eq!(properties(&loc), p, "{to}: nothing changed");
    }
    ctx.run("CALL upgrade_table(table => 't', to_version => '9')")
        .await
        .unwrap();
    assert!(has(&properties(&loc), "hoodie.table.version=9"));
    // the same version again changes nothing
    let p = properties(&loc);
    ctx.run("CALL upgrade_table(table => 't', to_version => 'NINE')")
        .await
        .unwrap();
    assert_eq!(properties(&loc), p);
    assert_eq!(cells(&ctx, ROWS).await, before);
}

/// A merge-on-read table is compacted first, from 6 and from 8, as Hudi's upgrade handlers do
/// (every file slice with log files, once a deltacommit followed the last compaction): the
/// logs' slices change meaning with completion times. The rows are as before.
#[tokio::test]
async fn merge_on_read_tables_are_compacted_before_they_upgrade() {
    for (version, to) in [("6", "9"), ("8", "9"), ("6", "8")] {
        let tmp = tempfile::tempdir().unwrap();
        let loc = tmp.path().join("t");
        let props = format!(", type = 'mor', 'hoodie.write.table.version' = '{version}'");
        let ctx = version_6_table(tmp.path(), &loc, &props).await;
        let start = format!("hoodie.table.version={version}");
        assert!(has(&properties(&loc), &start), "{version}");
        let before = cells(&ctx, ROWS).await;
        let sql = format!("CALL upgrade_table(table => 't', to_version => '{to}')");
        ctx.run(&sql).await.unwrap();
        let timeline = files_under(&loc.join(".hoodie/timeline"));
        let compactions: Vec<_> = timeline
            .iter()
            .filter(|f| f.ends_with(".compaction.requested"))
            .collect();
        assert_eq!(compactions.len(), 1, "{version}: {timeline:?}");
        let instant = &compactions[0][..17];
        assert!(
            timeline
                .iter()
                .any(|f| f.starts_with(&format!("{instant}_")) && f.ends_with(".commit")),
            "{version}: the compaction completed: {timeline:?}"
        );
        assert_eq!(cells(&ctx, ROWS).await, before, "{version}");
        let logs = files_under(&loc)
            .into_iter()
            .filter(|f| f.contains(".log."))
            .count();
        assert!(logs > 0, "{version}: the logs stay until a clean");
        assert!(has(
            &properties(&loc),
            &format!("hoodie.table.version={to}")
        ));
    }
}

/// What an upgrade cannot carry over is refused before anything changes: a write left pending
/// (which an upgrade rolls back first) is still there, and every file is as it was.
#[tokio::test]
async fn what_cannot_be_upgraded_is_refused_untouched() {
    for (key, value, why) in UNUPGRADABLE {
        let tmp = tempfile::tempdir().unwrap();
        let loc = tmp.path().join("t");
        version_6_table(tmp.path(), &loc, "").await;
        let pending = loc.join(".hoodie/20200101000000000.inflight");
        std::fs::write(loc.join(".hoodie/20200101000000000.commit.requested"), b"").unwrap();
        std::fs::write(&pending, b"").unwrap();
        set_property(&loc, key, value);
        let files = files_under(&loc);
        let before = properties(&loc);
        let ctx = reader(tmp.path(), &loc).await;
        let err = ctx
            .run("CALL upgrade_table(table => 't', to_version => 'NINE')")
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains(why), "{key}: {err}");
        assert!(
            pending.exists(),
            "{key}: the pending write was not rolled back"
        );
        assert_eq!(files_under(&loc), files, "{key}");
        assert_eq!(properties(&loc), before, "{key}");
    }
}

const ARCHIVED: &str = "CALL show_archived_commits(table => 't', start_ts => '000', \
                        end_ts => '99999999999999999', limit => 1000)";

/// A version 6 table whose oldest commits were archived into `.hoodie/archived`.
async fn archived_table(tmp: &std::path::Path, loc: &std::path::Path) -> HoodieContext {
    let archive = ", 'hoodie.cleaner.commits.retained' = '1', \
                   'hoodie.keep.min.commits' = '2', 'hoodie.keep.max.commits' = '3'";
    let ctx = version_6_table(tmp, loc, archive).await;
    for ts in 10..13 {
        let sql = format!("UPDATE t SET ts = {ts} WHERE id = 1");
        ctx.run(&sql).await.unwrap();
    }
    assert!(!files_under(&loc.join(".hoodie/archived")).is_empty());
    ctx
}

#[tokio::test]
async fn archived_instants_move_into_the_lsm_history() {
    let tmp = tempfile::tempdir().unwrap();
    let loc = tmp.path().join("t");
    let ctx = archived_table(tmp.path(), &loc).await;
    let archived = cells(&ctx, ARCHIVED).await;
    assert!(archived.len() >= 3, "{archived:?}");
    let before = history(&ctx).await;
    ctx.run("CALL upgrade_table(table => 't', to_version => 'NINE')")
        .await
        .unwrap();
    let lsm = files_under(&loc.join(".hoodie/timeline/history"));
    assert!(lsm.iter().any(|f| f.ends_with("_0.parquet")), "{lsm:?}");
    assert!(lsm.contains(&"_version_".to_string()), "{lsm:?}");
    // the same archived commits, with their metadata, now read from the LSM history
    assert_eq!(cells(&ctx, ARCHIVED).await, archived);
    let fresh = reader(tmp.path(), &loc).await;
    assert_eq!(cells(&fresh, ARCHIVED).await, archived);
    assert_eq!(history(&fresh).await, before);
    // archival goes on into the same history
    for ts in 20..24 {
        let sql = format!("UPDATE t SET ts = {ts} WHERE id = 2");
        ctx.run(&sql).await.unwrap();
    }
    let now = cells(&ctx, ARCHIVED).await;
    assert!(now.len() > archived.len(), "{now:?}");
    for row in &archived {
        assert!(now.contains(row), "{row:?} still archived");
    }
}

/// An upgrade that fails at its n-th write or delete, for every n: the table reads the same
/// rows at every commit (as version 6 before the properties switch, 9 after), and the next
/// upgrade finishes it.
#[tokio::test]
async fn an_upgrade_that_fails_anywhere_leaves_the_table_readable() {
    let tmp = tempfile::tempdir().unwrap();
    let template = tmp.path().join("template");
    let ctx = archived_table(tmp.path(), &template).await;
    let before = history(&ctx).await;
    let archived = cells(&ctx, ARCHIVED).await;
    let read: common::TableRead<_> =
        |ctx, _| Box::pin(async move { (history(&ctx).await, cells(&ctx, ARCHIVED).await) });
    let expected = (before, archived);
    let n = common::version_change_fails_anywhere(tmp.path(), &template, 9, &expected, read).await;
    assert!(n > 10, "the upgrade wrote {n} times");
}
