//! `CALL downgrade_table`: tables of version 9 moved down to 8 and 6 as Hudi 1.2's downgrade
//! handlers do. The table reads the same rows at every commit after as before, its timeline is
//! back in `.hoodie/` with JSON commit metadata and each completed file modified at its
//! completion time, writes go on at the old version, and a downgrade that fails at any write
//! leaves the table readable (as the new version or the old) and the next one finishes it.

mod common;

use common::{cells, commit_times, files_under, has, properties, reader, rows_as_of};
use hoodie_datafusion::HoodieContext;

const ROWS: &str = "SELECT id, name, ts, dt FROM t ORDER BY id";

/// A version 9 table `t` at `loc` (`props` added to its properties) after an insert, an
/// insert overwrite, an update, a delete and a merge.
async fn version_9_table(
    tmp: &std::path::Path,
    loc: &std::path::Path,
    props: &str,
) -> HoodieContext {
    common::table_after_every_dml(tmp, loc, props, true).await
}

/// The completed instant files of the layout-2 timeline, as (requested, completion, action).
fn completed_layout_2(loc: &std::path::Path) -> Vec<(String, String, String)> {
    files_under(&loc.join(".hoodie/timeline"))
        .into_iter()
        .filter(|f| !f.contains('/'))
        .filter_map(|f| {
            let (head, action) = f.split_once('.')?;
            let (t, c) = head.split_once('_')?;
            (!action.contains('.')).then(|| (t.to_string(), c.to_string(), action.to_string()))
        })
        .collect()
}

#[tokio::test]
async fn a_version_9_table_goes_down_to_8_and_6_and_reads_and_writes_as_before() {
    for (props, mor) in [("", false), (", type = 'mor'", true)] {
        let tmp = tempfile::tempdir().unwrap();
        let loc = tmp.path().join("t");
        let ctx = version_9_table(tmp.path(), &loc, props).await;
        if mor {
            // compacted now, so the downgrade has no log to compact (the upgrade tests and
            // tests/spark/turns.py check that compaction)
            ctx.run("SCHEDULE COMPACTION ON t").await.unwrap();
            ctx.run("RUN COMPACTION ON t").await.unwrap();
        }
        let commits = commit_times(&ctx).await;
        let before = rows_as_of(&ctx, &commits, ROWS).await;
        let result = "CALL downgrade_table(table => 't', to_version => 'EIGHT')";
        assert_eq!(cells(&ctx, result).await, [["true"]], "{props}");
        let p = properties(&loc);
        for line in [
            "hoodie.table.version=8",
            "hoodie.table.precombine.field=ts",
            "hoodie.record.merge.strategy.id=eeb8d96f-b1e4-49fd-bbf8-28ac514178e5",
        ] {
            assert!(has(&p, line), "{props}: {line} in\n{p}");
        }
        assert_eq!(rows_as_of(&ctx, &commits, ROWS).await, before, "{props}");
        let completed = completed_layout_2(&loc);
        assert!(!completed.is_empty());
        ctx.run("CALL downgrade_table(table => 't', to_version => 'SIX')")
            .await
            .unwrap();
        let p = properties(&loc);
        for line in [
            "hoodie.table.version=6",
            "hoodie.timeline.layout.version=1",
            "hoodie.table.keygenerator.class=org.apache.hudi.keygen.SimpleKeyGenerator",
        ] {
            assert!(has(&p, line), "{props}: {line} in\n{p}");
        }
        assert!(!p.contains("hoodie.record.merge.mode"), "{p}");
        // every instant moved back into .hoodie, completed ones modified at their completion
        assert!(completed_layout_2(&loc).is_empty());
        for (t, c, action) in &completed {
            let file = loc.join(format!(".hoodie/{t}.{action}"));
            let body = std::fs::read(&file).unwrap();
            if ["commit", "deltacommit", "replacecommit"].contains(&action.as_str()) {
                assert!(body.starts_with(b"{"), "{t}.{action} is JSON");
            }
            let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
            let millis = modified
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis();
            let at = hoodie_format::timeline::millis_to_instant(millis as i64);
            assert_eq!(&at, c, "{t}.{action}");
        }
        // the same rows at every commit, in this session and a new one
        assert_eq!(rows_as_of(&ctx, &commits, ROWS).await, before, "{props}");
        let fresh = reader(tmp.path(), &loc).await;
        assert_eq!(rows_as_of(&fresh, &commits, ROWS).await, before, "{props}");
        // writes go on at 6, and the table goes up to 9 again
        ctx.run("UPDATE t SET name = 'z', ts = 9 WHERE id = 4")
            .await
            .unwrap();
        ctx.run("INSERT INTO t VALUES (5, 'e', 1, 'x')")
            .await
            .unwrap();
        assert!(has(&properties(&loc), "hoodie.table.version=6"));
        let now = [
            ["1", "A", "3", "x"],
            ["2", "B", "2", "y"],
            ["4", "z", "9", "z"],
            ["5", "e", "1", "x"],
        ];
        assert_eq!(cells(&ctx, ROWS).await, now);
        ctx.run("CALL upgrade_table(table => 't', to_version => 'NINE')")
            .await
            .unwrap();
        assert!(has(&properties(&loc), "hoodie.table.version=9"));
        assert_eq!(cells(&ctx, ROWS).await, now);
    }
}

/// A downgrade that fails at its n-th write or delete, for every n: the table reads the same
/// rows at every commit (as version 9 before the properties switch, 6 after), and the next
/// downgrade finishes it.
#[tokio::test]
async fn a_downgrade_that_fails_anywhere_leaves_the_table_readable() {
    let tmp = tempfile::tempdir().unwrap();
    let template = tmp.path().join("template");
    let ctx = version_9_table(tmp.path(), &template, "").await;
    let commits = commit_times(&ctx).await;
    let before = rows_as_of(&ctx, &commits, ROWS).await;
    let read: common::TableRead<_> = |ctx, _| {
        Box::pin(async move {
            let commits = commit_times(&ctx).await;
            rows_as_of(&ctx, &commits, ROWS).await
        })
    };
    let n = common::version_change_fails_anywhere(tmp.path(), &template, 6, &before, read).await;
    assert!(n > 10, "the downgrade wrote {n} times");
}
