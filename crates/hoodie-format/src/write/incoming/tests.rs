use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow::array::{Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};

use crate::table_config::KeyGenKind;

/// A budget of `limit` bytes that records what is taken.
struct TestBudget {
    limit: usize,
    used: AtomicUsize,
    peak: AtomicUsize,
}

impl TestBudget {
    fn new(limit: usize) -> Arc<Self> {
        Arc::new(Self {
            limit,
            used: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        })
    }
    fn used(&self) -> usize {
        self.used.load(Ordering::SeqCst)
    }
}

impl MemoryBudget for TestBudget {
    fn try_grow(&self, bytes: usize) -> bool {
        if self.used() + bytes > self.limit {
            return false;
        }
        self.grow(bytes);
        true
    }
    fn grow(&self, bytes: usize) {
        let now = self.used.fetch_add(bytes, Ordering::SeqCst) + bytes;
        self.peak.fetch_max(now, Ordering::SeqCst);
    }
    fn shrink(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::SeqCst);
    }
}

/// Spill files in a temporary directory, counted.
struct TestSpill {
    dir: tempfile::TempDir,
    created: AtomicUsize,
}

impl SpillSpace for TestSpill {
    fn create(&self) -> Result<SpillFile> {
        let file = tempfile::NamedTempFile::new_in(self.dir.path()).unwrap();
        self.created.fetch_add(1, Ordering::SeqCst);
        Ok(SpillFile::new(file.path().to_path_buf(), Box::new(file)))
    }
}

fn test_spill() -> Arc<TestSpill> {
    Arc::new(TestSpill {
        dir: tempfile::tempdir().unwrap(),
        created: AtomicUsize::new(0),
    })
}

fn schema() -> SchemaRef {
    let mut fields: Vec<Field> = crate::meta::META_COLUMNS
        .iter()
        .map(|c| Field::new(*c, DataType::Utf8, true))
        .collect();
    fields.push(Field::new("id", DataType::Utf8, true));
    fields.push(Field::new("ts", DataType::Int64, true));
    fields.push(Field::new("city", DataType::Utf8, true));
    Arc::new(Schema::new(fields))
}

fn keygen() -> KeyGenerator {
    KeyGenerator::new(
        KeyGenKind::Simple,
        vec!["id".into()],
        vec!["city".into()],
        false,
    )
}

/// Rows `from..to`: id `k{i}`, ts `i`, city `c{i % 3}`; null meta columns.
fn rows(from: i64, to: i64) -> RecordBatch {
    let n = (to - from) as usize;
    let nulls = || Arc::new(StringArray::from(vec![None::<&str>; n])) as ArrayRef;
    RecordBatch::try_new(
        schema(),
        vec![
            nulls(),
            nulls(),
            nulls(),
            nulls(),
            nulls(),
            Arc::new(StringArray::from_iter_values(
                (from..to).map(|i| format!("k{i}")),
            )),
            Arc::new(Int64Array::from_iter_values(from..to)),
            Arc::new(StringArray::from_iter_values(
                (from..to).map(|i| format!("c{}", i % 3)),
            )),
        ],
    )
    .unwrap()
}

/// A builder over the test schema and key generator; `budget` (one for rows and routing) and
/// `spill` as given, unbounded and none otherwise.
fn builder(
    source: KeySource,
    ordering: Option<&str>,
    budget: Option<Arc<TestBudget>>,
    spill: Option<Arc<TestSpill>>,
) -> IncomingBuilder {
    let budgets = match budget {
        Some(b) => Budgets {
            rows: b.clone(),
            routing: b,
        },
        None => Budgets::unbounded(),
    };
    IncomingBuilder::new(
        schema(),
        keygen(),
        source,
        ordering,
        budgets,
        spill.map(|s| s as Arc<dyn SpillSpace>),
    )
    .unwrap()
}

fn ts_values(pieces: &[RecordBatch]) -> Vec<i64> {
    pieces
        .iter()
        .flat_map(|b| {
            b.column(6)
                .as_primitive::<arrow::datatypes::Int64Type>()
                .values()
                .to_vec()
        })
        .collect()
}

#[test]
fn keeps_routing_columns_and_gathers_in_the_order_asked() {
    let mut b = builder(KeySource::Keep, Some("TS"), None, None);
    b.push(rows(0, 4), None).unwrap();
    b.push(rows(4, 10), None).unwrap();
    let mut inc = b.finish().unwrap();
    assert_eq!(inc.num_rows(), 10);
    assert!(!inc.spilled());
    assert_eq!(inc.keys().unwrap().value(7), "k7");
    assert_eq!(inc.paths().value(5), "c2");
    assert_eq!(inc.paths().values().len(), 3);
    assert_eq!(inc.ordering().unwrap().len(), 10);
    assert!(!inc.is_delete(3));
    let out = inc
        .gather(&[&[9, 1, 5, 2], &[], &[3], &[1, 2, 6, 8]], false)
        .unwrap();
    assert_eq!(ts_values(&out[0]), vec![9, 1, 5, 2]);
    assert_eq!(out[0].len(), 1, "rows out of order come back as one batch");
    assert!(out[1].is_empty());
    assert_eq!(ts_values(&out[2]), vec![3]);
    // ascending rows come back as one piece per chunk
    assert_eq!(ts_values(&out[3]), vec![1, 2, 6, 8]);
    assert_eq!(out[3].len(), 2);
    // the last gather gives each chunk back as it goes
    let out = inc
        .gather(&[&[0, 1, 2, 3], &[4, 5, 6, 7, 8, 9]], true)
        .unwrap();
    assert_eq!(ts_values(&out[1]), (4..10).collect::<Vec<_>>());
    assert!(inc
        .rows
        .chunks
        .iter()
        .all(|c| matches!(c, rows::Chunk::Released)));
}

#[test]
fn spills_past_the_budget_and_reads_back_the_same_rows() {
    let one = rows(0, 100).get_array_memory_size();
    let budget = TestBudget::new(one * 5 / 2 + 8192);
    let spill = test_spill();
    let mut b = builder(
        KeySource::Keep,
        None,
        Some(budget.clone()),
        Some(spill.clone()),
    );
    for i in 0..10 {
        b.push(rows(i * 100, (i + 1) * 100), None).unwrap();
        // what is held stays inside the budget
        assert!(
            budget.used() <= budget.limit,
            "batch {i}: {}",
            budget.used()
        );
    }
    let mut inc = b.finish().unwrap();
    assert!(inc.spilled());
    assert!(spill.created.load(Ordering::SeqCst) >= 3);
    // rows from spilled and in-memory chunks, across chunks, in the order asked
    let asked: Vec<u32> = vec![999, 0, 250, 101, 998, 500];
    let out = inc.gather(&[&asked], false).unwrap();
    assert_eq!(ts_values(&out[0]), vec![999, 0, 250, 101, 998, 500]);
    assert_eq!(
        out[0][0].column(5).as_string::<i32>().value(2),
        "k250",
        "every column read back"
    );
    // waves: units of 400 rows each do not fit together
    let units = [400, 400, 200];
    let first = inc.plan_wave(&units, 0).unwrap();
    assert!((1..3).contains(&first), "first wave took {first}");
    inc.end_wave();
    let second = inc.plan_wave(&units, first).unwrap();
    assert!(second >= 1);
    inc.end_wave();
    drop(inc);
    assert_eq!(budget.used(), 0, "everything given back");
    // the spill files are gone with the rows
    assert_eq!(std::fs::read_dir(spill.dir.path()).unwrap().count(), 0);
}

#[test]
fn without_spill_space_a_full_budget_is_a_typed_error() {
    let budget = TestBudget::new(rows(0, 100).get_array_memory_size() * 2);
    let mut b = builder(KeySource::Validate, None, Some(budget.clone()), None);
    b.push(rows(0, 100), None).unwrap();
    let err = b.push(rows(100, 300), None).unwrap_err();
    assert!(
        matches!(err, FormatError::MemoryLimit { .. }),
        "unexpected: {err}"
    );
    assert!(err.to_string().contains("raise the limit"), "{err}");
}

#[test]
fn a_unit_larger_than_the_budget_is_taken_alone() {
    let budget = TestBudget::new(rows(0, 10).get_array_memory_size() * 3);
    let spill = test_spill();
    let mut b = builder(
        KeySource::Validate,
        None,
        Some(budget.clone()),
        Some(spill.clone()),
    );
    for i in 0..10 {
        b.push(rows(i * 10, (i + 1) * 10), None).unwrap();
    }
    let mut inc = b.finish().unwrap();
    assert_eq!(inc.plan_wave(&[80, 10], 0).unwrap(), 1);
    inc.end_wave();
    assert_eq!(inc.plan_wave(&[80, 10], 1).unwrap(), 1);
    inc.end_wave();
}

#[test]
fn prepped_rows_take_stored_keys_and_compute_new_ones() {
    let mut stored = rows(0, 3);
    let mut cols = stored.columns().to_vec();
    cols[2] = Arc::new(StringArray::from(vec![Some("s0"), None, Some("s2")]));
    cols[3] = Arc::new(StringArray::from(vec![Some("p0"), None, Some("p2")]));
    cols[4] = Arc::new(StringArray::from(vec![
        Some("f.parquet"),
        None,
        Some("f.parquet"),
    ]));
    stored = RecordBatch::try_new(schema(), cols).unwrap();
    let mut b = builder(KeySource::Prepped, None, None, None);
    b.push(stored.clone(), Some(&[false, false, true])).unwrap();
    let inc = b.finish().unwrap();
    let keys = inc.keys().unwrap();
    assert_eq!(
        (keys.value(0), keys.value(1), keys.value(2)),
        ("s0", "k1", "s2")
    );
    assert_eq!(inc.paths().value(1), "c1");
    assert_eq!(inc.paths().value(2), "p2");
    let files = inc.base_files().unwrap();
    assert_eq!(files.get(1), None);
    assert_eq!(files.id(0), files.id(2));
    assert!(inc.is_delete(2) && !inc.is_delete(0));

    // a new row without a key is refused
    let mut cols = stored.columns().to_vec();
    cols[5] = Arc::new(StringArray::from(vec![Some("x"), None, Some("y")]));
    let bad = RecordBatch::try_new(schema(), cols).unwrap();
    let mut b = builder(KeySource::Prepped, None, None, None);
    assert!(matches!(
        b.push(bad, None),
        Err(FormatError::NullRecordKey { .. })
    ));
}

#[test]
fn change_sets_keep_their_rows_base_rows_in_order() {
    use crate::write::ChangeRows;
    let change = |from: i64, to: i64, base: Option<Vec<Option<i64>>>| ChangeRows {
        rows: rows(from, to),
        deletes: vec![false; (to - from) as usize],
        base_rows: base.map(Int64Array::from),
    };
    let budget = TestBudget::new(usize::MAX);
    let mut b = builder(KeySource::Prepped, None, Some(budget.clone()), None);
    // a batch without base rows, then one with (a negative one is none), then one without
    b.push_change_set(change(0, 2, None)).unwrap();
    b.push_change_set(change(2, 5, Some(vec![Some(7), None, Some(-1)])))
        .unwrap();
    b.push_change_set(change(5, 6, None)).unwrap();
    let inc = b.finish().unwrap();
    assert!(inc.has_base_rows());
    let got: Vec<Option<u64>> = (0..6).map(|i| inc.base_row(i)).collect();
    assert_eq!(got, [None, None, Some(7), None, None, None]);
    assert!(budget.peak.load(Ordering::SeqCst) >= 3 * 8);

    let mut b = builder(KeySource::Prepped, None, None, None);
    b.push_change_set(change(0, 2, None)).unwrap();
    assert!(!b.finish().unwrap().has_base_rows());
}
