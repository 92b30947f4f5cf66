//! An upsert into a table of many file groups rewrites only the file groups that hold the
//! incoming keys, as the commit metadata records; the others keep their files.

mod common;

use common::fixture;
use hoodie_format::HudiTable;

#[tokio::test]
async fn upsert_rewrites_only_touched_file_groups() {
    let tmp = tempfile::tempdir().unwrap();
    // 10 partitions x 100 rows: 10 file groups
    let values: Vec<String> = (0..1000)
        .map(|i| format!("({i}, 'v{i}', 1, {})", i % 10))
        .collect();
    let f = fixture(
        tmp.path(),
        "CREATE TABLE t (id INT, v STRING, ts INT, p INT) USING hudi PARTITIONED BY (p) TBLPROPERTIES ('hoodie.spark.sql.insert.into.operation' = 'upsert', primaryKey = 'id', preCombineField = 'ts')",
        values,
    )
    .await;
    let (ctx, table, before) = (&f.ctx, &f.table, &f.before);
    assert_eq!(before.len(), 10);

    // update 3 keys of partition 7 (ids 7, 17, 27) and insert 2 new keys there; small-file
    // handling puts the inserts into the same file group
    ctx.run("INSERT INTO t VALUES (7, 'u', 2, 7), (17, 'u', 2, 7), (27, 'u', 2, 7), (5007, 'n', 1, 7), (5017, 'n', 1, 7)").await.unwrap();

    let timeline = table.timeline().await.unwrap();
    let last = timeline.last_completed_write().unwrap().clone();
    let meta = timeline
        .read_commit_metadata(table.storage(), &last)
        .await
        .unwrap();
    assert_eq!(meta.operation_type.as_deref(), Some("UPSERT"));
    assert_eq!(
        meta.partition_to_write_stats.keys().collect::<Vec<_>>(),
        ["p=7"],
        "only partition p=7 is written"
    );
    let stats: Vec<_> = meta.write_stats().collect();
    assert_eq!(stats.len(), 1, "one file group rewritten: {stats:?}");
    assert_eq!(stats[0].num_update_writes, 3);
    assert_eq!(stats[0].num_inserts, 2);
    assert_eq!(stats[0].num_writes, 102);
    let old7 = before.iter().find(|s| s.partition_path == "p=7").unwrap();
    assert_eq!(stats[0].file_id.as_deref(), Some(old7.file_id.as_str()));
    assert_eq!(
        stats[0].prev_commit.as_deref(),
        Some(old7.base_instant.as_str())
    );

    // the other nine file groups keep their base files
    let after = table.file_slices(&timeline, None).await.unwrap();
    for s in &after {
        let b = before.iter().find(|x| x.file_id == s.file_id).unwrap();
        if s.partition_path == "p=7" {
            assert_ne!(s.base_file, b.base_file);
        } else {
            assert_eq!(
                s.base_file, b.base_file,
                "{} was rewritten",
                s.partition_path
            );
        }
    }
    let out = ctx.run("SELECT count(*) FROM t").await.unwrap();
    let hoodie_datafusion::StatementOutput::Rows { batches, .. } = out else {
        panic!()
    };
    assert_eq!(
        datafusion::arrow::util::display::array_value_to_string(batches[0].column(0), 0).unwrap(),
        "1002"
    );

    // the rewritten file's bloom filter and key range (carried over from the old file and
    // extended with the inserts) are exactly what indexing its keys from scratch gives
    let p7 = after.iter().find(|s| s.partition_path == "p=7").unwrap();
    assert_key_index_is_exact(table, &p7.base_file.as_ref().unwrap().rel_path).await;

    // a DELETE rebuilds the index of the file it rewrites
    ctx.run("DELETE FROM t WHERE id IN (7, 5007)")
        .await
        .unwrap();
    let timeline = table.timeline().await.unwrap();
    let after_delete = table.file_slices(&timeline, None).await.unwrap();
    let p7 = after_delete
        .iter()
        .find(|s| s.partition_path == "p=7")
        .unwrap();
    assert_key_index_is_exact(table, &p7.base_file.as_ref().unwrap().rel_path).await;
}

/// The footer's bloom filter equals a fresh DYNAMIC_V0 filter (default sizing) given the file's
/// record keys in file order, and its min/max keys are the keys' extremes.
async fn assert_key_index_is_exact(table: &HudiTable, rel: &str) {
    use hoodie_format::inspect::{self as bloom, HoodieBloomFilter};
    use hoodie_format::inspect::{footer_value, read_footer};
    let keys = hoodie_format::inspect::read_record_keys(table.storage(), rel)
        .await
        .unwrap();
    let keys: Vec<&str> = keys.iter().flatten().collect();
    let mut fresh = HoodieBloomFilter::new_dynamic(60_000, 0.000000001, 100_000);
    fresh.add_all(keys.iter());
    let footer = read_footer(table.storage(), rel).await.unwrap();
    assert_eq!(
        footer_value(&footer, bloom::BLOOM_FILTER_FOOTER_KEY),
        Some(fresh.to_base64().as_str()),
        "{rel}: bloom filter"
    );
    assert_eq!(
        footer_value(&footer, bloom::MIN_RECORD_KEY_FOOTER_KEY),
        keys.iter().min().copied()
    );
    assert_eq!(
        footer_value(&footer, bloom::MAX_RECORD_KEY_FOOTER_KEY),
        keys.iter().max().copied()
    );
}
