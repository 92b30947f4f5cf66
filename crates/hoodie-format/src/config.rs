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
    /// The values it takes.
    pub kind: ValueKind,
    /// What it does.
    pub doc: &'static str,
}

/// The values a key takes; [`ConfigKey::check`] holds a value against it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// Any text (names, class names, schemas).
    Text,
    /// `true` or `false`, in any case.
    Bool,
    /// A whole number of at least `min`.
    Count {
        /// The smallest allowed value.
        min: u64,
    },
    /// A number strictly between 0 and 1.
    Fraction,
    /// One of these words, in any case.
    OneOf(&'static [&'static str]),
    /// `auto` or a whole number from 1 to `max`.
    AutoOrCount {
        /// The largest allowed number.
        max: u64,
    },
}

/// A value a key does not take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid value {value:?} for {key}: {allowed}")]
pub struct InvalidValue {
    /// The key (as canonical name).
    pub key: &'static str,
    /// The value given.
    pub value: String,
    /// What the key takes.
    pub allowed: String,
}

impl ValueKind {
    /// What a value of this kind may be, for error messages.
    pub fn describe(&self) -> String {
        match self {
            ValueKind::Text => "any text".into(),
            ValueKind::Bool => "expected true or false".into(),
            ValueKind::Count { min } => format!("expected a whole number of at least {min}"),
            ValueKind::Fraction => "expected a number greater than 0 and less than 1".into(),
            ValueKind::OneOf(words) => format!("expected one of {}", words.join(", ")),
            ValueKind::AutoOrCount { max } => {
                format!("expected auto or a whole number from 1 to {max}")
            }
        }
    }

    fn accepts(&self, value: &str) -> bool {
        let v = value.trim();
        match self {
            ValueKind::Text => true,
            ValueKind::Bool => v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false"),
            ValueKind::Count { min } => v.parse::<u64>().is_ok_and(|n| n >= *min),
            ValueKind::Fraction => v.parse::<f64>().is_ok_and(|x| x > 0.0 && x < 1.0),
            ValueKind::OneOf(words) => words.iter().any(|w| w.eq_ignore_ascii_case(v)),
            ValueKind::AutoOrCount { max } => {
                v.eq_ignore_ascii_case("auto")
                    || v.parse::<u64>().is_ok_and(|n| (1..=*max).contains(&n))
            }
        }
    }
}

impl ConfigKey {
    /// Holds `value` against the values this key takes.
    pub fn check(&self, value: &str) -> Result<(), InvalidValue> {
        if self.kind.accepts(value) {
            Ok(())
        } else {
            Err(InvalidValue {
                key: self.key,
                value: value.to_string(),
                allowed: self.kind.describe(),
            })
        }
    }

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
    ($( $(#[$m:meta])* $name:ident = ($key:expr, [$($alias:expr),*], $default:expr, $kind:expr, $doc:expr); )*) => {
        $( $(#[$m])* #[doc = $doc] pub const $name: ConfigKey = ConfigKey { key: $key, aliases: &[$($alias),*], default: $default, kind: $kind, doc: $doc }; )*
        /// All keys, for listing and validation.
        pub const ALL_KEYS: &[ConfigKey] = &[$($name),*];
    };
}

/// The index types Hudi 1.2 names (`hoodie.index.type`); hoodie writes with the first six.
pub const INDEX_TYPES: &[&str] = &[
    "SIMPLE",
    "BLOOM",
    "GLOBAL_SIMPLE",
    "GLOBAL_BLOOM",
    "INMEMORY",
    "BUCKET",
    "RECORD_INDEX",
    "RECORD_LEVEL_INDEX",
    "GLOBAL_RECORD_LEVEL_INDEX",
    "FLINK_STATE",
];

/// The write operations `hoodie.datasource.write.operation` names.
pub const OPERATIONS: &[&str] = &[
    "insert",
    "upsert",
    "bulk_insert",
    "insert_overwrite",
    "insert_overwrite_table",
    "delete",
];

use ValueKind::*;

keys! {
    // ---- table properties (hoodie.properties) ----
    TABLE_NAME = ("hoodie.table.name", [], None, Text, "Table name.");
    TABLE_TYPE = ("hoodie.table.type", ["hoodie.datasource.write.table.type"], Some("COPY_ON_WRITE"), OneOf(&["COPY_ON_WRITE", "MERGE_ON_READ"]), "COPY_ON_WRITE or MERGE_ON_READ.");
    TABLE_VERSION = ("hoodie.table.version", [], Some("6"), OneOf(&["6", "8", "9"]), "Table format version.");
    TIMELINE_LAYOUT_VERSION = ("hoodie.timeline.layout.version", [], Some("1"), OneOf(&["1", "2"]), "Timeline layout version (1 for table version 6, 2 for 8 and 9).");
    RECORD_KEY_FIELDS = ("hoodie.table.recordkey.fields", ["hoodie.datasource.write.recordkey.field"], None, Text, "Comma-separated record key columns; absent means keys are generated.");
    ORDERING_FIELDS = ("hoodie.table.ordering.fields", ["hoodie.table.precombine.field", "hoodie.datasource.write.precombine.field"], None, Text, "The ordering (pre-combine) field.");
    PARTITION_FIELDS = ("hoodie.table.partition.fields", ["hoodie.datasource.write.partitionpath.field"], None, Text, "Comma-separated partition columns.");
    KEYGEN_CLASS = ("hoodie.table.keygenerator.class", ["hoodie.datasource.write.keygenerator.class"], None, Text, "Key generator class (table version 6).");
    KEYGEN_TYPE = ("hoodie.table.keygenerator.type", ["hoodie.datasource.write.keygenerator.type"], None, Text, "Key generator type (table version 8+).");
    HIVE_STYLE_PARTITIONING = ("hoodie.datasource.write.hive_style_partitioning", [], Some("true"), Bool, "Partition paths as field=value.");
    PARTITION_PATH_URLENCODE = ("hoodie.datasource.write.partitionpath.urlencode", [], Some("false"), Bool, "URL-encode partition path values.");
    DROP_PARTITION_COLUMNS = ("hoodie.datasource.write.drop.partition.columns", [], Some("false"), Bool, "Drop partition columns from data files (not supported).");
    POPULATE_META_FIELDS = ("hoodie.populate.meta.fields", [], Some("true"), Bool, "Write the _hoodie_* meta columns.");
    BASE_FILE_FORMAT = ("hoodie.table.base.file.format", [], Some("PARQUET"), Text, "Base file format.");
    ARCHIVELOG_FOLDER = ("hoodie.archivelog.folder", [], Some("archived"), Text, "Archived timeline folder (table version 6).");
    DATABASE_NAME = ("hoodie.database.name", [], None, Text, "Database the table belongs to.");
    TIMELINE_TIMEZONE = ("hoodie.table.timeline.timezone", [], Some("UTC"), OneOf(&["UTC", "LOCAL"]), "Time zone instants are minted in (UTC or LOCAL).");
    TIMELINE_PATH = ("hoodie.timeline.path", [], Some("timeline"), Text, "Timeline folder under .hoodie (layout 2).");
    CREATE_SCHEMA = ("hoodie.table.create.schema", [], None, Text, "Avro schema of the table at creation, without meta fields.");
    CHECKSUM = ("hoodie.table.checksum", [], None, Text, "CRC-32 of database.table, checked by Java readers.");
    RECORD_MERGE_MODE = ("hoodie.record.merge.mode", [], None, OneOf(&["EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING"]), "EVENT_TIME_ORDERING or COMMIT_TIME_ORDERING.");
    PAYLOAD_CLASS = ("hoodie.compaction.payload.class", ["hoodie.datasource.write.payload.class"], None, Text, "Record payload class (table version 6).");
    CDC_ENABLED = ("hoodie.table.cdc.enabled", [], Some("false"), Bool, "Write CDC logs: every rewrite of a file group logs its changed records to a .cdc log beside it.");
    CDC_LOGGING_MODE = ("hoodie.table.cdc.supplemental.logging.mode", [], Some("DATA_BEFORE_AFTER"), OneOf(&["OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"]), "What a CDC log holds per changed record: OP_KEY_ONLY (operation and key), DATA_BEFORE (and the before image) or DATA_BEFORE_AFTER (before and after images).");
    METADATA_PARTITIONS = ("hoodie.table.metadata.partitions", [], None, Text, "Metadata table partitions in use.");
    INITIAL_VERSION = ("hoodie.table.initial.version", [], None, OneOf(&["6", "8", "9"]), "The table version the table was created with (table version 8+).");
    RECORD_MERGE_STRATEGY_ID = ("hoodie.compaction.record.merger.strategy", ["hoodie.record.merge.strategy.id"], None, Text, "The merge strategy of the merge mode (an upgrade from version 6 records it, as Hudi 1.2's does).");
    LEGACY_PAYLOAD_CLASS = ("hoodie.table.legacy.payload.class", [], None, Text, "The payload class a table had before version 9 (an upgrade to 9 moves it here).");
    TIMELINE_HISTORY_PATH = ("hoodie.timeline.history.path", [], Some("history"), Text, "Folder of the archived (LSM) timeline under the timeline folder (layout 2).");
    TABLE_FORMAT = ("hoodie.table.format", [], Some("native"), Text, "The table format plug-in (Hudi 1.1+; hoodie writes native).");
    METADATA_PARTITIONS_INFLIGHT = ("hoodie.table.metadata.partitions.inflight", [], None, Text, "Metadata table partitions being built.");

    // ---- write options ----
    WRITE_OPERATION = ("hoodie.datasource.write.operation", [], None, OneOf(OPERATIONS), "Write operation: bulk_insert, insert, upsert, insert_overwrite, insert_overwrite_table.");
    SQL_INSERT_INTO_OPERATION = ("hoodie.spark.sql.insert.into.operation", [], None, OneOf(OPERATIONS), "Operation of INSERT INTO when hoodie.datasource.write.operation is unset.");
    SQL_INSERT_MODE = ("hoodie.sql.insert.mode", [], None, OneOf(&["upsert", "strict", "non-strict"]), "Legacy insert mode: upsert, strict or non-strict.");
    SQL_BULK_INSERT_ENABLE = ("hoodie.sql.bulk.insert.enable", [], Some("false"), Bool, "Legacy: INSERT INTO as bulk_insert.");
    COMBINE_BEFORE_INSERT = ("hoodie.combine.before.insert", [], Some("false"), Bool, "INSERT (insert, bulk_insert) and INSERT OVERWRITE first collapse duplicate keys of their input to the row with the greatest ordering value; by default they keep them, as Hudi 1.1+ does.");
    INSERT_DUP_POLICY = ("hoodie.datasource.insert.dup.policy", [], Some("none"), OneOf(&["none", "drop", "fail"]), "none, drop or fail: what INSERT does with keys that already exist.");
    PARQUET_MAX_FILE_SIZE = ("hoodie.parquet.max.file.size", [], Some("125829120"), Count { min: 1 }, "Target base file size in bytes.");
    PARQUET_BLOCK_SIZE = ("hoodie.parquet.block.size", [], Some("125829120"), Count { min: 1 }, "Parquet row group size of base files in bytes (encoded size, as Java's parquet.block.size): a row group is closed once it reaches it.");
    PARQUET_SMALL_FILE_LIMIT = ("hoodie.parquet.small.file.limit", [], Some("104857600"), Count { min: 0 }, "Base files below this size take new inserts.");
    WRITE_RECORD_POSITIONS = ("hoodie.write.record.positions", [], Some("true"), Bool, "Table versions 8 and 9: a log block of updates or deletes of records the index lookup found in the slice's base file carries their rows there (RECORD_POSITIONS, with the base file's instant), as Hudi 1.x writes them, so that a reader can merge it by position. So does a block of rows an UPDATE, DELETE or MERGE read from the table, each row with its row in the base file it was read from (Spark's carry none), unless a compaction gave the file group a new base file since the read. With false, such a statement's scan reads no row numbers either.");
    LOGFILE_DATA_BLOCK_FORMAT = ("hoodie.logfile.data.block.format", [], Some("avro"), OneOf(&["avro", "parquet"]), "How the records of a merge-on-read log file are encoded: avro (AVRO_DATA blocks, Hudi's default) or parquet (PARQUET_DATA blocks: each block a Parquet file of the records, compressed with hoodie.parquet.compression.codec). hfile (Hudi's for its metadata table) is refused.");
    PARQUET_COMPRESSION_CODEC = ("hoodie.parquet.compression.codec", [], Some("snappy"), OneOf(&["snappy", "gzip", "zstd", "lz4", "lz4_raw", "uncompressed", "none"]), "Parquet compression codec of base files.");
    PARQUET_SMALL_FILE_CANDIDATES = ("hoodie.merge.small.file.group.candidates.limit", [], Some("1"), Count { min: 0 }, "How many small file groups of a partition take new inserts.");
    RECORD_SIZE_ESTIMATE = ("hoodie.copyonwrite.record.size.estimate", [], Some("1024"), Count { min: 1 }, "Record size estimate in bytes when a partition has no files to learn it from.");
    INDEX_TYPE = ("hoodie.index.type", [], Some("SIMPLE"), OneOf(INDEX_TYPES), "SIMPLE, BLOOM or INMEMORY (keys unique per partition), GLOBAL_SIMPLE or GLOBAL_BLOOM (unique across partitions), BUCKET (a fixed file group per bucket of keys). Hudi's RECORD_INDEX, RECORD_LEVEL_INDEX, GLOBAL_RECORD_LEVEL_INDEX and FLINK_STATE are not supported yet.");
    SIMPLE_INDEX_UPDATE_PARTITION_PATH = ("hoodie.simple.index.update.partition.path", [], Some("true"), Bool, "GLOBAL_SIMPLE: move a record whose partition value changed.");
    BLOOM_INDEX_UPDATE_PARTITION_PATH = ("hoodie.bloom.index.update.partition.path", [], Some("true"), Bool, "GLOBAL_BLOOM: move a record whose partition value changed.");
    OVERWRITE_MODE = ("hoodie.datasource.overwrite.mode", ["spark.sql.sources.partitionOverwriteMode"], None, OneOf(&["STATIC", "DYNAMIC"]), "INSERT OVERWRITE without a PARTITION clause: STATIC replaces the table, DYNAMIC the partitions in the input.");
    BLOOM_NUM_ENTRIES = ("hoodie.index.bloom.num_entries", [], Some("60000"), Count { min: 1 }, "Bloom filter sizing: expected entries.");
    BLOOM_FPP = ("hoodie.index.bloom.fpp", [], Some("0.000000001"), Fraction, "Bloom filter false positive rate.");
    BLOOM_MAX_ENTRIES = ("hoodie.bloom.index.filter.dynamic.max.entries", [], Some("100000"), Count { min: 1 }, "Dynamic bloom filter maximum entries.");
    BUCKET_NUM_BUCKETS = ("hoodie.bucket.index.num.buckets", [], Some("256"), Count { min: 1 }, "BUCKET index: buckets (file groups) per partition.");
    BUCKET_HASH_FIELD = ("hoodie.bucket.index.hash.field", [], None, Text, "BUCKET index: the record key fields hashed to a bucket (all of them when not set).");
    BUCKET_ENGINE = ("hoodie.index.bucket.engine", [], Some("SIMPLE"), OneOf(&["SIMPLE", "CONSISTENT_HASHING"]), "BUCKET index engine; hoodie writes with SIMPLE.");
    MERGE_INTO_PARTIAL_UPDATES = ("hoodie.spark.sql.merge.into.partial.updates", [], Some("true"), Bool, "MERGE INTO on a merge-on-read table of version 8 or 9 (no global index): when its UPDATE clauses together assign only some of the data columns, its updates are logged as partial records (an IS_PARTIAL block of the meta columns and the assigned ones), as Hudi 1.x writes them. false: whole records.");
    SQL_OPTIMIZED_WRITES = ("hoodie.spark.sql.optimized.writes.enable", [], Some("false"), Bool, "MERGE INTO on a table with a record key: true: the ON condition must match every record key column. false (as Spark with Hudi 1.2 reads it when unset): a key column the ON condition leaves out is taken from the source's column of that name.");
    COMPACT_INLINE = ("hoodie.compact.inline", [], Some("true"), Bool, "Merge-on-read: compact after a write once hoodie.compact.inline.max.delta.commits deltacommits followed the last compaction (Spark's SQL writes do this by default; Hudi's write client defaults to false). On a copy-on-write table an explicit true fails, as in Hudi.");
    COMPACT_INLINE_MAX_DELTA_COMMITS = ("hoodie.compact.inline.max.delta.commits", [], Some("5"), Count { min: 1 }, "Merge-on-read: the deltacommits after which an inline compaction runs.");
    COMPACT_SCHEDULE_INLINE = ("hoodie.compact.schedule.inline", [], Some("false"), Bool, "Merge-on-read: plan a compaction inline but leave it to RUN COMPACTION (table version 6: the next write runs it first).");
    CLEAN_AUTOMATIC = ("hoodie.clean.automatic", [], Some("true"), Bool, "Clean after every commit: delete the file slices the retention policy no longer needs.");
    CLEAN_ASYNC = ("hoodie.clean.async", [], Some("false"), Bool, "Accepted for Hudi compatibility; hoodie cleans at the end of the statement either way.");
    CLEANER_POLICY = ("hoodie.cleaner.policy", [], Some("KEEP_LATEST_COMMITS"), OneOf(&["KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS"]), "What a clean keeps: the slices the last N commits read (KEEP_LATEST_COMMITS), the last N slices of each file group (KEEP_LATEST_FILE_VERSIONS) or the slices of the last N hours' commits (KEEP_LATEST_BY_HOURS). Unset: inferred from which retention key is set.");
    CLEANER_COMMITS_RETAINED = ("hoodie.cleaner.commits.retained", [], Some("10"), Count { min: 1 }, "KEEP_LATEST_COMMITS: how many of the latest commits stay readable (time travel, incremental reads).");
    CLEANER_HOURS_RETAINED = ("hoodie.cleaner.hours.retained", [], Some("24"), Count { min: 0 }, "KEEP_LATEST_BY_HOURS: how many hours of commits before the latest stay readable.");
    CLEANER_FILE_VERSIONS_RETAINED = ("hoodie.cleaner.fileversions.retained", [], Some("3"), Count { min: 1 }, "KEEP_LATEST_FILE_VERSIONS: how many slices of each file group are kept.");
    CLEAN_TRIGGER_STRATEGY = ("hoodie.clean.trigger.strategy", [], Some("NUM_COMMITS"), OneOf(&["NUM_COMMITS"]), "When a clean is planned: NUM_COMMITS (after hoodie.clean.max.commits commits).");
    CLEAN_MAX_COMMITS = ("hoodie.clean.max.commits", [], Some("1"), Count { min: 0 }, "Commits after the last clean before the next one is planned.");
    CLEANER_INCREMENTAL_MODE = ("hoodie.cleaner.incremental.mode", [], Some("true"), Bool, "A clean lists only the partitions written since the last clean's earliest kept commit (false: the whole table every time).");
    ARCHIVE_AUTOMATIC = ("hoodie.archive.automatic", [], Some("true"), Bool, "Archive after every commit (after its clean): move the oldest instants out of the active timeline into the archived timeline (.hoodie/archived/ on table version 6, the LSM history .hoodie/timeline/history/ on 8 and 9) once it holds more than hoodie.keep.max.commits commits.");
    ARCHIVE_ASYNC = ("hoodie.archive.async", [], Some("false"), Bool, "Accepted for Hudi compatibility; hoodie archives at the end of the statement either way.");
    KEEP_MIN_COMMITS = ("hoodie.keep.min.commits", [], Some("20"), Count { min: 1 }, "An archival leaves this many commits on the active timeline (more when the cleaner keeps more).");
    KEEP_MAX_COMMITS = ("hoodie.keep.max.commits", [], Some("30"), Count { min: 2 }, "An archival runs once the active timeline holds more than this many commits; must be greater than hoodie.keep.min.commits.");
    COMMITS_ARCHIVAL_BATCH = ("hoodie.commits.archival.batch", [], Some("10"), Count { min: 1 }, "Archived instants per log block of the archive file.");
    TIMELINE_COMPACTION_BATCH_SIZE = ("hoodie.timeline.compaction.batch.size", [], Some("10"), Count { min: 2 }, "Table versions 8 and 9: once a level of the archived (LSM) timeline holds this many files, the oldest of them are merged into one file of the next level.");
    TIMELINE_MANIFEST_RETAINED_VERSIONS = ("hoodie.timeline.manifest.retained.versions", [], Some("3"), Count { min: 1 }, "Table versions 8 and 9: the snapshots (manifests) of the archived timeline kept for readers; older ones are removed with the files only they named.");
    ARCHIVE_BEYOND_SAVEPOINT = ("hoodie.archive.beyond.savepoint", [], Some("false"), Bool, "false: archival stops at the first savepoint; true: it archives past savepoints and keeps only the savepointed commits.");
    WRITE_TABLE_VERSION = ("hoodie.write.table.version", [], Some("9"), OneOf(&["6", "8", "9"]), "The table version a CREATE TABLE or CTAS writes: 6 (Hudi 0.14's), 8 (Hudi 1.0's) or 9 (Hudi 1.1 and 1.2's, the default as in Hudi 1.2). An existing table keeps its own, unless a session sets this above it: a write then upgrades the table first (see hoodie.write.auto.upgrade).");
    WRITE_AUTO_UPGRADE = ("hoodie.write.auto.upgrade", [], Some("true"), Bool, "true: a write in a session whose hoodie.write.table.version is above its table's version upgrades the table to that version first, as Hudi's writers do (6 to 8 to 9; as CALL upgrade_table does); false: the write keeps the table's version.");
    // ---- concurrency ----
    METADATA_ENABLE = ("hoodie.metadata.enable", [], Some("true"), Bool, "Hudi's metadata table. hoodie keeps none: on a table that has one (hoodie.table.metadata.partitions lists its partitions) a write or table service is refused with true (Hudi's default), since the metadata table would go stale; with false hoodie first removes it (.hoodie/metadata and the property), as a Hudi writer with metadata disabled does.");
    WRITE_CONCURRENCY_MODE = ("hoodie.write.concurrency.mode", [], Some("SINGLE_WRITER"), OneOf(&["SINGLE_WRITER", "OPTIMISTIC_CONCURRENCY_CONTROL", "NON_BLOCKING_CONCURRENCY_CONTROL"]), "SINGLE_WRITER: one writer at a time, a pending write is taken as failed and rolled back by the next. OPTIMISTIC_CONCURRENCY_CONTROL: several writers; each commit takes the table lock and fails with a conflict error when a write that committed since its read touched the same file groups. NON_BLOCKING_CONCURRENCY_CONTROL is refused.");
    FAILED_WRITES_CLEANER_POLICY = ("hoodie.cleaner.policy.failed.writes", [], None, OneOf(&["EAGER", "LAZY", "NEVER"]), "What happens to the pending instants of failed writers: EAGER (single writer's default) rolls back every pending write when a write starts; LAZY (the default, and required, under optimistic concurrency) only those whose heartbeat expired; NEVER leaves them.");
    HEARTBEAT_INTERVAL_MS = ("hoodie.client.heartbeat.interval_in_ms", [], Some("60000"), Count { min: 1000 }, "Under LAZY failed-writes cleaning: how often a writer refreshes its heartbeat file .hoodie/.heartbeat/<instant> (milliseconds).");
    HEARTBEAT_TOLERABLE_MISSES = ("hoodie.client.heartbeat.tolerable.misses", [], Some("2"), Count { min: 1 }, "A heartbeat older than this many intervals has expired: its write is taken as failed.");
    LOCK_PROVIDER = ("hoodie.write.lock.provider", [], None, Text, "The table lock under optimistic concurrency. hoodie's lock works on every store: an OS file lock on .hoodie/.locks/table_lock on local disk, and Hudi 1.1's storage lock file .hoodie/.locks/table_lock.json (conditional writes) on object stores. Accepted: unset, org.apache.hudi.client.transaction.lock.StorageBasedLockProvider, FileSystemBasedLockProvider or InProcessLockProvider; other providers (ZooKeeper, Hive metastore, DynamoDB) are refused.");
    LOCK_WAIT_TIME_MS = ("hoodie.write.lock.wait_time_ms", [], Some("60000"), Count { min: 0 }, "How long a writer waits for the table lock before it fails (milliseconds).");
    LOCK_RETRY_WAIT_MS = ("hoodie.write.lock.wait_time_ms_between_retry", [], Some("1000"), Count { min: 1 }, "Time between two attempts to take the table lock (milliseconds; hoodie waits at most a tenth of it between attempts at first and backs off to it).");
    LOCK_VALIDITY_SECS = ("hoodie.write.lock.storage.validity.timeout.secs", [], Some("300"), Count { min: 10 }, "Storage lock: how long a taken lock stays valid without renewal (seconds); a lock past it is taken over.");
    LOCK_RENEW_SECS = ("hoodie.write.lock.storage.renew.interval.secs", ["hoodie.write.lock.storage.heartbeat.poll.secs"], Some("30"), Count { min: 1 }, "Storage lock: how often the holder renews it (seconds); the validity must be at least ten times this.");
    // ---- read options ----
    QUERY_TYPE = ("hoodie.datasource.query.type", [], Some("snapshot"), OneOf(&["snapshot", "read_optimized", "incremental"]), "How a table is read: snapshot (the latest merged state), read_optimized (base files alone) or incremental (the records a window of commits changed).");
    READ_BEGIN_INSTANT = ("hoodie.datasource.read.begin.instanttime", [], None, Text, "Incremental reads: the window starts after this instant (exclusive; earliest or 000 for the first commit on).");
    READ_END_INSTANT = ("hoodie.datasource.read.end.instanttime", [], None, Text, "Incremental reads: the window ends at this instant (inclusive; the latest commit when unset).");
    INCR_FALLBACK_FULL_TABLE_SCAN = ("hoodie.datasource.read.incr.fallback.fulltablescan.enable", [], Some("false"), Bool, "Incremental reads: when the window starts or ends before the active timeline (archived commits) or a file it needs was cleaned, read the latest snapshot's records of commit times in the window instead (Hudi's full table scan) of failing or reading the active timeline's commits alone.");
    INCREMENTAL_FORMAT = ("hoodie.datasource.query.incremental.format", [], Some("latest_state"), OneOf(&["latest_state", "cdc"]), "Incremental reads: latest_state (the latest state of each changed record) or cdc (change records: op, ts_ms, before, after).");
    CDC_IMAGE_FORMAT = ("hoodie.datafusion.cdc.image.format", [], Some("json"), OneOf(&["json", "struct"]), "hoodie's own (no Hudi key): CDC reads give before and after as JSON text (json, as Hudi) or as struct columns of the table's data columns (struct).");
    MERGE_USE_RECORD_POSITIONS = ("hoodie.merge.use.record.positions", [], Some("true"), Bool, "Snapshot reads of merge-on-read slices: when every log block of a slice carries record positions counted in its base file (table versions 8 and 9), its records meet the base records by row number, as Hudi 1.x's reader does, and the base file's keys are not read; otherwise, and with false, they meet by record key.");
    AS_OF_INSTANT = ("as.of.instant", [], None, Text, "Time travel: read the table as of this instant (the forms TIMESTAMP AS OF takes).");
    MERGE_JOIN_PASSES = ("hoodie.merge.join.passes", [], Some("auto"), AutoOrCount { max: 1024 }, "MERGE INTO on a table with a record key: how many passes its join runs in, one after another, each over the source and target rows whose record key hashes to it. auto: one under an unbounded memory pool, else the source is measured when the MERGE runs and twice a pass's share of it must fit a quarter of the pool.");
}

/// The keys a write reads from the session and the table properties, checked by
/// [`check_write_options`] before a write starts.
pub const WRITE_KEYS: &[ConfigKey] = &[
    RECORD_MERGE_MODE,
    WRITE_OPERATION,
    SQL_INSERT_INTO_OPERATION,
    SQL_INSERT_MODE,
    SQL_BULK_INSERT_ENABLE,
    INSERT_DUP_POLICY,
    PARQUET_MAX_FILE_SIZE,
    PARQUET_BLOCK_SIZE,
    PARQUET_SMALL_FILE_LIMIT,
    PARQUET_COMPRESSION_CODEC,
    PARQUET_SMALL_FILE_CANDIDATES,
    RECORD_SIZE_ESTIMATE,
    INDEX_TYPE,
    SIMPLE_INDEX_UPDATE_PARTITION_PATH,
    BLOOM_INDEX_UPDATE_PARTITION_PATH,
    OVERWRITE_MODE,
    BLOOM_NUM_ENTRIES,
    BLOOM_FPP,
    BLOOM_MAX_ENTRIES,
    MERGE_JOIN_PASSES,
    SQL_OPTIMIZED_WRITES,
    MERGE_INTO_PARTIAL_UPDATES,
    COMPACT_INLINE,
    COMPACT_INLINE_MAX_DELTA_COMMITS,
    COMPACT_SCHEDULE_INLINE,
    BUCKET_NUM_BUCKETS,
    BUCKET_HASH_FIELD,
    BUCKET_ENGINE,
    CLEAN_AUTOMATIC,
    CLEAN_ASYNC,
    CLEANER_POLICY,
    CLEANER_COMMITS_RETAINED,
    CLEANER_HOURS_RETAINED,
    CLEANER_FILE_VERSIONS_RETAINED,
    CLEAN_TRIGGER_STRATEGY,
    CLEAN_MAX_COMMITS,
    CLEANER_INCREMENTAL_MODE,
    ARCHIVE_AUTOMATIC,
    ARCHIVE_ASYNC,
    KEEP_MIN_COMMITS,
    KEEP_MAX_COMMITS,
    COMMITS_ARCHIVAL_BATCH,
    TIMELINE_COMPACTION_BATCH_SIZE,
    TIMELINE_MANIFEST_RETAINED_VERSIONS,
    ARCHIVE_BEYOND_SAVEPOINT,
    WRITE_CONCURRENCY_MODE,
    FAILED_WRITES_CLEANER_POLICY,
    HEARTBEAT_INTERVAL_MS,
    HEARTBEAT_TOLERABLE_MISSES,
    LOCK_PROVIDER,
    LOCK_WAIT_TIME_MS,
    LOCK_RETRY_WAIT_MS,
    LOCK_VALIDITY_SECS,
    LOCK_RENEW_SECS,
];

/// Checks every write option `get` finds (under its key or an alias) against the values the
/// key takes; the first bad one is the error.
pub fn check_write_options<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Result<(), InvalidValue> {
    for key in WRITE_KEYS {
        let found = std::iter::once(key.key)
            .chain(key.aliases.iter().copied())
            .find_map(&get);
        if let Some(value) = found {
            key.check(value)?;
        }
    }
    Ok(())
}

/// The index types hoodie writes with: the first six of [`INDEX_TYPES`].
pub const SUPPORTED_INDEX_TYPES: &[&str] = &[
    "SIMPLE",
    "BLOOM",
    "GLOBAL_SIMPLE",
    "GLOBAL_BLOOM",
    "INMEMORY",
    "BUCKET",
];

/// Checks a value a session sets for `key` (`SET k = v`): what the key takes, and for keys
/// whose values hoodie supports only in part, only what hoodie supports, so that a value a
/// write would refuse is refused at the `SET` (the error lists only what hoodie supports).
pub fn check_setting(key: &ConfigKey, value: &str) -> Result<(), InvalidValue> {
    if key.key == INDEX_TYPE.key {
        let upper = value.trim().to_ascii_uppercase();
        if !SUPPORTED_INDEX_TYPES.contains(&upper.as_str()) {
            let hudi_only = INDEX_TYPES.contains(&upper.as_str());
            return Err(InvalidValue {
                key: key.key,
                value: value.to_string(),
                allowed: format!(
                    "{}expected one of {}",
                    if hudi_only {
                        "Hudi has this index but hoodie does not write with it yet; "
                    } else {
                        ""
                    },
                    SUPPORTED_INDEX_TYPES.join(", ")
                ),
            });
        }
    }
    key.check(value)
}

/// The known key closest to `name` (by edit distance, at most a third of its length away), for
/// "did you mean" hints on keys hoodie does not know.
pub fn closest_key(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    ALL_KEYS
        .iter()
        .flat_map(|k| std::iter::once(k.key).chain(k.aliases.iter().copied()))
        .map(|k| (edit_distance(&lower, &k.to_ascii_lowercase()), k))
        .filter(|(d, _)| *d <= lower.len().max(3) / 3)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The short SQL option names Hudi's Spark SQL accepts, mapped to the table keys they set.
/// Matched case-insensitively.
pub const SQL_OPTION_ALIASES: &[(&str, ConfigKey)] = &[
    ("primarykey", RECORD_KEY_FIELDS),
    ("precombinefield", ORDERING_FIELDS),
    ("orderingfields", ORDERING_FIELDS),
    ("type", TABLE_TYPE),
    ("recordmergemode", RECORD_MERGE_MODE),
    ("payloadclass", PAYLOAD_CLASS),
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
    fn every_key_takes_its_default() {
        for key in ALL_KEYS {
            if let Some(d) = key.default {
                assert_eq!(key.check(d), Ok(()), "{}", key.key);
            }
        }
    }

    #[test]
    fn refuses_bad_values_with_what_is_allowed() {
        assert!(BLOOM_FPP.check("0.01").is_ok());
        let e = BLOOM_FPP.check("0").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid value \"0\" for hoodie.index.bloom.fpp: expected a number greater than 0 and less than 1"
        );
        assert!(BLOOM_FPP.check("1").is_err() && BLOOM_FPP.check("abc").is_err());
        assert!(
            PARQUET_MAX_FILE_SIZE.check("0").is_err() && PARQUET_MAX_FILE_SIZE.check("-5").is_err()
        );
        assert!(INDEX_TYPE.check("global_bloom").is_ok() && INDEX_TYPE.check("HASH").is_err());
        assert!(MERGE_JOIN_PASSES.check("AUTO").is_ok() && MERGE_JOIN_PASSES.check("0").is_err());
        assert!(SIMPLE_INDEX_UPDATE_PARTITION_PATH.check("yes").is_err());
        let get =
            |k: &str| (k == "spark.sql.sources.partitionOverwriteMode").then_some("sometimes");
        assert_eq!(
            check_write_options(get).unwrap_err().key,
            OVERWRITE_MODE.key
        );
        assert!(check_write_options(|_| None).is_ok());
    }

    #[test]
    fn every_write_key_that_is_not_free_text_refuses_a_bad_value() {
        for key in WRITE_KEYS {
            if key.kind == ValueKind::Text {
                continue;
            }
            let e = key.check("-1.5x").unwrap_err();
            assert_eq!(e.key, key.key);
            assert!(e.to_string().contains("expected"), "{e}");
        }
        // the free-text ones are checked where they are used (hash fields against the key, the
        // lock provider by the concurrency settings)
        let text: Vec<&str> = WRITE_KEYS
            .iter()
            .filter(|k| k.kind == ValueKind::Text)
            .map(|k| k.key)
            .collect();
        assert_eq!(
            text,
            [
                "hoodie.bucket.index.hash.field",
                "hoodie.write.lock.provider"
            ]
        );
    }

    #[test]
    fn suggests_the_closest_key() {
        assert_eq!(
            closest_key("hoodie.index.bloom.fp"),
            Some("hoodie.index.bloom.fpp")
        );
        assert_eq!(
            closest_key("hoodie.datasource.write.operaton"),
            Some("hoodie.datasource.write.operation")
        );
        assert_eq!(closest_key("hoodie.something.else.entirely"), None);
    }

    #[test]
    fn resolves_aliases_then_default() {
        let get = |k: &str| (k == "hoodie.table.precombine.field").then_some("ts");
        assert_eq!(ORDERING_FIELDS.resolve(get), Some("ts"));
        assert_eq!(TABLE_TYPE.resolve(|_| None), Some("COPY_ON_WRITE"));
    }
}
