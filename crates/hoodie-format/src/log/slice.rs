//! The records of one file slice as a reader sees them: the base file merged with the log
//! blocks admitted, optionally only some keys' records.

use arrow::array::{RecordBatch, UInt32Array};
use arrow::compute::take_record_batch;
use arrow::datatypes::SchemaRef;
use futures::StreamExt;

use crate::base_file::stream_base_file;
use crate::error::Result;
use crate::log::apply::{LogApplier, Precedence};
use crate::log::keys::KeySource;
use crate::log::read::read_slice_logs;
use crate::storage::TableStorage;

/// A file slice to read: a base file and log files (paths relative to the table).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SliceFiles {
    /// The base file, if the slice has one.
    pub base: Option<String>,
    /// The log files, in slice order.
    pub logs: Vec<String>,
}

impl SliceFiles {
    /// A slice of a base file alone.
    pub fn base_only(rel: &str) -> Self {
        Self {
            base: Some(rel.to_string()),
            logs: Vec::new(),
        }
    }
}

/// How a slice is read: the table schema (meta columns first), its merge rules, the columns the
/// data files leave out, and which log blocks' instants are let in.
pub(crate) struct SliceReader<'a> {
    pub storage: &'a TableStorage,
    pub schema: &'a SchemaRef,
    pub rules: &'a Precedence,
    pub dropped: &'a [String],
}

/// Record keys, shared with the base file's row filter.
pub(crate) type KeySet = std::sync::Arc<crate::tasks::FastSet<Box<str>>>;

impl SliceReader<'_> {
    /// The live records of `slice` (those whose keys `wanted` accepts, when given), merged with
    /// the log blocks `admits` lets in.
    pub(crate) async fn rows(
        &self,
        slice: &SliceFiles,
        admits: &(dyn Fn(&str) -> bool + Send + Sync),
        wanted: Option<&(dyn Fn(&str) -> bool + Sync)>,
    ) -> Result<Vec<RecordBatch>> {
        self.read(slice, admits, wanted, None).await
    }

    /// The live records of `keys` in `slice`: the base file's other records are not decoded
    /// beyond their keys (a row filter on the record key column), which the merge does not
    /// need either, since only these keys' results are kept.
    pub(crate) async fn rows_of_keys(
        &self,
        slice: &SliceFiles,
        admits: &(dyn Fn(&str) -> bool + Send + Sync),
        keys: KeySet,
    ) -> Result<Vec<RecordBatch>> {
        let wanted = |k: &str| keys.contains(k);
        self.read(slice, admits, Some(&wanted), Some(keys.clone()))
            .await
    }

    async fn read(
        &self,
        slice: &SliceFiles,
        admits: &(dyn Fn(&str) -> bool + Send + Sync),
        wanted: Option<&(dyn Fn(&str) -> bool + Sync)>,
        filter: Option<KeySet>,
    ) -> Result<Vec<RecordBatch>> {
        let logs = read_slice_logs(self.storage, &slice.logs, admits, self.schema).await?;
        let mut applier = LogApplier::new(
            self.schema,
            logs.contents,
            &KeySource::Meta,
            self.rules.clone(),
        )?;
        let mut out = Vec::new();
        if let Some(base) = &slice.base {
            let mut stream = match filter {
                Some(keys) => crate::base_file::stream_base_file_keys(
                    self.storage,
                    base,
                    self.schema,
                    self.dropped,
                    keys,
                )
                .await?
                .boxed(),
                None => stream_base_file(self.storage, base, self.schema, self.dropped)
                    .await?
                    .0
                    .boxed(),
            };
            while let Some(b) = stream.next().await {
                keep(applier.apply_to_base(&b?)?, wanted, &mut out)?;
            }
        }
        if let Some(rest) = applier.remaining()? {
            keep(rest, wanted, &mut out)?;
        }
        Ok(out)
    }
}

/// Pushes the rows of `batch` whose key is wanted (all when `wanted` is `None`).
fn keep(
    batch: RecordBatch,
    wanted: Option<&(dyn Fn(&str) -> bool + Sync)>,
    out: &mut Vec<RecordBatch>,
) -> Result<()> {
    let Some(wanted) = wanted else {
        if batch.num_rows() > 0 {
            out.push(batch);
        }
        return Ok(());
    };
    let keys = crate::meta::record_keys_by_name(&batch)?;
    let rows: Vec<u32> = (0..batch.num_rows())
        .filter(|&r| wanted(keys.value(r)))
        .map(|r| r as u32)
        .collect();
    if !rows.is_empty() {
        out.push(take_record_batch(&batch, &UInt32Array::from(rows))?);
    }
    Ok(())
}
