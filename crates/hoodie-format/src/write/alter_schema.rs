//! `ALTER TABLE ... ADD COLUMNS`: a commit that writes no file and records the table's new
//! schema (operation `ALTER_SCHEMA`, as Hudi's Spark command commits it). Readers take the
//! added columns from the latest commit's schema; files written before read them as NULL.

use crate::error::Result;
use crate::table::HudiTable;
use crate::timeline::commit_metadata::CommitMetadata;
use crate::write::transaction::{Transaction, WriteOperation};

/// Commits `avro_schema` (the new schema, without meta fields) as the table's schema: a
/// `commit` (copy-on-write) or `deltacommit` (merge-on-read) with no write stats. A failed
/// write left behind is rolled back first, as before any write. It touches no file group, so
/// it never conflicts with another writer.
pub async fn commit_schema(
    table: &HudiTable,
    avro_schema: String,
    concurrency: &crate::concurrency::ConcurrencySpec,
) -> Result<CommitMetadata> {
    Transaction::begin_with(table, WriteOperation::AlterSchema, concurrency, None)
        .await?
        .commit(avro_schema)
        .await
}
