//! The Spark-written fixture tables in `tests/fixtures/hudi-tables`, and reading rows as text.

use std::path::{Path, PathBuf};

use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use hoodie_datafusion::{HoodieContext, StatementOutput};

/// The fixtures folder (`HOODIE_FIXTURES` overrides it).
pub fn fixtures_dir() -> PathBuf {
    let dir = std::env::var_os("HOODIE_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/hudi-tables")
        });
    assert!(
        dir.join("data").is_dir(),
        "Spark fixtures not found at {} (set HOODIE_FIXTURES)",
        dir.display()
    );
    dir
}

/// Extracts `data/<rel>.zip` and returns the table's base path.
pub fn extract(tmp: &Path, rel: &str) -> PathBuf {
    let zip = fixtures_dir().join("data").join(format!("{rel}.zip"));
    let out = tmp.join(rel.replace('/', "_"));
    let status = std::process::Command::new("unzip")
        .arg("-q")
        .arg("-o")
        .arg(&zip)
        .arg("-d")
        .arg(&out)
        .status()
        .expect("unzip is needed for the fixture tests");
    assert!(status.success(), "unzip {} failed", zip.display());
    let stem = Path::new(rel)
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let base = out.join(&stem);
    let _ = std::fs::remove_dir_all(out.join("__MACOSX"));
    assert!(base.is_dir(), "{} has no {stem}/", zip.display());
    base
}

/// The rows `sql` returns, each as its values joined by commas (NULL as `NULL`).
pub async fn rows(ctx: &HoodieContext, sql: &str) -> Result<Vec<String>, String> {
    match ctx.run(sql).await.map_err(|e| e.to_string())? {
        StatementOutput::Rows { batches, .. } => {
            let opts = FormatOptions::default().with_null("NULL");
            let mut out = Vec::new();
            for b in batches {
                let fmts: Vec<_> = b
                    .columns()
                    .iter()
                    .map(|c| ArrayFormatter::try_new(c.as_ref(), &opts).unwrap())
                    .collect();
                for r in 0..b.num_rows() {
                    out.push(
                        fmts.iter()
                            .map(|f| f.value(r).to_string())
                            .collect::<Vec<_>>()
                            .join(","),
                    );
                }
            }
            Ok(out)
        }
        other => Err(format!("expected rows, got {other:?}")),
    }
}

/// Opens the table at `base` as `name`.
pub async fn open(ctx: &HoodieContext, name: &str, base: &Path) {
    ctx.run(&format!(
        "CREATE EXTERNAL TABLE {name} STORED AS HUDI LOCATION '{}'",
        base.display()
    ))
    .await
    .unwrap_or_else(|e| panic!("open {name}: {e}"));
}
