//! A keyed write's changes to an existing merge-on-read file group, appended as one new log
//! file (Hudi's append handle): the updated records, whole, as an AVRO_DATA block, then the
//! deleted keys as a DELETE block. The base file is not rewritten. A MERGE that assigns some
//! columns logs its updates as partial records instead, in a block of their own before the
//! inserts' (table versions 8 and 9, `WriteSpec::partial_columns`).
//!
//! When the write must know the stored state of its keys (event-time ordering of an upsert,
//! or a slice whose logs may have deleted keys), the slice's key and ordering columns are read
//! and merged with its logs first: an update that loses to the stored ordering value is
//! dropped, an update of a key the logs deleted is an insert, a delete of such a key a no-op.

use super::rewrite::ApplyCounts;
use super::stored_state::StoredState;
use super::*;
use crate::log::delete::{DeleteRecord, OrderingValue};
use crate::log::read::Admission;
use crate::log::write::{log_file_bytes, log_file_name, BlockPositions, DataRows};
use crate::meta::take_with_meta;
use crate::precedence::incoming_wins;

/// What every append of one write shares.
pub(super) struct AppendContext {
    pub(super) storage: crate::storage::TableStorage,
    pub(super) schema: SchemaRef,
    /// The Avro schema of the records, meta fields included (the blocks' SCHEMA header).
    pub(super) schema_json: String,
    pub(super) admission: Admission,
    pub(super) options: WriteSpec,
    pub(super) instant: String,
    /// Table versions 8 and 9: a log file is named by the write's instant (one file per file
    /// group and deltacommit); version 6 names it by its slice's base instant.
    pub(super) logs_by_write: bool,
    /// Table versions 8 and 9, a MERGE that assigns some columns (`WriteSpec::partial_columns`):
    /// its updates are logged as partial records.
    pub(super) partial: Option<PartialRecords>,
}

impl AppendContext {
    /// The context of the appends `table`'s writer of `instant` makes for the write `spec`
    /// (of rows of `schema`, meta columns first), admitting logged records as `admission` does.
    pub(super) fn new(
        table: &crate::HudiTable,
        schema: &SchemaRef,
        spec: &WriteSpec,
        instant: &str,
        admission: Admission,
    ) -> Result<Self> {
        let name = table.config().name();
        let logs_by_write = table.config().version()? >= 8;
        Ok(Self {
            storage: table.storage().clone(),
            schema: schema.clone(),
            schema_json: crate::schema::avro_schema_with_meta(name, schema)?.to_string(),
            admission,
            options: spec.clone(),
            instant: instant.to_string(),
            logs_by_write,
            partial: match &spec.partial_columns {
                Some(c) if logs_by_write => Some(PartialRecords::new(name, schema, c)?),
                _ => None,
            },
        })
    }
}

/// What a partial record of a whole row keeps.
pub(super) struct PartialRecords {
    /// The columns of a whole row (meta columns first) it keeps: the meta columns and the
    /// assigned ones, in the table's order.
    columns: Vec<usize>,
    /// Its Avro schema (the block's `SCHEMA` header).
    schema_json: String,
}

impl PartialRecords {
    /// The partial records of rows of `schema` (the table's, meta columns first) that keep
    /// the meta columns and `assigned` (data columns, named in any case).
    fn new(table: &str, schema: &SchemaRef, assigned: &[String]) -> Result<Self> {
        let columns: Vec<usize> = (schema.fields().iter().enumerate())
            .filter(|(_, f)| {
                crate::schema::is_meta_column(f.name())
                    || assigned.iter().any(|a| a.eq_ignore_ascii_case(f.name()))
            })
            .map(|(i, _)| i)
            .collect();
        let projected = schema.project(&columns)?;
        Ok(Self {
            schema_json: crate::schema::avro_schema_with_meta(table, &projected)?.to_string(),
            columns,
        })
    }
}

/// One file group to append to.
pub(super) struct AppendJob {
    pub(super) slice: FileSlice,
    /// Rows of `incoming`.
    pub(super) bucket: Bucket,
    pub(super) incoming: RecordBatch,
    pub(super) keys: StringArray,
    pub(super) task: usize,
    /// The merged state of the slice's keys the write touches, when the write must know it.
    pub(super) state: Option<Arc<StoredState>>,
    /// The row of the slice's base file each row of `incoming` replaces, when known.
    pub(super) positions: Option<Vec<Option<u64>>>,
}

/// The log file version a new log of `slice` takes: one above its latest (its `.cdc` logs
/// included).
fn next_version(slice: &FileSlice) -> u32 {
    slice
        .log_files
        .iter()
        .chain(&slice.cdc_logs)
        .filter_map(|l| crate::file_name::LogFileName::parse(l.rsplit('/').next().unwrap_or(l)))
        .map(|l| l.version)
        .max()
        .unwrap_or(0)
        + 1
}

/// Appends one file group's changes as a new log file.
pub(super) async fn append_file_group(
    ctx: Arc<AppendContext>,
    job: AppendJob,
) -> Result<(WriteStat, ApplyCounts)> {
    let AppendJob {
        slice,
        bucket,
        incoming,
        keys,
        task,
        state,
        positions,
    } = job;
    let options = &ctx.options;
    let Admitted {
        updates,
        inserts,
        mut deletes,
        counts,
    } = admitted(&ctx, &bucket, &incoming, &keys, state.as_deref())?;
    // table versions 8 and 9: the rows of the base file the records replace, the records in
    // their order (Hudi's `addRecordPositionsIfRequired`)
    let rows_of = positions
        .as_deref()
        .filter(|_| ctx.logs_by_write && options.files.record_positions)
        .filter(|_| slice.base_file.is_some());
    let meta = MetaValues {
        instant: &ctx.instant,
        task_partition_id: task,
        first_row: 0,
        // a log record names its file group, not a file
        file_name: &slice.file_id,
        partition_path: &slice.partition_path,
    };
    // partial records of the updates, then the inserts whole; else one block of both
    let groups = match &ctx.partial {
        Some(partial) => vec![(updates, Some(partial)), (inserts, None)],
        None => vec![([updates, inserts].concat(), None)],
    };
    let mut blocks: Vec<(RecordBatch, Option<&PartialRecords>, Option<String>)> = Vec::new();
    for (mut writes, partial) in groups.into_iter().filter(|(w, _)| !w.is_empty()) {
        writes.sort_unstable();
        let at = rows_of.and_then(|p| order_by_position(&mut writes, |i| p[*i as usize]));
        let whole = take_with_meta(&incoming, &keys, &writes, &meta, &ctx.schema)?;
        let rows = match partial {
            Some(p) => whole.project(&p.columns)?,
            None => whole,
        };
        blocks.push((rows, partial, at));
    }
    let deleted_at = rows_of.and_then(|p| order_by_position(&mut deletes, |i| p[*i as usize]));
    let delete_records =
        delete_records(&incoming, &keys, &deletes, &bucket.moves, &slice, options)?;
    if blocks.is_empty() && delete_records.is_empty() {
        return Ok((WriteStat::default(), counts));
    }
    let block_positions = rows_of.map(|_| BlockPositions {
        base_instant: slice.base_instant.clone(),
        deletes: deleted_at,
    });
    let data: Vec<DataRows> = (blocks.iter())
        .map(|(rows, partial, at)| DataRows {
            rows,
            partial_schema: partial.map(|p| p.schema_json.as_str()),
            positions: at.as_deref(),
        })
        .collect();
    let bytes = log_file_bytes(
        &ctx.instant,
        &ctx.schema_json,
        &data,
        &delete_records,
        &options.files,
        block_positions.as_ref(),
    )?;
    let size = bytes.len() as u64;
    let (name, version) = put_log_file(&ctx, &slice, task, bytes).await?;
    let written = Written {
        name: &name,
        version,
        size,
        rows: blocks.iter().map(|(r, _, _)| r.num_rows()).sum(),
        logs_by_write: ctx.logs_by_write,
    };
    let stat = append_stat(&slice, &written, &counts);
    Ok((stat, counts))
}

/// The rows of an append's bucket it writes and deletes, and what it does to them.
#[derive(Default)]
struct Admitted {
    /// Rows of the incoming batch written to the log as updates of stored records.
    updates: Vec<u32>,
    /// Rows of the incoming batch written to the log as new records.
    inserts: Vec<u32>,
    /// Rows whose keys are deleted.
    deletes: Vec<u32>,
    counts: ApplyCounts,
}

/// What an append of `bucket` admits: with the slice's merged `state`, an update that loses to
/// the stored ordering value is dropped, an update of a key the logs deleted is an insert, a
/// delete of such a key a no-op; without it, every row as routed.
fn admitted(
    ctx: &AppendContext,
    bucket: &Bucket,
    incoming: &RecordBatch,
    keys: &StringArray,
    state: Option<&StoredState>,
) -> Result<Admitted> {
    let options = &ctx.options;
    let mut out = Admitted::default();
    let Some(state) = state else {
        out.counts.updated = bucket.updates.len() as u64;
        out.counts.inserted = bucket.inserts.len() as u64;
        out.counts.deleted = bucket.deletes.len() as u64;
        out.updates.extend(&bucket.updates);
        out.inserts.extend(&bucket.inserts);
        out.deletes.extend(&bucket.deletes);
        return Ok(out);
    };
    let event_time =
        options.merge_mode == MergeMode::EventTimeOrdering && options.ordering_field.is_some();
    let ordering = match (&options.ordering_field, event_time) {
        (Some(f), true) => Some(state.comparator(&ctx.schema, f, incoming)?),
        _ => None,
    };
    for &i in bucket.updates.iter().chain(&bucket.inserts) {
        match state.row_of(keys.value(i as usize)) {
            None => {
                out.counts.inserted += 1;
                out.inserts.push(i);
            }
            Some(s) if incoming_wins(ordering.as_ref(), i as usize, s) => {
                out.counts.updated += 1;
                out.updates.push(i);
            }
            Some(_) => out.counts.dropped += 1,
        }
    }
    for &i in &bucket.deletes {
        if state.row_of(keys.value(i as usize)).is_some() {
            out.counts.deleted += 1;
            out.deletes.push(i);
        }
    }
    Ok(out)
}

/// Puts `records` in the order of their rows in the base file (`row_of`) and gives the
/// `RECORD_POSITIONS` header of those rows; `None`, the order left as it was, when a record has
/// no row there (an insert, a key only in the logs) or two share one.
fn order_by_position<T>(
    records: &mut Vec<T>,
    row_of: impl Fn(&T) -> Option<u64>,
) -> Option<String> {
    let mut rows: Vec<(u64, usize)> = records
        .iter()
        .enumerate()
        .map(|(i, r)| row_of(r).map(|row| (row, i)))
        .collect::<Option<_>>()?;
    if rows.is_empty() {
        return None;
    }
    rows.sort_unstable();
    if rows.windows(2).any(|w| w[0].0 == w[1].0) {
        return None;
    }
    let mut taken: Vec<Option<T>> = std::mem::take(records).into_iter().map(Some).collect();
    *records = rows
        .iter()
        .map(|&(_, i)| taken[i].take().expect("each record once"))
        .collect();
    let sorted: Vec<u64> = rows.iter().map(|&(row, _)| row).collect();
    Some(crate::log::positions::encode_positions(&sorted))
}

/// The delete entries of rows `deletes`: a statement's deletes, and the old copy of a record
/// that moves to another partition, carry the default ordering value (they always win, as
/// Spark's DELETE and Hudi's global index write them); an upsert's deleted records carry
/// their own ordering value under event-time ordering.
fn delete_records(
    incoming: &RecordBatch,
    keys: &StringArray,
    deletes: &[u32],
    moves: &[u32],
    slice: &FileSlice,
    options: &WriteSpec,
) -> Result<Vec<DeleteRecord>> {
    let ordering = match (
        &options.ordering_field,
        options.merge_mode,
        options.prepped(),
    ) {
        (Some(f), MergeMode::EventTimeOrdering, false) => {
            let path = FieldPath::resolve(&incoming.schema(), f)?;
            Some(path.values(incoming.column(path.top()))?)
        }
        _ => None,
    };
    Ok(deletes
        .iter()
        .map(|&i| DeleteRecord {
            record_key: keys.value(i as usize).to_string(),
            partition_path: slice.partition_path.clone(),
            ordering: match &ordering {
                Some(o) if !moves.contains(&i) => OrderingValue::of_array(o.as_ref(), i as usize),
                _ => OrderingValue::Int(0),
            },
        })
        .collect())
}

/// Writes the log file under a fresh version (after its marker): a name another writer took
/// meanwhile moves to the next version.
async fn put_log_file(
    ctx: &AppendContext,
    slice: &FileSlice,
    task: usize,
    bytes: Vec<u8>,
) -> Result<(String, u32)> {
    let bytes = bytes::Bytes::from(bytes);
    let (named_by, mut version) = match ctx.logs_by_write {
        true => (&ctx.instant, 1),
        false => (&slice.base_instant, next_version(slice)),
    };
    loop {
        let name = log_file_name(&slice.file_id, named_by, version, &write_token(task));
        let rel = if slice.partition_path.is_empty() {
            name.clone()
        } else {
            format!("{}/{name}", slice.partition_path)
        };
        let marker = format!(
            "{}/{rel}.marker.APPEND",
            crate::write::transaction::marker_dir(&ctx.instant)
        );
        ctx.storage.put(&marker, Vec::<u8>::new()).await?;
        match ctx.storage.put_if_absent(&rel, bytes.clone()).await {
            Ok(()) => return Ok((name, version)),
            // the name is another writer's: so is the file, which a rollback of this write
            // must not delete by the marker
            Err(FormatError::AlreadyExists { .. }) => {
                ctx.storage.delete(&marker).await?;
                version += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

/// A log file an append wrote.
struct Written<'a> {
    name: &'a str,
    version: u32,
    size: u64,
    rows: usize,
    logs_by_write: bool,
}

/// The delta write stat of a new log file: the slice's base instant and file, and its logs
/// with the new one (table version 6) or the new one alone (versions 8 and 9, as Hudi 1.x's
/// append handle records the files it wrote).
fn append_stat(slice: &FileSlice, written: &Written, counts: &ApplyCounts) -> WriteStat {
    let Written {
        name,
        version,
        size,
        rows,
        logs_by_write,
    } = *written;
    let path = if slice.partition_path.is_empty() {
        name.to_string()
    } else {
        format!("{}/{name}", slice.partition_path)
    };
    let mut logs: Vec<String> = match logs_by_write {
        true => Vec::new(),
        false => slice
            .log_files
            .iter()
            .map(|l| l.rsplit('/').next().unwrap_or(l).to_string())
            .collect(),
    };
    logs.push(name.to_string());
    WriteStat {
        file_id: Some(slice.file_id.clone()),
        path: Some(path),
        prev_commit: Some(slice.base_instant.clone()),
        num_writes: rows as i64,
        num_deletes: counts.deleted as i64,
        num_update_writes: counts.updated as i64,
        num_inserts: counts.inserted as i64,
        total_write_bytes: size as i64,
        file_size_in_bytes: size as i64,
        partition_path: Some(slice.partition_path.clone()),
        base_file: Some(
            slice
                .base_file
                .as_ref()
                .map(|b| b.name.name())
                .unwrap_or_default(),
        ),
        log_files: Some(logs),
        log_version: Some(version as i64),
        log_offset: Some(0),
        ..Default::default()
    }
}
