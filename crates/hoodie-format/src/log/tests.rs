use std::sync::Arc;

use arrow::array::*;
use arrow::datatypes::*;
use arrow::record_batch::RecordBatch;

use super::apply::{LogApplier, Precedence};
use super::delete::{DeleteRecord, OrderingValue};
use super::keys::KeySource;
use super::read::{read_slice_logs, LogContent};
use super::write::{log_file_bytes, DataBlockFormat, DataRows};
use crate::storage::TableStorage;
use crate::table_config::MergeMode;

fn schema() -> SchemaRef {
    let mut fields = crate::schema::meta_fields();
    fields.push(Field::new("id", DataType::Int32, false));
    fields.push(Field::new("v", DataType::Utf8, true));
    fields.push(Field::new("ts", DataType::Int64, true));
    Arc::new(Schema::new(fields))
}

fn rows(ids: &[i32], vs: &[Option<&str>], ts: &[Option<i64>], instant: &str) -> RecordBatch {
    let n = ids.len();
    let s = |v: String| -> ArrayRef { Arc::new(StringArray::from(vec![v; n])) };
    RecordBatch::try_new(
        schema(),
        vec![
            s(instant.into()),
            s(format!("{instant}_0_1")),
            Arc::new(StringArray::from_iter_values(
                ids.iter().map(|i| i.to_string()),
            )),
            s(String::new()),
            s("fg-0".into()),
            Arc::new(Int32Array::from(ids.to_vec())),
            Arc::new(StringArray::from(vs.to_vec())),
            Arc::new(Int64Array::from(ts.to_vec())),
        ],
    )
    .unwrap()
}

fn del(id: i32, ordering: OrderingValue) -> DeleteRecord {
    DeleteRecord {
        record_key: id.to_string(),
        partition_path: String::new(),
        ordering,
    }
}

async fn merged(
    base: &RecordBatch,
    logs: Vec<(String, Vec<u8>)>,
    mode: MergeMode,
    committed: &[&str],
) -> Vec<String> {
    let (_dir, storage, names) = stored(logs).await;
    let committed: Vec<String> = committed.iter().map(|s| s.to_string()).collect();
    let admits = move |i: &str| committed.iter().any(|c| c == i);
    let read = read_slice_logs(&storage, &names, &admits, &schema())
        .await
        .unwrap();
    let rules = Precedence::new(&schema(), mode, Some("ts"));
    let by_text = merge_lines(base, read.contents.clone(), &KeySource::Meta, &rules);
    // the key is the id's text, so matching by the integer column merges the same
    let by_int = merge_lines(
        base,
        read.contents,
        &KeySource::IntColumn("id".into()),
        &rules,
    );
    assert_eq!(by_text, by_int, "keys matched as text and as integers");
    by_text
}

/// Log files `logs` (name, bytes) stored in a new directory, and their names.
async fn stored(logs: Vec<(String, Vec<u8>)>) -> (tempfile::TempDir, TableStorage, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let storage = TableStorage::local(dir.path()).unwrap();
    let mut names = Vec::new();
    for (name, bytes) in logs {
        storage.put(&name, bytes).await.unwrap();
        names.push(name);
    }
    (dir, storage, names)
}

fn merge_lines(
    base: &RecordBatch,
    contents: Vec<LogContent>,
    keys: &KeySource,
    rules: &Precedence,
) -> Vec<String> {
    let mut m = LogApplier::new(&schema(), contents, keys, rules.clone()).unwrap();
    let mut out = vec![m.apply_to_base(base).unwrap()];
    out.extend(m.remaining().unwrap());
    lines(&out)
}

fn log(
    name: &str,
    instant: &str,
    data: Option<&RecordBatch>,
    deletes: &[DeleteRecord],
) -> (String, Vec<u8>) {
    log_as(name, instant, data, deletes, DataBlockFormat::Avro)
}

fn log_as(
    name: &str,
    instant: &str,
    data: Option<&RecordBatch>,
    deletes: &[DeleteRecord],
    data_blocks: DataBlockFormat,
) -> (String, Vec<u8>) {
    let json = crate::schema::avro_schema_with_meta("t", &schema())
        .unwrap()
        .to_string();
    let files = crate::write::FileSpec {
        data_blocks,
        ..Default::default()
    };
    let data: Vec<DataRows> = data.into_iter().map(DataRows::whole).collect();
    let bytes = log_file_bytes(instant, &json, &data, deletes, &files, None).unwrap();
    (name.to_string(), bytes)
}

/// A base of three records (a NULL name) at 100, and at 200 an update of 2 (to NULL) and an
/// insert of 4.
fn base_and_update() -> (RecordBatch, RecordBatch) {
    let base = rows(
        &[1, 2, 3],
        &[Some("a"), Some("b"), None],
        &[Some(5), Some(5), Some(5)],
        "100",
    );
    let update = rows(&[2, 4], &[None, Some("new")], &[Some(6), Some(1)], "200");
    (base, update)
}

/// Records written as a PARQUET_DATA block (`hoodie.logfile.data.block.format = parquet`) merge
/// as the same records in an AVRO_DATA block do, NULLs included.
#[tokio::test]
async fn parquet_data_blocks_merge_as_avro_blocks_do() {
    let (base, l1) = base_and_update();
    let mut got = Vec::new();
    for format in [DataBlockFormat::Avro, DataBlockFormat::Parquet] {
        let logs = vec![log_as(
            ".fg-0_200.log.1_0-0-0",
            "200",
            Some(&l1),
            &[del(3, OrderingValue::Int(0))],
            format,
        )];
        let (_, bytes) = &logs[0];
        // the block type (5: PARQUET_DATA) follows the magic, the block size and the version
        assert_eq!(
            bytes[6 + 8 + 4..6 + 8 + 8] == 5i32.to_be_bytes(),
            format == DataBlockFormat::Parquet
        );
        got.push(merged(&base, logs, MergeMode::EventTimeOrdering, &["100", "200"]).await);
    }
    assert_eq!(got[0], ["1:a", "2:NULL", "4:new"]);
    assert_eq!(got[1], got[0]);
}

/// A reader of some columns, in another order, gets those columns of a Parquet block, each
/// under its own name, though the block's file is read projected to them.
#[tokio::test]
async fn a_parquet_block_reads_the_reader_columns_in_the_reader_order() {
    let (_, update) = base_and_update();
    let logs = vec![log_as(
        ".fg-0_200.log.1_0-0-0",
        "200",
        Some(&update),
        &[],
        DataBlockFormat::Parquet,
    )];
    let (_dir, storage, names) = stored(logs).await;
    let reader = Arc::new(Schema::new(vec![
        Field::new("ts", DataType::Int64, true),
        Field::new("v", DataType::Utf8, true),
        Field::new("id", DataType::Int32, false),
    ]));
    let admits = |_: &str| true;
    let read = read_slice_logs(&storage, &names, &admits, &reader)
        .await
        .unwrap();
    let [LogContent::Rows(b)] = &read.contents[..] else {
        panic!("one data block: {:?}", read.contents.len());
    };
    assert_eq!(b.schema(), reader);
    let ts = b.column(0).as_primitive::<arrow::datatypes::Int64Type>();
    let v = b.column(1).as_string::<i32>();
    let id = b.column(2).as_primitive::<arrow::datatypes::Int32Type>();
    assert_eq!(ts.iter().collect::<Vec<_>>(), [Some(6), Some(1)]);
    assert_eq!(v.iter().collect::<Vec<_>>(), [None, Some("new")]);
    assert_eq!(id.values().to_vec(), [2, 4]);
}

#[tokio::test]
async fn updates_deletes_and_inserts_in_logs_merge_with_the_base() {
    let (base, l1) = base_and_update();
    let logs = vec![
        log(
            ".fg-0_200.log.1_0-0-0",
            "200",
            Some(&l1),
            &[del(3, OrderingValue::Int(0))],
        ),
        // a failed write's block is skipped
        log(
            ".fg-0_300.log.1_0-0-0",
            "300",
            None,
            &[del(1, OrderingValue::Int(0))],
        ),
    ];
    let got = merged(&base, logs, MergeMode::EventTimeOrdering, &["100", "200"]).await;
    assert_eq!(got, ["1:a", "2:NULL", "4:new"]);
}

#[tokio::test]
async fn event_time_keeps_the_greater_ordering_value_commit_time_the_latest() {
    let base = rows(
        &[1, 2],
        &[Some("a"), Some("b")],
        &[Some(10), Some(10)],
        "100",
    );
    let late = rows(&[1], &[Some("older")], &[Some(3)], "200");
    let logs = || {
        vec![log(
            ".fg-0_200.log.1_0-0-0",
            "200",
            Some(&late),
            // an ordering-aware delete loses to the greater stored value
            &[del(2, OrderingValue::Long(5))],
        )]
    };
    let event = merged(&base, logs(), MergeMode::EventTimeOrdering, &["100", "200"]).await;
    assert_eq!(event, ["1:a", "2:b"]);
    let commit = merged(
        &base,
        logs(),
        MergeMode::CommitTimeOrdering,
        &["100", "200"],
    )
    .await;
    assert_eq!(commit, ["1:older"]);
}

#[tokio::test]
async fn a_record_after_a_delete_comes_back_and_a_rollback_block_hides_its_target() {
    let base = rows(&[1], &[Some("a")], &[Some(10)], "100");
    let again = rows(&[1], &[Some("again")], &[Some(11)], "300");
    let json = crate::schema::avro_schema_with_meta("t", &schema())
        .unwrap()
        .to_string();
    let mut rollback = Vec::new();
    super::block::encode_block(
        super::block::BlockType::Command,
        &[(0, "400"), (1, "300"), (3, "0")],
        &[],
        &mut rollback,
    );
    let logs = vec![
        log(
            ".fg-0_100.log.1_0-0-0",
            "200",
            None,
            &[del(1, OrderingValue::Int(0))],
        ),
        log(".fg-0_100.log.2_0-0-0", "300", Some(&again), &[]),
    ];
    let got = merged(
        &base,
        logs.clone(),
        MergeMode::EventTimeOrdering,
        &["100", "200", "300"],
    )
    .await;
    assert_eq!(got, ["1:again"]);
    let mut with_rollback = logs;
    with_rollback.push((".fg-0_100.log.3_1-0-1".into(), rollback));
    let got = merged(
        &base,
        with_rollback,
        MergeMode::EventTimeOrdering,
        &["100", "200", "300", "400"],
    )
    .await;
    assert!(got.is_empty(), "{got:?}");
    let _ = json;
}

#[tokio::test]
async fn a_truncated_last_block_is_ignored_and_garbage_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let storage = TableStorage::local(dir.path()).unwrap();
    let l1 = rows(&[7], &[Some("x")], &[Some(1)], "200");
    let (_, mut bytes) = log("a", "200", Some(&l1), &[]);
    let (_, second) = log("b", "200", None, &[del(7, OrderingValue::Int(0))]);
    bytes.extend_from_slice(&second[..second.len() - 5]);
    storage.put("a", bytes).await.unwrap();
    storage.put("g", b"not a log".to_vec()).await.unwrap();
    let admits = |_: &str| true;
    let read = read_slice_logs(&storage, &["a".into()], &admits, &schema())
        .await
        .unwrap();
    assert_eq!(read.contents.len(), 1);
    assert!(matches!(&read.contents[0], LogContent::Rows(b) if b.num_rows() == 1));
    let err = read_slice_logs(&storage, &["g".into()], &admits, &schema())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("magic"), "{err}");
}

#[tokio::test]
async fn logged_changes_merge_among_themselves_then_with_the_base_as_java_and_hudi_rs_do() {
    // base ts 5; logs: an update (ts 9), a DELETE (default ordering), a re-insert: the logs
    // reduce to the re-insert, which then meets the base record by its ordering value
    let base = rows(&[2], &[Some("b")], &[Some(5)], "100");
    let up = rows(&[2], &[Some("b2")], &[Some(9)], "200");
    let logs = |ts: i64| {
        let again = rows(&[2], &[Some("again")], &[Some(ts)], "400");
        vec![
            log(".fg-0_100.log.1_0-0-0", "200", Some(&up), &[]),
            log(
                ".fg-0_100.log.2_0-0-0",
                "300",
                None,
                &[del(2, OrderingValue::Int(0))],
            ),
            log(".fg-0_100.log.3_0-0-0", "400", Some(&again), &[]),
        ]
    };
    let all = ["100", "200", "300", "400"];
    let got = merged(&base, logs(7), MergeMode::EventTimeOrdering, &all).await;
    assert_eq!(got, ["2:again"]);
    let got = merged(&base, logs(1), MergeMode::EventTimeOrdering, &all).await;
    assert_eq!(got, ["2:b"]);
    // a delete last deletes whatever came before
    let got = merged(
        &base,
        logs(7)[..2].to_vec(),
        MergeMode::EventTimeOrdering,
        &all,
    )
    .await;
    assert!(got.is_empty(), "{got:?}");
}

#[test]
fn under_integer_keys_a_delete_of_text_no_integer_has_changes_nothing() {
    let base = rows(&[1, 7], &[Some("a"), Some("b")], &[Some(1), Some(1)], "100");
    let deletes = |key: &str| {
        vec![LogContent::Deletes(vec![DeleteRecord {
            record_key: key.into(),
            partition_path: String::new(),
            ordering: OrderingValue::Int(0),
        }])]
    };
    let rules = Precedence::new(&schema(), MergeMode::EventTimeOrdering, Some("ts"));
    let ints = KeySource::IntColumn("id".into());
    // "07" and "+7" are not 7's text: no record has them as its key
    for key in ["07", "+7", "x"] {
        assert_eq!(
            merge_lines(&base, deletes(key), &ints, &rules),
            ["1:a", "7:b"],
            "{key}"
        );
    }
    assert_eq!(merge_lines(&base, deletes("7"), &ints, &rules), ["1:a"]);
}

/// A log file whose data block (`data`, with its records' rows) and delete block carry record
/// positions counted in the base file of instant `base`.
fn positioned_log(
    name: &str,
    instant: &str,
    data: (Option<&RecordBatch>, &[u64]),
    deletes: (&[DeleteRecord], &[u64]),
    base: &str,
) -> (String, Vec<u8>) {
    use super::positions::encode_positions;
    let json = crate::schema::avro_schema_with_meta("t", &schema())
        .unwrap()
        .to_string();
    let positions = super::write::BlockPositions {
        base_instant: base.into(),
        deletes: (!deletes.1.is_empty()).then(|| encode_positions(deletes.1)),
    };
    let rows = (!data.1.is_empty()).then(|| encode_positions(data.1));
    let data: Vec<DataRows> = (data.0.into_iter())
        .map(|r| DataRows {
            positions: rows.as_deref(),
            ..DataRows::whole(r)
        })
        .collect();
    let files = crate::write::FileSpec::default();
    let bytes = log_file_bytes(instant, &json, &data, deletes.0, &files, Some(&positions)).unwrap();
    (name.to_string(), bytes)
}

/// The merge of `logs` with the base records `base` (given batch by batch) read as a slice
/// whose base file has instant `base_instant`, with keys as text and as integers (which must
/// agree), and whether it went by record position.
async fn slice_merged(
    base: &[RecordBatch],
    logs: Vec<(String, Vec<u8>)>,
    base_instant: &str,
) -> (Vec<String>, bool) {
    let (_dir, storage, names) = stored(logs).await;
    let read = read_slice_logs(&storage, &names, &|_: &str| true, &schema())
        .await
        .unwrap();
    let rules = Precedence::new(&schema(), MergeMode::EventTimeOrdering, Some("ts"));
    let mut got = Vec::new();
    for keys in [KeySource::Meta, KeySource::IntColumn("id".into())] {
        let mut m = LogApplier::of_slice(
            &schema(),
            read.clone(),
            Some(base_instant),
            &keys,
            rules.clone(),
        )
        .unwrap();
        let mut out: Vec<RecordBatch> = base.iter().map(|b| m.apply_to_base(b).unwrap()).collect();
        out.extend(m.remaining().unwrap());
        got.push((lines(&out), m.merges_by_position()));
    }
    assert_eq!(got[0], got[1], "keys matched as text and as integers");
    got.remove(0)
}

fn lines(batches: &[RecordBatch]) -> Vec<String> {
    let mut lines = Vec::new();
    for b in batches {
        let v = b.column(6).as_string::<i32>();
        for r in 0..b.num_rows() {
            lines.push(format!(
                "{}:{}",
                b.column(5).as_primitive::<Int32Type>().value(r),
                if v.is_null(r) { "NULL" } else { v.value(r) }
            ));
        }
    }
    lines
}

/// Base records 1..=5 at instant 100, read in batches of 2, 2 and 1 rows.
fn five_in_batches() -> Vec<RecordBatch> {
    let v = [Some("a"), Some("b"), None, Some("d"), Some("e")];
    let base = rows(&[1, 2, 3, 4, 5], &v, &[Some(5); 5], "100");
    vec![base.slice(0, 2), base.slice(2, 2), base.slice(4, 1)]
}

/// Logs whose every block names the base rows it changes merge by position, batch after
/// batch, to what the merge by key gives.
#[tokio::test]
async fn positions_of_the_base_file_merge_as_keys_do() {
    let base = five_in_batches();
    let up = rows(&[2, 5], &[Some("x"), None], &[Some(6), Some(6)], "200");
    let again = rows(&[2], &[Some("y")], &[Some(7)], "300");
    let logs = vec![
        positioned_log(
            ".fg-0_100.log.1_0-0-0",
            "200",
            (Some(&up), &[1, 4]),
            (&[del(3, OrderingValue::Int(0))], &[2]),
            "100",
        ),
        positioned_log(
            ".fg-0_100.log.2_0-0-0",
            "300",
            (Some(&again), &[1]),
            (&[], &[]),
            "100",
        ),
    ];
    let want = ["1:a", "2:y", "4:d", "5:NULL"];
    assert_eq!(
        slice_merged(&base, logs.clone(), "100").await,
        (want.map(String::from).to_vec(), true)
    );
    // the same logs merged by key
    let by_key = merged(
        &rows(
            &[1, 2, 3, 4, 5],
            &[Some("a"), Some("b"), None, Some("d"), Some("e")],
            &[Some(5); 5],
            "100",
        ),
        logs,
        MergeMode::EventTimeOrdering,
        &["100", "200", "300"],
    )
    .await;
    assert_eq!(by_key, want);
}

/// Positions counted in another base file (written before a compaction) or a block without
/// positions make the slice merge by key, as Java falls back.
#[tokio::test]
async fn a_block_without_positions_of_the_base_file_makes_the_slice_merge_by_key() {
    let base = five_in_batches();
    let up = rows(&[2], &[Some("x")], &[Some(6)], "200");
    let insert = rows(&[9], &[Some("new")], &[Some(6)], "300");
    let first = || {
        positioned_log(
            ".fg-0_100.log.1_0-0-0",
            "200",
            (Some(&up), &[1]),
            (&[], &[]),
            "100",
        )
    };
    let positioned = slice_merged(&base, vec![first()], "100").await;
    assert_eq!(
        positioned,
        (
            vec![
                "1:a".into(),
                "2:x".into(),
                "3:NULL".into(),
                "4:d".into(),
                "5:e".into()
            ],
            true
        )
    );
    // counted in an older base file
    let older = slice_merged(&base, vec![first()], "050").await;
    assert_eq!(older, (positioned.0.clone(), false));
    // followed by a block of inserts, which has no positions
    let logs = vec![
        first(),
        log(".fg-0_100.log.2_0-0-0", "300", Some(&insert), &[]),
    ];
    let mut want = positioned.0.clone();
    want.push("9:new".into());
    assert_eq!(slice_merged(&base, logs, "100").await, (want, false));
}

/// A logged record meets the base record at the row its position names, as Hudi's
/// position-based merge has it (whatever key that row holds): the proof that positions, not
/// keys, matched them.
#[tokio::test]
async fn a_logged_record_meets_the_base_row_its_position_names() {
    let base = five_in_batches();
    let up = rows(&[2], &[Some("x")], &[Some(6)], "200");
    // row 3 holds key 4
    let logs = vec![positioned_log(
        ".fg-0_100.log.1_0-0-0",
        "200",
        (Some(&up), &[3]),
        (&[], &[]),
        "100",
    )];
    let (got, by_position) = slice_merged(&base, logs, "100").await;
    assert!(by_position);
    assert_eq!(got, ["1:a", "2:b", "3:NULL", "2:x", "5:e"]);
}
