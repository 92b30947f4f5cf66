//! The clean metadata Java writes on completing a clean (`HoodieCleanMetadata`, an Avro
//! container in table versions 6 to 9): hoodie reads the earliest commit it kept, which bounds
//! how far back a time-travel read can go.

use super::compaction_plan::{field, first_record, string};
use crate::error::Result;

/// `earliestCommitToRetain` of a completed clean (`None` when empty: a clean that keeps file
/// versions rather than commits).
pub fn earliest_commit_to_retain(bytes: &[u8], path: &str) -> Result<Option<String>> {
    let value = first_record(bytes, path, "clean metadata")?;
    Ok(string(field(&value, "earliestCommitToRetain")).filter(|s| !s.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use apache_avro::types::Value;

    const SCHEMA: &str = r#"{"type":"record","name":"HoodieCleanMetadata","namespace":"org.apache.hudi.avro.model","fields":[
        {"name":"startCleanTime","type":"string"},
        {"name":"timeTakenInMillis","type":"long"},
        {"name":"totalFilesDeleted","type":"int"},
        {"name":"earliestCommitToRetain","type":"string"},
        {"name":"version","type":["int","null"],"default":1}]}"#;

    fn clean(ectr: &str) -> Vec<u8> {
        let value = Value::Record(vec![
            (
                "startCleanTime".into(),
                Value::String("20240101000000000".into()),
            ),
            ("timeTakenInMillis".into(), Value::Long(5)),
            ("totalFilesDeleted".into(), Value::Int(2)),
            ("earliestCommitToRetain".into(), Value::String(ectr.into())),
            ("version".into(), Value::Union(0, Box::new(Value::Int(2)))),
        ]);
        crate::avro::rollback::encode_container("HoodieCleanMetadata", SCHEMA, value).unwrap()
    }

    #[test]
    fn reads_the_earliest_commit_kept() {
        assert_eq!(
            earliest_commit_to_retain(&clean("20231231000000000"), "c").unwrap(),
            Some("20231231000000000".to_string())
        );
        assert_eq!(earliest_commit_to_retain(&clean(""), "c").unwrap(), None);
        assert!(earliest_commit_to_retain(b"junk", "c").is_err());
    }
}
