//! The interactive shell.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use hoodie_datafusion::{split_statements, HoodieContext};
use rustyline::error::ReadlineError;
use rustyline::DefaultEditor;

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
/// and the shell carries on. Ctrl-C discards the statement being typed.
pub async fn run_repl(ctx: &HoodieContext, warehouse: &Path) -> Result<(), CliError> {
    let mut editor = DefaultEditor::new()?;
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
    loop {
        let prompt = if buffer.is_empty() {
            PROMPT
        } else {
            CONTINUATION_PROMPT
        };
        match editor.readline(prompt) {
            Ok(line) => {
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
                run_interactive(ctx, &script, out).await?;
            }
            Err(ReadlineError::Interrupted) => buffer.clear(),
            Err(ReadlineError::Eof) => return Ok(()),
            Err(e) => return Err(e.into()),
        }
    }
}

/// Runs the statements of one input, printing results with row counts and timing.
/// A failing statement is reported and the rest of that input is skipped; only
/// failures to write output are returned.
async fn run_interactive(
    ctx: &HoodieContext,
    script: &str,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let statements = match split_statements(script) {
        Ok(statements) => statements,
        Err(e) => {
            eprint_error(&e.to_string());
            return Ok(());
        }
    };
    for statement in statements {
        let start = Instant::now();
        let output = match execute(ctx, &statement).await {
            Ok(output) => output,
            Err(e) => {
                eprint_error(&e.to_string());
                return Ok(());
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
    Ok(())
}
