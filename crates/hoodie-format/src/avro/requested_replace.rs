//! The Avro body of `T.replacecommit.requested`.
//!
//! Java Hudi writes the requested instant of an `insert_overwrite` / `insert_overwrite_table`
//! as an Avro object container file holding one `HoodieRequestedReplaceMetadata` record (table
//! versions 6 to 9 alike); for an overwrite every field is null (no clustering plan; Spark's
//! files carry `operationType`, `clusteringPlan`, `extraMetadata` and `version` all null: the
//! four record bytes `00 00 00 02`). The writer schema is Java's `SCHEMA$` of the class, so
//! Java resolves it against its own.

use apache_avro::types::Value;

use crate::avro::rollback::{encode_container, RollbackAvroError};

/// Writer schema: `org.apache.hudi.avro.model.HoodieRequestedReplaceMetadata` as Java writes it
/// into the container header.
pub const REQUESTED_REPLACE_SCHEMA: &str = r#"{"type":"record","name":"HoodieRequestedReplaceMetadata","namespace":"org.apache.hudi.avro.model","fields":[{"name":"operationType","type":["null",{"type":"string","avro.java.string":"String"}],"default":null},{"name":"clusteringPlan","type":["null",{"type":"record","name":"HoodieClusteringPlan","fields":[{"name":"inputGroups","type":["null",{"type":"array","items":{"type":"record","name":"HoodieClusteringGroup","fields":[{"name":"slices","type":["null",{"type":"array","items":{"type":"record","name":"HoodieSliceInfo","fields":[{"name":"dataFilePath","type":["null",{"type":"string","avro.java.string":"String"}],"default":null},{"name":"deltaFilePaths","type":["null",{"type":"array","items":{"type":"string","avro.java.string":"String"}}],"default":null},{"name":"fileId","type":["null",{"type":"string","avro.java.string":"String"}]},{"name":"partitionPath","type":["null",{"type":"string","avro.java.string":"String"}],"default":null},{"name":"bootstrapFilePath","type":["null",{"type":"string","avro.java.string":"String"}],"default":null},{"name":"version","type":["int","null"],"default":1}]}}],"default":null},{"name":"metrics","type":["null",{"type":"map","values":"double","avro.java.string":"String"}],"default":null},{"name":"numOutputFileGroups","type":["int","null"],"default":1},{"name":"extraMetadata","type":["null",{"type":"map","values":{"type":"string","avro.java.string":"String"},"avro.java.string":"String"}],"default":null},{"name":"version","type":["int","null"],"default":1}]}}],"default":null},{"name":"strategy","type":["null",{"type":"record","name":"HoodieClusteringStrategy","fields":[{"name":"strategyClassName","type":["null",{"type":"string","avro.java.string":"String"}],"default":null},{"name":"strategyParams","type":["null",{"type":"map","values":{"type":"string","avro.java.string":"String"},"avro.java.string":"String"}],"default":null},{"name":"version","type":["int","null"],"default":1}]}],"default":null},{"name":"extraMetadata","type":["null",{"type":"map","values":{"type":"string","avro.java.string":"String"},"avro.java.string":"String"}],"default":null},{"name":"version","type":["int","null"],"default":1},{"name":"preserveHoodieMetadata","type":["null","boolean"],"default":null}]}],"default":null},{"name":"extraMetadata","type":["null",{"type":"map","values":{"type":"string","avro.java.string":"String"},"avro.java.string":"String"}],"default":null},{"name":"version","type":["int","null"],"default":1}]}"#;

/// The `T.replacecommit.requested` file of an overwrite: one record, every field null.
pub fn requested_replace_avro() -> Result<Vec<u8>, RollbackAvroError> {
    let value = Value::Record(vec![
        (
            "operationType".into(),
            Value::Union(0, Box::new(Value::Null)),
        ),
        (
            "clusteringPlan".into(),
            Value::Union(0, Box::new(Value::Null)),
        ),
        (
            "extraMetadata".into(),
            Value::Union(0, Box::new(Value::Null)),
        ),
        ("version".into(), Value::Union(1, Box::new(Value::Null))),
    ]);
    encode_container(
        "HoodieRequestedReplaceMetadata",
        REQUESTED_REPLACE_SCHEMA,
        value,
    )
}

/// The `T.replacecommit.requested` file of a `delete_partition` write, as Java's
/// `SparkDeletePartitionCommitActionExecutor` builds it: `operationType` `DELETE_PARTITION`,
/// an empty `extraMetadata` map, no clustering plan, version 1.
pub fn requested_delete_partition_avro() -> Result<Vec<u8>, RollbackAvroError> {
    let value = Value::Record(vec![
        (
            "operationType".into(),
            Value::Union(1, Box::new(Value::String("DELETE_PARTITION".into()))),
        ),
        (
            "clusteringPlan".into(),
            Value::Union(0, Box::new(Value::Null)),
        ),
        (
            "extraMetadata".into(),
            Value::Union(1, Box::new(Value::Map(Default::default()))),
        ),
        ("version".into(), Value::Union(0, Box::new(Value::Int(1)))),
    ]);
    encode_container(
        "HoodieRequestedReplaceMetadata",
        REQUESTED_REPLACE_SCHEMA,
        value,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use apache_avro::Reader;

    /// The record reads back with its writer schema, every field null, and its bytes are the
    /// four Spark writes (`operationType`, `clusteringPlan`, `extraMetadata` null, `version` the
    /// null branch of `["int", "null"]`).
    #[test]
    fn an_overwrite_request_is_one_all_null_record() {
        let bytes = requested_replace_avro().unwrap();
        assert_eq!(&bytes[..4], b"Obj\x01");
        let reader = Reader::new(&bytes[..]).unwrap();
        let schema = reader.writer_schema().clone();
        let records: Vec<Value> = reader.map(|r| r.unwrap()).collect();
        assert_eq!(records.len(), 1);
        let Value::Record(fields) = &records[0] else {
            panic!("not a record: {:?}", records[0]);
        };
        let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "operationType",
                "clusteringPlan",
                "extraMetadata",
                "version"
            ]
        );
        for (name, v) in fields {
            let Value::Union(_, inner) = v else {
                panic!("{name}: {v:?}");
            };
            assert_eq!(**inner, Value::Null, "{name}");
        }
        // the encoded record is the last thing before the block's sync marker
        let body = apache_avro::to_avro_datum(&schema, records[0].clone()).unwrap();
        assert_eq!(body, [0x00, 0x00, 0x00, 0x02]);
    }

    #[test]
    fn a_delete_partition_request_names_its_operation() {
        let bytes = requested_delete_partition_avro().unwrap();
        let reader = Reader::new(&bytes[..]).unwrap();
        let records: Vec<Value> = reader.map(|r| r.unwrap()).collect();
        let Value::Record(fields) = &records[0] else {
            panic!("not a record: {:?}", records[0]);
        };
        assert_eq!(
            fields[0].1,
            Value::Union(1, Box::new(Value::String("DELETE_PARTITION".into())))
        );
        assert_eq!(fields[3].1, Value::Union(0, Box::new(Value::Int(1))));
    }
}
