//! The `hoodie.properties` of a table hoodie creates (table version 6), from the few things
//! its definition says; every engine creates tables through it, so the defaults Hudi writes
//! are set in one place.

use arrow::datatypes::Schema;

use crate::config;
use crate::error::Result;
use crate::properties::Properties;
use crate::schema::{avro_schema, table_schema};
use crate::table_config::{KeyGenKind, MergeMode, TableType};

/// What a new table is: its name, type, key, ordering and partition columns, and data
/// columns.
#[derive(Debug, Clone)]
pub struct NewTable {
    /// The table's name.
    pub name: String,
    /// Copy-on-write or merge-on-read.
    pub table_type: TableType,
    /// Record key columns (none: keys are generated).
    pub record_keys: Vec<String>,
    /// The ordering (pre-combine) column, if any.
    pub ordering_field: Option<String>,
    /// Partition columns, outermost first.
    pub partition_fields: Vec<String>,
    /// The key generator class (None: inferred from the key and partition columns).
    pub key_generator: Option<String>,
    /// How records of one key are merged.
    pub merge_mode: MergeMode,
    /// The data columns, in order (no meta columns).
    pub columns: Schema,
}

impl NewTable {
    /// A copy-on-write table of `columns` without key, ordering or partitions (merged by
    /// commit time).
    pub fn new(name: impl Into<String>, columns: Schema) -> Self {
        Self {
            name: name.into(),
            table_type: TableType::CopyOnWrite,
            record_keys: Vec::new(),
            ordering_field: None,
            partition_fields: Vec::new(),
            key_generator: None,
            merge_mode: MergeMode::CommitTimeOrdering,
            columns,
        }
    }

    /// The table's `hoodie.properties`, with the defaults Hudi 0.14 writes for version 6.
    pub fn properties(&self) -> Result<Properties> {
        let schema = table_schema(&self.columns)?;
        let avro = avro_schema(&self.name, &schema)?;
        let keygen = match &self.key_generator {
            Some(k) => k.clone(),
            None => KeyGenKind::infer(&self.record_keys, &self.partition_fields)
                .class_name()
                .to_string(),
        };
        let mut p = Properties::new();
        p.set(config::TABLE_NAME.key, &self.name);
        p.set(config::TABLE_TYPE.key, self.table_type.as_str());
        p.set(config::TABLE_VERSION.key, "6");
        p.set(config::TIMELINE_LAYOUT_VERSION.key, "1");
        if !self.record_keys.is_empty() {
            p.set(config::RECORD_KEY_FIELDS.key, self.record_keys.join(","));
        }
        if let Some(o) = &self.ordering_field {
            p.set("hoodie.table.precombine.field", o);
        }
        if !self.partition_fields.is_empty() {
            p.set(
                config::PARTITION_FIELDS.key,
                self.partition_fields.join(","),
            );
        }
        p.set(config::KEYGEN_CLASS.key, keygen);
        p.set(config::HIVE_STYLE_PARTITIONING.key, "true");
        p.set(config::PARTITION_PATH_URLENCODE.key, "false");
        p.set(config::DROP_PARTITION_COLUMNS.key, "false");
        p.set(config::POPULATE_META_FIELDS.key, "true");
        p.set(config::BASE_FILE_FORMAT.key, "PARQUET");
        p.set(config::ARCHIVELOG_FOLDER.key, "archived");
        p.set(config::TIMELINE_TIMEZONE.key, "UTC");
        p.set(
            config::PAYLOAD_CLASS.key,
            match self.merge_mode {
                MergeMode::EventTimeOrdering => config::DEFAULT_PAYLOAD_CLASS,
                MergeMode::CommitTimeOrdering => config::OVERWRITE_PAYLOAD_CLASS,
            },
        );
        p.set(config::CDC_ENABLED.key, "false");
        p.set(config::CREATE_SCHEMA.key, avro.to_string());
        p.set(config::DATABASE_NAME.key, "default");
        Ok(p)
    }
}

/// Checks a bucket index's hash fields (`hoodie.bucket.index.hash.field`, the record key
/// fields when `None`) against the table's record key fields: they must be among them, so a
/// CREATE TABLE is refused before its first write would be.
pub fn check_bucket_hash_fields(hash: Option<&str>, key_fields: &[String]) -> Result<()> {
    crate::bucket::BucketSpec::new(1, hash, key_fields).map(|_| ())
}
