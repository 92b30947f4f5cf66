//! Table upgrades from SQL: `CALL upgrade_table`, and the upgrade a write runs first when the
//! session asks for a table version above its table's (`hoodie.write.auto.upgrade`).

use std::collections::BTreeMap;

use datafusion::prelude::SessionContext;
use datafusion::sql::parser::Statement as DFStatement;
use hoodie_format::client::TableServices;
use hoodie_format::config;
use hoodie_format::upgrade::UpgradeSpec;
use hoodie_format::write::{FileSpec, WriteOptions};
use hoodie_format::HudiTable;
use sqlparser::ast::{FromTable, ObjectName, Statement, TableFactor, TableObject};

use super::ddl::{reregister, table_provider};
use crate::error::{HoodieError, Result};
use crate::options::write::SessionOptions;
use crate::provider::as_hudi;

/// Upgrades `table` to version `to` under `options` (the session's, and a call's own) as
/// Hudi's upgrade handlers do, then registers the upgraded table again as `name` (if the
/// session knows it by one), so the next statement plans against the new version.
pub(super) async fn upgrade_and_reopen(
    ctx: &SessionContext,
    name: Option<&str>,
    table: &HudiTable,
    to: u32,
    options: BTreeMap<String, String>,
) -> Result<()> {
    let options = WriteOptions::new(options, table.config());
    let mor = table.config().table_type()? == hoodie_format::table_config::TableType::MergeOnRead;
    let spec = UpgradeSpec {
        metadata: hoodie_format::metadata_table::MetadataTableRule::resolve(|k| options.get(k))?,
        archive: hoodie_format::archive::ArchiveSpec::resolve(|k| options.get(k), mor)?,
        files: FileSpec::resolve(&options)?,
    };
    let concurrency = hoodie_format::concurrency::ConcurrencySpec::resolve(|k| options.get(k))?;
    TableServices::new(table, concurrency)
        .change_version(to, &spec)
        .await?;
    if let Some(name) = name.filter(|n| !n.is_empty()) {
        let upgraded = HudiTable::open(table.storage().clone()).await?;
        reregister(ctx, name, upgraded).await?;
    }
    Ok(())
}

/// Before a write (`stmt`: an INSERT, UPDATE, DELETE or MERGE) to a Hudi table: when the
/// session sets `hoodie.write.table.version` above the table's version and
/// `hoodie.write.auto.upgrade` is on (its default), upgrades the table first, as a Hudi 1.x
/// writer does before it writes. A failed upgrade fails the statement before anything of it
/// is written.
///
/// Only a version the session sets explicitly upgrades: hoodie has no catalog that keeps the
/// version a table was created with (Spark keeps it among the table's catalog properties), so
/// with Hudi's default (9) every write to a table created as version 6 in an earlier session
/// would upgrade it, and its Hudi 0.x readers would lose it.
pub(super) async fn before_write(ctx: &SessionContext, stmt: &Statement) -> Result<()> {
    let Some(target) = write_target(stmt) else {
        return Ok(());
    };
    let session = SessionOptions::of(ctx.state_ref().read().config_options());
    let Some(asked) = session.get(config::WRITE_TABLE_VERSION.key) else {
        return Ok(());
    };
    config::WRITE_TABLE_VERSION
        .check(asked)
        .map_err(hoodie_format::FormatError::from)?;
    let to: u32 = asked.trim().parse().unwrap_or_default();
    let name = crate::frontend::name_of(target);
    // a name that is not a Hudi table of the session fails (or plans) as it does without this
    let Ok(Some(provider)) = table_provider(ctx, &name).await else {
        return Ok(());
    };
    let Some(hudi) = as_hudi(&provider).filter(|h| !h.is_read_only()) else {
        return Ok(());
    };
    let table = hudi.table();
    let from = table.config().version()?;
    let options = hudi.write_options(&session);
    let auto = options
        .get(&config::WRITE_AUTO_UPGRADE)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
    if from >= to || !auto {
        return Ok(());
    }
    upgrade_and_reopen(ctx, Some(&name), table, to, session.all().clone())
        .await
        .map_err(|source| HoodieError::AutoUpgrade {
            table: name,
            from,
            to,
            source: Box::new(source),
        })
}

/// The same for a statement of DataFusion's grammar (a DELETE).
pub(super) async fn before_datafusion_write(
    ctx: &SessionContext,
    stmt: &DFStatement,
) -> Result<()> {
    match stmt {
        DFStatement::Statement(s) if matches!(**s, Statement::Delete(_)) => {
            before_write(ctx, s).await
        }
        _ => Ok(()),
    }
}

fn factor_name(f: &TableFactor) -> Option<&ObjectName> {
    match f {
        TableFactor::Table { name, .. } => Some(name),
        _ => None,
    }
}

/// The table an INSERT, UPDATE, DELETE or MERGE writes to (not an EXPLAIN's: it writes
/// nothing unless it is an EXPLAIN ANALYZE, which runs as planned on the table's version).
fn write_target(stmt: &Statement) -> Option<&ObjectName> {
    match stmt {
        Statement::Insert(i) => match &i.table {
            TableObject::TableName(name) => Some(name),
            _ => None,
        },
        Statement::Update(u) => factor_name(&u.table.relation),
        Statement::Delete(d) => match &d.from {
            FromTable::WithFromKeyword(f) | FromTable::WithoutKeyword(f) => {
                f.first().and_then(|t| factor_name(&t.relation))
            }
        },
        Statement::Merge(m) => factor_name(&m.table),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(sql: &str) -> Option<String> {
        let stmt =
            sqlparser::parser::Parser::parse_sql(&sqlparser::dialect::GenericDialect {}, sql)
                .unwrap()
                .remove(0);
        write_target(&stmt).map(crate::frontend::name_of)
    }

    #[test]
    fn finds_the_table_each_write_statement_writes() {
        assert_eq!(target("INSERT INTO T VALUES (1)").as_deref(), Some("t"));
        assert_eq!(target("UPDATE db.T SET a = 1").as_deref(), Some("db.t"));
        assert_eq!(target("DELETE FROM t WHERE a = 1").as_deref(), Some("t"));
        assert_eq!(
            target("MERGE INTO t USING s ON t.k = s.k WHEN MATCHED THEN DELETE").as_deref(),
            Some("t")
        );
        assert_eq!(target("EXPLAIN INSERT INTO t VALUES (1)"), None);
        assert_eq!(target("SELECT * FROM t"), None);
    }
}
