//! A routed keyed write handed out as [`FileGroupTask`]s, a wave at a time: the touched file
//! groups first, then the new ones, each wave as large as the write's memory budget lets the
//! incoming rows be gathered. This process's writer runs a wave with [`run_wave`]; an engine that
//! splits the write ships each task to any writer ([`FileGroupWriter::write_task`]) and gathers
//! the statuses into the transaction.

use super::task::TaskWork;
use super::*;
use crate::write::insert::NewGroup;
use crate::write::status::{FileGroupWriter, RowCounts};
use crate::write::WriteStatus;

/// A keyed write's routed rows, handed out as tasks in waves.
pub struct UpsertTasks {
    incoming: Incoming,
    schema: SchemaRef,
    /// The touched groups' slices (indexed by the buckets).
    slices: Vec<FileSlice>,
    buckets: std::vec::IntoIter<(usize, Bucket)>,
    /// The rows each touched group takes, in bucket order.
    sizes: Vec<usize>,
    new_groups: Vec<GroupRows>,
    keys: StringArray,
    moved: u64,
    mor: Option<MorWrite>,
    /// Touched groups handed out.
    done: usize,
    /// New groups handed out.
    new_done: usize,
    /// A wave is out: its memory comes back when the next is planned.
    in_wave: bool,
    /// What the routing counted (the lookup, dropped duplicates).
    routing: UpsertResult,
    spec: WriteSpec,
}

impl UpsertTasks {
    /// The tasks of `routed`, routed as `routing` counts, rows in `incoming`.
    pub(super) fn new(
        incoming: Incoming,
        schema: &SchemaRef,
        routed: Routed,
        routing: UpsertResult,
        spec: &WriteSpec,
    ) -> Self {
        let buckets: Vec<(usize, Bucket)> = routed.buckets.into_iter().collect();
        Self {
            incoming,
            schema: schema.clone(),
            slices: routed.slices,
            sizes: buckets.iter().map(|(_, b)| b.len()).collect(),
            buckets: buckets.into_iter(),
            new_groups: routed.new_groups,
            keys: routed.keys,
            moved: routed.moved,
            mor: routed.mor,
            done: 0,
            new_done: 0,
            in_wave: false,
            routing,
            spec: spec.clone(),
        }
    }

    /// No tasks: an empty write.
    pub(super) fn empty(incoming: Incoming, schema: &SchemaRef, spec: &WriteSpec) -> Self {
        let routed = Routed {
            slices: Vec::new(),
            buckets: BTreeMap::new(),
            new_groups: Vec::new(),
            keys: StringArray::from(Vec::<&str>::new()),
            moved: 0,
            mor: None,
        };
        Self::new(incoming, schema, routed, UpsertResult::default(), spec)
    }

    /// The next wave of tasks (`None`: every task was handed out). The previous wave's rows
    /// are given back first: its tasks must have been written (or dropped) by then.
    pub fn next_wave(&mut self) -> Result<Option<Vec<FileGroupTask>>> {
        if std::mem::take(&mut self.in_wave) {
            self.incoming.end_wave();
        }
        let wave = if self.done < self.sizes.len() {
            self.touched_wave()?
        } else if self.new_done < self.new_groups.len() {
            self.new_wave()?
        } else {
            return Ok(None);
        };
        self.in_wave = true;
        Ok(Some(wave))
    }

    fn touched_wave(&mut self) -> Result<Vec<FileGroupTask>> {
        let wave = self.incoming.plan_wave(&self.sizes, self.done)?;
        let buckets: Vec<(usize, Bucket)> = self.buckets.by_ref().take(wave).collect();
        let rows: Vec<Vec<u32>> = buckets.iter().map(|(_, b)| b.rows()).collect();
        let refs: Vec<&[u32]> = rows.iter().map(Vec::as_slice).collect();
        let last = self.done + wave == self.sizes.len() && self.new_groups.is_empty();
        let gathered = self.incoming.gather(&refs, last)?;
        let schema = self.schema.clone();
        let mut tasks = Vec::with_capacity(wave);
        for (((s, bucket), rows), pieces) in buckets.into_iter().zip(&rows).zip(gathered) {
            let incoming = match pieces.len() {
                1 => pieces.into_iter().next().expect("one piece"),
                _ => arrow::compute::concat_batches(&schema, &pieces)?,
            };
            let slice = self.slices[s].clone();
            let keys = take_keys(&self.keys, rows)?;
            let local = bucket.local(rows);
            let work = match &self.mor {
                Some(mor) if appends_to_logs(&slice, &bucket, &self.spec) => TaskWork::Append {
                    state: mor.states.get(&s).cloned(),
                    positions: (mor.positions).of_rows(
                        s,
                        rows,
                        |i| self.incoming.base_row(i),
                        &self.keys,
                    ),
                    slice,
                    bucket: local,
                    incoming,
                    keys,
                },
                _ => {
                    let base_path = slice
                        .base_file
                        .as_ref()
                        .map(|b| b.rel_path.clone())
                        .ok_or_else(|| FormatError::Unsupported {
                            feature: "log-only file groups".into(),
                        })?;
                    TaskWork::Rewrite {
                        slice,
                        base_path,
                        bucket: local,
                        incoming,
                        keys,
                    }
                }
            };
            tasks.push(FileGroupTask {
                task: self.done + tasks.len(),
                work,
            });
        }
        self.done += wave;
        Ok(tasks)
    }

    fn new_wave(&mut self) -> Result<Vec<FileGroupTask>> {
        let sizes: Vec<usize> = self.new_groups.iter().map(|g| g.rows.len()).collect();
        let wave = self.incoming.plan_wave(&sizes, self.new_done)?;
        let groups = &self.new_groups[self.new_done..self.new_done + wave];
        let refs: Vec<&[u32]> = groups.iter().map(|g| g.rows.as_slice()).collect();
        let last = self.new_done + wave == self.new_groups.len();
        let gathered = self.incoming.gather(&refs, last)?;
        let first_task = self.sizes.len() + self.new_done;
        let mut tasks = Vec::with_capacity(wave);
        for (i, (group, pieces)) in groups.iter().zip(gathered).enumerate() {
            tasks.push(FileGroupTask {
                task: first_task + i,
                work: TaskWork::New(NewGroup {
                    partition: group.partition.clone(),
                    keys: take_keys(&self.keys, &group.rows)?,
                    rows: pieces,
                    file_id: group.file_id.clone(),
                }),
            });
        }
        self.new_done += wave;
        Ok(tasks)
    }

    /// What the write did, from the routing and the writers' row counts (the sum of their
    /// statuses' [`WriteStatus::rows`]).
    pub fn finish(mut self, rows: &RowCounts) -> UpsertResult {
        if self.in_wave {
            self.incoming.end_wave();
        }
        let mut result = self.routing;
        result.rows.add(rows);
        // a record moved to another partition is a delete plus an insert, counted as an update
        let counts = &mut result.rows;
        counts.deleted = counts.deleted.saturating_sub(self.moved);
        counts.inserted = counts.inserted.saturating_sub(self.moved);
        counts.updated += self.moved;
        result
    }
}

/// Writes one wave of tasks as this process's part of `txn`: new file groups through the
/// transaction's own writer (their files opened in order, encoded on tasks), the touched groups
/// on tasks, as many at once as there are cores, each on a writer of its own whose status the
/// transaction gathers. Every task ends before an error is returned, so no writer outlives a
/// failed write. Returns what the wave did to the rows.
pub(super) async fn run_wave(
    txn: &mut Transaction,
    schema: &SchemaRef,
    spec: &WriteSpec,
    wave: Vec<FileGroupTask>,
) -> Result<RowCounts> {
    let mut rows = RowCounts::default();
    let (new, touched): (Vec<FileGroupTask>, Vec<FileGroupTask>) = wave
        .into_iter()
        .partition(|t| matches!(t.work, TaskWork::New(_)));
    if let Some(first_task) = new.first().map(|t| t.task) {
        let groups: Vec<NewGroup> = new
            .into_iter()
            .filter_map(|t| match t.work {
                TaskWork::New(g) => Some(g),
                _ => None,
            })
            .collect();
        rows.new_file_groups += groups.len();
        rows.inserted +=
            write_new_file_groups(txn.files(), groups, first_task, schema, &spec.files).await?;
    }
    let permits = Arc::new(tokio::sync::Semaphore::new(crate::tasks::parallelism()));
    let (table, handle) = (txn.table().clone(), txn.handle());
    let mut handles = Vec::with_capacity(touched.len());
    for task in touched {
        let (table, handle, schema, spec) =
            (table.clone(), handle.clone(), schema.clone(), spec.clone());
        let permits = permits.clone();
        let (partition, file_id) = task.file_group();
        let what = format!("{partition}/{}", file_id.unwrap_or_default());
        handles.push((
            what,
            tokio::spawn(async move {
                let _permit = permits.acquire_owned().await;
                let mut writer = FileGroupWriter::new(&table, &handle);
                writer.write_task(task, &schema, &spec).await?;
                Ok::<WriteStatus, FormatError>(writer.finish())
            }),
        ));
    }
    for status in crate::tasks::join_writers(handles).await? {
        rows.add(&status.rows);
        txn.gather(status)?;
    }
    Ok(rows)
}
