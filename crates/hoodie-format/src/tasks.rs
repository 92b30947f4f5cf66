//! Running a write's per-file-group work on tasks.

use std::sync::Mutex;

use tokio::task::{AbortHandle, JoinHandle};

/// A hash map with a fast non-cryptographic hasher, for the per-row maps of a write (record
/// keys of stored and incoming rows). Their keys come from the data, not from an attacker
/// who could pick colliding ones, and std's SipHash was 15% of a 10M-row upsert.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, ahash::RandomState>;

/// A hash set with the hasher of [`FastMap`].
pub(crate) type FastSet<K> = std::collections::HashSet<K, ahash::RandomState>;

use crate::error::{FormatError, Result};

/// Awaits every writer task in order and returns their results, or, once all of them have
/// finished, the first error. A failed write must not return while other tasks still write
/// files: the rollback that follows would miss them.
///
/// When the awaiting future is dropped (the statement was cancelled), the tasks not yet
/// awaited are aborted and kept in [`STOPPING`] until they have stopped: a rollback of the
/// cancelled write first waits for them ([`wait_for_stopped_writers`]), so no task writes a
/// file after the rollback deleted the write's files.
pub(crate) async fn join_writers<T>(
    handles: Vec<(String, JoinHandle<Result<T>>)>,
) -> Result<Vec<T>> {
    let mut guard = AbortOnDrop(handles.iter().map(|(_, h)| h.abort_handle()).collect());
    let mut out = Vec::with_capacity(handles.len());
    let mut first_error = None;
    for (file_group, handle) in handles {
        let result = handle.await;
        guard.0.remove(0);
        match result {
            Ok(Ok(v)) => out.push(v),
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(source) => {
                first_error.get_or_insert(FormatError::WriterTask { file_group, source });
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Writer tasks aborted by a cancelled statement that may not have stopped yet.
static STOPPING: Mutex<Vec<AbortHandle>> = Mutex::new(Vec::new());

/// The tasks of a [`join_writers`] not awaited yet; aborted when it is dropped unfinished.
struct AbortOnDrop(Vec<AbortHandle>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if self.0.is_empty() {
            return;
        }
        for task in &self.0 {
            task.abort();
        }
        let mut stopping = STOPPING.lock().unwrap_or_else(|e| e.into_inner());
        stopping.retain(|t| !t.is_finished());
        stopping.append(&mut self.0);
    }
}

/// Waits until every writer task aborted by a cancelled statement has stopped (an aborted
/// task stops at its next await point, which may be after a file it was writing is done).
pub(crate) async fn wait_for_stopped_writers() {
    loop {
        let running = {
            let mut stopping = STOPPING.lock().unwrap_or_else(|e| e.into_inner());
            stopping.retain(|t| !t.is_finished());
            !stopping.is_empty()
        };
        if !running {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

/// How many file groups are written at once: one per core.
pub(crate) fn parallelism() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    /// The error of an early task is returned only after a slower task has finished.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_error_waits_for_the_other_tasks() {
        let finished = Arc::new(AtomicBool::new(false));
        let f = finished.clone();
        let failing = tokio::spawn(async {
            Err::<u32, _>(FormatError::Unsupported {
                feature: "test".into(),
            })
        });
        let slow = tokio::spawn(async move {
            std::thread::sleep(std::time::Duration::from_millis(50));
            f.store(true, Ordering::SeqCst);
            Ok(1)
        });
        let r = join_writers(vec![("a".into(), failing), ("b".into(), slow)]).await;
        assert!(matches!(r, Err(FormatError::Unsupported { .. })));
        assert!(finished.load(Ordering::SeqCst));
    }

    /// Dropping the join (a cancelled statement) aborts the tasks, and the wait returns only
    /// once they have stopped.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_dropped_join_aborts_its_tasks() {
        let finished = Arc::new(AtomicBool::new(false));
        let f = finished.clone();
        let endless = tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
            f.store(true, Ordering::SeqCst);
            Ok(1)
        });
        let joined = join_writers(vec![("a".into(), endless)]);
        let timed_out = tokio::time::timeout(std::time::Duration::from_millis(20), joined).await;
        assert!(timed_out.is_err());
        tokio::time::timeout(
            std::time::Duration::from_secs(5),
            wait_for_stopped_writers(),
        )
        .await
        .expect("the aborted task stops");
        assert!(!finished.load(Ordering::SeqCst));
    }
}
