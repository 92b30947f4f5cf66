//! Errors that keep a whole test file from running, and those of one record.

use std::path::PathBuf;

use arrow::error::ArrowError;
use hoodie_datafusion::HoodieError;

use crate::spark::SparkError;

/// A problem with a test file (as opposed to a failing record in it).
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// A path given on the command line does not exist.
    #[error("{path}: no such file or directory")]
    NotFound {
        /// The path.
        path: PathBuf,
    },
    /// A directory could not be listed.
    #[error("cannot list directory {path}: {source}")]
    ListDir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file could not be written (`--complete`).
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file is not valid sqllogictest.
    #[error("cannot parse {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message (with the line).
        message: String,
    },
    /// An `include` could not be resolved.
    #[error("{path}:{line}: cannot include '{include}': {reason}")]
    Include {
        /// The including file.
        path: PathBuf,
        /// Line of the `include` record.
        line: u32,
        /// The included name as written.
        include: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The temporary directory could not be set up.
    #[error("cannot create temporary directory for {path}: {source}")]
    TempDir {
        /// The file being run.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The hoodie session could not be created.
    #[error("cannot create session for {path}: {source}")]
    Session {
        /// The file being run.
        path: PathBuf,
        /// Why.
        source: hoodie_datafusion::HoodieError,
    },
    /// The Spark server could not be reached or could not set up the file's database.
    #[error("cannot start Spark for {path}: {source}")]
    Spark {
        /// The file being run.
        path: PathBuf,
        /// Why.
        source: crate::spark::SparkError,
    },
}

/// Why a record could not be run.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The statement failed; the message is hoodie's, unchanged, for `statement error` regexes.
    #[error(transparent)]
    Hoodie(#[from] HoodieError),
    /// A result value could not be rendered as text.
    #[error("cannot format query result: {0}")]
    Format(#[from] ArrowError),
    /// Spark refused the statement or could not be reached.
    #[error(transparent)]
    Spark(#[from] SparkError),
    /// The statement failed under `--datafusion`: the message as DataFusion's runner writes it
    /// (`DataFusion error: ...`), for the regexes of DataFusion's `.slt` files.
    #[error("{0}")]
    DataFusion(String),
}
