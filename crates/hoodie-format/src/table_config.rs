//! The table's own configuration: `.hoodie/hoodie.properties`, typed.

use crate::config::{self, ConfigKey};
use crate::error::{FormatError, Result};
use crate::properties::Properties;

pub use crate::properties_file::{PROPERTIES_BACKUP, PROPERTIES_FILE};

/// Copy-on-write or merge-on-read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableType {
    /// Updates rewrite base files.
    CopyOnWrite,
    /// Updates append log files (written through `deltacommit` instants).
    MergeOnRead,
}

impl TableType {
    /// Parses `cow`, `mor`, `COPY_ON_WRITE`, `MERGE_ON_READ` (case-insensitive).
    pub fn parse(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "cow" | "copy_on_write" => Ok(TableType::CopyOnWrite),
            "mor" | "merge_on_read" => Ok(TableType::MergeOnRead),
            _ => Err(FormatError::InvalidProperty {
                key: config::TABLE_TYPE.key.to_string(),
                value: s.to_string(),
                reason: "expected cow, mor, COPY_ON_WRITE or MERGE_ON_READ".to_string(),
            }),
        }
    }

    /// The Java enum name, as hoodie.properties must hold it.
    pub fn as_str(&self) -> &'static str {
        match self {
            TableType::CopyOnWrite => "COPY_ON_WRITE",
            TableType::MergeOnRead => "MERGE_ON_READ",
        }
    }
}

/// How records with the same key are ordered when merged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeMode {
    /// The greater ordering value wins (ties: the later write).
    EventTimeOrdering,
    /// The later write wins.
    CommitTimeOrdering,
}

impl MergeMode {
    /// The Java enum name.
    pub fn as_str(&self) -> &'static str {
        match self {
            MergeMode::EventTimeOrdering => "EVENT_TIME_ORDERING",
            MergeMode::CommitTimeOrdering => "COMMIT_TIME_ORDERING",
        }
    }

    /// Parses the enum name (case-insensitive).
    pub fn parse(s: &str) -> Result<Self> {
        match s.to_ascii_uppercase().as_str() {
            "EVENT_TIME_ORDERING" => Ok(MergeMode::EventTimeOrdering),
            "COMMIT_TIME_ORDERING" => Ok(MergeMode::CommitTimeOrdering),
            _ => Err(FormatError::InvalidProperty {
                key: config::RECORD_MERGE_MODE.key.to_string(),
                value: s.to_string(),
                reason: "expected EVENT_TIME_ORDERING or COMMIT_TIME_ORDERING (CUSTOM merge modes are not supported)".to_string(),
            }),
        }
    }
}

impl MergeMode {
    /// The merge mode Hudi 1.2 maps a payload class to (`HoodieTableConfig`'s inference when a
    /// table is created or upgraded). Payloads that merge in other ways (partial updates,
    /// delete markers, CDC sources, custom code) are not supported yet.
    pub fn of_payload(class: &str) -> Result<Self> {
        let simple = class.rsplit('.').next().unwrap_or(class).trim();
        match simple {
            "DefaultHoodieRecordPayload" | "EventTimeAvroPayload" => {
                Ok(MergeMode::EventTimeOrdering)
            }
            "OverwriteWithLatestAvroPayload" => Ok(MergeMode::CommitTimeOrdering),
            other => {
                let why = match other {
                    "OverwriteNonDefaultsWithLatestAvroPayload" => "commit-time ordering that keeps the stored value where the new one is the column default",
                    "PartialUpdateAvroPayload" => "event-time ordering that keeps the stored value where the new one is NULL",
                    "AWSDmsAvroPayload" => "commit-time ordering with the Op = 'D' delete marker",
                    "PostgresDebeziumAvroPayload" | "MySqlDebeziumAvroPayload" => "event-time ordering on the Debezium log position with delete markers",
                    "ExpressionPayload" => "MERGE INTO's own payload, not a table setting",
                    _ => "a custom merge",
                };
                Err(FormatError::Unsupported {
                    feature: format!("payload class {class} ({why}); use DefaultHoodieRecordPayload, EventTimeAvroPayload or OverwriteWithLatestAvroPayload, or recordMergeMode"),
                })
            }
        }
    }
}

/// Which key generator the table uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyGenKind {
    /// One record key field, at most one partition field; bare values.
    Simple,
    /// Several key or partition fields; `field:value` keys.
    Complex,
    /// No partitions.
    NonPartitioned,
    /// Timestamp-based partition paths (read only).
    TimestampBased,
    /// Custom key generator (read only).
    Custom,
}

impl KeyGenKind {
    /// The Java class name (table version 6).
    pub fn class_name(&self) -> &'static str {
        match self {
            KeyGenKind::Simple => "org.apache.hudi.keygen.SimpleKeyGenerator",
            KeyGenKind::Complex => "org.apache.hudi.keygen.ComplexKeyGenerator",
            KeyGenKind::NonPartitioned => "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
            KeyGenKind::TimestampBased => "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
            KeyGenKind::Custom => "org.apache.hudi.keygen.CustomKeyGenerator",
        }
    }

    /// The type name (table version 8+).
    pub fn type_name(&self) -> &'static str {
        match self {
            KeyGenKind::Simple => "SIMPLE",
            KeyGenKind::Complex => "COMPLEX",
            KeyGenKind::NonPartitioned => "NON_PARTITION",
            KeyGenKind::TimestampBased => "TIMESTAMP",
            KeyGenKind::Custom => "CUSTOM",
        }
    }

    /// The kind of a key generator class or type name (`None`: one hoodie does not know).
    pub(crate) fn from_class_or_type(s: &str) -> Option<Self> {
        let short = s.rsplit('.').next().unwrap_or(s).to_ascii_lowercase();
        Some(match short.as_str() {
            "simplekeygenerator" | "simpleavrokeygenerator" | "simple" => KeyGenKind::Simple,
            "complexkeygenerator" | "complexavrokeygenerator" | "complex" => KeyGenKind::Complex,
            "nonpartitionedkeygenerator" | "nonpartitionedavrokeygenerator" | "non_partition" => {
                KeyGenKind::NonPartitioned
            }
            "timestampbasedkeygenerator" | "timestampbasedavrokeygenerator" | "timestamp" => {
                KeyGenKind::TimestampBased
            }
            "customkeygenerator" | "customavrokeygenerator" | "custom" => KeyGenKind::Custom,
            _ => return None,
        })
    }

    /// The key generator Spark SQL picks for these key and partition fields.
    pub fn infer(record_keys: &[String], partition_fields: &[String]) -> Self {
        if partition_fields.is_empty() {
            if record_keys.len() > 1 {
                KeyGenKind::Complex
            } else {
                KeyGenKind::NonPartitioned
            }
        } else if record_keys.len() > 1 || partition_fields.len() > 1 {
            KeyGenKind::Complex
        } else {
            KeyGenKind::Simple
        }
    }
}

/// The parsed `hoodie.properties` of a table.
#[derive(Debug, Clone)]
pub struct TableConfig {
    props: Properties,
}

fn split_fields(s: Option<&str>) -> Vec<String> {
    s.map(|s| {
        s.split(',')
            .map(|f| f.trim().to_string())
            .filter(|f| !f.is_empty())
            .collect()
    })
    .unwrap_or_default()
}

fn parse_bool(key: &ConfigKey, v: &str) -> Result<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(FormatError::InvalidProperty {
            key: key.key.to_string(),
            value: v.to_string(),
            reason: "expected true or false".to_string(),
        }),
    }
}

impl TableConfig {
    /// Wraps parsed properties and validates what must be valid to open the table.
    pub fn from_properties(props: Properties) -> Result<Self> {
        let cfg = TableConfig { props };
        cfg.validate()?;
        Ok(cfg)
    }

    /// Parses the bytes of a `hoodie.properties` file.
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        Self::from_properties(Properties::parse(bytes))
    }

    fn validate(&self) -> Result<()> {
        if self.props.get(config::TABLE_NAME.key).is_none() {
            return Err(FormatError::MissingProperty {
                key: config::TABLE_NAME.key,
            });
        }
        self.table_type()?;
        let version = self.version()?;
        if !crate::timeline::layout::TABLE_VERSIONS.contains(&version) {
            let advice = if version > 9 {
                "written by a Hudi newer than 1.2 (version 10 is Hudi 1.3's native log format); downgrade it to 9 with that Hudi's downgrade_table to use it here"
            } else {
                "upgrade it with a Hudi 0.14 or later writer first"
            };
            return Err(FormatError::Unsupported {
                feature: format!(
                    "table version {version} (hoodie reads and writes versions 6, 8 and 9; {advice}); nothing was written"
                ),
            });
        }
        let layout = self.timeline_layout_version()?;
        let expected = if version == 6 { 1 } else { 2 };
        if layout != expected {
            return Err(FormatError::InvalidProperty {
                key: config::TIMELINE_LAYOUT_VERSION.key.to_string(),
                value: layout.to_string(),
                reason: format!("table version {version} uses timeline layout {expected}"),
            });
        }
        if self.ordering_fields().len() > 1 {
            return Err(FormatError::Unsupported {
                feature: "more than one ordering field".into(),
            });
        }
        self.populate_meta_fields()?;
        self.hive_style_partitioning()?;
        Ok(())
    }

    /// The raw properties.
    pub fn properties(&self) -> &Properties {
        &self.props
    }

    /// Looks up a key (or an alias) in the properties, falling back to its default.
    pub fn get(&self, key: &ConfigKey) -> Option<&str> {
        key.resolve(|k| self.props.get(k))
    }

    /// Sets a property.
    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        self.props.set(key, value);
    }

    /// Table name.
    pub fn name(&self) -> &str {
        self.props.get(config::TABLE_NAME.key).unwrap_or_default()
    }

    /// Database name, if any.
    pub fn database(&self) -> Option<&str> {
        self.props.get(config::DATABASE_NAME.key)
    }

    /// COW or MOR.
    pub fn table_type(&self) -> Result<TableType> {
        TableType::parse(self.get(&config::TABLE_TYPE).unwrap_or("COPY_ON_WRITE"))
    }

    fn int(&self, key: &ConfigKey) -> Result<u32> {
        let v = self
            .get(key)
            .ok_or(FormatError::MissingProperty { key: key.key })?;
        v.trim().parse().map_err(|_| FormatError::InvalidProperty {
            key: key.key.to_string(),
            value: v.to_string(),
            reason: "expected an integer".to_string(),
        })
    }

    /// `hoodie.table.version`.
    pub fn version(&self) -> Result<u32> {
        self.props
            .get(config::TABLE_VERSION.key)
            .ok_or(FormatError::MissingProperty {
                key: config::TABLE_VERSION.key,
            })?;
        self.int(&config::TABLE_VERSION)
    }

    /// `hoodie.timeline.layout.version`.
    pub fn timeline_layout_version(&self) -> Result<u32> {
        match self.props.get(config::TIMELINE_LAYOUT_VERSION.key) {
            Some(_) => self.int(&config::TIMELINE_LAYOUT_VERSION),
            // Java infers the layout from the table version when the key is absent.
            None => Ok(if self.version()? >= 8 { 2 } else { 1 }),
        }
    }

    /// Record key columns (empty: keys are generated).
    pub fn record_key_fields(&self) -> Vec<String> {
        split_fields(self.get(&config::RECORD_KEY_FIELDS))
    }

    /// Ordering (pre-combine) fields.
    pub fn ordering_fields(&self) -> Vec<String> {
        split_fields(self.get(&config::ORDERING_FIELDS))
    }

    /// The single ordering field, if any.
    pub fn ordering_field(&self) -> Option<String> {
        self.ordering_fields().into_iter().next()
    }

    /// Partition columns as declared (timestamp/custom keygen entries may carry `:type`).
    pub fn partition_fields(&self) -> Vec<String> {
        split_fields(self.get(&config::PARTITION_FIELDS))
            .into_iter()
            .map(|f| f.split(':').next().unwrap_or_default().to_string())
            .collect()
    }

    /// The key generator of the table.
    pub fn key_generator(&self) -> KeyGenKind {
        self.get(&config::KEYGEN_CLASS)
            .or(self.get(&config::KEYGEN_TYPE))
            .and_then(KeyGenKind::from_class_or_type)
            .unwrap_or_else(|| {
                KeyGenKind::infer(&self.record_key_fields(), &self.partition_fields())
            })
    }

    /// True if the table is partitioned (fields declared and a partitioning key generator).
    pub fn is_partitioned(&self) -> bool {
        !self.partition_fields().is_empty() && self.key_generator() != KeyGenKind::NonPartitioned
    }

    /// `field=value` partition paths.
    pub fn hive_style_partitioning(&self) -> Result<bool> {
        let k = config::HIVE_STYLE_PARTITIONING;
        // Java's default for tables that do not record it is false.
        match self.props.get(k.key) {
            Some(v) => parse_bool(&k, v),
            None => Ok(false),
        }
    }

    /// URL-encoded partition values.
    pub fn partition_path_urlencode(&self) -> Result<bool> {
        let k = config::PARTITION_PATH_URLENCODE;
        parse_bool(&k, self.get(&k).unwrap_or("false"))
    }

    /// Whether partition columns are dropped from the data files.
    pub fn drop_partition_columns(&self) -> Result<bool> {
        let k = config::DROP_PARTITION_COLUMNS;
        parse_bool(&k, self.get(&k).unwrap_or("false"))
    }

    /// The columns the data files leave out: the partition columns when
    /// `hoodie.datasource.write.drop.partition.columns` is true (their values are in the path).
    pub fn dropped_columns(&self) -> Result<Vec<String>> {
        Ok(if self.drop_partition_columns()? {
            self.partition_fields()
        } else {
            Vec::new()
        })
    }

    /// Whether the meta columns are populated.
    pub fn populate_meta_fields(&self) -> Result<bool> {
        let k = config::POPULATE_META_FIELDS;
        parse_bool(&k, self.get(&k).unwrap_or("true"))
    }

    /// The CDC logging mode when `hoodie.table.cdc.enabled` is true (`None`: CDC is off).
    pub fn cdc_mode(&self) -> Result<Option<crate::cdc::CdcMode>> {
        let k = config::CDC_ENABLED;
        if !parse_bool(&k, self.get(&k).unwrap_or("false"))? {
            return Ok(None);
        }
        let mode = self
            .get(&config::CDC_LOGGING_MODE)
            .unwrap_or("DATA_BEFORE_AFTER");
        crate::cdc::CdcMode::parse(mode).map(Some)
    }

    /// The merge mode, inferred like Java when not recorded.
    pub fn merge_mode(&self) -> Result<MergeMode> {
        if let Some(m) = self.props.get(config::RECORD_MERGE_MODE.key) {
            return MergeMode::parse(m);
        }
        if let Some(p) = self.get(&config::PAYLOAD_CLASS) {
            return MergeMode::of_payload(p);
        }
        // a table Hudi 1.x downgraded to 6 keeps only its merge strategy
        match self.get(&config::RECORD_MERGE_STRATEGY_ID) {
            Some(config::COMMIT_TIME_STRATEGY_ID) => return Ok(MergeMode::CommitTimeOrdering),
            Some(config::EVENT_TIME_STRATEGY_ID) => return Ok(MergeMode::EventTimeOrdering),
            _ => {}
        }
        Ok(if self.ordering_field().is_some() {
            MergeMode::EventTimeOrdering
        } else {
            MergeMode::CommitTimeOrdering
        })
    }

    /// Base file format (only PARQUET is supported).
    pub fn base_file_format(&self) -> &str {
        self.get(&config::BASE_FILE_FORMAT).unwrap_or("PARQUET")
    }

    /// The timeline folder relative to the table base path.
    pub fn timeline_dir(&self) -> Result<String> {
        Ok(if self.timeline_layout_version()? >= 2 {
            format!(
                ".hoodie/{}",
                self.get(&config::TIMELINE_PATH).unwrap_or("timeline")
            )
        } else {
            ".hoodie".to_string()
        })
    }

    /// The Avro schema recorded at creation (without meta fields), if any.
    pub fn create_schema(&self) -> Option<&str> {
        self.props.get(config::CREATE_SCHEMA.key)
    }

    /// `hoodie.table.checksum` as Java computes it.
    pub fn compute_checksum(&self) -> u32 {
        table_checksum(self.database().unwrap_or(""), self.name())
    }

    /// Renders the file contents, with the checksum recomputed and written last (as Java does).
    pub fn to_text(&self) -> String {
        let mut props = self.props.clone();
        props.remove(config::CHECKSUM.key);
        props.set(config::CHECKSUM.key, self.compute_checksum().to_string());
        props.to_text(Some("Properties saved by hoodie"))
    }
}

/// Java's `HoodieTableConfig.generateChecksum`: CRC-32 of `"<database>.<table>"`.
pub fn table_checksum(database: &str, table: &str) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(format!("{database}.{table}").as_bytes());
    h.finalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_matches_java() {
        assert_eq!(table_checksum("default", "v6_nonpartitioned"), 1363530505);
        assert_eq!(table_checksum("default", "v8_nonpartitioned"), 1908876706);
        assert_eq!(table_checksum("default", "trips"), 2200697520);
        assert_eq!(table_checksum("", "trips"), 3761586722);
    }

    #[test]
    fn parses_and_validates() {
        let text = b"hoodie.table.name=t\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=6\nhoodie.timeline.layout.version=1\nhoodie.table.recordkey.fields=id,name\nhoodie.table.precombine.field=ts\nhoodie.table.partition.fields=dt\nhoodie.table.keygenerator.class=org.apache.hudi.keygen.ComplexKeyGenerator\nhoodie.datasource.write.hive_style_partitioning=true\n";
        let c = TableConfig::parse(text).unwrap();
        assert_eq!(c.record_key_fields(), vec!["id", "name"]);
        assert_eq!(c.ordering_field().as_deref(), Some("ts"));
        assert_eq!(c.key_generator(), KeyGenKind::Complex);
        assert_eq!(c.merge_mode().unwrap(), MergeMode::EventTimeOrdering);
        assert!(c.is_partitioned());
        let bad = b"hoodie.table.name=t\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=7\n";
        assert!(matches!(
            TableConfig::parse(bad),
            Err(FormatError::Unsupported { .. })
        ));
        let v10 =
            b"hoodie.table.name=t\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=10\n";
        let err = TableConfig::parse(v10).unwrap_err().to_string();
        assert!(
            err.contains("table version 10")
                && err.contains("downgrade")
                && err.contains("nothing was written"),
            "{err}"
        );
        let missing = b"hoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=6\n";
        assert!(matches!(
            TableConfig::parse(missing),
            Err(FormatError::MissingProperty { .. })
        ));
    }

    #[test]
    fn writes_checksum_last() {
        let text = b"hoodie.table.name=trips\nhoodie.database.name=default\nhoodie.table.version=6\nhoodie.table.type=COPY_ON_WRITE\n";
        let c = TableConfig::parse(text).unwrap();
        let out = c.to_text();
        assert!(out.trim_end().ends_with("hoodie.table.checksum=2200697520"));
    }
}
