//! One file group's share of a keyed write, as the routing hands it to a writer: a rewrite of
//! an existing group's base file (copy-on-write, or a small file inserts fill), a log file
//! appended to a merge-on-read group, or a new group. A [`FileGroupTask`] holds everything a
//! writer needs besides the table, the write's [`WriteHandle`](crate::write::WriteHandle), the
//! table schema and the write's [`WriteSpec`]; [`FileGroupWriter::write_task`] writes it and
//! records its file and row counts in the writer's [`WriteStatus`](crate::write::WriteStatus).
//! [`FileGroupTask::to_bytes`] / [`FileGroupTask::from_bytes`] carry one to a writer in another
//! process: a JSON header, then the rows as Arrow IPC.

use serde::{Deserialize, Serialize};

use super::append::{append_file_group, AppendContext, AppendJob};
use super::rewrite::rewrite_file_group;
use super::stored_state::StoredState;
use super::*;
use crate::wire::{Chunks, Frames};
use crate::write::insert::{write_new_file_groups, NewGroup};
use crate::write::status::{FileGroupWriter, RowCounts};

/// One file group's share of a keyed write.
pub struct FileGroupTask {
    /// The writer's task number (its files' write token).
    pub(super) task: usize,
    pub(super) work: TaskWork,
}

/// What a task writes.
pub(super) enum TaskWork {
    /// A new base file of an existing group: its records merged with the incoming ones.
    Rewrite {
        slice: FileSlice,
        base_path: String,
        bucket: Bucket,
        incoming: RecordBatch,
        keys: StringArray,
    },
    /// A new log file of a merge-on-read group.
    Append {
        slice: FileSlice,
        bucket: Bucket,
        incoming: RecordBatch,
        keys: StringArray,
        state: Option<Arc<StoredState>>,
        /// The row of the slice's base file each row of `incoming` replaces, when known.
        positions: Option<Vec<Option<u64>>>,
    },
    /// A new file group.
    New(NewGroup),
}

impl FileGroupTask {
    /// `(partition path, file id)` of the group (`None`: a new group with a fresh id).
    pub fn file_group(&self) -> (&str, Option<&str>) {
        match &self.work {
            TaskWork::Rewrite { slice, .. } | TaskWork::Append { slice, .. } => {
                (&slice.partition_path, Some(&slice.file_id))
            }
            TaskWork::New(g) => (&g.partition, g.file_id.as_deref()),
        }
    }

    /// The task as bytes, for a writer in another process.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let (header, batches) = self.parts()?;
        let mut frames = Frames::new(WHAT);
        frames.json(&header)?;
        for batch in &batches {
            frames.batch(batch)?;
        }
        Ok(frames.into_bytes())
    }

    /// A task from [`FileGroupTask::to_bytes`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let mut chunks = Chunks::new(WHAT, bytes);
        let header: Header = chunks.json()?;
        let mut batches = Vec::new();
        while !chunks.is_done() {
            batches.push(chunks.batch()?);
        }
        header.into_task(batches)
    }

    /// The task's header and its batches in the order [`Header::into_task`] takes them.
    fn parts(&self) -> Result<(Header, Vec<RecordBatch>)> {
        let keys_batch = |keys: &StringArray| -> Result<RecordBatch> {
            Ok(RecordBatch::try_from_iter([(
                "keys",
                Arc::new(keys.clone()) as ArrayRef,
            )])?)
        };
        Ok(match &self.work {
            TaskWork::Rewrite {
                slice,
                base_path,
                bucket,
                incoming,
                keys,
            } => (
                Header::of(
                    self.task,
                    Kind::Rewrite(base_path.clone()),
                    Some(slice),
                    bucket,
                ),
                vec![incoming.clone(), keys_batch(keys)?],
            ),
            TaskWork::Append {
                slice,
                bucket,
                incoming,
                keys,
                state,
                positions,
            } => {
                let mut batches = vec![incoming.clone(), keys_batch(keys)?];
                batches.extend(state.as_ref().map(|s| s.stored().clone()));
                let kind = Kind::Append {
                    state: state.is_some(),
                    positions: positions.clone(),
                };
                (Header::of(self.task, kind, Some(slice), bucket), batches)
            }
            TaskWork::New(g) => {
                let mut batches = vec![keys_batch(&g.keys)?];
                batches.extend(g.rows.iter().cloned());
                let kind = Kind::New {
                    partition: g.partition.clone(),
                    file_id: g.file_id.clone(),
                };
                (
                    Header::of(self.task, kind, None, &Bucket::default()),
                    batches,
                )
            }
        })
    }
}

impl FileGroupWriter {
    /// Writes one file group's share of a keyed write (`schema`: the table schema the write's
    /// rows have; `spec`: the write's), recording the file it wrote and what it did to the
    /// rows.
    pub async fn write_task(
        &mut self,
        task: FileGroupTask,
        schema: &SchemaRef,
        spec: &WriteSpec,
    ) -> Result<()> {
        let instant = self.instant().to_string();
        let mut rows = RowCounts::default();
        match task.work {
            TaskWork::Rewrite {
                slice,
                base_path,
                bucket,
                incoming,
                keys,
            } => {
                // the group's partition has its metadata: it holds the group
                self.partition_ready(&slice.partition_path);
                let token = write_token(task.task);
                let crate::write::status::OpenedFile { writer, name } = self
                    .new_base_file(
                        &slice.partition_path,
                        &slice.file_id,
                        &token,
                        schema.clone(),
                        &spec.files,
                    )
                    .await?;
                let job = RewriteJob {
                    slice,
                    base_path,
                    bucket,
                    incoming,
                    keys,
                    writer,
                    file_name: name.name(),
                    task: task.task,
                };
                let storage = self.table().storage().clone();
                let (stat, counts) =
                    rewrite_file_group(&storage, schema, job, spec, &instant).await?;
                self.record_stat(stat);
                counts.add_to(&mut rows);
                rows.rewritten_file_groups += 1;
            }
            TaskWork::Append {
                slice,
                bucket,
                incoming,
                keys,
                state,
                positions,
            } => {
                let ctx = Arc::new(append_context(self.table(), schema, spec, &instant)?);
                let job = AppendJob {
                    slice,
                    bucket,
                    incoming,
                    keys,
                    task: task.task,
                    state,
                    positions,
                };
                let (stat, counts) = append_file_group(ctx, job).await?;
                if stat.path.is_some() {
                    self.record_stat(stat);
                    rows.logged_file_groups += 1;
                }
                counts.add_to(&mut rows);
            }
            TaskWork::New(group) => {
                rows.inserted +=
                    write_new_file_groups(self, vec![group], task.task, schema, &spec.files)
                        .await?;
                rows.new_file_groups += 1;
            }
        }
        self.count_rows(&rows);
        Ok(())
    }
}

/// The context of a merge-on-read append written by `table`'s writer of `instant`.
pub(super) fn append_context(
    table: &crate::HudiTable,
    schema: &SchemaRef,
    spec: &WriteSpec,
    instant: &str,
) -> Result<AppendContext> {
    // a task's writer reads no stored state: the routing did, and the task carries it
    let admission = crate::log::read::Admission::default();
    AppendContext::new(table, schema, spec, instant, admission)
}

/// What a task's frames are called in the errors.
const WHAT: &str = "file group task";

fn corrupt(reason: String) -> FormatError {
    crate::wire::corrupt(WHAT, reason)
}

/// What a task writes, without its rows.
#[derive(Serialize, Deserialize)]
enum Kind {
    Rewrite(String),
    Append {
        state: bool,
        /// The base-file row each incoming row replaces, when known.
        #[serde(default)]
        positions: Option<Vec<Option<u64>>>,
    },
    New {
        partition: String,
        file_id: Option<String>,
    },
}

/// A task's header: everything but its rows.
#[derive(Serialize, Deserialize)]
struct Header {
    task: usize,
    kind: Kind,
    slice: Option<FileSlice>,
    bucket: [Vec<u32>; 4],
}

impl Header {
    fn of(task: usize, kind: Kind, slice: Option<&FileSlice>, bucket: &Bucket) -> Self {
        Self {
            task,
            kind,
            slice: slice.cloned(),
            bucket: [
                bucket.updates.clone(),
                bucket.inserts.clone(),
                bucket.deletes.clone(),
                bucket.moves.clone(),
            ],
        }
    }

    /// The task, its batches in the order [`FileGroupTask::parts`] gives them.
    fn into_task(self, batches: Vec<RecordBatch>) -> Result<FileGroupTask> {
        let [updates, inserts, deletes, moves] = self.bucket;
        let bucket = Bucket {
            updates,
            inserts,
            deletes,
            moves,
        };
        let slice = self.slice;
        let keys_of = |b: &RecordBatch| -> Result<StringArray> {
            Ok(b.column(0)
                .as_string_opt::<i32>()
                .ok_or_else(|| corrupt("keys are not strings".into()))?
                .clone())
        };
        let mut batches = batches.into_iter();
        let mut next = || {
            batches
                .next()
                .ok_or_else(|| corrupt("a batch is missing".into()))
        };
        let work = match (self.kind, slice) {
            (Kind::Rewrite(base_path), Some(slice)) => TaskWork::Rewrite {
                slice,
                base_path,
                bucket,
                incoming: next()?,
                keys: keys_of(&next()?)?,
            },
            (Kind::Append { state, positions }, Some(slice)) => {
                let incoming = next()?;
                let keys = keys_of(&next()?)?;
                let state = match state {
                    true => Some(Arc::new(StoredState::from_stored(next()?)?)),
                    false => None,
                };
                TaskWork::Append {
                    slice,
                    bucket,
                    incoming,
                    keys,
                    state,
                    positions,
                }
            }
            (Kind::New { partition, file_id }, None) => {
                let keys = keys_of(&next()?)?;
                TaskWork::New(NewGroup {
                    partition,
                    rows: batches.collect(),
                    keys,
                    file_id,
                })
            }
            _ => return Err(corrupt("a task without its file slice".into())),
        };
        check_rows(&work)?;
        Ok(FileGroupTask {
            task: self.task,
            work,
        })
    }
}

/// Refuses a task whose bucket names a row that is not one of its rows or has no key.
fn check_rows(work: &TaskWork) -> Result<()> {
    if let TaskWork::Rewrite {
        bucket,
        incoming,
        keys,
        ..
    }
    | TaskWork::Append {
        bucket,
        incoming,
        keys,
        ..
    } = work
    {
        let rows = incoming.num_rows().min(keys.len());
        let all = [
            &bucket.updates,
            &bucket.inserts,
            &bucket.deletes,
            &bucket.moves,
        ];
        if all.iter().any(|v| v.iter().any(|&r| r as usize >= rows)) {
            return Err(corrupt(format!("a row beyond the task's {rows} rows")));
        }
    }
    if let TaskWork::Append {
        positions: Some(p),
        incoming,
        ..
    } = work
    {
        if p.len() != incoming.num_rows() {
            let (n, rows) = (p.len(), incoming.num_rows());
            return Err(corrupt(format!(
                "{n} record positions for the task's {rows} rows"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::Int32Array;

    fn task() -> FileGroupTask {
        let incoming = RecordBatch::try_from_iter([(
            "id",
            Arc::new(Int32Array::from(vec![1, 2])) as ArrayRef,
        )])
        .unwrap();
        FileGroupTask {
            task: 3,
            work: TaskWork::Rewrite {
                slice: FileSlice {
                    partition_path: "dt=a".into(),
                    file_id: "f1".into(),
                    base_instant: "20240101000000000".into(),
                    base_file: None,
                    log_files: vec!["dt=a/.f1_20240101000000000.log.1_0-1-1".into()],
                    cdc_logs: vec![],
                },
                base_path: "dt=a/f1_0-1-1_20240101000000000.parquet".into(),
                bucket: Bucket {
                    updates: vec![1],
                    inserts: vec![0],
                    ..Default::default()
                },
                incoming,
                keys: StringArray::from(vec!["1", "2"]),
            },
        }
    }

    #[test]
    fn a_task_reads_back_as_written() {
        let back = FileGroupTask::from_bytes(&task().to_bytes().unwrap()).unwrap();
        assert_eq!(back.task, 3);
        assert_eq!(back.file_group(), ("dt=a", Some("f1")));
        let TaskWork::Rewrite {
            slice,
            base_path,
            bucket,
            incoming,
            keys,
        } = back.work
        else {
            panic!("not a rewrite")
        };
        assert_eq!(slice.log_files.len(), 1);
        assert_eq!(base_path, "dt=a/f1_0-1-1_20240101000000000.parquet");
        assert_eq!((bucket.updates, bucket.inserts), (vec![1], vec![0]));
        assert_eq!(incoming.num_rows(), 2);
        assert_eq!((keys.value(0), keys.value(1)), ("1", "2"));
    }

    /// An append to `task()`'s slice, its rows carrying the base-file rows `positions`.
    fn append(positions: Option<Vec<Option<u64>>>) -> FileGroupTask {
        let TaskWork::Rewrite {
            slice,
            bucket,
            incoming,
            keys,
            ..
        } = task().work
        else {
            unreachable!("task() is a rewrite")
        };
        FileGroupTask {
            task: 4,
            work: TaskWork::Append {
                slice,
                bucket,
                incoming,
                keys,
                state: None,
                positions,
            },
        }
    }

    #[test]
    fn an_append_keeps_its_rows_base_file_rows() {
        let back =
            FileGroupTask::from_bytes(&append(Some(vec![None, Some(7)])).to_bytes().unwrap());
        let TaskWork::Append { positions, .. } = back.unwrap().work else {
            panic!("not an append")
        };
        assert_eq!(positions, Some(vec![None, Some(7)]));
        let back = FileGroupTask::from_bytes(&append(None).to_bytes().unwrap()).unwrap();
        assert!(matches!(
            back.work,
            TaskWork::Append {
                positions: None,
                ..
            }
        ));
        // positions for more rows than the task has are refused, not indexed out of bounds
        let e = FileGroupTask::from_bytes(&append(Some(vec![Some(1); 3])).to_bytes().unwrap())
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .contains("3 record positions for the task's 2 rows"),
            "{e}"
        );
    }

    #[test]
    fn damaged_bytes_are_an_error_not_a_panic() {
        let bytes = task().to_bytes().unwrap();
        for cut in [0, 3, 8, 20, bytes.len() - 1] {
            assert!(
                FileGroupTask::from_bytes(&bytes[..cut]).is_err(),
                "cut at {cut}"
            );
        }
        // a length field that points far past the end
        let mut huge = u64::MAX.to_le_bytes().to_vec();
        huge.extend_from_slice(&bytes);
        let e = FileGroupTask::from_bytes(&huge).err().unwrap();
        assert!(e.to_string().contains("truncated"), "{e}");
        // a bucket row beyond the task's rows
        let mut bad = task();
        if let TaskWork::Rewrite { bucket, .. } = &mut bad.work {
            bucket.deletes.push(7);
        }
        let e = FileGroupTask::from_bytes(&bad.to_bytes().unwrap())
            .err()
            .unwrap();
        assert!(
            e.to_string().contains("a row beyond the task's 2 rows"),
            "{e}"
        );
    }
}
