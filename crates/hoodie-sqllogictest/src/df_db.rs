//! `hoodie-slt --datafusion`: hoodie's session set up and answering as DataFusion 55.2.0's own
//! sqllogictest runner (`datafusion-sqllogictest`), so that DataFusion's `.slt` files run
//! unchanged.
//!
//! - The session is a [`HoodieContext`] whose options are DataFusion's defaults (a
//!   `SessionConfig::new()`) with 4 target partitions, as the runner's `TestContext` makes them:
//!   unqualified names resolve in `datafusion.public`, `information_schema` is off until a file
//!   turns it on. hoodie's warehouse stays registered in its own catalog.
//! - Each statement goes through hoodie's SQL front end ([`HudiSqlExt::hudi_sql`], what
//!   [`HoodieContext::run`] runs), and its plan runs as DataFusion's runner runs it: the column
//!   types are those of the physical plan's output (after type coercion), a statement whose
//!   answer has no columns and no rows (DDL, `SET`) completes with no rows, DML answers its
//!   row of `count` (`query I`).
//! - An error is written `DataFusion error: ` and then DataFusion's own text of it
//!   ([`DataFusionError`](datafusion::error::DataFusionError)'s `Display` without a
//!   backtrace), with its contexts as `caused by` lines; an error hoodie raised itself is
//!   written as DataFusion writes an external error, `External error: <message>`.
//! - A file must leave the session's options as it found them, or the run fails (the runner's
//!   `validate_config_unchanged`).
//! - DataFusion's runner runs in its crate's directory and gives each file an empty directory
//!   `test_files/scratch/<file stem>` there, which the files write to and read from by that
//!   relative path; paths under the DataFusion checkout print as `WORKSPACE_ROOT/...`. Here
//!   the file's temporary directory plays the crate's directory: `test_files/scratch/` in a
//!   record's SQL is read as `<tmp>/test_files/scratch/`, and `<tmp>` in results prints as
//!   `WORKSPACE_ROOT/datafusion/sqllogictest`, the crate's directory in DataFusion's
//!   checkout.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::config::ConfigOptions;
use datafusion::error::DataFusionError;
use datafusion::physical_plan::{common::collect, execute_stream};
use hoodie_datafusion::{HoodieContext, HudiSqlExt};
use sqllogictest::{AsyncDB, DBOutput, Record};

use crate::df_normalize::{column_types, format_rows};
use crate::error::DbError;
use crate::normalize::DfColumnType;

/// The label of DataFusion's runner in `skipif` / `onlyif` conditions.
pub const DATAFUSION_LABEL: &str = "Datafusion";

/// The target partitions of DataFusion's runner: fixed, so that plans do not depend on the
/// machine.
pub const TARGET_PARTITIONS: usize = 4;

/// The scratch directory of DataFusion's runner, relative to its crate's directory.
pub const SCRATCH: &str = "test_files/scratch/";

/// How DataFusion's runner prints its crate's directory (`datafusion/sqllogictest` in the
/// checkout, which prints as `WORKSPACE_ROOT`).
const CRATE_DIR_TEXT: &str = "WORKSPACE_ROOT/datafusion/sqllogictest";

/// A sqllogictest connection answering as DataFusion's runner does.
#[derive(Clone)]
pub struct DataFusionDb {
    ctx: Arc<HoodieContext>,
    /// The session's options as the file found them.
    initial: Arc<BTreeMap<String, Option<String>>>,
    /// The directory that plays DataFusion's crate directory, absolute.
    root: Arc<PathBuf>,
}

impl DataFusionDb {
    /// A connection over `ctx` for the test file `file`, whose options are set to DataFusion's
    /// runner's, with `root` (an empty directory) playing DataFusion's crate directory: its
    /// `test_files/scratch/<file stem>` is made (see the module documentation). Clones share
    /// the session.
    pub fn new(ctx: Arc<HoodieContext>, root: &Path, file: &Path) -> std::io::Result<Self> {
        datafusion_options(&ctx);
        let initial = Arc::new(options_of(&ctx));
        let root = std::fs::canonicalize(root)?;
        let stem = file.file_stem().unwrap_or_default();
        std::fs::create_dir_all(root.join(SCRATCH).join(stem))?;
        Ok(Self {
            ctx,
            initial,
            root: Arc::new(root),
        })
    }

    /// Points the scratch paths in the SQL of `records` into this connection's directory.
    pub fn map_scratch_paths(&self, records: &mut [Record<DfColumnType>]) {
        let scratch = format!("{}/{SCRATCH}", self.root.display());
        for record in records {
            if let Record::Statement { sql, .. } | Record::Query { sql, .. } = record {
                if sql.contains(SCRATCH) {
                    *sql = map_scratch(sql, &scratch);
                }
            }
        }
    }

    /// The options the file changed and left changed, as DataFusion's runner lists them
    /// (`key: before -> after`), or `None`.
    pub fn changed_options(&self) -> Option<String> {
        let now = options_of(&self.ctx);
        let mut changes = Vec::new();
        for (key, before) in self.initial.iter() {
            let after = now.get(key).cloned().flatten();
            if after.as_ref() != before.as_ref() {
                changes.push(format!(
                    "  {key}: {} -> {}",
                    before.as_deref().unwrap_or("NULL"),
                    after.as_deref().unwrap_or("NULL")
                ));
            }
        }
        for (key, after) in &now {
            if !self.initial.contains_key(key) {
                changes.push(format!(
                    "  {key}: NULL -> {}",
                    after.as_deref().unwrap_or("NULL")
                ));
            }
        }
        (!changes.is_empty()).then(|| changes.join("\n"))
    }
}

/// Sets the options of `ctx` to those of DataFusion's runner: DataFusion's defaults, 4 target
/// partitions; hoodie's own option namespaces (`hoodie.*`, `spark.*`) are kept.
fn datafusion_options(ctx: &HoodieContext) {
    let state = ctx.session().state_ref();
    let mut state = state.write();
    let options = state.config_mut().options_mut();
    let extensions = std::mem::take(&mut options.extensions);
    *options = ConfigOptions::default();
    options.extensions = extensions;
    options.execution.target_partitions = TARGET_PARTITIONS;
}

/// Every option of the session and its value.
fn options_of(ctx: &HoodieContext) -> BTreeMap<String, Option<String>> {
    ctx.session()
        .state_ref()
        .read()
        .config_options()
        .entries()
        .into_iter()
        .map(|e| (e.key, e.value))
        .collect()
}

/// An error as DataFusion's runner writes it.
pub fn error_text(error: &DataFusionError) -> String {
    format!("DataFusion error: {}", error.strip_backtrace())
}

/// `sql` with each relative `test_files/scratch/` (one not preceded by a path character) read
/// as `scratch`.
fn map_scratch(sql: &str, scratch: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(at) = rest.find(SCRATCH) {
        let before = &rest[..at];
        out.push_str(before);
        let relative = before
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || "/._-".contains(c)));
        out.push_str(if relative { scratch } else { SCRATCH });
        rest = &rest[at + SCRATCH.len()..];
    }
    out.push_str(rest);
    out
}

/// Each cell with the directory `root` (as an object-store path, no leading `/`) written as
/// DataFusion's runner writes its crate's directory.
fn normalize_paths(rows: &mut [Vec<String>], root: &Path) {
    let root = root.to_string_lossy();
    let root = root.trim_start_matches('/');
    for cell in rows.iter_mut().flatten() {
        if cell.contains(root) {
            *cell = cell.replace(root, CRATE_DIR_TEXT);
        }
    }
}

/// Plans and runs `sql` as DataFusion's runner does, through hoodie's front end.
async fn run_statement(
    ctx: &HoodieContext,
    root: &Path,
    sql: &str,
) -> Result<DBOutput<DfColumnType>, DbError> {
    let df_error = |e: DataFusionError| DbError::DataFusion(error_text(&e));
    let df = ctx.session().hudi_sql(sql).await.map_err(df_error)?;
    let task_ctx = Arc::new(df.task_ctx());
    let plan = df.create_physical_plan().await.map_err(df_error)?;
    let stream = execute_stream(plan, task_ctx).map_err(df_error)?;
    let types = column_types(stream.schema().fields());
    let batches = collect(stream).await.map_err(df_error)?;
    let mut rows = format_rows(&batches)?;
    normalize_paths(&mut rows, root);
    if types.is_empty() && rows.is_empty() {
        Ok(DBOutput::StatementComplete(0))
    } else {
        Ok(DBOutput::Rows { types, rows })
    }
}

#[async_trait]
impl AsyncDB for DataFusionDb {
    type Error = DbError;
    type ColumnType = DfColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<DfColumnType>, DbError> {
        run_statement(&self.ctx, &self.root, sql).await
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        "DataFusion"
    }

    async fn sleep(dur: std::time::Duration) {
        tokio::time::sleep(dur).await;
    }
}

#[cfg(test)]
mod tests {
    use hoodie_datafusion::HoodieConfig;

    use super::*;

    async fn db(dir: &tempfile::TempDir) -> DataFusionDb {
        let ctx = HoodieContext::new(HoodieConfig::new(dir.path().join("warehouse")))
            .await
            .unwrap();
        DataFusionDb::new(Arc::new(ctx), dir.path(), Path::new("x.slt")).unwrap()
    }

    fn rows(out: DBOutput<DfColumnType>) -> (String, Vec<Vec<String>>) {
        use sqllogictest::ColumnType;
        match out {
            DBOutput::Rows { types, rows } => (types.iter().map(|t| t.to_char()).collect(), rows),
            DBOutput::StatementComplete(n) => (format!("complete {n}"), vec![]),
            _ => unreachable!(),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn answers_as_datafusions_runner() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = db(&dir).await;
        // DDL completes without rows, in datafusion.public
        let out = db
            .run("CREATE TABLE t (a INT, d DECIMAL(10, 3))")
            .await
            .unwrap();
        assert_eq!(rows(out).0, "complete 0");
        // DML answers its count
        let out = db
            .run("INSERT INTO t VALUES (1, 1.5), (2, 2.25)")
            .await
            .unwrap();
        assert_eq!(rows(out), ("I".to_string(), vec![vec!["2".to_string()]]));
        let out = db
            .run("SELECT table_catalog, table_schema FROM information_schema.tables WHERE table_name = 't'")
            .await;
        // information_schema is off, as in DataFusion's runner
        let err = out.err().unwrap().to_string();
        assert!(
            err.starts_with("DataFusion error: Error during planning: table 'datafusion.information_schema.tables' not found"),
            "{err}"
        );
        assert_eq!(db.ctx.session().state().config().target_partitions(), 4);
        let out = db
            .run("SELECT d FROM datafusion.public.t ORDER BY a")
            .await
            .unwrap();
        assert_eq!(
            rows(out),
            (
                "R".to_string(),
                vec![vec!["1.5".to_string()], vec!["2.25".to_string()]]
            )
        );
        // the column types are the physical plan's, after type coercion
        let out = db
            .run("SELECT * FROM (SELECT NULL AS a UNION ALL SELECT 11) ORDER BY 1")
            .await
            .unwrap();
        assert_eq!(
            rows(out),
            (
                "I".to_string(),
                vec![vec!["11".to_string()], vec!["NULL".to_string()]]
            )
        );
        let out = db.run("EXPLAIN SELECT a FROM t WHERE a > 1").await.unwrap();
        let (_, lines) = rows(out);
        assert_eq!(lines[0], ["logical_plan"]);
        assert!(lines[1][0].starts_with("01)"), "{lines:?}");
        assert!(lines[2][0].starts_with("02)--"), "{lines:?}");
    }

    #[test]
    fn scratch_paths_map_into_the_directory() {
        let sql = "COPY t TO 'test_files/scratch/x/a.parquet'; SELECT '/y/test_files/scratch/z'";
        assert_eq!(
            map_scratch(sql, "/tmp/d/test_files/scratch/"),
            "COPY t TO '/tmp/d/test_files/scratch/x/a.parquet'; SELECT '/y/test_files/scratch/z'"
        );
        let mut rows = vec![vec![
            "a".to_string(),
            "DataSourceExec: file_groups={1 group: [[tmp/d/test_files/scratch/x/a.parquet]]}"
                .to_string(),
        ]];
        normalize_paths(&mut rows, Path::new("/tmp/d"));
        assert_eq!(
            rows[0][1],
            "DataSourceExec: file_groups={1 group: [[WORKSPACE_ROOT/datafusion/sqllogictest/test_files/scratch/x/a.parquet]]}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn scratch_directory_is_made_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = db(&dir).await;
        assert!(dir.path().join("test_files/scratch/x").is_dir());
        let mut records = sqllogictest::parse::<DfColumnType>(
            "statement ok\nCOPY (SELECT 1 AS a) TO 'test_files/scratch/x/one.parquet'\n",
        )
        .unwrap();
        db.map_scratch_paths(&mut records);
        let Record::Statement { sql, .. } = &records[0] else {
            unreachable!()
        };
        let out = db.run(sql).await.unwrap();
        assert_eq!(rows(out).1, vec![vec!["1".to_string()]]);
        assert!(dir
            .path()
            .join("test_files/scratch/x/one.parquet")
            .is_file());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn errors_and_changed_options_as_datafusions_runner() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = db(&dir).await;
        let err = db
            .run("SELECT * FROM nope")
            .await
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            err,
            "DataFusion error: Error during planning: table 'datafusion.public.nope' not found"
        );
        let err = db.run("SELEC 1").await.err().unwrap().to_string();
        assert!(
            err.starts_with("DataFusion error: SQL error: ParserError("),
            "{err}"
        );
        assert_eq!(db.changed_options(), None);
        db.run("SET datafusion.execution.batch_size = 100")
            .await
            .unwrap();
        let changed = db.changed_options().unwrap();
        assert_eq!(changed, "  datafusion.execution.batch_size: 8192 -> 100");
        db.run("RESET datafusion.execution.batch_size")
            .await
            .unwrap();
        assert_eq!(db.changed_options(), None);
    }
}
