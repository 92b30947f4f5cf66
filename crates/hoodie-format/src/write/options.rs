//! [`WriteOptions`]: the options a write sees, session over table properties over defaults,
//! and the operation `INSERT INTO` runs by Hudi 1.2's precedence.

use std::collections::BTreeMap;

use crate::config::{self, ConfigKey};
use crate::error::{FormatError, Result};
use crate::table_config::MergeMode;
use crate::write::transaction::WriteOperation;
use crate::TableConfig;

/// Options as a write sees them: session options over table properties over defaults.
#[derive(Debug, Clone)]
pub struct WriteOptions {
    session: BTreeMap<String, String>,
    table: TableConfig,
}

impl WriteOptions {
    /// The options of a write to `table` in a session that set `session` (by full key).
    pub fn new(session: BTreeMap<String, String>, table: &TableConfig) -> Self {
        Self {
            session,
            table: table.clone(),
        }
    }

    /// The table's config.
    pub fn table(&self) -> &TableConfig {
        &self.table
    }

    /// Checks every write option this write sees (session, then table properties) against
    /// the values its key takes, so a bad value fails the statement before anything is written.
    pub fn validate(&self) -> Result<()> {
        config::check_write_options(|k| {
            self.session
                .get(k)
                .map(String::as_str)
                .or_else(|| self.table.properties().get(k))
        })
        .map_err(FormatError::from)
    }

    /// The value of `key` (or an alias), without its default.
    pub fn explicit(&self, key: &ConfigKey) -> Option<String> {
        std::iter::once(key.key)
            .chain(key.aliases.iter().copied())
            .find_map(|k| {
                self.session
                    .get(k)
                    .cloned()
                    .or_else(|| self.table.properties().get(k).map(str::to_string))
            })
    }

    /// The value of `key`, falling back to its default.
    pub fn get(&self, key: &ConfigKey) -> Option<String> {
        self.explicit(key)
            .or_else(|| key.default.map(str::to_string))
    }

    /// A whole-number option.
    pub fn get_usize(&self, key: &ConfigKey) -> Result<usize> {
        self.parsed(key)
    }

    /// A fractional option.
    pub fn get_f64(&self, key: &ConfigKey) -> Result<f64> {
        self.parsed(key)
    }

    /// A true/false option (or its default), checked: another value is an error, where
    /// Java's `Boolean.parseBoolean` would quietly read it as false.
    pub fn get_bool(&self, key: &ConfigKey) -> Result<bool> {
        let v = self.get(key).unwrap_or_default();
        key.check(&v)?;
        Ok(v.trim().eq_ignore_ascii_case("true"))
    }

    /// The value of `key` (or its default), checked against the values the key takes, parsed.
    fn parsed<T: std::str::FromStr>(&self, key: &ConfigKey) -> Result<T> {
        let v = self.get(key).unwrap_or_default();
        key.check(&v)?;
        v.trim().parse().map_err(|_| {
            FormatError::from(config::InvalidValue {
                key: key.key,
                value: v.clone(),
                allowed: key.kind.describe(),
            })
        })
    }

    fn flag(&self, key: &ConfigKey) -> bool {
        self.get(key)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }

    /// The operation of `INSERT INTO`, by Hudi 1.2's precedence:
    /// `hoodie.datasource.write.operation` (set in the session) >
    /// `hoodie.spark.sql.insert.into.operation` (session, then table) > the legacy
    /// `hoodie.sql.bulk.insert.enable` (refused with a primary key in the legacy `strict`
    /// `hoodie.sql.insert.mode`) > `insert`. Since Hudi 1.1 (apache/hudi#14052) an INSERT INTO
    /// no longer upserts a table with a primary key and an ordering field: it inserts, and keeps
    /// duplicate keys; the legacy insert mode `upsert` no longer upserts either (checked against
    /// Spark with Hudi 1.2.0).
    pub fn insert_into_operation(&self) -> Result<(WriteOperation, &'static str)> {
        self.validate()?;
        let has_pk = !self.table.record_key_fields().is_empty();
        if let Some(op) = self.write_operation() {
            return Ok((
                WriteOperation::parse(&op)?,
                "hoodie.datasource.write.operation",
            ));
        }
        if let Some(op) = self.explicit(&config::SQL_INSERT_INTO_OPERATION) {
            return Ok((
                WriteOperation::parse(&op)?,
                "hoodie.spark.sql.insert.into.operation",
            ));
        }
        let strict = self
            .explicit(&config::SQL_INSERT_MODE)
            .is_some_and(|m| m.eq_ignore_ascii_case("strict"));
        if self.flag(&config::SQL_BULK_INSERT_ENABLE) {
            if strict && has_pk {
                return Err(crate::refusal::OptionConflict::StrictBulkInsert.into());
            }
            return Ok((WriteOperation::BulkInsert, "hoodie.sql.bulk.insert.enable"));
        }
        Ok((WriteOperation::Insert, "default"))
    }

    /// `hoodie.datasource.write.operation` as the session sets it. It is an option of one
    /// write: Spark with Hudi 1.2 drops it from a CREATE TABLE's properties, so a table's
    /// properties do not choose its writes' operation.
    pub fn write_operation(&self) -> Option<String> {
        self.session_value(&config::WRITE_OPERATION)
    }

    /// Whether an insert-like write (insert, bulk_insert, insert overwrite) collapses duplicate
    /// keys of its input first: `hoodie.combine.before.insert`, off by default.
    pub fn combine_before_insert(&self) -> bool {
        self.flag(&config::COMBINE_BEFORE_INSERT)
    }

    /// The merge mode: the session's `hoodie.record.merge.mode`, else the merge mode of the
    /// session's payload class, else the table's (its recorded merge mode, as versions 8 and
    /// 9 hold it, or its payload class's).
    pub fn merge_mode(&self) -> Result<MergeMode> {
        if let Some(m) = self.session_value(&config::RECORD_MERGE_MODE) {
            return MergeMode::parse(&m);
        }
        match self.session_value(&config::PAYLOAD_CLASS) {
            Some(p) => MergeMode::of_payload(&p),
            None => self.table.merge_mode(),
        }
    }

    /// The value of `key` (or an alias) set in the session.
    fn session_value(&self, key: &ConfigKey) -> Option<String> {
        std::iter::once(key.key)
            .chain(key.aliases.iter().copied())
            .find_map(|k| self.session.get(k).cloned())
    }
}
