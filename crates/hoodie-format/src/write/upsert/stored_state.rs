//! What a merge-on-read file group holds for the keys a write touches: its base file's key
//! and ordering columns merged with its logs. An index lookup reads keys from base files
//! alone (as Java's SIMPLE and BLOOM indexes do); a key a log deleted is found there but is
//! not live, and an upsert under event-time ordering compares with the merged value.

use super::*;
use crate::log::apply::Precedence;
use crate::log::read::Admission;
use crate::meta::RECORD_KEY;

/// The merged state of some keys of one slice.
pub(super) struct StoredState {
    stored: RecordBatch,
    rows: FastMap<String, u32>,
}

impl StoredState {
    /// The state of the stored rows `stored` (key, ordering and delete columns), as
    /// [`StoredState::stored`] gives them.
    pub(super) fn from_stored(stored: RecordBatch) -> Result<Self> {
        let keys = crate::meta::record_keys_by_name(&stored)?;
        let rows = (0..stored.num_rows())
            .map(|r| (keys.value(r).to_string(), r as u32))
            .collect();
        Ok(Self { stored, rows })
    }

    /// The stored rows.
    pub(super) fn stored(&self) -> &RecordBatch {
        &self.stored
    }

    /// The row of a live key.
    pub(super) fn row_of(&self, key: &str) -> Option<usize> {
        self.rows.get(key).map(|&r| r as usize)
    }

    /// Compares rows of `incoming` with the stored rows by ordering field `field`.
    pub(super) fn comparator(
        &self,
        schema: &SchemaRef,
        field: &str,
        incoming: &RecordBatch,
    ) -> Result<arrow::array::DynComparator> {
        let path = FieldPath::resolve(schema, field)?;
        let stored_path = FieldPath::resolve(&self.stored.schema(), field)?;
        Ok(make_comparator(
            path.values(incoming.column(path.top()))?.as_ref(),
            stored_path
                .values(self.stored.column(stored_path.top()))?
                .as_ref(),
            SortOptions::default(),
        )?)
    }
}

/// Reads the merged state of `wanted` keys of `slice`.
pub(super) async fn stored_state(
    storage: &crate::storage::TableStorage,
    schema: &SchemaRef,
    admission: &Admission,
    options: &WriteSpec,
    slice: &FileSlice,
    wanted: &FastMap<&str, ()>,
) -> Result<StoredState> {
    let mut cols = vec![schema.index_of(RECORD_KEY)?];
    if let Some(o) = &options.ordering_field {
        cols.push(schema.index_of(o.split('.').next().unwrap_or(o))?);
    }
    if let Ok(i) = schema.index_of(crate::meta::IS_DELETED) {
        cols.push(i);
    }
    cols.sort_unstable();
    cols.dedup();
    let proj = Arc::new(schema.project(&cols)?);
    let admits = |i: &str| admission.admits(i);
    let rules = Precedence::new(&proj, options.merge_mode, options.ordering_field.as_deref());
    let reader = crate::log::slice::SliceReader {
        storage,
        schema: &proj,
        rules: &rules,
        dropped: &options.dropped_columns,
    };
    let files = crate::log::slice::SliceFiles {
        base: slice.base_file.as_ref().map(|b| b.rel_path.clone()),
        logs: slice.log_files.clone(),
    };
    let is_wanted = |k: &str| wanted.contains_key(k);
    let parts = reader.rows(&files, &admits, Some(&is_wanted)).await?;
    StoredState::from_stored(arrow::compute::concat_batches(&proj, &parts)?)
}

/// For a merge-on-read table: reads the merged state of the located keys of each slice the
/// write must know it for (slices with logs; every located slice under event-time ordering),
/// and drops the locations whose key a log deleted (a key live nowhere is then an insert).
pub(super) async fn live_locations(
    ctx: &Arc<append::AppendContext>,
    slices: &[FileSlice],
    located: &mut HashMap<String, Vec<usize>>,
) -> Result<HashMap<usize, Arc<StoredState>>> {
    let event_time = ctx.options.merge_mode == MergeMode::EventTimeOrdering
        && ctx.options.ordering_field.is_some();
    let mut wanted: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (key, found) in located.iter() {
        for &s in found {
            if event_time || !slices[s].log_files.is_empty() {
                wanted.entry(s).or_default().push(key.clone());
            }
        }
    }
    // the slices are read on tasks, as many at once as there are cores
    let permits = Arc::new(tokio::sync::Semaphore::new(crate::tasks::parallelism()));
    let mut handles = Vec::with_capacity(wanted.len());
    for (s, keys) in wanted {
        let (ctx, permits, slice) = (ctx.clone(), permits.clone(), slices[s].clone());
        let what = format!("{}/{}", slice.partition_path, slice.file_id);
        handles.push((
            what,
            tokio::spawn(async move {
                let _permit = permits.acquire_owned().await;
                let keys: FastMap<&str, ()> = keys.iter().map(|k| (k.as_str(), ())).collect();
                let state = stored_state(
                    &ctx.storage,
                    &ctx.schema,
                    &ctx.admission,
                    &ctx.options,
                    &slice,
                    &keys,
                )
                .await?;
                Ok((s, Arc::new(state)))
            }),
        ));
    }
    let states: HashMap<usize, Arc<StoredState>> = crate::tasks::join_writers(handles)
        .await?
        .into_iter()
        .collect();
    for (key, found) in located.iter_mut() {
        found.retain(|s| states.get(s).is_none_or(|st| st.row_of(key).is_some()));
    }
    located.retain(|_, found| !found.is_empty());
    Ok(states)
}

/// For a merge-on-read change set (UPDATE, MERGE) under event-time ordering: the merged state
/// of every slice in which an update assigns a NULL ordering value (the rows `keep`, located in
/// `rows`). Such an update loses to a stored non-NULL value (NULL orders first) and must not be
/// logged: a log record that loses is read by other readers (hudi-rs) as the winner. Other
/// updates of a change set need no state: readers agree on how they merge.
pub(super) async fn prepped_states(
    ctx: &Arc<append::AppendContext>,
    slices: &[FileSlice],
    incoming: &Incoming,
    keep: &[u32],
    rows: &[Option<usize>],
) -> Result<HashMap<usize, Arc<StoredState>>> {
    let event_time = ctx.options.merge_mode == MergeMode::EventTimeOrdering
        && ctx.options.ordering_field.is_some();
    let (Some(ordering), Some(keys), true) = (incoming.ordering(), incoming.keys(), event_time)
    else {
        return Ok(HashMap::new());
    };
    let located_rows = || {
        keep.iter()
            .zip(rows)
            .filter_map(|(&r, s)| s.map(|s| (r as usize, s)))
    };
    let touched: std::collections::HashSet<usize> = located_rows()
        .filter(|&(r, _)| !incoming.is_delete(r) && ordering.is_null(r))
        .map(|(_, s)| s)
        .collect();
    if touched.is_empty() {
        return Ok(HashMap::new());
    }
    // every row of those slices, deletes included: the append then looks each one up
    let mut located: HashMap<String, Vec<usize>> = HashMap::new();
    for (r, s) in located_rows().filter(|(_, s)| touched.contains(s)) {
        located
            .entry(keys.value(r).to_string())
            .or_default()
            .push(s);
    }
    live_locations(ctx, slices, &mut located).await
}

/// With a BUCKET index a merge-on-read file group also takes inserts into its logs, so a key may
/// live in a log alone, where an index lookup of base files does not see it: every key not
/// found is a candidate of its bucket's file group when that group has logs
/// ([`live_locations`] then keeps it only if it is live there).
pub(super) fn bucket_log_candidates(
    spec: &crate::bucket::BucketSpec,
    slices: &[FileSlice],
    rows: &[u32],
    keys: &StringArray,
    paths: &Interned,
    located: &mut HashMap<String, Vec<usize>>,
) {
    let groups: HashMap<(&str, u32), usize> = slices
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.log_files.is_empty())
        .filter_map(|(i, s)| {
            crate::bucket::bucket_of_file_id(&s.file_id)
                .map(|b| ((s.partition_path.as_str(), b), i))
        })
        .collect();
    if groups.is_empty() {
        return;
    }
    for &r in rows {
        let key = keys.value(r as usize);
        if located.contains_key(key) {
            continue;
        }
        let bucket = spec.bucket_of(key);
        if let Some(&s) = groups.get(&(paths.value(r as usize), bucket)) {
            located.entry(key.to_string()).or_default().push(s);
        }
    }
}
