//! The change rows of one [`CdcSplit`] (Hudi's `CDCFileGroupIterator`), in
//! [`change_schema`](super::change_schema): `ts_ms` is the commit's requested time; images
//! hold the data columns.
//!
//! - logged changes: the `.cdc` log's operations; images it lacks (DATA_BEFORE: after;
//!   OP_KEY_ONLY: both) are looked up by record key in the slices before and after the commit;
//! - inferred from files: every record of a new base file inserted, every record of an emptied
//!   or replaced slice deleted;
//! - merge-on-read logs: per key the commit's log files hold, the slice's record without and
//!   with the commit's blocks: gone is a `d`, new an `i`, changed a `u` (a logged record that
//!   lost to the stored one changes nothing).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use arrow::array::{Array, AsArray, RecordBatch, StringArray, StructArray, UInt32Array};
use arrow::datatypes::{Field, Schema, SchemaRef};
use arrow::row::{RowConverter, SortField};

use super::extract::{CdcSplit, Inference};
use super::log::read_cdc_log;
use super::{change_schema, CdcMode, CdcOp, ChangeRows, AFTER, BEFORE};
use crate::error::Result;
use crate::log::apply::Precedence;
use crate::log::read::{read_slice_logs, Admission, LogContent};
use crate::log::slice::{KeySet, SliceFiles, SliceReader};
use crate::meta::RECORD_KEY;
use crate::storage::TableStorage;
use crate::table_config::TableConfig;
use crate::wire::{Chunks, Frames};

/// Reads the change rows of splits of one table.
#[derive(Debug)]
pub struct ChangeReader {
    storage: TableStorage,
    schema: SchemaRef,
    out: SchemaRef,
    rules: Precedence,
    dropped: Vec<String>,
    admission: Admission,
    mode: CdcMode,
    /// The table's configuration, for [`ChangeReader::to_bytes`].
    config: TableConfig,
}

/// What the errors call a reader's bytes.
const WHAT: &str = "change reader";

impl ChangeReader {
    /// A reader of `table`'s changes as `timeline` records them, its records in `schema` (the
    /// table schema, meta columns first).
    pub fn new(
        table: &crate::HudiTable,
        timeline: &crate::timeline::Timeline,
        schema: SchemaRef,
    ) -> Result<Self> {
        let admission = Admission::of(timeline, None);
        Self::of_parts(table.storage().clone(), table.config(), schema, admission)
    }

    /// The reader of `config`'s table at `storage`, its records in `schema`, reading the log
    /// blocks `admission` admits.
    fn of_parts(
        storage: TableStorage,
        config: &TableConfig,
        schema: SchemaRef,
        admission: Admission,
    ) -> Result<Self> {
        let mode = config
            .cdc_mode()?
            .ok_or_else(|| crate::error::FormatError::NotCdcTable {
                location: storage.location().to_string(),
            })?;
        let ordering = config.ordering_field();
        Ok(Self {
            storage,
            rules: Precedence::new(&schema, config.merge_mode()?, ordering.as_deref()),
            out: change_schema(&schema),
            schema,
            dropped: config.dropped_columns()?,
            admission,
            mode,
            config: config.clone(),
        })
    }

    /// The reader as bytes, for [`ChangeReader::from_bytes`] in another process: the table's
    /// location and configuration, its schema and which log blocks count.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let mut frames = Frames::new(WHAT);
        let header = (
            self.storage.location(),
            self.config.to_text(),
            &self.admission,
        );
        frames.json(&header)?;
        frames.schema(&self.schema)?;
        Ok(frames.into_bytes())
    }

    /// The reader of [`ChangeReader::to_bytes`], reading from the storage `open` gives for the
    /// table's location (its process's own credentials: none travel in the bytes).
    pub fn from_bytes(
        bytes: &[u8],
        open: impl FnOnce(&str) -> Result<TableStorage>,
    ) -> Result<Self> {
        let mut chunks = Chunks::new(WHAT, bytes);
        let (location, properties, admission): (String, String, Admission) = chunks.json()?;
        let schema = chunks.schema()?;
        if !chunks.is_done() {
            return Err(chunks.corrupt("bytes after the reader"));
        }
        let config = TableConfig::parse(properties.as_bytes())?;
        Self::of_parts(open(&location)?, &config, schema, admission)
    }

    /// The location of the table the reader reads.
    pub fn location(&self) -> &str {
        self.storage.location()
    }

    /// The schema of the change rows.
    pub fn change_schema(&self) -> &SchemaRef {
        &self.out
    }

    fn slices(&self) -> SliceReader<'_> {
        SliceReader {
            storage: &self.storage,
            schema: &self.schema,
            rules: &self.rules,
            dropped: &self.dropped,
        }
    }

    /// The change rows of `split`.
    pub async fn changes(&self, split: &CdcSplit) -> Result<Vec<RecordBatch>> {
        let t = split.instant.as_str();
        let before_t = |i: &str| i < t && self.admission.admits(i);
        let upto_t = |i: &str| i <= t && self.admission.admits(i);
        let mut rows = ChangeRows::new(self.out.clone(), t);
        match &split.inference {
            Inference::BaseFile { inserted, deleted } => {
                if let Some(s) = inserted {
                    for b in self.slices().rows(s, &upto_t, None).await? {
                        rows.push(CdcOp::Insert, b.num_rows(), None, Some(&b))?;
                    }
                }
                if let Some(s) = deleted {
                    for b in self.slices().rows(s, &before_t, None).await? {
                        rows.push(CdcOp::Delete, b.num_rows(), Some(&b), None)?;
                    }
                }
            }
            Inference::Replaced { before } => {
                for b in self.slices().rows(before, &before_t, None).await? {
                    rows.push(CdcOp::Delete, b.num_rows(), Some(&b), None)?;
                }
            }
            Inference::Logged {
                cdc_files,
                after,
                before,
            } => {
                for rel in cdc_files {
                    let bytes = self.storage.get(rel).await?;
                    for logged in read_cdc_log(&bytes, rel, &self.schema)? {
                        let batch = self.logged(&logged, t, after, before).await?;
                        rows.push_batch(batch);
                    }
                }
            }
            Inference::LogFile { slice, logs } => {
                self.log_file_changes(slice, logs, t, &mut rows).await?;
            }
        }
        Ok(rows.into_batches())
    }

    /// Change rows of logged records: their operations, the images the mode logged, the others
    /// looked up by key.
    async fn logged(
        &self,
        logged: &RecordBatch,
        t: &str,
        after: &SliceFiles,
        before: &SliceFiles,
    ) -> Result<RecordBatch> {
        let ops = logged.column(0).as_string::<i32>();
        let keys = logged.column(1).as_string::<i32>();
        let n = logged.num_rows();
        let op_at = |r: usize| super::CdcOp::of_code(ops.value(r));
        let (before_img, after_img) = match self.mode {
            CdcMode::DataBeforeAfter => (
                logged
                    .column_by_name(BEFORE)
                    .expect("logged before")
                    .clone(),
                logged.column_by_name(AFTER).expect("logged after").clone(),
            ),
            CdcMode::DataBefore => {
                let want = |r: usize| op_at(r) != Some(CdcOp::Delete);
                let after = self.look_up(after, keys, &want, &|i: &str| i <= t).await?;
                (
                    logged
                        .column_by_name(BEFORE)
                        .expect("logged before")
                        .clone(),
                    Arc::new(after) as _,
                )
            }
            CdcMode::OpKeyOnly => {
                let want_after = |r: usize| op_at(r) != Some(CdcOp::Delete);
                let want_before = |r: usize| op_at(r) != Some(CdcOp::Insert);
                let after = self
                    .look_up(after, keys, &want_after, &|i: &str| i <= t)
                    .await?;
                let before = self
                    .look_up(before, keys, &want_before, &|i: &str| i < t)
                    .await?;
                (Arc::new(before) as _, Arc::new(after) as _)
            }
        };
        Ok(RecordBatch::try_new(
            self.out.clone(),
            vec![
                logged.column(0).clone(),
                Arc::new(StringArray::from(vec![t; n])),
                before_img,
                after_img,
            ],
        )?)
    }

    /// The images of the records of `slice` whose keys are `keys` (rows where `want` is false,
    /// and keys the slice lacks, NULL).
    async fn look_up(
        &self,
        slice: &SliceFiles,
        keys: &StringArray,
        want: &(dyn Fn(usize) -> bool + Sync),
        upto: &(dyn Fn(&str) -> bool + Send + Sync),
    ) -> Result<StructArray> {
        let wanted: crate::tasks::FastSet<Box<str>> = (0..keys.len())
            .filter(|&r| want(r) && keys.is_valid(r))
            .map(|r| keys.value(r).into())
            .collect();
        let admits = |i: &str| upto(i) && self.admission.admits(i);
        let found = self
            .slices()
            .rows_of_keys(slice, &admits, Arc::new(wanted))
            .await?;
        let found = arrow::compute::concat_batches(&self.schema, &found)?;
        let found_keys = crate::meta::record_keys_by_name(&found)?;
        let at: HashMap<&str, u32> = (0..found.num_rows())
            .map(|r| (found_keys.value(r), r as u32))
            .collect();
        let idx: UInt32Array = (0..keys.len())
            .map(|r| {
                (want(r) && keys.is_valid(r))
                    .then(|| at.get(keys.value(r)).copied())
                    .flatten()
            })
            .collect();
        image_at(&self.out, &found, &idx)
    }

    /// Merge-on-read: per key the commit's log files hold, the slice's record without and
    /// with the commit's blocks.
    async fn log_file_changes(
        &self,
        slice: &SliceFiles,
        logs: &[String],
        t: &str,
        rows: &mut ChangeRows,
    ) -> Result<()> {
        let key_schema = Arc::new(Schema::new(vec![Field::new(
            RECORD_KEY,
            arrow::datatypes::DataType::Utf8,
            true,
        )]));
        let this = |i: &str| i == t && self.admission.admits(i);
        let logged = read_slice_logs(&self.storage, logs, &this, &key_schema).await?;
        let mut keys: Vec<String> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        for c in &logged.contents {
            let ks: Vec<String> = match c {
                LogContent::Rows(b) => b
                    .column(0)
                    .as_string::<i32>()
                    .iter()
                    .flatten()
                    .map(str::to_string)
                    .collect(),
                LogContent::Partial(p) => p.keys.iter().flatten().map(str::to_string).collect(),
                LogContent::Deletes(d) => d.iter().map(|d| d.record_key.clone()).collect(),
            };
            for k in ks {
                if seen.insert(k.clone()) {
                    keys.push(k);
                }
            }
        }
        if keys.is_empty() {
            return Ok(());
        }
        let before_t = |i: &str| i < t && self.admission.admits(i);
        let upto_t = |i: &str| i <= t && self.admission.admits(i);
        let wanted: KeySet = Arc::new(seen.into_iter().map(String::into_boxed_str).collect());
        let before = self.keyed(slice, &before_t, wanted.clone()).await?;
        let after = self.keyed(slice, &upto_t, wanted).await?;
        let converter = RowConverter::new(
            self.schema
                .fields()
                .iter()
                .map(|f| SortField::new(f.data_type().clone()))
                .collect(),
        )?;
        let b_rows = converter.convert_columns(before.0.columns())?;
        let a_rows = converter.convert_columns(after.0.columns())?;
        let (mut ins, mut upd_b, mut upd_a, mut del) = (vec![], vec![], vec![], vec![]);
        for k in &keys {
            match (before.1.get(k.as_str()), after.1.get(k.as_str())) {
                (Some(&b), None) => del.push(b),
                (None, Some(&a)) => ins.push(a),
                (Some(&b), Some(&a)) if b_rows.row(b as usize) != a_rows.row(a as usize) => {
                    upd_b.push(b);
                    upd_a.push(a);
                }
                _ => {}
            }
        }
        let take = |batch: &RecordBatch, at: &[u32]| {
            arrow::compute::take_record_batch(batch, &UInt32Array::from(at.to_vec()))
        };
        if !del.is_empty() {
            rows.push(
                CdcOp::Delete,
                del.len(),
                Some(&take(&before.0, &del)?),
                None,
            )?;
        }
        if !upd_b.is_empty() {
            let (b, a) = (take(&before.0, &upd_b)?, take(&after.0, &upd_a)?);
            rows.push(CdcOp::Update, upd_b.len(), Some(&b), Some(&a))?;
        }
        if !ins.is_empty() {
            rows.push(CdcOp::Insert, ins.len(), None, Some(&take(&after.0, &ins)?))?;
        }
        Ok(())
    }

    /// The live records of `wanted` keys of `slice` under `admits`, and the row of each key.
    async fn keyed(
        &self,
        slice: &SliceFiles,
        admits: &(dyn Fn(&str) -> bool + Send + Sync),
        wanted: KeySet,
    ) -> Result<(RecordBatch, HashMap<String, u32>)> {
        let parts = self.slices().rows_of_keys(slice, admits, wanted).await?;
        let batch = arrow::compute::concat_batches(&self.schema, &parts)?;
        let keys = crate::meta::record_keys_by_name(&batch)?;
        let at = (0..batch.num_rows())
            .map(|r| (keys.value(r).to_string(), r as u32))
            .collect();
        Ok((batch, at))
    }
}

/// An image column: the data columns of `found`'s rows `idx` (NULL rows where `idx` is NULL).
fn image_at(out: &SchemaRef, found: &RecordBatch, idx: &UInt32Array) -> Result<StructArray> {
    let arrow::datatypes::DataType::Struct(fields) = out.field(2).data_type().clone() else {
        unreachable!("change_schema's before column is a struct")
    };
    let cols = fields
        .iter()
        .map(|f| {
            let col = match found.column_by_name(f.name()) {
                Some(c) => arrow::compute::take(c.as_ref(), idx, None)?,
                None => arrow::array::new_null_array(f.data_type(), idx.len()),
            };
            Ok(if col.data_type() == f.data_type() {
                col
            } else {
                arrow::compute::cast(&col, f.data_type())?
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(StructArray::try_new(fields, cols, idx.nulls().cloned())?)
}
