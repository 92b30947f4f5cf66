//! Several writers on one table: Hudi's optimistic concurrency control.
//!
//! Under `hoodie.write.concurrency.mode = OPTIMISTIC_CONCURRENCY_CONTROL` a write keeps a
//! heartbeat while it runs ([`heartbeat`]), so other writers roll back only the pending writes
//! whose heartbeat expired (LAZY failed-writes cleaning), and commits inside the table lock
//! ([`lock`]) after checking that no write which committed since its read touched the same
//! file groups ([`conflict`]). Single-writer mode, the default, takes every pending write for
//! failed and needs no lock.

use std::time::Duration;

use crate::config::{self, ConfigKey};
use crate::error::{FormatError, Result};

pub(crate) mod conflict;
pub(crate) mod heartbeat;
pub(crate) mod lock;

pub use conflict::ReadSnapshot;
pub use lock::TableLock;

/// What happens to the pending instants of failed writers (`hoodie.cleaner.policy.failed.writes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailedWritesPolicy {
    /// Every pending write is rolled back when a write starts.
    Eager,
    /// Only pending writes whose heartbeat expired are rolled back.
    Lazy,
    /// Pending writes are left alone.
    Never,
}

/// How the table lock is taken and kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockSpec {
    /// How long a writer waits for the lock.
    pub wait: Duration,
    /// The longest pause between two attempts.
    pub retry: Duration,
    /// Storage lock: how long a taken lock is valid without renewal.
    pub validity: Duration,
    /// Storage lock: how often the holder renews it.
    pub renew: Duration,
}

/// A write's concurrency settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConcurrencySpec {
    /// Optimistic concurrency control: commits take the lock and check for conflicts.
    pub optimistic: bool,
    /// What is done with failed writers' pending instants.
    pub failed_writes: FailedWritesPolicy,
    /// How often a heartbeat is refreshed.
    pub heartbeat_interval: Duration,
    /// A heartbeat older than this has expired.
    pub heartbeat_expiry: Duration,
    /// The table lock.
    pub lock: LockSpec,
    /// What the writer does with a metadata table it cannot keep current.
    pub metadata_table: crate::metadata_table::MetadataTableRule,
}

/// The provider class names whose locking hoodie's lock stands for.
const ACCEPTED_PROVIDERS: &[&str] = &[
    "StorageBasedLockProvider",
    "FileSystemBasedLockProvider",
    "InProcessLockProvider",
];

impl ConcurrencySpec {
    /// One writer at a time, eager rollback: hoodie's default.
    pub fn single_writer() -> Self {
        Self::resolve(|_| None).expect("the defaults are valid")
    }

    /// The settings `get` finds (session, then table properties), checked.
    pub fn resolve(get: impl Fn(&ConfigKey) -> Option<String>) -> Result<Self> {
        let value = |key: &ConfigKey| get(key).or(key.default.map(str::to_string));
        let checked = |key: &ConfigKey| -> Result<Option<String>> {
            let v = value(key);
            if let Some(v) = &v {
                key.check(v)?;
            }
            Ok(v.map(|v| v.trim().to_ascii_uppercase()))
        };
        let number = |key: &ConfigKey| -> Result<u64> {
            Ok(checked(key)?
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0))
        };
        let mode = checked(&config::WRITE_CONCURRENCY_MODE)?.unwrap_or_default();
        let optimistic = match mode.as_str() {
            "OPTIMISTIC_CONCURRENCY_CONTROL" => true,
            "NON_BLOCKING_CONCURRENCY_CONTROL" => {
                return Err(FormatError::Unsupported {
                    feature: "hoodie.write.concurrency.mode = NON_BLOCKING_CONCURRENCY_CONTROL (use OPTIMISTIC_CONCURRENCY_CONTROL)".into(),
                })
            }
            _ => false,
        };
        let failed_writes = match checked(&config::FAILED_WRITES_CLEANER_POLICY)?.as_deref() {
            Some("EAGER") if optimistic => {
                return Err(crate::refusal::OptionConflict::EagerUnderOcc.into())
            }
            Some("EAGER") => FailedWritesPolicy::Eager,
            Some("LAZY") => FailedWritesPolicy::Lazy,
            Some("NEVER") => FailedWritesPolicy::Never,
            _ if optimistic => FailedWritesPolicy::Lazy,
            _ => FailedWritesPolicy::Eager,
        };
        if let Some(provider) = get(&config::LOCK_PROVIDER) {
            let simple = provider.trim().rsplit('.').next().unwrap_or_default();
            if !ACCEPTED_PROVIDERS.contains(&simple) {
                return Err(FormatError::Unsupported {
                    feature: format!(
                        "hoodie.write.lock.provider = {provider}: hoodie locks a table with its own lock file on the table's storage; leave the key unset or name one of {}",
                        ACCEPTED_PROVIDERS.join(", ")
                    ),
                });
            }
        }
        let interval = number(&config::HEARTBEAT_INTERVAL_MS)?;
        let misses = number(&config::HEARTBEAT_TOLERABLE_MISSES)?;
        let lock = LockSpec {
            wait: Duration::from_millis(number(&config::LOCK_WAIT_TIME_MS)?),
            retry: Duration::from_millis(number(&config::LOCK_RETRY_WAIT_MS)?),
            validity: Duration::from_secs(number(&config::LOCK_VALIDITY_SECS)?),
            renew: Duration::from_secs(number(&config::LOCK_RENEW_SECS)?),
        };
        if lock.validity < lock.renew * 10 {
            return Err(crate::refusal::OptionConflict::LockValidity {
                validity_key: config::LOCK_VALIDITY_SECS.key,
                validity: lock.validity.as_secs(),
                renew_key: config::LOCK_RENEW_SECS.key,
                renew: lock.renew.as_secs(),
            }
            .into());
        }
        Ok(Self {
            optimistic,
            failed_writes,
            heartbeat_interval: Duration::from_millis(interval),
            heartbeat_expiry: Duration::from_millis(interval.saturating_mul(misses)),
            lock,
            metadata_table: crate::metadata_table::MetadataTableRule::resolve(&get)?,
        })
    }

    /// The settings a table's own properties give (writes that see no session options).
    pub fn of_table(table: &crate::table_config::TableConfig) -> Result<Self> {
        Self::resolve(|k| {
            std::iter::once(k.key)
                .chain(k.aliases.iter().copied())
                .find_map(|name| table.properties().get(name))
                .map(str::to_string)
        })
    }

    /// Whether writes keep heartbeats (LAZY failed-writes cleaning).
    pub fn heartbeats(&self) -> bool {
        self.failed_writes == FailedWritesPolicy::Lazy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(pairs: &[(&ConfigKey, &str)]) -> Result<ConcurrencySpec> {
        ConcurrencySpec::resolve(|k| {
            pairs
                .iter()
                .find(|(key, _)| key.key == k.key)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn defaults_are_single_writer_eager() {
        let s = ConcurrencySpec::single_writer();
        assert!(!s.optimistic);
        assert_eq!(s.failed_writes, FailedWritesPolicy::Eager);
        assert_eq!(s.heartbeat_expiry, Duration::from_secs(120));
    }

    #[test]
    fn optimistic_infers_lazy_and_refuses_eager() {
        let occ = (
            &config::WRITE_CONCURRENCY_MODE,
            "optimistic_concurrency_control",
        );
        let s = spec(&[occ]).unwrap();
        assert!(s.optimistic);
        assert_eq!(s.failed_writes, FailedWritesPolicy::Lazy);
        let e = spec(&[occ, (&config::FAILED_WRITES_CLEANER_POLICY, "eager")]).unwrap_err();
        assert!(e.to_string().contains("set it to LAZY"), "{e}");
        let nb = spec(&[(
            &config::WRITE_CONCURRENCY_MODE,
            "NON_BLOCKING_CONCURRENCY_CONTROL",
        )]);
        assert!(matches!(nb, Err(FormatError::Unsupported { .. })));
    }

    #[test]
    fn bad_values_are_typed_errors() {
        let e = spec(&[(&config::WRITE_CONCURRENCY_MODE, "many")]).unwrap_err();
        assert!(
            e.to_string().contains("hoodie.write.concurrency.mode"),
            "{e}"
        );
        let zk = "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider";
        let e = spec(&[(&config::LOCK_PROVIDER, zk)]).unwrap_err();
        assert!(e.to_string().contains("StorageBasedLockProvider"), "{e}");
        let e = spec(&[
            (&config::LOCK_VALIDITY_SECS, "60"),
            (&config::LOCK_RENEW_SECS, "30"),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("10x"), "{e}");
        let e = spec(&[(&config::HEARTBEAT_INTERVAL_MS, "10")]).unwrap_err();
        assert!(e.to_string().contains("at least 1000"), "{e}");
    }
}
