//! The table services after a commit, in Hudi's order: cleaning (`hoodie.clean.automatic`,
//! on by default as in Hudi) deletes the file slices the retention policy no longer needs once
//! the commit is durable, then archival (`hoodie.archive.automatic`, on by default) trims the
//! active timeline.

use datafusion::error::Result as DFResult;
use hoodie_format::archive::run_archive_on;
use hoodie_format::clean::run_clean_on;
use hoodie_format::timeline::Timeline;
use hoodie_format::write::spec::WriteSpec;
use hoodie_format::HudiTable;

use crate::error::df_err;

/// Cleans, then archives, `table` after a commit, as far as its options do so automatically;
/// `timeline` is the table's timeline after the commit, which the clean extends with its own
/// instant for the archival.
pub(crate) async fn after_commit(
    table: &HudiTable,
    spec: &WriteSpec,
    timeline: Timeline,
) -> DFResult<()> {
    let mut timeline = timeline;
    if spec.clean.automatic {
        timeline = run_clean_on(table, &spec.clean, timeline)
            .await
            .map_err(df_err)?
            .1;
    }
    if spec.archive.automatic {
        run_archive_on(table, &spec.archive, &spec.clean, timeline)
            .await
            .map_err(df_err)?;
    }
    Ok(())
}
