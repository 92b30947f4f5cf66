//! The sqllogictest [`AsyncDB`] over a [`HoodieContext`].

use std::sync::Arc;

use arrow::error::ArrowError;
use async_trait::async_trait;
use hoodie_datafusion::{HoodieContext, HoodieError, StatementOutput};
use sqllogictest::{AsyncDB, DBOutput};

use crate::normalize::{column_type, format_rows, DfColumnType};

/// Why a record could not be run.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// The statement failed; the message is hoodie's, unchanged, for `statement error` regexes.
    #[error(transparent)]
    Hoodie(#[from] HoodieError),
    /// A result value could not be rendered as text.
    #[error("cannot format query result: {0}")]
    Format(#[from] ArrowError),
}

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
            StatementOutput::Rows { schema, batches } => Ok(DBOutput::Rows {
                types: schema
                    .fields()
                    .iter()
                    .map(|f| column_type(f.data_type()))
                    .collect(),
                rows: format_rows(&batches)?,
            }),
        }
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        "hoodie"
    }
}
