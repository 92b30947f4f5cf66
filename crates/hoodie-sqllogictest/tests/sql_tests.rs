//! Runs every sqllogictest file in `<workspace>/sql-tests/`.

use std::path::PathBuf;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_tests_pass() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../sql-tests");
    let summary = hoodie_sqllogictest::run_paths(&[dir]).await;
    let mut report = String::new();
    for failure in &summary.failures {
        report.push_str(&format!("{failure}\n"));
    }
    for error in &summary.file_errors {
        report.push_str(&format!("ERROR {error}\n"));
    }
    report.push_str(&summary.to_string());
    assert!(summary.file_errors.is_empty(), "{report}");
    assert_eq!(summary.failed, 0, "{report}");
    assert!(summary.passed > 0, "{report}");
    println!("{report}");
}
