//! Cleaning after a commit (`hoodie.clean.automatic`, on by default as in Hudi): the file
//! slices the retention policy no longer needs are deleted once the commit is durable.

use datafusion::error::Result as DFResult;
use hoodie_format::clean::run_clean;
use hoodie_format::write::spec::WriteSpec;
use hoodie_format::HudiTable;

use crate::error::df_err;

/// Cleans `table` after a commit, when its options clean automatically.
pub(crate) async fn after_commit(table: &HudiTable, spec: &WriteSpec) -> DFResult<()> {
    if spec.clean.automatic {
        run_clean(table, &spec.clean).await.map_err(df_err)?;
    }
    Ok(())
}
