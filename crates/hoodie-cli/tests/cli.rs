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
