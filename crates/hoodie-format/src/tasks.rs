//! Running a write's per-file-group work on tasks.

use tokio::task::JoinHandle;

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
pub(crate) async fn join_writers<T>(
    handles: Vec<(String, JoinHandle<Result<T>>)>,
) -> Result<Vec<T>> {
    let mut out = Vec::with_capacity(handles.len());
    let mut first_error = None;
    for (file_group, handle) in handles {
        match handle.await {
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
}
