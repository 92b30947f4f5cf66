//! `SET` and `RESET` of `hoodie.*` and `spark.sql.*` keys in Spark's syntax (`SET k = v`
//! with the value unquoted), stored in the session's config extensions, and of object-store
//! options (`aws_region`, `fs.s3a.endpoint`, ...) for the tables the session opens.

use datafusion::dataframe::DataFrame;
use datafusion::prelude::SessionContext;

use crate::error::{HoodieError, Result};
use crate::options::session::{HoodieSessionConfig, SparkSessionConfig};

/// `SET key = value`.
pub(super) fn set(ctx: &SessionContext, key: &str, value: &str) -> Result<DataFrame> {
    if hoodie_format::location::storage_option(key, value).is_some() {
        ctx.state_ref()
            .write()
            .config_mut()
            .options_mut()
            .extensions
            .get_mut::<HoodieSessionConfig>()
            .ok_or_else(|| not_installed(key))?
            .set_storage(key, value);
        return Ok(ctx.read_empty()?);
    }
    let state = ctx.state_ref();
    let mut state = state.write();
    let options = state.config_mut().options_mut();
    let lower = key.to_ascii_lowercase();
    if lower.starts_with("hoodie.") && options.extensions.get::<HoodieSessionConfig>().is_none() {
        return Err(not_installed(key));
    }
    if lower.starts_with("spark.") && options.extensions.get::<SparkSessionConfig>().is_none() {
        return Err(not_installed(key));
    }
    // a value the key does not take is refused here, with the key, the value and what it takes
    options.set(key, value)?;
    let about_inserts = [
        "dup.policy",
        "write.operation",
        "insert.into.operation",
        "bulk.insert",
    ];
    let extensions = &mut options.extensions;
    if let Some(c) = extensions
        .get_mut::<HoodieSessionConfig>()
        .filter(|_| about_inserts.iter().any(|k| lower.contains(k)))
    {
        if let Some(warning) = ignored_dup_policy(c) {
            c.push_warning(warning);
        }
    }
    drop(state);
    Ok(ctx.read_empty()?)
}

/// A warning when the session's options ask for a duplicate policy and for `bulk_insert`
/// INSERTs, which do not look keys up: the policy will be ignored (as Hudi ignores it).
fn ignored_dup_policy(c: &HoodieSessionConfig) -> Option<String> {
    use hoodie_format::config::{
        INSERT_DUP_POLICY, SQL_BULK_INSERT_ENABLE, SQL_INSERT_INTO_OPERATION, WRITE_OPERATION,
    };
    let policy = c.get(INSERT_DUP_POLICY.key)?;
    if !policy.eq_ignore_ascii_case("fail") {
        return None;
    }
    let bulk = |v: Option<&str>| v.is_some_and(|v| v.eq_ignore_ascii_case("bulk_insert"));
    let by = if bulk(c.get(WRITE_OPERATION.key)) {
        WRITE_OPERATION.key
    } else if c.get(WRITE_OPERATION.key).is_none() && bulk(c.get(SQL_INSERT_INTO_OPERATION.key)) {
        SQL_INSERT_INTO_OPERATION.key
    } else if c
        .get(SQL_BULK_INSERT_ENABLE.key)
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    {
        SQL_BULK_INSERT_ENABLE.key
    } else {
        return None;
    };
    Some(format!("{} = {policy} will have no effect: {by} makes INSERTs bulk_insert, which does not look up the keys the table holds (use the insert operation for the policy to apply)", INSERT_DUP_POLICY.key))
}

/// `RESET key`, or `RESET` of every `hoodie.*` and `spark.*` value.
pub(super) fn reset(ctx: &SessionContext, key: Option<&str>) -> Result<DataFrame> {
    let storage = key.is_some_and(|k| hoodie_format::location::storage_option(k, "").is_some());
    let spark = !storage && key.is_some_and(|k| k.to_ascii_lowercase().starts_with("spark."));
    let hoodie = key.is_none_or(|k| !k.to_ascii_lowercase().starts_with("spark."));
    let state = ctx.state_ref();
    let mut state = state.write();
    let extensions = &mut state.config_mut().options_mut().extensions;
    if hoodie {
        extensions
            .get_mut::<HoodieSessionConfig>()
            .ok_or_else(|| not_installed("hoodie.*"))?
            .remove(key);
    }
    if spark || key.is_none() {
        extensions
            .get_mut::<SparkSessionConfig>()
            .ok_or_else(|| not_installed("spark.*"))?
            .remove(key);
    }
    drop(state);
    Ok(ctx.read_empty()?)
}

fn not_installed(key: &str) -> HoodieError {
    HoodieError::NotInstalled {
        key: key.to_string(),
    }
}
