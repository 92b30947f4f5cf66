use super::*;
use crate::timeline::commit_metadata::CommitMetadata;

const COMMIT: &[u8] = br#"{
  "partitionToWriteStats": { "dt=x": [{
    "fileId": "f1-0", "path": "dt=x/f1-0_0-1-0_20240101000000001.parquet",
    "prevCommit": "null", "partitionPath": "dt=x", "numWrites": 3, "numInserts": 3,
    "numUpdateWrites": 1, "numDeletes": 0, "totalWriteBytes": 4410,
    "fileSizeInBytes": 4410, "totalWriteErrors": 0, "logVersion": 2 }] },
  "compacted": false,
  "extraMetadata": { "schema": "{}" },
  "operationType": "UPSERT" }"#;

fn commit(ts: &str, action: Action, state: State) -> Instant {
    Instant::new(ts, action, state)
}

#[test]
fn a_commit_round_trips_through_an_archive_file() {
    let i = commit("20240101000000001", Action::Commit, State::Completed);
    let r = archived_record(&i, COMMIT, "c", None).unwrap();
    let requested = commit("20240101000000001", Action::Commit, State::Requested);
    let empty = archived_record(&requested, b"", "r", None).unwrap();
    let bytes = Bytes::from(archive_file_bytes(&[r, empty], 10));
    let entries = parse_archive_file(&bytes, "a").unwrap();
    assert_eq!(entries.len(), 2);
    let done = entries
        .iter()
        .find(|e| e.instant.state == State::Completed)
        .unwrap();
    assert_eq!(done.instant.action, Action::Commit);
    assert_eq!(done.instant.timestamp, "20240101000000001");
    let m = CommitMetadata::parse(&done.commit_metadata_json().unwrap(), "j").unwrap();
    let original = CommitMetadata::parse(COMMIT, "j").unwrap();
    let s = m.write_stats().next().unwrap();
    let o = original.write_stats().next().unwrap();
    assert_eq!(
        (
            s.num_writes,
            s.num_inserts,
            s.num_update_writes,
            s.total_write_bytes
        ),
        (
            o.num_writes,
            o.num_inserts,
            o.num_update_writes,
            o.total_write_bytes
        )
    );
    assert_eq!(s.path, o.path);
    assert_eq!(s.log_version, None, "not a field of Avro's HoodieWriteStat");
    assert_eq!(m.operation_type.as_deref(), Some("UPSERT"));
    assert_eq!(
        m.extra_metadata.get("ROLLING_STAT").map(String::as_str),
        Some("")
    );
    let pending = entries
        .iter()
        .find(|e| e.instant.state == State::Requested)
        .unwrap();
    assert!(pending.commit_metadata_json().is_none());
}

#[test]
fn records_of_one_schema_share_blocks_of_the_batch_size() {
    let records: Vec<ArchivedRecord> = (1..=5)
        .map(|n| {
            let i = commit(
                &format!("2024010100000000{n}"),
                Action::Commit,
                State::Completed,
            );
            archived_record(&i, COMMIT, "c", None).unwrap()
        })
        .collect();
    let bytes = Bytes::from(archive_file_bytes(&records, 2));
    let blocks = parse_blocks(&bytes, "a").unwrap();
    assert_eq!(blocks.len(), 3);
    assert_eq!(parse_archive_file(&bytes, "a").unwrap().len(), 5);
}

#[test]
fn compactions_are_archived_as_compact_operations() {
    let json =
        String::from_utf8_lossy(COMMIT).replace(r#""compacted": false"#, r#""compacted": true"#);
    let i = commit("20240101000000001", Action::Commit, State::Completed);
    let r = archived_record(&i, json.as_bytes(), "c", None).unwrap();
    let bytes = Bytes::from(archive_file_bytes(&[r], 10));
    let e = &parse_archive_file(&bytes, "a").unwrap()[0];
    let m = CommitMetadata::parse(&e.commit_metadata_json().unwrap(), "j").unwrap();
    assert_eq!(m.operation_type.as_deref(), Some("COMPACT"));
}

#[test]
fn avro_timeline_files_keep_their_own_schema() {
    use crate::avro::clean::{cleaner_plan_avro, parse_cleaner_plan};
    use crate::avro::savepoint::savepoint_metadata_avro;
    let files = std::collections::BTreeMap::from([("dt=x".to_string(), vec!["a.parquet".into()])]);
    let sp = savepoint_metadata_avro("u", "c", 1, &files, "s").unwrap();
    let i = commit("20240101000000001", Action::Savepoint, State::Completed);
    let r = archived_record(&i, &sp, "s", None).unwrap();
    assert!(r.schema.contains("HoodieSavepointMetadata"));
    let plan =
        parse_cleaner_plan(&cleaner_plan_avro(&Default::default(), "p").unwrap(), "p").unwrap();
    let clean = commit("20240101000000002", Action::Clean, State::Requested);
    let bytes = cleaner_plan_avro(&plan, "p").unwrap();
    let c = archived_record(&clean, &bytes, "p", None).unwrap();
    let file = Bytes::from(archive_file_bytes(&[r, c], 10));
    let entries = parse_archive_file(&file, "a").unwrap();
    assert!(entries[0].payload("hoodieSavePointMetadata").is_some());
    assert!(entries[1].payload("hoodieCleanerPlan").is_some());
    assert!(entries[1].payload("hoodieCleanMetadata").is_none());
}

#[test]
fn a_reader_with_every_payload_field_resolves_a_narrow_block() {
    // Java reads blocks into its HoodieArchivedMetaEntry: fields the writer left out take
    // their defaults.
    let i = commit("20240101000000001", Action::DeltaCommit, State::Completed);
    let r = archived_record(&i, COMMIT, "c", None).unwrap();
    let reader = format!(
        r#"{{"type":"record","name":"HoodieArchivedMetaEntry","namespace":"org.apache.hudi.avro.model","fields":[
 {{"name":"hoodieCommitMetadata","type":["null",{}],"default":null}},
 {{"name":"hoodieCleanMetadata","type":["null",{{"type":"record","name":"HoodieCleanMetadata","fields":[{{"name":"startCleanTime","type":"string"}}]}}],"default":null}},
 {{"name":"commitTime","type":["null","string"],"default":null}},
 {{"name":"actionType","type":["null","string"],"default":null}},
 {{"name":"version","type":["int","null"],"default":1}},
 {{"name":"actionState","type":["null","string"],"default":null}}]}}"#,
        commit_metadata_schema(false)
    );
    let reader = Schema::parse_str(&reader).unwrap();
    let writer = Schema::parse_str(&r.schema).unwrap();
    let v = apache_avro::from_avro_datum(&writer, &mut r.datum.as_slice(), Some(&reader)).unwrap();
    let e = entry_of(v).unwrap();
    assert_eq!(e.instant.action, Action::DeltaCommit);
    assert!(e.payload("hoodieCleanMetadata").is_none());
    assert!(e.commit_metadata_json().is_some());
}

#[test]
fn a_bad_commit_file_is_an_error_not_a_panic() {
    let i = commit("20240101000000001", Action::Commit, State::Completed);
    assert!(archived_record(&i, b"{not json", "c", None).is_err());
    let clean = commit("20240101000000001", Action::Clean, State::Completed);
    assert!(archived_record(&clean, b"junk", "c", None).is_err());
    assert!(parse_archive_file(&Bytes::from_static(b"junk"), "a").is_err());
}

#[test]
fn an_entry_records_its_state_transition_time() {
    let i = commit("20240101000000001", Action::Commit, State::Completed);
    let r = archived_record(&i, COMMIT, "c", Some("20240101000000950")).unwrap();
    let entries = parse_archive_file(&Bytes::from(archive_file_bytes(&[r], 10)), "a").unwrap();
    let t = super::super::value::string(super::super::value::field(
        &entries[0].record,
        "stateTransitionTime",
    ));
    assert_eq!(t.as_deref(), Some("20240101000000950"));
}

#[test]
fn records_keep_their_order_across_schemas() {
    // Hudi 1.x's upgrade reads the states of an instant as consecutive records
    let mut records = Vec::new();
    let mut expected = Vec::new();
    for ts in ["20240101000000001", "20240101000000002"] {
        for (state, content) in [(State::Requested, &b""[..]), (State::Completed, COMMIT)] {
            let i = commit(ts, Action::Commit, state);
            records.push(archived_record(&i, content, "c", Some(ts)).unwrap());
            expected.push((ts.to_string(), state));
        }
    }
    let bytes = Bytes::from(archive_file_bytes(&records, 10));
    let read: Vec<(String, State)> = parse_archive_file(&bytes, "a")
        .unwrap()
        .into_iter()
        .map(|e| (e.instant.timestamp, e.instant.state))
        .collect();
    assert_eq!(read, expected);
}
