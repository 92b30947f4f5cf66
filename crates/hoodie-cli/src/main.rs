//! `hoodie`: a SQL shell for Apache Hudi tables on Apache DataFusion.
//!
//! `hoodie [--warehouse DIR] [--memory-limit SIZE] [--timing] [-f FILE]... [-c SQL]...` runs the given
//! scripts and SQL in order and stops at the first error (exit code 1); without `-f`/`-c`
//! it reads a script from stdin when that is not a terminal, else starts an interactive shell.
//! SIGINT and SIGTERM cancel the running statement and roll its write back (see `cancel`);
//! the process then exits with status 130 or 143 (the shell returns to its prompt on Ctrl-C).

mod alloc;
mod args;
mod cancel;
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

/// The stack of every thread that plans or runs statements. DataFusion and sqlparser recurse
/// over a statement's tree, some walks unprotected (`Expr::clone`): deep statements need a
/// deep stack, as DataFusion's own CLI gives them. Only the pages used are ever touched.
const STATEMENT_STACK: usize = 256 * 1024 * 1024;

fn main() -> ExitCode {
    alloc::tune();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .thread_stack_size(STATEMENT_STACK)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            print::eprint_error(&format!("cannot start the async runtime: {e}"));
            return ExitCode::FAILURE;
        }
    };
    // the shell's own future (which plans every statement) runs on a thread with the same
    // stack, not on the main thread's 8 MiB
    let shell = std::thread::Builder::new()
        .name("hoodie".into())
        .stack_size(STATEMENT_STACK)
        .spawn(move || runtime.block_on(run_main()));
    match shell.map(|thread| thread.join()) {
        Ok(Ok(code)) => code,
        Ok(Err(_panicked)) => ExitCode::FAILURE,
        Err(e) => {
            print::eprint_error(&format!("cannot start the shell's thread: {e}"));
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
        Err(CliError::Cancelled(signal)) => {
            print::eprint_error(&CliError::Cancelled(signal).to_string());
            ExitCode::from(signal.exit_status())
        }
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
    config.extension = (invocation.cli.workers.clone())
        .map(|workers| hoodie_distributed::workers_extension(workers.0, None));
    let ctx = HoodieContext::new(config)
        .await
        .map_err(|source| CliError::Session {
            warehouse: warehouse.clone(),
            source,
        })?;

    let mut stdout = std::io::stdout();
    if !invocation.sources.is_empty() {
        cancel::listen().map_err(CliError::Signals)?;
        return run::run_sources(
            &ctx,
            &invocation.sources,
            invocation.cli.timing,
            &mut stdout,
        )
        .await;
    }
    if !std::io::stdin().is_terminal() {
        cancel::listen().map_err(CliError::Signals)?;
        let mut script = String::new();
        std::io::stdin()
            .read_to_string(&mut script)
            .map_err(CliError::ReadStdin)?;
        return run::run_script(&ctx, &script, invocation.cli.timing, &mut stdout).await;
    }
    repl::run_repl(&ctx, &warehouse).await
}
