//! The files of one pending write, as writers add them. A write is begun once
//! ([`Transaction`](crate::write::transaction::Transaction)); any number of
//! [`FileGroupWriter`]s, in this process or in others given the write's [`WriteHandle`], add
//! file groups to it, each reporting a [`WriteStatus`]; the commit gathers them all. Both
//! travel as JSON, so a writer on another machine reports to the one that commits.

use std::collections::{BTreeMap, HashSet};

use arrow::datatypes::SchemaRef;
use serde::{Deserialize, Serialize};

use crate::error::{FormatError, Result};
use crate::file_name::{partition_metadata_text, BaseFileName, PARTITION_METADATA_FILE};
use crate::table::HudiTable;
use crate::timeline::commit_metadata::WriteStat;
use crate::write::markers::marker_dir;
use crate::write::writer::{BaseFileWriter, FileSpec};

/// What a writer needs to add files to a pending write: its table and instant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteHandle {
    /// The table's location, as [`crate::location::open_location`] opens it.
    pub location: String,
    /// The pending write's instant time.
    pub instant: String,
}

/// What one writer added to a pending write: the files it wrote and the file groups it
/// replaced. The commit metadata is the union of the statuses of every writer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WriteStatus {
    /// The instant the files belong to.
    pub instant: String,
    /// One stat per file written.
    pub stats: Vec<WriteStat>,
    /// `(partition path, file id)` of each file group the write replaces.
    pub replaced: Vec<(String, String)>,
    /// What the writer did to the rows of a keyed write's file groups.
    #[serde(default)]
    pub rows: RowCounts,
}

/// What writers did to the rows of a keyed write's file groups, summed over them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowCounts {
    /// Records inserted.
    pub inserted: u64,
    /// Records updated (replaced or merged).
    pub updated: u64,
    /// Records deleted.
    pub deleted: u64,
    /// Incoming records dropped (older than the stored record, or a delete of no record).
    pub dropped: u64,
    /// Existing file groups rewritten.
    pub rewritten_file_groups: usize,
    /// Existing file groups whose changes went to a new log file.
    pub logged_file_groups: usize,
    /// New file groups written.
    pub new_file_groups: usize,
}

impl RowCounts {
    /// Adds `other` to these counts (a writer's to the sum of a write's).
    pub fn add(&mut self, other: &RowCounts) {
        self.inserted += other.inserted;
        self.updated += other.updated;
        self.deleted += other.deleted;
        self.dropped += other.dropped;
        self.rewritten_file_groups += other.rewritten_file_groups;
        self.logged_file_groups += other.logged_file_groups;
        self.new_file_groups += other.new_file_groups;
    }
}

impl WriteStatus {
    /// This status as JSON, for a writer reporting to the process that commits.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// A status a writer reported as JSON.
    pub fn from_json(bytes: &[u8]) -> Result<Self> {
        serde_json::from_slice(bytes).map_err(|e| FormatError::Corrupt {
            path: "write status".into(),
            reason: e.to_string(),
        })
    }

    /// Adds `other` (a status of the same write) to this one.
    pub fn absorb(&mut self, other: WriteStatus) {
        self.stats.extend(other.stats);
        self.replaced.extend(other.replaced);
        self.rows.add(&other.rows);
    }
}

/// A new base file of a pending write, opened after its marker.
pub struct OpenedFile {
    /// The file's writer.
    pub writer: BaseFileWriter,
    /// The file's name.
    pub name: BaseFileName,
}

/// Writes file groups of a pending write: a marker before each file, each partition's
/// metadata file once, a stat per file. Many may run at once on one write; each reports its
/// [`WriteStatus`] to the commit.
#[derive(Debug, Clone)]
pub struct FileGroupWriter {
    table: HudiTable,
    instant: String,
    /// Partitions whose metadata file this writer has seen to.
    partitions_ready: HashSet<String>,
    status: WriteStatus,
}

impl FileGroupWriter {
    /// A writer of `handle`'s write into `table` (the table at `handle.location`).
    pub fn new(table: &HudiTable, handle: &WriteHandle) -> Self {
        Self {
            table: table.clone(),
            instant: handle.instant.clone(),
            partitions_ready: HashSet::new(),
            status: WriteStatus {
                instant: handle.instant.clone(),
                ..Default::default()
            },
        }
    }

    /// The instant time of the write.
    pub fn instant(&self) -> &str {
        &self.instant
    }

    /// The table being written.
    pub fn table(&self) -> &HudiTable {
        &self.table
    }

    /// Opens a new base file of file group `file_id` in `partition_path`, after writing its
    /// marker (and the partition's metadata file if the partition is new).
    pub async fn new_base_file(
        &mut self,
        partition_path: &str,
        file_id: &str,
        write_token: &str,
        schema: SchemaRef,
        settings: &FileSpec,
    ) -> Result<OpenedFile> {
        let storage = self.table.storage().clone();
        if self.partitions_ready.insert(partition_path.to_string()) {
            let meta = join(partition_path, PARTITION_METADATA_FILE);
            if !storage.exists(&meta).await? {
                let depth = if partition_path.is_empty() {
                    0
                } else {
                    partition_path.split('/').count()
                };
                storage
                    .put(
                        &meta,
                        partition_metadata_text(&self.instant, depth).into_bytes(),
                    )
                    .await?;
            }
        }
        let name = BaseFileName::new(file_id, write_token, &self.instant);
        let rel = join(partition_path, &name.name());
        let marker = format!("{}/{}.marker.CREATE", marker_dir(&self.instant), rel);
        storage.put(&marker, Vec::<u8>::new()).await?;
        let writer = BaseFileWriter::try_new(
            &storage,
            &rel,
            schema,
            settings,
            &self.table.config().dropped_columns()?,
        )?;
        Ok(OpenedFile { writer, name })
    }

    /// Records the statistics of a written file.
    pub fn record_stat(&mut self, stat: WriteStat) {
        self.status.stats.push(stat);
    }

    /// Notes that `partition_path` has its partition metadata (it holds file groups), so a
    /// new base file there does not look for it.
    pub(crate) fn partition_ready(&mut self, partition_path: &str) {
        self.partitions_ready.insert(partition_path.to_string());
    }

    /// Adds what a file group's write did to the rows to this writer's status.
    pub(crate) fn count_rows(&mut self, rows: &RowCounts) {
        self.status.rows.add(rows);
    }

    /// Records a file group the (replace) commit replaces.
    pub fn replace_file_group(&mut self, partition_path: &str, file_id: &str) {
        self.status
            .replaced
            .push((partition_path.to_string(), file_id.to_string()));
    }

    /// What this writer added, leaving it empty.
    pub fn take_status(&mut self) -> WriteStatus {
        std::mem::replace(
            &mut self.status,
            WriteStatus {
                instant: self.instant.clone(),
                ..Default::default()
            },
        )
    }

    /// What this writer added.
    pub fn finish(mut self) -> WriteStatus {
        self.take_status()
    }
}

/// The stats of `status` by partition path and its replaced file ids by partition, as the
/// commit metadata holds them.
pub(crate) type ByPartition = (
    BTreeMap<String, Vec<WriteStat>>,
    BTreeMap<String, Vec<String>>,
);

/// `status` grouped as the commit metadata holds it.
pub(crate) fn by_partition(status: WriteStatus) -> ByPartition {
    let mut stats: BTreeMap<String, Vec<WriteStat>> = BTreeMap::new();
    for s in status.stats {
        stats
            .entry(s.partition_path.clone().unwrap_or_default())
            .or_default()
            .push(s);
    }
    let mut replaced: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (p, id) in status.replaced {
        replaced.entry(p).or_default().push(id);
    }
    (stats, replaced)
}

fn join(partition: &str, name: &str) -> String {
    if partition.is_empty() {
        name.to_string()
    } else {
        format!("{partition}/{name}")
    }
}
