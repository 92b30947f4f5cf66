//! The session's `hoodie.*` and `spark.*` options as DataFusion config extensions.
//!
//! `SET hoodie.x = v` and `SET spark.sql.caseSensitive = true` run through DataFusion's own
//! `SET`, which stores them in the session's [`ConfigOptions`]; every provider, rule and planner
//! reads them from the `&dyn Session` (or the `ConfigOptions`) it is handed, so two sessions
//! sharing a table each see their own values. `SHOW hoodie.x` lists a key with its value or
//! default (DataFusion's `information_schema` must be on).

use std::any::Any;
use std::collections::BTreeMap;

use datafusion::common::config::{ConfigEntry, ConfigExtension, ExtensionOptions};
use datafusion::common::Result as DFResult;
use datafusion::config::ConfigOptions;
use hoodie_format::config;

/// The `hoodie.*` options of a session (DataFusion config namespace `hoodie`).
///
/// Values are kept as written and checked against their key when a write reads them, as Hudi
/// does; a key hoodie does not know is kept (Hudi passes unknown keys through) and noted in
/// [`HoodieSessionConfig::warnings`].
#[derive(Debug, Clone, Default)]
pub struct HoodieSessionConfig {
    values: BTreeMap<String, String>,
    warnings: Vec<String>,
    /// The catalog and schema the session's warehouse is registered as.
    warehouse: Option<(String, String)>,
    /// Where the warehouse is (a directory or URL), for the checks of a table's LOCATION.
    warehouse_location: Option<String>,
    /// Object-store options (object_store's key names) for the tables the session opens by
    /// location; a table's own options override them.
    storage: BTreeMap<String, String>,
}

impl HoodieSessionConfig {
    /// Records where the session's warehouse is registered (`catalog`, `schema`).
    pub fn set_warehouse(&mut self, catalog: &str, schema: &str) {
        self.warehouse = Some((catalog.to_string(), schema.to_string()));
    }

    /// Records where the session's warehouse is (its directory or URL).
    pub fn set_warehouse_location(&mut self, location: &str) {
        self.warehouse_location = Some(location.to_string());
    }

    /// Where the session's warehouse is, if it has one.
    pub fn warehouse_location(&self) -> Option<&str> {
        self.warehouse_location.as_deref()
    }

    /// The catalog and schema the session's warehouse is registered as.
    pub fn warehouse(&self) -> Option<(&str, &str)> {
        self.warehouse
            .as_ref()
            .map(|(c, s)| (c.as_str(), s.as_str()))
    }

    /// The value set for `key` (its full name, `hoodie.` included), if any.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(&canonical(key)).map(String::as_str)
    }

    /// Every value set, by full key.
    pub fn values(&self) -> &BTreeMap<String, String> {
        &self.values
    }

    /// Sets `key` (full name) to `value`.
    pub fn insert(&mut self, key: &str, value: &str) {
        let key = canonical(key);
        if config::lookup(&key).is_none() {
            let hint = match config::closest_key(&key) {
                Some(k) => format!("; did you mean {k}?"),
                None => String::new(),
            };
            self.warnings.push(format!(
                "{key} is not a key hoodie knows; it is kept but has no effect{hint}"
            ));
        }
        self.values.insert(key, value.to_string());
    }

    /// Removes `key` (full name, or a storage option); `None` removes every value (`RESET`).
    pub fn remove(&mut self, key: Option<&str>) {
        match key {
            Some(k) => {
                self.values.remove(&canonical(k));
                if let Some((store_key, _)) = hoodie_format::location::storage_option(k, "") {
                    self.storage.remove(&store_key);
                }
            }
            None => {
                self.values.clear();
                self.storage.clear();
            }
        }
    }

    /// Sets an object-store option for the tables the session opens (`key` in object_store's
    /// or Hadoop S3A's names); false if `key` configures no store.
    pub fn set_storage(&mut self, key: &str, value: &str) -> bool {
        match hoodie_format::location::storage_option(key, value) {
            Some((k, v)) => {
                self.storage.insert(k, v);
                true
            }
            None => false,
        }
    }

    /// The session's object-store options.
    pub fn storage(&self) -> &BTreeMap<String, String> {
        &self.storage
    }

    /// The warnings of the `SET`s since the last call (unknown keys, with the closest known
    /// one), for a shell to print.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    /// Adds a warning for the shell to print after the statement (a folder a DROP deleted).
    pub fn push_warning(&mut self, warning: String) {
        self.warnings.push(warning);
    }

    /// The warnings not yet taken.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

/// A key as hoodie stores it: the exact spelling of a known key or alias (DataFusion
/// lowercases unquoted `SET` names), else as written.
fn canonical(key: &str) -> String {
    config::ALL_KEYS
        .iter()
        .flat_map(|k| std::iter::once(k.key).chain(k.aliases.iter().copied()))
        .find(|k| k.eq_ignore_ascii_case(key))
        .map(str::to_string)
        .unwrap_or_else(|| key.to_string())
}

impl ExtensionOptions for HoodieSessionConfig {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn cloned(&self) -> Box<dyn ExtensionOptions> {
        Box::new(self.clone())
    }

    fn set(&mut self, key: &str, value: &str) -> DFResult<()> {
        let key = format!("{}.{key}", Self::PREFIX);
        // a value no write would take is refused now, naming the key, not at the next write
        if let Some(known) = config::lookup(&key) {
            config::check_setting(&known, value).map_err(|e| {
                datafusion::error::DataFusionError::External(Box::new(
                    crate::error::HoodieError::InvalidOption(e),
                ))
            })?;
        }
        self.insert(&key, value);
        Ok(())
    }

    fn entries(&self) -> Vec<ConfigEntry> {
        let mut entries: Vec<ConfigEntry> = config::ALL_KEYS
            .iter()
            .map(|k| ConfigEntry {
                key: k.key.to_string(),
                value: self
                    .values
                    .get(k.key)
                    .cloned()
                    .or_else(|| k.default.map(str::to_string)),
                description: k.doc,
            })
            .collect();
        entries.extend(
            self.values
                .iter()
                .filter(|(k, _)| !config::ALL_KEYS.iter().any(|c| c.key == k.as_str()))
                .map(|(k, v)| ConfigEntry {
                    key: k.clone(),
                    value: Some(v.clone()),
                    description: "not a key hoodie knows: kept, without effect",
                }),
        );
        entries
    }
}

impl ConfigExtension for HoodieSessionConfig {
    const PREFIX: &'static str = "hoodie";
}

/// Spark SQL's `spark.*` options a Hudi user sets (config namespace `spark`); hoodie reads
/// `spark.sql.caseSensitive`, others are kept.
#[derive(Debug, Clone, Default)]
pub struct SparkSessionConfig {
    values: BTreeMap<String, String>,
}

/// Spark's switch for exact name resolution.
pub const CASE_SENSITIVE_KEY: &str = "spark.sql.caseSensitive";

impl SparkSessionConfig {
    /// The value set for `key` (full name, matched in any case: Spark's keys are camelCase
    /// and DataFusion lowercases unquoted `SET` names).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.as_str())
    }

    /// Sets `key` (full name).
    pub fn insert(&mut self, key: &str, value: &str) {
        self.remove(Some(key));
        self.values.insert(key.to_string(), value.to_string());
    }

    /// Removes `key`; `None` removes every value.
    pub fn remove(&mut self, key: Option<&str>) {
        match key {
            Some(key) => self.values.retain(|k, _| !k.eq_ignore_ascii_case(key)),
            None => self.values.clear(),
        }
    }

    /// Whether `spark.sql.caseSensitive` asks for exact name resolution.
    pub fn case_sensitive(&self) -> bool {
        self.get(CASE_SENSITIVE_KEY)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    }
}

impl ExtensionOptions for SparkSessionConfig {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }

    fn cloned(&self) -> Box<dyn ExtensionOptions> {
        Box::new(self.clone())
    }

    fn set(&mut self, key: &str, value: &str) -> DFResult<()> {
        self.insert(&format!("{}.{key}", Self::PREFIX), value);
        Ok(())
    }

    fn entries(&self) -> Vec<ConfigEntry> {
        // listed in lower case: DataFusion lowercases the name of an unquoted SHOW
        let mut entries = vec![ConfigEntry {
            key: CASE_SENSITIVE_KEY.to_ascii_lowercase(),
            value: Some(self.get(CASE_SENSITIVE_KEY).unwrap_or("false").to_string()),
            description: "Spark SQL: whether column names resolve exactly (true) or in any case",
        }];
        entries.extend(
            self.values
                .iter()
                .filter(|(k, _)| !k.eq_ignore_ascii_case(CASE_SENSITIVE_KEY))
                .map(|(k, v)| ConfigEntry {
                    key: k.clone(),
                    value: Some(v.clone()),
                    description: "a Spark option hoodie keeps without effect",
                }),
        );
        entries
    }
}

impl ConfigExtension for SparkSessionConfig {
    const PREFIX: &'static str = "spark";
}

/// The `hoodie.*` options of a session's config (none when hoodie is not installed in it),
/// with the `spark.*` values that are aliases of hoodie keys
/// (`spark.sql.sources.partitionOverwriteMode`) under their alias.
pub fn hoodie_options(options: &ConfigOptions) -> BTreeMap<String, String> {
    let mut values = options
        .extensions
        .get::<HoodieSessionConfig>()
        .map(|c| c.values.clone())
        .unwrap_or_default();
    if let Some(spark) = options.extensions.get::<SparkSessionConfig>() {
        for (k, v) in &spark.values {
            let alias = canonical(k);
            if alias != *k || config::lookup(k).is_some() {
                values.insert(alias, v.clone());
            }
        }
    }
    values
}

/// The object-store options of a session's config (`SET aws_region = ...`,
/// `HoodieOptions::with_option`, the shell's `--storage-option`), in object_store's names.
pub fn storage_options(options: &ConfigOptions) -> Vec<(String, String)> {
    options
        .extensions
        .get::<HoodieSessionConfig>()
        .map(|c| {
            c.storage
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a session's config asks for exact name resolution (`spark.sql.caseSensitive`).
pub fn case_sensitive(options: &ConfigOptions) -> bool {
    options
        .extensions
        .get::<SparkSessionConfig>()
        .is_some_and(SparkSessionConfig::case_sensitive)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> ConfigOptions {
        let mut options = ConfigOptions::new();
        options.extensions.insert(HoodieSessionConfig::default());
        options.extensions.insert(SparkSessionConfig::default());
        options
    }

    #[test]
    fn set_stores_known_keys_in_their_canonical_spelling_and_warns_of_unknown_ones() {
        let mut options = session();
        options
            .set("hoodie.datasource.write.operation", "bulk_insert")
            .unwrap();
        options.set("hoodie.no.such.key", "1").unwrap();
        let values = hoodie_options(&options);
        assert_eq!(
            values
                .get("hoodie.datasource.write.operation")
                .map(String::as_str),
            Some("bulk_insert")
        );
        let ext = options.extensions.get::<HoodieSessionConfig>().unwrap();
        assert_eq!(ext.warnings().len(), 1, "{:?}", ext.warnings());
        assert!(ext.warnings()[0].contains("hoodie.no.such.key"));
    }

    #[test]
    fn entries_list_every_known_key_with_its_value_or_default() {
        let mut options = session();
        options.set("hoodie.index.type", "GLOBAL_SIMPLE").unwrap();
        let entries = options.entries();
        let value = |k: &str| {
            entries
                .iter()
                .find(|e| e.key == k)
                .and_then(|e| e.value.clone())
        };
        assert_eq!(value("hoodie.index.type").as_deref(), Some("GLOBAL_SIMPLE"));
        assert_eq!(
            value("hoodie.bucket.index.num.buckets").as_deref(),
            Some("256")
        );
        assert_eq!(value("spark.sql.casesensitive").as_deref(), Some("false"));
    }

    #[test]
    fn spark_case_sensitivity_is_read_in_any_spelling_of_the_key() {
        let mut options = session();
        assert!(!case_sensitive(&options));
        options.set("spark.sql.casesensitive", "TRUE").unwrap();
        assert!(case_sensitive(&options));
        let copy = options.clone();
        options.set("spark.sql.caseSensitive", "false").unwrap();
        assert!(!case_sensitive(&options));
        assert!(
            case_sensitive(&copy),
            "a copy of the config keeps its own values"
        );
    }
}
