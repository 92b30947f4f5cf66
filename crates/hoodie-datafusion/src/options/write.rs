//! [`SessionOptions`]: the `hoodie.*` options of the session a statement runs in, the first
//! layer of the [`WriteOptions`] a write sees.

use std::collections::BTreeMap;

use datafusion::catalog::Session;
use datafusion::config::ConfigOptions;

pub use hoodie_format::write::WriteOptions;

/// The `hoodie.*` options a statement sees: a snapshot of its session's config, taken from
/// the `&dyn Session` (or `ConfigOptions`) DataFusion hands a provider, rule or planner.
#[derive(Debug, Clone, Default)]
pub struct SessionOptions {
    values: BTreeMap<String, String>,
}

impl SessionOptions {
    /// The options of a session's config.
    pub fn of(config: &ConfigOptions) -> Self {
        Self {
            values: super::session::hoodie_options(config),
        }
    }

    /// The options of `session`.
    pub fn of_session(session: &dyn Session) -> Self {
        Self::of(session.config_options())
    }

    /// Options from explicit values (tests, tools).
    pub fn from_values(values: BTreeMap<String, String>) -> Self {
        Self { values }
    }

    /// The value of an option.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// All options set.
    pub fn all(&self) -> &BTreeMap<String, String> {
        &self.values
    }
}
