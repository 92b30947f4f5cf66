//! The table lock of optimistic concurrency control.
//!
//! On an object store it is Hudi 1.1's storage lock: `.hoodie/.locks/table_lock.json` holding
//! `{"expired": false, "validUntil": <epoch ms>, "owner": "<uuid>"}`, taken by a conditional
//! write (create-if-absent, or if-unchanged over an expired lock), renewed by the holder every
//! renewal interval, and released by writing `"expired": true`; a holder that dies leaves a lock
//! the next writer takes over once it is no longer valid. On the local file system, where no
//! object store can write if-unchanged, it is an OS file lock on `.hoodie/.locks/table_lock`,
//! which the OS releases when its process ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use object_store::UpdateVersion;
use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

use super::LockSpec;
use crate::error::{FormatError, Result};
use crate::storage::{ConditionalPut, TableStorage};

/// The storage lock file, relative to the table.
pub const LOCK_FILE: &str = ".hoodie/.locks/table_lock.json";
/// The OS lock file on local disk, relative to the table.
pub const LOCAL_LOCK_FILE: &str = ".hoodie/.locks/table_lock";
/// A lock is still taken this long past its `validUntil` (Hudi's clock drift allowance).
const CLOCK_DRIFT: Duration = Duration::from_millis(500);

/// The storage lock file's content, as Hudi's `StorageLockData`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
struct LockData {
    expired: bool,
    #[serde(rename = "validUntil")]
    valid_until: u64,
    owner: String,
}

impl LockData {
    fn is_valid(&self, now_ms: u64) -> bool {
        !self.expired && now_ms <= self.valid_until + CLOCK_DRIFT.as_millis() as u64
    }

    fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A held table lock; [`TableLock::release`] gives it back (dropping it releases an OS lock
/// at once and leaves a storage lock to expire).
#[derive(Debug)]
pub struct TableLock {
    held: Held,
}

#[derive(Debug)]
enum Held {
    Os(std::fs::File),
    Storage(StorageLock),
}

#[derive(Debug)]
struct StorageLock {
    storage: TableStorage,
    data: LockData,
    version: Arc<Mutex<UpdateVersion>>,
    lost: Arc<AtomicBool>,
    renewal: JoinHandle<()>,
}

impl TableLock {
    /// Takes the lock of the table in `storage`, waiting up to `spec.wait`.
    pub async fn acquire(storage: &TableStorage, spec: &LockSpec) -> Result<Self> {
        let held = match storage.local_dir() {
            Some(dir) => Held::Os(os_lock(&dir.join(LOCAL_LOCK_FILE), spec).await?),
            None => Held::Storage(storage_lock(storage, spec).await?),
        };
        Ok(Self { held })
    }

    /// Whether the lock is still this writer's (a storage lock whose renewal failed was lost).
    pub fn check_held(&self) -> Result<()> {
        match &self.held {
            Held::Storage(s) if s.lost.load(Ordering::SeqCst) => Err(FormatError::LockLost {
                lock: s.storage.path(LOCK_FILE).to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// Gives the lock back.
    pub async fn release(self) -> Result<()> {
        match self.held {
            Held::Os(file) => {
                drop(file);
                Ok(())
            }
            Held::Storage(s) => {
                s.renewal.abort();
                let version = s.version.lock().await.clone();
                let data = LockData {
                    expired: true,
                    ..s.data
                };
                // Lost: another writer took the lock over; it is not ours to release
                s.storage
                    .put_conditional(LOCK_FILE, data.to_json(), Some(&version))
                    .await
                    .map(|_| ())
            }
        }
    }
}

/// Waits for the OS lock on `path`.
async fn os_lock(path: &std::path::Path, spec: &LockSpec) -> Result<std::fs::File> {
    let io = |e: std::io::Error| FormatError::LockFile {
        path: path.display().to_string(),
        reason: e.to_string(),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(io)?;
    let started = Instant::now();
    let mut pause = first_pause(spec);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => return Err(io(e)),
        }
        if started.elapsed() >= spec.wait {
            return Err(FormatError::LockTimeout {
                lock: path.display().to_string(),
                holder: "another process".into(),
                waited_ms: started.elapsed().as_millis() as u64,
            });
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(spec.retry);
    }
}

fn first_pause(spec: &LockSpec) -> Duration {
    (spec.retry / 10).max(Duration::from_millis(5))
}

/// Waits for the storage lock of `storage`.
async fn storage_lock(storage: &TableStorage, spec: &LockSpec) -> Result<StorageLock> {
    let owner = uuid::Uuid::new_v4().to_string();
    let started = Instant::now();
    let mut pause = first_pause(spec);
    loop {
        let current = storage.get_versioned(LOCK_FILE).await?;
        let expected = match &current {
            None => None,
            Some((bytes, version)) => match serde_json::from_slice::<LockData>(bytes) {
                Ok(d) if d.is_valid(now_ms()) => {
                    if started.elapsed() >= spec.wait {
                        return Err(FormatError::LockTimeout {
                            lock: storage.path(LOCK_FILE).to_string(),
                            holder: d.owner,
                            waited_ms: started.elapsed().as_millis() as u64,
                        });
                    }
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(spec.retry);
                    continue;
                }
                // expired, or not a lock file hoodie can read: taken over if unchanged
                _ => Some(version.clone()),
            },
        };
        let data = LockData {
            expired: false,
            valid_until: now_ms() + spec.validity.as_millis() as u64,
            owner: owner.clone(),
        };
        match storage
            .put_conditional(LOCK_FILE, data.to_json(), expected.as_ref())
            .await?
        {
            ConditionalPut::Written(version) => {
                return Ok(start_renewal(storage, data, version, spec))
            }
            ConditionalPut::Lost => continue,
        }
    }
}

/// The held lock, renewed every `spec.renew` until released.
fn start_renewal(
    storage: &TableStorage,
    data: LockData,
    version: UpdateVersion,
    spec: &LockSpec,
) -> StorageLock {
    let version = Arc::new(Mutex::new(version));
    let lost = Arc::new(AtomicBool::new(false));
    let (s, v, l, d, renew, validity) = (
        storage.clone(),
        version.clone(),
        lost.clone(),
        data.clone(),
        spec.renew,
        spec.validity,
    );
    let renewal = tokio::spawn(async move {
        loop {
            tokio::time::sleep(renew).await;
            let mut current = v.lock().await;
            let next = LockData {
                valid_until: now_ms() + validity.as_millis() as u64,
                ..d.clone()
            };
            match s
                .put_conditional(LOCK_FILE, next.to_json(), Some(&current))
                .await
            {
                Ok(ConditionalPut::Written(nv)) => *current = nv,
                Ok(ConditionalPut::Lost) => {
                    l.store(true, Ordering::SeqCst);
                    return;
                }
                // retried at the next tick, while the lock is still valid
                Err(_) => {}
            }
        }
    });
    StorageLock {
        storage: storage.clone(),
        data,
        version,
        lost,
        renewal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;

    fn spec(wait_ms: u64) -> LockSpec {
        LockSpec {
            wait: Duration::from_millis(wait_ms),
            retry: Duration::from_millis(20),
            validity: Duration::from_secs(300),
            renew: Duration::from_secs(30),
        }
    }

    fn memory() -> TableStorage {
        TableStorage::new(Arc::new(InMemory::new()), "t".into(), "memory://t")
    }

    async fn lock_data(s: &TableStorage) -> LockData {
        serde_json::from_slice(&s.get(LOCK_FILE).await.unwrap()).unwrap()
    }

    #[tokio::test]
    async fn storage_lock_excludes_until_released() {
        let s = memory();
        let a = TableLock::acquire(&s, &spec(50)).await.unwrap();
        let held = lock_data(&s).await;
        assert!(!held.expired && held.valid_until > now_ms());
        let e = TableLock::acquire(&s, &spec(50)).await.unwrap_err();
        assert!(matches!(e, FormatError::LockTimeout { .. }), "{e}");
        assert!(e.to_string().contains(&held.owner), "{e}");
        a.release().await.unwrap();
        assert!(lock_data(&s).await.expired, "release writes expired: true");
        let b = TableLock::acquire(&s, &spec(50)).await.unwrap();
        assert_ne!(lock_data(&s).await.owner, held.owner);
        b.release().await.unwrap();
    }

    #[tokio::test]
    async fn a_dead_holders_lock_is_taken_over_once_invalid() {
        let s = memory();
        let dead = LockData {
            expired: false,
            valid_until: now_ms() - 1_000,
            owner: "dead".into(),
        };
        s.put(LOCK_FILE, dead.to_json()).await.unwrap();
        let l = TableLock::acquire(&s, &spec(50)).await.unwrap();
        assert_ne!(lock_data(&s).await.owner, "dead");
        l.release().await.unwrap();
    }

    #[tokio::test]
    async fn renewal_extends_and_a_takeover_is_noticed() {
        let s = memory();
        let mut sp = spec(50);
        sp.renew = Duration::from_millis(20);
        let l = TableLock::acquire(&s, &sp).await.unwrap();
        let first = lock_data(&s).await.valid_until;
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert!(lock_data(&s).await.valid_until > first, "renewed");
        l.check_held().unwrap();
        // another writer overwrites the lock: the next renewal finds it changed
        let other = LockData {
            expired: false,
            valid_until: now_ms() + 60_000,
            owner: "other".into(),
        };
        s.put(LOCK_FILE, other.to_json()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert!(l.check_held().is_err());
        l.release().await.unwrap();
        assert_eq!(
            lock_data(&s).await.owner,
            "other",
            "a lost lock is not released"
        );
    }

    #[tokio::test]
    async fn os_lock_excludes_until_dropped() {
        let dir = std::env::temp_dir().join(format!("hoodie-lock-{}", uuid::Uuid::new_v4()));
        let s = TableStorage::local(&dir).unwrap();
        let a = TableLock::acquire(&s, &spec(50)).await.unwrap();
        let e = TableLock::acquire(&s, &spec(50)).await.unwrap_err();
        assert!(matches!(e, FormatError::LockTimeout { .. }), "{e}");
        a.release().await.unwrap();
        TableLock::acquire(&s, &spec(50))
            .await
            .unwrap()
            .release()
            .await
            .unwrap();
        let _ = std::fs::remove_dir_all(dir);
    }
}
