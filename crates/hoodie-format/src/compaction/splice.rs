//! Compaction by splicing. When a slice's logs delete nothing (no delete block, no
//! `_hoodie_is_deleted` column), every base record stays in the new base file where it was,
//! replaced by its logged version or not, and the logged records of new keys follow: the
//! compacted file is the base file spliced ([`crate::write::splice`]). Only the columns whose
//! values some logged record changes, and the meta columns a compaction restamps (commit time
//! and sequence number of the records taken from the logs, the file name), are encoded again;
//! the other column chunks, and the key index, are carried over from the base file.

use arrow::array::{ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{FieldRef, SchemaRef};

use crate::error::{FormatError, Result};
use crate::field_path::FieldPath;
use crate::log::apply::LogApplier;
use crate::log::keys::RecordKeys;
use crate::log::read::LogContent;
use crate::meta::{RECORD_KEY, RECORD_KEY_INDEX};
use crate::write::splice::{splice_file, SpliceFiles, SplicePlan, SpliceRows, Spliceable};
use crate::write::writer::WrittenFile;

/// Whether logs with `contents` can be compacted into their base file by splicing: they
/// delete no record and hold no partial record (whose merge takes columns from both the
/// logged and the base record).
pub(super) fn spliceable(contents: &[LogContent]) -> bool {
    contents.iter().all(|c| match c {
        LogContent::Deletes(d) => d.is_empty(),
        LogContent::Partial(p) => p.rows.num_rows() == 0,
        LogContent::Rows(_) => true,
    })
}

/// What a spliced compaction of one slice is given.
pub(super) struct SliceSplice<'a> {
    /// The slice's base file (`old_rel`) and the new one.
    pub files: SpliceFiles<'a>,
    /// The ordering field under event-time ordering.
    pub ordering: Option<&'a FieldPath>,
    /// The new base file's name, on every row.
    pub file_name: &'a str,
}

/// Compacts the slice by splicing its base file, the merge decided by `applier` (built over
/// the logs with the stored record keys, [`crate::log::keys::KeySource::Meta`]). `None` when
/// the base file cannot be spliced: nothing was written, and `applier` is untouched.
pub(super) async fn splice_slice(
    input: &SliceSplice<'_>,
    applier: &mut LogApplier,
) -> Result<Option<WrittenFile>> {
    let files = &input.files;
    if applier.has_partial_rows() {
        return Ok(None);
    }
    let Some(old) = Spliceable::open(files).await? else {
        return Ok(None);
    };
    // logged records of keys the base file lacks are appended: they extend its key index
    let Some(latest) = applier.latest_rows().filter(|_| old.extendable()) else {
        return Ok(None);
    };
    let fields = files.schema.fields();
    let candidates: Vec<usize> = (0..fields.len())
        .filter(|&c| !crate::schema::is_meta_column(fields[c].name()))
        .collect();
    let (differing, _) = crate::write::column_diff::differing_columns(
        files.storage,
        files.old_rel,
        old.footer.clone(),
        files.schema,
        applier.logged_rows(),
        &latest,
        &candidates,
        false,
    )
    .await?;
    drop(latest);
    let changed: Vec<String> = differing
        .iter()
        .map(|&c| fields[c].name().clone())
        .collect();
    let ordering = input.ordering.map(|p| fields[p.top()].name().as_str());
    let read: Vec<&str> = std::iter::once(RECORD_KEY).chain(ordering).collect();
    let plan = SplicePlan::new(files.schema, &changed, &read);
    let mut rows = LogRows {
        applier,
        schema: files.schema,
        ordering: input.ordering,
        file_name: input.file_name,
        path: files.old_rel,
    };
    let written = splice_file(files, old, &plan, &mut rows).await?;
    Ok(Some(WrittenFile {
        rel_path: files.new_rel.to_string(),
        size: written.size,
        rows: written.rows,
    }))
}

/// The rows of a spliced compaction: each base record or the logged record that wins over it,
/// then the logged records of new keys. Records keep their own meta columns but the file name.
struct LogRows<'a> {
    applier: &'a mut LogApplier,
    schema: &'a SchemaRef,
    ordering: Option<&'a FieldPath>,
    file_name: &'a str,
    path: &'a str,
}

impl SpliceRows for LogRows<'_> {
    fn merge(&mut self, plan: &SplicePlan, old: &RecordBatch) -> Result<Vec<(FieldRef, ArrayRef)>> {
        let keys = plan.decoded(self.schema, old, RECORD_KEY_INDEX)?;
        let keys = RecordKeys::Text(keys.as_string::<i32>().clone());
        let ordering = match self.ordering {
            Some(path) => Some(path.values(&plan.decoded(self.schema, old, path.top())?)?),
            None => None,
        };
        let positions = self.applier.positions(&keys, ordering.as_deref())?;
        if positions
            .as_ref()
            .is_some_and(|p| p.len() != old.num_rows())
        {
            return Err(FormatError::Corrupt {
                path: self.path.to_string(),
                reason: "a compaction of logs without deletes took a record out".into(),
            });
        }
        let logged = self.applier.logged_rows();
        let replaced = positions.as_ref().map(|p| (logged, p.as_slice()));
        plan.columns(self.schema, old, self.file_name, replaced)
    }

    fn appended(&mut self) -> Result<Option<RecordBatch>> {
        match self.applier.remaining()? {
            Some(rest) => Ok(Some(crate::meta::with_file_name(&rest, self.file_name)?)),
            None => Ok(None),
        }
    }
}
