//! Errors of the `hoodie` shell.

use std::path::PathBuf;

use arrow::error::ArrowError;
use hoodie_datafusion::HoodieError;
use rustyline::error::ReadlineError;

use crate::cancel::Signal;

/// Everything that stops a `hoodie` run.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The session could not be created.
    #[error("cannot start session on warehouse {warehouse}: {source}")]
    Session {
        /// The warehouse directory.
        warehouse: PathBuf,
        /// Why.
        source: HoodieError,
    },
    /// A script file could not be read.
    #[error("cannot read script {path}: {source}")]
    ReadScript {
        /// The script path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Standard input could not be read.
    #[error("cannot read standard input: {0}")]
    ReadStdin(std::io::Error),
    /// A statement failed (or the SQL could not be split into statements).
    #[error("{0}")]
    Statement(#[from] HoodieError),
    /// A result could not be rendered.
    #[error("cannot format result: {0}")]
    Format(#[from] ArrowError),
    /// Writing to stdout failed.
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
    /// A signal cancelled the running statement (its write was rolled back).
    #[error("statement cancelled by {}; its write was rolled back", .0.name())]
    Cancelled(Signal),
    /// The signal handlers could not be installed.
    #[error("cannot handle signals: {0}")]
    Signals(std::io::Error),
    /// The line editor failed.
    #[error("line editor: {0}")]
    Editor(#[from] ReadlineError),
}
