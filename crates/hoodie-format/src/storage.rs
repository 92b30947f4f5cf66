//! The object store a table lives on, addressed relative to the table's base path.

use std::sync::Arc;

use bytes::Bytes;
use futures::TryStreamExt;
use object_store::local::LocalFileSystem;
use object_store::path::{Path, PathPart};
use object_store::{
    ObjectMeta, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion,
};

use parquet::file::metadata::ParquetMetaData;

use crate::error::{FormatError, Result};

/// Footers already read, kept by whoever embeds the format (a query engine's file metadata
/// cache). A base file's name carries its file id and instant, and files are never rewritten in
/// place, so a path with the same size names the same bytes.
pub trait FooterCache: std::fmt::Debug + Send + Sync {
    /// The footer kept for `path`, if any, with the size of the file it was read from.
    fn get(&self, path: &Path) -> Option<(u64, Arc<ParquetMetaData>)>;
    /// Keeps the footer of the file at `path` of `size` bytes.
    fn put(&self, path: &Path, size: u64, meta: Arc<ParquetMetaData>);
}

/// How many writes this process made under each table's `.hoodie/` folder, by the table's base
/// path: a timeline listed when the count was `n` has seen every change this process made to
/// it while the count is still `n`. Tables on different stores at the same path share a count,
/// which only makes a timeline look older than it is.
static TIMELINE_WRITES: std::sync::LazyLock<
    std::sync::Mutex<std::collections::HashMap<String, u64>>,
> = std::sync::LazyLock::new(Default::default);

fn new_store_id() -> Arc<str> {
    uuid::Uuid::new_v4().simple().to_string().into()
}

/// A table's storage: an object store and the base path of the table in it.
#[derive(Debug, Clone)]
pub struct TableStorage {
    store: Arc<dyn ObjectStore>,
    base: Path,
    location: String,
    /// Names this store (clones share it), so a query engine can register it once.
    store_id: Arc<str>,
    /// The table's directory when it is on the local file system (the table lock is an OS
    /// file lock there).
    local_dir: Option<std::path::PathBuf>,
    /// The local file system the store is, when it is (whole files are then read with `std::fs`,
    /// into a buffer object_store would first zero).
    local_fs: Option<Arc<LocalFileSystem>>,
    /// Where base-file footers already read are kept (clones share it), if anywhere.
    footers: Option<Arc<dyn FooterCache>>,
}

/// What a conditional write did.
#[derive(Debug, Clone)]
pub enum ConditionalPut {
    /// Written; the object's new version.
    Written(UpdateVersion),
    /// Another writer got there first (the object exists, or changed since it was read).
    Lost,
}

/// The table location a [`TableStorage::store_url`] names (`None`: not such a URL).
pub fn location_of_store_url(url: &url::Url) -> Option<String> {
    if url.scheme() != "hoodie-store" {
        return None;
    }
    let (_, hex) = url.host_str()?.split_once('-')?;
    let bytes: Option<Vec<u8>> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect();
    String::from_utf8(bytes?).ok()
}

impl TableStorage {
    /// A table at `base` in `store`; `location` is how users name it (for messages).
    pub fn new(store: Arc<dyn ObjectStore>, base: Path, location: impl Into<String>) -> Self {
        Self {
            store,
            base,
            location: location.into(),
            store_id: new_store_id(),
            local_dir: None,
            local_fs: None,
            footers: None,
        }
    }

    /// A table on the local file system at `dir` (made absolute; need not exist yet).
    pub fn local(dir: &std::path::Path) -> Result<Self> {
        let abs = absolute(dir);
        let base = Path::from_absolute_path(&abs).map_err(|e| FormatError::InvalidProperty {
            key: "location".into(),
            value: abs.display().to_string(),
            reason: e.to_string(),
        })?;
        let fs = Arc::new(LocalFileSystem::new());
        let mut storage = Self::new(fs.clone(), base, abs.display().to_string());
        storage.local_dir = Some(abs);
        storage.local_fs = Some(fs);
        Ok(storage)
    }

    /// An error of the store about `p`, the path named as the user names it: absolute on
    /// local disk (object_store's paths have no leading `/`), a URL on an object store.
    fn error(&self, p: &Path, e: object_store::Error) -> FormatError {
        let shown = match &self.local_dir {
            Some(_) => format!("/{p}"),
            None => format!(
                "{}/{}",
                self.location.trim_end_matches('/'),
                self.relative(p)
            ),
        };
        FormatError::storage(shown, e)
    }

    /// The table's directory if it is on the local file system.
    pub fn local_dir(&self) -> Option<&std::path::Path> {
        self.local_dir.as_deref()
    }

    /// The same table on another object store (used to inject failures in tests).
    pub fn with_store(&self, store: Arc<dyn ObjectStore>) -> Self {
        Self {
            store,
            store_id: new_store_id(),
            local_fs: None,
            ..self.clone()
        }
    }

    /// The same table, keeping the footers it reads in `cache` (and reading them from it).
    pub fn with_footer_cache(mut self, cache: Arc<dyn FooterCache>) -> Self {
        self.footers = Some(cache);
        self
    }

    /// Where the footers this table reads are kept, if anywhere.
    pub fn footer_cache(&self) -> Option<&Arc<dyn FooterCache>> {
        self.footers.as_ref()
    }

    /// A URL naming this table's object store (`hoodie-store://<id>-<location in hex>`),
    /// under which a query engine registers [`TableStorage::store`] so that its reads go
    /// through the store the writes use; [`TableStorage::path`] gives the paths in it. The
    /// location in it lets another process open the same store ([`location_of_store_url`]).
    pub fn store_url(&self) -> String {
        let hex: String = (self.location.bytes())
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("hoodie-store://{}-{hex}", self.store_id)
    }

    /// The object store.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.store
    }

    /// The table's base path in the store.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// The location as the user gave it.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The full store path of `rel` (a path relative to the table base, `/`-separated).
    pub fn path(&self, rel: &str) -> Path {
        let mut p = self.base.clone();
        for part in rel.split('/').filter(|s| !s.is_empty()) {
            // a part is taken as it is (`dt=ÄÖ` names the directory `dt=ÄÖ`, as Java Hudi
            // writes it); only a part the store cannot hold as it is gets percent-encoded
            p = match PathPart::parse(part) {
                Ok(valid) => p.clone().join(valid),
                Err(_) => p.clone().join(part),
            };
        }
        p
    }

    /// The path of `full` relative to the table base.
    pub fn relative(&self, full: &Path) -> String {
        full.prefix_match(&self.base)
            .map(|parts| {
                parts
                    .map(|p| p.as_ref().to_string())
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .unwrap_or_else(|| full.to_string())
    }

    /// The number of writes this process made under the table's `.hoodie/` folder so far
    /// (see [`crate::timeline::Timeline::is_current`]).
    pub fn timeline_generation(&self) -> u64 {
        let counts = TIMELINE_WRITES.lock().unwrap_or_else(|e| e.into_inner());
        counts.get(self.base.as_ref()).copied().unwrap_or(0)
    }

    /// Counts a write (done or failed) of `rel`; called after it, so that a listing that
    /// started before the write ended never counts as having seen it.
    fn wrote(&self, rel: &str) {
        if rel == ".hoodie" || rel.starts_with(".hoodie/") {
            let mut counts = TIMELINE_WRITES.lock().unwrap_or_else(|e| e.into_inner());
            *counts.entry(self.base.to_string()).or_default() += 1;
        }
    }

    /// Reads a whole object.
    pub async fn get(&self, rel: &str) -> Result<Bytes> {
        let p = self.path(rel);
        if let Some(fs) = &self.local_fs {
            return read_local(fs, &p).await.map_err(|e| self.error(&p, e));
        }
        let r = self.store.get(&p).await.map_err(|e| self.error(&p, e))?;
        r.bytes().await.map_err(|e| self.error(&p, e))
    }

    /// The byte ranges `ranges` of the object at `p`, as object_store's `get_ranges`.
    pub(crate) async fn get_ranges(
        &self,
        p: &Path,
        ranges: Vec<std::ops::Range<u64>>,
    ) -> object_store::Result<Vec<Bytes>> {
        match &self.local_fs {
            Some(fs) => read_local_ranges(fs, p, ranges).await,
            None => self.store.get_ranges(p, &ranges).await,
        }
    }

    /// The size of file `rel`.
    pub async fn head_size(&self, rel: &str) -> Result<u64> {
        let p = self.path(rel);
        self.store
            .head(&p)
            .await
            .map(|m| m.size)
            .map_err(|e| self.error(&p, e))
    }

    /// True if the object exists.
    pub async fn exists(&self, rel: &str) -> Result<bool> {
        let p = self.path(rel);
        match self.store.head(&p).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(self.error(&p, e)),
        }
    }

    /// Writes an object, replacing what is there.
    pub async fn put(&self, rel: &str, data: impl Into<PutPayload>) -> Result<()> {
        let p = self.path(rel);
        let put = self.store.put(&p, data.into()).await;
        self.wrote(rel);
        put.map_err(|e| self.error(&p, e))?;
        Ok(())
    }

    /// Writes an object only if none exists: the atomic step of a commit.
    /// Fails with [`FormatError::AlreadyExists`] if another writer got there first.
    pub async fn put_if_absent(&self, rel: &str, data: impl Into<PutPayload>) -> Result<()> {
        let p = self.path(rel);
        let opts = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        let put = self.store.put_opts(&p, data.into(), opts).await;
        self.wrote(rel);
        match put {
            Ok(_) => Ok(()),
            // commits are only safe on a store that can refuse a second create
            Err(object_store::Error::NotImplemented { .. }) => Err(FormatError::Unsupported {
                feature: format!(
                    "writing to {}: its object store cannot create a file only if it is absent, which a commit needs (on S3, leave aws_conditional_put at etag, hoodie's setting)",
                    self.location
                ),
            }),
            Err(e) => Err(self.error(&p, e)),
        }
    }

    /// Reads an object with its version (`None`: there is none), for a later
    /// [`TableStorage::put_conditional`].
    pub async fn get_versioned(&self, rel: &str) -> Result<Option<(Bytes, UpdateVersion)>> {
        let p = self.path(rel);
        let r = match self.store.get(&p).await {
            Ok(r) => r,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(self.error(&p, e)),
        };
        let version = UpdateVersion {
            e_tag: r.meta.e_tag.clone(),
            version: r.meta.version.clone(),
        };
        let bytes = r.bytes().await.map_err(|e| self.error(&p, e))?;
        Ok(Some((bytes, version)))
    }

    /// Writes an object if it is still at `expected` (`None`: if there is none).
    pub async fn put_conditional(
        &self,
        rel: &str,
        data: impl Into<PutPayload>,
        expected: Option<&UpdateVersion>,
    ) -> Result<ConditionalPut> {
        let p = self.path(rel);
        let mode = match expected {
            Some(v) => PutMode::Update(v.clone()),
            None => PutMode::Create,
        };
        let opts = PutOptions {
            mode,
            ..Default::default()
        };
        let put = self.store.put_opts(&p, data.into(), opts).await;
        self.wrote(rel);
        match put {
            Ok(r) => Ok(ConditionalPut::Written(UpdateVersion {
                e_tag: r.e_tag,
                version: r.version,
            })),
            Err(
                object_store::Error::AlreadyExists { .. }
                | object_store::Error::Precondition { .. },
            ) => Ok(ConditionalPut::Lost),
            Err(object_store::Error::NotImplemented { .. }) => Err(FormatError::Unsupported {
                feature: format!(
                    "locking {}: its object store cannot write a file only if it is unchanged, which the table lock of optimistic concurrency control needs",
                    self.location
                ),
            }),
            Err(e) => Err(self.error(&p, e)),
        }
    }

    /// Deletes an object; a missing object is not an error.
    pub async fn delete(&self, rel: &str) -> Result<()> {
        let p = self.path(rel);
        let deleted = self.store.delete(&p).await;
        self.wrote(rel);
        match deleted {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.error(&p, e)),
        }
    }

    /// Lists the files directly in `rel` (not recursive).
    pub async fn list_dir(&self, rel: &str) -> Result<Vec<ObjectMeta>> {
        let p = self.path(rel);
        match self.store.list_with_delimiter(Some(&p)).await {
            Ok(r) => Ok(r.objects),
            Err(object_store::Error::NotFound { .. }) => Ok(vec![]),
            Err(e) => Err(self.error(&p, e)),
        }
    }

    /// The names of the folders directly in `rel`.
    pub async fn list_dirs(&self, rel: &str) -> Result<Vec<String>> {
        let p = self.path(rel);
        match self.store.list_with_delimiter(Some(&p)).await {
            Ok(r) => Ok(r
                .common_prefixes
                .iter()
                .filter_map(|d| d.filename().map(str::to_string))
                .collect()),
            Err(object_store::Error::NotFound { .. }) => Ok(vec![]),
            Err(e) => Err(self.error(&p, e)),
        }
    }

    /// Deletes every object of the table (DROP TABLE of a table on an object store).
    pub async fn delete_all(&self) -> Result<()> {
        let deleted = self.delete_every_object().await;
        self.wrote(".hoodie");
        deleted
    }

    async fn delete_every_object(&self) -> Result<()> {
        for meta in self.list_all("").await? {
            let p = meta.location;
            match self.store.delete(&p).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(self.error(&p, e)),
            }
        }
        Ok(())
    }

    /// Lists every file under `rel`, recursively.
    pub async fn list_all(&self, rel: &str) -> Result<Vec<ObjectMeta>> {
        let p = self.path(rel);
        match self.store.list(Some(&p)).try_collect::<Vec<_>>().await {
            Ok(v) => Ok(v),
            Err(object_store::Error::NotFound { .. }) => Ok(vec![]),
            Err(e) => Err(self.error(&p, e)),
        }
    }
}

fn absolute(dir: &std::path::Path) -> std::path::PathBuf {
    let abs = if dir.is_absolute() {
        dir.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|c| c.join(dir))
            .unwrap_or_else(|_| dir.to_path_buf())
    };
    // Normalise `.` and `..` without touching the file system (the directory may not exist).
    let mut out = std::path::PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The whole file at `p` of the local file system `fs`, read on a blocking thread as
/// object_store reads it, its errors as object_store's.
async fn read_local(fs: &LocalFileSystem, p: &Path) -> object_store::Result<Bytes> {
    use std::io::ErrorKind;
    let file = fs.path_to_filesystem(p)?;
    let read = move || match std::fs::read(&file) {
        Ok(b) => Ok(Bytes::from(b)),
        // a directory is no object, as object_store has it
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::IsADirectory) => {
            Err(object_store::Error::NotFound {
                path: file.display().to_string(),
                source: Box::new(e),
            })
        }
        Err(e) => Err(generic(e)),
    };
    match tokio::runtime::Handle::try_current() {
        Ok(rt) => rt.spawn_blocking(read).await.map_err(generic)?,
        Err(_) => read(),
    }
}

/// The byte ranges `ranges` of the file at `p` of the local file system `fs` (see
/// [`read_local`]).
async fn read_local_ranges(
    fs: &LocalFileSystem,
    p: &Path,
    ranges: Vec<std::ops::Range<u64>>,
) -> object_store::Result<Vec<Bytes>> {
    use std::io::{Read, Seek, SeekFrom};
    let file = fs.path_to_filesystem(p)?;
    let read = move || -> object_store::Result<Vec<Bytes>> {
        let mut f = std::fs::File::open(&file).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => object_store::Error::NotFound {
                path: file.display().to_string(),
                source: Box::new(e),
            },
            _ => generic(e),
        })?;
        let mut out = Vec::with_capacity(ranges.len());
        for r in ranges {
            let len = r.end.saturating_sub(r.start);
            let mut buf = Vec::with_capacity(len as usize);
            f.seek(SeekFrom::Start(r.start)).map_err(generic)?;
            // `take` reads into the buffer's spare capacity: nothing is zeroed first
            (&mut f).take(len).read_to_end(&mut buf).map_err(generic)?;
            if (buf.len() as u64) < len {
                let short = std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!(
                        "bytes {}..{} are past the end of {}",
                        r.start,
                        r.end,
                        file.display()
                    ),
                );
                return Err(generic(short));
            }
            out.push(Bytes::from(buf));
        }
        Ok(out)
    };
    match tokio::runtime::Handle::try_current() {
        Ok(rt) => rt.spawn_blocking(read).await.map_err(generic)?,
        Err(_) => read(),
    }
}

fn generic(e: impl std::error::Error + Send + Sync + 'static) -> object_store::Error {
    object_store::Error::Generic {
        store: "LocalFileSystem",
        source: Box::new(e),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_store_url_names_its_tables_location() {
        for location in ["/tmp/wh/t", "s3://bucket/a b/ü"] {
            let storage = TableStorage::new(
                Arc::new(object_store::memory::InMemory::new()),
                Path::from("t"),
                location,
            );
            let url = url::Url::parse(&storage.store_url()).unwrap();
            assert_eq!(location_of_store_url(&url).as_deref(), Some(location));
        }
        // not such a URL, or a damaged one: no location, no panic
        for other in [
            "file:///tmp/t",
            "hoodie-store://abc",
            "hoodie-store://abc-6",
            "hoodie-store://abc-zz",
        ] {
            assert_eq!(
                location_of_store_url(&url::Url::parse(other).unwrap()),
                None,
                "{other}"
            );
        }
    }
    use super::*;

    /// Local reads bypass object_store: the same bytes, a missing file not found, a range past
    /// the end an error.
    #[tokio::test]
    async fn local_reads_give_the_bytes_and_the_errors_object_store_gives() {
        let dir = tempfile::tempdir().unwrap();
        let storage = TableStorage::local(dir.path()).unwrap();
        storage.put("p/f", b"0123456789".to_vec()).await.unwrap();
        assert_eq!(storage.get("p/f").await.unwrap().as_ref(), b"0123456789");
        let p = storage.path("p/f");
        let got = storage
            .get_ranges(&p, vec![2..5, 0..1, 9..10])
            .await
            .unwrap();
        let got: Vec<&[u8]> = got.iter().map(|b| b.as_ref()).collect();
        assert_eq!(got, [&b"234"[..], b"0", b"9"]);
        assert!(storage.get_ranges(&p, vec![0..1, 8..12]).await.is_err());
        assert!(storage.get("p/nope").await.unwrap_err().is_not_found());
        assert!(storage.get("p").await.unwrap_err().is_not_found());
        let missing = storage.path("p/nope");
        let err = storage
            .get_ranges(&missing, vec![0..1, 1..2])
            .await
            .unwrap_err();
        assert!(matches!(err, object_store::Error::NotFound { .. }), "{err}");
    }

    #[tokio::test]
    async fn a_local_path_in_an_error_keeps_its_leading_slash() {
        let dir = tempfile::tempdir().unwrap();
        let storage = TableStorage::local(dir.path()).unwrap();
        let err = storage.get("nope/file").await.unwrap_err().to_string();
        let shown = format!("{}/nope/file", dir.path().display());
        assert!(shown.starts_with('/'));
        assert!(
            err.starts_with(&format!("storage error on {shown}: ")),
            "{err}"
        );
        // object_store's own text names the path the same way
        let detail = &err[format!("storage error on {shown}: ").len()..];
        assert!(!detail.contains(&format!(" {}", &shown[1..])), "{err}");
    }
}
