//! Writer heartbeats, as Hudi keeps them: an empty file `.hoodie/.heartbeat/<instant>` that the
//! writer re-creates every `hoodie.client.heartbeat.interval_in_ms` while it runs and deletes
//! when it has committed or rolled back. Its modification time is the last beat; a write whose
//! heartbeat is older than the tolerated misses (or missing) is taken for failed.

use std::time::{Duration, SystemTime};

use object_store::ObjectStoreExt;
use tokio::task::JoinHandle;

use crate::error::{FormatError, Result};
use crate::storage::TableStorage;

/// The heartbeat file of `instant`.
pub fn heartbeat_path(instant: &str) -> String {
    format!(".hoodie/.heartbeat/{instant}")
}

/// A running heartbeat; dropping it stops the beats and leaves the file to expire (a writer
/// that fails without [`Heartbeat::stop`] is then taken for failed).
#[derive(Debug)]
pub struct Heartbeat {
    storage: TableStorage,
    instant: String,
    beats: JoinHandle<()>,
}

impl Heartbeat {
    /// Writes the first beat of `instant` and keeps beating every `interval`.
    pub async fn start(storage: &TableStorage, instant: &str, interval: Duration) -> Result<Self> {
        let path = heartbeat_path(instant);
        storage.put(&path, Vec::<u8>::new()).await?;
        let beat_storage = storage.clone();
        let beats = tokio::spawn(async move {
            loop {
                tokio::time::sleep(interval).await;
                // a missed beat is retried at the next tick; enough misses make the write fail
                let _ = beat_storage.put(&path, Vec::<u8>::new()).await;
            }
        });
        Ok(Self {
            storage: storage.clone(),
            instant: instant.to_string(),
            beats,
        })
    }

    /// Stops beating and deletes the heartbeat file (the write committed or was rolled back).
    pub async fn stop(self) -> Result<()> {
        self.beats.abort();
        self.storage.delete(&heartbeat_path(&self.instant)).await
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.beats.abort();
    }
}

/// Whether the heartbeat of `instant` is older than `expiry` (a missing file counts as
/// expired, as in Hudi).
pub async fn is_expired(storage: &TableStorage, instant: &str, expiry: Duration) -> Result<bool> {
    let path = storage.path(&heartbeat_path(instant));
    match storage.store().head(&path).await {
        Ok(meta) => {
            let last = SystemTime::from(meta.last_modified);
            Ok(SystemTime::now()
                .duration_since(last)
                .is_ok_and(|age| age > expiry))
        }
        Err(object_store::Error::NotFound { .. }) => Ok(true),
        Err(e) => Err(FormatError::storage(&path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::memory::InMemory;
    use std::sync::Arc;

    fn storage() -> TableStorage {
        TableStorage::new(Arc::new(InMemory::new()), "t".into(), "memory://t")
    }

    #[tokio::test]
    async fn beats_until_stopped_and_missing_counts_as_expired() {
        let s = storage();
        assert!(is_expired(&s, "1", Duration::from_secs(60)).await.unwrap());
        let hb = Heartbeat::start(&s, "1", Duration::from_millis(20))
            .await
            .unwrap();
        assert!(!is_expired(&s, "1", Duration::from_secs(60)).await.unwrap());
        let first = s.store().head(&s.path(&heartbeat_path("1"))).await.unwrap();
        tokio::time::sleep(Duration::from_millis(80)).await;
        let later = s.store().head(&s.path(&heartbeat_path("1"))).await.unwrap();
        assert!(
            later.last_modified > first.last_modified,
            "the file is re-created"
        );
        hb.stop().await.unwrap();
        assert!(!s.exists(&heartbeat_path("1")).await.unwrap());
    }

    #[tokio::test]
    async fn an_old_beat_has_expired() {
        let s = storage();
        let hb = Heartbeat::start(&s, "2", Duration::from_secs(3600))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(30)).await;
        assert!(is_expired(&s, "2", Duration::from_millis(10))
            .await
            .unwrap());
        drop(hb);
        assert!(
            s.exists(&heartbeat_path("2")).await.unwrap(),
            "a dropped beat leaves its file"
        );
    }
}
