//! Finding `.slt` files and loading their records.

use std::path::{Path, PathBuf};

use sqllogictest::{parse_with_name, Record};

use crate::normalize::DfColumnType;

use crate::error::FileError;

/// The placeholder replaced by the per-file temporary directory.
pub const TMPDIR_PLACEHOLDER: &str = "${TMPDIR}";

/// Maximum nesting depth of `include` records.
const MAX_INCLUDE_DEPTH: usize = 16;

/// Collects the test files named by `paths`: directories are searched recursively for
/// `*.slt`, files are taken as given. The result is sorted and free of duplicates; paths
/// that cannot be found or listed are returned as errors.
pub fn collect_files(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<FileError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        if path.is_dir() {
            walk(path, &mut files, &mut errors);
        } else if path.is_file() {
            files.push(path.clone());
        } else {
            errors.push(FileError::NotFound { path: path.clone() });
        }
    }
    files.sort();
    files.dedup();
    (files, errors)
}

/// Adds the `*.slt` files under `dir` to `files`.
fn walk(dir: &Path, files: &mut Vec<PathBuf>, errors: &mut Vec<FileError>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(source) => {
            errors.push(FileError::ListDir {
                path: dir.to_path_buf(),
                source,
            });
            return;
        }
    };
    for entry in entries {
        let path = match entry {
            Ok(entry) => entry.path(),
            Err(source) => {
                errors.push(FileError::ListDir {
                    path: dir.to_path_buf(),
                    source,
                });
                continue;
            }
        };
        if path.is_dir() {
            walk(&path, files, errors);
        } else if path.extension().is_some_and(|ext| ext == "slt") {
            files.push(path);
        }
    }
}

/// Reads and parses `path`, with [`TMPDIR_PLACEHOLDER`] replaced by `tmpdir` and
/// `include <file>` records (relative to the including file, no globs) expanded in place.
pub fn load_records(path: &Path, tmpdir: &Path) -> Result<Vec<Record<DfColumnType>>, FileError> {
    let mut records = Vec::new();
    load_into(path, &tmpdir.to_string_lossy(), 0, &mut records)?;
    Ok(records)
}

/// The records of `text`, the contents of `path`.
pub(crate) fn parse_records(
    path: &Path,
    text: &str,
) -> Result<Vec<Record<DfColumnType>>, FileError> {
    parse_with_name::<DfColumnType>(text, path.display().to_string()).map_err(|e| {
        FileError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    })
}

/// Appends the records of `path` (and of the files it includes) to `records`.
fn load_into(
    path: &Path,
    tmpdir: &str,
    depth: usize,
    records: &mut Vec<Record<DfColumnType>>,
) -> Result<(), FileError> {
    let text = std::fs::read_to_string(path).map_err(|source| FileError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let parsed = parse_records(path, &text.replace(TMPDIR_PLACEHOLDER, tmpdir))?;
    for record in parsed {
        let Record::Include { loc, filename } = record else {
            records.push(record);
            continue;
        };
        let include_error = |reason: &str| FileError::Include {
            path: path.to_path_buf(),
            line: loc.line(),
            include: filename.clone(),
            reason: reason.to_string(),
        };
        if filename.contains(['*', '?', '[']) {
            return Err(include_error("glob patterns are not supported"));
        }
        if depth >= MAX_INCLUDE_DEPTH {
            return Err(include_error("includes are nested too deeply"));
        }
        let included = path
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join(&filename);
        load_into(&included, tmpdir, depth + 1, records)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_slt_files_recursively_sorted() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("b/c")).unwrap();
        for f in ["b/c/z.slt", "b/a.slt", "a.slt", "notes.txt"] {
            std::fs::write(root.join(f), "").unwrap();
        }
        let (files, errors) = collect_files(&[root.to_path_buf(), root.join("a.slt")]);
        assert!(errors.is_empty());
        assert_eq!(
            files,
            vec![
                root.join("a.slt"),
                root.join("b/a.slt"),
                root.join("b/c/z.slt")
            ]
        );
        let (files, errors) = collect_files(&[root.join("missing")]);
        assert!(files.is_empty());
        assert!(matches!(errors[..], [FileError::NotFound { .. }]));
    }

    #[test]
    fn substitutes_tmpdir_and_expands_includes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join("setup.slti"),
            "statement ok\nCREATE VIEW v AS SELECT 1\n",
        )
        .unwrap();
        std::fs::write(
            root.join("main.slt"),
            "include setup.slti\n\nstatement ok\nSELECT '${TMPDIR}/x'\n",
        )
        .unwrap();
        let records = load_records(&root.join("main.slt"), Path::new("/tmp/abc")).unwrap();
        let sqls: Vec<&str> = records
            .iter()
            .filter_map(|r| match r {
                Record::Statement { sql, .. } => Some(sql.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            sqls,
            vec!["CREATE VIEW v AS SELECT 1", "SELECT '/tmp/abc/x'"]
        );
    }
}
