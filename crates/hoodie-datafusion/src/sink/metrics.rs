//! What a write did, reported as the sink's DataFusion metrics (`DataSink::metrics`), so that
//! `EXPLAIN ANALYZE` shows it and whoever runs the plan reads it from the plan.

use datafusion::physical_plan::metrics::{Count, ExecutionPlanMetricsSet, MetricBuilder};
use datafusion::physical_plan::ExecutionPlan;
use hoodie_format::timeline::CommitMetadata;

/// What one write did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteCounts {
    /// Records inserted.
    pub inserted: u64,
    /// Records updated (replaced or merged).
    pub updated: u64,
    /// Records deleted.
    pub deleted: u64,
    /// Incoming records dropped (an insert dup policy `drop`, or older than the stored record
    /// under event-time ordering).
    pub dropped: u64,
    /// File groups the write created.
    pub new_file_groups: u64,
    /// Existing file groups the write rewrote.
    pub rewritten_file_groups: u64,
    /// Existing file groups whose changes the write appended as a log file (merge-on-read).
    pub logged_file_groups: u64,
    /// Bytes of the files the write wrote.
    pub bytes_written: u64,
    /// Base files the index lookup considered.
    pub lookup_candidates: u64,
    /// Base files whose key column the index lookup read.
    pub lookup_files_read: u64,
}

impl WriteCounts {
    /// Rows the statement affected: inserted + updated + deleted.
    pub fn affected(&self) -> u64 {
        self.inserted + self.updated + self.deleted
    }

    /// Counts of a write that inserted `rows` into `files` new file groups.
    pub(crate) fn inserts(rows: u64, files: usize) -> Self {
        WriteCounts {
            inserted: rows,
            new_file_groups: files as u64,
            ..Default::default()
        }
    }

    /// Counts of a keyed write.
    pub(crate) fn of_upsert(r: &hoodie_format::write::UpsertResult) -> Self {
        WriteCounts {
            inserted: r.rows.inserted,
            updated: r.rows.updated,
            deleted: r.rows.deleted,
            dropped: r.rows.dropped,
            new_file_groups: r.rows.new_file_groups as u64,
            rewritten_file_groups: r.rows.rewritten_file_groups as u64,
            logged_file_groups: r.rows.logged_file_groups as u64,
            lookup_candidates: r.lookup.candidates as u64,
            lookup_files_read: r.lookup.files_read as u64,
            ..Default::default()
        }
    }

    /// The counts with the bytes the commit's write stats record.
    pub(crate) fn with_commit(mut self, commit: &CommitMetadata) -> Self {
        self.bytes_written = commit
            .partition_to_write_stats
            .values()
            .flatten()
            .map(|s| s.total_write_bytes.max(0) as u64)
            .sum();
        self
    }

    /// The counts a plan's Hudi sink reported when it ran (none if the plan writes no Hudi
    /// table or has not run), read from the plan's metrics.
    pub fn of_plan(plan: &dyn ExecutionPlan) -> Option<WriteCounts> {
        let mut found = None;
        if let Some(metrics) = plan.metrics() {
            let value = |name: &str| metrics.sum_by_name(name).map(|v| v.as_usize() as u64);
            if let Some(inserted) = value(ROWS_INSERTED) {
                let get = |name| value(name).unwrap_or(0);
                found = Some(WriteCounts {
                    inserted,
                    updated: get(ROWS_UPDATED),
                    deleted: get(ROWS_DELETED),
                    dropped: get(ROWS_DROPPED),
                    new_file_groups: get(NEW_FILE_GROUPS),
                    rewritten_file_groups: get(REWRITTEN_FILE_GROUPS),
                    logged_file_groups: get(LOGGED_FILE_GROUPS),
                    bytes_written: get(BYTES_WRITTEN),
                    lookup_candidates: get(LOOKUP_CANDIDATES),
                    lookup_files_read: get(LOOKUP_FILES_READ),
                });
            }
        }
        found.or_else(|| {
            plan.children()
                .into_iter()
                .find_map(|c| WriteCounts::of_plan(c.as_ref()))
        })
    }
}

/// Metric: records inserted.
pub const ROWS_INSERTED: &str = "rows_inserted";
/// Metric: records updated.
pub const ROWS_UPDATED: &str = "rows_updated";
/// Metric: records deleted.
pub const ROWS_DELETED: &str = "rows_deleted";
/// Metric: incoming records dropped.
pub const ROWS_DROPPED: &str = "rows_dropped";
/// Metric: file groups created.
pub const NEW_FILE_GROUPS: &str = "file_groups_new";
/// Metric: file groups rewritten.
pub const REWRITTEN_FILE_GROUPS: &str = "file_groups_rewritten";
/// Metric: file groups given a new log file.
pub const LOGGED_FILE_GROUPS: &str = "file_groups_logged";
/// Metric: bytes written.
pub const BYTES_WRITTEN: &str = "bytes_written";
/// Metric: base files the index lookup considered.
pub const LOOKUP_CANDIDATES: &str = "lookup_candidate_files";
/// Metric: base files whose keys the index lookup read.
pub const LOOKUP_FILES_READ: &str = "lookup_files_read";

/// The counters of a sink.
#[derive(Debug)]
pub(crate) struct WriteMetrics {
    set: ExecutionPlanMetricsSet,
    counters: Vec<(&'static str, Count)>,
}

impl WriteMetrics {
    pub(crate) fn new() -> Self {
        let set = ExecutionPlanMetricsSet::new();
        let counters = [
            ROWS_INSERTED,
            ROWS_UPDATED,
            ROWS_DELETED,
            ROWS_DROPPED,
            NEW_FILE_GROUPS,
            REWRITTEN_FILE_GROUPS,
            LOGGED_FILE_GROUPS,
            BYTES_WRITTEN,
            LOOKUP_CANDIDATES,
            LOOKUP_FILES_READ,
        ]
        .into_iter()
        .map(|name| (name, MetricBuilder::new(&set).global_counter(name)))
        .collect();
        Self { set, counters }
    }

    /// Adds what a write did.
    pub(crate) fn record(&self, c: &WriteCounts) {
        for (name, counter) in &self.counters {
            let v = match *name {
                ROWS_INSERTED => c.inserted,
                ROWS_UPDATED => c.updated,
                ROWS_DELETED => c.deleted,
                ROWS_DROPPED => c.dropped,
                NEW_FILE_GROUPS => c.new_file_groups,
                REWRITTEN_FILE_GROUPS => c.rewritten_file_groups,
                LOGGED_FILE_GROUPS => c.logged_file_groups,
                BYTES_WRITTEN => c.bytes_written,
                LOOKUP_CANDIDATES => c.lookup_candidates,
                _ => c.lookup_files_read,
            };
            counter.add(v as usize);
        }
    }

    pub(crate) fn set(&self) -> &ExecutionPlanMetricsSet {
        &self.set
    }
}
