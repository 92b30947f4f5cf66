//! A few of DataFusion 55.2.0's own `.slt` files (`<workspace>/tests/datafusion-slt/`) under
//! `Engine::DataFusion`, as `hoodie-slt --datafusion` runs them: options, `information_schema`
//! off and on, DML counts, EXPLAIN numbering, files written to and read back from the scratch
//! directory. `scripts/test-all.sh` runs the whole directory.

use std::path::PathBuf;

use hoodie_sqllogictest::{run_paths_with, Engine};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datafusion_files_pass_unchanged() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/datafusion-slt");
    let files = [
        "set_variable.slt",
        "dml_update.slt",
        "parquet_statistics.slt",
    ]
    .map(|f| dir.join(f));
    let summary = run_paths_with(&files, &Engine::DataFusion, |_| {}).await;
    let mut report = String::new();
    for failure in &summary.failures {
        report.push_str(&format!("{failure}\n"));
    }
    for error in &summary.file_errors {
        report.push_str(&format!("ERROR {error}\n"));
    }
    report.push_str(&summary.to_string());
    assert!(summary.is_success(), "{report}");
    assert_eq!(summary.to_string(), "267 passed, 0 failed", "{report}");
}
