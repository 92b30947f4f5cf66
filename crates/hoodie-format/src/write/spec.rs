//! [`WriteSpec`]: everything one write needs, resolved once from the options it sees
//! ([`WriteOptions`]: the session's over the table's over the defaults) and the statement that
//! writes, and validated before anything is written.

use crate::bucket::BucketSpec;
use crate::config;
use crate::error::{FormatError, Result};
use crate::refusal::OptionConflict;
use crate::table_config::MergeMode;
use crate::write::options::WriteOptions;
use crate::write::transaction::WriteOperation;
use crate::write::writer::FileSpec;

/// Which file groups an overwrite replaces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverwriteScope {
    /// Every file group of the table.
    Table,
    /// The partitions present in the input (dynamic overwrite).
    InputPartitions,
    /// Partitions under these partition path prefixes (static `PARTITION (...)` specs).
    Prefixes(Vec<String>),
}

/// What an INSERT does with keys that already exist (`hoodie.datasource.insert.dup.policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DupPolicy {
    /// Keep duplicates (plain insert).
    None,
    /// Drop incoming rows whose key exists.
    Drop,
    /// Fail on the first incoming key that exists.
    Fail,
}

impl DupPolicy {
    /// Parses `none`, `drop` or `fail` (case-insensitive).
    pub fn parse(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "none" => Ok(DupPolicy::None),
            "drop" => Ok(DupPolicy::Drop),
            "fail" => Ok(DupPolicy::Fail),
            _ => Err(FormatError::InvalidProperty {
                key: crate::config::INSERT_DUP_POLICY.key.into(),
                value: s.into(),
                reason: "expected none, drop or fail".into(),
            }),
        }
    }
}

/// What a write does with its rows.
#[derive(Debug, Clone, PartialEq)]
pub enum WriteKind {
    /// insert / bulk_insert into new file groups.
    Insert,
    /// A keyed write: upsert, insert with a duplicate policy, or the inserts of a bucket table.
    Upsert,
    /// A change set read from the table (UPDATE / DELETE / MERGE), its rows located by their
    /// meta columns.
    ChangeSet,
    /// INSERT OVERWRITE: a replacecommit of `scope`.
    Overwrite(OverwriteScope),
}

/// The statement a write runs for.
#[derive(Debug, Clone)]
pub enum WriteStatement {
    /// `INSERT INTO`.
    InsertInto,
    /// `INSERT OVERWRITE`; `static_prefix` is the partition path prefix of a static
    /// `PARTITION (...)` clause and `full_static` says whether it names every partition column.
    InsertOverwrite {
        /// The static partitions' path prefix.
        static_prefix: Option<String>,
        /// Whether the prefix names every partition column.
        full_static: bool,
    },
    /// `CREATE TABLE ... AS SELECT`: a bulk insert into the new table.
    CreateAsSelect,
    /// The change set of an UPDATE or MERGE (`delete: false`) or a DELETE, changing
    /// `changed_columns` (None: any).
    ChangeSet {
        /// A DELETE.
        delete: bool,
        /// The data columns it assigns.
        changed_columns: Option<Vec<String>>,
        /// A MERGE INTO whose UPDATE clauses together assign `changed_columns`, some of the
        /// data columns but not all: its updates may be logged as partial records
        /// ([`WriteSpec::partial_columns`]).
        partial_merge: bool,
    },
}

/// One write, resolved.
#[derive(Debug, Clone)]
pub struct WriteSpec {
    /// The operation the commit records.
    pub operation: WriteOperation,
    /// What the write does with its rows.
    pub kind: WriteKind,
    /// The table's ordering field.
    pub ordering_field: Option<String>,
    /// The write collapses duplicate keys of its input to the row with the greatest ordering
    /// value (ties and without an ordering field: the last): always for an upsert, for
    /// the insert-like writes only with `hoodie.combine.before.insert`.
    pub precombine: bool,
    /// How a record meets the stored one.
    pub merge_mode: MergeMode,
    /// For `insert` with a duplicate policy other than none, what to do with existing keys.
    pub insert_dup_policy: Option<DupPolicy>,
    /// Keys are unique across partitions (a global index): pre-combining and lookups go by key
    /// alone; otherwise a record is (partition path, key), as Hudi's `HoodieKey`.
    pub global_index: bool,
    /// Under a global index, an update whose partition changed moves the record.
    pub update_partition_path: bool,
    /// The table's bucket index, if it has one.
    pub bucket: Option<BucketSpec>,
    /// How base files are written and sized.
    pub files: FileSpec,
    /// The data columns a change set assigns (None: any): the others are taken from the
    /// stored rows.
    pub changed_columns: Option<Vec<String>>,
    /// A MERGE INTO on a merge-on-read table logs its updates as partial records of these data
    /// columns (an `IS_PARTIAL` block of the meta columns and these), as Hudi 1.x does where
    /// `hoodie.spark.sql.merge.into.partial.updates` allows it (no global index); only on table
    /// versions 8 and 9, which the append checks when it writes.
    pub partial_columns: Option<Vec<String>>,
    /// Whether a MERGE INTO here may log partial records, table version aside: a merge-on-read
    /// table, no global index, `hoodie.spark.sql.merge.into.partial.updates` not false (Hudi's
    /// `isPartialUpdateActionForMOR`, which also frees its UPDATE clauses from assigning the key).
    pub partial_updates: bool,
    /// The partition columns the data files leave out (`drop.partition.columns`).
    pub dropped_columns: Vec<String>,
    /// Every row is new (a bucket table's insert): routed to its bucket, never looked up.
    pub inserts_only: bool,
    /// `hoodie.spark.sql.optimized.writes.enable`: a MERGE's ON condition must match every
    /// record key column (false: a key column it leaves out comes from the source).
    pub optimized_writes: bool,
    /// Merge-on-read: what follows the write's deltacommit.
    pub compaction: InlineCompaction,
    /// A CDC-enabled table's logging: rewrites log their changes to `.cdc` files.
    pub cdc: Option<crate::write::cdc_log::CdcSpec>,
    /// How the table is cleaned after the commit.
    pub clean: crate::clean::CleanSpec,
    /// How the table's timeline is archived after the clean.
    pub archive: crate::archive::ArchiveSpec,
    /// Single writer or optimistic concurrency control.
    pub concurrency: crate::concurrency::ConcurrencySpec,
}

impl WriteSpec {
    /// The write `statement` runs into a table that sees `options`.
    pub fn resolve(options: &WriteOptions, statement: WriteStatement) -> Result<Self> {
        options.validate()?;
        // an upsert always pre-combines its input (Hudi's hoodie.combine.before.upsert); the
        // insert-like writes keep duplicate keys unless hoodie.combine.before.insert is set
        let insert_like = |mut spec: WriteSpec| {
            if spec.operation != WriteOperation::Upsert {
                spec.precombine = options.combine_before_insert();
            }
            spec
        };
        match statement {
            WriteStatement::InsertInto => insert_into(options).map(insert_like),
            WriteStatement::InsertOverwrite {
                static_prefix,
                full_static,
            } => overwrite(options, static_prefix, full_static).map(insert_like),
            WriteStatement::CreateAsSelect => {
                let mut spec = base(options, WriteOperation::BulkInsert, WriteKind::Insert)?;
                spec.precombine = false;
                Ok(spec)
            }
            WriteStatement::ChangeSet {
                delete,
                changed_columns,
                partial_merge,
            } => {
                let operation = if delete {
                    WriteOperation::DeletePrepped
                } else {
                    WriteOperation::UpsertPrepped
                };
                let mut spec = base(options, operation, WriteKind::ChangeSet)?;
                // under event-time ordering Hudi's readers merge partial records pairwise: a
                // partial winner laid over a record that lost in the log takes the loser's
                // other columns, so hoodie logs partial records under commit-time ordering only
                let partial = partial_merge
                    && spec.partial_updates
                    && spec.merge_mode == MergeMode::CommitTimeOrdering;
                spec.partial_columns = changed_columns.clone().filter(|c| partial && !c.is_empty());
                spec.changed_columns = changed_columns;
                Ok(spec)
            }
        }
    }

    /// Whether the rows are a change set located by their meta columns.
    pub fn prepped(&self) -> bool {
        self.kind == WriteKind::ChangeSet
    }

    /// The field an insert pre-combines its input by, if it does.
    pub fn precombine_field(&self) -> Option<&str> {
        self.ordering_field.as_deref().filter(|_| self.precombine)
    }
}

/// The settings every write of the table shares, for `operation` of `kind`.
fn base(options: &WriteOptions, operation: WriteOperation, kind: WriteKind) -> Result<WriteSpec> {
    let table = options.table();
    let index = options
        .get(&config::INDEX_TYPE)
        .unwrap_or_default()
        .to_ascii_uppercase();
    let update_key = if index == "GLOBAL_BLOOM" {
        config::BLOOM_INDEX_UPDATE_PARTITION_PATH
    } else {
        config::SIMPLE_INDEX_UPDATE_PARTITION_PATH
    };
    Ok(WriteSpec {
        operation,
        kind,
        ordering_field: table.ordering_field(),
        precombine: true,
        merge_mode: options.merge_mode()?,
        insert_dup_policy: None,
        global_index: global_index(&index)?,
        update_partition_path: options
            .get(&update_key)
            .is_some_and(|v| v.eq_ignore_ascii_case("true")),
        bucket: bucket_spec(options, &index)?,
        files: FileSpec::resolve(options)?,
        changed_columns: None,
        partial_columns: None,
        partial_updates: !global_index(&index)?
            && table.table_type()? == crate::TableType::MergeOnRead
            && options
                .get(&config::MERGE_INTO_PARTIAL_UPDATES)
                .is_none_or(|v| !v.eq_ignore_ascii_case("false")),
        dropped_columns: table.dropped_columns()?,
        inserts_only: false,
        optimized_writes: options
            .get(&config::SQL_OPTIMIZED_WRITES)
            .is_none_or(|v| !v.eq_ignore_ascii_case("false")),
        compaction: InlineCompaction::resolve(options)?,
        clean: crate::clean::CleanSpec::resolve(
            |k| options.get(k),
            |k| options.explicit(k).is_some(),
        )?,
        archive: crate::archive::ArchiveSpec::resolve(
            |k| options.get(k),
            table.table_type()? == crate::TableType::MergeOnRead,
        )?,
        concurrency: crate::concurrency::ConcurrencySpec::resolve(|k| options.get(k))?,
        cdc: table
            .cdc_mode()?
            .map(|mode| crate::write::cdc_log::CdcSpec {
                mode,
                table_name: table.name().to_string(),
            }),
    })
}

/// What a write to a merge-on-read table does about compaction after its deltacommit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InlineCompaction {
    /// Nothing (copy-on-write tables, `hoodie.compact.inline = false`).
    #[default]
    Off,
    /// Schedule and run a compaction once this many deltacommits followed the last one.
    Run {
        /// `hoodie.compact.inline.max.delta.commits`.
        after: usize,
    },
    /// Only schedule it (`hoodie.compact.schedule.inline`).
    Schedule {
        /// `hoodie.compact.inline.max.delta.commits`.
        after: usize,
    },
}

impl InlineCompaction {
    fn resolve(options: &WriteOptions) -> Result<Self> {
        let table = options.table();
        let explicit_on = options
            .explicit(&config::COMPACT_INLINE)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        if table.table_type()? == crate::TableType::CopyOnWrite {
            if explicit_on {
                return Err(crate::refusal::CompactionRefusal::CopyOnWrite.into());
            }
            return Ok(Self::Off);
        }
        let flag = |k: &config::ConfigKey| {
            options
                .get(k)
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
        };
        let after = options.get_usize(&config::COMPACT_INLINE_MAX_DELTA_COMMITS)?;
        let (inline, schedule) = (
            flag(&config::COMPACT_INLINE),
            flag(&config::COMPACT_SCHEDULE_INLINE),
        );
        Ok(match (inline, schedule) {
            // Hudi: setting both is an error; an explicit schedule-only wins over the default
            (true, true) if explicit_on => {
                return Err(OptionConflict::InlineCompaction {
                    run: config::COMPACT_INLINE.key,
                    schedule: config::COMPACT_SCHEDULE_INLINE.key,
                }
                .into())
            }
            (_, true) => Self::Schedule { after },
            (true, false) => Self::Run { after },
            (false, false) => Self::Off,
        })
    }
}

/// Whether the index (`hoodie.index.type`, upper case) is global; an index hoodie cannot
/// write with is an error.
fn global_index(index: &str) -> Result<bool> {
    match index {
        // INMEMORY builds its key map from the table on each write: for a single writer the
        // same tagging as SIMPLE
        "SIMPLE" | "BLOOM" | "INMEMORY" | "BUCKET" => Ok(false),
        "GLOBAL_SIMPLE" | "GLOBAL_BLOOM" => Ok(true),
        other => Err(FormatError::Unsupported {
            feature: format!("hoodie.index.type = {other} (hoodie writes with SIMPLE, BLOOM, INMEMORY, GLOBAL_SIMPLE, GLOBAL_BLOOM and BUCKET)"),
        }),
    }
}

/// The table's bucket index, if it has one (`hoodie.index.type = BUCKET`).
fn bucket_spec(options: &WriteOptions, index: &str) -> Result<Option<BucketSpec>> {
    if index != "BUCKET" {
        return Ok(None);
    }
    let engine = options.get(&config::BUCKET_ENGINE).unwrap_or_default();
    if !engine.eq_ignore_ascii_case("SIMPLE") {
        return Err(FormatError::Unsupported {
            feature: format!("hoodie.index.bucket.engine = {engine} (hoodie writes with the SIMPLE bucket engine)"),
        });
    }
    let n = options.get_usize(&config::BUCKET_NUM_BUCKETS)?;
    let spec = BucketSpec::new(
        u32::try_from(n).unwrap_or(u32::MAX),
        options.get(&config::BUCKET_HASH_FIELD).as_deref(),
        &options.table().record_key_fields(),
    )?;
    Ok(Some(spec))
}

/// The options `spec`, resolved from `options`, leaves without effect, as warnings: a
/// duplicate policy on an INSERT that runs without looking keys up (`bulk_insert`, an
/// overwrite), which Hudi ignores too.
pub fn ignored_options(options: &WriteOptions, spec: &WriteSpec) -> Vec<String> {
    let policy = options
        .get(&config::INSERT_DUP_POLICY)
        .filter(|p| !p.eq_ignore_ascii_case("none"));
    match policy {
        Some(p) if spec.insert_dup_policy.is_none() && spec.kind != WriteKind::Upsert => {
            vec![format!(
                "{} = {p} has no effect on this INSERT: it runs as {}, which writes its rows without looking up the keys the table holds (use the insert operation for the policy to apply)",
                config::INSERT_DUP_POLICY.key,
                spec.operation.java_name().to_ascii_lowercase()
            )]
        }
        _ => Vec::new(),
    }
}

/// The write an `INSERT INTO` runs, by Hudi 1.2's operation precedence.
fn insert_into(options: &WriteOptions) -> Result<WriteSpec> {
    let (mut op, why) = options.insert_into_operation()?;
    let policy = DupPolicy::parse(
        &options
            .get(&config::INSERT_DUP_POLICY)
            .unwrap_or_else(|| "none".into()),
    )?;
    // as Hudi 1.2 does: an upsert with a duplicate policy is an insert that applies the policy,
    // and an upsert into a table without a primary key (keys generated per row) an insert
    let keyless = options.table().record_key_fields().is_empty();
    if op == WriteOperation::Upsert && (policy != DupPolicy::None || keyless) {
        op = WriteOperation::Insert;
    }
    let keyed = |policy| -> Result<WriteSpec> {
        let mut spec = base(options, op, WriteKind::Upsert)?;
        spec.insert_dup_policy = policy;
        Ok(spec)
    };
    if op == WriteOperation::BulkInsert && policy == DupPolicy::Drop {
        return Err(OptionConflict::DropWithBulkInsert.into());
    }
    // a bucket table's new rows go to their buckets, whose file groups may exist: the keyed
    // write path routes them (without looking keys up)
    let bucketed = op == WriteOperation::BulkInsert
        || (op == WriteOperation::Insert && policy == DupPolicy::None);
    if bucketed && base(options, op, WriteKind::Upsert)?.bucket.is_some() {
        let mut spec = keyed(None)?;
        spec.inserts_only = true;
        return Ok(spec);
    }
    match op {
        WriteOperation::BulkInsert => base(options, op, WriteKind::Insert),
        WriteOperation::Insert if policy == DupPolicy::None => base(options, op, WriteKind::Insert),
        WriteOperation::Insert => keyed(Some(policy)),
        WriteOperation::Upsert => keyed(None),
        WriteOperation::InsertOverwrite => overwrite(options, None, false),
        WriteOperation::InsertOverwriteTable => {
            base(options, op, WriteKind::Overwrite(OverwriteScope::Table))
        }
        WriteOperation::Delete
        | WriteOperation::DeletePrepped
        | WriteOperation::UpsertPrepped
        | WriteOperation::DeletePartition
        | WriteOperation::AlterSchema => Err(OptionConflict::InsertOperation {
            operation: op.java_name().to_ascii_lowercase(),
            why: why.to_string(),
        }
        .into()),
    }
}

/// The write an `INSERT OVERWRITE` runs.
fn overwrite(
    options: &WriteOptions,
    static_prefix: Option<String>,
    full_static: bool,
) -> Result<WriteSpec> {
    let table = |_: ()| {
        base(
            options,
            WriteOperation::InsertOverwriteTable,
            WriteKind::Overwrite(OverwriteScope::Table),
        )
    };
    let partitions = |scope| {
        base(
            options,
            WriteOperation::InsertOverwrite,
            WriteKind::Overwrite(scope),
        )
    };
    if !options.table().is_partitioned() {
        return table(());
    }
    let dynamic_scope = |prefix: Option<String>| match prefix {
        Some(p) if full_static => OverwriteScope::Prefixes(vec![p]),
        _ => OverwriteScope::InputPartitions,
    };
    if let Some(op) = options.write_operation() {
        match WriteOperation::parse(&op)? {
            WriteOperation::InsertOverwriteTable => return table(()),
            WriteOperation::InsertOverwrite => {
                return partitions(match static_prefix {
                    Some(p) => OverwriteScope::Prefixes(vec![p]),
                    None => OverwriteScope::InputPartitions,
                })
            }
            _ => {}
        }
    }
    let mode = options
        .explicit(&config::OVERWRITE_MODE)
        .unwrap_or_else(|| "STATIC".into())
        .to_ascii_uppercase();
    match (mode.as_str(), static_prefix) {
        ("STATIC", Some(p)) => partitions(OverwriteScope::Prefixes(vec![p])),
        ("STATIC", None) => table(()),
        ("DYNAMIC", prefix) => partitions(dynamic_scope(prefix)),
        (other, _) => Err(OptionConflict::OverwriteMode {
            mode: other.to_string(),
        }
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TableConfig;
    use std::collections::BTreeMap;

    const KEYED: &[u8] = b"hoodie.table.name=t\nhoodie.table.type=COPY_ON_WRITE\nhoodie.table.version=6\nhoodie.timeline.layout.version=1\nhoodie.table.recordkey.fields=id\nhoodie.table.precombine.field=ts\nhoodie.table.partition.fields=dt\nhoodie.table.keygenerator.class=org.apache.hudi.keygen.SimpleKeyGenerator\nhoodie.datasource.write.hive_style_partitioning=true\n";

    fn spec(session: &[(&str, &str)], statement: WriteStatement) -> Result<WriteSpec> {
        let table = TableConfig::parse(KEYED).unwrap();
        let session: BTreeMap<String, String> = session
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        WriteSpec::resolve(&WriteOptions::new(session, &table), statement)
    }

    #[test]
    fn insert_into_inserts_and_keeps_duplicate_keys_unless_asked_otherwise() {
        // Hudi 1.1+: a primary key and an ordering field no longer make INSERT INTO an upsert
        let s = spec(&[], WriteStatement::InsertInto).unwrap();
        assert_eq!(s.operation, WriteOperation::Insert);
        assert_eq!(s.kind, WriteKind::Insert);
        assert_eq!(s.ordering_field.as_deref(), Some("ts"));
        assert_eq!(s.precombine_field(), None);
        assert_eq!(s.merge_mode, MergeMode::EventTimeOrdering);
        assert_eq!(s.files, FileSpec::default());
        // the legacy insert mode upsert no longer upserts
        let legacy = spec(
            &[("hoodie.sql.insert.mode", "upsert")],
            WriteStatement::InsertInto,
        );
        assert_eq!(legacy.unwrap().operation, WriteOperation::Insert);
        let combined = spec(
            &[("hoodie.combine.before.insert", "true")],
            WriteStatement::InsertInto,
        )
        .unwrap();
        assert_eq!(
            (combined.operation, combined.precombine_field()),
            (WriteOperation::Insert, Some("ts"))
        );
        let upsert = spec(
            &[("hoodie.spark.sql.insert.into.operation", "upsert")],
            WriteStatement::InsertInto,
        )
        .unwrap();
        assert_eq!(
            (
                upsert.operation,
                upsert.kind.clone(),
                upsert.precombine_field()
            ),
            (WriteOperation::Upsert, WriteKind::Upsert, Some("ts"))
        );
        let drop = spec(
            &[("hoodie.datasource.insert.dup.policy", "drop")],
            WriteStatement::InsertInto,
        )
        .unwrap();
        assert_eq!(
            (drop.kind, drop.insert_dup_policy, drop.precombine),
            (WriteKind::Upsert, Some(DupPolicy::Drop), false)
        );
        let strict_bulk = spec(
            &[
                ("hoodie.sql.insert.mode", "strict"),
                ("hoodie.sql.bulk.insert.enable", "true"),
            ],
            WriteStatement::InsertInto,
        );
        assert!(matches!(
            strict_bulk,
            Err(FormatError::OptionConflict(
                crate::refusal::OptionConflict::StrictBulkInsert
            ))
        ));
    }

    #[test]
    fn a_bucket_tables_inserts_go_to_their_buckets_without_a_lookup() {
        let s = spec(
            &[
                ("hoodie.index.type", "BUCKET"),
                ("hoodie.bucket.index.num.buckets", "4"),
                ("hoodie.datasource.write.operation", "bulk_insert"),
            ],
            WriteStatement::InsertInto,
        )
        .unwrap();
        assert_eq!((s.kind, s.inserts_only), (WriteKind::Upsert, true));
        assert!(s.bucket.is_some());
        // as on any table, bulk_insert refuses the drop policy
        let drop = spec(
            &[
                ("hoodie.index.type", "BUCKET"),
                ("hoodie.datasource.write.operation", "bulk_insert"),
                ("hoodie.datasource.insert.dup.policy", "drop"),
            ],
            WriteStatement::InsertInto,
        );
        assert!(
            matches!(
                drop,
                Err(FormatError::OptionConflict(
                    crate::refusal::OptionConflict::DropWithBulkInsert
                ))
            ),
            "{drop:?}"
        );
    }

    #[test]
    fn overwrite_ctas_and_change_sets_resolve_their_own_operations() {
        let o = spec(
            &[],
            WriteStatement::InsertOverwrite {
                static_prefix: Some("dt=x".into()),
                full_static: true,
            },
        )
        .unwrap();
        assert_eq!(o.operation, WriteOperation::InsertOverwrite);
        assert_eq!(
            o.kind,
            WriteKind::Overwrite(OverwriteScope::Prefixes(vec!["dt=x".into()]))
        );
        let whole = spec(
            &[],
            WriteStatement::InsertOverwrite {
                static_prefix: None,
                full_static: false,
            },
        )
        .unwrap();
        assert_eq!(whole.kind, WriteKind::Overwrite(OverwriteScope::Table));
        assert_eq!(whole.precombine_field(), None);
        let ctas = spec(&[], WriteStatement::CreateAsSelect).unwrap();
        assert_eq!(
            (ctas.operation, ctas.precombine_field()),
            (WriteOperation::BulkInsert, None)
        );
        let delete = spec(
            &[],
            WriteStatement::ChangeSet {
                delete: true,
                changed_columns: None,
                partial_merge: false,
            },
        )
        .unwrap();
        assert_eq!(delete.operation, WriteOperation::DeletePrepped);
        assert!(delete.prepped());
    }

    #[test]
    fn a_merge_that_assigns_some_columns_logs_partial_records_where_hudi_does() {
        let mor = String::from_utf8(KEYED.to_vec())
            .unwrap()
            .replace("COPY_ON_WRITE", "MERGE_ON_READ");
        let resolve = |table: &str, session: &[(&str, &str)], partial_merge: bool| {
            let table = TableConfig::parse(table.as_bytes()).unwrap();
            let session = (session.iter())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let statement = WriteStatement::ChangeSet {
                delete: false,
                changed_columns: Some(vec!["v".into(), "ts".into()]),
                partial_merge,
            };
            WriteSpec::resolve(&WriteOptions::new(session, &table), statement).unwrap()
        };
        let cow = std::str::from_utf8(KEYED).unwrap();
        let ct = [("hoodie.record.merge.mode", "COMMIT_TIME_ORDERING")];
        let partial = resolve(&mor, &ct, true);
        assert!(partial.partial_updates);
        assert_eq!(partial.partial_columns, Some(vec!["v".into(), "ts".into()]));
        // an UPDATE, or a MERGE that assigns every column, is not partial; nor one under
        // event-time ordering (its partial records could take a losing record's columns)
        assert_eq!(resolve(&mor, &ct, false).partial_columns, None);
        assert_eq!(resolve(&mor, &[], true).partial_columns, None);
        // nor a copy-on-write table, the option off, or a global index
        let off = [
            ct[0],
            ("hoodie.spark.sql.merge.into.partial.updates", "false"),
        ];
        let global = [ct[0], ("hoodie.index.type", "GLOBAL_SIMPLE")];
        for (table, session) in [(cow, &ct[..]), (&mor, &off[..]), (&mor, &global[..])] {
            let s = resolve(table, session, true);
            assert!(
                !s.partial_updates && s.partial_columns.is_none(),
                "{session:?}"
            );
        }
    }

    #[test]
    fn bad_values_are_typed_errors_before_anything_is_written() {
        assert!(matches!(
            spec(
                &[("hoodie.index.type", "RECORD_INDEX")],
                WriteStatement::InsertInto
            ),
            Err(FormatError::Unsupported { .. })
        ));
        // Hudi 1.2 has no HBASE index
        assert!(matches!(
            spec(
                &[("hoodie.index.type", "HBASE")],
                WriteStatement::InsertInto
            ),
            Err(FormatError::InvalidOption(_))
        ));
        assert!(matches!(
            spec(
                &[("hoodie.parquet.max.file.size", "lots")],
                WriteStatement::InsertInto
            ),
            Err(FormatError::InvalidOption(_))
        ));
        let err = spec(
            &[("hoodie.datasource.overwrite.mode", "SOMETIMES")],
            WriteStatement::InsertOverwrite {
                static_prefix: None,
                full_static: false,
            },
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("hoodie.datasource.overwrite.mode"),
            "{err}"
        );
    }
}
