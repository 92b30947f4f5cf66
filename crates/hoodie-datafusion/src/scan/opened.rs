//! What opening a table read to learn its schema: the listing of its timeline and the footer
//! of its newest base file. A table is opened while the statement that first names it is
//! planned (by the warehouse catalog or the table factory), so that open is part of the
//! statement: its scan, or its write when it has no scan, starts from the same listing and
//! finds the footer in the session's cache instead of listing and reading them again.

use std::sync::{Arc, Mutex};

use arrow::datatypes::SchemaRef;
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::parquet::file::metadata::ParquetMetaData;
use hoodie_format::footer::FooterCache;
use hoodie_format::timeline::Timeline;
use hoodie_format::write::LISTING_REUSE_AGE;
use hoodie_format::HudiTable;
use object_store::path::Path;

use crate::error::HoodieError;

/// The slot for what a table's open read, taken by the first statement that plans a read or a
/// write of the table. Clones (the views made of a provider) share it.
#[derive(Debug, Clone, Default)]
pub(crate) struct OpenRead(Arc<Mutex<Option<Opened>>>);

/// The open's listing of the timeline and the footers it read.
#[derive(Debug)]
pub(crate) struct Opened {
    timeline: Timeline,
    footers: Arc<KeptFooters>,
}

impl OpenRead {
    /// Lists `table` and reads its schema, keeping the listing and the footers read for the
    /// statement being planned.
    pub(crate) async fn open(table: &HudiTable) -> Result<(Self, SchemaRef), HoodieError> {
        let footers = Arc::new(KeptFooters::default());
        let reading = table.with_footer_cache(footers.clone());
        let timeline = reading.timeline().await?;
        let slices = match reading.file_slices(&timeline, None).await {
            Ok(slices) => slices,
            // a table missing a data file still opens, its schema from its commits, so that
            // its timeline can be shown and rolled back; reads and writes of it, which list
            // it again, fail with the missing file
            Err(hoodie_format::FormatError::MissingDataFile(_)) => Vec::new(),
            Err(e) => return Err(e.into()),
        };
        let schema = reading.schema(&timeline, &slices).await?;
        let opened = Opened { timeline, footers };
        Ok((Self(Arc::new(Mutex::new(Some(opened)))), schema))
    }

    /// What the open read, if no statement has taken it yet.
    pub(crate) fn take(&self) -> Option<Opened> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    /// The open's listing of `table`'s timeline, if a statement may still start from it (its
    /// footers go to `runtime`'s cache either way: base files never change).
    pub(crate) fn take_timeline(
        &self,
        table: &HudiTable,
        runtime: &RuntimeEnv,
    ) -> Option<Timeline> {
        let opened = self.take()?;
        opened.hand_over(runtime);
        opened.timeline_if_current(table)
    }
}

impl Opened {
    /// Puts the footers the open read into `runtime`'s file metadata cache.
    pub(crate) fn hand_over(&self, runtime: &RuntimeEnv) {
        let session = super::footers::session_footers(runtime);
        for (path, size, meta) in self.footers.drain() {
            session.put(&path, size, meta);
        }
    }

    /// The listing, while it can stand for a new one: listed moments ago, with nothing
    /// written under `.hoodie/` by this process since and no instant pending then (the rule a
    /// statement's write follows for its scan's listing). A plan kept and run later lists.
    pub(crate) fn timeline_if_current(&self, table: &HudiTable) -> Option<Timeline> {
        self.timeline
            .is_current(table.storage(), LISTING_REUSE_AGE)
            .then(|| self.timeline.clone())
    }
}

/// Footers read while a table was opened, kept until a statement hands them to its session.
#[derive(Debug, Default)]
pub(crate) struct KeptFooters(Mutex<Vec<(Path, u64, Arc<ParquetMetaData>)>>);

impl KeptFooters {
    fn drain(&self) -> Vec<(Path, u64, Arc<ParquetMetaData>)> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl FooterCache for KeptFooters {
    fn get(&self, path: &Path) -> Option<(u64, Arc<ParquetMetaData>)> {
        let kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter()
            .find(|(p, _, _)| p == path)
            .map(|(_, size, meta)| (*size, meta.clone()))
    }

    fn put(&self, path: &Path, size: u64, meta: Arc<ParquetMetaData>) {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        kept.retain(|(p, _, _)| p != path);
        kept.push((path.clone(), size, meta));
    }
}
