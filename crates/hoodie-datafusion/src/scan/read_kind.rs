//! [`ReadKind`]: which of Hudi's queries a read of a table runs (snapshot, read-optimized,
//! time travel, incremental), and how the read options (`hoodie.datasource.query.type`,
//! `hoodie.datasource.read.begin.instanttime`, `as.of.instant`, ...) choose it.

use hoodie_format::config::{
    self, AS_OF_INSTANT, CDC_IMAGE_FORMAT, INCREMENTAL_FORMAT, QUERY_TYPE, READ_BEGIN_INSTANT,
    READ_END_INSTANT,
};
use hoodie_format::history::{incremental_instant, query_instant, InstantZone};
use hoodie_format::TableConfig;

use crate::error::HoodieError;

/// What a read of a Hudi table returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadKind {
    /// The latest merged state (Hudi's snapshot query).
    Snapshot,
    /// Base files alone (Hudi's read-optimized query of a merge-on-read table).
    ReadOptimized,
    /// The table as of an instant (`TIMESTAMP AS OF`): per file group the latest slice
    /// committed at or before it, logs merged as of it.
    AsOf(String),
    /// The latest state of the records the completed writes of `(begin, end]` wrote (Hudi's
    /// incremental query in its `latest_state` format).
    Incremental {
        /// Exclusive start (`000`: from the first commit).
        begin: String,
        /// Inclusive end (`None`: the latest commit).
        end: Option<String>,
    },
    /// The change rows of the completed writes of `(begin, end]` on requested time (Hudi's
    /// incremental query in its `cdc` format): `op`, `ts_ms`, `before`, `after`.
    Changes {
        /// Exclusive start (`000`: from the first commit).
        begin: String,
        /// Inclusive end (`None`: the latest commit).
        end: Option<String>,
        /// How the images are given.
        images: crate::scan::cdc::ImageFormat,
    },
}

impl ReadKind {
    /// A short name for messages.
    pub fn describe(&self) -> String {
        match self {
            ReadKind::Snapshot => "snapshot".into(),
            ReadKind::ReadOptimized => "read-optimized".into(),
            ReadKind::AsOf(t) => format!("time-travel (as of {t})"),
            ReadKind::Incremental { begin, end } => format!(
                "incremental ({begin}, {}]",
                end.as_deref().unwrap_or("latest")
            ),
            ReadKind::Changes { begin, end, .. } => {
                format!("CDC ({begin}, {}]", end.as_deref().unwrap_or("latest"))
            }
        }
    }
}

/// The zone a table mints instants in (`hoodie.table.timeline.timezone`).
pub fn instant_zone(config: &TableConfig) -> InstantZone {
    match config.get(&config::TIMELINE_TIMEZONE) {
        Some(z) if z.eq_ignore_ascii_case("LOCAL") => InstantZone::Local,
        _ => InstantZone::Utc,
    }
}

/// The read the options `get` finds ask for, or `None` when they name none (the snapshot
/// query unless something else decides). Values are checked: a bad query type, a bad instant
/// or an incremental query without a begin instant is an error.
pub fn read_from_options<'a>(
    get: impl Fn(&str) -> Option<&'a str>,
    zone: InstantZone,
) -> Result<Option<ReadKind>, HoodieError> {
    let value = |key: &config::ConfigKey| -> Result<Option<&'a str>, HoodieError> {
        let found = std::iter::once(key.key)
            .chain(key.aliases.iter().copied())
            .find_map(&get);
        if let Some(v) = found {
            key.check(v)?;
        }
        Ok(found)
    };
    let as_of = value(&AS_OF_INSTANT)?;
    let query = value(&QUERY_TYPE)?.map(|q| q.trim().to_ascii_lowercase());
    match query.as_deref() {
        Some("incremental") => {
            let cdc =
                value(&INCREMENTAL_FORMAT)?.is_some_and(|f| f.trim().eq_ignore_ascii_case("cdc"));
            let begin = value(&READ_BEGIN_INSTANT)?.ok_or_else(|| HoodieError::NoBeginInstant {
                key: READ_BEGIN_INSTANT.key,
            })?;
            let end = value(&READ_END_INSTANT)?
                .map(|e| incremental_instant(e, zone))
                .transpose()?;
            let begin = incremental_instant(begin, zone)?;
            if cdc {
                let images = crate::scan::cdc::ImageFormat::parse(value(&CDC_IMAGE_FORMAT)?)?;
                return Ok(Some(ReadKind::Changes { begin, end, images }));
            }
            Ok(Some(ReadKind::Incremental { begin, end }))
        }
        Some("read_optimized") => Ok(Some(ReadKind::ReadOptimized)),
        _ => Ok(as_of
            .map(|t| query_instant(t, zone).map(ReadKind::AsOf))
            .transpose()?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn read(pairs: &[(&str, &str)]) -> Result<Option<ReadKind>, HoodieError> {
        let map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        read_from_options(|k| map.get(k).map(String::as_str), InstantZone::Utc)
    }

    #[test]
    fn options_choose_the_read() {
        assert_eq!(read(&[]).unwrap(), None);
        assert_eq!(
            read(&[("hoodie.datasource.query.type", "snapshot")]).unwrap(),
            None
        );
        assert_eq!(
            read(&[("hoodie.datasource.query.type", "READ_OPTIMIZED")]).unwrap(),
            Some(ReadKind::ReadOptimized)
        );
        assert_eq!(
            read(&[
                ("hoodie.datasource.query.type", "incremental"),
                ("hoodie.datasource.read.begin.instanttime", "earliest"),
                ("hoodie.datasource.read.end.instanttime", "2024-01-02"),
            ])
            .unwrap(),
            Some(ReadKind::Incremental {
                begin: "000".into(),
                end: Some("20240102000000000".into())
            })
        );
        assert_eq!(
            read(&[("as.of.instant", "2024-01-02 03:04:05")]).unwrap(),
            Some(ReadKind::AsOf("20240102030405000".into()))
        );
    }

    #[test]
    fn bad_options_are_errors() {
        let e = read(&[("hoodie.datasource.query.type", "incremental")]).unwrap_err();
        assert!(e.to_string().contains("begin.instanttime"), "{e}");
        let e = read(&[("hoodie.datasource.query.type", "latest")]).unwrap_err();
        assert!(
            e.to_string()
                .contains("snapshot, read_optimized, incremental"),
            "{e}"
        );
        let e = read(&[("as.of.instant", "soon")]).unwrap_err();
        assert!(e.to_string().contains("Unsupported query instant"), "{e}");
        let e = read(&[
            ("hoodie.datasource.query.type", "incremental"),
            ("hoodie.datasource.read.begin.instanttime", "000"),
            ("hoodie.datasource.query.incremental.format", "cdc"),
            ("hoodie.datafusion.cdc.image.format", "xml"),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("json, struct"), "{e}");
    }

    #[test]
    fn the_cdc_format_reads_changes() {
        let got = read(&[
            ("hoodie.datasource.query.type", "incremental"),
            ("hoodie.datasource.read.begin.instanttime", "earliest"),
            ("hoodie.datasource.query.incremental.format", "cdc"),
            ("hoodie.datafusion.cdc.image.format", "STRUCT"),
        ])
        .unwrap();
        assert_eq!(
            got,
            Some(ReadKind::Changes {
                begin: "000".into(),
                end: None,
                images: crate::scan::cdc::ImageFormat::Struct
            })
        );
    }
}
