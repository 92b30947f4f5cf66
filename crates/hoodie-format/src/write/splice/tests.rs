use super::engine::KEY_INDEX_ENTRIES;
use super::*;
use arrow::array::{Float64Array, Int64Array};
use arrow::datatypes::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader};

const ROWS: usize = 50_000;
const OLD: &str = "p=1/old.parquet";
const NEW: &str = "p=1/new.parquet";

fn schema(note: DataType, id: DataType) -> SchemaRef {
    let mut fields: Vec<Field> = crate::meta::META_COLUMNS
        .iter()
        .map(|n| Field::new(*n, DataType::Utf8, true))
        .collect();
    fields.push(Field::new("id", id, true));
    fields.push(Field::new("note", note, true));
    fields.push(Field::new("price", DataType::Float64, true));
    fields.push(Field::new("ts", DataType::Int64, true));
    Arc::new(Schema::new(fields))
}

fn strings(f: impl Fn(usize) -> String, n: usize) -> ArrayRef {
    Arc::new(StringArray::from_iter_values((0..n).map(f)))
}

/// The stored file: 50,000 rows in row groups of 7,000 (the last one short), with a key index.
fn write_old(dir: &std::path::Path, schema: &SchemaRef) -> RecordBatch {
    write_old_with(
        dir,
        schema,
        key_index((0..ROWS).map(|i| format!("k{i:05}"))),
    )
}

/// The stored file with `footer` as its key/value metadata.
fn write_old_with(dir: &std::path::Path, schema: &SchemaRef, footer: Vec<KeyValue>) -> RecordBatch {
    write_old_dictionary(dir, schema, footer, 1024 * 1024)
}

/// The stored file, its dictionary pages at most `dictionary_page` bytes (a chunk with more
/// distinct values falls back to plain encoding).
fn write_old_dictionary(
    dir: &std::path::Path,
    schema: &SchemaRef,
    footer: Vec<KeyValue>,
    dictionary_page: usize,
) -> RecordBatch {
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            strings(|_| "100".into(), ROWS),
            strings(|i| format!("100_0_{i}"), ROWS),
            strings(|i| format!("k{i:05}"), ROWS),
            strings(|_| "p=1".into(), ROWS),
            strings(|_| "old.parquet".into(), ROWS),
            arrow::compute::cast(
                &(Arc::new(Int64Array::from_iter_values(0..ROWS as i64)) as ArrayRef),
                schema.field(5).data_type(),
            )
            .unwrap(),
            arrow::compute::cast(
                &strings(|i| format!("note of row {i} {}", "x".repeat(i % 37)), ROWS),
                schema.field(6).data_type(),
            )
            .unwrap(),
            Arc::new(Float64Array::from_iter_values((0..ROWS).map(|i| i as f64))),
            Arc::new(Int64Array::from_iter_values(
                (0..ROWS).map(|i| i as i64 % 10),
            )),
        ],
    )
    .unwrap();
    let props = writer_properties(&FileSpec::default())
        .unwrap()
        .into_builder()
        .set_max_row_group_row_count(Some(7_000))
        .set_dictionary_page_size_limit(dictionary_page)
        .set_key_value_metadata(Some(footer))
        .build();
    std::fs::create_dir_all(dir.join("p=1")).unwrap();
    let file = std::fs::File::create(dir.join(OLD)).unwrap();
    let mut writer = ArrowWriter::try_new(file, schema.clone(), Some(props)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    batch
}

/// The footer entries a writer gives a file of `keys` (in order).
fn key_index(keys: impl Iterator<Item = String>) -> Vec<KeyValue> {
    let s = FileSpec::default();
    let mut filter =
        HoodieBloomFilter::new_dynamic(s.bloom_num_entries, s.bloom_fpp, s.bloom_max_entries);
    let keys: Vec<String> = keys.collect();
    filter.add_all(keys.iter().map(String::as_str));
    let (min, max) = (keys.iter().min().unwrap(), keys.iter().max().unwrap());
    vec![
        KeyValue::new(bloom::BLOOM_FILTER_FOOTER_KEY.into(), filter.to_base64()),
        KeyValue::new(
            bloom::BLOOM_FILTER_TYPE_CODE_KEY.into(),
            BloomFilterType::DynamicV0.as_code().to_string(),
        ),
        KeyValue::new(bloom::MIN_RECORD_KEY_FOOTER_KEY.into(), min.clone()),
        KeyValue::new(bloom::MAX_RECORD_KEY_FOOTER_KEY.into(), max.clone()),
    ]
}

/// An UPDATE's change set for rows `rows`: new price and ts, the other data columns NULL
/// (not carried), meta columns of the stored rows.
fn change_set(schema: &SchemaRef, rows: &[usize], ts: i64) -> RecordBatch {
    let n = rows.len();
    let mut cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::new_null(n)),
        Arc::new(StringArray::new_null(n)),
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|i| format!("k{i:05}")),
        )),
        strings(|_| "p=1".into(), n),
        strings(|_| "old.parquet".into(), n),
        arrow::array::new_null_array(schema.field(5).data_type(), n),
        arrow::array::new_null_array(schema.field(6).data_type(), n),
    ];
    cols.push(Arc::new(Float64Array::from_iter_values(
        rows.iter().map(|_| -1.0),
    )));
    cols.push(Arc::new(Int64Array::from_iter_values(
        rows.iter().map(|_| ts),
    )));
    RecordBatch::try_new(schema.clone(), cols).unwrap()
}

async fn splice(
    storage: &TableStorage,
    schema: &SchemaRef,
    incoming: &RecordBatch,
    ordering_idx: Option<usize>,
) -> Option<Spliced> {
    splice_with_inserts(storage, schema, incoming, ordering_idx, &[]).await
}

/// Splices with the incoming rows `inserts` new to the file group (the others update).
async fn splice_with_inserts(
    storage: &TableStorage,
    schema: &SchemaRef,
    incoming: &RecordBatch,
    ordering_idx: Option<usize>,
    inserts: &[u32],
) -> Option<Spliced> {
    let settings = FileSpec::default();
    splice_with_settings(storage, schema, incoming, ordering_idx, inserts, &settings).await
}

async fn splice_with_settings(
    storage: &TableStorage,
    schema: &SchemaRef,
    incoming: &RecordBatch,
    ordering_idx: Option<usize>,
    inserts: &[u32],
    settings: &FileSpec,
) -> Option<Spliced> {
    let keys = crate::meta::record_keys(incoming).clone();
    let updates: crate::tasks::FastMap<&str, u32> = (0..keys.len() as u32)
        .filter(|i| !inserts.contains(i))
        .map(|i| (keys.value(i as usize), i))
        .collect();
    let changed = ["price".to_string(), "ts".to_string()];
    let ordering = ordering_idx
        .map(|i| crate::field_path::FieldPath::resolve(schema, schema.field(i).name()).unwrap());
    let input = SpliceInput {
        storage,
        schema,
        incoming,
        incoming_keys: &keys,
        updates: &updates,
        ordering: ordering.as_ref(),
        changed: Some(&changed),
        inserts,
        settings,
        old_rel: OLD,
        new_rel: NEW,
        keep_stored: false,
    };
    let meta = MetaValues {
        instant: "200",
        task_partition_id: 3,
        first_row: 0,
        file_name: "new.parquet",
        partition_path: "p=1",
    };
    splice_rewrite(input, meta).await.unwrap()
}

fn read(dir: &std::path::Path, rel: &str) -> (ParquetMetaData, RecordBatch) {
    let bytes = Bytes::from(std::fs::read(dir.join(rel)).unwrap());
    let meta = ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Required)
        .parse_and_finish(&bytes)
        .unwrap();
    let reader =
        parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(bytes, 100_000).unwrap();
    let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
    let batch = arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
    (meta, batch)
}

fn chunk_bytes(
    dir: &std::path::Path,
    rel: &str,
    meta: &ParquetMetaData,
    g: usize,
    c: usize,
) -> Vec<u8> {
    let (start, len) = meta.row_group(g).column(c).byte_range();
    std::fs::read(dir.join(rel)).unwrap()[start as usize..(start + len) as usize].to_vec()
}

#[tokio::test]
async fn splice_reencodes_only_changed_and_restamped_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let storage = TableStorage::local(tmp.path()).unwrap();
    let schema = schema(DataType::Utf8, DataType::Int64);
    let old = write_old(tmp.path(), &schema);
    // rows at row group and batch edges: 6999 | 7000, 16383 | 16384 (a read batch), the last
    let rows = [0usize, 6_999, 7_000, 16_383, 16_384, 49_999];
    let incoming = change_set(&schema, &rows, 5);
    let done = splice(&storage, &schema, &incoming, None)
        .await
        .expect("spliced");
    assert_eq!((done.rows, done.updated, done.dropped), (ROWS as u64, 6, 0));

    let (old_meta, _) = read(tmp.path(), OLD);
    let (new_meta, new) = read(tmp.path(), NEW);
    assert_eq!(
        done.size,
        std::fs::metadata(tmp.path().join(NEW)).unwrap().len()
    );
    assert_eq!(new_meta.num_row_groups(), 8);
    for g in 0..8 {
        assert_eq!(
            new_meta.row_group(g).num_rows(),
            old_meta.row_group(g).num_rows()
        );
        // record key, partition path, id and note are copied byte for byte
        for c in [2, 3, 5, 6] {
            assert_eq!(
                chunk_bytes(tmp.path(), NEW, &new_meta, g, c),
                chunk_bytes(tmp.path(), OLD, &old_meta, g, c),
                "row group {g} column {c}"
            );
        }
    }
    // a page index on every column, copied ones included
    assert!(new_meta
        .offset_index()
        .is_some_and(|ix| ix.iter().all(|rg| rg.len() == 9)));
    for key in KEY_INDEX_ENTRIES {
        let old_value = crate::footer::footer_value(&old_meta, key);
        assert!(old_value.is_some());
        assert_eq!(
            crate::footer::footer_value(&new_meta, key),
            old_value,
            "{key}"
        );
    }

    let col = |b: &RecordBatch, c: usize| b.column(c).clone();
    let s = |a: &ArrayRef, i: usize| a.as_string::<i32>().value(i).to_string();
    let mut seq = 0;
    for i in 0..ROWS {
        let updated = rows.contains(&i);
        let price = col(&new, 7);
        let price = price
            .as_primitive::<arrow::datatypes::Float64Type>()
            .value(i);
        assert_eq!(price, if updated { -1.0 } else { i as f64 }, "row {i}");
        assert_eq!(s(&col(&new, 6), i), s(&col(&old, 6), i));
        assert_eq!(s(&col(&new, 2), i), s(&col(&old, 2), i));
        assert_eq!(s(&col(&new, 4), i), "new.parquet");
        if updated {
            assert_eq!(s(&col(&new, 0), i), "200");
            assert_eq!(s(&col(&new, 1), i), format!("200_3_{seq}"));
            seq += 1;
        } else {
            assert_eq!(s(&col(&new, 0), i), "100");
            assert_eq!(s(&col(&new, 1), i), s(&col(&old, 1), i));
        }
    }
}

#[tokio::test]
async fn event_time_ordering_keeps_newer_stored_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let storage = TableStorage::local(tmp.path()).unwrap();
    let schema = schema(DataType::Utf8, DataType::Int64);
    write_old(tmp.path(), &schema);
    // stored ts is i % 10: rows 3 and 9 hold 3 and 9, the incoming 5 wins only over 3
    let incoming = change_set(&schema, &[3, 9], 5);
    let done = splice(&storage, &schema, &incoming, Some(8))
        .await
        .expect("spliced");
    assert_eq!((done.updated, done.dropped), (1, 1));
    let (_, new) = read(tmp.path(), NEW);
    let ts = new.column(8).as_primitive::<arrow::datatypes::Int64Type>();
    assert_eq!((ts.value(3), ts.value(9)), (5, 9));
}

#[tokio::test]
async fn a_file_of_another_parquet_schema_is_not_spliced() {
    let tmp = tempfile::tempdir().unwrap();
    let storage = TableStorage::local(tmp.path()).unwrap();
    // id stored as INT32: a copied chunk would not be what the table's INT64 writer encodes
    write_old(tmp.path(), &schema(DataType::Utf8, DataType::Int32));
    let table = schema(DataType::Utf8, DataType::Int64);
    let incoming = change_set(&table, &[1], 5);
    assert!(splice(&storage, &table, &incoming, None).await.is_none());
    assert!(!tmp.path().join(NEW).exists(), "nothing is written");
}

#[tokio::test]
async fn an_arrow_type_hint_that_differs_still_splices() {
    let tmp = tempfile::tempdir().unwrap();
    let storage = TableStorage::local(tmp.path()).unwrap();
    // LargeUtf8 and Utf8 are the same Parquet column: the chunk is copied as is
    write_old(tmp.path(), &schema(DataType::LargeUtf8, DataType::Int64));
    let table = schema(DataType::Utf8, DataType::Int64);
    let incoming = change_set(&table, &[1], 5);
    let done = splice(&storage, &table, &incoming, None)
        .await
        .expect("spliced");
    assert_eq!(done.updated, 1);
    let (_, new) = read(tmp.path(), NEW);
    assert_eq!(new.num_rows(), ROWS);
}

#[tokio::test]
async fn inserts_follow_as_a_row_group_and_extend_the_key_index() {
    let tmp = tempfile::tempdir().unwrap();
    let storage = TableStorage::local(tmp.path()).unwrap();
    let schema = schema(DataType::Utf8, DataType::Int64);
    write_old(tmp.path(), &schema);
    // rows 5 and 7 update; "k99999" and "a-first" are new keys (one below the old minimum)
    let mut incoming = change_set(&schema, &[5, 7, 99_999, 0], 5);
    let mut keys: Vec<ArrayRef> = incoming.columns().to_vec();
    keys[2] = Arc::new(StringArray::from(vec![
        "k00005", "k00007", "k99999", "a-first",
    ]));
    keys[6] = strings(|i| format!("new note {i}"), 4);
    incoming = RecordBatch::try_new(schema.clone(), keys).unwrap();
    let done = splice_with_inserts(&storage, &schema, &incoming, None, &[2, 3])
        .await
        .expect("spliced");
    assert_eq!(
        (done.rows, done.updated, done.inserted),
        (ROWS as u64 + 2, 2, 2)
    );

    let (old_meta, _) = read(tmp.path(), OLD);
    let (new_meta, new) = read(tmp.path(), NEW);
    assert_eq!(new_meta.num_row_groups(), 9);
    assert_eq!(new_meta.row_group(8).num_rows(), 2);
    assert_eq!(
        chunk_bytes(tmp.path(), NEW, &new_meta, 3, 6),
        chunk_bytes(tmp.path(), OLD, &old_meta, 3, 6)
    );
    let s = |c: usize, i: usize| new.column(c).as_string::<i32>().value(i).to_string();
    assert_eq!(
        (s(2, ROWS), s(6, ROWS)),
        ("k99999".to_string(), "new note 2".to_string())
    );
    assert_eq!(
        (s(1, ROWS), s(1, ROWS + 1)),
        ("200_3_2".to_string(), "200_3_3".to_string())
    );
    // the key index is the one a writer builds from every key in file order
    let all = (0..ROWS)
        .map(|i| format!("k{i:05}"))
        .chain(["k99999".into(), "a-first".into()]);
    for kv in key_index(all) {
        let got = crate::footer::footer_value(&new_meta, &kv.key);
        assert_eq!(got, kv.value.as_deref(), "{}", kv.key);
    }
}

#[tokio::test]
async fn inserts_past_the_block_size_take_several_row_groups() {
    let tmp = tempfile::tempdir().unwrap();
    let storage = TableStorage::local(tmp.path()).unwrap();
    let schema = schema(DataType::Utf8, DataType::Int64);
    write_old(tmp.path(), &schema);
    let (old_meta, _) = read(tmp.path(), OLD);
    let bytes: i64 = old_meta
        .row_groups()
        .iter()
        .map(|g| g.compressed_size())
        .sum();
    // a block of about two of the old file's rows: five new keys take three row groups
    let settings = FileSpec {
        block_size: (2 * bytes as u64).div_ceil(ROWS as u64),
        ..FileSpec::default()
    };
    let incoming = change_set(
        &schema,
        &[5, 100_001, 100_002, 100_003, 100_004, 100_005],
        5,
    );
    let done = splice_with_settings(
        &storage,
        &schema,
        &incoming,
        None,
        &[1, 2, 3, 4, 5],
        &settings,
    )
    .await
    .expect("spliced");
    assert_eq!((done.updated, done.inserted), (1, 5));
    let (new_meta, new) = read(tmp.path(), NEW);
    let old_groups = old_meta.num_row_groups();
    let appended: Vec<i64> = (old_groups..new_meta.num_row_groups())
        .map(|g| new_meta.row_group(g).num_rows())
        .collect();
    assert_eq!(appended, vec![2, 2, 1]);
    let keys = new.column(2).as_string::<i32>();
    let tail: Vec<&str> = (ROWS..ROWS + 5).map(|i| keys.value(i)).collect();
    assert_eq!(
        tail,
        ["k100001", "k100002", "k100003", "k100004", "k100005"]
    );
    // the writer's cap on rows holds too, and a group takes at least one row
    assert_eq!(
        super::engine::rows_per_group(&old_meta, u64::MAX, Some(3)),
        3
    );
    assert_eq!(super::engine::rows_per_group(&old_meta, 1, None), 1);
}

#[tokio::test]
async fn a_file_without_a_resumable_key_index_is_not_spliced_where_it_needs_one() {
    let tmp = tempfile::tempdir().unwrap();
    let storage = TableStorage::local(tmp.path()).unwrap();
    let schema = schema(DataType::Utf8, DataType::Int64);
    let keys = || (0..ROWS).map(|i| format!("k{i:05}"));
    let updates = change_set(&schema, &[5], 5);
    let with_insert = change_set(&schema, &[5, 0], 5);
    let mut cols = with_insert.columns().to_vec();
    cols[2] = Arc::new(StringArray::from(vec!["k00005", "k99999"]));
    let with_insert = RecordBatch::try_new(schema.clone(), cols).unwrap();

    // no key index at all: nothing to carry over
    write_old_with(tmp.path(), &schema, vec![]);
    assert!(splice(&storage, &schema, &updates, None).await.is_none());
    assert!(!tmp.path().join(NEW).exists(), "nothing is written");

    // a SIMPLE bloom filter carries over unchanged, but cannot take the inserted keys
    let mut simple = key_index(keys());
    simple[1].value = Some(BloomFilterType::Simple.as_code().to_string());
    write_old_with(tmp.path(), &schema, simple);
    let inserting = splice_with_inserts(&storage, &schema, &with_insert, None, &[1]);
    assert!(inserting.await.is_none());
    assert!(!tmp.path().join(NEW).exists(), "nothing is written");
    let done = splice(&storage, &schema, &updates, None)
        .await
        .expect("spliced");
    assert_eq!(done.updated, 1);
}

#[tokio::test]
async fn a_column_whose_dictionary_overflowed_is_encoded_plain_again() {
    let tmp = tempfile::tempdir().unwrap();
    let storage = TableStorage::local(tmp.path()).unwrap();
    let schema = schema(DataType::Utf8, DataType::Int64);
    // 7,000 distinct prices a row group overflow a 4 KiB dictionary page; 10 distinct ts do not
    let old = write_old_dictionary(
        tmp.path(),
        &schema,
        key_index((0..ROWS).map(|i| format!("k{i:05}"))),
        4096,
    );
    let (old_meta, _) = read(tmp.path(), OLD);
    let dictionary = |m: &ParquetMetaData, g: usize, c: usize| {
        let chunk = m.row_group(g).column(c);
        let plain_pages = chunk
            .page_encoding_stats_mask()
            .expect("encoding stats")
            .is_set(parquet::basic::Encoding::PLAIN);
        (chunk.dictionary_page_offset().is_some(), plain_pages)
    };
    assert_eq!(dictionary(&old_meta, 0, 7), (true, true), "price fell back");
    assert_eq!(dictionary(&old_meta, 0, 8), (true, false), "ts did not");
    let rows = [1usize, 7_001, 49_998];
    let done = splice(&storage, &schema, &change_set(&schema, &rows, 5), None)
        .await
        .expect("spliced");
    assert_eq!(done.updated, 3);
    let (new_meta, new) = read(tmp.path(), NEW);
    for g in 0..new_meta.num_row_groups() {
        assert_eq!(dictionary(&new_meta, g, 7), (false, true), "row group {g}");
        assert_eq!(dictionary(&new_meta, g, 8), (true, false), "row group {g}");
    }
    let price = new
        .column(7)
        .as_primitive::<arrow::datatypes::Float64Type>();
    let ts = new.column(8).as_primitive::<arrow::datatypes::Int64Type>();
    let old_ts = old.column(8).as_primitive::<arrow::datatypes::Int64Type>();
    for i in 0..ROWS {
        let updated = rows.contains(&i);
        assert_eq!(price.value(i), if updated { -1.0 } else { i as f64 });
        assert_eq!(ts.value(i), if updated { 5 } else { old_ts.value(i) });
    }
}
