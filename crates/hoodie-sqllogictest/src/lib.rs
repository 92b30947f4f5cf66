//! hoodie-sqllogictest: runs [sqllogictest] files against a hoodie session.
//!
//! Each `.slt` file runs in a fresh session over an empty temporary warehouse; `${TMPDIR}` in
//! the file is replaced by that temporary directory. Failing records are reported and the run
//! carries on; see [`run_paths`]. Results are written and compared as DataFusion's own
//! sqllogictest runner does ([`normalize`]), so its `.slt` files pass here unchanged;
//! [`complete_file`] rewrites a file's expected results. [`Engine::DataFusion`] (`hoodie-slt
//! --datafusion`) runs DataFusion's own `.slt` files unchanged: hoodie's session set up, and
//! its answers and errors written, exactly as DataFusion 55.2.0's runner does ([`df_db`],
//! [`df_normalize`]).
//!
//! [sqllogictest]: https://www.sqlite.org/sqllogictest/doc/trunk/about.wiki

pub mod complete;
pub mod db;
pub mod df_db;
pub mod df_normalize;
pub mod error;
pub mod files;
pub mod normalize;
pub mod parallel;
pub mod runner;
pub mod spark;

pub use complete::complete_file;
pub use db::{EngineDb, HoodieDb};
pub use df_db::DataFusionDb;
pub use error::DbError;
pub use error::FileError;
pub use parallel::run_paths_in_parallel;
pub use runner::{run_paths, run_paths_with, Engine, Event, Failure, Summary};
