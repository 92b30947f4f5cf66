//! Copy-on-write rewrites that keep every stored row where it is (a file group that takes
//! updates and inserts but no deletes): only the columns that change (those the statement
//! assigns, or those whose values differ, see [`crate::write::column_diff`]) and the meta columns a
//! rewrite restamps are decoded and encoded again; every other column chunk is copied from the
//! old file byte for byte. Inserts follow as a row group of their own.
//!
//! The new file has the old file's row groups and rows, then the inserts; its key index is the
//! old one (the same keys in the same order) extended by the inserted keys. It holds what a
//! full rewrite would write, except that the copied chunks keep the old file's encoding.

use std::sync::Arc;

use arrow::array::{make_comparator, Array, ArrayRef, AsArray, StringArray};
use arrow::compute::interleave;
use arrow::compute::kernels::sort::SortOptions;
use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use bytes::Bytes;
use futures::StreamExt;
use object_store::ObjectStoreExt;
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnWriter, ArrowRowGroupWriterFactory};
use parquet::arrow::{add_encoded_arrow_schema_to_metadata, ArrowSchemaConverter};
use parquet::column::writer::ColumnCloseResult;
use parquet::file::metadata::{KeyValue, ParquetMetaData};
use parquet::file::reader::{ChunkReader, Length};
use parquet::file::writer::SerializedFileWriter;
use tokio::io::AsyncWriteExt;

use crate::bloom::{self, BloomFilterType, HoodieBloomFilter};
use crate::error::{FormatError, Result};
use crate::field_path::FieldPath;
use crate::meta::{MetaValues, COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, RECORD_KEY};
use crate::precedence::incoming_wins;
use crate::storage::TableStorage;
use crate::write::upload::Upload;
use crate::write::writer::{writer_properties, FileSpec};

/// What a spliced rewrite is given.
pub(crate) struct SpliceInput<'a> {
    /// The table's storage.
    pub storage: &'a TableStorage,
    /// The table schema (meta columns first).
    pub schema: &'a SchemaRef,
    /// The change set and its record keys.
    pub incoming: &'a RecordBatch,
    /// Record keys of `incoming`.
    pub incoming_keys: &'a StringArray,
    /// Incoming row per stored key routed to this file group (updates only).
    pub updates: &'a crate::tasks::FastMap<&'a str, u32>,
    /// Incoming rows new to this file group: appended as a row group of their own.
    pub inserts: &'a [u32],
    /// The ordering field under event-time ordering.
    pub ordering: Option<&'a FieldPath>,
    /// Data columns the statement may change; all others are equal in `incoming` and stored.
    /// `None`: unknown (an upsert, `UPDATE SET *`): the updated rows are compared with the
    /// stored ones to find out ([`crate::write::column_diff`]).
    pub changed: Option<&'a [String]>,
    /// Base file settings (the re-encoded chunks use them).
    pub settings: &'a FileSpec,
    /// The old base file.
    pub old_rel: &'a str,
    /// The new base file.
    pub new_rel: &'a str,
    /// Whether to hand back the stored rows of the updated keys when they are read anyway (a
    /// CDC table's before images).
    pub keep_stored: bool,
}

/// What a spliced rewrite wrote.
#[derive(Debug, Default)]
pub(crate) struct Spliced {
    /// Bytes of the new file.
    pub size: u64,
    /// Rows of the new file.
    pub rows: u64,
    /// Stored rows replaced by incoming ones.
    pub updated: u64,
    /// Incoming rows appended.
    pub inserted: u64,
    /// Incoming rows older than the stored ones (event-time ordering), not written.
    pub dropped: u64,
    /// With `keep_stored`, the stored rows of the updated keys (their key and data columns), if
    /// the splice read them to find the changed columns.
    pub stored: Option<Vec<RecordBatch>>,
}

/// Rewrites `old_rel` as `new_rel`, re-encoding only the changed columns and the meta columns
/// a rewrite restamps. `None` when the old file cannot be spliced (see [`Spliceable::open`];
/// with inserts, also when its bloom filter cannot be extended): the caller then rewrites it
/// whole. Nothing is written then. `meta` gives the new file's meta column values
/// (`first_row` advances with each updated row).
pub(crate) async fn splice_rewrite(
    input: SpliceInput<'_>,
    meta: MetaValues<'_>,
) -> Result<Option<Spliced>> {
    let files = SpliceFiles {
        storage: input.storage,
        schema: input.schema,
        settings: input.settings,
        old_rel: input.old_rel,
        new_rel: input.new_rel,
    };
    let Some(old) = Spliceable::open(&files).await? else {
        return Ok(None);
    };
    if !input.inserts.is_empty() && !old.extendable() {
        return Ok(None);
    }
    let detected: Vec<String>;
    let mut stored = None;
    let changed: &[String] = match input.changed {
        Some(changed) => changed,
        None if input.updates.is_empty() => &[],
        None => {
            let fields = input.schema.fields();
            let candidates: Vec<usize> = (0..fields.len())
                .filter(|&c| !crate::schema::is_meta_column(fields[c].name()))
                .collect();
            let differing = crate::write::column_diff::differing_columns(
                input.storage,
                input.old_rel,
                old.footer.clone(),
                input.schema,
                input.incoming,
                input.updates,
                &candidates,
                input.keep_stored,
            )
            .await?;
            stored = Some(differing.1);
            detected = differing
                .0
                .iter()
                .map(|&c| fields[c].name().clone())
                .collect();
            &detected
        }
    };
    let fields = input.schema.fields();
    let ordering = input.ordering.map(|p| fields[p.top()].name().as_str());
    let read: Vec<&str> = std::iter::once(RECORD_KEY).chain(ordering).collect();
    let plan = SplicePlan::new(input.schema, changed, &read);
    let mut rows = WriteRows {
        input: &input,
        meta,
        done: Spliced {
            stored,
            ..Default::default()
        },
    };
    let written = splice_file(&files, old, &plan, &mut rows).await?;
    let mut done = rows.done;
    done.size = written.size;
    done.rows = written.rows;
    done.inserted = written.appended;
    Ok(Some(done))
}

/// The rows of a write's splice: stored rows replaced by the incoming rows of their keys (that
/// are not older under event-time ordering), the inserts appended, new rows stamped with the
/// write's meta values.
struct WriteRows<'a, 'm> {
    input: &'a SpliceInput<'a>,
    meta: MetaValues<'m>,
    done: Spliced,
}

impl SpliceRows for WriteRows<'_, '_> {
    fn merge(
        &mut self,
        plan: &SplicePlan,
        old: &RecordBatch,
    ) -> Result<Vec<(arrow::datatypes::FieldRef, ArrayRef)>> {
        splice_batch(self.input, plan, old, &mut self.meta, &mut self.done)
    }

    fn appended(&mut self) -> Result<Option<RecordBatch>> {
        if self.input.inserts.is_empty() {
            return Ok(None);
        }
        Ok(Some(crate::meta::take_with_meta(
            self.input.incoming,
            self.input.incoming_keys,
            self.input.inserts,
            &self.meta,
            self.input.schema,
        )?))
    }
}

/// The re-encoded columns of one old batch, with the updated rows' values and meta columns
/// (copied columns get a placeholder and are skipped by the caller).
fn splice_batch(
    input: &SpliceInput<'_>,
    plan: &SplicePlan,
    old: &RecordBatch,
    meta: &mut MetaValues<'_>,
    done: &mut Spliced,
) -> Result<Vec<(arrow::datatypes::FieldRef, ArrayRef)>> {
    let keys = plan.decoded(input.schema, old, crate::meta::RECORD_KEY_INDEX)?;
    let keys = keys.as_string::<i32>();
    let ordering = match input.ordering {
        Some(path) => {
            let stored = plan.decoded(input.schema, old, path.top())?;
            Some(make_comparator(
                path.values(input.incoming.column(path.top()))?.as_ref(),
                path.values(&stored)?.as_ref(),
                SortOptions::default(),
            )?)
        }
        None => None,
    };
    // (source, row): 0 = stored, 1 = incoming (position among this batch's updated rows)
    let mut positions: Vec<(usize, usize)> = Vec::with_capacity(old.num_rows());
    let mut incoming_idx: Vec<u32> = Vec::new();
    for r in 0..old.num_rows() {
        match input.updates.get(keys.value(r)) {
            Some(&i) if incoming_wins(ordering.as_ref(), i as usize, r) => {
                positions.push((1, incoming_idx.len()));
                incoming_idx.push(i);
            }
            Some(_) => {
                positions.push((0, r));
                done.dropped += 1;
            }
            None => positions.push((0, r)),
        }
    }
    done.updated += incoming_idx.len() as u64;
    let inc = if incoming_idx.is_empty() {
        None
    } else {
        let inc = crate::meta::take_with_meta(
            input.incoming,
            input.incoming_keys,
            &incoming_idx,
            meta,
            input.schema,
        )?;
        meta.first_row += incoming_idx.len() as u64;
        Some(inc)
    };
    let replaced = inc.as_ref().map(|inc| (inc, positions.as_slice()));
    plan.columns(input.schema, old, meta.file_name, replaced)
}

mod chunks;
mod engine;

use chunks::*;
pub(crate) use engine::{splice_file, SpliceFiles, SplicePlan, SpliceRows, Spliceable};

#[cfg(test)]
mod tests;
