//! Markers: before a write creates a data file it records `.hoodie/.temp/<instant>/<file>.marker.<TYPE>`,
//! so that a rollback finds every file a failed write may have left.

use crate::error::Result;
use crate::storage::TableStorage;

/// Folder of the markers of `instant`.
pub fn marker_dir(instant: &str) -> String {
    format!(".hoodie/.temp/{instant}")
}

/// Deletes every object under `rel`.
pub(crate) async fn delete_prefix(storage: &TableStorage, rel: &str) -> Result<()> {
    for m in storage.list_all(rel).await? {
        let r = storage.relative(&m.location);
        storage.delete(&r).await?;
    }
    Ok(())
}
