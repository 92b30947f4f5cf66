//! Names of base files and log files.

use crate::error::{FormatError, Result};

/// Parsed base file name `<fileId>_<writeToken>_<instant>.<ext>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseFileName {
    /// File group id.
    pub file_id: String,
    /// Write token `<taskPartitionId>-<stageId>-<attemptId>`.
    pub write_token: String,
    /// Instant (requested time) of the commit that wrote it.
    pub instant: String,
    /// Extension without the dot (`parquet`).
    pub extension: String,
}

impl BaseFileName {
    /// Parses a base file name.
    pub fn parse(name: &str) -> Result<Self> {
        let bad = |reason| FormatError::InvalidFileName {
            name: name.to_string(),
            reason,
        };
        let (stem, ext) = name.rsplit_once('.').ok_or_else(|| bad("no extension"))?;
        let mut parts = stem.splitn(3, '_');
        let file_id = parts
            .next()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| bad("no file id"))?;
        let token = parts.next().ok_or_else(|| bad("no write token"))?;
        let instant = parts.next().ok_or_else(|| bad("no instant time"))?;
        if instant.is_empty() || !instant.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad("instant time is not numeric"));
        }
        Ok(Self {
            file_id: file_id.into(),
            write_token: token.into(),
            instant: instant.into(),
            extension: ext.into(),
        })
    }

    /// A new base file name.
    pub fn new(file_id: &str, write_token: &str, instant: &str) -> Self {
        Self {
            file_id: file_id.into(),
            write_token: write_token.into(),
            instant: instant.into(),
            extension: "parquet".into(),
        }
    }

    /// The file name.
    pub fn name(&self) -> String {
        format!(
            "{}_{}_{}.{}",
            self.file_id, self.write_token, self.instant, self.extension
        )
    }
}

/// Parsed log file name `.<fileId>_<instant>.log.<version>_<writeToken>[.cdc]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogFileName {
    /// File group id.
    pub file_id: String,
    /// Base instant (v6) or deltacommit instant (v8+).
    pub instant: String,
    /// Log version.
    pub version: u32,
    /// Write token, if present.
    pub write_token: Option<String>,
    /// True for `.cdc` logs.
    pub is_cdc: bool,
}

impl LogFileName {
    /// Parses a log file name; `None` if `name` is not a log file. As Hudi's log file pattern,
    /// the write token is three numbers (`<task>-<stage>-<attempt>`) and nothing but `.cdc`
    /// may follow it, so the checksum files Hadoop's local file system writes beside a log
    /// (`..<fileId>_<instant>.log.1_0-1-2.crc`) are not logs.
    pub fn parse(name: &str) -> Option<Self> {
        let rest = name.strip_prefix('.')?;
        let (head, tail) = rest.split_once(".log.")?;
        let (file_id, instant) = head.rsplit_once('_')?;
        if file_id.is_empty() || file_id.starts_with('.') {
            return None;
        }
        let (tail, is_cdc) = match tail.strip_suffix(".cdc") {
            Some(t) => (t, true),
            None => (tail, false),
        };
        let (version, token) = match tail.split_once('_') {
            Some((v, t)) => (v, Some(t.to_string())),
            None => (tail, None),
        };
        let numbers = |t: &str| {
            let parts: Vec<&str> = t.split('-').collect();
            parts.len() == 3
                && parts
                    .iter()
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        };
        if token.as_deref().is_some_and(|t| !numbers(t)) {
            return None;
        }
        Some(Self {
            file_id: file_id.into(),
            instant: instant.into(),
            version: version.parse().ok()?,
            write_token: token,
            is_cdc,
        })
    }
}

/// A new file group id (`<uuid>-0`, as Java's `FSUtils.createNewFileId`).
pub fn new_file_id() -> String {
    format!("{}-0", uuid::Uuid::new_v4())
}

/// A write token for writer task `task` (attempt 0).
pub fn write_token(task: usize) -> String {
    format!("{task}-0-{task}")
}

/// Name of the file that marks a directory as a Hudi partition.
pub const PARTITION_METADATA_FILE: &str = ".hoodie_partition_metadata";

/// Contents of `.hoodie_partition_metadata` for a partition of `depth` levels.
pub fn partition_metadata_text(instant: &str, depth: usize) -> String {
    let mut p = crate::properties::Properties::new();
    p.set("commitTime", instant);
    p.set("partitionDepth", depth.to_string());
    p.to_text(Some("partition metadata"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_base_and_log_names() {
        let b = BaseFileName::parse(
            "5a226868-2934-4f84-a16f-55124630c68d-0_0-182-253_20240402144910683.parquet",
        )
        .unwrap();
        assert_eq!(b.file_id, "5a226868-2934-4f84-a16f-55124630c68d-0");
        assert_eq!(b.write_token, "0-182-253");
        assert_eq!(b.instant, "20240402144910683");
        assert_eq!(
            b.name(),
            "5a226868-2934-4f84-a16f-55124630c68d-0_0-182-253_20240402144910683.parquet"
        );
        assert!(BaseFileName::parse("garbage.parquet").is_err());
        let l = LogFileName::parse(".6d3d-0_20250618054711154.log.1_0-26-85").unwrap();
        assert_eq!(
            (l.file_id.as_str(), l.instant.as_str(), l.version),
            ("6d3d-0", "20250618054711154", 1)
        );
        assert!(
            LogFileName::parse(".6d3d-0_20250618054711154.log.1_0-26-85.cdc")
                .unwrap()
                .is_cdc
        );
        assert!(LogFileName::parse("x.parquet").is_none());
        // Hadoop's checksum files beside logs (Spark on local disk writes them) are not logs
        for crc in [
            "..6d3d-0_20250618054711154.log.1_0-26-85.crc",
            "..6d3d-0_20250618054711154.log.1_0-26-85.cdc.crc",
            ".6d3d-0_20250618054711154.log.1_0-26-85.crc",
        ] {
            assert!(LogFileName::parse(crc).is_none(), "{crc}");
        }
        let id = new_file_id();
        assert!(id.ends_with("-0") && id.len() == 38);
    }
}
