//! Running SQL non-interactively: `-c`, `-f` and scripts piped on stdin.

use std::io::Write;

use hoodie_datafusion::{split_statements, HoodieContext, StatementOutput};

use crate::args::Source;
use crate::cancel::{cancellable, roll_back_cancelled};
use crate::error::CliError;
use crate::print::{format_elapsed, format_output, Style};
use crate::progress::{DelayedSpinner, SPINNER_DELAY};

/// Runs one statement, showing a spinner on stderr if it takes longer than [`SPINNER_DELAY`].
/// The spinner is gone by the time this returns; the statement's warnings go to stderr.
///
/// A signal (Ctrl-C, SIGINT, SIGTERM) cancels the statement: its write is rolled back before
/// this returns [`CliError::Cancelled`].
pub async fn execute(ctx: &HoodieContext, sql: &str) -> Result<StatementOutput, CliError> {
    let output = {
        let _spinner = DelayedSpinner::start(SPINNER_DELAY);
        cancellable(ctx.run(sql)).await
    };
    let output = match output {
        Ok(output) => output,
        Err(signal) => {
            roll_back_cancelled(ctx).await;
            return Err(CliError::Cancelled(signal));
        }
    };
    for warning in ctx.take_warnings() {
        eprintln!("Warning: {warning}");
    }
    Ok(output?)
}

/// Runs the `-f`/`-c` sources in order, printing each statement's result to `out` (and, with
/// `timing`, its time to stderr). Stops at the first failure.
pub async fn run_sources(
    ctx: &HoodieContext,
    sources: &[Source],
    timing: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    for source in sources {
        match source {
            Source::File(path) => {
                let script =
                    std::fs::read_to_string(path).map_err(|source| CliError::ReadScript {
                        path: path.clone(),
                        source,
                    })?;
                run_script(ctx, &script, timing, out).await?;
            }
            Source::Sql(sql) => run_script(ctx, sql, timing, out).await?,
        }
    }
    Ok(())
}

/// Splits `script` into statements and runs them one by one, printing results in the
/// plain style (and, with `timing`, each statement's time to stderr). Stops at the first
/// failure.
pub async fn run_script(
    ctx: &HoodieContext,
    script: &str,
    timing: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    for statement in split_statements(script)? {
        let started = std::time::Instant::now();
        let output = execute(ctx, &statement).await?;
        if timing {
            eprintln!("Time: {}", format_elapsed(started.elapsed()));
        }
        let text = format_output(&output, Style::Plain)?;
        if !text.is_empty() {
            writeln!(out, "{text}")?;
        }
        out.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hoodie_datafusion::HoodieConfig;

    async fn context() -> (tempfile::TempDir, HoodieContext) {
        let dir = tempfile::tempdir().unwrap();
        let ctx = HoodieContext::new(HoodieConfig::new(dir.path().join("warehouse")))
            .await
            .unwrap();
        (dir, ctx)
    }

    #[tokio::test]
    async fn prints_each_result_in_order() {
        let _turn = crate::cancel::one_statement_at_a_time().await;
        let (_dir, ctx) = context().await;
        let mut out = Vec::new();
        let sources = [
            Source::Sql("select 1 as a; select 'x' as b".into()),
            Source::Sql("select 2 as c".into()),
        ];
        run_sources(&ctx, &sources, false, &mut out).await.unwrap();
        let text = String::from_utf8(out).unwrap();
        let a = text.find("| a |").unwrap();
        let b = text.find("| b |").unwrap();
        let c = text.find("| c |").unwrap();
        assert!(a < b && b < c, "{text}");
    }

    #[tokio::test]
    async fn stops_at_first_error() {
        let _turn = crate::cancel::one_statement_at_a_time().await;
        let (_dir, ctx) = context().await;
        let mut out = Vec::new();
        let err = run_script(
            &ctx,
            "select 1 as a; select no_such_column; select 3 as c",
            false,
            &mut out,
        )
        .await
        .unwrap_err();
        assert!(matches!(err, CliError::Statement(_)), "{err:?}");
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("| a |") && !text.contains("| c |"), "{text}");
    }

    #[tokio::test]
    async fn missing_script_is_an_error() {
        let _turn = crate::cancel::one_statement_at_a_time().await;
        let (dir, ctx) = context().await;
        let mut out = Vec::new();
        let sources = [Source::File(dir.path().join("nope.sql"))];
        let err = run_sources(&ctx, &sources, false, &mut out)
            .await
            .unwrap_err();
        assert!(matches!(err, CliError::ReadScript { .. }), "{err:?}");
    }
}
