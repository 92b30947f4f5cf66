//! Whether the merge of a slice needs its base file's ordering column.
//!
//! Under event-time ordering a base record wins against a logged change whose ordering value
//! is lower. When every logged change's value is at least the largest value the base file's
//! Parquet statistics give for the column, no base record can win, so the column need not be
//! read: the merge compares the logged changes with NULL instead, which is below every value,
//! and reaches the same outcome (an UPDATE's log usually carries newer values than the file it
//! changes, so a scan after it skips a column of every base file).

use arrow::datatypes::{DataType, Schema};
use parquet::basic::{ConvertedType, LogicalType, Type as PhysicalType};
use parquet::file::metadata::ParquetMetaData;
use parquet::file::statistics::Statistics;

use super::apply::LogApplier;

/// The ordering column of `schema` that the merge by `applier` does not need from the base
/// file whose footer is `footer`, if it does not. Only for a top-level integer column whose
/// values the file stores as plain signed integers with statistics in every row group, and that
/// is nullable (the column left out reads as NULL).
pub fn unneeded_base_ordering(
    applier: &LogApplier,
    schema: &Schema,
    footer: &ParquetMetaData,
) -> Option<String> {
    let (top, floor) = applier.logged_int_floor()?;
    let field = schema.field(top);
    if !field.is_nullable() || !matches!(field.data_type(), DataType::Int32 | DataType::Int64) {
        return None;
    }
    let max = base_max(footer, field.name())?;
    (max.is_none_or(|max| floor >= max)).then(|| field.name().clone())
}

/// The largest value of top-level column `name` in the file: `Some(None)` when every value
/// is NULL, `None` when the statistics cannot tell.
fn base_max(footer: &ParquetMetaData, name: &str) -> Option<Option<i64>> {
    let descr = footer.file_metadata().schema_descr();
    let c = descr
        .columns()
        .iter()
        .position(|c| c.path().parts() == [name])?;
    let col = descr.column(c);
    let signed = match col.logical_type_ref() {
        None => true,
        Some(LogicalType::Integer(int)) => int.is_signed,
        Some(_) => false,
    };
    let plain = matches!(
        col.converted_type(),
        ConvertedType::NONE | ConvertedType::INT_32 | ConvertedType::INT_64
    );
    if !signed
        || !plain
        || !matches!(
            col.physical_type(),
            PhysicalType::INT32 | PhysicalType::INT64
        )
    {
        return None;
    }
    let mut max: Option<i64> = None;
    for rg in footer.row_groups() {
        let stats = rg.column(c).statistics()?;
        // an inexact maximum is still an upper bound
        let rg_max = match stats {
            Statistics::Int32(s) => s.max_opt().map(|&v| v as i64),
            Statistics::Int64(s) => s.max_opt().copied(),
            _ => return None,
        };
        match rg_max {
            Some(v) => max = Some(max.map_or(v, |m| m.max(v))),
            None if stats.null_count_opt() == Some(rg.num_rows() as u64) => {}
            None => return None,
        }
    }
    Some(max)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
    use arrow::datatypes::{Field, SchemaRef};
    use parquet::arrow::ArrowWriter;
    use parquet::file::metadata::ParquetMetaDataReader;

    use super::*;
    use crate::log::apply::Precedence;
    use crate::log::delete::{DeleteRecord, OrderingValue};
    use crate::log::keys::KeySource;
    use crate::log::read::LogContent;
    use crate::table_config::MergeMode;

    fn schema(ts: DataType, nullable: bool) -> SchemaRef {
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("ts", ts, nullable),
        ]))
    }

    fn batch(schema: &SchemaRef, ids: &[i64], ts: ArrayRef) -> RecordBatch {
        RecordBatch::try_new(
            schema.clone(),
            vec![Arc::new(Int64Array::from(ids.to_vec())), ts],
        )
        .unwrap()
    }

    /// The footer of a base file of `rows`, in row groups of two rows.
    fn footer(rows: &RecordBatch) -> ParquetMetaData {
        let mut bytes = Vec::new();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(2))
            .build();
        let mut w = ArrowWriter::try_new(&mut bytes, rows.schema(), Some(props)).unwrap();
        w.write(rows).unwrap();
        w.close().unwrap();
        ParquetMetaDataReader::new()
            .parse_and_finish(&bytes::Bytes::from(bytes))
            .unwrap()
    }

    fn del(id: i64, ordering: OrderingValue) -> DeleteRecord {
        DeleteRecord {
            record_key: id.to_string(),
            partition_path: String::new(),
            ordering,
        }
    }

    fn unneeded(
        schema: &SchemaRef,
        mode: MergeMode,
        logs: Vec<LogContent>,
        base: &RecordBatch,
    ) -> Option<String> {
        let rules = Precedence::new(schema, mode, Some("ts"));
        let keys = KeySource::IntColumn("id".into());
        let applier = LogApplier::new(schema, logs, &keys, rules).unwrap();
        unneeded_base_ordering(&applier, schema, &footer(base))
    }

    fn ts(v: &[Option<i64>]) -> ArrayRef {
        Arc::new(Int64Array::from(v.to_vec()))
    }

    #[test]
    fn logs_at_or_above_the_base_maximum_leave_the_base_ordering_unread() {
        let s = schema(DataType::Int64, true);
        // the maximum (7) is in the second row group; a NULL is below every value
        let base = batch(&s, &[1, 2, 3, 4], ts(&[Some(5), None, Some(7), Some(1)]));
        let logged = |v: &[Option<i64>]| LogContent::Rows(batch(&s, &[2, 9], ts(v)));
        let event = MergeMode::EventTimeOrdering;
        let keep = |logs| unneeded(&s, event, logs, &base);
        assert_eq!(keep(vec![logged(&[Some(7), Some(8)])]), Some("ts".into()));
        // a delete without an ordering value wins whatever the base holds
        let default_delete = LogContent::Deletes(vec![del(1, OrderingValue::Int(0))]);
        assert_eq!(
            keep(vec![logged(&[Some(9), Some(9)]), default_delete]),
            Some("ts".into())
        );
        // a logged value below the base maximum, a NULL one, an older delete: the base
        // values are needed
        assert_eq!(keep(vec![logged(&[Some(6), Some(8)])]), None);
        assert_eq!(keep(vec![logged(&[Some(8), None])]), None);
        let older_delete = LogContent::Deletes(vec![del(3, OrderingValue::Long(6))]);
        assert_eq!(keep(vec![logged(&[Some(9), Some(9)]), older_delete]), None);
        // commit-time ordering reads no ordering column at all
        let commit = unneeded(
            &s,
            MergeMode::CommitTimeOrdering,
            vec![logged(&[Some(9), Some(9)])],
            &base,
        );
        assert_eq!(commit, None);
    }

    #[test]
    fn an_int_ordering_column_compares_by_its_statistics_too() {
        let s = schema(DataType::Int32, true);
        let ints = |v: &[i32]| -> ArrayRef { Arc::new(arrow::array::Int32Array::from(v.to_vec())) };
        let base = batch(&s, &[1, 2, 3], ints(&[-4, 30, 2]));
        let event = MergeMode::EventTimeOrdering;
        let logs = |v: &[i32]| vec![LogContent::Rows(batch(&s, &[2, 3], ints(v)))];
        assert_eq!(
            unneeded(&s, event, logs(&[30, 31]), &base),
            Some("ts".into())
        );
        assert_eq!(unneeded(&s, event, logs(&[29, 31]), &base), None);
    }

    #[test]
    fn an_all_null_base_column_is_not_needed() {
        let s = schema(DataType::Int64, true);
        let base = batch(&s, &[1, 2, 3], ts(&[None, None, None]));
        let logs = vec![LogContent::Rows(batch(&s, &[2], ts(&[Some(-5)])))];
        let got = unneeded(&s, MergeMode::EventTimeOrdering, logs, &base);
        assert_eq!(got, Some("ts".into()));
    }

    #[test]
    fn other_types_and_non_nullable_columns_are_always_read() {
        let text = schema(DataType::Utf8, true);
        let strings = |v: &str| -> ArrayRef { Arc::new(StringArray::from(vec![v])) };
        let base = batch(&text, &[1], strings("a"));
        let logs = vec![LogContent::Rows(batch(&text, &[1], strings("b")))];
        assert_eq!(
            unneeded(&text, MergeMode::EventTimeOrdering, logs, &base),
            None
        );
        let required = schema(DataType::Int64, false);
        let base = batch(&required, &[1], ts(&[Some(1)]));
        let logs = vec![LogContent::Rows(batch(&required, &[1], ts(&[Some(2)])))];
        assert_eq!(
            unneeded(&required, MergeMode::EventTimeOrdering, logs, &base),
            None
        );
    }
}
