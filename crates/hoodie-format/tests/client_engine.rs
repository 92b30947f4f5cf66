//! The write client drives a write with no engine but the one in `examples/client_engine.rs`:
//! two writers' statuses in one commit, an upsert, a clean; the table read back file by file.

#[path = "../examples/client_engine.rs"]
#[allow(dead_code)]
mod engine;

use arrow::array::{Array, AsArray};
use arrow::datatypes::{Int32Type, Int64Type};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

/// `(id, name, ts, region, commit time)` of every row of the latest base files.
type Stored = (i32, Option<String>, i64, String, String);

fn parquet_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() && !p.ends_with(".hoodie") {
            out.extend(parquet_files(&p));
        } else if p.extension().is_some_and(|x| x == "parquet") {
            out.push(p);
        }
    }
    out
}

#[tokio::test]
async fn two_writers_commit_once_then_two_upserts_and_a_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("engine_t");
    let (table, deleted) = engine::write_table(&dir).await.unwrap();

    let timeline = table.timeline().await.unwrap();
    // (the folder lists its files in no particular order)
    let mut done: Vec<(String, String)> = timeline
        .files()
        .iter()
        .filter(|i| i.state == hoodie_format::timeline::State::Completed)
        .map(|i| (i.timestamp.clone(), i.action.as_str().to_string()))
        .collect();
    done.sort();
    let done: Vec<String> = done.into_iter().map(|(_, a)| a).collect();
    assert_eq!(
        done,
        vec!["commit", "commit", "commit", "clean"],
        "{done:?}"
    );

    // the first commit holds both writers' files: each wrote a file group per partition
    let first = timeline.completed_writes().next().unwrap().clone();
    let metadata = timeline
        .read_commit_metadata(table.storage(), &first)
        .await
        .unwrap();
    let stats: Vec<_> = metadata.write_stats().collect();
    assert_eq!(stats.len(), 4, "{stats:?}");
    assert_eq!(stats.iter().map(|s| s.num_writes).sum::<i64>(), 6);

    // the clean deleted the first versions of the file groups both upserts rewrote
    let on_disk = parquet_files(&dir);
    assert!(!deleted.is_empty());
    for f in &deleted {
        assert!(!dir.join(f).exists(), "{f} is still there");
        assert!(
            f.contains(&first.timestamp),
            "{f} is not of the first commit"
        );
    }
    // the latest slices hold exactly the expected rows
    let slices = table.file_slices(&timeline, None).await.unwrap();
    assert!(on_disk.len() >= slices.len(), "{on_disk:?}");
    let mut rows: Vec<Stored> = Vec::new();
    for s in &slices {
        let path = dir.join(&s.base_file.as_ref().unwrap().rel_path);
        let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).unwrap())
            .unwrap()
            .build()
            .unwrap();
        for b in reader {
            let b = b.unwrap();
            let col = |n: &str| b.column(b.schema().index_of(n).unwrap()).clone();
            let (commit, id, name, ts, region) = (
                col("_hoodie_commit_time"),
                col("id"),
                col("name"),
                col("ts"),
                col("region"),
            );
            for i in 0..b.num_rows() {
                let name = name.as_string::<i32>();
                rows.push((
                    id.as_primitive::<Int32Type>().value(i),
                    name.is_valid(i).then(|| name.value(i).to_string()),
                    ts.as_primitive::<Int64Type>().value(i),
                    region.as_string::<i32>().value(i).to_string(),
                    commit.as_string::<i32>().value(i).to_string(),
                ));
            }
        }
    }
    rows.sort();
    let expected: Vec<_> = engine::EXPECTED
        .iter()
        .map(|r| (r.0, r.1.map(str::to_string), r.2, r.3.to_string()))
        .collect();
    let got: Vec<_> = rows
        .iter()
        .map(|r| (r.0, r.1.clone(), r.2, r.3.clone()))
        .collect();
    assert_eq!(got, expected);
    // the rows the last upsert wrote carry its commit time
    let last = timeline
        .completed_writes()
        .nth(2)
        .unwrap()
        .timestamp
        .clone();
    for r in &rows {
        assert_eq!([2, 7].contains(&r.0), r.4 == last, "{r:?}");
    }
}

#[tokio::test]
async fn a_status_of_another_write_is_refused_at_the_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let (table, _) = engine::write_table(&dir).await.unwrap();
    let client =
        hoodie_format::client::WriteClient::new(&table, engine::spec(&table, "insert").unwrap());
    let txn = client
        .begin(hoodie_format::client::StatementRead::default())
        .await
        .unwrap();
    let stray = hoodie_format::write::WriteStatus {
        instant: "20000101000000000".into(),
        ..Default::default()
    };
    let err = client
        .commit(txn, vec![stray], String::new())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("cannot be committed"), "{err}");
}
