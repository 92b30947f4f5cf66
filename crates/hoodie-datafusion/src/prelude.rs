//! What a DataFusion user needs to run Hudi tables: `use hoodie_datafusion::prelude::*;`.

pub use crate::context::{HoodieConfig, HoodieContext, StatementOutput};
pub use crate::session::install::{HoodieOptions, SessionStateBuilderExt};
pub use crate::sink::WriteCounts;
pub use crate::sql::HudiSqlExt;
