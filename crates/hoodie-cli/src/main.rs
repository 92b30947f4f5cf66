//! `hoodie`: a SQL shell for Apache Hudi tables on Apache DataFusion.
//!
//! `hoodie [--warehouse DIR] [--memory-limit SIZE] [--timing] [-f FILE]... [-c SQL]...` runs the given
//! scripts and SQL in order and stops at the first error (exit code 1); without `-f`/`-c`
//! it reads a script from stdin when that is not a terminal, else starts an interactive shell.

mod alloc;
mod args;
mod error;
mod input;
mod print;
mod progress;
mod repl;
mod run;

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use hoodie_datafusion::{HoodieConfig, HoodieContext};

use crate::args::Invocation;
use crate::error::CliError;

fn main() -> ExitCode {
    alloc::tune();
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(run_main()),
        Err(e) => {
            print::eprint_error(&format!("cannot start the async runtime: {e}"));
            ExitCode::FAILURE
        }
    }
}

async fn run_main() -> ExitCode {
    let invocation = match Invocation::from_env() {
        Ok(invocation) => invocation,
        // Prints help/version or the usage error and exits with clap's status.
        Err(e) => e.exit(),
    };
    match app(invocation).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            print::eprint_error(&e.to_string());
            ExitCode::FAILURE
        }
    }
}

/// Creates the session and dispatches to batch, stdin or interactive mode.
async fn app(invocation: Invocation) -> Result<(), CliError> {
    let warehouse = invocation.warehouse();
    let mut config = HoodieConfig::new(warehouse.clone());
    config.memory_limit = invocation.cli.memory_limit;
    config.options = invocation.cli.options.clone();
    let ctx = HoodieContext::new(config)
        .await
        .map_err(|source| CliError::Session {
            warehouse: warehouse.clone(),
            source,
        })?;

    let mut stdout = std::io::stdout();
    if !invocation.sources.is_empty() {
        return run::run_sources(
            &ctx,
            &invocation.sources,
            invocation.cli.timing,
            &mut stdout,
        )
        .await;
    }
    if !std::io::stdin().is_terminal() {
        let mut script = String::new();
        std::io::stdin()
            .read_to_string(&mut script)
            .map_err(CliError::ReadStdin)?;
        return run::run_script(&ctx, &script, invocation.cli.timing, &mut stdout).await;
    }
    repl::run_repl(&ctx, &warehouse).await
}
