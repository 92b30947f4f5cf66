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
    /// `hoodie.datasource.write.operation` > `hoodie.spark.sql.insert.into.operation` > the legacy
    /// `hoodie.sql.insert.mode` (+ `hoodie.sql.bulk.insert.enable`) > deduction (primary key +
    /// ordering field under event-time ordering: upsert; otherwise insert).
    pub fn insert_into_operation(&self) -> Result<(WriteOperation, &'static str)> {
        self.validate()?;
        let has_pk = !self.table.record_key_fields().is_empty();
        if let Some(op) = self.explicit(&config::WRITE_OPERATION) {
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
        if let Some(mode) = self.explicit(&config::SQL_INSERT_MODE) {
            let bulk = self.flag(&config::SQL_BULK_INSERT_ENABLE);
            return match mode.to_ascii_lowercase().as_str() {
                "strict" if bulk && has_pk => Err(FormatError::WriteRefused {
                    reason: "Table with primaryKey can not use bulk insert in strict mode.".into(),
                }),
                _ if bulk => Ok((WriteOperation::BulkInsert, "hoodie.sql.bulk.insert.enable")),
                "upsert" => Ok((WriteOperation::Upsert, "hoodie.sql.insert.mode = upsert")),
                "strict" | "non-strict" => Ok((WriteOperation::Insert, "hoodie.sql.insert.mode")),
                other => Err(FormatError::WriteRefused {
                    reason: format!("hoodie.sql.insert.mode must be upsert, strict or non-strict, got {other:?}"),
                }),
            };
        }
        if self.flag(&config::SQL_BULK_INSERT_ENABLE) {
            return Ok((WriteOperation::BulkInsert, "hoodie.sql.bulk.insert.enable"));
        }
        let event_time = self.merge_mode()? == MergeMode::EventTimeOrdering;
        if has_pk && self.table.ordering_field().is_some() && event_time {
            return Ok((
                WriteOperation::Upsert,
                "primary key + ordering field under EVENT_TIME_ORDERING",
            ));
        }
        Ok((WriteOperation::Insert, "default"))
    }

    /// The merge mode: an explicit `hoodie.record.merge.mode`, else the table's.
    pub fn merge_mode(&self) -> Result<MergeMode> {
        if let Some(m) = self.explicit(&config::RECORD_MERGE_MODE) {
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
