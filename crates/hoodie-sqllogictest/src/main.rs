//! `hoodie-slt [FILE|DIR]...`: runs sqllogictest files against hoodie (default: `sql-tests/`).
//!
//! Prints each failing record as `FAIL <file>:<line>: ...`, then one line
//! `N passed, M failed`; exits with status 1 if a record failed or a file could not be run.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use hoodie_sqllogictest::{run_paths_with, Event};

/// Directory searched when no paths are given.
const DEFAULT_DIR: &str = "sql-tests";

const USAGE: &str = "\
usage: hoodie-slt [FILE|DIR]...

Runs sqllogictest (.slt) files against hoodie; directories are searched recursively.
Default: sql-tests/. Each file gets a fresh session over an empty temporary warehouse;
${TMPDIR} in a file is replaced by that temporary directory.";

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    if let Some(flag) = args.iter().find(|a| a.starts_with('-')) {
        eprintln!("hoodie-slt: unknown option {flag}\n\n{USAGE}");
        return ExitCode::from(2);
    }
    let paths: Vec<PathBuf> = if args.is_empty() {
        vec![PathBuf::from(DEFAULT_DIR)]
    } else {
        args.into_iter().map(PathBuf::from).collect()
    };

    let summary = run_paths_with(&paths, |event| {
        let mut out = std::io::stdout();
        let _ = match event {
            Event::Failure(failure) => writeln!(out, "{failure}"),
            Event::FileError(error) => writeln!(out, "ERROR {error}"),
        };
    })
    .await;
    let _ = writeln!(std::io::stdout(), "{summary}");
    if summary.is_success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
