//! The `hoodie.properties` of a table hoodie creates, from the few things its definition
//! says; every engine creates tables through it, so the defaults Hudi writes are set in one
//! place. Version 6 gets the keys Hudi 0.14 writes, versions 8 and 9 those Spark with Hudi
//! 1.2 writes (ordering fields, key generator type, merge mode, timeline path, ...).

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
    /// The table version (6, 8 or 9).
    pub version: u32,
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
            version: DEFAULT_VERSION,
        }
    }

    /// The table's `hoodie.properties`, with the defaults Hudi writes for its version.
    pub fn properties(&self) -> Result<Properties> {
        match self.version {
            6 => self.properties_v6(),
            8 | 9 => self.properties_v9(),
            v => Err(crate::error::FormatError::from(config::InvalidValue {
                key: config::WRITE_TABLE_VERSION.key,
                value: v.to_string(),
                allowed: config::WRITE_TABLE_VERSION.kind.describe(),
            })),
        }
    }

    fn key_generator(&self) -> KeyGenKind {
        self.key_generator
            .as_deref()
            .and_then(KeyGenKind::from_class_or_type)
            .unwrap_or_else(|| KeyGenKind::infer(&self.record_keys, &self.partition_fields))
    }

    /// Version 8 and 9 as Spark with Hudi 1.2 writes them: ordering fields, key generator
    /// type and merge mode instead of the precombine field, key generator class and payload;
    /// the layout-2 timeline.
    fn properties_v9(&self) -> Result<Properties> {
        let schema = table_schema(&self.columns)?;
        let avro = avro_schema(&self.name, &schema)?;
        let version = self.version.to_string();
        let mut p = Properties::new();
        p.set(config::TABLE_NAME.key, &self.name);
        p.set(config::TABLE_TYPE.key, self.table_type.as_str());
        p.set(config::TABLE_VERSION.key, &version);
        p.set(config::INITIAL_VERSION.key, &version);
        p.set(config::TIMELINE_LAYOUT_VERSION.key, "2");
        p.set(config::TIMELINE_PATH.key, "timeline");
        p.set(config::TIMELINE_HISTORY_PATH.key, "history");
        p.set(config::ARCHIVELOG_FOLDER.key, "archived");
        if !self.record_keys.is_empty() {
            p.set(config::RECORD_KEY_FIELDS.key, self.record_keys.join(","));
        }
        if let Some(o) = &self.ordering_field {
            p.set(config::ORDERING_FIELDS.key, o);
        }
        if !self.partition_fields.is_empty() {
            p.set(
                config::PARTITION_FIELDS.key,
                self.partition_fields.join(","),
            );
        }
        p.set(config::KEYGEN_TYPE.key, self.key_generator().type_name());
        p.set(config::RECORD_MERGE_MODE.key, self.merge_mode.as_str());
        if self.version >= 9 {
            p.set(config::TABLE_FORMAT.key, "native");
        }
        p.set(config::HIVE_STYLE_PARTITIONING.key, "true");
        p.set(config::PARTITION_PATH_URLENCODE.key, "false");
        p.set(config::DROP_PARTITION_COLUMNS.key, "false");
        p.set(config::CREATE_SCHEMA.key, avro.to_string());
        p.set(config::DATABASE_NAME.key, "default");
        Ok(p)
    }

    fn properties_v6(&self) -> Result<Properties> {
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

/// The version of a table created without `hoodie.write.table.version`.
pub const DEFAULT_VERSION: u32 = 9;

/// Checks a bucket index's hash fields (`hoodie.bucket.index.hash.field`, the record key
/// fields when `None`) against the table's record key fields: they must be among them, so a
/// CREATE TABLE is refused before its first write would be.
pub fn check_bucket_hash_fields(hash: Option<&str>, key_fields: &[String]) -> Result<()> {
    crate::bucket::BucketSpec::new(1, hash, key_fields).map(|_| ())
}

#[cfg(test)]
mod tests {
    use arrow::datatypes::{DataType, Field};

    use super::*;

    fn keyed(table_type: TableType, version: u32) -> NewTable {
        let columns = Schema::new(vec![
            Field::new("id", DataType::Int32, true),
            Field::new("Name", DataType::Utf8, true),
            Field::new("ts", DataType::Int64, true),
            Field::new("dt", DataType::Utf8, true),
        ]);
        let mut t = NewTable::new("cow_part", columns);
        t.table_type = table_type;
        t.record_keys = vec!["id".into()];
        t.ordering_field = Some("ts".into());
        t.partition_fields = vec!["dt".into()];
        t.merge_mode = MergeMode::EventTimeOrdering;
        t.version = version;
        t
    }

    fn without_schema(p: &Properties) -> Vec<(String, String)> {
        let mut kv: Vec<(String, String)> = p
            .iter()
            .filter(|(k, _)| *k != config::CREATE_SCHEMA.key)
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        kv.sort();
        kv
    }

    /// The keys and values Spark 3.5 with Hudi 1.2.0 wrote for `CREATE TABLE cow_part (id INT,
    /// Name STRING, ts BIGINT, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES
    /// (primaryKey = 'id', preCombineField = 'ts')` (read off its hoodie.properties; the
    /// checksum is added when the file is written).
    #[test]
    fn version_9_properties_are_those_spark_writes() {
        let spark = [
            ("hoodie.archivelog.folder", "archived"),
            ("hoodie.database.name", "default"),
            ("hoodie.datasource.write.drop.partition.columns", "false"),
            ("hoodie.datasource.write.hive_style_partitioning", "true"),
            ("hoodie.datasource.write.partitionpath.urlencode", "false"),
            ("hoodie.record.merge.mode", "EVENT_TIME_ORDERING"),
            ("hoodie.table.format", "native"),
            ("hoodie.table.initial.version", "9"),
            ("hoodie.table.keygenerator.type", "SIMPLE"),
            ("hoodie.table.name", "cow_part"),
            ("hoodie.table.ordering.fields", "ts"),
            ("hoodie.table.partition.fields", "dt"),
            ("hoodie.table.recordkey.fields", "id"),
            ("hoodie.table.type", "COPY_ON_WRITE"),
            ("hoodie.table.version", "9"),
            ("hoodie.timeline.history.path", "history"),
            ("hoodie.timeline.layout.version", "2"),
            ("hoodie.timeline.path", "timeline"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .to_vec();
        let p = keyed(TableType::CopyOnWrite, 9).properties().unwrap();
        assert_eq!(without_schema(&p), spark);
        assert!(p.get(config::CREATE_SCHEMA.key).is_some());
        // it reads back as the table it describes
        let config = crate::TableConfig::from_properties(p).unwrap();
        assert_eq!(config.timeline_dir().unwrap(), ".hoodie/timeline");
        assert_eq!(config.ordering_field().as_deref(), Some("ts"));
        assert_eq!(config.merge_mode().unwrap(), MergeMode::EventTimeOrdering);
    }

    #[test]
    fn version_6_properties_keep_the_014_keys() {
        let p = keyed(TableType::MergeOnRead, 6).properties().unwrap();
        assert_eq!(p.get("hoodie.table.version"), Some("6"));
        assert_eq!(p.get("hoodie.timeline.layout.version"), Some("1"));
        assert_eq!(p.get("hoodie.table.precombine.field"), Some("ts"));
        assert!(p.get(config::RECORD_MERGE_MODE.key).is_none());
        let err = keyed(TableType::MergeOnRead, 7).properties().unwrap_err();
        assert!(
            err.to_string().contains("hoodie.write.table.version"),
            "{err}"
        );
    }
}
