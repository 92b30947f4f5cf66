//! Rendering statement results and errors as text.

use std::io::Write;
use std::time::Duration;

use arrow::error::ArrowError;
use arrow::util::pretty::pretty_format_batches_with_schema;
use hoodie_datafusion::StatementOutput;

/// How results are decorated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// `-c`/`-f` output: tables and row counts only, easy to parse.
    Plain,
    /// Interactive output: adds the number of rows returned and the elapsed time.
    Interactive {
        /// How long the statement took.
        elapsed: Duration,
    },
}

/// Renders one statement's output; an empty string means "print nothing".
///
/// Query results become an ASCII table (the header alone when there are no rows);
/// DML becomes `N rows affected` (a Hudi write that changed rows in more than one way adds the
/// breakdown: `N rows affected: 2 inserted, 3 updated, 1 deleted`); other statements print nothing (`OK` interactively).
pub fn format_output(output: &StatementOutput, style: Style) -> Result<String, ArrowError> {
    let text = match output {
        // A result without columns (what DataFusion gives for DDL it ran eagerly) has
        // nothing to show: print it like a statement without result.
        StatementOutput::Rows { schema, .. } if schema.fields().is_empty() => format_done(style),
        StatementOutput::Rows { schema, batches } => {
            let table = pretty_format_batches_with_schema(schema.clone(), batches)?.to_string();
            match style {
                Style::Plain => table,
                Style::Interactive { elapsed } => {
                    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
                    format!(
                        "{table}\n{} ({})",
                        plural(rows as u64, "row"),
                        format_elapsed(elapsed)
                    )
                }
            }
        }
        StatementOutput::Count(n) => with_elapsed(format!("{} affected", plural(*n, "row")), style),
        StatementOutput::Changed(c) => {
            let mut line = format!("{} affected", plural(c.affected(), "row"));
            // the breakdown when more than one kind of change happened
            let kinds = [
                (c.inserted, "inserted"),
                (c.updated, "updated"),
                (c.deleted, "deleted"),
            ];
            if kinds.iter().filter(|(n, _)| *n > 0).count() > 1 {
                let parts: Vec<String> = kinds
                    .iter()
                    .filter(|(n, _)| *n > 0)
                    .map(|(n, what)| format!("{n} {what}"))
                    .collect();
                line = format!("{line}: {}", parts.join(", "));
            }
            // rows the write left out (a duplicate policy `drop`, or older than the stored
            // record): the statement saw them, the table did not take them
            if c.dropped > 0 {
                line = format!("{line} ({} dropped)", plural(c.dropped, "incoming row"));
            }
            with_elapsed(line, style)
        }
        StatementOutput::Done => format_done(style),
    };
    Ok(text)
}

/// A DML line, with the elapsed time interactively.
fn with_elapsed(line: String, style: Style) -> String {
    match style {
        Style::Plain => line,
        Style::Interactive { elapsed } => format!("{line} ({})", format_elapsed(elapsed)),
    }
}

/// Output of a statement without result: nothing, or `OK` interactively.
fn format_done(style: Style) -> String {
    match style {
        Style::Plain => String::new(),
        Style::Interactive { elapsed } => format!("OK ({})", format_elapsed(elapsed)),
    }
}

/// `1 row`, `3 rows`.
fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Elapsed time in seconds with millisecond precision, e.g. `0.042s`.
pub fn format_elapsed(elapsed: Duration) -> String {
    format!("{:.3}s", elapsed.as_secs_f64())
}

/// Renders an error as a single line `Error: <message>`, collapsing newlines and indentation.
pub fn format_error(message: &str) -> String {
    let collapsed: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    format!("Error: {}", collapsed.join(" "))
}

/// Prints `error` to stderr as one line (see [`format_error`]); write failures are ignored.
pub fn eprint_error(message: &str) {
    let _ = writeln!(std::io::stderr(), "{}", format_error(message));
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{ArrayRef, Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use arrow::record_batch::RecordBatch;
    use std::sync::Arc;

    fn rows_output(rows: usize) -> StatementOutput {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]));
        let ids: Vec<i64> = (1..=rows as i64).collect();
        let names: Vec<Option<String>> = (1..=rows).map(|i| Some(format!("n{i}"))).collect();
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(ids)) as ArrayRef,
                Arc::new(StringArray::from(names)) as ArrayRef,
            ],
        )
        .unwrap();
        let batches = if rows == 0 { vec![] } else { vec![batch] };
        StatementOutput::Rows { schema, batches }
    }

    #[test]
    fn formats_rows_as_table() {
        let text = format_output(&rows_output(2), Style::Plain).unwrap();
        let expected = "\
+----+------+
| id | name |
+----+------+
| 1  | n1   |
| 2  | n2   |
+----+------+";
        assert_eq!(text, expected);
    }

    #[test]
    fn empty_result_prints_header() {
        let text = format_output(&rows_output(0), Style::Plain).unwrap();
        assert_eq!(
            text,
            "+----+------+\n| id | name |\n+----+------+\n+----+------+"
        );
        let interactive = format_output(
            &rows_output(0),
            Style::Interactive {
                elapsed: Duration::from_millis(5),
            },
        )
        .unwrap();
        assert!(interactive.ends_with("\n0 rows (0.005s)"), "{interactive}");
    }

    #[test]
    fn interactive_rows_show_count_and_time() {
        let text = format_output(
            &rows_output(1),
            Style::Interactive {
                elapsed: Duration::from_millis(1500),
            },
        )
        .unwrap();
        assert!(
            text.ends_with("| 1  | n1   |\n+----+------+\n1 row (1.500s)"),
            "{text}"
        );
    }

    #[test]
    fn hudi_writes_show_the_breakdown_when_mixed() {
        use hoodie_datafusion::WriteCounts;
        let mixed = WriteCounts {
            inserted: 2,
            updated: 3,
            deleted: 1,
            ..Default::default()
        };
        assert_eq!(
            format_output(&StatementOutput::Changed(mixed), Style::Plain).unwrap(),
            "6 rows affected: 2 inserted, 3 updated, 1 deleted"
        );
        let dropped = WriteCounts {
            inserted: 1,
            dropped: 2,
            ..Default::default()
        };
        assert_eq!(
            format_output(&StatementOutput::Changed(dropped), Style::Plain).unwrap(),
            "1 row affected (2 incoming rows dropped)"
        );
        let updates = WriteCounts {
            updated: 4,
            ..Default::default()
        };
        assert_eq!(
            format_output(&StatementOutput::Changed(updates), Style::Plain).unwrap(),
            "4 rows affected"
        );
    }

    #[test]
    fn formats_counts_and_done() {
        assert_eq!(
            format_output(&StatementOutput::Count(3), Style::Plain).unwrap(),
            "3 rows affected"
        );
        assert_eq!(
            format_output(&StatementOutput::Count(1), Style::Plain).unwrap(),
            "1 row affected"
        );
        assert_eq!(
            format_output(&StatementOutput::Done, Style::Plain).unwrap(),
            ""
        );
        let style = Style::Interactive {
            elapsed: Duration::from_millis(12),
        };
        assert_eq!(
            format_output(&StatementOutput::Done, style).unwrap(),
            "OK (0.012s)"
        );
        assert_eq!(
            format_output(&StatementOutput::Count(0), style).unwrap(),
            "0 rows affected (0.012s)"
        );
    }

    #[test]
    fn zero_column_result_is_like_done() {
        let output = StatementOutput::Rows {
            schema: Arc::new(Schema::empty()),
            batches: vec![],
        };
        assert_eq!(format_output(&output, Style::Plain).unwrap(), "");
        let style = Style::Interactive {
            elapsed: Duration::from_millis(1),
        };
        assert_eq!(format_output(&output, style).unwrap(), "OK (0.001s)");
    }

    #[test]
    fn errors_are_one_line() {
        assert_eq!(
            format_error("Schema error:\n  No field named x.\n\nValid fields are a, b."),
            "Error: Schema error: No field named x. Valid fields are a, b."
        );
        assert_eq!(format_error("plain"), "Error: plain");
    }
}
