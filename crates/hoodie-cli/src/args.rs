//! Command-line arguments of `hoodie`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser};

/// Environment variable naming the default warehouse directory.
pub const WAREHOUSE_ENV: &str = "HOODIE_WAREHOUSE";

/// Warehouse directory used when neither `--warehouse` nor `HOODIE_WAREHOUSE` is given.
pub const DEFAULT_WAREHOUSE: &str = "./hoodie-warehouse";

/// hoodie: SQL on Apache Hudi tables, powered by Apache DataFusion.
///
/// Without -f or -c, starts an interactive shell (or, when stdin is not a terminal, runs the
/// script read from stdin).
#[derive(Debug, Parser)]
#[command(name = "hoodie", version, about)]
pub struct Cli {
    /// Warehouse directory holding the tables
    /// [default: $HOODIE_WAREHOUSE, else ./hoodie-warehouse]
    #[arg(long, value_name = "DIR")]
    pub warehouse: Option<PathBuf>,

    /// Memory limit of query execution, e.g. 512M, 2G or a number of bytes
    #[arg(long, value_name = "SIZE", value_parser = parse_memory_size)]
    pub memory_limit: Option<usize>,

    /// Run the SQL script FILE (may be repeated)
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Run SQL: one or more statements separated by ';' (may be repeated)
    #[arg(short = 'c', long = "command", value_name = "SQL")]
    pub commands: Vec<String>,

    /// Set an option for the session, as `SET KEY = VALUE` would: a hoodie.* key, or an
    /// object-store option for tables at object-store locations (aws_endpoint, aws_region,
    /// fs.s3a.endpoint, google_service_account, azure_storage_account_name, ...) (may be
    /// repeated)
    #[arg(long = "option", value_name = "KEY=VALUE", value_parser = parse_option)]
    pub options: Vec<(String, String)>,

    /// Run statements on these hoodie-worker processes (HOST:PORT, separated by commas): the
    /// stages of reads and of the writes' inputs run on them, each statement's commit here
    #[arg(long, value_name = "HOST:PORT,...", value_parser = parse_workers)]
    pub workers: Option<WorkerList>,

    /// Print each statement's time on stderr (`Time: 0.042s`), as psql's \timing does, for
    /// -f, -c and scripts on stdin (the interactive shell always shows it)
    #[arg(long)]
    pub timing: bool,
}

/// The workers of `--workers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerList(pub Vec<url::Url>);

/// Parses the list of `--workers`.
fn parse_workers(s: &str) -> Result<WorkerList, String> {
    hoodie_distributed::parse_workers(s)
        .map(WorkerList)
        .map_err(|e| e.to_string())
}

/// Parses `KEY=VALUE` of `--option`.
fn parse_option(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!("expected KEY=VALUE, got {s:?}")),
    }
}

/// One piece of SQL to run non-interactively, from `-f` or `-c`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A script file (`-f FILE`).
    File(PathBuf),
    /// Inline SQL (`-c SQL`).
    Sql(String),
}

/// The parsed command line: options plus the `-f`/`-c` sources in the order given.
#[derive(Debug)]
pub struct Invocation {
    /// The parsed options.
    pub cli: Cli,
    /// `-f` and `-c` arguments, interleaved in command-line order.
    pub sources: Vec<Source>,
}

impl Invocation {
    /// Parses the process arguments.
    pub fn from_env() -> Result<Self, clap::Error> {
        Self::try_parse_from(std::env::args_os())
    }

    /// Parses `args` (the first item is the program name).
    pub fn try_parse_from<I, T>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let matches = Cli::command().try_get_matches_from(args)?;
        let cli = Cli::from_arg_matches(&matches)?;
        let sources = ordered_sources(&matches, &cli);
        Ok(Self { cli, sources })
    }

    /// The warehouse directory: `--warehouse`, else `$HOODIE_WAREHOUSE`, else the default.
    pub fn warehouse(&self) -> PathBuf {
        resolve_warehouse(self.cli.warehouse.clone(), std::env::var_os(WAREHOUSE_ENV))
    }
}

/// Picks the warehouse from the flag, then the environment value (if non-empty).
pub fn resolve_warehouse(flag: Option<PathBuf>, env: Option<OsString>) -> PathBuf {
    flag.or_else(|| env.filter(|v| !v.is_empty()).map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from(DEFAULT_WAREHOUSE))
}

/// Interleaves `-f` and `-c` values by their position on the command line.
fn ordered_sources(matches: &ArgMatches, cli: &Cli) -> Vec<Source> {
    let mut indexed: Vec<(usize, Source)> = Vec::new();
    if let Some(indices) = matches.indices_of("files") {
        indexed.extend(indices.zip(cli.files.iter().cloned().map(Source::File)));
    }
    if let Some(indices) = matches.indices_of("commands") {
        indexed.extend(indices.zip(cli.commands.iter().cloned().map(Source::Sql)));
    }
    indexed.sort_by_key(|(index, _)| *index);
    indexed.into_iter().map(|(_, source)| source).collect()
}

/// Why a memory size could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemorySizeError {
    /// The value was empty.
    #[error("empty memory size")]
    Empty,
    /// The numeric part is not a number.
    #[error("invalid number '{number}' in memory size (expected e.g. 512M, 2G or bytes)")]
    InvalidNumber {
        /// The offending numeric part.
        number: String,
    },
    /// The unit suffix is unknown.
    #[error("unknown unit '{unit}' in memory size (use K, M, G or T)")]
    UnknownUnit {
        /// The offending suffix.
        unit: String,
    },
    /// The size does not fit in memory addresses.
    #[error("memory size '{input}' is too large")]
    TooLarge {
        /// The whole input.
        input: String,
    },
    /// The size is zero.
    #[error("memory size must be greater than zero")]
    Zero,
}

/// Parses a memory size such as `512M`, `2G`, `1.5g`, `64KiB` or `1048576` (bytes).
///
/// Units are binary (K = 1024) and case-insensitive; `B`, `iB` suffixes are accepted.
pub fn parse_memory_size(input: &str) -> Result<usize, MemorySizeError> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return Err(MemorySizeError::Empty);
    }
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let multiplier: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => {
            return Err(MemorySizeError::UnknownUnit {
                unit: unit.trim().to_string(),
            })
        }
    };
    let invalid = || MemorySizeError::InvalidNumber {
        number: number.to_string(),
    };
    let too_large = || MemorySizeError::TooLarge {
        input: trimmed.to_string(),
    };
    let bytes: u64 = if number.contains('.') {
        let value: f64 = number.parse().map_err(|_| invalid())?;
        let bytes = (value * multiplier as f64).round();
        if !bytes.is_finite() || bytes >= u64::MAX as f64 {
            return Err(too_large());
        }
        bytes as u64
    } else {
        let value: u64 = number.parse().map_err(|_| invalid())?;
        value.checked_mul(multiplier).ok_or_else(too_large)?
    };
    if bytes == 0 {
        return Err(MemorySizeError::Zero);
    }
    usize::try_from(bytes).map_err(|_| too_large())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_key_value_pairs() {
        let cli = Cli::try_parse_from([
            "hoodie",
            "--option",
            "aws_endpoint=http://h:9000",
            "--option",
            "hoodie.write.concurrency.mode = optimistic_concurrency_control",
        ])
        .unwrap();
        assert_eq!(
            cli.options,
            [
                ("aws_endpoint".to_string(), "http://h:9000".to_string()),
                (
                    "hoodie.write.concurrency.mode".to_string(),
                    "optimistic_concurrency_control".to_string()
                )
            ]
        );
        assert!(Cli::try_parse_from(["hoodie", "--option", "novalue"]).is_err());
    }

    #[test]
    fn parses_memory_sizes() {
        assert_eq!(parse_memory_size("1048576"), Ok(1_048_576));
        assert_eq!(parse_memory_size("512M"), Ok(512 << 20));
        assert_eq!(parse_memory_size("2G"), Ok(2 << 30));
        assert_eq!(parse_memory_size("2g"), Ok(2 << 30));
        assert_eq!(parse_memory_size("64KiB"), Ok(64 << 10));
        assert_eq!(parse_memory_size(" 1.5G "), Ok(3 << 29));
        assert_eq!(parse_memory_size("100b"), Ok(100));
        assert_eq!(parse_memory_size("1 MB"), Ok(1 << 20));
    }

    #[test]
    fn rejects_bad_memory_sizes() {
        assert_eq!(parse_memory_size(""), Err(MemorySizeError::Empty));
        assert_eq!(parse_memory_size("0"), Err(MemorySizeError::Zero));
        assert!(matches!(
            parse_memory_size("12X"),
            Err(MemorySizeError::UnknownUnit { .. })
        ));
        assert!(matches!(
            parse_memory_size("G"),
            Err(MemorySizeError::InvalidNumber { .. })
        ));
        assert!(matches!(
            parse_memory_size("1.2.3M"),
            Err(MemorySizeError::InvalidNumber { .. })
        ));
        assert!(matches!(
            parse_memory_size("-5M"),
            Err(MemorySizeError::UnknownUnit { .. }) | Err(MemorySizeError::InvalidNumber { .. })
        ));
        assert!(matches!(
            parse_memory_size("99999999999999T"),
            Err(MemorySizeError::TooLarge { .. })
        ));
    }

    #[test]
    fn keeps_file_and_command_order() {
        let inv = Invocation::try_parse_from([
            "hoodie", "-c", "select 1", "-f", "a.sql", "-c", "select 2", "-f", "b.sql",
        ])
        .unwrap();
        assert_eq!(
            inv.sources,
            vec![
                Source::Sql("select 1".into()),
                Source::File("a.sql".into()),
                Source::Sql("select 2".into()),
                Source::File("b.sql".into()),
            ]
        );
    }

    #[test]
    fn parses_memory_limit_flag() {
        let inv = Invocation::try_parse_from(["hoodie", "--memory-limit", "2G"]).unwrap();
        assert_eq!(inv.cli.memory_limit, Some(2 << 30));
        assert!(inv.sources.is_empty());
        assert!(Invocation::try_parse_from(["hoodie", "--memory-limit", "lots"]).is_err());
    }

    #[test]
    fn resolves_warehouse() {
        assert_eq!(
            resolve_warehouse(Some("/a".into()), Some("/b".into())),
            PathBuf::from("/a")
        );
        assert_eq!(
            resolve_warehouse(None, Some("/b".into())),
            PathBuf::from("/b")
        );
        assert_eq!(
            resolve_warehouse(None, Some("".into())),
            PathBuf::from(DEFAULT_WAREHOUSE)
        );
        assert_eq!(
            resolve_warehouse(None, None),
            PathBuf::from(DEFAULT_WAREHOUSE)
        );
    }
}
