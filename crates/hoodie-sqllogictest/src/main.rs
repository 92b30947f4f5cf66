//! `hoodie-slt [--complete | --datafusion | --engine spark [--spark HOST:PORT]] [FILE|DIR]...`:
//! runs sqllogictest files against hoodie (default: `sql-tests/`); with `--complete`, rewrites
//! their expected results instead; with `--datafusion`, runs DataFusion's own `.slt` files
//! unchanged, hoodie's session set up and answering as DataFusion 55.2.0's runner; with
//! `--engine spark`, sends them to Spark with Hudi (the server of `tests/spark/server.py`) to
//! check the expectations against the real Hudi.
//!
//! Prints each failing record as `FAIL <file>:<line>: ...`, then one line
//! `N passed, M failed[, K skipped]`; exits with status 1 if a record failed or a file could not
//! be run.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use hoodie_sqllogictest::files::collect_files;
use hoodie_sqllogictest::{complete_file, run_paths_in_parallel, Engine, Event};

/// Directory searched when no paths are given.
const DEFAULT_DIR: &str = "sql-tests";

/// The environment variable that names the Spark server (`host:port`), as `--spark` does.
const SPARK_ENV: &str = "HOODIE_SPARK";

const USAGE: &str = "\
usage: hoodie-slt [--complete | --datafusion | --engine hoodie|spark [--spark HOST:PORT]] [--jobs N]
                  [--table-version 6|8|9] [FILE|DIR]...

Runs sqllogictest (.slt) files against hoodie; directories are searched recursively.
Default: sql-tests/. Each file gets a fresh session over an empty temporary warehouse;
${TMPDIR} in a file is replaced by that temporary directory. Results are normalised and
column types checked as DataFusion's sqllogictest runner does.

  --complete        run the files and rewrite their expected results in place
  --datafusion      run DataFusion's own .slt files unchanged, as DataFusion 55.2.0's
                    runner does: datafusion.public the default schema, 4 target partitions,
                    DataFusion's default options (information_schema off), errors written
                    `DataFusion error: ...` with `caused by` lines, EXPLAIN lines numbered
                    01), DML answering its count as a row, decimals with their full scale,
                    the label `Datafusion` for skipif/onlyif; a file that leaves an option
                    changed fails
  --engine spark    send the records to Spark with Hudi instead (tests/spark/run.sh starts
                    it); records marked `skipif spark` are skipped, `statement count N` is
                    checked as `statement ok`
  --spark ADDR      the Spark server's HOST:PORT (default: $HOODIE_SPARK)
  --jobs N          run N files at a time (default 1; each file still runs in order, in a
                    session of its own)
  --table-version N hoodie: every session starts with hoodie.write.table.version = N, so
                    the tables the files create are of version N (default: hoodie's, 9,
                    which sets nothing: a session that sets it also upgrades the tables a
                    file creates at an older version on purpose);
                    records answer to the label vN too (`skipif v6` for what only holds on
                    another version)
  --workers LIST    hoodie: run the statements on these hoodie-worker processes
                    (HOST:PORT,...); records answer to the label `workers` too";

/// What the command line asks for.
struct Args {
    complete: bool,
    engine: Engine,
    jobs: usize,
    paths: Vec<PathBuf>,
}

fn parse_args(args: Vec<String>) -> Result<Args, String> {
    let mut complete = false;
    let mut datafusion = false;
    let mut engine = None;
    let mut spark = std::env::var(SPARK_ENV).ok();
    let mut paths = Vec::new();
    let mut jobs = 1;
    let mut table_version = None;
    let mut workers = Vec::new();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--complete" => complete = true,
            "--datafusion" => datafusion = true,
            "--engine" => engine = Some(args.next().ok_or("--engine needs a value")?),
            "--spark" => spark = Some(args.next().ok_or("--spark needs HOST:PORT")?),
            "--jobs" => {
                jobs = args
                    .next()
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|n| *n > 0)
                    .ok_or("--jobs needs a number of at least 1")?
            }
            "--table-version" => {
                table_version = Some(
                    args.next()
                        .and_then(|n| n.parse::<u32>().ok())
                        .filter(|n| [6, 8, 9].contains(n))
                        .ok_or("--table-version needs 6, 8 or 9")?,
                )
            }
            "--workers" => {
                let list = args.next().ok_or("--workers needs HOST:PORT,...")?;
                workers = hoodie_distributed::parse_workers(&list).map_err(|e| e.to_string())?;
            }
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}")),
            _ => paths.push(PathBuf::from(arg)),
        }
    }
    let engine = match engine.as_deref() {
        None if datafusion => Engine::DataFusion,
        Some(_) if datafusion => return Err("--datafusion does not take --engine".into()),
        _ if (table_version.is_some() || !workers.is_empty())
            && (datafusion || engine.as_deref() == Some("spark")) =>
        {
            return Err("--table-version and --workers are for the hoodie engine".into())
        }
        None | Some("hoodie") => Engine::Hoodie {
            table_version,
            workers,
        },
        Some("spark") => Engine::Spark {
            address: spark.ok_or(format!(
                "--engine spark needs the server's address: --spark HOST:PORT or ${SPARK_ENV}"
            ))?,
        },
        Some(other) => return Err(format!("unknown engine {other}: hoodie or spark")),
    };
    if complete && engine != Engine::default() {
        return Err(
            "--complete writes hoodie's results; it does not take --engine spark or --datafusion"
                .into(),
        );
    }
    if paths.is_empty() {
        paths.push(PathBuf::from(DEFAULT_DIR));
    }
    Ok(Args {
        complete,
        engine,
        jobs,
        paths,
    })
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let Args {
        complete,
        engine,
        jobs,
        paths,
    } = match parse_args(args) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("hoodie-slt: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if complete {
        return complete_paths(&paths).await;
    }
    // the workers run on runtimes of their own: this one only waits for them
    let summary = tokio::task::block_in_place(|| {
        run_paths_in_parallel(&paths, &engine, jobs, |event| {
            let mut out = std::io::stdout();
            let _ = match event {
                Event::Failure(failure) => writeln!(out, "{failure}"),
                Event::FileError(error) => writeln!(out, "ERROR {error}"),
            };
        })
    });
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
