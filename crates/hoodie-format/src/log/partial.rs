//! Partial-update data blocks (header `IS_PARTIAL`, table version 8 and later): Spark's MERGE
//! INTO on a merge-on-read table logs an update as the meta columns and the columns it assigns
//! only, the block's SCHEMA header being that partial schema. A partial record replaces the
//! columns it holds in the version of the record it meets (the base record or an earlier
//! logged version); the others keep that version's values (Hudi's `KEEP_VALUES` partial merge).
//!
//! A partial block is decoded into the reader's schema like any data block, the columns it
//! does not hold NULL, and comes with its column mask and its records' keys (the key columns
//! are usually not assigned, so the key is the `_hoodie_record_key` meta column).

use std::sync::Arc;

use arrow::array::{Array, AsArray, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use crate::error::{FormatError, Result};
use crate::meta::RECORD_KEY;

/// The records of one partial-update block.
#[derive(Debug, Clone)]
pub struct PartialRows {
    /// The records in the reader's schema, every column nullable (see [`nullable`]); the
    /// columns the block does not set are NULL.
    pub rows: RecordBatch,
    /// Per column of the reader's schema, whether the block sets it.
    pub set: Arc<[bool]>,
    /// Each record's key (its `_hoodie_record_key`).
    pub keys: StringArray,
}

/// `schema` with every top-level field nullable: the schema partial records are held in,
/// since the columns a block does not set are NULL until the merge fills them.
pub fn nullable(schema: &SchemaRef) -> SchemaRef {
    if schema.fields().iter().all(|f| f.is_nullable()) {
        return schema.clone();
    }
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| f.as_ref().clone().with_nullable(true))
        .collect();
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// The schema a partial block is decoded into: `schema` made nullable, with
/// `_hoodie_record_key` appended when the reader does not read it (the key of every partial
/// record comes from it).
pub(crate) fn decoding_schema(schema: &SchemaRef) -> SchemaRef {
    let relaxed = nullable(schema);
    if relaxed.index_of(RECORD_KEY).is_ok() {
        return relaxed;
    }
    let mut fields: Vec<Field> = relaxed
        .fields()
        .iter()
        .map(|f| f.as_ref().clone())
        .collect();
    fields.push(Field::new(RECORD_KEY, DataType::Utf8, true));
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// The partial records of a block decoded into [`decoding_schema`] of `schema` (`batch`, and
/// `filled`, which of its columns the block's schema holds), split into the reader's columns,
/// the mask and the keys. A block without `_hoodie_record_key`, or a record whose key is NULL,
/// is refused.
pub(crate) fn split_partial(
    schema: &SchemaRef,
    batch: RecordBatch,
    filled: &[bool],
    rel: &str,
) -> Result<PartialRows> {
    let corrupt = |reason: &str| FormatError::Corrupt {
        path: rel.to_string(),
        reason: reason.to_string(),
    };
    let key_at = batch
        .schema()
        .index_of(RECORD_KEY)
        .map_err(|_| corrupt("a partial-update block read without _hoodie_record_key"))?;
    if !filled.get(key_at).copied().unwrap_or(false) {
        return Err(corrupt(
            "a partial-update block whose schema has no _hoodie_record_key",
        ));
    }
    let keys = match batch.column(key_at).data_type() {
        DataType::Utf8 => batch.column(key_at).as_string::<i32>().clone(),
        _ => arrow::compute::cast(batch.column(key_at), &DataType::Utf8)?
            .as_string::<i32>()
            .clone(),
    };
    if keys.null_count() > 0 {
        return Err(FormatError::NullRecordKey {
            field: RECORD_KEY.into(),
            value: "null",
        });
    }
    let width = schema.fields().len();
    let rows = batch.project(&(0..width).collect::<Vec<_>>())?;
    let set: Arc<[bool]> = filled.iter().take(width).copied().collect();
    Ok(PartialRows { rows, set, keys })
}

/// The columns either of two rows sets (`None`: a whole record, or every column).
pub(crate) fn union(a: Option<&Arc<[bool]>>, b: Option<&Arc<[bool]>>) -> Option<Arc<[bool]>> {
    let (a, b) = (a?, b?);
    let u: Arc<[bool]> = a.iter().zip(b.iter()).map(|(x, y)| *x || *y).collect();
    (!u.iter().all(|&s| s)).then_some(u)
}

/// Which columns each logged row sets: every column (a whole record) or those of a partial
/// block's mask (or of the merge of partial records). Empty (no cost) while every row is whole.
#[derive(Debug, Clone, Default)]
pub(crate) struct RowMasks {
    /// The distinct masks of partial rows.
    masks: Vec<Arc<[bool]>>,
    /// Per row: 0 for a whole record, `i` for `masks[i - 1]`; empty when every row is whole.
    of_row: Vec<u32>,
}

impl RowMasks {
    /// Whether some row is partial.
    pub fn any_partial(&self) -> bool {
        !self.masks.is_empty()
    }

    /// Appends `n` rows, whole (`None`) or setting the columns of `mask`.
    pub fn push(&mut self, mask: Option<&Arc<[bool]>>, n: usize, rows_before: usize) {
        let id = match mask {
            None => 0,
            Some(m) if m.iter().all(|&s| s) => 0,
            Some(m) => self.intern(m),
        };
        if id == 0 && self.of_row.is_empty() {
            return; // every row so far is whole: nothing to record
        }
        if self.of_row.len() < rows_before {
            self.of_row.resize(rows_before, 0);
        }
        self.of_row.extend(std::iter::repeat_n(id, n));
    }

    /// The mask of `row` (`None`: a whole record).
    pub fn mask(&self, row: usize) -> Option<&Arc<[bool]>> {
        match self.of_row.get(row).copied().unwrap_or(0) {
            0 => None,
            i => self.masks.get(i as usize - 1),
        }
    }

    /// Whether logged row `row` sets column `col`.
    pub fn sets(&self, row: usize, col: usize) -> bool {
        self.mask(row)
            .is_none_or(|m| m.get(col).copied().unwrap_or(false))
    }

    fn intern(&mut self, mask: &Arc<[bool]>) -> u32 {
        let at = match self.masks.iter().position(|m| m == mask) {
            Some(i) => i,
            None => {
                self.masks.push(mask.clone());
                self.masks.len() - 1
            }
        };
        at as u32 + 1
    }

    /// Bytes held.
    pub fn memory_size(&self) -> usize {
        self.of_row.capacity() * 4 + self.masks.iter().map(|m| m.len() + 16).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_record_nothing_until_a_partial_row_and_answer_per_column() {
        let mut m = RowMasks::default();
        m.push(None, 3, 0);
        assert!(!m.any_partial());
        assert!(m.sets(1, 5));
        let mask: Arc<[bool]> = Arc::from(vec![true, false, true]);
        m.push(Some(&mask), 2, 3);
        m.push(None, 1, 5);
        assert!(m.any_partial());
        let partial = |r: usize| m.mask(r).is_some();
        assert!(!partial(0) && partial(3) && partial(4) && !partial(5));
        assert!(m.sets(3, 0) && !m.sets(3, 1) && m.sets(5, 1));
        let other: Arc<[bool]> = Arc::from(vec![false, true, false]);
        m.push(Some(&other), 1, 6);
        assert_eq!(
            union(m.mask(3), m.mask(6)),
            None,
            "together they set every column"
        );
        assert_eq!(
            union(m.mask(3), m.mask(4)).as_deref(),
            Some(&[true, false, true][..])
        );
        assert_eq!(
            union(m.mask(3), m.mask(5)),
            None,
            "a whole row covers everything"
        );
        let full: Arc<[bool]> = Arc::from(vec![true, true, true]);
        m.push(Some(&full), 1, 7);
        assert!(m.mask(7).is_none(), "a mask of every column is a whole row");
    }

    #[test]
    fn the_decoding_schema_is_nullable_and_reads_the_record_key() {
        let schema = Arc::new(Schema::new(vec![Field::new("id", DataType::Int32, false)]));
        let d = decoding_schema(&schema);
        assert_eq!(d.fields().len(), 2);
        assert!(d.field(0).is_nullable());
        assert_eq!(d.field(1).name(), RECORD_KEY);
    }
}
