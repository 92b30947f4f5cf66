//! Running test files and tallying the results.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::FutureExt;
use hoodie_datafusion::{HoodieConfig, HoodieContext};
use sqllogictest::{
    strict_column_validator, Condition, Record, RecordOutput, Runner, StatementExpect,
};

use crate::db::{EngineDb, HoodieDb, HOODIE_LABEL, WORKERS_LABEL};
use crate::df_db::{DataFusionDb, DATAFUSION_LABEL};
use crate::df_normalize;
use crate::error::{DbError, FileError};
use crate::files::{collect_files, load_records};
use crate::normalize::{value_normalizer, value_validator, DfColumnType};
use crate::spark::{SparkDb, SPARK_LABEL};

/// What runs the records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Engine {
    /// hoodie, in a fresh [`HoodieContext`] per file; with `table_version`, every session
    /// starts with `hoodie.write.table.version` set to it (the tables the files create are of
    /// that version), and records can tell that run by the label `v<N>` (`skipif v9`).
    Hoodie {
        /// The table version the files' tables are created with (None: hoodie's default).
        table_version: Option<u32>,
        /// The hoodie-worker processes the sessions run their statements on (none: in this
        /// process); records can tell such a run by the label `workers`.
        workers: Vec<url::Url>,
    },
    /// hoodie, in a fresh [`HoodieContext`] per file set up and answering as DataFusion
    /// 55.2.0's own sqllogictest runner, so that DataFusion's `.slt` files run unchanged (see
    /// [`crate::df_db`]). Conditions name it `Datafusion`, as DataFusion's runner.
    DataFusion,
    /// Spark with Hudi, through the server of `tests/spark/server.py` at `address`
    /// (`host:port`), in a fresh Spark session and database per file. Records marked
    /// `skipif spark` (what only hoodie has) are skipped, and `statement count N` is checked as
    /// `statement ok`: Spark's DML returns no count.
    Spark {
        /// `host:port` of the server.
        address: String,
    },
}

impl Default for Engine {
    fn default() -> Self {
        Self::Hoodie {
            table_version: None,
            workers: Vec::new(),
        }
    }
}

impl Engine {
    /// Its label in `skipif` / `onlyif` conditions.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Hoodie { .. } => HOODIE_LABEL,
            Self::DataFusion => DATAFUSION_LABEL,
            Self::Spark { .. } => SPARK_LABEL,
        }
    }

    /// Every label its records answer to: the engine's, and on hoodie `v<N>` for the version N
    /// its tables are created with (hoodie's default when the run sets none).
    pub fn labels(&self) -> Vec<String> {
        let mut labels = vec![self.label().to_string()];
        if let Self::Hoodie {
            table_version,
            workers,
        } = self
        {
            let v = table_version.unwrap_or(hoodie_format::new_table::DEFAULT_VERSION);
            labels.push(format!("v{v}"));
            if !workers.is_empty() {
                labels.push(WORKERS_LABEL.to_string());
            }
        }
        labels
    }

    /// The options every hoodie session of the run starts with. hoodie's default version sets
    /// nothing: a session that sets `hoodie.write.table.version` also upgrades, on their first
    /// write, the tables a file creates at an older version on purpose (auto-upgrade), which a
    /// run on the default version must not do.
    fn session_options(&self) -> Vec<(String, String)> {
        match self {
            Self::Hoodie {
                table_version: Some(v),
                ..
            } if *v != hoodie_format::new_table::DEFAULT_VERSION => vec![(
                hoodie_format::config::WRITE_TABLE_VERSION.key.to_string(),
                v.to_string(),
            )],
            _ => Vec::new(),
        }
    }
}

/// One failing record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The file the record is in (as the runner was given it).
    pub file: String,
    /// The record's line.
    pub line: u32,
    /// What went wrong: the error, the SQL and, for results, a diff (-expected, +actual).
    pub message: String,
}

impl fmt::Display for Failure {
    /// `FAIL <file>:<line>: <first line>`, further lines indented by four spaces.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut lines = self.message.trim_end().lines();
        write!(
            f,
            "FAIL {}:{}: {}",
            self.file,
            self.line,
            lines.next().unwrap_or_default()
        )?;
        for line in lines {
            write!(f, "\n    {}", line.replace('\t', "  "))?;
        }
        Ok(())
    }
}

/// The outcome of a run.
#[derive(Debug, Default)]
pub struct Summary {
    /// Records (statements, queries) that passed.
    pub passed: usize,
    /// Records that failed.
    pub failed: usize,
    /// Records not run on this engine (`skipif` / `onlyif`, or after a conditional `halt`).
    pub skipped: usize,
    /// The failing records, in the order they ran.
    pub failures: Vec<Failure>,
    /// Files that could not be found, read, parsed or set up (their records did not run).
    pub file_errors: Vec<FileError>,
}

impl Summary {
    /// True when no record failed and every file could be run.
    pub fn is_success(&self) -> bool {
        self.failed == 0 && self.file_errors.is_empty()
    }
}

impl fmt::Display for Summary {
    /// `N passed, M failed`, and `, K skipped` when records were skipped.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} passed, {} failed", self.passed, self.failed)?;
        if self.skipped > 0 {
            write!(f, ", {} skipped", self.skipped)?;
        }
        Ok(())
    }
}

/// Something worth reporting while a run is in progress.
#[derive(Debug)]
pub enum Event<'a> {
    /// A record failed.
    Failure(&'a Failure),
    /// A file could not be run.
    FileError(&'a FileError),
}

/// Runs every `.slt` file under `paths` (see [`collect_files`]) on hoodie, each in a fresh
/// session over an empty temporary warehouse, and returns the tally.
pub async fn run_paths(paths: &[PathBuf]) -> Summary {
    run_paths_with(paths, &Engine::default(), |_| {}).await
}

/// Runs the files on `engine`, calling `report` for each failure as soon as it happens.
pub async fn run_paths_with(
    paths: &[PathBuf],
    engine: &Engine,
    mut report: impl FnMut(Event<'_>),
) -> Summary {
    let mut summary = Summary::default();
    let files = collect_reporting(paths, &mut summary, &mut report);
    for (n, file) in files.iter().enumerate() {
        if let Err(error) = run_file(file, n, engine, &mut summary, &mut report).await {
            report(Event::FileError(&error));
            summary.file_errors.push(error);
        }
    }
    summary
}

/// The `.slt` files under `paths`; the paths that could not be searched are reported and
/// tallied in `summary`.
pub(crate) fn collect_reporting(
    paths: &[PathBuf],
    summary: &mut Summary,
    report: &mut impl FnMut(Event<'_>),
) -> Vec<PathBuf> {
    let (files, errors) = collect_files(paths);
    for error in errors {
        report(Event::FileError(&error));
        summary.file_errors.push(error);
    }
    files
}

/// Runs one file's records, adding to `summary`. A failing record does not stop the file;
/// `halt` does (a `halt` after `onlyif L` / `skipif L` halts on the engines the condition
/// picks: `onlyif spark` then `halt` keeps the rest of a file from Spark).
pub(crate) async fn run_file(
    path: &Path,
    n: usize,
    engine: &Engine,
    summary: &mut Summary,
    report: &mut impl FnMut(Event<'_>),
) -> Result<(), FileError> {
    let (tmp, db, mut runner) = engine_runner(path, n, engine).await?;
    let failed_before = summary.failed;
    let mut records = load_records(path, tmp.path())?;
    if let EngineDb::DataFusion(db) = &db {
        db.map_scratch_paths(&mut records);
    }
    let labels = engine.labels();
    let mut pending: Vec<Condition> = Vec::new();
    // sqllogictest's parser hands the conditions before a `halt` on to the next statement too:
    // those of a conditional halt this engine skipped are taken off it again
    let mut inherited = 0;
    let mut records = records.into_iter();
    while let Some(mut record) = records.next() {
        if let Record::Statement { conditions, .. }
        | Record::Query { conditions, .. }
        | Record::Let { conditions, .. } = &mut record
        {
            conditions.drain(..inherited.min(conditions.len()));
            inherited = 0;
        }
        match &record {
            Record::Condition(c) => {
                pending.push(c.clone());
                continue;
            }
            Record::Halt { .. } if !skips(&pending, &labels) => {
                summary.skipped += records.filter(runs_sql).count();
                break;
            }
            Record::Halt { .. } => {
                inherited = pending.len();
                pending.clear();
                continue;
            }
            // a skipped record never reaches the runner, which would substitute its `$var`s
            // (set by a `let` that may itself be skipped) before looking at its conditions; a
            // `let` is judged by the conditions written right before it (sqllogictest's parser
            // hands it those of every record since the last statement or query too)
            Record::Let { .. } if skips(&pending, &labels) => {
                summary.skipped += usize::from(runs_sql(&record));
                pending.clear();
                continue;
            }
            Record::Statement { conditions, .. } | Record::Query { conditions, .. }
                if skips(conditions, &labels) =>
            {
                summary.skipped += usize::from(runs_sql(&record));
                pending.clear();
                continue;
            }
            _ => {}
        }
        if !matches!(record, Record::Comment(_) | Record::Newline) {
            pending.clear();
        }
        // (judged above on its own conditions, which the runner would judge on the others)
        if let Record::Let { conditions, .. } = &mut record {
            conditions.clear();
        }
        let record = if matches!(engine, Engine::Spark { .. }) {
            without_counts(record)
        } else {
            record
        };
        match run_record(&mut runner, record, path).await {
            Ok(true) => summary.passed += 1,
            Ok(false) => {}
            Err(failure) => {
                summary.failed += 1;
                report(Event::Failure(&failure));
                summary.failures.push(failure);
            }
        }
    }
    runner.shutdown_async().await;
    // DataFusion's runner fails a file that passed but left the session's options changed
    if let EngineDb::DataFusion(db) = &db {
        if let Some(changes) = db
            .changed_options()
            .filter(|_| summary.failed == failed_before)
        {
            let failure = Failure {
                file: path.display().to_string(),
                line: 0,
                message: format!("the file left modified configuration\n{changes}"),
            };
            summary.failed += 1;
            report(Event::Failure(&failure));
            summary.failures.push(failure);
        }
    }
    Ok(())
}

/// Runs one record: `Ok(true)` when it passed a check (a statement or query), `Ok(false)`
/// when it checks nothing, else how it failed (a panic included).
async fn run_record<M: sqllogictest::MakeConnection<Conn = EngineDb>>(
    runner: &mut Runner<EngineDb, M>,
    record: Record<DfColumnType>,
    path: &Path,
) -> Result<bool, Failure> {
    let location = record_location(&record, path);
    let outcome = AssertUnwindSafe(runner.run_async(record))
        .catch_unwind()
        .await;
    match outcome {
        Ok(Ok(RecordOutput::Nothing)) => Ok(false),
        Ok(Ok(_)) => Ok(true),
        Ok(Err(error)) => {
            let loc = error.location();
            Err(Failure {
                file: loc.file().to_string(),
                line: loc.line(),
                message: error.kind().display(false).to_string(),
            })
        }
        Err(panic) => Err(Failure {
            file: location.0,
            line: location.1,
            message: format!("panicked: {}", panic_message(panic.as_ref())),
        }),
    }
}

/// Whether `conditions` keep a record from the engine with `labels`.
fn skips(conditions: &[Condition], labels: &[String]) -> bool {
    conditions.iter().any(|c| match c {
        Condition::OnlyIf { label: l } => !labels.contains(l),
        Condition::SkipIf { label: l } => labels.contains(l),
    })
}

/// Whether a record sends SQL to the engine.
fn runs_sql(record: &Record<DfColumnType>) -> bool {
    matches!(record, Record::Statement { .. } | Record::Query { .. })
}

/// `statement count N` as `statement ok`: Spark's DML commands return no row count.
fn without_counts(record: Record<DfColumnType>) -> Record<DfColumnType> {
    match record {
        Record::Statement {
            loc,
            conditions,
            connection,
            sql,
            expected: StatementExpect::Count(_),
            retry,
        } => Record::Statement {
            loc,
            conditions,
            connection,
            sql,
            expected: StatementExpect::Ok,
            retry,
        },
        other => other,
    }
}

/// A runner on `engine` for the `n`th file of a run, over a new temporary directory, and its
/// connection (the directory returned too: it lives as long as the run).
async fn engine_runner(
    path: &Path,
    n: usize,
    engine: &Engine,
) -> Result<
    (
        tempfile::TempDir,
        EngineDb,
        Runner<EngineDb, impl sqllogictest::MakeConnection<Conn = EngineDb>>,
    ),
    FileError,
> {
    let (tmp, warehouse) = temp_warehouse(path)?;
    let db = match engine {
        Engine::Hoodie { .. } => EngineDb::Hoodie(hoodie_db(path, &warehouse, engine).await?),
        Engine::DataFusion => {
            let ctx = hoodie_context(path, &warehouse, engine).await?;
            let db =
                DataFusionDb::new(ctx, tmp.path(), path).map_err(|source| FileError::TempDir {
                    path: path.to_path_buf(),
                    source,
                })?;
            EngineDb::DataFusion(db)
        }
        Engine::Spark { address } => {
            // a database per file: a table name may recur from file to file, and Spark's
            // catalog outlives the file's session
            let name = format!("slt_{}_{n}", std::process::id());
            let db = SparkDb::connect(address, &name, &warehouse.to_string_lossy()).map_err(
                |source| FileError::Spark {
                    path: path.to_path_buf(),
                    source,
                },
            )?;
            EngineDb::Spark(db)
        }
    };
    let conn = db.clone();
    let mut runner = Runner::new(move || std::future::ready(Ok::<_, DbError>(conn.clone())));
    configure(&mut runner, engine.label());
    if *engine == Engine::DataFusion {
        runner.with_validator(df_normalize::value_validator);
    }
    Ok((tmp, db, runner))
}

/// Validation as DataFusion's runner does it, and the engine's label.
fn configure<
    D: sqllogictest::AsyncDB<ColumnType = DfColumnType>,
    M: sqllogictest::MakeConnection<Conn = D>,
>(
    runner: &mut Runner<D, M>,
    label: &str,
) {
    runner.with_normalizer(value_normalizer);
    runner.with_validator(value_validator);
    runner.with_column_validator(strict_column_validator);
    runner.add_label(label);
}

/// A new temporary directory with an empty `warehouse` folder in it.
fn temp_warehouse(path: &Path) -> Result<(tempfile::TempDir, PathBuf), FileError> {
    let tmp = tempfile::Builder::new()
        .prefix("hoodie-slt-")
        .tempdir()
        .map_err(|source| FileError::TempDir {
            path: path.to_path_buf(),
            source,
        })?;
    let warehouse = tmp.path().join("warehouse");
    std::fs::create_dir_all(&warehouse).map_err(|source| FileError::TempDir {
        path: path.to_path_buf(),
        source,
    })?;
    Ok((tmp, warehouse))
}

/// A fresh hoodie session of `engine` over `warehouse`.
async fn hoodie_db(path: &Path, warehouse: &Path, engine: &Engine) -> Result<HoodieDb, FileError> {
    Ok(HoodieDb::new(
        hoodie_context(path, warehouse, engine).await?,
    ))
}

/// A fresh [`HoodieContext`] of `engine` over `warehouse`.
async fn hoodie_context(
    path: &Path,
    warehouse: &Path,
    engine: &Engine,
) -> Result<Arc<HoodieContext>, FileError> {
    let mut config = HoodieConfig::new(warehouse);
    config.options = engine.session_options();
    if let Engine::Hoodie { workers, .. } = engine {
        if !workers.is_empty() {
            // every scan spreads over the workers, however small its table
            let extension = hoodie_distributed::workers_extension(workers.clone(), Some(1));
            config.extension = Some(extension);
        }
    }
    let ctx = HoodieContext::new(config)
        .await
        .map_err(|source| FileError::Session {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(Arc::new(ctx))
}

/// A hoodie runner over a fresh session whose warehouse is in a new temporary directory
/// (returned too: it lives as long as the run), validating as DataFusion's runner does.
pub(crate) async fn new_runner(
    path: &Path,
) -> Result<
    (
        tempfile::TempDir,
        Runner<HoodieDb, impl sqllogictest::MakeConnection<Conn = HoodieDb>>,
    ),
    FileError,
> {
    let (tmp, warehouse) = temp_warehouse(path)?;
    let db = hoodie_db(path, &warehouse, &Engine::default()).await?;
    let mut runner = Runner::new(move || std::future::ready(Ok::<_, DbError>(db.clone())));
    configure(&mut runner, HOODIE_LABEL);
    Ok((tmp, runner))
}

/// File and line of a record that runs something (the file's own name otherwise).
fn record_location(record: &Record<DfColumnType>, path: &Path) -> (String, u32) {
    match record {
        Record::Statement { loc, .. }
        | Record::Query { loc, .. }
        | Record::System { loc, .. }
        | Record::Let { loc, .. } => (loc.file().to_string(), loc.line()),
        _ => (path.display().to_string(), 0),
    }
}

/// The message of a panic payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_display_is_compact() {
        let failure = Failure {
            file: "a.slt".into(),
            line: 7,
            message: "query result mismatch:\n[SQL] SELECT 1\n[Diff]\n-2\n+1\n".into(),
        };
        assert_eq!(
            failure.to_string(),
            "FAIL a.slt:7: query result mismatch:\n    [SQL] SELECT 1\n    [Diff]\n    -2\n    +1"
        );
    }

    /// A table a file creates at version 6 keeps it through its writes on a run of the default
    /// version, named or not (the session sets no version, so nothing upgrades it); a run of
    /// version 6 sets the session's version.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_run_of_the_default_version_upgrades_no_table() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("v6.slt");
        std::fs::write(
            &file,
            "statement ok\n\
             create table t (id int, ts int) using hudi tblproperties (primaryKey = 'id', \
             preCombineField = 'ts', 'hoodie.write.table.version' = '6')\n\n\
             statement ok\ninsert into t values (1, 1)\n\n\
             statement ok\ninsert into t values (2, 1)\n\n\
             query TT\nshow tblproperties t ('hoodie.table.version')\n----\n\
             hoodie.table.version 6\n",
        )
        .unwrap();
        for version in [None, Some(9)] {
            let engine = Engine::Hoodie {
                table_version: version,
                workers: Vec::new(),
            };
            assert!(engine.session_options().is_empty());
            let summary = run_paths_with(std::slice::from_ref(&file), &engine, |_| {}).await;
            assert_eq!((summary.passed, summary.failed), (4, 0), "{summary:?}");
        }
        let six = Engine::Hoodie {
            table_version: Some(6),
            workers: Vec::new(),
        };
        assert_eq!(
            six.session_options(),
            [("hoodie.write.table.version".to_string(), "6".to_string())]
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn keeps_going_after_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mixed.slt");
        std::fs::write(
            &file,
            "query I\nSELECT 1 + 1\n----\n3\n\n\
             query I\nSELECT 2 + 2\n----\n4\n\n\
             control sortmode rowsort\n",
        )
        .unwrap();
        let mut reported = Vec::new();
        let summary = run_paths_with(&[file], &Engine::default(), |event| {
            if let Event::Failure(f) = event {
                reported.push(f.clone());
            }
        })
        .await;
        assert_eq!((summary.passed, summary.failed), (1, 1), "{summary:?}");
        assert!(summary.file_errors.is_empty());
        assert_eq!(reported, summary.failures);
        let failure = &summary.failures[0];
        assert_eq!(failure.line, 1);
        assert!(failure.file.ends_with("mixed.slt"));
        let text = failure.to_string();
        assert!(text.contains("SELECT 1 + 1"), "{text}");
        assert!(text.contains("-   3") && text.contains("+   2"), "{text}");
        assert_eq!(summary.to_string(), "1 passed, 1 failed");
        assert!(!summary.is_success());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn files_get_a_fresh_tmpdir_and_session() {
        let dir = tempfile::tempdir().unwrap();
        let script = "statement ok\nCREATE VIEW v AS SELECT '${TMPDIR}' AS d\n\n\
                      query B\nSELECT d LIKE '%hoodie-slt-%' FROM v\n----\ntrue\n";
        std::fs::write(dir.path().join("a.slt"), script).unwrap();
        std::fs::write(dir.path().join("b.slt"), script).unwrap();
        let summary = run_paths(&[dir.path().to_path_buf()]).await;
        assert!(summary.is_success(), "{:?}", summary.failures);
        assert_eq!(summary.passed, 4);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn conditional_halts_and_skips_follow_the_engine_label() {
        let dir = tempfile::tempdir().unwrap();
        // a halt kept from hoodie: the statement after it runs on hoodie (the parser hands the
        // halt's condition on to it, which must not skip it)
        std::fs::write(
            dir.path().join("not_spark.slt"),
            "onlyif spark\nhalt\n\nstatement ok\nCREATE VIEW v AS SELECT 1 AS x\n\n\
             query I\nSELECT x FROM v\n----\n1\n\n\
             skipif hoodie\nquery I\nSELECT 2\n----\n3\n\n\
             let y\nSELECT 7\n\n\
             onlyif spark\nquery I\nSELECT $nope\n----\n0\n\n\
             control substitution on\n\n\
             skipif hoodie\nskipif v9\nlet z\nSELECT 1\n\n\
             onlyif hoodie\nlet z\nSELECT 8\n\n\
             onlyif spark\nlet z\nSELECT 2\n\n\
             query I\nSELECT $z\n----\n8\n",
        )
        .unwrap();
        // a halt for hoodie: nothing after it runs
        std::fs::write(
            dir.path().join("not_hoodie.slt"),
            "skipif spark\nhalt\n\nquery I\nSELECT 1\n----\n2\n",
        )
        .unwrap();
        let summary = run_paths(&[dir.path().to_path_buf()]).await;
        assert!(
            summary.is_success(),
            "{:?} {:?}",
            summary.failures,
            summary.file_errors
        );
        assert_eq!((summary.passed, summary.skipped), (5, 3), "{summary:?}");
        assert_eq!(summary.to_string(), "5 passed, 0 failed, 3 skipped");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn unparsable_files_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bad.slt"), "frobnicate\n").unwrap();
        let summary = run_paths(&[dir.path().to_path_buf()]).await;
        assert_eq!((summary.passed, summary.failed), (0, 0));
        assert!(matches!(summary.file_errors[..], [FileError::Parse { .. }]));
        assert!(!summary.is_success());
    }
}
