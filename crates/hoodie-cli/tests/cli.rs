//! End-to-end tests of the `hoodie` binary in `-c`/`-f` mode.

use std::process::{Command, Output, Stdio};

fn hoodie(warehouse: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hoodie"))
        .arg("--warehouse")
        .arg(warehouse)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run hoodie")
}

#[test]
fn runs_commands_and_files_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.sql");
    std::fs::write(
        &script,
        "select 2 as two;\n-- comment\nselect 3 as three;\n",
    )
    .unwrap();
    let out = hoodie(
        &dir.path().join("wh"),
        &[
            "-c",
            "select 1 as one",
            "-f",
            script.to_str().unwrap(),
            "-c",
            "select 4 as four",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    let positions: Vec<usize> = ["| one |", "| two |", "| three |", "| four |"]
        .iter()
        .map(|h| {
            stdout
                .find(h)
                .unwrap_or_else(|| panic!("{h} missing in {stdout}"))
        })
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{stdout}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn first_error_stops_with_one_line_and_exit_code_1() {
    let dir = tempfile::tempdir().unwrap();
    let out = hoodie(
        &dir.path().join("wh"),
        &[
            "-c",
            "select 1 as one; select no_such_column; select 3 as three",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("| one |") && !stdout.contains("three"),
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("Error: "), "{stderr}");
    assert!(stderr.contains("no_such_column"), "{stderr}");
}

#[test]
fn missing_file_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let out = hoodie(&dir.path().join("wh"), &["-f", "/no/such/file.sql"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("Error: cannot read script /no/such/file.sql"),
        "{stderr}"
    );
}

#[test]
fn bad_memory_limit_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = hoodie(
        &dir.path().join("wh"),
        &["--memory-limit", "lots", "-c", "select 1"],
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn ddl_prints_nothing_and_empty_result_prints_header() {
    let dir = tempfile::tempdir().unwrap();
    let out = hoodie(
        &dir.path().join("wh"),
        &[
            "--memory-limit",
            "256M",
            "-c",
            "create view v as select 1 as c; select c from v where c > 5",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout, "+---+\n| c |\n+---+\n+---+\n");
}

#[test]
fn a_script_keeps_doubled_quotes_in_string_literals() {
    let dir = tempfile::tempdir().unwrap();
    let out = hoodie(
        &dir.path().join("wh"),
        &["-c", "select 'o''k' as q; select 'it''s;' as r"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        stdout.contains("| o'k |") && stdout.contains("| it's; |"),
        "{stdout}"
    );
}

#[test]
fn an_unknown_hoodie_key_is_kept_with_a_warning_naming_the_closest_key() {
    let dir = tempfile::tempdir().unwrap();
    let out = hoodie(
        &dir.path().join("wh"),
        &[
            "-c",
            "set hoodie.index.bloom.fp = 0.01; set hoodie.index.type = 'SIMPLE'",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim(),
        "Warning: hoodie.index.bloom.fp is not a key hoodie knows; it is kept but has no effect; did you mean hoodie.index.bloom.fpp?"
    );
}

#[test]
fn a_bad_option_value_is_an_error_and_leaves_no_instant() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let out = hoodie(
        &wh,
        &[
            "-c",
            "create table t (id int, v string) using hudi tblproperties (primaryKey = 'id'); \
             set hoodie.index.bloom.fpp = 0; insert into t values (1, 'a')",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim(),
        "Error: invalid value \"0\" for hoodie.index.bloom.fpp: expected a number greater than 0 and less than 1"
    );
    let instants: Vec<_> = std::fs::read_dir(wh.join("t/.hoodie"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('2'))
        .collect();
    assert!(instants.is_empty(), "{instants:?}");
}

/// A table whose files leave out the partition columns has them in a fresh session too (the
/// schema comes from the commits, not from a file).
#[test]
fn dropped_partition_columns_come_back_in_a_new_session() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let first = hoodie(
        &wh,
        &[
            "-c",
            "create table dp (id int, v string, dt string) using hudi partitioned by (dt) \
             tblproperties (primaryKey = 'id', hoodie.datasource.write.drop.partition.columns = 'true'); \
             insert into dp values (1, 'a', 'x'), (2, 'b', NULL)",
        ],
    );
    assert!(first.status.success(), "{first:?}");
    let second = hoodie(
        &wh,
        &[
            "-c",
            "update dp set v = 'u' where dt is null; select id, v, dt from dp order by id",
        ],
    );
    assert!(second.status.success(), "{second:?}");
    let stdout = String::from_utf8_lossy(&second.stdout);
    assert!(stdout.contains("| 1  | a | x  |"), "{stdout}");
    assert!(stdout.contains("| 2  | u |    |"), "{stdout}");
}

#[test]
fn timing_prints_each_statements_time_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let out = hoodie(
        &dir.path().join("wh"),
        &["--timing", "-c", "select 1 as one; select 2 as two"],
    );
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let times: Vec<&str> = stderr.lines().filter(|l| l.starts_with("Time: ")).collect();
    assert_eq!(times.len(), 2, "{stderr}");
    for t in times {
        let secs = t.trim_start_matches("Time: ").trim_end_matches('s');
        assert!(secs.parse::<f64>().is_ok(), "{t}");
    }
    // stdout keeps only the results
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("| one |") && !stdout.contains("Time"),
        "{stdout}"
    );
}

/// Deep expressions, long IN lists, huge literals and deeply nested subqueries: an answer or
/// an error, and the process exits normally (before, 10,000 terms aborted it).
#[test]
fn deep_statements_answer_or_fail_through_the_shell() {
    let dir = tempfile::tempdir().unwrap();
    let n = 100_000;
    let nested = |k: usize| {
        format!(
            "SELECT * FROM {}(SELECT 1 AS a) t0{}",
            "(SELECT * FROM ".repeat(k),
            (1..=k).map(|i| format!(") t{i}")).collect::<String>()
        )
    };
    let statements = [
        format!("SELECT {}", vec!["1"; n].join("+")),
        format!(
            "SELECT count(*) FROM (SELECT 1 AS a) t WHERE {}",
            vec!["a = 1"; n].join(" OR ")
        ),
        format!(
            "SELECT count(*) AS c FROM (SELECT 1 AS a) t WHERE a IN ({})",
            (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(", ")
        ),
        format!("SELECT length('{}') AS len", "x".repeat(1 << 20)),
        nested(1000),
        format!("SELECT {}1{}", "(".repeat(1000), ")".repeat(1000)),
        format!("SELECT {} AS s", vec!["1"; 900].join("+")),
    ];
    for (i, sql) in statements.iter().enumerate() {
        let script = dir.path().join(format!("deep{i}.sql"));
        std::fs::write(&script, format!("{sql};\n")).unwrap();
        let out = hoodie(&dir.path().join("wh"), &["-f", script.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "statement {i}: {:?} {stderr}",
            out.status
        );
        assert!(!stderr.contains("panicked"), "statement {i}: {stderr}");
    }
    // the flat ones answer
    let answer = |i: usize| {
        let script = dir.path().join(format!("deep{i}.sql"));
        let out = hoodie(&dir.path().join("wh"), &["-f", script.to_str().unwrap()]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert!(answer(2).contains("| 1 "), "{}", answer(2));
    assert!(answer(3).contains("1048576"));
    assert!(answer(6).contains("900"));
}

/// `--workers` takes HOST:PORT,...; a worker that does not answer fails the first statement
/// that runs on the workers, naming it, and changes nothing.
#[test]
fn workers_that_are_down_are_named_and_a_bad_list_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let out = hoodie(&wh, &["--workers", "a b", "-c", "select 1"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("a worker is HOST:PORT"));

    let made = hoodie(
        &wh,
        &[
            "-c",
            "create table t (id int, v string) using hudi tblproperties (primaryKey = 'id')",
            "-c",
            "insert into t values (1, 'a'), (2, 'b')",
        ],
    );
    assert!(made.status.success(), "{made:?}");
    // two ports nothing listens on, and every scan spread over them
    let out = hoodie(
        &wh,
        &[
            "--workers",
            "127.0.0.1:1,127.0.0.1:2",
            "--option",
            "distributed.file_scan_config_bytes_per_partition=1",
            "-c",
            "select count(*) from t",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(stderr.contains("worker on 'http://127.0.0.1:"), "{stderr}");
    let read = hoodie(&wh, &["-c", "select count(*) as n from t"]);
    assert!(
        String::from_utf8_lossy(&read.stdout).contains("| 2 |"),
        "{read:?}"
    );
}

/// `--option` takes DataFusion's own keys as `SET` does; an unknown one is an error.
#[test]
fn a_datafusion_option_is_set_and_an_unknown_one_refused() {
    let dir = tempfile::tempdir().unwrap();
    let wh = dir.path().join("wh");
    let out = hoodie(
        &wh,
        &[
            "--option",
            "datafusion.execution.batch_size=1234",
            "-c",
            "SHOW datafusion.execution.batch_size",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(stdout.contains("| 1234 "), "{stdout}");
    assert!(out.stderr.is_empty(), "no warning: {out:?}");
    let bad = hoodie(
        &wh,
        &["--option", "datafusion.no_such_key=1", "-c", "select 1"],
    );
    assert_eq!(bad.status.code(), Some(1), "{bad:?}");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("datafusion.no_such_key"));
}
