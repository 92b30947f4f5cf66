//! A Hudi table: its storage, its configuration, and how to read its state.

use arrow::datatypes::SchemaRef;

use crate::error::{FormatError, Result};
use crate::fs_view::{FileChange, FileSlice, FileSystemView, ListingCache, TableListing};
use crate::properties_file;
use crate::schema;
use crate::storage::TableStorage;
use crate::table_config::TableConfig;
use crate::timeline::Timeline;

pub use crate::properties_file::PROPERTIES_FILE;

/// An open Hudi table.
#[derive(Debug, Clone)]
pub struct HudiTable {
    storage: TableStorage,
    config: TableConfig,
    /// The table's last listing, reused while the completed timeline is the same (clones share
    /// it), so that a statement lists the table once.
    listings: ListingCache,
}

impl HudiTable {
    /// Opens the table at `storage`'s base path: its `hoodie.properties` checked against its
    /// checksum, else its backup (see [`crate::properties_file`]).
    pub async fn open(storage: TableStorage) -> Result<Self> {
        let config = properties_file::load(&storage).await?;
        Ok(Self {
            storage,
            config,
            listings: ListingCache::default(),
        })
    }

    /// True if a table exists at `storage` (its `hoodie.properties`, or the backup an update
    /// left).
    pub async fn exists(storage: &TableStorage) -> Result<bool> {
        properties_file::exists(storage).await
    }

    /// Creates a new table: writes `.hoodie/hoodie.properties` (failing if a table exists).
    pub async fn create(storage: TableStorage, config: TableConfig) -> Result<Self> {
        storage
            .put_if_absent(PROPERTIES_FILE, config.to_text().into_bytes())
            .await?;
        Ok(Self {
            storage,
            config,
            listings: ListingCache::default(),
        })
    }

    /// Rewrites `hoodie.properties` with `config` (ALTER TABLE ... SET TBLPROPERTIES, RENAME),
    /// through the backup as Hudi does, so a crash midway loses nothing.
    pub async fn update_config(&mut self, config: TableConfig) -> Result<()> {
        properties_file::update(&self.storage, &config).await?;
        self.config = config;
        Ok(())
    }

    /// The same table, its footers kept in and read from `cache` (see
    /// [`TableStorage::with_footer_cache`]).
    pub fn with_footer_cache(&self, cache: std::sync::Arc<dyn crate::footer::FooterCache>) -> Self {
        Self {
            storage: self.storage.clone().with_footer_cache(cache),
            ..self.clone()
        }
    }

    /// The storage.
    pub fn storage(&self) -> &TableStorage {
        &self.storage
    }

    /// The configuration.
    pub fn config(&self) -> &TableConfig {
        &self.config
    }

    /// Loads the current timeline.
    pub async fn timeline(&self) -> Result<Timeline> {
        Timeline::load(&self.storage, &self.config).await
    }

    /// The table's listing when one taken (or carried forward) under `timeline`'s completed
    /// instants is kept: the files are then those the table holds, so nothing is listed.
    pub fn kept_listing(&self, timeline: &Timeline) -> Option<std::sync::Arc<TableListing>> {
        self.listings.current(timeline)
    }

    /// Carries the kept listing across an instant this process completed (see
    /// [`ListingCache::advance`]).
    pub(crate) fn advance_listing(&self, before: &Timeline, after: &Timeline, change: &FileChange) {
        self.listings.advance(before, after, change);
    }

    /// Drops the kept listing (see [`ListingCache::forget`]).
    pub(crate) fn forget_listing(&self) {
        self.listings.forget();
    }

    /// The latest committed file slices as of `as_of` (None: latest).
    pub async fn file_slices(
        &self,
        timeline: &Timeline,
        as_of: Option<&str>,
    ) -> Result<Vec<FileSlice>> {
        Ok(
            FileSystemView::load_cached(&self.storage, timeline, as_of, &self.listings)
                .await?
                .into_slices(),
        )
    }

    /// The table schema (meta columns first): from the newest base file if there is one, else
    /// from the latest commit's schema, else from the schema recorded at creation.
    pub async fn schema(&self, timeline: &Timeline, slices: &[FileSlice]) -> Result<SchemaRef> {
        // files without their partition columns do not have the table's schema; the commits do
        let files_have_schema = !self.config.drop_partition_columns()?;
        if let Some(newest) = slices
            .iter()
            .filter_map(|s| s.base_file.as_ref())
            .filter(|_| files_have_schema)
            .max_by(|a, b| a.name.instant.cmp(&b.name.instant))
        {
            // the listing gives the size: no request asks for it
            let meta =
                crate::footer::read_footer_sized(&self.storage, &newest.rel_path, newest.size)
                    .await?;
            let s = crate::footer::arrow_schema(&meta, &newest.rel_path)?;
            return self.with_added_columns(s, timeline).await;
        }
        for i in timeline
            .completed_writes()
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
        {
            let m = timeline.read_commit_metadata(&self.storage, i).await?;
            if let Some(s) = m.schema().filter(|s| !s.is_empty()) {
                let data = schema::arrow_schema_from_avro(s)?;
                return schema::table_schema(&data);
            }
        }
        match self.config.create_schema() {
            Some(s) => {
                let data = schema::arrow_schema_from_avro(s)?;
                schema::table_schema(&data)
            }
            None => Err(FormatError::MissingProperty {
                key: crate::config::CREATE_SCHEMA.key,
            }),
        }
    }

    /// `file_schema` (a base file's) with the columns the latest commit's schema adds to it
    /// (`ALTER TABLE ... ADD COLUMNS`, or a writer that evolved the schema): each nullable,
    /// placed before the partition columns, which stay last. Files written before the
    /// columns existed read them as NULL.
    async fn with_added_columns(
        &self,
        file_schema: SchemaRef,
        timeline: &Timeline,
    ) -> Result<SchemaRef> {
        let Some(latest) = timeline.last_completed_write() else {
            return Ok(file_schema);
        };
        let m = timeline.read_commit_metadata(&self.storage, latest).await?;
        let Some(avro) = m.schema().filter(|s| !s.is_empty()) else {
            return Ok(file_schema);
        };
        let data = schema::arrow_schema_from_avro(avro)?;
        let committed = schema::table_schema(&data)?;
        let added: Vec<_> = committed
            .fields()
            .iter()
            .filter(|f| file_schema.field_with_name(f.name()).is_err())
            .map(|f| f.as_ref().clone().with_nullable(true))
            .collect();
        if added.is_empty() {
            return Ok(file_schema);
        }
        let partitions = self.config.partition_fields();
        let mut fields: Vec<arrow::datatypes::Field> = Vec::new();
        let (mut data, mut last): (Vec<_>, Vec<_>) = (Vec::new(), Vec::new());
        for f in file_schema.fields() {
            if partitions.iter().any(|p| p == f.name()) {
                last.push(f.as_ref().clone());
            } else {
                data.push(f.as_ref().clone());
            }
        }
        fields.extend(data);
        fields.extend(added);
        fields.extend(last);
        Ok(std::sync::Arc::new(arrow::datatypes::Schema::new(fields)))
    }

    /// The Arrow schema of one base file (without file-level metadata).
    pub async fn file_schema(&self, rel_path: &str) -> Result<SchemaRef> {
        let meta = crate::footer::read_footer(&self.storage, rel_path).await?;
        crate::footer::arrow_schema(&meta, rel_path)
    }
}
