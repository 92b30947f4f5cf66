//! The instant texts Hudi 1.2 takes in `TIMESTAMP AS OF` and incremental bounds, normalised to
//! the timeline's `yyyyMMddHHmmssSSS` form.

use chrono::{Local, NaiveDate, NaiveDateTime, TimeZone, Utc};

use crate::error::{FormatError, Result};
use crate::timeline::instant::INSTANT_FORMAT;

/// The zone instants are minted in (`hoodie.table.timeline.timezone`): epoch values are turned
/// into instants in it. Date-time texts are taken as written (Hudi reformats them lexically).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstantZone {
    /// UTC.
    Utc,
    /// The machine's local zone.
    Local,
}

/// The forms [`query_instant`] takes, for error messages.
pub const QUERY_INSTANT_FORMATS: &str = "yyyyMMddHHmmss, yyyyMMddHHmmssSSS, 'yyyy-MM-dd HH:mm:ss[.SSS]', 'yyyy-MM-ddTHH:mm:ss[.SSS]', 'yyyy-MM-dd', epoch seconds (10 digits) or epoch milliseconds (13 digits)";

/// Timeline sentinels Hudi accepts as instants (init, metadata bootstrap, full bootstrap).
const SENTINELS: [&str; 3] = ["00000000000000", "00000000000001", "00000000000002"];

fn unsupported(text: &str) -> FormatError {
    FormatError::InstantText {
        value: text.to_string(),
        formats: QUERY_INSTANT_FORMATS,
    }
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn from_millis(ms: i64, zone: InstantZone, text: &str) -> Result<String> {
    let formatted = match zone {
        InstantZone::Utc => Utc
            .timestamp_millis_opt(ms)
            .single()
            .map(|t| t.format(INSTANT_FORMAT).to_string()),
        InstantZone::Local => Local
            .timestamp_millis_opt(ms)
            .single()
            .map(|t| t.format(INSTANT_FORMAT).to_string()),
    };
    formatted.ok_or_else(|| unsupported(text))
}

/// Normalises a time-travel instant (`TIMESTAMP AS OF`, `as.of.instant`) as Hudi 1.2 does: by
/// its length and shape. Timeline instants (14 or 17 digits) pass through once validated.
pub fn query_instant(text: &str, zone: InstantZone) -> Result<String> {
    let t = text.trim();
    match t.len() {
        14 | 17 if digits(t) => {
            if SENTINELS.contains(&t) {
                return Ok(t.to_string());
            }
            let padded = if t.len() == 14 {
                format!("{t}000")
            } else {
                t.to_string()
            };
            NaiveDateTime::parse_from_str(&padded, INSTANT_FORMAT)
                .map(|_| t.to_string())
                .map_err(|_| unsupported(text))
        }
        10 if digits(t) => {
            let secs: i64 = t.parse().map_err(|_| unsupported(text))?;
            from_millis(secs.saturating_mul(1000), zone, text)
        }
        13 if digits(t) => {
            let ms: i64 = t.parse().map_err(|_| unsupported(text))?;
            from_millis(ms, zone, text)
        }
        10 => NaiveDate::parse_from_str(t, "%Y-%m-%d")
            .map(|d| format!("{}000000000", d.format("%Y%m%d")))
            .map_err(|_| unsupported(text)),
        19 | 23 => {
            let sep = t.as_bytes()[10];
            if sep != b' ' && sep != b'T' {
                return Err(unsupported(text));
            }
            let normal = format!(
                "{} {}{}",
                &t[..10],
                &t[11..],
                if t.len() == 19 { ".000" } else { "" }
            );
            NaiveDateTime::parse_from_str(&normal, "%Y-%m-%d %H:%M:%S%.3f")
                .map(|d| d.format(INSTANT_FORMAT).to_string())
                .map_err(|_| unsupported(text))
        }
        _ => Err(unsupported(text)),
    }
}

/// Normalises an incremental bound: `earliest` and `000` (the start of the timeline) become
/// `000`; anything else must be a form [`query_instant`] takes.
pub fn incremental_instant(text: &str, zone: InstantZone) -> Result<String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("earliest") || t == "000" {
        return Ok("000".to_string());
    }
    query_instant(t, zone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_hudi_takes() {
        let z = InstantZone::Utc;
        assert_eq!(
            query_instant("20240418173551906", z).unwrap(),
            "20240418173551906"
        );
        assert_eq!(
            query_instant("20240418173551", z).unwrap(),
            "20240418173551"
        );
        assert_eq!(
            query_instant("2024-04-18 17:35:51", z).unwrap(),
            "20240418173551000"
        );
        assert_eq!(
            query_instant("2024-04-18 17:35:51.906", z).unwrap(),
            "20240418173551906"
        );
        assert_eq!(
            query_instant("2024-04-18T17:35:51.906", z).unwrap(),
            "20240418173551906"
        );
        assert_eq!(query_instant("2024-04-18", z).unwrap(), "20240418000000000");
        assert_eq!(query_instant("1713461751", z).unwrap(), "20240418173551000");
        assert_eq!(
            query_instant("1713461751906", z).unwrap(),
            "20240418173551906"
        );
        assert_eq!(
            query_instant("00000000000000", z).unwrap(),
            "00000000000000"
        );
    }

    #[test]
    fn junk_is_an_error_naming_the_forms() {
        for bad in [
            "42",
            "2024-13-01",
            "20241340000000000",
            "2024-04-18X17:35:51",
            "yesterday",
            "",
            // non-ASCII text of the lengths the date forms have
            "2024-04-1é 17:35:51",
            "2024-04-18 17:35:5é",
            "é024-04-1",
            "2024-04-18T17:35:51.9é",
        ] {
            let e = query_instant(bad, InstantZone::Utc)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("Unsupported query instant time format"),
                "{bad}: {e}"
            );
            assert!(e.contains("epoch seconds"), "{e}");
        }
    }

    #[test]
    fn incremental_bounds() {
        let z = InstantZone::Utc;
        assert_eq!(incremental_instant("earliest", z).unwrap(), "000");
        assert_eq!(incremental_instant("000", z).unwrap(), "000");
        assert_eq!(
            incremental_instant("2024-04-18", z).unwrap(),
            "20240418000000000"
        );
        assert!(incremental_instant("42", z).is_err());
    }
}
