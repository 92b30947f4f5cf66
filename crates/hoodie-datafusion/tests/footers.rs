//! A statement reads each base file's footer at most once: the footers its scan reads are the
//! ones its key lookup and its rewrite of the same files use (the session's file metadata
//! cache), and no base file is asked for its size, which the timeline's listing gives.

use std::collections::HashMap;

mod common;

use common::failing::ParquetGet;
use common::{cells, counted_table, register_recorded};
use object_store::GetRange;

/// Whether `get` (of a file of `size` bytes) read the file's last bytes, where its footer is.
fn reads_footer(get: &ParquetGet, size: u64) -> bool {
    match &get.range {
        None => !get.head,
        Some(GetRange::Bounded(r)) => r.end >= size,
        Some(GetRange::Suffix(_)) => true,
        Some(GetRange::Offset(_)) => true,
    }
}

/// What a statement read: how many times it read each base file's footer (paths relative to
/// the table), how many HEAD requests it sent for base files, and how many times it listed the
/// timeline.
#[derive(Debug)]
struct Reads {
    footers: HashMap<String, usize>,
    heads: usize,
    timeline_listings: usize,
}

/// What `statement`, run on table `f` (the table at `t`'s location opened over a recording
/// store), read. With `opened_by_statement` the table is opened just before the statement, as
/// a catalog or `CREATE EXTERNAL TABLE` opens it while the statement that names it is planned,
/// and what the open read counts; else the table was opened earlier and its reads do not.
async fn statement_reads(props: &str, statement: &str, opened_by_statement: bool) -> Reads {
    let tmp = tempfile::tempdir().unwrap();
    let (ctx, loc) = counted_table(tmp.path(), props).await;
    ctx.run("INSERT INTO t VALUES (4, NULL, 'y')")
        .await
        .unwrap();
    // nothing kept from the statements before
    let forget = || {
        ctx.session()
            .runtime_env()
            .cache_manager
            .get_file_metadata_cache()
            .clear()
    };
    forget();
    let (storage, store) = register_recorded(&ctx, "f", &loc).await;
    if !opened_by_statement {
        // a statement before takes what the open read
        ctx.run("SELECT count(*) FROM f WHERE p = 'none'")
            .await
            .unwrap();
        store.parquet_gets.lock().unwrap().clear();
        store.listed_dirs.lock().unwrap().clear();
        forget();
    }
    ctx.run(statement).await.unwrap();
    let gets = store.parquet_gets.lock().unwrap().clone();
    // the timeline folder: `.hoodie/timeline` on versions 8 and 9, `.hoodie` on 6
    let timeline = match common::timeline_dir(&loc).ends_with("timeline") {
        true => format!("{}/.hoodie/timeline", storage.base()),
        false => format!("{}/.hoodie", storage.base()),
    };
    let timeline_listings = store
        .listed_dirs
        .lock()
        .unwrap()
        .iter()
        .filter(|d| **d == timeline)
        .count();
    let expected = if statement.starts_with("DELETE") {
        vec![vec!["1", "a"], vec!["2", ""], vec!["3", "c"]]
    } else if statement.starts_with("SELECT") {
        vec![vec!["1", "a"], vec!["2", ""], vec!["3", "c"], vec!["4", ""]]
    } else {
        vec![
            vec!["1", "a"],
            vec!["2", "u"],
            vec!["3", "c"],
            vec!["4", ""],
        ]
    };
    assert_eq!(
        cells(&ctx, "SELECT id, v FROM t ORDER BY id").await,
        expected,
        "{statement}"
    );
    let base = format!("{}/", storage.base());
    let mut footers: HashMap<String, usize> = HashMap::new();
    let mut heads = 0;
    for g in &gets {
        let rel = g.path.strip_prefix(&base).unwrap().to_string();
        heads += usize::from(g.head);
        // files the statement wrote are not there to read until it wrote them; the size is
        // that of the file on disk now, which no statement rewrites in place
        let size = std::fs::metadata(loc.join(&rel)).unwrap().len();
        if reads_footer(g, size) {
            *footers.entry(rel).or_default() += 1;
        }
    }
    Reads {
        footers,
        heads,
        timeline_listings,
    }
}

/// Checks that each footer was read at most once and that some were read at all (the
/// statement did look at base files), with no HEAD request, and that the timeline was listed
/// at most once (not at all when it starts from the listing of a statement moments before).
fn assert_once(statement: &str, reads: &Reads) {
    assert!(!reads.footers.is_empty(), "{statement}: no footer read");
    for (file, n) in &reads.footers {
        assert_eq!(*n, 1, "{statement}: footer of {file} read {n} times");
    }
    assert_eq!(reads.heads, 0, "{statement}: HEAD requests for base files");
    assert!(
        reads.timeline_listings <= 1,
        "{statement}: timeline listed {} times",
        reads.timeline_listings
    );
}

/// The statements checked, each with the table properties it needs: an INSERT that upserts
/// looks its keys up, then rewrites (or appends to) the file group that holds one.
const STATEMENTS: [(&str, &str); 4] = [
    ("", "UPDATE f SET v = 'u' WHERE id = 2"),
    ("", "DELETE FROM f WHERE id = 4"),
    (
        "",
        "MERGE INTO f USING (SELECT 2 AS id, 'u' AS v, 'y' AS p) s ON f.id = s.id \
         WHEN MATCHED THEN UPDATE SET *",
    ),
    (
        ", 'hoodie.spark.sql.insert.into.operation' = 'upsert'",
        "INSERT INTO f VALUES (2, 'u', 'y')",
    ),
];

#[tokio::test]
async fn copy_on_write_statements_read_each_footer_once() {
    for (props, statement) in STATEMENTS {
        assert_once(statement, &statement_reads(props, statement, false).await);
    }
}

#[tokio::test]
async fn merge_on_read_statements_read_each_footer_once() {
    for (props, statement) in STATEMENTS {
        let props = format!(", type = 'mor'{props}");
        assert_once(statement, &statement_reads(&props, statement, false).await);
    }
}

/// The statement that opens the table (as a catalog lookup does) lists its timeline and reads
/// each footer once in all: the open's listing and the schema's footer are the ones its scan
/// or write uses.
#[tokio::test]
async fn a_statement_that_opens_its_table_reads_each_footer_and_the_timeline_once() {
    let read = "SELECT id, v FROM f WHERE p = 'x'";
    for table_type in ["cow", "mor"] {
        for (more, statement) in [("", read)].into_iter().chain(STATEMENTS) {
            let props = format!(", type = '{table_type}'{more}");
            let reads = statement_reads(&props, statement, true).await;
            assert_once(statement, &reads);
            assert_eq!(reads.timeline_listings, 1, "{table_type}: {statement}");
        }
    }
}
