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
    let engine::Written {
        table,
        deleted,
        split,
    } = engine::write_table(&dir).await.unwrap();
    // the split upsert: two keys updated in their groups' rewrites, one in a new group
    assert_eq!(
        (
            split.rows.updated,
            split.rows.inserted,
            split.rows.deleted,
            split.rows.dropped
        ),
        (2, 1, 0, 0),
        "{split:?}"
    );
    assert_eq!(
        (split.rows.rewritten_file_groups, split.rows.new_file_groups),
        (2, 1),
        "{split:?}"
    );

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
        assert_eq!([2, 7, 8].contains(&r.0), r.4 == last, "{r:?}");
    }
}

#[tokio::test]
async fn a_status_of_another_write_is_refused_at_the_commit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("t");
    let table = engine::write_table(&dir).await.unwrap().table;
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

/// A merge-on-read table's keyed write split among writers: each touched group's task carries
/// the stored state the routing read (event-time ordering), travels as bytes, and its writer
/// appends a log file; a stale update is dropped by the writer from that state.
#[tokio::test]
async fn a_split_keyed_write_of_a_merge_on_read_table_logs_each_group_from_its_task() {
    use arrow::datatypes::{DataType, Field, Schema};
    use hoodie_format::client::{StatementRead, WriteClient};
    use hoodie_format::new_table::NewTable;
    use hoodie_format::read::SliceReader;
    use hoodie_format::schema::{avro_schema, table_schema};
    use hoodie_format::table_config::{MergeMode, TableType};
    use hoodie_format::write::{FileGroupTask, FileGroupWriter, RowCounts, WriteStatus};
    use hoodie_format::{HudiTable, TableConfig};
    use std::sync::Arc;

    let tmp = tempfile::tempdir().unwrap();
    let columns = Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("ts", DataType::Int64, false),
        Field::new("region", DataType::Utf8, false),
    ]);
    let mut new = NewTable::new("mor_t", columns.clone());
    new.table_type = TableType::MergeOnRead;
    new.record_keys = vec!["id".into()];
    new.ordering_field = Some("ts".into());
    new.partition_fields = vec!["region".into()];
    new.merge_mode = MergeMode::EventTimeOrdering;
    let mut properties = new.properties().unwrap();
    // a CDC table, so that its change reader can travel too (below)
    properties.set("hoodie.table.cdc.enabled", "true");
    let config = TableConfig::from_properties(properties).unwrap();
    let storage = hoodie_format::storage::TableStorage::local(tmp.path()).unwrap();
    let table = HudiTable::create(storage, config).await.unwrap();
    let schema = table_schema(&columns).unwrap();
    let avro = avro_schema(table.config().name(), &schema)
        .unwrap()
        .to_string();
    let first: &[engine::Row] = &[
        (1, Some("a"), 5, "eu"),
        (2, Some("b"), 5, "eu"),
        (3, Some("c"), 5, "us"),
    ];
    let client = WriteClient::new(&table, engine::spec(&table, "upsert").unwrap());
    let rows = engine::incoming(&table, &schema, client.spec(), first).unwrap();
    client
        .write(&schema, rows, StatementRead::default())
        .await
        .unwrap();

    // id 1 newer (updated), id 2 older (dropped), id 3 newer in the other partition
    let second: &[engine::Row] = &[
        (1, Some("a2"), 6, "eu"),
        (2, Some("stale"), 4, "eu"),
        (3, Some("c2"), 6, "us"),
    ];
    let rows = engine::incoming(&table, &schema, client.spec(), second).unwrap();
    client.check(&rows).unwrap();
    let txn = client.begin(StatementRead::default()).await.unwrap();
    let mut routed = client.route(&txn, &schema, rows).await.unwrap();
    let (mut statuses, mut counts) = (Vec::new(), RowCounts::default());
    while let Some(wave) = routed.next_wave().unwrap() {
        for task in wave {
            // as another process gets it: bytes, and the table opened from the handle
            let task = FileGroupTask::from_bytes(&task.to_bytes().unwrap()).unwrap();
            let handle = txn.handle();
            let opened = HudiTable::open(
                hoodie_format::location::open_location(&handle.location, &[]).unwrap(),
            )
            .await
            .unwrap();
            let mut writer = FileGroupWriter::new(&opened, &handle);
            writer
                .write_task(task, &schema, client.spec())
                .await
                .unwrap();
            let status = WriteStatus::from_json(&writer.finish().to_json()).unwrap();
            counts.add(&status.rows);
            statuses.push(status);
        }
    }
    let split = routed.finish(&counts);
    assert_eq!(
        (
            split.rows.updated,
            split.rows.dropped,
            split.rows.inserted,
            split.rows.logged_file_groups
        ),
        (2, 1, 0, 2),
        "{split:?}"
    );
    client.commit(txn, statuses, avro).await.unwrap();

    let timeline = table.timeline().await.unwrap();
    let slices = table.file_slices(&timeline, None).await.unwrap();
    assert!(slices.iter().all(|s| s.log_files.len() == 1), "{slices:?}");
    let reader = SliceReader::new(&table, &schema, (&timeline, None), None, &[]).unwrap();
    // as a worker in another process gets it: bytes, and the storage opened from its location
    let bytes = reader.to_bytes().unwrap();
    let shipped = SliceReader::from_bytes(&bytes, |location| {
        hoodie_format::location::open_location(location, &[])
    })
    .unwrap();
    assert!(SliceReader::from_bytes(&bytes[..bytes.len() - 1], |_| unreachable!()).is_err());
    for reader in [reader, shipped] {
        let got = merged_ids_and_names(Arc::new(reader), &slices).await;
        let want = [(1, "a2"), (2, "b"), (3, "c2")].map(|(i, n)| (i, n.to_string()));
        assert_eq!(got, want);
    }

    // the change reader as another process gets it reads the same changes of every split
    use hoodie_format::cdc::{cdc_splits, ChangeReader};
    let changes = ChangeReader::new(&table, &timeline, schema.clone()).unwrap();
    let bytes = changes.to_bytes().unwrap();
    let shipped = ChangeReader::from_bytes(&bytes, |location| {
        hoodie_format::location::open_location(location, &[])
    })
    .unwrap();
    assert!(ChangeReader::from_bytes(&bytes[..bytes.len() - 1], |_| unreachable!()).is_err());
    let splits = cdc_splits(table.storage(), &timeline, "00000000000000000", None)
        .await
        .unwrap();
    let mut rows = 0;
    for split in &splits {
        let here = changes.changes(split).await.unwrap();
        assert_eq!(shipped.changes(split).await.unwrap(), here, "{split:?}");
        rows += here.iter().map(|b| b.num_rows()).sum::<usize>();
    }
    // three inserts, then two updates (the stale one changed nothing)
    assert_eq!(rows, 5, "{splits:?}");
}

/// The `(id, name)` of every merged row of `slices`, sorted.
async fn merged_ids_and_names(
    reader: std::sync::Arc<hoodie_format::read::SliceReader>,
    slices: &[hoodie_format::fs_view::FileSlice],
) -> Vec<(i32, String)> {
    let mut got = Vec::new();
    for slice in slices {
        let mut opened = reader.open(slice, vec![]).await.unwrap();
        while let Some(batch) = futures::StreamExt::next(&mut opened.rows).await {
            let b = batch.unwrap();
            let col = |n: &str| b.column(b.schema().index_of(n).unwrap()).clone();
            let (id, name) = (col("id"), col("name"));
            for i in 0..b.num_rows() {
                got.push((
                    id.as_primitive::<Int32Type>().value(i),
                    name.as_string::<i32>().value(i).to_string(),
                ));
            }
        }
    }
    got.sort();
    got
}
