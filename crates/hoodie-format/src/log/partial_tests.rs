//! The merge of partial-update log records with base and logged records.

use std::sync::Arc;

use arrow::array::*;
use arrow::datatypes::*;
use arrow::record_batch::RecordBatch;

use super::apply::{LogApplier, Precedence};
use super::delete::{DeleteRecord, OrderingValue};
use super::keys::{KeySource, RecordKeys};
use super::partial::{nullable, PartialRows};
use super::read::{read_slice_logs, LogContent};
use crate::storage::TableStorage;
use crate::table_config::MergeMode;

fn schema() -> SchemaRef {
    let mut fields = crate::schema::meta_fields();
    fields.push(Field::new("id", DataType::Int32, false));
    fields.push(Field::new("name", DataType::Utf8, true));
    fields.push(Field::new("price", DataType::Float64, true));
    fields.push(Field::new("ts", DataType::Int64, true));
    Arc::new(Schema::new(fields))
}

/// One version of a record: id, name, price, ts.
type Rec<'a> = (i32, &'a str, f64, i64);

fn batch(schema: SchemaRef, recs: &[Rec], instant: &str) -> RecordBatch {
    let n = recs.len();
    let s = |v: String| -> ArrayRef { Arc::new(StringArray::from(vec![v; n])) };
    RecordBatch::try_new(
        schema,
        vec![
            s(instant.into()),
            s(format!("{instant}_0_1")),
            Arc::new(StringArray::from_iter_values(
                recs.iter().map(|r| r.0.to_string()),
            )),
            s(String::new()),
            s("fg-0".into()),
            Arc::new(Int32Array::from_iter_values(recs.iter().map(|r| r.0))),
            Arc::new(StringArray::from_iter_values(recs.iter().map(|r| r.1))),
            Arc::new(Float64Array::from_iter_values(recs.iter().map(|r| r.2))),
            Arc::new(Int64Array::from_iter_values(recs.iter().map(|r| r.3))),
        ],
    )
    .unwrap()
}

/// Whole records.
fn full(recs: &[Rec], instant: &str) -> RecordBatch {
    batch(schema(), recs, instant)
}

/// Partial records setting the meta columns and `cols` (the others' values are dropped).
fn partial(recs: &[Rec], cols: &[&str], instant: &str) -> LogContent {
    let whole = batch(nullable(&schema()), recs, instant);
    let set: Arc<[bool]> = schema()
        .fields()
        .iter()
        .map(|f| f.name().starts_with("_hoodie") || cols.contains(&f.name().as_str()))
        .collect();
    let columns = whole
        .columns()
        .iter()
        .zip(set.iter())
        .map(|(c, &s)| match s {
            true => c.clone(),
            false => new_null_array(c.data_type(), c.len()),
        })
        .collect();
    let rows = RecordBatch::try_new(whole.schema(), columns).unwrap();
    let keys = rows.column(2).as_string::<i32>().clone();
    LogContent::Partial(PartialRows { rows, set, keys })
}

fn delete(id: i32) -> LogContent {
    LogContent::Deletes(vec![DeleteRecord {
        record_key: id.to_string(),
        partition_path: String::new(),
        ordering: OrderingValue::Int(0),
    }])
}

/// The merged rows as `id:name:price:ts@commit`, merged with keys by text and by integer
/// (which must agree).
fn merge(base: &[Rec], logs: Vec<LogContent>, mode: MergeMode) -> Vec<String> {
    let base = full(base, "100");
    let rules = Precedence::new(&schema(), mode, Some("ts"));
    let by_text = lines(&base, logs.clone(), &KeySource::Meta, &rules);
    let by_int = lines(&base, logs, &KeySource::IntColumn("id".into()), &rules);
    assert_eq!(by_text, by_int, "keys matched as text and as integers");
    by_text
}

fn lines(
    base: &RecordBatch,
    logs: Vec<LogContent>,
    keys: &KeySource,
    rules: &Precedence,
) -> Vec<String> {
    let mut m = LogApplier::new(&schema(), logs, keys, rules.clone()).unwrap();
    let mut out = vec![m.apply_to_base(base).unwrap()];
    out.extend(m.remaining().unwrap());
    let mut lines = Vec::new();
    for b in out {
        assert_eq!(b.schema(), schema());
        let text = |c: usize, r: usize| -> String {
            let col = arrow::compute::cast(b.column(c), &DataType::Utf8).unwrap();
            let s = col.as_string::<i32>();
            if s.is_null(r) {
                "NULL".into()
            } else {
                s.value(r).into()
            }
        };
        for r in 0..b.num_rows() {
            lines.push(format!(
                "{}:{}:{}:{}@{}",
                text(5, r),
                text(6, r),
                text(7, r),
                text(8, r),
                text(0, r)
            ));
        }
    }
    lines
}

const EVENT: MergeMode = MergeMode::EventTimeOrdering;
const COMMIT: MergeMode = MergeMode::CommitTimeOrdering;

#[test]
fn a_partial_record_replaces_the_columns_it_sets_and_keeps_the_others() {
    let base = [(1, "a", 1.0, 1), (2, "b", 2.0, 1)];
    let logs = vec![partial(&[(1, "A", 0.0, 2)], &["name", "ts"], "200")];
    for mode in [EVENT, COMMIT] {
        assert_eq!(
            merge(&base, logs.clone(), mode),
            ["1:A:1.0:2@200", "2:b:2.0:1@100"],
            "{mode:?}"
        );
    }
}

#[test]
fn partial_records_chain_over_whole_ones_and_whole_ones_over_partial_ones() {
    let base = [(1, "a", 1.0, 1)];
    // partial after whole: the partial record lies over the logged whole record
    let logs = vec![
        LogContent::Rows(full(&[(1, "b", 2.0, 2)], "200")),
        partial(&[(1, "c", 0.0, 3)], &["name", "ts"], "300"),
    ];
    assert_eq!(merge(&base, logs.clone(), EVENT), ["1:c:2.0:3@300"]);
    // ... also without a base record
    assert_eq!(merge(&[], logs, EVENT), ["1:c:2.0:3@300"]);
    // two partial records: each lies over what came before
    let logs = vec![
        partial(&[(1, "c", 0.0, 2)], &["name", "ts"], "200"),
        partial(&[(1, "", 7.5, 3)], &["price", "ts"], "300"),
    ];
    assert_eq!(merge(&base, logs, EVENT), ["1:c:7.5:3@300"]);
    // whole after partial: the whole record replaces everything
    let logs = vec![
        partial(&[(1, "c", 0.0, 2)], &["name", "ts"], "200"),
        LogContent::Rows(full(&[(1, "d", 4.0, 3)], "300")),
    ];
    assert_eq!(merge(&base, logs, EVENT), ["1:d:4.0:3@300"]);
}

#[test]
fn under_event_time_the_greater_ordering_value_wins_and_a_partial_winner_keeps_the_rest() {
    let base = [(1, "a", 1.0, 5)];
    // a partial record with a smaller ordering value than the base record's loses
    let losing = vec![partial(&[(1, "z", 0.0, 2)], &["name", "ts"], "200")];
    assert_eq!(merge(&base, losing.clone(), EVENT), ["1:a:1.0:5@100"]);
    assert_eq!(merge(&base, losing, COMMIT), ["1:z:1.0:2@200"]);
    // ... and to a logged whole record with a greater one
    let logs = vec![
        LogContent::Rows(full(&[(1, "b", 2.0, 6)], "200")),
        partial(&[(1, "z", 0.0, 3)], &["name", "ts"], "300"),
    ];
    assert_eq!(merge(&base, logs, EVENT), ["1:b:2.0:6@200"]);
    // a newer whole record with a smaller value than an older partial record's: the partial
    // one wins and lies over it (Hudi's partial merge keeps the loser's other columns)
    let logs = vec![
        partial(&[(1, "p", 0.0, 9)], &["name", "ts"], "200"),
        LogContent::Rows(full(&[(1, "w", 4.0, 7)], "300")),
    ];
    assert_eq!(merge(&base, logs, EVENT), ["1:p:4.0:9@200"]);
}

#[test]
fn a_delete_after_a_partial_record_deletes_and_a_partial_record_after_a_delete_is_alone() {
    let base = [(1, "a", 1.0, 1), (2, "b", 2.0, 1)];
    let logs = vec![
        partial(&[(1, "x", 0.0, 2)], &["name", "ts"], "200"),
        delete(1),
    ];
    for mode in [EVENT, COMMIT] {
        assert_eq!(
            merge(&base, logs.clone(), mode),
            ["2:b:2.0:1@100"],
            "{mode:?}"
        );
    }
    // a partial record of a key no base record holds comes out as it is: NULL where it sets
    // nothing, which a column that is not nullable refuses
    let logs = vec![partial(&[(3, "n", 0.0, 2)], &["name", "ts"], "200")];
    let rules = Precedence::new(&schema(), EVENT, Some("ts"));
    let mut m = LogApplier::new(&schema(), logs, &KeySource::Meta, rules).unwrap();
    m.apply_to_base(&full(&base, "100")).unwrap();
    let err = m.remaining().unwrap_err();
    assert!(err.to_string().contains("id"), "{err}");
}

#[test]
fn partial_rows_are_refused_where_the_merge_is_described_by_positions() {
    let logs = vec![partial(&[(1, "x", 0.0, 2)], &["name", "ts"], "200")];
    let rules = Precedence::new(&schema(), EVENT, Some("ts"));
    let mut m = LogApplier::new(&schema(), logs, &KeySource::Meta, rules).unwrap();
    assert!(m.has_partial_rows());
    let keys: RecordKeys = StringArray::from(vec!["1"]).into();
    assert!(m.positions(&keys, None).is_err());
}

/// A log file of one partial AVRO_DATA block of `recs`, of the meta columns and `cols`, as the
/// writer makes it (`IS_PARTIAL`, the block's own schema).
fn partial_log(recs: &[Rec], cols: &[&str], instant: &str) -> Vec<u8> {
    let whole = full(recs, instant);
    let keep: Vec<usize> = (0..whole.num_columns())
        .filter(|&c| {
            let name = schema().field(c).name().clone();
            c < 5 || cols.contains(&name.as_str())
        })
        .collect();
    let rows = whole.project(&keep).unwrap();
    let json = |s: &Schema| {
        crate::schema::avro_schema_with_meta("t", s)
            .unwrap()
            .to_string()
    };
    let partial = json(&rows.schema());
    let block = super::write::DataRows {
        rows: &rows,
        partial_schema: Some(&partial),
        positions: None,
    };
    let files = crate::write::FileSpec::default();
    super::write::log_file_bytes(instant, &json(&schema()), &[block], &[], &files, None).unwrap()
}

#[tokio::test]
async fn a_partial_avro_block_reads_as_its_columns_and_keys_and_merges() {
    let dir = tempfile::tempdir().unwrap();
    let storage = TableStorage::local(dir.path()).unwrap();
    let bytes = partial_log(&[(2, "B", 0.0, 4)], &["name", "ts"], "200");
    storage.put("l", bytes).await.unwrap();
    let admits = |_: &str| true;
    // a reader without _hoodie_record_key still gets the partial records' keys
    let narrow = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("name", DataType::Utf8, true),
    ]));
    let read = read_slice_logs(&storage, &["l".into()], &admits, &narrow)
        .await
        .unwrap();
    let LogContent::Partial(p) = &read.contents[0] else {
        panic!("a partial block reads as partial rows: {:?}", read.contents);
    };
    assert_eq!(&*p.set, &[false, true]);
    assert_eq!(p.keys.value(0), "2");
    assert_eq!(p.rows.num_columns(), 2);
    assert!(p.rows.column(0).is_null(0));
    // the whole table's columns, merged with a base
    let read = read_slice_logs(&storage, &["l".into()], &admits, &schema())
        .await
        .unwrap();
    assert_eq!(
        merge(&[(2, "b", 2.0, 1)], read.contents, EVENT),
        ["2:B:2.0:4@200"]
    );
}
