//! Reading the Spark-written Hudi tables in `tests/fixtures/hudi-tables` (table versions 6,
//! 8 and 9): every table gives the rows its README lists; merge-on-read tables merge their
//! log files (Avro and Parquet data blocks, delete blocks, rollback command blocks).

mod common;

use common::fixtures::{extract, open, rows};
use hoodie_datafusion::{HoodieConfig, HoodieContext, StatementOutput};

const SAMPLE_4: [&str; 4] = [
    "1,Alice,false",
    "2,Bob,false",
    "3,Carol,true",
    "4,Diana,true",
];

#[tokio::test]
async fn spark_written_copy_on_write_tables_read_with_expected_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = HoodieContext::new(HoodieConfig::new(tmp.path().join("wh")))
        .await
        .unwrap();
    let sample = [
        ("sample_table/cow/v6_nonpartitioned", "v6np"),
        ("sample_table/cow/v6_complexkeygen_hivestyle", "v6ck"),
        ("sample_table/cow/v6_simplekeygen_nonhivestyle", "v6nh"),
        (
            "sample_table/cow/v6_simplekeygen_hivestyle_no_metafields",
            "v6nm",
        ),
        ("sample_table/cow/v8_nonpartitioned", "v8np"),
        ("sample_table/cow/v8_complexkeygen_hivestyle", "v8ck"),
        ("sample_table/cow/v8_simplekeygen_nonhivestyle", "v8nh"),
        (
            "sample_table/cow/v8_simplekeygen_hivestyle_no_metafields",
            "v8nm",
        ),
        (
            "sample_table/mor/parquet/v6_simplekeygen_hivestyle_no_metafields",
            "v6mornm",
        ),
    ];
    for (rel, name) in sample {
        open(&ctx, name, &extract(tmp.path(), rel)).await;
        let got = rows(
            &ctx,
            &format!("SELECT id, name, \"isActive\" FROM {name} ORDER BY id"),
        )
        .await
        .unwrap();
        assert_eq!(got, SAMPLE_4, "{rel}");
    }
    // partition pruning on multi-level hive partitions (v6 and v8)
    for name in ["v6ck", "v8ck"] {
        let got = rows(&ctx, &format!("SELECT id, name, \"isActive\" FROM {name} WHERE \"byteField\" >= 10 AND \"byteField\" < 20 AND \"shortField\" <> 100 ORDER BY id")).await.unwrap();
        assert_eq!(got, ["1,Alice,false", "3,Carol,true"], "{name}");
        let keys = rows(
            &ctx,
            &format!("SELECT _hoodie_record_key, _hoodie_partition_path FROM {name} WHERE id = 1"),
        )
        .await
        .unwrap();
        assert_eq!(
            keys,
            ["id:1,name:Alice,byteField=10/shortField=300"],
            "{name}"
        );
    }
    // non-hive partition paths
    let got = rows(
        &ctx,
        "SELECT id, name, \"isActive\" FROM v6nh WHERE \"byteField\" = 10 ORDER BY id",
    )
    .await
    .unwrap();
    assert_eq!(got, ["1,Alice,false", "3,Carol,true"]);
    // the nested and decimal columns of the sample schema read too
    let got = rows(
        &ctx,
        "SELECT \"decimalField\", \"structField\"['field1'] FROM v6np WHERE id = 1",
    )
    .await
    .unwrap();
    assert_eq!(got.len(), 1);

    // replaced file groups (INSERT OVERWRITE TABLE) are invisible
    open(
        &ctx,
        "ow",
        &extract(
            tmp.path(),
            "sample_table/cow/v6_simplekeygen_nonhivestyle_overwritetable",
        ),
    )
    .await;
    assert_eq!(
        rows(&ctx, "SELECT id, name, \"isActive\" FROM ow")
            .await
            .unwrap(),
        ["4,Diana,false"]
    );

    // timestamp-based key generator (read only)
    open(
        &ctx,
        "tb",
        &extract(
            tmp.path(),
            "sample_table/cow/v6_timebasedkeygen_nonhivestyle",
        ),
    )
    .await;
    assert_eq!(rows(&ctx, "SELECT count(*) FROM tb").await.unwrap(), ["4"]);
}

#[tokio::test]
async fn spark_written_v9_tables_read_with_expected_rows() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = HoodieContext::new(HoodieConfig::new(tmp.path().join("wh")))
        .await
        .unwrap();
    let partitioned_ids = "TXN-001,TXN-003,TXN-007,TXN-008,TXN-011,TXN-012,TXN-013,TXN-014,TXN-015,TXN-016,TXN-017,TXN-018";
    for (rel, name) in [
        ("sample_table/cow/v9_txns_simple_nometa", "s_nometa"),
        ("sample_table/cow/v9_txns_simple_meta", "s_meta"),
        ("sample_table/cow/v9_txns_complex_nometa", "c_nometa"),
        // MOR after compaction: the latest slices have no log files, so it reads normally
        (
            "sample_table/mor/avro/v9_txns_simple_nometa",
            "mor_compacted",
        ),
    ] {
        let base = extract(tmp.path(), rel);
        open(&ctx, name, &base).await;
        let res = rows(
            &ctx,
            &format!("SELECT string_agg(txn_id, ',' ORDER BY txn_id) FROM {name}"),
        )
        .await;
        assert_eq!(res.unwrap(), [partitioned_ids], "{rel}");
        let eu = rows(
            &ctx,
            &format!(
                "SELECT string_agg(txn_id, ',' ORDER BY txn_id) FROM {name} WHERE region = 'eu'"
            ),
        )
        .await
        .unwrap();
        assert_eq!(eu, ["TXN-011,TXN-012,TXN-018"], "{rel}");
        let t1 = rows(&ctx, &format!("SELECT txn_type, CAST(fee_amount AS VARCHAR) FROM {name} WHERE txn_id IN ('TXN-001', 'TXN-007') ORDER BY txn_id")).await.unwrap();
        assert_eq!(t1[0].split(',').next(), Some("reversal"), "{rel}");
        assert_eq!(t1[1].split(',').nth(1), Some("75.00"), "{rel}");
    }
    open(
        &ctx,
        "np",
        &extract(tmp.path(), "sample_table/cow/v9_txns_nonpart_nometa"),
    )
    .await;
    assert_eq!(
        rows(&ctx, "SELECT string_agg(txn_id, ',' ORDER BY txn_id) FROM np").await.unwrap(),
        ["TXN-001,TXN-003,TXN-004,TXN-006,TXN-007,TXN-008,TXN-009,TXN-010,TXN-011,TXN-012,TXN-013,TXN-014,TXN-015,TXN-016"]
    );
    open(
        &ctx,
        "ow9",
        &extract(tmp.path(), "sample_table/cow/v9_txns_simple_overwrite"),
    )
    .await;
    assert_eq!(
        rows(
            &ctx,
            "SELECT txn_id, txn_type, txn_ts FROM ow9 ORDER BY txn_id"
        )
        .await
        .unwrap(),
        [
            "TXN-101,debit,1700500000001",
            "TXN-102,debit,1700500000002",
            "TXN-103,debit,1700500000003"
        ]
    );
}

/// One query's rows joined by `;`.
async fn joined(ctx: &HoodieContext, sql: &str) -> String {
    rows(ctx, sql).await.unwrap().join(";")
}

#[tokio::test]
async fn merge_on_read_tables_merge_their_logs_and_empty_tables_read() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = HoodieContext::new(HoodieConfig::new(tmp.path().join("wh")))
        .await
        .unwrap();
    // a PARQUET_DATA block updates Alice and Bob
    open(
        &ctx,
        "np",
        &extract(tmp.path(), "sample_table/mor/parquet/v6_nonpartitioned"),
    )
    .await;
    assert_eq!(
        joined(&ctx, "SELECT id, name, \"isActive\" FROM np ORDER BY id").await,
        "1,Alice,false;2,Bob,false;3,Carol,true;4,Diana,true"
    );
    // a rollback command block hides Alice's rolled-back update; Bob's later one stays
    open(
        &ctx,
        "rb",
        &extract(
            tmp.path(),
            "sample_table/mor/parquet/v6_nonpartitioned_rollback",
        ),
    )
    .await;
    assert_eq!(
        joined(&ctx, "SELECT id, name, \"isActive\" FROM rb ORDER BY id").await,
        "1,Alice,true;2,Bob,true;3,Carol,true"
    );
    // nested columns come through the log block too
    assert_eq!(
        joined(&ctx, "SELECT \"structField\".field1, get_field(\"mapField\"['key3'], 'map_field_value_struct_f1') FROM rb WHERE id = 2").await,
        "Bob,234.567"
    );
    // AVRO_DATA block (v6): rider-D's fare updated
    open(
        &ctx,
        "u1",
        &extract(tmp.path(), "quickstart_trips_table/mor/avro/v6_trips_8i1u"),
    )
    .await;
    assert_eq!(joined(&ctx, "SELECT count(*) FROM u1").await, "8");
    assert_eq!(
        joined(
            &ctx,
            "SELECT rider, fare FROM u1 WHERE uuid = '9909a8b1-2d15-4d3d-8ec9-efc48c536a00'"
        )
        .await,
        "rider-D,25.0"
    );
    // DELETE block (v6): riders A, C and D gone
    open(
        &ctx,
        "d3",
        &extract(tmp.path(), "quickstart_trips_table/mor/avro/v6_trips_8i3d"),
    )
    .await;
    assert_eq!(joined(&ctx, "SELECT count(*) FROM d3").await, "5");
    assert_eq!(
        joined(
            &ctx,
            "SELECT count(*) FROM d3 WHERE rider IN ('rider-A', 'rider-C', 'rider-D')"
        )
        .await,
        "0"
    );
    // v8: logs named by deltacommit, a compaction, updates and deletes after it
    open(
        &ctx,
        "trips",
        &extract(
            tmp.path(),
            "quickstart_trips_table/mor/avro/v8_trips_8i3u1d",
        ),
    )
    .await;
    assert_eq!(
        joined(&ctx, "SELECT rider, fare FROM trips ORDER BY rider").await,
        "rider-A,0.0;rider-C,27.7;rider-D,33.9;rider-E,93.5;rider-G,0.0;rider-I,41.06"
    );
    // Spark's compaction plan (Avro, version 2) decodes as the brief lists it
    let trips = tmp
        .path()
        .join("quickstart_trips_table_mor_avro_v8_trips_8i3u1d/v8_trips_8i3u1d");
    let plan_file = trips.join(".hoodie/timeline/20251220210129235.compaction.requested");
    let plan =
        hoodie_format::inspect::parse_compaction_plan(&std::fs::read(&plan_file).unwrap(), "plan")
            .unwrap();
    assert_eq!((plan.version, plan.operations.len()), (2, 3));
    let chennai = plan
        .operations
        .iter()
        .find(|o| o.partition_path == "city=chennai")
        .unwrap();
    assert_eq!(chennai.base_instant_time, "20251220210108078");
    assert_eq!(chennai.delta_file_paths.len(), 2);
    assert!(chennai
        .data_file_path
        .as_deref()
        .unwrap()
        .ends_with("_20251220210108078.parquet"));
    assert_eq!(chennai.metrics.get("TOTAL_LOG_FILES"), Some(&2.0));
    assert_eq!(chennai.metrics.get("TOTAL_LOG_FILES_SIZE"), Some(&2117.0));
    // a log row's _hoodie_file_name is its file id, as Java writes it
    assert_eq!(
        joined(
            &ctx,
            "SELECT _hoodie_file_name FROM trips WHERE rider = 'rider-G'"
        )
        .await,
        "8aa68f7e-afd6-4c94-b86c-8a886552e08d-0"
    );
    // a filter on a column a log changed sees the merged value
    assert_eq!(
        joined(
            &ctx,
            "SELECT rider FROM trips WHERE fare = 0 ORDER BY rider"
        )
        .await,
        "rider-A;rider-G"
    );
    open(
        &ctx,
        "tb",
        &extract(
            tmp.path(),
            "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle",
        ),
    )
    .await;
    assert_eq!(joined(&ctx, "SELECT count(*) FROM tb").await, "6");
    // read-optimized: the base files alone
    assert_eq!(
        joined(&ctx, "SELECT txn_id, txn_type, CAST(txn_ts AS VARCHAR) AS t FROM hudi_query('tb', 'read_optimized') ORDER BY txn_id, t").await,
        "TXN-001,debit,1700000000001;TXN-001,reversal,1700100000001;TXN-002,debit,1700000000002;TXN-003,debit,1700000000003;TXN-004,transfer,1700000000004;TXN-005,debit,1700100000005;TXN-006,debit,1700300000006"
    );
    assert_eq!(
        joined(
            &ctx,
            "SELECT id, name, \"isActive\" FROM hudi_query('np', 'read_optimized') ORDER BY id"
        )
        .await,
        "1,Alice,true;2,Bob,false;3,Carol,true;4,Diana,true"
    );
    for (rel, name) in [
        ("sample_table/mor/avro/v9_txns_simple_meta", "sm"),
        ("sample_table/mor/avro/v9_txns_complex_nometa", "cn"),
    ] {
        open(&ctx, name, &extract(tmp.path(), rel)).await;
        assert_eq!(
            joined(&ctx, &format!("SELECT string_agg(txn_id, ',' ORDER BY txn_id) FROM {name}")).await,
            "TXN-001,TXN-003,TXN-007,TXN-008,TXN-011,TXN-012,TXN-013,TXN-014,TXN-015,TXN-016,TXN-017,TXN-018",
            "{rel}"
        );
        // snapshot and read-optimized agree (the latest slices were compacted)
        assert_eq!(
            joined(&ctx, &format!("SELECT string_agg(txn_id, ',' ORDER BY txn_id) FROM hudi_query('{name}', 'read_optimized')")).await,
            "TXN-001,TXN-003,TXN-007,TXN-008,TXN-011,TXN-012,TXN-013,TXN-014,TXN-015,TXN-016,TXN-017,TXN-018",
            "{rel}"
        );
    }
    for (rel, name) in [
        ("sample_table/cow/v6_empty", "e6"),
        ("sample_table/cow/v8_empty", "e8"),
    ] {
        open(&ctx, name, &extract(tmp.path(), rel)).await;
        assert_eq!(
            rows(&ctx, &format!("SELECT count(*) FROM {name}"))
                .await
                .unwrap(),
            ["0"],
            "{rel}"
        );
    }
    // Lance base files are not supported: a clear error when the table is opened
    let lance = extract(tmp.path(), "sample_table/cow/v9_lance_nonpartitioned");
    let err = ctx
        .run(&format!(
            "CREATE EXTERNAL TABLE l STORED AS HUDI LOCATION '{}'",
            lance.display()
        ))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("not supported yet") && err.contains("lance"),
        "{err}"
    );
    // hoodie does not write tables of version 8/9 yet, and says so
    let err = ctx
        .run("INSERT INTO e8 VALUES (1)")
        .await
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(!err.is_empty());
}

/// An UPDATE of a Spark-written table goes through the whole-file rewrite (its Parquet schema
/// is Spark's, so no column chunk is copied); the change set carries only the assigned column,
/// and every other column of every row, of every Spark type, keeps its stored value.
#[tokio::test]
async fn update_of_a_spark_written_table_keeps_the_unassigned_columns() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = HoodieContext::new(HoodieConfig::new(tmp.path().join("wh")))
        .await
        .unwrap();
    let base = extract(tmp.path(), "sample_table/cow/v6_nonpartitioned");
    open(&ctx, "t", &base).await;
    let columns = rows(&ctx, "SELECT column_name FROM information_schema.columns WHERE table_name = 't' AND column_name NOT LIKE '\\_hoodie%' AND column_name <> 'isActive'")
        .await
        .unwrap();
    assert!(
        columns.len() > 10,
        "Spark's sample table has many typed columns: {columns:?}"
    );
    let others = columns
        .iter()
        .map(|c| format!("\"{c}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let all = format!("SELECT {others} FROM t ORDER BY id");
    let before = rows(&ctx, &all).await.unwrap();
    ctx.run("UPDATE t SET \"isActive\" = NOT \"isActive\" WHERE id = 2")
        .await
        .unwrap();
    assert_eq!(rows(&ctx, &all).await.unwrap(), before);
    let got = rows(&ctx, "SELECT id, name, \"isActive\" FROM t ORDER BY id")
        .await
        .unwrap();
    assert_eq!(
        got,
        [
            "1,Alice,false",
            "2,Bob,true",
            "3,Carol,true",
            "4,Diana,true"
        ]
    );
}

/// Spark writes camelCase columns; as in Spark, they are found unquoted and in any case, the
/// result keeps the declared spelling, and DML on the table resolves them the same way.
#[tokio::test]
async fn spark_camel_case_columns_resolve_unquoted() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = HoodieContext::new(HoodieConfig::new(tmp.path().join("wh")))
        .await
        .unwrap();
    for (rel, name) in [
        ("sample_table/cow/v6_complexkeygen_hivestyle", "v6ck"),
        ("sample_table/cow/v8_nonpartitioned", "v8np"),
    ] {
        open(&ctx, name, &extract(tmp.path(), rel)).await;
        let got = rows(
            &ctx,
            &format!("SELECT id, name, isActive FROM {name} WHERE ISACTIVE AND structfield.FIELD2 IS NOT NULL OR NAME = 'Bob' ORDER BY Id"),
        )
        .await
        .unwrap();
        assert_eq!(
            got,
            ["2,Bob,false", "3,Carol,true", "4,Diana,true"],
            "{rel}"
        );
        let StatementOutput::Rows { schema, .. } = ctx
            .run(&format!("SELECT isactive, BYTEFIELD FROM {name} LIMIT 1"))
            .await
            .unwrap()
        else {
            panic!("rows")
        };
        let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(
            names,
            ["isActive", "byteField"],
            "{rel}: declared spelling kept"
        );
    }
    // an UPDATE and a DELETE on a Spark table (of the version hoodie writes), names in any case
    let base = extract(tmp.path(), "sample_table/cow/v6_nonpartitioned");
    open(&ctx, "v6np", &base).await;
    ctx.run("UPDATE v6np SET ISACTIVE = NOT isactive, longfield = LongField + 1 WHERE ID = 1")
        .await
        .unwrap();
    ctx.run("DELETE FROM v6np WHERE Name = 'Bob'")
        .await
        .unwrap();
    let got = rows(&ctx, "SELECT id, isActive, longField FROM v6np ORDER BY id")
        .await
        .unwrap();
    assert_eq!(got.len(), 3);
    assert_eq!(got[0], "1,true,1234567891", "{got:?}");
}
