//! `show_fs_path_detail`: how many folders and files a path holds and their size, with the
//! parameters and result columns of Hudi 1.2's procedure.

use std::path::Path;

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;
use object_store::local::LocalFileSystem;
use object_store::path::Path as StorePath;
use object_store::ObjectStore;

use super::commits::Columns;
use super::Args;
use crate::error::{HoodieError, ProcedureError, Result};

/// What a folder holds, as Hadoop's `ContentSummary`: folders (itself included), files, bytes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Summary {
    folders: i64,
    files: i64,
    bytes: i64,
}

/// The summary of folder `at` of `store`, walking its subfolders one listing each.
async fn summarise(store: &LocalFileSystem, at: Option<StorePath>) -> Result<Summary> {
    let mut out = Summary::default();
    let mut pending = vec![at];
    while let Some(dir) = pending.pop() {
        out.folders += 1;
        let listing = store.list_with_delimiter(dir.as_ref()).await.map_err(|e| {
            HoodieError::from(ProcedureError::CannotList {
                procedure: "show_fs_path_detail".into(),
                path: dir.as_ref().map(|d| d.to_string()).unwrap_or_default(),
                reason: e.to_string(),
            })
        })?;
        for o in listing.objects {
            out.files += 1;
            out.bytes += o.size as i64;
        }
        pending.extend(listing.common_prefixes.into_iter().map(Some));
    }
    Ok(out)
}

/// Hudi's human size: two decimals of GB, MB or KB, else bytes.
fn human(size: i64) -> String {
    const KB: i64 = 1024;
    let (unit, name) = [(KB * KB * KB, "GB"), (KB * KB, "MB"), (KB, "KB")]
        .into_iter()
        .find(|(u, _)| size / u >= 1)
        .unwrap_or((1, "B"));
    if unit == 1 {
        format!("{size}B")
    } else {
        format!("{:.2}{name}", size as f64 / unit as f64)
    }
}

/// The entries a call looks at: the path itself, or with `is_sub => true` what it holds
/// (each as (path, summary)).
async fn entries(path: &Path, is_sub: bool) -> Result<Vec<(String, Summary)>> {
    let missing = || {
        HoodieError::from(ProcedureError::NoSuchPath {
            procedure: "show_fs_path_detail".into(),
            path: path.display().to_string(),
        })
    };
    let meta = std::fs::metadata(path).map_err(|_| missing())?;
    if meta.is_file() {
        let one = Summary {
            folders: 0,
            files: 1,
            bytes: meta.len() as i64,
        };
        return Ok(vec![(path.display().to_string(), one)]);
    }
    let store = LocalFileSystem::new_with_prefix(path).map_err(|_| missing())?;
    if !is_sub {
        let whole = summarise(&store, None).await?;
        return Ok(vec![(path.display().to_string(), whole)]);
    }
    let top = store
        .list_with_delimiter(None)
        .await
        .map_err(|_| missing())?;
    let mut out = Vec::new();
    for o in top.objects {
        let one = Summary {
            folders: 0,
            files: 1,
            bytes: o.size as i64,
        };
        out.push((path.join(o.location.as_ref()).display().to_string(), one));
    }
    for dir in top.common_prefixes {
        let s = summarise(&store, Some(dir.clone())).await?;
        out.push((path.join(dir.as_ref()).display().to_string(), s));
    }
    Ok(out)
}

fn flag(args: &Args, name: &str, default: bool) -> Result<bool> {
    match args.get(name).map(str::trim) {
        None => Ok(default),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
        Some(v) => Err(ProcedureError::BadValue {
            procedure: "show_fs_path_detail".into(),
            argument: name.to_string(),
            expected: "true or false",
            value: v.to_string(),
        }
        .into()),
    }
}

/// `CALL show_fs_path_detail(path [, is_sub] [, sort] [, limit])`: per entry (the path, or with
/// `is_sub => true` each file and folder in it) the folders (itself included) and files it
/// holds and their bytes, largest first (`sort => false`: most files first), the first `limit`
/// of them (all when not given). `space_consumed`,
/// `quota` and `space_quota` are filled as Hudi's procedure fills them on a local file system
/// (it puts the quota, -1, in `space_consumed` and the space consumed, the bytes, in `quota`).
pub(super) async fn show_fs_path_detail(ctx: &SessionContext, args: &Args) -> Result<DataFrame> {
    let path = args.get("path").unwrap_or_default();
    let is_sub = flag(args, "is_sub", false)?;
    let sort = flag(args, "sort", true)?;
    let mut rows = entries(Path::new(path), is_sub).await?;
    if sort {
        rows.sort_by_key(|r| std::cmp::Reverse(r.1.bytes));
    } else {
        rows.sort_by_key(|r| std::cmp::Reverse(r.1.files));
    }
    if let Some(n) = args.number("limit")? {
        rows.truncate(n.max(0) as usize);
    }
    let long = |f: &dyn Fn(&Summary) -> i64| rows.iter().map(|(_, s)| f(s)).collect::<Vec<_>>();
    Columns::new()
        .long("path_num", long(&|s| s.folders))
        .long("file_num", long(&|s| s.files))
        .long("storage_size", long(&|s| s.bytes))
        .text(
            "storage_size(unit)",
            rows.iter().map(|(_, s)| Some(human(s.bytes))).collect(),
        )
        .text(
            "storage_path",
            rows.iter().map(|(p, _)| Some(p.clone())).collect(),
        )
        .long("space_consumed", long(&|_| -1))
        .long("quota", long(&|s| s.bytes))
        .long("space_quota", long(&|_| -1))
        .frame(ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_hudi_prints_them() {
        assert_eq!(human(512), "512B");
        assert_eq!(human(2048), "2.00KB");
        assert_eq!(human(3 * 1024 * 1024 + 512 * 1024), "3.50MB");
        assert_eq!(human(5 * 1024 * 1024 * 1024), "5.00GB");
    }

    #[tokio::test]
    async fn folders_count_themselves_and_what_they_hold() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("a/b")).unwrap();
        std::fs::write(tmp.path().join("a/x"), b"12345").unwrap();
        std::fs::write(tmp.path().join("a/b/y"), b"123").unwrap();
        std::fs::write(tmp.path().join("z"), b"1").unwrap();
        let whole = entries(tmp.path(), false).await.unwrap();
        assert_eq!(whole.len(), 1);
        assert_eq!(
            whole[0].1,
            Summary {
                folders: 3,
                files: 3,
                bytes: 9
            }
        );
        let mut sub = entries(tmp.path(), true).await.unwrap();
        sub.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(sub.len(), 2);
        assert!(sub[0].0.ends_with("/a"), "{sub:?}");
        assert_eq!(
            sub[0].1,
            Summary {
                folders: 2,
                files: 2,
                bytes: 8
            }
        );
        assert_eq!(sub[1].1.files, 1);
        assert!(entries(&tmp.path().join("nope"), false).await.is_err());
    }
}
