//! A test engine: writes a Hudi table through hoodie-format's write client alone, as a second
//! engine (a distributed one, a Python binding) would. Two writers, each in a task of its own
//! that opens the table from the write's handle as another process would, add file groups to
//! one pending write and report their statuses as JSON; one commit takes both. An upsert
//! through the client's whole-write path follows, then an upsert split among writers (the
//! client routes the rows; each file group's task travels as bytes to a writer that opens the
//! table itself), then a clean. `tests/interop/run.sh` has
//! hudi-rs read the table; `tests/client_engine.rs` reads it back here.
//!
//! Usage: `cargo run -p hoodie-format --example client_engine -- DIR` (prints the rows the
//! table holds, one JSON object a line).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use arrow::array::{new_null_array, ArrayRef, Int32Array, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::record_batch::RecordBatch;
use hoodie_format::client::{StatementRead, WriteClient};
use hoodie_format::keygen::KeyGenerator;
use hoodie_format::location::open_location;
use hoodie_format::new_table::NewTable;
use hoodie_format::schema::{avro_schema, is_meta_column, table_schema};
use hoodie_format::storage::TableStorage;
use hoodie_format::table_config::{MergeMode, TableType};
use hoodie_format::write::write_inserts;
use hoodie_format::write::WriteOptions;
use hoodie_format::write::{Budgets, Incoming, IncomingBuilder, KeySource};
use hoodie_format::write::{FileGroupTask, RowCounts, UpsertResult};
use hoodie_format::write::{FileGroupWriter, WriteHandle, WriteStatus};
use hoodie_format::write::{WriteKind, WriteSpec, WriteStatement};
use hoodie_format::{FormatError, HudiTable, Result, TableConfig};

/// One row of the engine's table: id, name, ts, region (the partition column).
pub type Row = (i32, Option<&'static str>, i64, &'static str);

/// What each of the two writers of the first commit writes (both into both partitions).
pub const WRITER_ROWS: [&[Row]; 2] = [
    &[
        (1, Some("a"), 1, "eu"),
        (2, None, 1, "us"),
        (3, Some("c"), 1, "eu"),
    ],
    &[
        (4, Some("d"), 1, "us"),
        (5, Some("e"), 1, "eu"),
        (6, Some("f"), 1, "us"),
    ],
];

/// The upserts of the second and third commits: keys updated (one with an older ordering
/// value, which loses), one inserted, then updated again (so the clean has a version to
/// delete) and one inserted into a new partition (a new file group).
pub const UPSERTS: [&[Row]; 2] = [
    &[
        (2, Some("b2"), 2, "us"),
        (5, Some("stale"), 0, "eu"),
        (7, Some("g"), 2, "eu"),
    ],
    &[
        (2, Some("b3"), 3, "us"),
        (7, Some("g3"), 3, "eu"),
        (8, Some("h"), 3, "ap"),
    ],
];

/// The table's rows once the engine is done, by id.
pub const EXPECTED: &[Row] = &[
    (1, Some("a"), 1, "eu"),
    (2, Some("b3"), 3, "us"),
    (3, Some("c"), 1, "eu"),
    (4, Some("d"), 1, "us"),
    (5, Some("e"), 1, "eu"),
    (6, Some("f"), 1, "us"),
    (7, Some("g3"), 3, "eu"),
    (8, Some("h"), 3, "ap"),
];

/// What [`write_table`] did: the table, the files the clean deleted, and what the split upsert
/// did to the rows.
pub struct Written {
    /// The table.
    pub table: HudiTable,
    /// The files the clean deleted.
    pub deleted: Vec<String>,
    /// The split upsert's result.
    pub split: UpsertResult,
}

/// Writes the engine's table at `dir`: two writers' statuses in one commit, an upsert, an
/// upsert split among writers, a clean keeping one commit.
pub async fn write_table(dir: &Path) -> Result<Written> {
    let columns = Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("name", DataType::Utf8, true),
        Field::new("ts", DataType::Int64, false),
        Field::new("region", DataType::Utf8, false),
    ]);
    let mut new = NewTable::new("engine_t", columns.clone());
    new.table_type = TableType::CopyOnWrite;
    new.record_keys = vec!["id".into()];
    new.ordering_field = Some("ts".into());
    new.partition_fields = vec!["region".into()];
    new.merge_mode = MergeMode::EventTimeOrdering;
    let config = TableConfig::from_properties(new.properties()?)?;
    let table = HudiTable::create(TableStorage::local(dir)?, config).await?;
    let schema = table_schema(&columns)?;
    let avro = avro_schema(table.config().name(), &schema)?.to_string();

    // the first commit: begun once, written by two writers, committed with both statuses
    let client = WriteClient::new(&table, spec(&table, "insert")?);
    let txn = client.begin(StatementRead::default()).await?;
    let mut tasks = Vec::new();
    for rows in WRITER_ROWS {
        let (handle, spec, schema) = (txn.handle(), client.spec().clone(), schema.clone());
        tasks.push(tokio::spawn(async move {
            remote_writer(handle, spec, schema, rows).await
        }));
    }
    let mut statuses = Vec::new();
    for task in tasks {
        let json = task.await.map_err(|source| FormatError::WriterTask {
            file_group: "a writer of the engine".into(),
            source,
        })??;
        statuses.push(WriteStatus::from_json(&json)?);
    }
    client.commit(txn, statuses, avro.clone()).await?;

    // then the client's whole write (begin, index lookup, commit, services)
    let client = WriteClient::new(&table, spec(&table, "upsert")?);
    let rows = incoming(&table, &schema, client.spec(), UPSERTS[0])?;
    client
        .write(&schema, rows, StatementRead::default())
        .await?;

    // and a keyed write split among writers: routed here, each file group written elsewhere
    let rows = incoming(&table, &schema, client.spec(), UPSERTS[1])?;
    client.check(&rows)?;
    let txn = client.begin(StatementRead::default()).await?;
    let mut routed = client.route(&txn, &schema, rows).await?;
    let (mut statuses, mut counts) = (Vec::new(), RowCounts::default());
    while let Some(wave) = routed.next_wave()? {
        let mut writers = Vec::new();
        for task in wave {
            let (handle, spec, schema) = (txn.handle(), client.spec().clone(), schema.clone());
            let bytes = task.to_bytes()?;
            writers.push(tokio::spawn(async move {
                remote_task_writer(handle, spec, schema, bytes).await
            }));
        }
        for writer in writers {
            let json = writer.await.map_err(|source| FormatError::WriterTask {
                file_group: "a writer of the engine".into(),
                source,
            })??;
            let status = WriteStatus::from_json(&json)?;
            counts.add(&status.rows);
            statuses.push(status);
        }
    }
    let split = routed.finish(&counts);
    client.commit(txn, statuses, avro).await?;

    let deleted = client
        .clean()
        .await?
        .into_iter()
        .flat_map(|c| c.metadata.partitions.into_iter())
        .flat_map(|(p, part)| {
            part.success_delete_files
                .into_iter()
                .map(move |f| format!("{p}/{f}"))
        })
        .collect();
    Ok(Written {
        table,
        deleted,
        split,
    })
}

/// A writer of one file group's task, as another process runs it: it has the write's handle,
/// its settings and the task's bytes, opens the table itself, writes the task and reports its
/// status as JSON.
async fn remote_task_writer(
    handle: WriteHandle,
    spec: WriteSpec,
    schema: SchemaRef,
    task: Vec<u8>,
) -> Result<Vec<u8>> {
    let table = HudiTable::open(open_location(&handle.location, &[])?).await?;
    let mut files = FileGroupWriter::new(&table, &handle);
    files
        .write_task(FileGroupTask::from_bytes(&task)?, &schema, &spec)
        .await?;
    Ok(files.finish().to_json())
}

/// A writer as another process runs it: it has the write's handle and its settings, opens
/// the table itself, writes its rows into new file groups and reports its status as JSON.
async fn remote_writer(
    handle: WriteHandle,
    spec: WriteSpec,
    schema: SchemaRef,
    rows: &'static [Row],
) -> Result<Vec<u8>> {
    let table = HudiTable::open(open_location(&handle.location, &[])?).await?;
    let mut files = FileGroupWriter::new(&table, &handle);
    let keygen = KeyGenerator::from_config(table.config())?;
    let incoming = incoming(&table, &schema, &spec, rows)?;
    write_inserts(&mut files, &keygen, &schema, incoming, &spec).await?;
    Ok(files.finish().to_json())
}

/// The write settings of `operation` (insert or upsert) on `table`, cleaning only when asked
/// and then keeping the latest commit.
pub fn spec(table: &HudiTable, operation: &str) -> Result<WriteSpec> {
    let session = BTreeMap::from([
        (
            "hoodie.spark.sql.insert.into.operation".to_string(),
            operation.to_string(),
        ),
        ("hoodie.clean.automatic".to_string(), "false".to_string()),
        (
            "hoodie.cleaner.commits.retained".to_string(),
            "1".to_string(),
        ),
    ]);
    WriteSpec::resolve(
        &WriteOptions::new(session, table.config()),
        WriteStatement::InsertInto,
    )
}

/// `rows` as the write's input: the table's columns, meta columns null (the writer fills them).
pub fn incoming(
    table: &HudiTable,
    schema: &SchemaRef,
    spec: &WriteSpec,
    rows: &[Row],
) -> Result<Incoming> {
    let keygen = KeyGenerator::from_config(table.config())?;
    let ordering = match spec.kind {
        WriteKind::Upsert => spec.ordering_field.as_deref(),
        _ => spec.precombine_field(),
    };
    let mut builder = IncomingBuilder::new(
        schema.clone(),
        keygen,
        KeySource::Keep,
        ordering,
        Budgets::unbounded(),
        None,
    )?;
    builder.push(batch(schema, rows)?, None)?;
    builder.finish()
}

/// `rows` as a batch of `schema` (the table's columns).
fn batch(schema: &SchemaRef, rows: &[Row]) -> Result<RecordBatch> {
    let n = rows.len();
    let mut columns: Vec<ArrayRef> = schema
        .fields()
        .iter()
        .filter(|f| is_meta_column(f.name()))
        .map(|f| new_null_array(f.data_type(), n))
        .collect();
    columns.push(Arc::new(Int32Array::from_iter_values(
        rows.iter().map(|r| r.0),
    )));
    columns.push(Arc::new(StringArray::from_iter(rows.iter().map(|r| r.1))));
    columns.push(Arc::new(Int64Array::from_iter_values(
        rows.iter().map(|r| r.2),
    )));
    columns.push(Arc::new(StringArray::from_iter_values(
        rows.iter().map(|r| r.3),
    )));
    Ok(RecordBatch::try_new(schema.clone(), columns)?)
}

#[tokio::main]
#[allow(dead_code)]
async fn main() -> Result<()> {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: client_engine DIR");
        std::process::exit(2);
    };
    write_table(Path::new(&dir)).await?;
    // the rows the table must read as, one JSON object a line, for another reader to check
    for (id, name, ts, region) in EXPECTED {
        let row = serde_json::json!({"id": id, "name": name, "ts": ts, "region": region});
        println!("{row}");
    }
    Ok(())
}
