//! Set-up shared by the integration tests (each test file uses part of it).
#![allow(dead_code)]

pub mod failing;
pub mod fixtures;

use std::path::{Path, PathBuf};

use hoodie_datafusion::{HoodieConfig, HoodieContext, StatementOutput};
use hoodie_format::fs_view::{BaseFile, FileSlice};
use hoodie_format::storage::TableStorage;
use hoodie_format::HudiTable;

/// The folder holding the table's timeline: `.hoodie/timeline` on versions 8 and 9 (layout 2),
/// `.hoodie` on version 6.
pub fn timeline_dir(loc: &Path) -> PathBuf {
    let layout2 = loc.join(".hoodie/timeline");
    if layout2.is_dir() {
        layout2
    } else {
        loc.join(".hoodie")
    }
}

/// Whether the timeline file names hold `ts` completed as `action`: `<ts>.<action>` on version
/// 6, `<ts>_<completion>.<action>` on 8 and 9.
pub fn completed_in(names: &[String], ts: &str, action: &str) -> bool {
    names.iter().any(|n| {
        n == &format!("{ts}.{action}")
            || (n.starts_with(&format!("{ts}_")) && n.ends_with(&format!(".{action}")))
    })
}

/// The rows `sql` returns, each cell as Arrow displays it (NULL as the empty string).
pub async fn cells(ctx: &HoodieContext, sql: &str) -> Vec<Vec<String>> {
    let StatementOutput::Rows { batches, .. } = ctx.run(sql).await.unwrap() else {
        panic!("{sql} returned no rows");
    };
    let mut out = Vec::new();
    for b in batches {
        for r in 0..b.num_rows() {
            out.push(
                (0..b.num_columns())
                    .map(|c| {
                        datafusion::arrow::util::display::array_value_to_string(b.column(c), r)
                            .unwrap()
                    })
                    .collect(),
            );
        }
    }
    out
}

/// A session over `tmp/wh` (with `memory_limit` as its pool, if any) in which `create` (a
/// `CREATE TABLE ... USING hudi` without its LOCATION) has made a table at `location`.
pub async fn session_with_table(
    tmp: &Path,
    memory_limit: Option<usize>,
    create: &str,
    location: &Path,
) -> HoodieContext {
    let mut config = HoodieConfig::new(tmp.join("wh"));
    config.memory_limit = memory_limit;
    let ctx = HoodieContext::new(config).await.unwrap();
    ctx.run(&format!("{create} LOCATION '{}'", location.display()))
        .await
        .unwrap();
    ctx
}

/// Every file under `dir`, relative to it, sorted.
pub fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// The single BIGINT a query like `SELECT count(*) ...` returns.
pub async fn count(ctx: &HoodieContext, sql: &str) -> i64 {
    let StatementOutput::Rows { batches, .. } = ctx.run(sql).await.unwrap() else {
        panic!("{sql} returned no rows");
    };
    datafusion::arrow::array::AsArray::as_primitive::<datafusion::arrow::datatypes::Int64Type>(
        batches[0].column(0).as_ref(),
    )
    .value(0)
}

/// The result of a query (an EXPLAIN, say) as a printed table.
pub async fn text(ctx: &HoodieContext, sql: &str) -> String {
    let StatementOutput::Rows { batches, .. } = ctx.run(sql).await.unwrap() else {
        panic!("{sql} returned no rows");
    };
    datafusion::arrow::util::pretty::pretty_format_batches(&batches)
        .unwrap()
        .to_string()
}

/// A table made by `create` at `tmp/t`, with `rows` inserted, and its file slices then.
pub struct Fixture {
    pub ctx: HoodieContext,
    pub loc: PathBuf,
    pub table: HudiTable,
    pub before: Vec<FileSlice>,
}

pub async fn fixture(tmp: &Path, create: &str, rows: Vec<String>) -> Fixture {
    let loc = tmp.join("t");
    let ctx = session_with_table(tmp, None, create, &loc).await;
    ctx.run(&format!("INSERT INTO t VALUES {}", rows.join(", ")))
        .await
        .unwrap();
    let table = HudiTable::open(TableStorage::local(&loc).unwrap())
        .await
        .unwrap();
    let before = table
        .file_slices(&table.timeline().await.unwrap(), None)
        .await
        .unwrap();
    Fixture {
        ctx,
        loc,
        table,
        before,
    }
}

impl Fixture {
    /// (partition path, old base file, new base file) of every file group, each rewritten.
    pub async fn rewrites(&self) -> Vec<(String, PathBuf, PathBuf)> {
        let timeline = self.table.timeline().await.unwrap();
        let after = self.table.file_slices(&timeline, None).await.unwrap();
        let path = |b: &Option<BaseFile>| self.loc.join(&b.as_ref().unwrap().rel_path);
        after
            .iter()
            .map(|s| {
                let old = self.before.iter().find(|b| b.file_id == s.file_id).unwrap();
                let (old, new) = (path(&old.base_file), path(&s.base_file));
                assert_ne!(old, new, "{} was rewritten", s.partition_path);
                (s.partition_path.clone(), old, new)
            })
            .collect()
    }
}

/// Copies the files under `from` to `to` (a table, for a fresh copy per failure injected).
pub fn copy_dir(from: &Path, to: &Path) {
    for f in files_under(from) {
        let dst = to.join(&f);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::copy(from.join(&f), dst).unwrap();
    }
}

/// A copy at `loc` of the table at `template`, opened over a store that fails its `n`-th write
/// or delete (failure injection: one copy per `n`); its plain storage, the store and the table.
pub async fn failing_copy(
    template: &Path,
    loc: &Path,
    n: usize,
) -> (
    TableStorage,
    std::sync::Arc<failing::FailingStore>,
    HudiTable,
) {
    copy_dir(template, loc);
    let storage = TableStorage::local(loc).unwrap();
    let store = std::sync::Arc::new(failing::FailingStore::with_deletes(
        storage.store().clone(),
        n,
    ));
    let table = HudiTable::open(storage.with_store(store.clone()))
        .await
        .unwrap();
    (storage, store, table)
}

/// A new session (warehouse under `tmp`) reading the table at `loc` as `t`.
pub async fn reader(tmp: &Path, loc: &Path) -> HoodieContext {
    let ctx = HoodieContext::new(HoodieConfig::new(tmp.join("wh")))
        .await
        .unwrap();
    let open = format!(
        "CREATE EXTERNAL TABLE t STORED AS HUDI LOCATION '{}'",
        loc.display()
    );
    ctx.run(&open).await.unwrap();
    ctx
}

/// The table at `storage` has no pending write, and every base file among `files` (paths
/// relative to the table) is of a completed write: nothing a failed write left is visible.
pub async fn assert_nothing_uncommitted(storage: &TableStorage, files: &[String]) {
    let timeline = HudiTable::open(storage.clone())
        .await
        .unwrap()
        .timeline()
        .await
        .unwrap();
    assert!(
        timeline.pending_writes().is_empty(),
        "pending instants left: {:?}",
        timeline.pending_writes()
    );
    let completed: Vec<String> = timeline
        .completed_writes()
        .map(|i| i.timestamp.clone())
        .collect();
    for f in files.iter().filter(|f| f.ends_with(".parquet")) {
        let instant = f.rsplit('_').next().unwrap().trim_end_matches(".parquet");
        assert!(
            completed.iter().any(|c| c == instant),
            "file {f} of an instant that never completed was left behind"
        );
    }
}

/// Registers the table at `location` in `ctx` as `name`, opened over a store that records
/// every request (and fails none); returns the table's storage and that store.
pub async fn register_recorded(
    ctx: &HoodieContext,
    name: &str,
    location: &Path,
) -> (TableStorage, std::sync::Arc<failing::FailingStore>) {
    let (storage, store, _) = register_recorded_table(ctx, name, location).await;
    (storage, store)
}

/// [`register_recorded`], also returning the table the provider writes through (clones share
/// its kept listing).
pub async fn register_recorded_table(
    ctx: &HoodieContext,
    name: &str,
    location: &Path,
) -> (
    TableStorage,
    std::sync::Arc<failing::FailingStore>,
    HudiTable,
) {
    let storage = TableStorage::local(location).unwrap();
    let store = std::sync::Arc::new(failing::FailingStore::new(
        storage.store().clone(),
        usize::MAX,
    ));
    let table = HudiTable::open(storage.with_store(store.clone()))
        .await
        .unwrap();
    let provider = hoodie_datafusion::HudiTableProvider::try_new(name, table.clone())
        .await
        .unwrap();
    ctx.session()
        .register_table(name, std::sync::Arc::new(provider))
        .unwrap();
    (storage, store, table)
}

/// The partitioned table of the request-counting tests (`id` its key, `p` its partition
/// column, `props` added to its properties) at `tmp/t`, holding rows 1 ('a', x), 2 (NULL, y)
/// and 3 ('c', x); the session and the location.
pub async fn counted_table(tmp: &Path, props: &str) -> (HoodieContext, PathBuf) {
    let loc = tmp.join("t");
    let ctx = session_with_table(
        tmp,
        None,
        &format!(
            "CREATE TABLE t (id INT, v STRING, p STRING) USING hudi PARTITIONED BY (p) \
             TBLPROPERTIES (primaryKey = 'id'{props})"
        ),
        &loc,
    )
    .await;
    ctx.run("INSERT INTO t VALUES (1, 'a', 'x'), (2, NULL, 'y'), (3, 'c', 'x')")
        .await
        .unwrap();
    (ctx, loc)
}

/// What a version 6 table's upgrade cannot carry over, as (property, value, the refusal's
/// words): a custom payload class, a metadata table a Spark writer left.
pub const UNUPGRADABLE: [(&str, &str, &str); 2] = [
    (
        "hoodie.compaction.payload.class",
        "com.example.MyPayload",
        "custom payload class com.example.MyPayload",
    ),
    (
        "hoodie.table.metadata.partitions",
        "files",
        "metadata table",
    ),
];

/// Sets `key` to `value` in the `hoodie.properties` of the table at `loc` (in place of any
/// value it had), as another writer would have left it.
pub fn set_property(loc: &Path, key: &str, value: &str) {
    let file = loc.join(".hoodie/hoodie.properties");
    let props: String = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with(&format!("{key}=")))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&file, format!("{props}{key}={value}\n")).unwrap();
}

/// The times of table `t`'s active commits, oldest first.
pub async fn commit_times(ctx: &HoodieContext) -> Vec<String> {
    let commits = cells(ctx, "CALL show_commits(table => 't', limit => 100)").await;
    commits.into_iter().rev().map(|c| c[0].clone()).collect()
}

/// Table `t`'s rows (`id, name, ts, dt`) as of each commit of `commits` (a commit the cleaner
/// passed gives its refusal), then `now` (a query of the table as it is).
pub async fn rows_as_of(
    ctx: &HoodieContext,
    commits: &[String],
    now: &str,
) -> Vec<Vec<Vec<String>>> {
    let mut out = Vec::new();
    for c in commits {
        let sql = format!("SELECT id, name, ts, dt FROM t TIMESTAMP AS OF '{c}' ORDER BY id");
        match ctx.run(&sql).await {
            Ok(_) => out.push(cells(ctx, &sql).await),
            Err(e) => out.push(vec![vec![e.to_string()]]),
        }
    }
    out.push(cells(ctx, now).await);
    out
}

/// What a test's read of a table gives, from a new session on it and its location.
pub type TableRead<T> =
    fn(HoodieContext, PathBuf) -> std::pin::Pin<Box<dyn std::future::Future<Output = T>>>;

/// Moves copies of the table at `template` to version `to` through stores that fail at their
/// n-th write or delete, for n = 1, 2, ... until a move runs through: after each failure, and
/// after the move run again that finishes it, `read` of the copy must give `expected`, and the
/// copy ends at version `to`. Returns how many writes the move made.
pub async fn version_change_fails_anywhere<T: PartialEq + std::fmt::Debug>(
    tmp: &Path,
    template: &Path,
    to: u32,
    expected: &T,
    read: TableRead<T>,
) -> usize {
    use hoodie_format::client::TableServices;
    use hoodie_format::concurrency::ConcurrencySpec;
    let spec = hoodie_format::upgrade::UpgradeSpec {
        metadata: hoodie_format::metadata_table::MetadataTableRule::Refuse,
        archive: hoodie_format::archive::ArchiveSpec::resolve(|_| None, false).unwrap(),
        files: hoodie_format::write::FileSpec::default(),
    };
    let mut n = 1;
    loop {
        let loc = tmp.join(format!("run{n}"));
        let (storage, _store, table) = failing_copy(template, &loc, n).await;
        let services = TableServices::new(&table, ConcurrencySpec::single_writer());
        let failed = match services.change_version(to, &spec).await {
            Err(e) => {
                assert!(e.to_string().contains("injected failure"), "{n}: {e}");
                true
            }
            Ok(_) => false,
        };
        let seen = read(reader(tmp, &loc).await, loc.clone()).await;
        assert_eq!(&seen, expected, "after failing at {n}");
        let table = HudiTable::open(storage.clone()).await.unwrap();
        TableServices::new(&table, ConcurrencySpec::single_writer())
            .change_version(to, &spec)
            .await
            .unwrap();
        let seen = read(reader(tmp, &loc).await, loc.clone()).await;
        assert_eq!(&seen, expected, "finished after {n}");
        let props = std::fs::read_to_string(loc.join(".hoodie/hoodie.properties")).unwrap();
        assert!(
            props
                .lines()
                .any(|l| l == format!("hoodie.table.version={to}")),
            "{n}"
        );
        if !failed {
            return n;
        }
        n += 1;
        assert!(n < 100);
    }
}

/// A table `t` (id, name, ts, dt; key `id`, ordering `ts`, partitioned by `dt`; `props` added to
/// its properties, each after a comma) at `loc` after an insert (NULLs), an update, a delete
/// and a merge (an update and an insert), with an INSERT OVERWRITE of one partition after the
/// insert when `overwrite`.
pub async fn table_after_every_dml(
    tmp: &Path,
    loc: &Path,
    props: &str,
    overwrite: bool,
) -> HoodieContext {
    let create = format!(
        "CREATE TABLE t (id INT, name STRING, ts BIGINT, dt STRING) USING hudi PARTITIONED BY (dt) \
         TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts'{props})"
    );
    let ctx = session_with_table(tmp, None, &create, loc).await;
    let overwrite =
        overwrite.then_some("INSERT OVERWRITE t SELECT id, name, ts, dt FROM t WHERE dt = 'y'");
    let statements = [
        Some("INSERT INTO t VALUES (1, 'a', 1, 'x'), (2, NULL, 1, 'y'), (3, 'c', 1, 'x')"),
        overwrite,
        Some("UPDATE t SET name = 'B', ts = 2 WHERE id = 2"),
        Some("DELETE FROM t WHERE id = 3"),
        Some(
            "MERGE INTO t USING (SELECT 1 AS id, 'A' AS name, 3 AS ts, 'x' AS dt UNION ALL \
             SELECT 4, 'd', 1, 'z') s ON t.id = s.id \
             WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
        ),
    ];
    for s in statements.into_iter().flatten() {
        ctx.run(s).await.unwrap();
    }
    ctx
}

/// The `hoodie.properties` of the table at `loc`.
pub fn properties(loc: &Path) -> String {
    std::fs::read_to_string(loc.join(".hoodie/hoodie.properties")).unwrap()
}

/// Whether `props` has the line `line`.
pub fn has(props: &str, line: &str) -> bool {
    props.lines().any(|l| l == line)
}

/// Per block of a log file: its type and headers (read as Hudi's format spells them).
pub fn log_blocks(bytes: &[u8]) -> Vec<(i32, std::collections::HashMap<i32, String>)> {
    let int = |at: usize| i32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    let mut out = Vec::new();
    let mut at = 0;
    while at + 6 <= bytes.len() && &bytes[at..at + 6] == b"#HUDI#" {
        let size = i64::from_be_bytes(bytes[at + 6..at + 14].try_into().unwrap()) as usize;
        let (kind, count) = (int(at + 18), int(at + 22));
        let mut headers = std::collections::HashMap::new();
        let mut p = at + 26;
        for _ in 0..count {
            let (key, len) = (int(p), int(p + 4) as usize);
            headers.insert(
                key,
                String::from_utf8(bytes[p + 8..p + 8 + len].to_vec()).unwrap(),
            );
            p += 8 + len;
        }
        out.push((kind, headers));
        // the magic, the size (a long) and the `size` bytes it counts
        at += 14 + size;
    }
    out
}
