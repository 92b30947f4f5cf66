//! `.hoodie/hoodie.properties` on storage, kept as Hudi's `HoodieTableConfig` keeps it.
//!
//! A file is valid when its `hoodie.table.checksum` (written last) is the checksum of its table
//! name: a file cut short loses that line. A reader takes `hoodie.properties`, else a valid
//! `hoodie.properties.backup`, else refuses the table. An update first recovers what an
//! earlier update left, writes the backup, deletes the file, writes the new one, reads it back
//! and only then deletes the backup: a crash at any step leaves a valid file or a valid backup.

use crate::config;
use crate::error::{FormatError, Result};
use crate::properties::Properties;
use crate::storage::TableStorage;
use crate::table_config::{table_checksum, TableConfig};

/// Path of the table config relative to the base.
pub const PROPERTIES_FILE: &str = ".hoodie/hoodie.properties";

/// Path of the copy kept while the table config is updated.
pub const PROPERTIES_BACKUP: &str = ".hoodie/hoodie.properties.backup";

/// What one of the two files holds.
enum Read {
    /// A file whose checksum holds, parsed.
    Valid(Box<TableConfig>),
    /// No such file.
    Missing,
    /// A file that fails its checksum: why.
    Damaged(String),
}

/// Why `props` is not a whole `hoodie.properties`, if it is not.
fn checksum_problem(props: &Properties) -> Option<String> {
    let Some(name) = props.get(config::TABLE_NAME.key) else {
        return Some("it has no hoodie.table.name".into());
    };
    let Some(sum) = props.get(config::CHECKSUM.key) else {
        return Some(
            "it has no hoodie.table.checksum, its last line (the file is cut short)".into(),
        );
    };
    let database = props.get(config::DATABASE_NAME.key).unwrap_or("");
    let expected = table_checksum(database, name);
    match sum.trim().parse::<u64>() {
        Ok(v) if v == u64::from(expected) => None,
        _ => Some(format!(
            "its hoodie.table.checksum {sum} is not {expected}, the checksum of its table name"
        )),
    }
}

async fn read_one(storage: &TableStorage, rel: &str) -> Result<Read> {
    let bytes = match storage.get(rel).await {
        Ok(b) => b,
        Err(FormatError::Storage {
            source: object_store::Error::NotFound { .. },
            ..
        }) => return Ok(Read::Missing),
        Err(e) => return Err(e),
    };
    let props = Properties::parse(&bytes);
    Ok(match checksum_problem(&props) {
        Some(why) => Read::Damaged(why),
        None => Read::Valid(Box::new(TableConfig::from_properties(props)?)),
    })
}

/// The table config of the table at `storage`: `hoodie.properties`, else its valid backup.
/// Neither file is [`FormatError::NotAHudiTable`]; only damaged ones are
/// [`FormatError::DamagedTableConfig`].
pub async fn load(storage: &TableStorage) -> Result<TableConfig> {
    let primary = match read_one(storage, PROPERTIES_FILE).await? {
        Read::Valid(c) => return Ok(*c),
        other => other,
    };
    let backup = read_one(storage, PROPERTIES_BACKUP).await?;
    match (primary, backup) {
        (_, Read::Valid(c)) => Ok(*c),
        (Read::Missing, Read::Missing) => Err(FormatError::NotAHudiTable {
            location: storage.location().to_string(),
        }),
        (Read::Damaged(why), _) => Err(FormatError::DamagedTableConfig {
            location: storage.location().to_string(),
            reason: format!("{PROPERTIES_FILE} is damaged: {why}"),
        }),
        (_, Read::Damaged(why)) => Err(FormatError::DamagedTableConfig {
            location: storage.location().to_string(),
            reason: format!(
                "{PROPERTIES_FILE} is missing and {PROPERTIES_BACKUP} is damaged: {why}"
            ),
        }),
        (Read::Valid(_), _) => unreachable!("returned above"),
    }
}

/// True if a table config (or its backup, mid-update) is at `storage`.
pub async fn exists(storage: &TableStorage) -> Result<bool> {
    Ok(storage.exists(PROPERTIES_FILE).await? || storage.exists(PROPERTIES_BACKUP).await?)
}

/// Finishes what an update that stopped left: a missing or damaged `hoodie.properties` is
/// replaced by a valid backup, and the backup is then removed. A damaged file without a
/// valid backup is left as it is (to be repaired by hand; Hudi would delete it).
pub async fn recover(storage: &TableStorage) -> Result<()> {
    let primary = read_one(storage, PROPERTIES_FILE).await?;
    if let Read::Valid(_) = primary {
        return storage.delete(PROPERTIES_BACKUP).await;
    }
    let Read::Valid(_) = read_one(storage, PROPERTIES_BACKUP).await? else {
        return Ok(());
    };
    let bytes = storage.get(PROPERTIES_BACKUP).await?;
    storage.put(PROPERTIES_FILE, bytes).await?;
    storage.delete(PROPERTIES_BACKUP).await
}

/// The checksum file Hadoop's `ChecksumFileSystem` writes beside `rel`: `dir/.name.crc`.
fn hadoop_checksum_file(rel: &str) -> String {
    match rel.rsplit_once('/') {
        Some((dir, name)) => format!("{dir}/.{name}.crc"),
        None => format!(".{rel}.crc"),
    }
}

/// Replaces the table config with `config` through the backup (Hudi's
/// `HoodieTableConfig.modify`): at every step a reader finds a valid config, the old one or
/// the new one.
pub async fn update(storage: &TableStorage, config: &TableConfig) -> Result<()> {
    recover(storage).await?;
    let current = load(storage).await?;
    storage.put(PROPERTIES_BACKUP, current.to_text()).await?;
    // readers go to the backup until the new file is whole
    storage.delete(PROPERTIES_FILE).await?;
    if storage.local_dir().is_some() {
        // the checksum Hadoop's local file system (Spark's) keeps beside the file would no
        // longer match it, and Spark could not load the table; without one it reads the file
        storage
            .delete(&hadoop_checksum_file(PROPERTIES_FILE))
            .await?;
    }
    storage.put(PROPERTIES_FILE, config.to_text()).await?;
    let written = storage.get(PROPERTIES_FILE).await?;
    if let Some(why) = checksum_problem(&Properties::parse(&written)) {
        // the backup stays: readers and the next update recover from it
        storage.delete(PROPERTIES_FILE).await?;
        return Err(FormatError::DamagedTableConfig {
            location: storage.location().to_string(),
            reason: format!("{PROPERTIES_FILE} did not read back whole after it was written ({why}); the table keeps its previous settings"),
        });
    }
    storage.delete(PROPERTIES_BACKUP).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_update_drops_hadoops_stale_checksum_of_the_file() {
        let (dir, storage) = storage();
        storage
            .put(PROPERTIES_FILE, config("t").to_text())
            .await
            .unwrap();
        let crc = dir.path().join(".hoodie/.hoodie.properties.crc");
        std::fs::write(&crc, b"stale").unwrap();
        assert_eq!(
            hadoop_checksum_file(PROPERTIES_FILE),
            ".hoodie/.hoodie.properties.crc"
        );
        let mut changed = config("t");
        changed.set("hoodie.table.metadata.partitions", "");
        update(&storage, &changed).await.unwrap();
        assert!(!crc.exists(), "the stale checksum is still there");
        assert_eq!(load(&storage).await.unwrap().to_text(), changed.to_text());
    }

    fn storage() -> (tempfile::TempDir, TableStorage) {
        let dir = tempfile::tempdir().unwrap();
        let storage = TableStorage::local(dir.path()).unwrap();
        (dir, storage)
    }

    fn config(name: &str) -> TableConfig {
        let mut p = Properties::new();
        p.set("hoodie.table.name", name);
        p.set("hoodie.table.type", "COPY_ON_WRITE");
        p.set("hoodie.table.version", "6");
        p.set("hoodie.timeline.layout.version", "1");
        p.set("hoodie.table.recordkey.fields", "id");
        TableConfig::from_properties(p).unwrap()
    }

    async fn put(storage: &TableStorage, rel: &str, text: &str) {
        storage.put(rel, text.as_bytes().to_vec()).await.unwrap();
    }

    #[tokio::test]
    async fn a_file_cut_at_any_line_is_refused_or_read_from_the_backup() {
        let (_dir, storage) = storage();
        let text = config("t").to_text();
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        for cut in 0..lines.len() {
            let short: String = lines[..cut].concat();
            put(&storage, PROPERTIES_FILE, &short).await;
            storage.delete(PROPERTIES_BACKUP).await.unwrap();
            let err = load(&storage).await.expect_err("a cut file is refused");
            assert!(
                matches!(err, FormatError::DamagedTableConfig { .. }),
                "cut at line {cut}: {err}"
            );
            assert!(err.to_string().contains("restore"), "{err}");
            // with a whole backup, the backup is read
            put(&storage, PROPERTIES_BACKUP, &text).await;
            let read = load(&storage).await.unwrap();
            assert_eq!(read.record_key_fields(), vec!["id".to_string()]);
        }
        // a cut in the middle of the checksum line is caught too
        put(&storage, PROPERTIES_FILE, &text[..text.len() - 3]).await;
        storage.delete(PROPERTIES_BACKUP).await.unwrap();
        assert!(load(&storage).await.is_err());
    }

    #[tokio::test]
    async fn a_wrong_checksum_is_refused_and_neither_file_is_no_table() {
        let (_dir, storage) = storage();
        let text = config("t")
            .to_text()
            .replace("hoodie.table.name=t", "hoodie.table.name=u");
        put(&storage, PROPERTIES_FILE, &text).await;
        let err = load(&storage).await.unwrap_err().to_string();
        assert!(err.contains("is not"), "{err}");
        storage.delete(PROPERTIES_FILE).await.unwrap();
        assert!(matches!(
            load(&storage).await,
            Err(FormatError::NotAHudiTable { .. })
        ));
    }

    #[tokio::test]
    async fn an_update_stopped_at_any_step_leaves_the_old_or_the_new_config() {
        let (_dir, storage) = storage();
        let old = config("t");
        let mut new = config("t");
        new.set("hoodie.table.recordkey.fields", "id,k");
        put(&storage, PROPERTIES_FILE, &old.to_text()).await;
        // the states an update passes through, in order
        let states: [(Option<&str>, Option<&str>); 4] = [
            (Some(&old.to_text()), Some(&old.to_text())), // backup written
            (None, Some(&old.to_text())),                 // file deleted
            (Some("#cut\nhoodie.table.name=t\n"), Some(&old.to_text())), // new file half-written
            (Some(&new.to_text()), Some(&old.to_text())), // new file written, backup not deleted
        ];
        for (i, (file, backup)) in states.iter().enumerate() {
            storage.delete(PROPERTIES_FILE).await.unwrap();
            storage.delete(PROPERTIES_BACKUP).await.unwrap();
            if let Some(f) = file {
                put(&storage, PROPERTIES_FILE, f).await;
            }
            if let Some(b) = backup {
                put(&storage, PROPERTIES_BACKUP, b).await;
            }
            let keys = load(&storage).await.unwrap().record_key_fields();
            let expect = if i == 3 { vec!["id", "k"] } else { vec!["id"] };
            assert_eq!(keys, expect, "state {i}");
            // the next update recovers and applies
            update(&storage, &new).await.unwrap();
            assert_eq!(
                load(&storage).await.unwrap().record_key_fields(),
                vec!["id", "k"]
            );
            assert!(
                !storage.exists(PROPERTIES_BACKUP).await.unwrap(),
                "state {i}"
            );
        }
    }
}
