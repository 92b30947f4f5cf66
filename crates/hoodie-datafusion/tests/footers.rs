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

/// The base files (relative to the table) with how many times `statement` (run on table `f`,
/// the table at `t`'s location opened over a recording store) read each one's footer, and how
/// many HEAD requests it sent for base files.
async fn footer_reads(props: &str, statement: &str) -> (HashMap<String, usize>, usize) {
    let tmp = tempfile::tempdir().unwrap();
    let (ctx, loc) = counted_table(tmp.path(), props).await;
    ctx.run("INSERT INTO t VALUES (4, NULL, 'y')")
        .await
        .unwrap();
    let (storage, store) = register_recorded(&ctx, "f", &loc).await;
    // nothing kept from the statements before, and opening the table (which read the newest
    // base file's footer for the schema) is not the statement: its reads are its own
    store.parquet_gets.lock().unwrap().clear();
    ctx.session()
        .runtime_env()
        .cache_manager
        .get_file_metadata_cache()
        .clear();
    ctx.run(statement).await.unwrap();
    let expected = if statement.starts_with("DELETE") {
        vec![vec!["1", "a"], vec!["2", ""], vec!["3", "c"]]
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
    let gets = store.parquet_gets.lock().unwrap().clone();
    let base = format!("{}/", storage.base());
    let mut reads: HashMap<String, usize> = HashMap::new();
    let mut heads = 0;
    for g in &gets {
        let rel = g.path.strip_prefix(&base).unwrap().to_string();
        heads += usize::from(g.head);
        // files the statement wrote are not there to read until it wrote them; the size is
        // that of the file on disk now, which no statement rewrites in place
        let size = std::fs::metadata(loc.join(&rel)).unwrap().len();
        if reads_footer(g, size) {
            *reads.entry(rel).or_default() += 1;
        }
    }
    (reads, heads)
}

/// Checks that each footer was read at most once and that some were read at all (the
/// statement did look at base files).
fn assert_once(statement: &str, (reads, heads): (HashMap<String, usize>, usize)) {
    assert!(!reads.is_empty(), "{statement}: no footer read");
    for (file, n) in &reads {
        assert_eq!(*n, 1, "{statement}: footer of {file} read {n} times");
    }
    assert_eq!(heads, 0, "{statement}: HEAD requests for base files");
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
        assert_once(statement, footer_reads(props, statement).await);
    }
}

#[tokio::test]
async fn merge_on_read_statements_read_each_footer_once() {
    for (props, statement) in STATEMENTS {
        let props = format!(", type = 'mor'{props}");
        assert_once(statement, footer_reads(&props, statement).await);
    }
}
