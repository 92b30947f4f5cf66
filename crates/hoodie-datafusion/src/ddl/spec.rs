//! Creating Hudi tables from SQL: table properties from `TBLPROPERTIES`/`OPTIONS`, validation,
//! and the `hoodie.properties` of a new table.

use std::sync::Arc;

use datafusion::arrow::datatypes::{Schema, SchemaRef};
use hoodie_format::config;
use hoodie_format::new_table::NewTable;
use hoodie_format::properties::Properties;
use hoodie_format::schema::is_meta_column;
use hoodie_format::table_config::{MergeMode, TableType};
use hoodie_format::TableConfig;

use crate::error::{DdlError, HoodieError, Result};

/// What a CREATE statement asks for.
#[derive(Debug, Clone)]
pub struct TableSpec {
    /// Table name.
    pub name: String,
    /// Data columns (no meta columns), in declaration order.
    pub columns: SchemaRef,
    /// Partition columns.
    pub partition_by: Vec<String>,
    /// Options as written (`primaryKey`, `type`, any `hoodie.*` key, ...).
    pub options: Vec<(String, String)>,
}

fn find_column(schema: &Schema, name: &str) -> Option<String> {
    schema
        .fields()
        .iter()
        .find(|f| f.name().eq_ignore_ascii_case(name))
        .map(|f| f.name().clone())
}

impl TableSpec {
    /// This definition with the session's `hoodie.write.table.version` (a `SET`) as the
    /// version to create, unless the definition sets its own.
    pub fn with_session(mut self, session: &datafusion::config::ConfigOptions) -> Self {
        let values = crate::options::session::hoodie_options(session);
        if let Some(v) = values.get(config::WRITE_TABLE_VERSION.key) {
            // first: the definition's own options come later and win
            self.options
                .insert(0, (config::WRITE_TABLE_VERSION.key.to_string(), v.clone()));
        }
        self
    }

    fn option(&self, key: &config::ConfigKey) -> Option<String> {
        self.options.iter().rev().find_map(|(k, v)| {
            let matches = config::lookup(k).is_some_and(|c| c == *key);
            matches.then(|| v.clone())
        })
    }

    fn column_list(&self) -> String {
        self.columns
            .fields()
            .iter()
            .map(|f| f.name().as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn resolve(&self, role: &'static str, names: &[String]) -> Result<Vec<String>> {
        names
            .iter()
            .map(|n| {
                let top = n.split('.').next().unwrap_or(n);
                find_column(&self.columns, top)
                    .map(|c| {
                        if n.contains('.') {
                            format!("{c}{}", &n[top.len()..])
                        } else {
                            c
                        }
                    })
                    .ok_or_else(|| HoodieError::UnknownColumn {
                        role,
                        column: n.clone(),
                        table: self.name.clone(),
                        columns: self.column_list(),
                    })
            })
            .collect()
    }

    /// The data schema with partition columns moved last (Hudi's column order).
    pub fn ordered_columns(&self) -> Result<SchemaRef> {
        let parts = self.resolve("partition", &self.partition_by)?;
        let mut fields: Vec<_> = self
            .columns
            .fields()
            .iter()
            .filter(|f| !parts.contains(f.name()))
            .cloned()
            .collect();
        for p in &parts {
            fields.push(
                self.columns
                    .field_with_name(p)
                    .map_err(HoodieError::Arrow)?
                    .clone()
                    .into(),
            );
        }
        Ok(Arc::new(Schema::new(fields)))
    }

    /// The `hoodie.properties` of the new table.
    pub fn table_config(&self) -> Result<TableConfig> {
        if let Some(f) = self
            .columns
            .fields()
            .iter()
            .find(|f| is_meta_column(f.name()))
        {
            return Err(DdlError::MetaColumnDeclared {
                column: f.name().clone(),
            }
            .into());
        }
        let split = |s: Option<String>| -> Vec<String> {
            s.map(|s| {
                s.split(',')
                    .map(|x| x.trim().to_string())
                    .filter(|x| !x.is_empty())
                    .collect()
            })
            .unwrap_or_default()
        };
        let keys = self.resolve(
            "primaryKey",
            &split(self.option(&config::RECORD_KEY_FIELDS)),
        )?;
        let ordering = self.resolve(
            "preCombineField",
            &split(self.option(&config::ORDERING_FIELDS)),
        )?;
        if ordering.len() > 1 {
            return Err(HoodieError::Unsupported {
                feature: "more than one ordering field".into(),
            });
        }
        if self
            .option(&config::INDEX_TYPE)
            .is_some_and(|i| i.eq_ignore_ascii_case("BUCKET"))
        {
            // the hash fields must be key fields: refused here rather than at the first write
            let hash = self.option(&config::BUCKET_HASH_FIELD);
            hoodie_format::new_table::check_bucket_hash_fields(hash.as_deref(), &keys)?;
        }
        let mut partitions = self.resolve("partition", &self.partition_by)?;
        if partitions.is_empty() {
            partitions =
                self.resolve("partition", &split(self.option(&config::PARTITION_FIELDS)))?;
        }
        let table_type = TableType::parse(
            &self
                .option(&config::TABLE_TYPE)
                .unwrap_or_else(|| "cow".into()),
        )?;
        let merge_mode = match (
            self.option(&config::RECORD_MERGE_MODE),
            self.option(&config::PAYLOAD_CLASS),
        ) {
            (Some(m), _) => MergeMode::parse(&m)?,
            (None, Some(payload)) => MergeMode::of_payload(&payload)?,
            (None, None) if !ordering.is_empty() => MergeMode::EventTimeOrdering,
            (None, None) => MergeMode::CommitTimeOrdering,
        };
        let new = NewTable {
            name: self.name.clone(),
            table_type,
            record_keys: keys,
            ordering_field: ordering.into_iter().next(),
            partition_fields: partitions,
            key_generator: self
                .option(&config::KEYGEN_CLASS)
                .or(self.option(&config::KEYGEN_TYPE)),
            merge_mode,
            columns: self.ordered_columns()?.as_ref().clone(),
            version: self.table_version()?,
        };
        let mut p = new.properties()?;
        self.keep_options(&mut p)?;
        // Hudi records the logging mode of a CDC table, its default included
        let cdc = p
            .get(config::CDC_ENABLED.key)
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        if cdc
            && p.get(config::POPULATE_META_FIELDS.key)
                .is_some_and(|v| v.eq_ignore_ascii_case("false"))
        {
            return Err(HoodieError::Unsupported {
                feature: "CDC logging (hoodie.table.cdc.enabled) on a table without meta fields (hoodie.populate.meta.fields = false)".into(),
            });
        }
        if cdc && p.get(config::CDC_LOGGING_MODE.key).is_none() {
            p.set(
                config::CDC_LOGGING_MODE.key,
                config::CDC_LOGGING_MODE
                    .default
                    .unwrap_or("DATA_BEFORE_AFTER"),
            );
        }
        Ok(TableConfig::from_properties(p)?)
    }

    /// The table version to create: `hoodie.write.table.version` (a table option, or the
    /// session's, which the caller puts first in `options`), else hoodie's default.
    fn table_version(&self) -> Result<u32> {
        let Some(v) = self.option(&config::WRITE_TABLE_VERSION) else {
            return Ok(hoodie_format::new_table::DEFAULT_VERSION);
        };
        let key = config::WRITE_TABLE_VERSION;
        key.check(&v).map_err(hoodie_format::FormatError::from)?;
        Ok(v.trim()
            .parse()
            .unwrap_or(hoodie_format::new_table::DEFAULT_VERSION))
    }

    /// Every `hoodie.*` option the table's definition does not already set, kept as a table
    /// property in `p` (writes read them from there); the CDC and index options are checked
    /// here, as Hudi checks them at CREATE.
    fn keep_options(&self, p: &mut Properties) -> Result<()> {
        let handled = [
            config::RECORD_KEY_FIELDS,
            config::ORDERING_FIELDS,
            config::PARTITION_FIELDS,
            config::TABLE_TYPE,
            config::RECORD_MERGE_MODE,
            config::KEYGEN_CLASS,
            config::KEYGEN_TYPE,
            config::TABLE_NAME,
            config::TABLE_VERSION,
            config::TIMELINE_LAYOUT_VERSION,
            // a writer's setting, as in Hudi: the table records its version, not this
            config::WRITE_TABLE_VERSION,
        ];
        for (k, v) in &self.options {
            let known = config::lookup(k);
            if known.is_some_and(|c| handled.contains(&c)) {
                continue;
            }
            if let Some(c) = known {
                // Hudi checks these at CREATE (the others at the first write)
                if c == config::CDC_ENABLED
                    || c == config::CDC_LOGGING_MODE
                    || c == config::INDEX_TYPE
                {
                    c.check(v).map_err(hoodie_format::FormatError::from)?;
                }
                if c == config::PAYLOAD_CLASS && !v.contains('.') {
                    // Java loads the class by its full name
                    p.set(c.key, format!("org.apache.hudi.common.model.{v}"));
                } else {
                    p.set(c.key, v);
                }
            } else if k.to_ascii_lowercase().starts_with("hoodie.") {
                p.set(k.clone(), v);
            } else {
                // the location's object store settings (credentials stay out of
                // hoodie.properties), or a property of the catalog's: Spark keeps any table
                // property in its catalog and none of these in hoodie.properties
                continue;
            }
        }
        Ok(())
    }
}
