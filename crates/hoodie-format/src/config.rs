//! Every `hoodie.*` key hoodie honours, with its default and aliases, in one place.
//!
//! Table properties live in `.hoodie/hoodie.properties`; write options come from SQL
//! (`TBLPROPERTIES`, `OPTIONS`, `SET`). Keys are matched case-sensitively except through the SQL
//! front-end's short names (`primaryKey`, `preCombineField`, `orderingFields`, `type`), which
//! are matched case-insensitively as Spark does.

/// A typed configuration key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigKey {
    /// The canonical key.
    pub key: &'static str,
    /// Older or alternative names that mean the same.
    pub aliases: &'static [&'static str],
    /// The default value, if the key has one.
    pub default: Option<&'static str>,
    /// What it does.
    pub doc: &'static str,
}

impl ConfigKey {
    /// True if `name` is this key or one of its aliases.
    pub fn matches(&self, name: &str) -> bool {
        self.key == name || self.aliases.contains(&name)
    }

    /// Looks the key (or an alias) up with `get`, falling back to the default.
    pub fn resolve<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> Option<&'a str> {
        std::iter::once(self.key)
            .chain(self.aliases.iter().copied())
            .find_map(get)
            .or(self.default)
    }
}

macro_rules! keys {
    ($( $(#[$m:meta])* $name:ident = ($key:expr, [$($alias:expr),*], $default:expr, $doc:expr); )*) => {
        $( $(#[$m])* #[doc = $doc] pub const $name: ConfigKey = ConfigKey { key: $key, aliases: &[$($alias),*], default: $default, doc: $doc }; )*
        /// All keys, for listing and validation.
        pub const ALL_KEYS: &[ConfigKey] = &[$($name),*];
    };
}

keys! {
    // ---- table properties (hoodie.properties) ----
    TABLE_NAME = ("hoodie.table.name", [], None, "Table name.");
    TABLE_TYPE = ("hoodie.table.type", ["hoodie.datasource.write.table.type"], Some("COPY_ON_WRITE"), "COPY_ON_WRITE or MERGE_ON_READ.");
    TABLE_VERSION = ("hoodie.table.version", [], Some("6"), "Table format version.");
    TIMELINE_LAYOUT_VERSION = ("hoodie.timeline.layout.version", [], Some("1"), "Timeline layout version (1 for table version 6, 2 for 8 and 9).");
    RECORD_KEY_FIELDS = ("hoodie.table.recordkey.fields", ["hoodie.datasource.write.recordkey.field"], None, "Comma-separated record key columns; absent means keys are generated.");
    ORDERING_FIELDS = ("hoodie.table.ordering.fields", ["hoodie.table.precombine.field", "hoodie.datasource.write.precombine.field"], None, "The ordering (pre-combine) field.");
    PARTITION_FIELDS = ("hoodie.table.partition.fields", ["hoodie.datasource.write.partitionpath.field"], None, "Comma-separated partition columns.");
    KEYGEN_CLASS = ("hoodie.table.keygenerator.class", ["hoodie.datasource.write.keygenerator.class"], None, "Key generator class (table version 6).");
    KEYGEN_TYPE = ("hoodie.table.keygenerator.type", ["hoodie.datasource.write.keygenerator.type"], None, "Key generator type (table version 8+).");
    HIVE_STYLE_PARTITIONING = ("hoodie.datasource.write.hive_style_partitioning", [], Some("true"), "Partition paths as field=value.");
    PARTITION_PATH_URLENCODE = ("hoodie.datasource.write.partitionpath.urlencode", [], Some("false"), "URL-encode partition path values.");
    DROP_PARTITION_COLUMNS = ("hoodie.datasource.write.drop.partition.columns", [], Some("false"), "Drop partition columns from data files (not supported).");
    POPULATE_META_FIELDS = ("hoodie.populate.meta.fields", [], Some("true"), "Write the _hoodie_* meta columns.");
    BASE_FILE_FORMAT = ("hoodie.table.base.file.format", [], Some("PARQUET"), "Base file format.");
    ARCHIVELOG_FOLDER = ("hoodie.archivelog.folder", [], Some("archived"), "Archived timeline folder (table version 6).");
    DATABASE_NAME = ("hoodie.database.name", [], None, "Database the table belongs to.");
    TIMELINE_TIMEZONE = ("hoodie.table.timeline.timezone", [], Some("UTC"), "Time zone instants are minted in (UTC or LOCAL).");
    TIMELINE_PATH = ("hoodie.timeline.path", [], Some("timeline"), "Timeline folder under .hoodie (layout 2).");
    CREATE_SCHEMA = ("hoodie.table.create.schema", [], None, "Avro schema of the table at creation, without meta fields.");
    CHECKSUM = ("hoodie.table.checksum", [], None, "CRC-32 of database.table, checked by Java readers.");
    RECORD_MERGE_MODE = ("hoodie.record.merge.mode", [], None, "EVENT_TIME_ORDERING or COMMIT_TIME_ORDERING.");
    PAYLOAD_CLASS = ("hoodie.compaction.payload.class", ["hoodie.datasource.write.payload.class"], None, "Record payload class (table version 6).");
    CDC_ENABLED = ("hoodie.table.cdc.enabled", [], Some("false"), "Write CDC logs.");
    METADATA_PARTITIONS = ("hoodie.table.metadata.partitions", [], None, "Metadata table partitions in use.");

    // ---- write options ----
    WRITE_OPERATION = ("hoodie.datasource.write.operation", [], None, "Write operation: bulk_insert, insert, upsert, insert_overwrite, insert_overwrite_table.");
    SQL_INSERT_INTO_OPERATION = ("hoodie.spark.sql.insert.into.operation", [], None, "Operation of INSERT INTO when hoodie.datasource.write.operation is unset.");
    SQL_INSERT_MODE = ("hoodie.sql.insert.mode", [], None, "Legacy insert mode: upsert, strict or non-strict.");
    SQL_BULK_INSERT_ENABLE = ("hoodie.sql.bulk.insert.enable", [], Some("false"), "Legacy: INSERT INTO as bulk_insert.");
    INSERT_DUP_POLICY = ("hoodie.datasource.insert.dup.policy", [], Some("none"), "none, drop or fail: what INSERT does with keys that already exist.");
    PARQUET_MAX_FILE_SIZE = ("hoodie.parquet.max.file.size", [], Some("125829120"), "Target base file size in bytes.");
    PARQUET_SMALL_FILE_LIMIT = ("hoodie.parquet.small.file.limit", [], Some("104857600"), "Base files below this size take new inserts.");
    PARQUET_COMPRESSION_CODEC = ("hoodie.parquet.compression.codec", [], Some("snappy"), "Parquet compression codec of base files.");
    PARQUET_SMALL_FILE_CANDIDATES = ("hoodie.merge.small.file.group.candidates.limit", [], Some("1"), "How many small file groups of a partition take new inserts.");
    RECORD_SIZE_ESTIMATE = ("hoodie.copyonwrite.record.size.estimate", [], Some("1024"), "Record size estimate in bytes when a partition has no files to learn it from.");
    INDEX_TYPE = ("hoodie.index.type", [], Some("SIMPLE"), "SIMPLE or BLOOM (keys unique per partition), GLOBAL_SIMPLE or GLOBAL_BLOOM (unique across partitions).");
    SIMPLE_INDEX_UPDATE_PARTITION_PATH = ("hoodie.simple.index.update.partition.path", [], Some("true"), "GLOBAL_SIMPLE: move a record whose partition value changed.");
    BLOOM_INDEX_UPDATE_PARTITION_PATH = ("hoodie.bloom.index.update.partition.path", [], Some("true"), "GLOBAL_BLOOM: move a record whose partition value changed.");
    OVERWRITE_MODE = ("hoodie.datasource.overwrite.mode", ["spark.sql.sources.partitionOverwriteMode"], None, "INSERT OVERWRITE without a PARTITION clause: STATIC replaces the table, DYNAMIC the partitions in the input.");
    BLOOM_NUM_ENTRIES = ("hoodie.index.bloom.num_entries", [], Some("60000"), "Bloom filter sizing: expected entries.");
    BLOOM_FPP = ("hoodie.index.bloom.fpp", [], Some("0.000000001"), "Bloom filter false positive rate.");
    BLOOM_MAX_ENTRIES = ("hoodie.bloom.index.filter.dynamic.max.entries", [], Some("100000"), "Dynamic bloom filter maximum entries.");
    MERGE_JOIN_PASSES = ("hoodie.merge.join.passes", [], Some("auto"), "MERGE INTO on a table with a record key: how many passes its join runs in, one after another, each over the source and target rows whose record key hashes to it. auto: one under an unbounded memory pool, else the source is measured when the MERGE runs and twice a pass's share of it must fit a quarter of the pool.");
}

/// The short SQL option names Hudi's Spark SQL accepts, mapped to the table keys they set.
/// Matched case-insensitively.
pub const SQL_OPTION_ALIASES: &[(&str, ConfigKey)] = &[
    ("primarykey", RECORD_KEY_FIELDS),
    ("precombinefield", ORDERING_FIELDS),
    ("orderingfields", ORDERING_FIELDS),
    ("type", TABLE_TYPE),
    ("recordmergemode", RECORD_MERGE_MODE),
];

/// Finds the key `name` refers to: a canonical key, an alias, or a SQL short name.
pub fn lookup(name: &str) -> Option<ConfigKey> {
    let lower = name.to_ascii_lowercase();
    SQL_OPTION_ALIASES
        .iter()
        .find(|(short, _)| *short == lower)
        .map(|(_, k)| *k)
        .or_else(|| ALL_KEYS.iter().copied().find(|k| k.matches(name)))
        .or_else(|| {
            ALL_KEYS.iter().copied().find(|k| {
                k.key.eq_ignore_ascii_case(name)
                    || k.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
            })
        })
}

/// Merge strategy id Hudi 1.x records for event-time ordering.
pub const EVENT_TIME_STRATEGY_ID: &str = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5";
/// Merge strategy id Hudi 1.x records for commit-time ordering.
pub const COMMIT_TIME_STRATEGY_ID: &str = "ce9acb64-bde0-424c-9b91-f6ebba25356d";
/// Payload class that means event-time ordering in table version 6.
pub const DEFAULT_PAYLOAD_CLASS: &str = "org.apache.hudi.common.model.DefaultHoodieRecordPayload";
/// Payload class that means commit-time ordering in table version 6.
pub const OVERWRITE_PAYLOAD_CLASS: &str =
    "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_up_short_names_case_insensitively() {
        assert_eq!(lookup("PRIMARYKEY"), Some(RECORD_KEY_FIELDS));
        assert_eq!(lookup("preCombineField"), Some(ORDERING_FIELDS));
        assert_eq!(
            lookup("hoodie.table.precombine.field"),
            Some(ORDERING_FIELDS)
        );
        assert_eq!(lookup("no.such.key"), None);
    }

    #[test]
    fn resolves_aliases_then_default() {
        let get = |k: &str| (k == "hoodie.table.precombine.field").then_some("ts");
        assert_eq!(ORDERING_FIELDS.resolve(get), Some("ts"));
        assert_eq!(TABLE_TYPE.resolve(|_| None), Some("COPY_ON_WRITE"));
    }
}
