//! The sqllogictest [`AsyncDB`]s: hoodie's own session, or Spark with Hudi as the oracle.

use std::sync::Arc;

use async_trait::async_trait;
use hoodie_datafusion::{HoodieContext, StatementOutput};
use sqllogictest::{AsyncDB, DBOutput};

use crate::df_db::DataFusionDb;
use crate::error::DbError;
use crate::normalize::{rows_output, DfColumnType};
use crate::spark::SparkDb;

/// The label of hoodie in `skipif` / `onlyif` conditions.
pub const HOODIE_LABEL: &str = "hoodie";
/// The label a hoodie run on workers (`--workers`) also answers to: `skipif workers` for
/// what only holds in one process (a plan's text).
pub const WORKERS_LABEL: &str = "workers";

/// A sqllogictest connection: runs each record's SQL through a shared [`HoodieContext`].
#[derive(Clone)]
pub struct HoodieDb {
    ctx: Arc<HoodieContext>,
}

impl HoodieDb {
    /// A connection over `ctx`; clones share the session.
    pub fn new(ctx: Arc<HoodieContext>) -> Self {
        Self { ctx }
    }
}

#[async_trait]
impl AsyncDB for HoodieDb {
    type Error = DbError;
    type ColumnType = DfColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<DfColumnType>, DbError> {
        match self.ctx.run(sql).await? {
            StatementOutput::Count(n) => Ok(DBOutput::StatementComplete(n)),
            StatementOutput::Changed(c) => Ok(DBOutput::StatementComplete(c.affected())),
            StatementOutput::Done => Ok(DBOutput::StatementComplete(0)),
            StatementOutput::Rows { schema, batches } => Ok(rows_output(&schema, &batches)?),
        }
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        HOODIE_LABEL
    }
}

/// The connection of a run: hoodie, hoodie answering as DataFusion's runner for `hoodie-slt
/// --datafusion`, or Spark for `hoodie-slt --engine spark`.
#[derive(Clone)]
pub enum EngineDb {
    /// hoodie's own session.
    Hoodie(HoodieDb),
    /// hoodie's session set up and answering as DataFusion's runner.
    DataFusion(DataFusionDb),
    /// A Spark session with Hudi.
    Spark(SparkDb),
}

#[async_trait]
impl AsyncDB for EngineDb {
    type Error = DbError;
    type ColumnType = DfColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<DfColumnType>, DbError> {
        match self {
            Self::Hoodie(db) => db.run(sql).await,
            Self::DataFusion(db) => db.run(sql).await,
            Self::Spark(db) => Ok(db.run(sql).await?),
        }
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        match self {
            Self::Hoodie(db) => db.engine_name(),
            Self::DataFusion(db) => db.engine_name(),
            Self::Spark(db) => db.engine_name(),
        }
    }
}
