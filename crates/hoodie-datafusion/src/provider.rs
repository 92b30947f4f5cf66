//! [`HudiTableProvider`]: a Hudi table as a DataFusion table.

use std::any::Any;
use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{Field, Schema, SchemaRef};
use datafusion::catalog::Session;
use datafusion::common::{DFSchema, ScalarValue};
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder, ParquetSource};
use datafusion::datasource::sink::DataSinkExec;
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::error::{DataFusionError, Result as DFResult};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::logical_expr::dml::InsertOp;
use datafusion::logical_expr::utils::conjunction;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::empty::EmptyExec;
use datafusion::physical_plan::ExecutionPlan;
use hoodie_format::bucket::BucketSpec;
use hoodie_format::config;
use hoodie_format::fs_view::FileSlice;
use hoodie_format::keygen::KeyGenerator;
use hoodie_format::write::insert::InsertOptions;
use hoodie_format::write::overwrite::OverwriteScope;
use hoodie_format::write::transaction::WriteOperation;
use hoodie_format::write::upsert::{DupPolicy, UpsertOptions};
use hoodie_format::write::writer::BaseFileSettings;
use hoodie_format::HudiTable;
use object_store::ObjectMeta;

use crate::error::{df_err, HoodieError};
use crate::session::write_options::{SessionOptions, WriteOptions};
use crate::sink::{HudiSink, WriteMode};

/// A Hudi table registered in a DataFusion session.
#[derive(Debug)]
pub struct HudiTableProvider {
    name: String,
    table: HudiTable,
    schema: SchemaRef,
}

impl HudiTableProvider {
    /// Opens the provider for `table`, reading its schema from the latest snapshot.
    pub async fn try_new(name: impl Into<String>, table: HudiTable) -> Result<Self, HoodieError> {
        let timeline = table.timeline().await?;
        let slices = table.file_slices(&timeline, None).await?;
        let schema = table.schema(&timeline, &slices).await?;
        Ok(Self {
            name: name.into(),
            table,
            schema,
        })
    }

    /// The table.
    pub fn table(&self) -> &HudiTable {
        &self.table
    }

    /// The table name in the session.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The options a write to this table sees in a session with `session` options.
    pub fn write_options(&self, session: &SessionOptions) -> WriteOptions {
        WriteOptions::new(session, self.table.config())
    }

    /// The insert options (pre-combine field, file sizes) of a write.
    pub fn insert_options(
        &self,
        session: &SessionOptions,
        precombine: bool,
    ) -> Result<InsertOptions, HoodieError> {
        let w = self.write_options(session);
        w.validate()?;
        // an index decides where inserts go too (a bucket index routes them to its buckets):
        // a write must not go ahead without the table's index
        global_index(&w)?;
        Ok(InsertOptions {
            precombine_field: if precombine {
                self.table.config().ordering_field()
            } else {
                None
            },
            global_index: global_index(&w)?,
            bucket: self.bucket_spec(&w)?,
            file_settings: BaseFileSettings {
                codec: w
                    .get(&config::PARQUET_COMPRESSION_CODEC)
                    .unwrap_or_else(|| "snappy".into()),
                bloom_num_entries: w.get_usize(&config::BLOOM_NUM_ENTRIES)?,
                bloom_fpp: w.get_f64(&config::BLOOM_FPP)?,
                bloom_max_entries: w.get_usize(&config::BLOOM_MAX_ENTRIES)?,
            },
            max_file_size: w.get_usize(&config::PARQUET_MAX_FILE_SIZE)?,
        })
    }

    /// The options of a keyed write (upsert, or insert with a duplicate policy).
    pub fn upsert_options(
        &self,
        session: &SessionOptions,
        insert_dup_policy: Option<DupPolicy>,
    ) -> Result<UpsertOptions, HoodieError> {
        let w = self.write_options(session);
        let insert = self.insert_options(session, true)?;
        let index = w
            .get(&config::INDEX_TYPE)
            .unwrap_or_default()
            .to_ascii_uppercase();
        let global_index = global_index(&w)?;
        let update_key = if index == "GLOBAL_BLOOM" {
            config::BLOOM_INDEX_UPDATE_PARTITION_PATH
        } else {
            config::SIMPLE_INDEX_UPDATE_PARTITION_PATH
        };
        Ok(UpsertOptions {
            ordering_field: self.table.config().ordering_field(),
            merge_mode: w.merge_mode()?,
            insert_dup_policy,
            global_index,
            update_partition_path: w
                .get(&update_key)
                .is_some_and(|v| v.eq_ignore_ascii_case("true")),
            small_file_limit: w.get_usize(&config::PARQUET_SMALL_FILE_LIMIT)? as u64,
            max_file_size: insert.max_file_size as u64,
            small_file_candidates: w.get_usize(&config::PARQUET_SMALL_FILE_CANDIDATES)?,
            record_size_estimate: w.get_usize(&config::RECORD_SIZE_ESTIMATE)? as u64,
            file_settings: insert.file_settings,
            prepped: false,
            changed_columns: None,
            bucket: self.bucket_spec(&w)?,
            dropped_columns: self.table.config().dropped_columns()?,
            inserts_only: false,
        })
    }

    /// The partition columns the data files leave out (`drop.partition.columns`), as the last
    /// fields of the table schema, in order.
    fn dropped_partition_fields(
        &self,
    ) -> Result<Vec<datafusion::arrow::datatypes::FieldRef>, HoodieError> {
        let dropped = self.table.config().dropped_columns()?;
        let n = self.schema.fields().len();
        let tail = &self.schema.fields()[n.saturating_sub(dropped.len())..];
        if tail.iter().map(|f| f.name()).ne(dropped.iter()) {
            return Err(HoodieError::Unsupported {
                feature: format!("a table that drops its partition columns ({}) from its files but does not have them as its last columns", dropped.join(", ")),
            });
        }
        Ok(tail.to_vec())
    }

    /// The values of the partition columns `fields` for the files under `partition_path`.
    fn partition_values(
        &self,
        partition_path: &str,
        fields: &[datafusion::arrow::datatypes::FieldRef],
    ) -> Result<Vec<ScalarValue>, HoodieError> {
        let keygen = KeyGenerator::from_config(self.table.config())?;
        let values = keygen.parse_partition_path(partition_path).ok_or_else(|| {
            HoodieError::Invalid {
                message: format!("partition path {partition_path:?} of table {} does not name its partition columns", self.name),
            }
        })?;
        values
            .into_iter()
            .zip(fields)
            .map(|(v, f)| Ok(ScalarValue::Utf8(v).cast_to(f.data_type())?))
            .collect()
    }

    /// The table's bucket index, if it has one (`hoodie.index.type = BUCKET`).
    fn bucket_spec(&self, w: &WriteOptions) -> Result<Option<BucketSpec>, HoodieError> {
        let index = w.get(&config::INDEX_TYPE).unwrap_or_default();
        if !index.eq_ignore_ascii_case("BUCKET") {
            return Ok(None);
        }
        let engine = w.get(&config::BUCKET_ENGINE).unwrap_or_default();
        if !engine.eq_ignore_ascii_case("SIMPLE") {
            return Err(HoodieError::Unsupported {
                feature: format!("hoodie.index.bucket.engine = {engine} (hoodie writes with the SIMPLE bucket engine)"),
            });
        }
        let n = w.get_usize(&config::BUCKET_NUM_BUCKETS)?;
        let spec = BucketSpec::new(
            u32::try_from(n).unwrap_or(u32::MAX),
            w.get(&config::BUCKET_HASH_FIELD).as_deref(),
            &self.table.config().record_key_fields(),
        )?;
        Ok(Some(spec))
    }

    /// A plan that runs `input` through `mode` as one commit.
    pub fn write_plan(
        &self,
        input: Arc<dyn ExecutionPlan>,
        mode: WriteMode,
    ) -> Arc<dyn ExecutionPlan> {
        let sink = HudiSink::new(
            self.table.clone(),
            self.name.clone(),
            self.schema.clone(),
            mode,
        );
        Arc::new(DataSinkExec::new(input, Arc::new(sink), None))
    }

    /// A plan that writes a change set (the table's columns plus a delete flag) as one commit;
    /// `rows_in_memory` caps the bytes of rows the write holds in memory before it spills (so
    /// that the plan feeding it keeps room in the pool), `None` leaves it to the pool.
    pub fn change_set_plan(
        &self,
        input: Arc<dyn ExecutionPlan>,
        mode: WriteMode,
        rows_in_memory: Option<usize>,
    ) -> Arc<dyn ExecutionPlan> {
        let schema = change_set_schema(&input.schema(), &self.schema);
        let sink = HudiSink::new(self.table.clone(), self.name.clone(), schema, mode)
            .with_rows_in_memory(rows_in_memory);
        Arc::new(DataSinkExec::new(input, Arc::new(sink), None))
    }

    /// The write an `INSERT OVERWRITE` runs; `static_prefix` is the partition path prefix of a
    /// static `PARTITION (...)` clause and `full_static` says whether it names every
    /// partition column.
    pub fn overwrite_mode(
        &self,
        session: &SessionOptions,
        static_prefix: Option<String>,
        full_static: bool,
    ) -> Result<WriteMode, HoodieError> {
        let w = self.write_options(session);
        let options = self.insert_options(session, true)?;
        let partitioned = self.table.config().is_partitioned();
        let table = || WriteMode::Overwrite {
            operation: WriteOperation::InsertOverwriteTable,
            options: options.clone(),
            scope: OverwriteScope::Table,
        };
        let partitions = |scope| WriteMode::Overwrite {
            operation: WriteOperation::InsertOverwrite,
            options: options.clone(),
            scope,
        };
        if !partitioned {
            return Ok(table());
        }
        let dynamic_scope = |prefix: Option<String>| match prefix {
            Some(p) if full_static => OverwriteScope::Prefixes(vec![p]),
            _ => OverwriteScope::InputPartitions,
        };
        if let Some(op) = w.explicit(&config::WRITE_OPERATION) {
            match WriteOperation::parse(&op)? {
                WriteOperation::InsertOverwriteTable => return Ok(table()),
                WriteOperation::InsertOverwrite => {
                    return Ok(partitions(match static_prefix {
                        Some(p) => OverwriteScope::Prefixes(vec![p]),
                        None => OverwriteScope::InputPartitions,
                    }))
                }
                _ => {}
            }
        }
        let mode = w
            .explicit(&config::OVERWRITE_MODE)
            .unwrap_or_else(|| "STATIC".into())
            .to_ascii_uppercase();
        match (mode.as_str(), static_prefix) {
            ("STATIC", Some(p)) => Ok(partitions(OverwriteScope::Prefixes(vec![p]))),
            ("STATIC", None) => Ok(table()),
            ("DYNAMIC", prefix) => Ok(partitions(dynamic_scope(prefix))),
            (other, _) => Err(HoodieError::Invalid {
                message: format!(
                    "hoodie.datasource.overwrite.mode must be STATIC or DYNAMIC, got {other:?}"
                ),
            }),
        }
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

    /// Partition paths of the latest snapshot.
    pub async fn partitions(&self) -> Result<Vec<String>, HoodieError> {
        let timeline = self.table.timeline().await?;
        let mut parts: Vec<String> = self
            .table
            .file_slices(&timeline, None)
            .await?
            .into_iter()
            .map(|s| s.partition_path)
            .collect();
        parts.sort();
        parts.dedup();
        Ok(parts)
    }

    /// The write an `INSERT INTO` runs, by Hudi 1.2's operation precedence.
    pub fn insert_mode(&self, session: &SessionOptions) -> Result<WriteMode, HoodieError> {
        let w = self.write_options(session);
        let (op, why) = w.insert_into_operation()?;
        let policy = DupPolicy::parse(
            &w.get(&config::INSERT_DUP_POLICY)
                .unwrap_or_else(|| "none".into()),
        )?;
        // a bucket table's new rows go to their buckets, whose file groups may exist: the keyed
        // write path routes them (without looking keys up)
        let bucketed = op == WriteOperation::BulkInsert
            || (op == WriteOperation::Insert && policy == DupPolicy::None);
        if bucketed && self.bucket_spec(&w)?.is_some() {
            let mut options = self.upsert_options(session, None)?;
            options.inserts_only = true;
            return Ok(WriteMode::Upsert {
                operation: op,
                options,
            });
        }
        match op {
            WriteOperation::BulkInsert if policy == DupPolicy::Drop => Err(HoodieError::Invalid {
                message: "Insert dup policy 'drop' is not supported with bulk_insert: use the insert operation".into(),
            }),
            WriteOperation::BulkInsert => Ok(WriteMode::Insert { operation: op, options: self.insert_options(session, true)? }),
            WriteOperation::Insert if policy == DupPolicy::None => Ok(WriteMode::Insert { operation: op, options: self.insert_options(session, true)? }),
            WriteOperation::Insert => Ok(WriteMode::Upsert { operation: op, options: self.upsert_options(session, Some(policy))? }),
            WriteOperation::Upsert => {
                if self.table.config().record_key_fields().is_empty() {
                    return Err(HoodieError::Invalid { message: format!("INSERT INTO {} as an upsert ({why}) needs a primary key; the table has none", self.name) });
                }
                Ok(WriteMode::Upsert { operation: op, options: self.upsert_options(session, None)? })
            }
            WriteOperation::InsertOverwrite => self.overwrite_mode(session, None, false),
            WriteOperation::InsertOverwriteTable => Ok(WriteMode::Overwrite { operation: op, options: self.insert_options(session, true)?, scope: OverwriteScope::Table }),
            WriteOperation::Delete | WriteOperation::DeletePrepped | WriteOperation::UpsertPrepped => {
                Err(HoodieError::Invalid { message: format!("INSERT INTO cannot run the {} operation ({why})", op.java_name().to_ascii_lowercase()) })
            }
        }
    }

    /// Keeps the slices whose partition values can satisfy the filters on partition columns.
    fn prune_partitions(
        &self,
        state: &dyn Session,
        slices: Vec<FileSlice>,
        filters: &[Expr],
    ) -> DFResult<Vec<FileSlice>> {
        let keygen = match KeyGenerator::from_config(self.table.config()) {
            Ok(k) if !k.partition_fields().is_empty() => k,
            _ => return Ok(slices),
        };
        let part_fields: Vec<Field> = keygen
            .partition_fields()
            .iter()
            .filter_map(|p| self.schema.field_with_name(p).ok().cloned())
            .collect();
        if part_fields.len() != keygen.partition_fields().len() {
            return Ok(slices);
        }
        let names: Vec<&str> = part_fields.iter().map(|f| f.name().as_str()).collect();
        let usable: Vec<Expr> = filters
            .iter()
            .filter(|f| {
                let refs = f.column_refs();
                !refs.is_empty() && refs.iter().all(|c| names.contains(&c.name.as_str()))
            })
            .cloned()
            .collect();
        let Some(pred) = conjunction(usable) else {
            return Ok(slices);
        };
        let mut paths: Vec<String> = slices.iter().map(|s| s.partition_path.clone()).collect();
        paths.sort();
        paths.dedup();
        let parsed: Vec<Option<Vec<Option<String>>>> = paths
            .iter()
            .map(|p| keygen.parse_partition_path(p))
            .collect();
        let schema = Arc::new(Schema::new(
            part_fields
                .iter()
                .map(|f| f.clone().with_nullable(true))
                .collect::<Vec<_>>(),
        ));
        let mut cols: Vec<ArrayRef> = Vec::new();
        for (i, f) in part_fields.iter().enumerate() {
            let strings: StringArray = parsed
                .iter()
                .map(|p| p.as_ref().and_then(|v| v[i].clone()))
                .collect();
            let arr: ArrayRef = Arc::new(strings);
            cols.push(cast(&arr, f.data_type()).unwrap_or_else(|_| {
                datafusion::arrow::array::new_null_array(f.data_type(), paths.len())
            }));
        }
        let batch = RecordBatch::try_new(schema.clone(), cols)?;
        let df_schema = DFSchema::try_from(schema.as_ref().clone())?;
        let phys = state.create_physical_expr(pred, &df_schema)?;
        let result = phys.evaluate(&batch)?.into_array(batch.num_rows())?;
        let keep = result.as_any().downcast_ref::<BooleanArray>().cloned();
        let Some(keep) = keep else { return Ok(slices) };
        let kept: std::collections::HashSet<&str> = paths
            .iter()
            .enumerate()
            // a path we could not parse is kept (never drop data we do not understand)
            .filter(|(i, _)| parsed[*i].is_none() || (keep.is_valid(*i) && keep.value(*i)))
            .map(|(_, p)| p.as_str())
            .collect();
        Ok(slices
            .into_iter()
            .filter(|s| kept.contains(s.partition_path.as_str()))
            .collect())
    }
}

#[async_trait]
impl TableProvider for HudiTableProvider {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DFResult<Vec<TableProviderFilterPushDown>> {
        Ok(vec![TableProviderFilterPushDown::Inexact; filters.len()])
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let timeline = self.table.timeline().await.map_err(df_err)?;
        let slices = self
            .table
            .file_slices(&timeline, None)
            .await
            .map_err(df_err)?;
        if let Some(s) = slices.iter().find(|s| !s.log_files.is_empty()) {
            return Err(HoodieError::Unsupported {
                feature: format!(
                    "reading merge-on-read file slices with log files (table {}, file group {} in partition {:?}); hoodie reads MOR tables whose slices have no log files",
                    self.name, s.file_id, s.partition_path
                ),
            }
            .into_datafusion());
        }
        let slices = self.prune_partitions(state, slices, filters)?;
        let storage = self.table.storage();
        let dropped = self
            .dropped_partition_fields()
            .map_err(HoodieError::into_datafusion)?;
        let mut files: Vec<PartitionedFile> = Vec::with_capacity(slices.len());
        for s in &slices {
            let Some(b) = s.base_file.as_ref() else {
                continue;
            };
            // the store path itself: a path's text would be percent-encoded a second time
            let mut file = PartitionedFile::new_from_meta(ObjectMeta {
                location: storage.path(&b.rel_path),
                last_modified: chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
                size: b.size,
                e_tag: None,
                version: None,
            });
            if !dropped.is_empty() {
                file.partition_values = self
                    .partition_values(&s.partition_path, &dropped)
                    .map_err(HoodieError::into_datafusion)?;
            }
            files.push(file);
        }
        let projected = match projection {
            Some(p) => Arc::new(self.schema.project(p)?),
            None => self.schema.clone(),
        };
        if files.is_empty() {
            return Ok(Arc::new(EmptyExec::new(projected)));
        }
        let n_groups = state.config().target_partitions().max(1).min(files.len());
        let mut groups: Vec<Vec<PartitionedFile>> = vec![Vec::new(); n_groups];
        for (i, f) in files.into_iter().enumerate() {
            groups[i % n_groups].push(f);
        }
        // filters are Inexact: DataFusion keeps a FilterExec above the scan and pushes the
        // predicate into the parquet source for row-group pruning (and, with the session's
        // `datafusion.execution.parquet.pushdown_filters`, for decoding only matching rows)
        let parquet = datafusion::config::TableParquetOptions {
            global: state.config_options().execution.parquet.clone(),
            ..Default::default()
        };
        // a table that drops its partition columns from the files gets them from the paths, as
        // DataFusion's partition columns (they are the table's last columns)
        let table_schema = if dropped.is_empty() {
            TableSchema::from(self.schema.clone())
        } else {
            let n = self.schema.fields().len() - dropped.len();
            TableSchema::builder(Arc::new(Schema::new(self.schema.fields()[..n].to_vec())))
                .with_table_partition_cols(dropped)
                .build()
        };
        let source = ParquetSource::new(table_schema).with_table_parquet_options(parquet);
        // the scan reads through the table's own store, registered under its URL
        let url = ObjectStoreUrl::parse(storage.store_url())?;
        let runtime = state.runtime_env();
        if runtime.object_store(&url).is_err() {
            runtime.register_object_store(url.as_ref(), storage.store().clone());
        }
        let config = FileScanConfigBuilder::new(url, Arc::new(source))
            .with_file_groups(groups.into_iter().map(FileGroup::new).collect())
            .with_projection_indices(projection.cloned())?
            .with_limit(limit)
            .build();
        Ok(DataSourceExec::from_data_source(config))
    }

    async fn insert_into(
        &self,
        state: &dyn Session,
        input: Arc<dyn ExecutionPlan>,
        insert_op: InsertOp,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        let session = SessionOptions::of_session(state);
        let mode = match insert_op {
            InsertOp::Append => self.insert_mode(&session),
            // without a PARTITION clause (the front-end handles INSERT OVERWRITE ... PARTITION)
            InsertOp::Overwrite => self.overwrite_mode(&session, None, false),
            InsertOp::Replace => Err(HoodieError::Unsupported {
                feature:
                    "REPLACE INTO on Hudi tables (use INSERT INTO, which upserts on keyed tables)"
                        .into(),
            }),
        }
        .map_err(HoodieError::into_datafusion)?;
        Ok(self.write_plan(input, mode))
    }

    async fn delete_from(
        &self,
        _state: &dyn Session,
        _filters: Vec<Expr>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        Err(planned_by_rule("DELETE"))
    }

    async fn update(
        &self,
        _state: &dyn Session,
        _a: Vec<(String, Expr)>,
        _f: Vec<Expr>,
    ) -> DFResult<Arc<dyn ExecutionPlan>> {
        Err(planned_by_rule("UPDATE"))
    }

    async fn truncate(&self, _state: &dyn Session) -> DFResult<Arc<dyn ExecutionPlan>> {
        Err(unsupported_dml("TRUNCATE"))
    }
}

fn planned_by_rule(what: &str) -> DataFusionError {
    DataFusionError::Plan(format!("{what} on Hudi tables is planned by hoodie's analyzer rule, which this session lacks: build the session with SessionStateBuilder::with_hoodie (hoodie_datafusion::prelude)"))
}

#[allow(dead_code)]
fn unsupported_dml(what: &str) -> DataFusionError {
    HoodieError::Unsupported {
        feature: format!("{what} on Hudi tables"),
    }
    .into_datafusion()
}

/// For downcasts of `dyn TableProvider`.
pub fn as_hudi(provider: &Arc<dyn TableProvider>) -> Option<&HudiTableProvider> {
    let any: &dyn Any = provider.as_ref();
    any.downcast_ref::<HudiTableProvider>()
}

/// Unused helper kept private: a literal of a partition value.
#[allow(dead_code)]
fn lit_str(v: &str) -> ScalarValue {
    ScalarValue::Utf8(Some(v.to_string()))
}

/// The schema a change set is written with: the plan's columns, each as nullable as the table
/// declares it (the plan's nullability describes only the changed rows: a `SET qty = 5` column
/// is non-null there, while the file group it is written into holds NULLs in `qty`).
fn change_set_schema(plan: &SchemaRef, table: &SchemaRef) -> SchemaRef {
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

/// Whether the write's index (`hoodie.index.type`) is global; an index hoodie cannot write
/// with is an error.
fn global_index(w: &WriteOptions) -> Result<bool, HoodieError> {
    let index = w
        .get(&config::INDEX_TYPE)
        .unwrap_or_default()
        .to_ascii_uppercase();
    match index.as_str() {
        // INMEMORY builds its key map from the table on each write: for a single writer the
        // same tagging as SIMPLE
        "SIMPLE" | "BLOOM" | "INMEMORY" | "BUCKET" => Ok(false),
        "GLOBAL_SIMPLE" | "GLOBAL_BLOOM" => Ok(true),
        other => Err(HoodieError::Unsupported {
            feature: format!("hoodie.index.type = {other} (hoodie writes with SIMPLE, BLOOM, INMEMORY, GLOBAL_SIMPLE, GLOBAL_BLOOM and BUCKET)"),
        }),
    }
}
