//! The values of `CALL show_commits` and `show_commits_metadata`, which carry instants and
//! sizes (sql-tests/services/show_procedures.slt checks the rest): one row per completed write,
//! newest first, and one per write stat, against the commit files on disk.

mod common;

use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::Int64Type;
use hoodie_datafusion::{HoodieConfig, HoodieContext, StatementOutput};

async fn batch(ctx: &HoodieContext, sql: &str) -> RecordBatch {
    let StatementOutput::Rows { batches, .. } = ctx.run(sql).await.unwrap() else {
        panic!("{sql} returned no rows")
    };
    datafusion::arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap()
}

fn texts(b: &RecordBatch, col: &str) -> Vec<String> {
    let c = b.column_by_name(col).unwrap().as_string::<i32>();
    (0..c.len()).map(|r| c.value(r).to_string()).collect()
}

fn longs(b: &RecordBatch, col: &str) -> Vec<i64> {
    b.column_by_name(col)
        .unwrap()
        .as_primitive::<Int64Type>()
        .values()
        .to_vec()
}

/// The requested time of a completed instant's name without its action: `T` (version 6) or
/// `T_C` (8 and 9).
fn requested_time(name: &str) -> String {
    name.split('_').next().unwrap_or(name).to_string()
}

/// The requested times of the completed commits on disk, oldest first.
fn commits_on_disk(table: &std::path::Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(common::timeline_dir(table))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        // `T.commit` on version 6, `T_C.commit` on 8 and 9
        .filter_map(|n| n.strip_suffix(".commit").map(requested_time))
        .collect();
    out.sort();
    out
}

#[tokio::test]
async fn show_commits_and_their_metadata_describe_the_timeline() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = HoodieContext::new(HoodieConfig::new(tmp.path().join("wh")))
        .await
        .unwrap();
    ctx.run("CREATE TABLE t (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id')")
        .await
        .unwrap();
    ctx.run("INSERT INTO t VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'y')")
        .await
        .unwrap();
    ctx.run("UPDATE t SET v = 'B' WHERE id = 2").await.unwrap();
    let on_disk = commits_on_disk(&tmp.path().join("wh").join("t"));
    assert_eq!(on_disk.len(), 2);

    let c = batch(&ctx, "CALL show_commits(table => 't')").await;
    assert_eq!(
        texts(&c, "commit_time"),
        [on_disk[1].clone(), on_disk[0].clone()]
    );
    assert_eq!(texts(&c, "action"), ["commit", "commit"]);
    assert_eq!(longs(&c, "total_files_added"), [0, 2]);
    assert_eq!(longs(&c, "total_files_updated"), [1, 0]);
    assert_eq!(longs(&c, "total_partitions_written"), [1, 2]);
    assert_eq!(longs(&c, "total_records_written"), [2, 3]);
    assert_eq!(longs(&c, "total_update_records_written"), [1, 0]);
    assert!(longs(&c, "total_bytes_written").iter().all(|&b| b > 0));
    let one = batch(&ctx, "CALL show_commits('t', 1)").await;
    assert_eq!(one.num_rows(), 1);

    let m = batch(&ctx, "CALL show_commits_metadata(table => 't')").await;
    assert_eq!(m.num_rows(), 3);
    assert_eq!(texts(&m, "commit_time")[0], on_disk[1]);
    assert_eq!(texts(&m, "partition")[0], "dt=y");
    assert_eq!(texts(&m, "previous_commit")[0], on_disk[0]);
    assert_eq!(longs(&m, "num_update_writes"), [1, 0, 0]);
    assert_eq!(longs(&m, "num_inserts"), [0, 1, 2]);

    let f = batch(
        &ctx,
        &format!(
            "CALL show_commit_files(table => 't', instant_time => '{}')",
            on_disk[0]
        ),
    )
    .await;
    assert_eq!(texts(&f, "partition_path"), ["dt=x", "dt=y"]);
    assert_eq!(texts(&f, "previous_commit"), ["null", "null"]);
    assert_eq!(longs(&f, "total_records_written"), [1, 2]);
    assert_eq!(longs(&f, "total_bytes_written"), longs(&f, "file_size"));
    let positional = batch(
        &ctx,
        &format!("CALL show_commit_files('t', 1, '{}')", on_disk[1]),
    )
    .await;
    assert_eq!(texts(&positional, "partition_path"), ["dt=y"]);
    assert_eq!(longs(&positional, "total_records_updated"), [1]);
}

/// `show_timeline`, `show_fsview_all` / `show_fsview_latest`, `stats_file_sizes` and
/// `stats_wa` against the timeline and files on disk of a merge-on-read table.
#[tokio::test]
async fn timeline_file_views_and_stats_describe_the_table() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = HoodieContext::new(HoodieConfig::new(tmp.path().join("wh")))
        .await
        .unwrap();
    ctx.run("CREATE TABLE m (id INT, v STRING, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES (type = 'mor', primaryKey = 'id', 'hoodie.compact.inline' = 'false', 'hoodie.compact.inline.max.delta.commits' = '1')")
        .await
        .unwrap();
    ctx.run("INSERT INTO m VALUES (1, 'a', 'x'), (2, 'b', 'y')")
        .await
        .unwrap();
    ctx.run("UPDATE m SET v = 'A' WHERE id = 1").await.unwrap();
    ctx.run("SCHEDULE COMPACTION ON m").await.unwrap();
    let dir = tmp.path().join("wh").join("m");
    let deltas: Vec<String> = {
        let mut v: Vec<String> = std::fs::read_dir(common::timeline_dir(&dir))
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().to_string();
                n.strip_suffix(".deltacommit").map(requested_time)
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(deltas.len(), 2);

    let t = batch(&ctx, "CALL show_timeline(table => 'm')").await;
    assert_eq!(texts(&t, "action")[1..], ["deltacommit", "deltacommit"]);
    assert_eq!(
        texts(&t, "instant_time")[1..],
        [deltas[1].clone(), deltas[0].clone()]
    );
    assert_eq!(texts(&t, "action")[0], "compaction");
    assert_eq!(texts(&t, "state")[0], "REQUESTED");
    assert_eq!(texts(&t, "completed_time")[0], "-");
    assert!(texts(&t, "timeline_type").iter().all(|x| x == "ACTIVE"));
    let only = batch(
        &ctx,
        "CALL show_timeline(table => 'm', filter => 'state = ''COMPLETED''')",
    )
    .await;
    assert_eq!(only.num_rows(), 2);
    let window = batch(
        &ctx,
        &format!(
            "CALL show_timeline(table => 'm', startTime => '{}', endTime => '{}')",
            deltas[1], deltas[1]
        ),
    )
    .await;
    assert_eq!(texts(&window, "instant_time"), [deltas[1].clone()]);

    let all = batch(&ctx, "CALL show_fsview_all(table => 'm')").await;
    assert_eq!(texts(&all, "partition"), ["dt=x", "dt=y"]);
    assert_eq!(longs(&all, "num_delta_files"), [1, 0]);
    assert!(longs(&all, "total_delta_file_size")[0] > 0);
    assert!(longs(&all, "data_file_size").iter().all(|&s| s > 0));
    let alias = batch(
        &ctx,
        "CALL show_file_system_view(table => 'm', path_regex => 'dt=y')",
    )
    .await;
    assert_eq!(texts(&alias, "partition"), ["dt=y"]);
    let latest = batch(&ctx, "CALL show_fsview_latest(table => 'm')").await;
    // the pending compaction plans the slice with a log file
    assert_eq!(
        longs(&latest, "delta_size_compaction_scheduled"),
        [longs(&all, "total_delta_file_size")[0], 0]
    );
    assert_eq!(longs(&latest, "delta_size_compaction_unscheduled"), [0, 0]);

    let sizes = batch(&ctx, "CALL stats_file_sizes(table => 'm')").await;
    assert_eq!(
        texts(&sizes, "commit_time"),
        [deltas[1].clone(), deltas[0].clone(), "ALL".to_string()]
    );
    assert_eq!(longs(&sizes, "num_files"), [1, 2, 3]);
    let wa = batch(&ctx, "CALL stats_wa(table => 'm')").await;
    assert_eq!(
        texts(&wa, "commit_time"),
        [deltas[0].clone(), deltas[1].clone(), "Total".into()]
    );
    assert_eq!(longs(&wa, "total_upserted"), [0, 1, 1]);
    assert_eq!(longs(&wa, "total_written"), [2, 1, 3]);
    assert_eq!(texts(&wa, "write_amplification_factor"), ["0", "1", "3"]);

    // a rollback's row says what it rolled back
    ctx.run("RUN COMPACTION ON m").await.unwrap();
    ctx.run("UPDATE m SET v = 'B' WHERE id = 2").await.unwrap();
    let last = texts(
        &batch(&ctx, "CALL show_commits(table => 'm', limit => 1)").await,
        "commit_time",
    )[0]
    .clone();
    ctx.run(&format!(
        "CALL rollback_to_instant(table => 'm', instant_time => '{last}')"
    ))
    .await
    .unwrap();
    let rb = batch(
        &ctx,
        "CALL show_timeline(table => 'm', filter => 'action = ''rollback''')",
    )
    .await;
    assert_eq!(texts(&rb, "rollback_info"), [format!("Rolled back {last}")]);
    assert_eq!(texts(&rb, "state"), ["COMPLETED"]);
}
