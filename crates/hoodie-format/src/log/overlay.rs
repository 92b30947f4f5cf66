//! A batch of base records with the changes the logs make to it laid over: rows replaced by
//! logged rows in place, deleted rows taken out.
//!
//! A merge usually replaces a small share of a batch's rows, so a fixed-width column is built
//! by copying the base values whole and writing the replaced ones over them; other columns
//! (strings, nested) are gathered row by row. A partial logged row replaces only the columns
//! it sets; the base row keeps its values in the others.

use std::borrow::Cow;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, ArrowPrimitiveType, AsArray, BooleanBufferBuilder, PrimitiveArray,
};
use arrow::buffer::NullBuffer;
use arrow::compute::{filter_record_batch, interleave};
use arrow::datatypes::*;
use arrow::record_batch::RecordBatch;

use super::partial::RowMasks;
use crate::error::Result;

/// How a batch of base rows changes: the rows a logged row replaces (`(base row, logged
/// row)`) and the rows deleted, each in base order.
#[derive(Debug, Default)]
pub(crate) struct Overlay {
    pub replaced: Vec<(usize, usize)>,
    pub deleted: Vec<usize>,
}

impl Overlay {
    /// Whether the logs change no row.
    pub fn is_empty(&self) -> bool {
        self.replaced.is_empty() && self.deleted.is_empty()
    }

    /// Where each merged row of `n` base rows comes from: `(0, r)` base row `r`, `(1, l)`
    /// logged row `l`, deleted rows left out.
    pub fn positions(&self, n: usize) -> Vec<(usize, usize)> {
        positions_of(&self.replaced, &self.deleted, n)
    }

    /// `base` with the changes laid over, `logged` holding the logged rows (same columns),
    /// `masks` which columns each sets.
    pub fn apply(
        &self,
        base: &RecordBatch,
        logged: &RecordBatch,
        masks: &RowMasks,
    ) -> Result<RecordBatch> {
        let mut gathered: Option<Vec<(usize, usize)>> = None;
        let mut columns = Vec::with_capacity(base.num_columns());
        for (c, (b, l)) in base.columns().iter().zip(logged.columns()).enumerate() {
            let replaced = self.replacing(masks, c);
            let column = match (replace_fixed(b, l, &replaced), &replaced) {
                (Some(column), _) => column,
                // every row, deleted ones too: they are filtered out below with the rest
                (None, Cow::Borrowed(_)) => {
                    let at = gathered.get_or_insert_with(|| {
                        let mut all = positions_of(&self.replaced, &[], base.num_rows());
                        all.shrink_to_fit();
                        all
                    });
                    interleave(&[b.as_ref(), l.as_ref()], at)?
                }
                (None, Cow::Owned(some)) => {
                    let at = positions_of(some, &[], base.num_rows());
                    interleave(&[b.as_ref(), l.as_ref()], &at)?
                }
            };
            columns.push(column);
        }
        let replaced = RecordBatch::try_new_with_options(
            base.schema(),
            columns,
            &arrow::array::RecordBatchOptions::new().with_row_count(Some(base.num_rows())),
        )?;
        if self.deleted.is_empty() {
            return Ok(replaced);
        }
        let mut keep = BooleanBufferBuilder::new(base.num_rows());
        keep.append_n(base.num_rows(), true);
        for &d in &self.deleted {
            keep.set_bit(d, false);
        }
        let keep = arrow::array::BooleanArray::new(keep.finish(), None);
        Ok(filter_record_batch(&replaced, &keep)?)
    }
}

impl Overlay {
    /// The replacements of column `col`: those whose logged row sets it (all of them, borrowed,
    /// when every one does).
    fn replacing(&self, masks: &RowMasks, col: usize) -> Cow<'_, [(usize, usize)]> {
        if !masks.any_partial() || self.replaced.iter().all(|&(_, l)| masks.sets(l, col)) {
            return Cow::Borrowed(&self.replaced);
        }
        Cow::Owned(
            self.replaced
                .iter()
                .copied()
                .filter(|&(_, l)| masks.sets(l, col))
                .collect(),
        )
    }
}

/// Where each merged row of `n` base rows comes from: `(0, r)` base row `r`, `(1, l)` logged
/// row `l` (`replaced` pairs, in base order), the `deleted` rows (in base order) left out.
fn positions_of(replaced: &[(usize, usize)], deleted: &[usize], n: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(n.saturating_sub(deleted.len()));
    let mut replaced = replaced.iter().peekable();
    let mut deleted = deleted.iter().peekable();
    for r in 0..n {
        if deleted.next_if(|&&d| d == r).is_some() {
            continue;
        }
        match replaced.next_if(|&&(b, _)| b == r) {
            Some(&(_, l)) => out.push((1, l)),
            None => out.push((0, r)),
        }
    }
    out
}

/// `base` with rows replaced by rows of `logged`, when both are the same fixed-width type.
fn replace_fixed(
    base: &ArrayRef,
    logged: &ArrayRef,
    replaced: &[(usize, usize)],
) -> Option<ArrayRef> {
    if base.data_type() != logged.data_type() {
        return None;
    }
    macro_rules! fixed {
        ($t:ty) => {
            Some(replace_primitive(
                base.as_primitive::<$t>(),
                logged.as_primitive::<$t>(),
                replaced,
            ))
        };
    }
    match base.data_type() {
        DataType::Int8 => fixed!(Int8Type),
        DataType::Int16 => fixed!(Int16Type),
        DataType::Int32 => fixed!(Int32Type),
        DataType::Int64 => fixed!(Int64Type),
        DataType::UInt8 => fixed!(UInt8Type),
        DataType::UInt16 => fixed!(UInt16Type),
        DataType::UInt32 => fixed!(UInt32Type),
        DataType::UInt64 => fixed!(UInt64Type),
        DataType::Float32 => fixed!(Float32Type),
        DataType::Float64 => fixed!(Float64Type),
        DataType::Date32 => fixed!(Date32Type),
        DataType::Date64 => fixed!(Date64Type),
        DataType::Decimal128(_, _) => fixed!(Decimal128Type),
        DataType::Timestamp(TimeUnit::Second, _) => fixed!(TimestampSecondType),
        DataType::Timestamp(TimeUnit::Millisecond, _) => fixed!(TimestampMillisecondType),
        DataType::Timestamp(TimeUnit::Microsecond, _) => fixed!(TimestampMicrosecondType),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => fixed!(TimestampNanosecondType),
        _ => None,
    }
}

fn replace_primitive<T: ArrowPrimitiveType>(
    base: &PrimitiveArray<T>,
    logged: &PrimitiveArray<T>,
    replaced: &[(usize, usize)],
) -> ArrayRef {
    let mut values = base.values().to_vec();
    let from = logged.values();
    for &(r, l) in replaced {
        values[r] = from[l];
    }
    let nulls = match (base.nulls(), logged.nulls()) {
        (None, None) => None,
        (b, _) => {
            let mut valid = BooleanBufferBuilder::new(base.len());
            match b {
                Some(b) => valid.append_buffer(b.inner()),
                None => valid.append_n(base.len(), true),
            }
            for &(r, l) in replaced {
                valid.set_bit(r, logged.is_valid(l));
            }
            Some(NullBuffer::new(valid.finish()))
        }
    };
    Arc::new(
        PrimitiveArray::<T>::new(values.into(), nulls).with_data_type(base.data_type().clone()),
    )
}

#[cfg(test)]
mod tests {
    use arrow::array::{Int64Array, StringArray};
    use arrow::compute::interleave_record_batch;

    use super::*;

    fn batch(ids: Vec<Option<i64>>, names: Vec<Option<&str>>) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, true),
            Field::new("name", DataType::Utf8, true),
        ]));
        RecordBatch::try_new(
            schema,
            vec![
                Arc::new(Int64Array::from(ids)),
                Arc::new(StringArray::from(names)),
            ],
        )
        .unwrap()
    }

    #[test]
    fn an_overlay_gives_the_rows_a_gather_by_positions_gives() {
        let base = batch(
            vec![Some(1), None, Some(3), Some(4), Some(5), None],
            vec![Some("a"), Some("b"), None, Some("d"), Some("e"), Some("f")],
        );
        let logged = batch(
            vec![Some(10), None, Some(30)],
            vec![None, Some("y"), Some("z")],
        );
        let cases = [
            Overlay::default(),
            Overlay {
                replaced: vec![(0, 1), (2, 2), (5, 0)],
                deleted: vec![],
            },
            Overlay {
                replaced: vec![(1, 0), (4, 1)],
                deleted: vec![0, 3, 5],
            },
            Overlay {
                replaced: vec![],
                deleted: vec![0, 1, 2, 3, 4, 5],
            },
        ];
        for ov in cases {
            let want = interleave_record_batch(&[&base, &logged], &ov.positions(6)).unwrap();
            let whole = RowMasks::default();
            assert_eq!(ov.apply(&base, &logged, &whole).unwrap(), want, "{ov:?}");
        }
        // a sliced base (offsets into its buffers)
        let sliced = batch(
            vec![Some(0), Some(1), None, Some(3)],
            vec![None, Some("b"), Some("c"), None],
        )
        .slice(1, 3);
        let ov = Overlay {
            replaced: vec![(1, 2)],
            deleted: vec![2],
        };
        let got = ov.apply(&sliced, &logged, &RowMasks::default()).unwrap();
        assert_eq!(
            got,
            batch(vec![Some(1), Some(30)], vec![Some("b"), Some("z")])
        );
    }

    #[test]
    fn positions_leave_deleted_rows_out_and_point_replaced_ones_into_the_logs() {
        let ov = Overlay {
            replaced: vec![(1, 7), (3, 0)],
            deleted: vec![0, 4],
        };
        assert_eq!(ov.positions(5), vec![(1, 7), (0, 2), (1, 0)]);
        assert!(Overlay::default().is_empty());
        assert_eq!(Overlay::default().positions(2), vec![(0, 0), (0, 1)]);
    }
}
