//! The write side of [`HudiTableProvider`]: the options and spec a statement writes with, and
//! the sink plan that writes it as one commit.

use std::sync::Arc;

use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::physical_plan::ExecutionPlan;
use hoodie_format::write::{WriteSpec, WriteStatement};

use crate::error::HoodieError;
use crate::options::write::{SessionOptions, WriteOptions};
use crate::scan::read_kind::ReadKind;
use crate::scan::snapshot::PlanRead;

use crate::sink::HudiSink;

use super::HudiTableProvider;

impl HudiTableProvider {
    /// What `input`, the plan feeding a write, read of the table, or else what the open read.
    pub(super) fn plan_read(&self, input: &Arc<dyn ExecutionPlan>) -> PlanRead {
        let read = PlanRead::of(input, self.table.storage().location());
        match self.opened.take() {
            Some(opened) => read.or_opened(opened, &self.table),
            None => read,
        }
    }

    /// The error a write to a view gets.
    pub fn refuse_write(&self) -> Result<(), HoodieError> {
        if !self.read_only {
            return Ok(());
        }
        Err(HoodieError::ReadOnlyView {
            name: self.name.clone(),
            query: self
                .read
                .as_ref()
                .unwrap_or(&ReadKind::Snapshot)
                .describe()
                .to_string(),
        })
    }

    /// The options a write to this table sees in a session with `session` options.
    pub fn write_options(&self, session: &SessionOptions) -> WriteOptions {
        WriteOptions::new(session.all().clone(), self.table.config())
    }

    /// The write `statement` runs into this table in a session with `session` options,
    /// resolved and validated.
    pub fn write_spec(
        &self,
        session: &SessionOptions,
        statement: WriteStatement,
    ) -> Result<WriteSpec, HoodieError> {
        // UPDATE, DELETE and MERGE find their rows in the latest snapshot, whatever the
        // session's read options ask other reads for
        if matches!(statement, WriteStatement::ChangeSet { .. }) {
            let read = self.read_kind(session)?;
            if read != ReadKind::Snapshot {
                return Err(HoodieError::ChangeUnderOtherQuery {
                    table: self.name.clone(),
                    query: read.describe().to_string(),
                });
            }
        }
        Ok(WriteSpec::resolve(&self.write_options(session), statement)?)
    }

    /// A plan that runs `input` through `mode` as one commit.
    pub fn write_plan(
        &self,
        input: Arc<dyn ExecutionPlan>,
        mode: WriteSpec,
    ) -> Arc<dyn ExecutionPlan> {
        let read = self.plan_read(&input);
        let sink = HudiSink::new(
            self.table.clone(),
            self.name.clone(),
            self.schema.clone(),
            mode,
        )
        .with_read(read);
        Arc::new(DataSinkExec::new(input, Arc::new(sink), None))
    }

    /// A plan that writes a change set (the table's columns plus a delete flag) as one commit;
    /// `rows_in_memory` caps the bytes of rows the write holds in memory before it spills (so
    /// that the plan feeding it keeps room in the pool), `None` leaves it to the pool.
    pub fn change_set_plan(
        &self,
        input: Arc<dyn ExecutionPlan>,
        mode: WriteSpec,
        rows_in_memory: Option<usize>,
    ) -> Arc<dyn ExecutionPlan> {
        let schema = change_set_schema(&input.schema(), &self.schema);
        let read = self.plan_read(&input);
        let sink = HudiSink::new(self.table.clone(), self.name.clone(), schema, mode)
            .with_rows_in_memory(rows_in_memory)
            .with_read(read);
        Arc::new(DataSinkExec::new(input, Arc::new(sink), None))
    }

    /// The partition path prefix of static partition values (`[(column, value)]`), which must
    /// name leading partition columns. Returns the prefix and whether it names them all.
    pub fn static_partition_prefix(
        &self,
        values: &[(String, String)],
    ) -> Result<Option<(String, bool)>, HoodieError> {
        if values.is_empty() {
            return Ok(None);
        }
        let cfg = self.table.config();
        let fields = cfg.partition_fields();
        let hive = cfg.hive_style_partitioning()?;
        let mut parts = Vec::new();
        for f in &fields {
            match values.iter().find(|(c, _)| c.eq_ignore_ascii_case(f)) {
                Some((_, v)) => parts.push(if hive { format!("{f}={v}") } else { v.clone() }),
                None => break,
            }
        }
        if parts.len() != values.len() {
            return Err(HoodieError::Unsupported {
                feature:
                    "static PARTITION values after a dynamic partition column in INSERT OVERWRITE"
                        .into(),
            });
        }
        Ok(Some((parts.join("/"), parts.len() == fields.len())))
    }
}

/// The schema a change set is written with: the plan's columns, each as nullable as the table
/// declares it (the plan's nullability describes only the changed rows: a `SET qty = 5` column
/// is non-null there, while the file group it is written into holds NULLs in `qty`).
pub(super) fn change_set_schema(plan: &SchemaRef, table: &SchemaRef) -> SchemaRef {
    let fields: Vec<Field> = plan
        .fields()
        .iter()
        .map(|f| {
            let nullable = table
                .field_with_name(f.name())
                .map_or(true, |t| t.is_nullable());
            f.as_ref().clone().with_nullable(nullable)
        })
        .collect();
    Arc::new(Schema::new_with_metadata(fields, plan.metadata().clone()))
}
