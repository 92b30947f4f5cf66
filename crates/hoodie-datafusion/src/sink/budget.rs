//! A write's memory: the statement's rows counted against the session's memory pool and
//! spilled through its disk manager.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use datafusion::execution::disk_manager::DiskManager;
use datafusion::execution::memory_pool::MemoryReservation;
use hoodie_format::error::FormatError;
use hoodie_format::write::{MemoryBudget, SpillFile, SpillSpace};

/// A memory pool reservation as a write's memory budget.
pub(super) struct PoolBudget {
    reservation: MemoryReservation,
    /// The most this budget takes from the pool (`usize::MAX`: what the pool grants).
    cap: AtomicUsize,
}

impl PoolBudget {
    pub(super) fn new(reservation: MemoryReservation, cap: Option<usize>) -> Self {
        Self {
            reservation,
            cap: AtomicUsize::new(cap.unwrap_or(usize::MAX)),
        }
    }

    /// From now on the pool alone decides.
    pub(super) fn lift_cap(&self) {
        self.cap.store(usize::MAX, Ordering::Relaxed);
    }
}

impl MemoryBudget for PoolBudget {
    fn try_grow(&self, bytes: usize) -> bool {
        self.reservation.size().saturating_add(bytes) <= self.cap.load(Ordering::Relaxed)
            && self.reservation.try_grow(bytes).is_ok()
    }
    fn grow(&self, bytes: usize) {
        self.reservation.grow(bytes)
    }
    fn shrink(&self, bytes: usize) {
        self.reservation.shrink(bytes.min(self.reservation.size()))
    }
}

/// Spill files from the session's disk manager.
pub(super) struct DiskSpill(pub(super) Arc<DiskManager>);

impl SpillSpace for DiskSpill {
    fn create(&self) -> hoodie_format::error::Result<SpillFile> {
        let failed = |source| FormatError::Spill {
            path: "a new temporary file of the session's disk manager".into(),
            source,
        };
        let file = self
            .0
            .create_tmp_file("HudiSink spilling the rows of a write")
            .map_err(|e| failed(std::io::Error::other(e)))?;
        let path = file.path().map(Path::to_path_buf).ok_or_else(|| {
            failed(std::io::Error::other(
                "the disk manager's spill files are not local files",
            ))
        })?;
        Ok(SpillFile::new(path, Box::new(file)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::execution::memory_pool::{GreedyMemoryPool, MemoryConsumer, MemoryPool};

    #[test]
    fn a_capped_budget_stops_at_its_cap_until_the_cap_is_lifted() {
        let pool: Arc<dyn MemoryPool> = Arc::new(GreedyMemoryPool::new(1000));
        let budget = PoolBudget::new(MemoryConsumer::new("rows").register(&pool), Some(100));
        assert!(budget.try_grow(80));
        assert!(!budget.try_grow(30), "past the cap");
        assert_eq!(pool.reserved(), 80);
        budget.lift_cap();
        assert!(budget.try_grow(30));
        assert!(!budget.try_grow(1000), "past the pool");
        budget.shrink(500);
        assert_eq!(pool.reserved(), 0);
    }
}
