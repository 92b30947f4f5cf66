//! INSERT OVERWRITE: new file groups for the input, and a replacecommit that replaces the file
//! groups of the overwritten partitions (or of the whole table).

use std::collections::BTreeSet;

use arrow::datatypes::SchemaRef;

use crate::error::Result;
use crate::keygen::KeyGenerator;
use crate::write::incoming::Incoming;
use crate::write::insert::{write_inserts, InsertResult};
use crate::write::spec::{OverwriteScope, WriteKind, WriteSpec};
use crate::write::transaction::Transaction;

/// Writes `incoming` as new file groups and replaces the file groups the scope of `options`
/// (an overwrite) names.
pub async fn write_overwrite(
    txn: &mut Transaction,
    keygen: &KeyGenerator,
    schema: &SchemaRef,
    incoming: Incoming,
    options: &WriteSpec,
) -> Result<InsertResult> {
    let WriteKind::Overwrite(scope) = &options.kind else {
        return Err(crate::error::FormatError::NotAnOverwrite {
            operation: options.operation.java_name().to_string(),
        });
    };
    let input_partitions: BTreeSet<String> = incoming.paths().values().iter().cloned().collect();
    let table = txn.table().clone();
    let timeline = txn.timeline().await?;
    let slices = table.file_slices(&timeline, None).await?;
    let result = write_inserts(txn.files(), keygen, schema, incoming, options).await?;
    for s in slices {
        let p = s.partition_path.as_str();
        let replace = match scope {
            OverwriteScope::Table => true,
            OverwriteScope::InputPartitions => input_partitions.contains(p),
            OverwriteScope::Prefixes(prefixes) => prefixes
                .iter()
                .any(|x| p == x || p.starts_with(&format!("{x}/"))),
        };
        if replace {
            txn.replace_file_group(&s.partition_path, &s.file_id);
        }
    }
    Ok(result)
}
