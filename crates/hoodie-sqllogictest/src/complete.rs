//! `hoodie-slt --complete`: rewrites a file's expected results with what hoodie produces, as
//! DataFusion's runner does with `--complete`.

use std::path::Path;

use sqllogictest::{strict_column_validator, update_record_with_output, Record};

use crate::error::FileError;
use crate::files::{parse_records, TMPDIR_PLACEHOLDER};
use crate::normalize::{value_normalizer, value_validator};
use crate::runner::new_runner;

/// Runs every record of `path` in a fresh session and writes the file back with each query's
/// results (and each statement's outcome) as they came out. `${TMPDIR}` stays as written.
/// Returns how many records changed. A file with `include` records is refused: the included
/// files would need rewriting too.
pub async fn complete_file(path: &Path) -> Result<usize, FileError> {
    let text = std::fs::read_to_string(path).map_err(|source| FileError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let (tmp, mut runner) = new_runner(path).await?;
    let raw = parse_records(path, &text)?;
    let substituted = parse_records(
        path,
        &text.replace(TMPDIR_PLACEHOLDER, &tmp.path().to_string_lossy()),
    )?;
    if let Some(Record::Include { loc, filename }) =
        raw.iter().find(|r| matches!(r, Record::Include { .. }))
    {
        return Err(FileError::Include {
            path: path.to_path_buf(),
            line: loc.line(),
            include: filename.clone(),
            reason: "--complete does not rewrite files that include others".into(),
        });
    }
    let mut out = String::new();
    let mut changed = 0;
    let mut halted = false;
    for (original, to_run) in raw.into_iter().zip(substituted) {
        halted |= matches!(original, Record::Halt { .. });
        let record = if halted {
            original
        } else {
            let output = runner.apply_record(to_run).await;
            match update_record_with_output(
                &original,
                &output,
                " ",
                value_validator,
                value_normalizer,
                strict_column_validator,
            ) {
                Some(updated) => {
                    changed += usize::from(updated.to_string() != original.to_string());
                    updated
                }
                None => original,
            }
        };
        out.push_str(&record.to_string());
        out.push('\n');
    }
    runner.shutdown_async().await;
    let out = format!("{}\n", out.trim_end_matches('\n'));
    std::fs::write(path, out).map_err(|source| FileError::Write {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rewrites_results_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.slt");
        std::fs::write(
            &file,
            "# a comment\nstatement ok\nCREATE VIEW v AS SELECT '${TMPDIR}' AS d, 10.0 AS x\n\n\
             query RB\nSELECT x, d LIKE '%hoodie-slt-%' FROM v\n----\n0 false\n\n\
             query I\nSELECT 2\n----\n2\n",
        )
        .unwrap();
        assert_eq!(complete_file(&file).await.unwrap(), 1);
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            text,
            "# a comment\nstatement ok\nCREATE VIEW v AS SELECT '${TMPDIR}' AS d, 10.0 AS x\n\n\
             query RB\nSELECT x, d LIKE '%hoodie-slt-%' FROM v\n----\n10 true\n\n\
             query I\nSELECT 2\n----\n2\n"
        );
        // the completed file passes
        let summary = crate::run_paths(&[file]).await;
        assert!(summary.is_success(), "{:?}", summary.failures);
    }
}
