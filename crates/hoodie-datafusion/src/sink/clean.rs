//! The table services after a commit, in Hudi's order: cleaning (`hoodie.clean.automatic`,
//! on by default as in Hudi) deletes the file slices the retention policy no longer needs once
//! the commit is durable, then archival (`hoodie.archive.automatic`, on by default) trims the
//! active timeline.

use datafusion::error::Result as DFResult;
use hoodie_format::archive::run_archive;
use hoodie_format::clean::run_clean;
use hoodie_format::write::spec::WriteSpec;
use hoodie_format::HudiTable;

use crate::error::df_err;

/// Cleans, then archives, `table` after a commit, as far as its options do so automatically.
pub(crate) async fn after_commit(table: &HudiTable, spec: &WriteSpec) -> DFResult<()> {
    if spec.clean.automatic {
        run_clean(table, &spec.clean).await.map_err(df_err)?;
    }
    if spec.archive.automatic {
        run_archive(table, &spec.archive, &spec.clean)
            .await
            .map_err(df_err)?;
    }
    Ok(())
}
