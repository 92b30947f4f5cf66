//! The interactive shell.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use hoodie_datafusion::{split_statements, HoodieContext};
use rustyline::error::ReadlineError;
use rustyline::DefaultEditor;

use crate::cancel::Signal;
use crate::error::CliError;
use crate::input::{is_complete, is_exit_command};
use crate::print::{eprint_error, format_output, Style};
use crate::run::execute;

/// Prompt for the first line of a statement.
const PROMPT: &str = "hoodie> ";
/// Prompt for continuation lines.
const CONTINUATION_PROMPT: &str = "     -> ";

/// The history file, `~/.hoodie_history` (None when `HOME` is unset).
fn history_file() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(|home| PathBuf::from(home).join(".hoodie_history"))
}

/// Runs the read-eval-print loop until `\q`, `quit`, `exit` or Ctrl-D.
///
/// Input is collected over several lines until a `;` ends it; statement errors are printed
/// and the shell carries on. Ctrl-C cancels the running statement (its write rolled back) or
/// discards the statement being typed; a second Ctrl-C in a row at the prompt exits.
pub async fn run_repl(ctx: &HoodieContext, warehouse: &Path) -> Result<(), CliError> {
    let mut editor = DefaultEditor::new()?;
    // after the editor: it puts a SIGINT handler of its own in place for as long as it lives
    // (to learn of a signal while it reads), which would leave hoodie's unheard while a
    // statement runs; registered after it, hoodie's comes first and the editor's is chained
    crate::cancel::listen().map_err(CliError::Signals)?;
    let history = history_file();
    if let Some(path) = &history {
        // A missing or unreadable history file is not worth failing for.
        let _ = editor.load_history(path);
    }
    let mut out = std::io::stdout();
    writeln!(
        out,
        "hoodie {} (warehouse: {}). End statements with ';', \\q to quit.",
        env!("CARGO_PKG_VERSION"),
        warehouse.display()
    )?;

    let result = read_eval_loop(ctx, &mut editor, &mut out).await;
    if let Some(path) = &history {
        let _ = editor.save_history(path);
    }
    result
}

/// The loop proper, separated so history is saved however it ends.
async fn read_eval_loop(
    ctx: &HoodieContext,
    editor: &mut DefaultEditor,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let mut buffer = String::new();
    // the last thing the user did was a Ctrl-C (one that cancelled a statement or one at the
    // prompt): another one at the prompt exits
    let mut interrupted = false;
    loop {
        let prompt = if buffer.is_empty() {
            PROMPT
        } else {
            CONTINUATION_PROMPT
        };
        match editor.readline(prompt) {
            Ok(line) => {
                interrupted = false;
                if buffer.is_empty() {
                    if is_exit_command(&line) {
                        return Ok(());
                    }
                    if line.trim().is_empty() {
                        continue;
                    }
                } else {
                    buffer.push('\n');
                }
                buffer.push_str(&line);
                if !is_complete(&buffer) {
                    continue;
                }
                let script = std::mem::take(&mut buffer);
                let _ = editor.add_history_entry(script.as_str());
                interrupted = run_interactive(ctx, &script, out).await? == Ran::Cancelled;
            }
            Err(ReadlineError::Interrupted) => {
                if interrupted && buffer.is_empty() {
                    return Ok(());
                }
                if buffer.is_empty() {
                    eprintln!("(Ctrl-C again to quit, or \\q)");
                }
                buffer.clear();
                interrupted = true;
            }
            Err(ReadlineError::Eof) => return Ok(()),
            Err(e) => return Err(e.into()),
        }
    }
}

/// How one input of the shell ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ran {
    /// Its statements ran, or one failed and the rest were skipped.
    Done,
    /// Ctrl-C (SIGINT) cancelled a statement, whose write was rolled back.
    Cancelled,
}

/// Runs the statements of one input, printing results with row counts and timing.
/// A failing statement is reported and the rest of that input is skipped, as after a Ctrl-C;
/// returned are only failures to write output and a SIGTERM (the shell exits).
pub(crate) async fn run_interactive(
    ctx: &HoodieContext,
    script: &str,
    out: &mut dyn Write,
) -> Result<Ran, CliError> {
    let statements = match split_statements(script) {
        Ok(statements) => statements,
        Err(e) => {
            eprint_error(&e.to_string());
            return Ok(Ran::Done);
        }
    };
    for statement in statements {
        let start = Instant::now();
        let output = match execute(ctx, &statement).await {
            Ok(output) => output,
            Err(CliError::Cancelled(Signal::Interrupt)) => {
                eprintln!("Cancelled.");
                return Ok(Ran::Cancelled);
            }
            Err(e @ CliError::Cancelled(_)) => return Err(e),
            Err(e) => {
                eprint_error(&e.to_string());
                return Ok(Ran::Done);
            }
        };
        let style = Style::Interactive {
            elapsed: start.elapsed(),
        };
        match format_output(&output, style) {
            Ok(text) => writeln!(out, "{text}")?,
            Err(e) => eprint_error(&CliError::Format(e).to_string()),
        }
        out.flush()?;
    }
    Ok(Ran::Done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hoodie_datafusion::{HoodieConfig, StatementOutput};

    async fn rows(ctx: &HoodieContext, sql: &str) -> String {
        let StatementOutput::Rows { batches, .. } = ctx.run(sql).await.unwrap() else {
            panic!("rows expected");
        };
        arrow::util::pretty::pretty_format_batches(&batches)
            .unwrap()
            .to_string()
    }

    /// Whether a commit began and did not complete (`T.inflight` without `T.commit`).
    /// Whether the table has a commit in flight: `<t>.inflight` without a completed commit,
    /// `<t>.commit` on version 6 (in `.hoodie`), `<t>_<c>.commit` on 8+ (`.hoodie/timeline`).
    fn has_inflight(table: &Path) -> bool {
        let layout2 = table.join(".hoodie/timeline");
        let dir = if layout2.is_dir() {
            layout2
        } else {
            table.join(".hoodie")
        };
        let names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        let completed = |ts: &str| {
            names
                .iter()
                .any(|n| n == &format!("{ts}.commit") || n.starts_with(&format!("{ts}_")))
        };
        names.iter().any(|n| {
            n.strip_suffix(".inflight")
                .is_some_and(|ts| !ts.contains('.') && !completed(ts))
        })
    }

    /// What the shell does on Ctrl-C during a statement (a SIGINT, as the terminal sends it):
    /// the MERGE is cancelled, its write rolled back, and the shell carries on.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ctrl_c_cancels_the_running_statement() {
        let _turn = crate::cancel::one_statement_at_a_time().await;
        let dir = tempfile::tempdir().unwrap();
        let ctx = HoodieContext::new(HoodieConfig::new(dir.path().join("wh")))
            .await
            .unwrap();
        ctx.run(
            "CREATE TABLE t (id BIGINT, v STRING, ts INT) USING hudi \
             TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts')",
        )
        .await
        .unwrap();
        ctx.run("INSERT INTO t SELECT value, 'before', 1 FROM range(1000)")
            .await
            .unwrap();
        let query = "SELECT count(*), min(v), max(v), max(ts) FROM t";
        let before = rows(&ctx, query).await;
        let table = dir.path().join("wh/t");
        let ctrl_c = tokio::spawn(async move {
            while !has_inflight(&table) {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            assert!(crate::cancel::hand_to_statement(Signal::Interrupt));
        });
        let merge = "MERGE INTO t USING (SELECT value AS id, 'after' AS v, 2 AS ts \
            FROM range(3000000)) s ON t.id = s.id \
            WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *; SELECT 1;";
        let mut out = Vec::new();
        let ran = run_interactive(&ctx, merge, &mut out).await.unwrap();
        ctrl_c.await.unwrap();
        assert_eq!(ran, Ran::Cancelled);
        // the statements after the cancelled one did not run
        assert!(out.is_empty(), "{}", String::from_utf8_lossy(&out));
        assert_eq!(rows(&ctx, query).await, before);
        assert!(!has_inflight(&dir.path().join("wh/t")));
    }
}
