//! The `.cdc` log of one rewritten file group (Hudi's `HoodieMergeHandleWithChangeLog`): a `d`
//! for each stored record deleted, a `u` for each stored record an incoming one replaced (none
//! when the stored one wins under event-time ordering, as Spark with Hudi 1.2 logs it), an `i`
//! for each incoming record new to the file group. The images are full
//! records without the meta columns, although an UPDATE's change set carries only the columns
//! it assigns: the stored record fills the rest, as the rewrite does.
//!
//! Hudi writes none when the rewrite wrote no record or only inserted ones (the reader infers
//! those changes from the files); [`needs_log`] says so.

use std::collections::BTreeMap;

use arrow::array::{make_comparator, RecordBatch, StringArray, UInt32Array};
use arrow::compute::kernels::sort::SortOptions;
use arrow::compute::{interleave_record_batch, take_record_batch};
use arrow::datatypes::SchemaRef;
use futures::StreamExt;

use crate::cdc::{change_schema, CdcMode, CdcOp, ChangeRows};
use crate::error::Result;
use crate::field_path::FieldPath;
use crate::storage::TableStorage;
use crate::tasks::FastMap;

/// A CDC-enabled table's logging, as a write needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CdcSpec {
    /// The supplemental logging mode.
    pub mode: CdcMode,
    /// The table name (the images' Avro record name).
    pub table_name: String,
}

/// Whether a rewrite that wrote `rows` records, `inserted` of them new, gets a `.cdc` log.
pub(crate) fn needs_log(rows: u64, inserted: u64) -> bool {
    rows != 0 && rows != inserted
}

/// What one file group's rewrite changed, to log.
pub(crate) struct RewriteChanges<'a> {
    pub storage: &'a TableStorage,
    /// The table schema (meta columns first, storage types).
    pub schema: &'a SchemaRef,
    pub spec: &'a CdcSpec,
    pub instant: &'a str,
    /// The old base file and the columns the data files leave out.
    pub old_rel: &'a str,
    pub dropped: &'a [String],
    /// The incoming rows routed to the file group and their keys.
    pub incoming: &'a RecordBatch,
    pub incoming_keys: &'a StringArray,
    /// Incoming row per stored key it changes, and whether it deletes it.
    pub by_key: &'a FastMap<&'a str, (u32, bool)>,
    /// Incoming rows new to the file group.
    pub inserts: &'a [u32],
    /// The ordering field under event-time ordering.
    pub ordering: Option<&'a FieldPath>,
    /// The data columns an UPDATE assigns (the others come from the stored record).
    pub changed: Option<&'a [String]>,
    /// Where the log goes: partition path, file id, write token.
    pub partition_path: &'a str,
    pub file_id: &'a str,
    pub token: &'a str,
    /// The stored records of the updated keys when the rewrite read them already (a splice that
    /// compared them with the incoming ones; it takes no deletes): not read again.
    pub stored: Option<Vec<RecordBatch>>,
}

impl RewriteChanges<'_> {
    /// Writes the `.cdc` log (after its marker) and returns the write stat's `cdcStats`: its
    /// path relative to the table and its size.
    pub(crate) async fn write(&self) -> Result<BTreeMap<String, i64>> {
        let (changes, keys) = self.collect().await?;
        let schema_json =
            crate::cdc::log::cdc_schema(self.spec.mode, &self.spec.table_name, self.schema)?
                .to_string();
        let bytes = crate::cdc::log::cdc_log_bytes(
            self.spec.mode,
            self.instant,
            &schema_json,
            &changes,
            &keys,
        )?;
        let name = crate::cdc::log::cdc_file_name(self.file_id, self.instant, 1, self.token);
        let rel = if self.partition_path.is_empty() {
            name
        } else {
            format!("{}/{name}", self.partition_path)
        };
        let marker = format!(
            "{}/{rel}.marker.CREATE",
            crate::write::transaction::marker_dir(self.instant)
        );
        self.storage.put(&marker, Vec::<u8>::new()).await?;
        let size = bytes.len() as i64;
        self.storage.put(&rel, bytes).await?;
        Ok(BTreeMap::from([(rel, size)]))
    }

    /// The change rows and their record keys: the stored records the incoming ones touch, read
    /// again from the old file, then the inserts.
    async fn collect(&self) -> Result<(RecordBatch, StringArray)> {
        let out_schema = change_schema(self.schema);
        let mut rows = ChangeRows::new(out_schema.clone(), self.instant);
        let mut keys: Vec<String> = Vec::new();
        let mut stream = match &self.stored {
            // inserts alone: no stored record changes
            None if self.by_key.is_empty() => futures::stream::empty().boxed(),
            Some(stored) => {
                let batches: Vec<Result<RecordBatch>> =
                    stored.iter().map(|b| table_rows(self.schema, b)).collect();
                futures::stream::iter(batches).boxed()
            }
            // only the touched records are decoded beyond their keys
            None => {
                let touched: crate::tasks::FastSet<Box<str>> =
                    self.by_key.keys().map(|k| (*k).into()).collect();
                crate::base_file::stream_base_file_keys(
                    self.storage,
                    self.old_rel,
                    self.schema,
                    self.dropped,
                    std::sync::Arc::new(touched),
                )
                .await?
                .boxed()
            }
        };
        while let Some(old) = stream.next().await {
            let old = old?;
            let old_keys = crate::meta::record_keys(&old);
            let loses = self.incoming_loses(&old)?;
            let (mut deleted, mut updated, mut by) = (Vec::new(), Vec::new(), Vec::new());
            for r in 0..old.num_rows() {
                match self.by_key.get(old_keys.value(r)) {
                    Some(&(_, true)) => deleted.push(r as u32),
                    Some(&(i, false)) if !loses(i as usize, r) => {
                        updated.push(r as u32);
                        by.push(i);
                    }
                    _ => {}
                }
            }
            if !deleted.is_empty() {
                let before = take_record_batch(&old, &UInt32Array::from(deleted.clone()))?;
                rows.push(CdcOp::Delete, deleted.len(), Some(&before), None)?;
                keys.extend(
                    deleted
                        .iter()
                        .map(|&r| old_keys.value(r as usize).to_string()),
                );
            }
            if !updated.is_empty() {
                let before = take_record_batch(&old, &UInt32Array::from(updated.clone()))?;
                let after = self.after_images(&old, &updated, &by)?;
                rows.push(CdcOp::Update, updated.len(), Some(&before), Some(&after))?;
                keys.extend(
                    updated
                        .iter()
                        .map(|&r| old_keys.value(r as usize).to_string()),
                );
            }
        }
        if !self.inserts.is_empty() {
            let after =
                take_record_batch(self.incoming, &UInt32Array::from(self.inserts.to_vec()))?;
            rows.push(CdcOp::Insert, self.inserts.len(), None, Some(&after))?;
            keys.extend(
                self.inserts
                    .iter()
                    .map(|&i| self.incoming_keys.value(i as usize).to_string()),
            );
        }
        let batches = rows.into_batches();
        let changes = arrow::compute::concat_batches(&out_schema, &batches)?;
        Ok((changes, StringArray::from(keys)))
    }

    /// Whether incoming row `i` loses to stored row `r` of `old` under event-time ordering (its
    /// ordering value is smaller; NULL is the smallest): the stored record stays, unchanged.
    fn incoming_loses(&self, old: &RecordBatch) -> Result<Box<dyn Fn(usize, usize) -> bool>> {
        let Some(path) = self.ordering else {
            return Ok(Box::new(|_, _| false));
        };
        let cmp = make_comparator(
            path.values(self.incoming.column(path.top()))?.as_ref(),
            path.values(old.column(path.top()))?.as_ref(),
            SortOptions::default(),
        )?;
        Ok(Box::new(move |i, r| cmp(i, r).is_lt()))
    }

    /// The records stored rows `stored` of `old` become, each updated by incoming row `by`: the
    /// incoming record, the columns it does not assign from the stored one (rows where the
    /// stored record wins are not logged).
    fn after_images(&self, old: &RecordBatch, stored: &[u32], by: &[u32]) -> Result<RecordBatch> {
        let positions: Vec<(usize, usize)> = by.iter().map(|&i| (1, i as usize)).collect();
        let merged = interleave_record_batch(&[old, self.incoming], &positions)?;
        let Some(changed) = self.changed else {
            return Ok(merged);
        };
        let rows = UInt32Array::from(stored.to_vec());
        let mut cols = merged.columns().to_vec();
        for (c, field) in merged.schema().fields().iter().enumerate() {
            if !crate::schema::is_meta_column(field.name()) && !changed.contains(field.name()) {
                cols[c] = arrow::compute::take(old.column(c).as_ref(), &rows, None)?;
            }
        }
        Ok(RecordBatch::try_new(merged.schema(), cols)?)
    }
}

/// Stored rows of some columns as rows of the table schema `schema` (columns by name, cast
/// where the file's type differs; the others NULL: images take the data columns alone).
fn table_rows(schema: &SchemaRef, batch: &RecordBatch) -> Result<RecordBatch> {
    let cols = schema
        .fields()
        .iter()
        .map(|f| match batch.column_by_name(f.name()) {
            Some(c) if c.data_type() == f.data_type() => Ok(c.clone()),
            Some(c) => Ok(arrow::compute::cast(c, f.data_type())?),
            None => Ok(arrow::array::new_null_array(
                f.data_type(),
                batch.num_rows(),
            )),
        })
        .collect::<Result<Vec<_>>>()?;
    let schema = std::sync::Arc::new(arrow::datatypes::Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone().with_nullable(true))
            .collect::<Vec<_>>(),
    ));
    Ok(RecordBatch::try_new(schema, cols)?)
}
