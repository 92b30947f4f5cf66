//! SIGTERM and SIGINT during a long MERGE: the `hoodie` process stops the statement, rolls its
//! write back and exits with 143 / 130; a new process reads the table exactly as before, no
//! pending instant is left and no file of the cancelled instant.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn hoodie(warehouse: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hoodie"));
    cmd.arg("--warehouse").arg(warehouse);
    cmd
}

fn run_sql(warehouse: &Path, sql: &str) -> String {
    let out: Output = hoodie(warehouse).arg("-c").arg(sql).output().unwrap();
    assert!(
        out.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every file under `dir`, relative to it.
fn files(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap();
                found.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    found.sort();
    found
}

/// The instant time of the write the MERGE began (a pending instant), once it exists.
fn wait_for_inflight(table: &Path, child: &mut Child) -> String {
    let started = Instant::now();
    loop {
        if let Some(name) = pending_instants(table).first() {
            return name.split('.').next().unwrap().to_string();
        }
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the MERGE ended ({status}) before its instant began");
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "no inflight instant"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Instant times with a requested or inflight file and no completed one.
fn pending_instants(table: &Path) -> Vec<String> {
    // the timeline of layout 2 (versions 8 and 9) is `.hoodie/timeline`, of version 6 `.hoodie`
    let layout2 = table.join(".hoodie/timeline");
    let dir = if layout2.is_dir() {
        layout2
    } else {
        table.join(".hoodie")
    };
    let timeline: Vec<String> = files(&dir)
        .into_iter()
        .filter(|f| !f.contains('/') && f.as_bytes()[0].is_ascii_digit())
        .collect();
    let mut pending: Vec<String> = timeline
        .iter()
        .filter(|f| f.ends_with(".requested") || f.ends_with(".inflight"))
        .filter(|f| {
            let (ts, rest) = f.split_once('.').unwrap();
            // a commit's inflight file is `T.inflight`
            let action = match rest.split('.').next().unwrap() {
                "inflight" => "commit",
                action => action,
            };
            // completed as `T.action` on version 6, `T_C.action` on 8 and 9
            !timeline.iter().any(|f| {
                f == &format!("{ts}.{action}")
                    || (f.starts_with(&format!("{ts}_")) && f.ends_with(&format!(".{action}")))
            })
        })
        .cloned()
        .collect();
    pending.sort();
    pending
}

fn setup(table_type: &str) -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let warehouse = dir.path().join("wh");
    run_sql(
        &warehouse,
        &format!(
            "CREATE TABLE t (id BIGINT, v STRING, ts INT) USING hudi \
             TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = '{table_type}'); \
             INSERT INTO t SELECT value AS id, 'before' AS v, 1 AS ts FROM range(1000)"
        ),
    );
    let before = run_sql(
        &warehouse,
        "SELECT count(*), sum(id), min(v), max(v), max(ts) FROM t",
    );
    (dir, warehouse, before)
}

/// A MERGE over a few million source rows: still running well after its instant began.
const LONG_MERGE: &str = "MERGE INTO t USING (SELECT value AS id, 'after' AS v, 2 AS ts \
    FROM range(4000000)) s ON t.id = s.id \
    WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *";

fn cancel_long_merge(table_type: &str, signal: libc::c_int, status: i32) {
    let (_dir, warehouse, before) = setup(table_type);
    let table = warehouse.join("t");
    let mut child = hoodie(&warehouse)
        .arg("-c")
        .arg(LONG_MERGE)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let instant = wait_for_inflight(&table, &mut child);
    // SAFETY: kill only sends a signal to the child this test started
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(status), "{stderr}");
    assert!(stderr.contains("cancelled"), "{stderr}");
    assert!(
        stderr.contains(&instant),
        "the rollback is reported: {stderr}"
    );
    let after = run_sql(
        &warehouse,
        "SELECT count(*), sum(id), min(v), max(v), max(ts) FROM t",
    );
    assert_eq!(after, before, "the table reads as before");
    assert_eq!(pending_instants(&table), Vec::<String>::new());
    let left: Vec<String> = files(&table)
        .into_iter()
        .filter(|f| !f.starts_with(".hoodie/") && f.contains(&instant))
        .collect();
    assert!(left.is_empty(), "files of {instant} left: {left:?}");
    // no marker file is left (an empty marker folder may be: local disk keeps the folders
    // object_store deletes files from, and object stores have none)
    let markers = format!(".hoodie/.temp/{instant}/");
    let left: Vec<String> = files(&table)
        .into_iter()
        .filter(|f| f.starts_with(&markers))
        .collect();
    assert!(left.is_empty(), "markers of {instant} left: {left:?}");
}

#[test]
fn sigterm_during_a_long_merge_rolls_it_back() {
    cancel_long_merge("cow", libc::SIGTERM, 143);
}

#[test]
fn sigint_during_a_long_merge_rolls_it_back() {
    cancel_long_merge("mor", libc::SIGINT, 130);
}
