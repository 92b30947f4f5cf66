//! `hoodie-slt [--complete] [FILE|DIR]...`: runs sqllogictest files against hoodie (default:
//! `sql-tests/`); with `--complete`, rewrites their expected results instead.
//!
//! Prints each failing record as `FAIL <file>:<line>: ...`, then one line
//! `N passed, M failed`; exits with status 1 if a record failed or a file could not be run.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use hoodie_sqllogictest::files::collect_files;
use hoodie_sqllogictest::{complete_file, run_paths_with, Event};

/// Directory searched when no paths are given.
const DEFAULT_DIR: &str = "sql-tests";

const USAGE: &str = "\
usage: hoodie-slt [--complete] [FILE|DIR]...

Runs sqllogictest (.slt) files against hoodie; directories are searched recursively.
Default: sql-tests/. Each file gets a fresh session over an empty temporary warehouse;
${TMPDIR} in a file is replaced by that temporary directory. Results are normalised and
column types checked as DataFusion's sqllogictest runner does.

  --complete   run the files and rewrite their expected results in place";

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let complete = args.first().is_some_and(|a| a == "--complete");
    let args = if complete { args[1..].to_vec() } else { args };
    if let Some(flag) = args.iter().find(|a| a.starts_with('-')) {
        eprintln!("hoodie-slt: unknown option {flag}\n\n{USAGE}");
        return ExitCode::from(2);
    }
    let paths: Vec<PathBuf> = if args.is_empty() {
        vec![PathBuf::from(DEFAULT_DIR)]
    } else {
        args.into_iter().map(PathBuf::from).collect()
    };

    if complete {
        return complete_paths(&paths).await;
    }
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

/// `--complete`: rewrites every file under `paths`; exits with status 1 if one could not be.
async fn complete_paths(paths: &[PathBuf]) -> ExitCode {
    let (files, errors) = collect_files(paths);
    let mut failed = !errors.is_empty();
    for error in errors {
        eprintln!("ERROR {error}");
    }
    for file in files {
        match complete_file(&file).await {
            Ok(n) => println!("{}: {n} records changed", file.display()),
            Err(error) => {
                eprintln!("ERROR {error}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
