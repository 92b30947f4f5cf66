//! The snapshot read of merge-on-read file slices that have log files, for any engine: a
//! [`SliceReader`] holds what every slice of one scan shares (the columns read, the merge mode,
//! which log blocks count); [`SliceReader::open`] reads a slice's logs once and returns its
//! merged rows as a stream (its base file batch by batch with the logs applied, then the logged
//! records no base record held), with the bytes the logs hold so that the engine can reserve
//! them in its memory pool before the rows flow.

use std::sync::Arc;

use arrow::array::{
    new_null_array, Array, ArrayRef, Int64Array, RecordBatch, RecordBatchOptions, UInt32Array,
};
use arrow::datatypes::{DataType, FieldRef, Schema, SchemaRef};
use futures::stream::{self, BoxStream, StreamExt};

use crate::error::{FormatError, Result};
use crate::fs_view::FileSlice;
use crate::log::apply::{LogApplier, Precedence};
use crate::log::base_ordering::unneeded_base_ordering;
use crate::log::keys::KeySource;
use crate::log::read::{read_slice_logs, Admission};
use crate::storage::TableStorage;
use crate::timeline::Timeline;
use crate::HudiTable;

mod wire;

/// What every slice of one merge-on-read scan shares.
#[derive(Debug)]
pub struct SliceReader {
    storage: TableStorage,
    /// The columns the merge reads: the query's plus the key, ordering and delete columns.
    working: SchemaRef,
    /// The query's columns, as positions in `working`.
    output: Vec<usize>,
    out_schema: SchemaRef,
    rules: Precedence,
    keys: KeySource,
    /// Partition columns the files leave out, as positions in `working`, each with its
    /// position among the columns the reader was told the files leave out.
    dropped: Vec<(usize, usize)>,
    /// Whether slices may merge by record position (`hoodie.merge.use.record.positions`).
    use_positions: bool,
    /// Where in the output each row's row in its slice's base file goes, if it is wanted.
    base_row: Option<usize>,
    /// What the reader was built from, for [`SliceReader::to_bytes`].
    recipe: wire::Recipe,
}

/// A slice opened by [`SliceReader::open`].
pub struct OpenedSlice {
    /// The bytes the slice's logs hold in memory while its rows are read.
    pub memory_size: usize,
    /// Whether the base records meet their logged changes by record position (every block's
    /// positions count rows of the slice's base file) rather than by key.
    pub by_position: bool,
    /// The slice's merged rows, in the reader's output schema.
    pub rows: BoxStream<'static, Result<RecordBatch>>,
}

impl SliceReader {
    /// A reader of `projection` of `schema` (the table's schema as the scan sees it; all of
    /// it when `None`) as of `as_of` on `timeline` (its latest instant when `None`);
    /// `dropped` names the partition columns the data files leave out.
    pub fn new(
        table: &HudiTable,
        schema: &SchemaRef,
        (timeline, as_of): (&Timeline, Option<&str>),
        projection: Option<&[usize]>,
        dropped: &[String],
    ) -> Result<Self> {
        let recipe = wire::Recipe {
            config: table.config().clone(),
            schema: schema.clone(),
            admission: Admission::of(timeline, as_of),
            projection: projection.map(<[usize]>::to_vec),
            dropped: dropped.to_vec(),
            base_row: None,
        };
        Self::of_recipe(table.storage().clone(), recipe)
    }

    /// The reader `recipe` describes, reading from `storage`.
    fn of_recipe(storage: TableStorage, recipe: wire::Recipe) -> Result<Self> {
        let cfg = &recipe.config;
        let schema = &recipe.schema;
        let keys = KeySource::for_table(cfg, schema)?;
        let wanted: Vec<usize> = match &recipe.projection {
            Some(p) => p.clone(),
            None => (0..schema.fields().len()).collect(),
        };
        // the merge's own columns: the record key, the ordering field, the delete marker
        let mut needed = wanted.clone();
        let mut add = |name: &str| {
            let top = name.split('.').next().unwrap_or(name);
            if let Ok(i) = schema.index_of(top) {
                needed.push(i);
            }
        };
        match keys.column() {
            Some(c) => add(c),
            None => cfg.record_key_fields().iter().for_each(|k| add(k)),
        }
        if let Some(o) = cfg.ordering_field() {
            add(&o);
        }
        add(crate::meta::IS_DELETED);
        needed.sort_unstable();
        needed.dedup();
        let working = Arc::new(schema.project(&needed)?);
        let output: Vec<usize> = wanted
            .iter()
            .filter_map(|w| needed.binary_search(w).ok())
            .collect();
        let out_schema = Arc::new(schema.project(&wanted)?);
        let rules = Precedence::new(&working, cfg.merge_mode()?, cfg.ordering_field().as_deref());
        let dropped = recipe
            .dropped
            .iter()
            .enumerate()
            .filter_map(|(j, d)| working.index_of(d).ok().map(|i| (i, j)))
            .collect();
        let reader = Self {
            storage,
            working,
            output,
            out_schema,
            rules,
            keys,
            dropped,
            use_positions: true,
            base_row: None,
            recipe: wire::Recipe {
                base_row: None,
                ..recipe.clone()
            },
        };
        match recipe.base_row {
            Some((at, field)) => reader.with_base_rows(at, field),
            None => Ok(reader),
        }
    }

    /// This reader with each merged row's row in its slice's base file (`field`, a nullable
    /// Int64 column: NULL for a row no base file holds) as output column `at`, for a statement
    /// that writes the rows back with their record positions.
    pub fn with_base_rows(mut self, at: usize, field: FieldRef) -> Result<Self> {
        let mut fields = self.out_schema.fields().to_vec();
        if at > fields.len() || field.data_type() != &DataType::Int64 || !field.is_nullable() {
            return Err(FormatError::Unsupported {
                feature: format!("base rows as column {at} named {}", field.name()),
            });
        }
        fields.insert(at, field.clone());
        let metadata = self.out_schema.metadata().clone();
        self.out_schema = Arc::new(Schema::new_with_metadata(fields, metadata));
        self.base_row = Some(at);
        self.recipe.base_row = Some((at, field));
        Ok(self)
    }

    /// This reader with slices merging by record position where their blocks allow it
    /// (`true`, the default) or always by key.
    pub fn with_record_positions(mut self, use_positions: bool) -> Self {
        self.use_positions = use_positions;
        self
    }

    /// The location of the table the reader reads.
    pub fn location(&self) -> &str {
        self.storage.location()
    }

    /// The schema of the rows the reader gives.
    pub fn output_schema(&self) -> &SchemaRef {
        &self.out_schema
    }

    /// Whether the reader needs the values of the columns the files leave out (else
    /// [`SliceReader::open`] may be given none).
    pub fn needs_partition_values(&self) -> bool {
        !self.dropped.is_empty()
    }

    /// Reads `slice`'s logs and opens its merged rows. `partition_values` holds, for each of
    /// the columns named as left out of the files, its value in the slice's partition as an
    /// array of one element (empty when [`SliceReader::needs_partition_values`] is false).
    pub async fn open(
        self: &Arc<Self>,
        slice: &FileSlice,
        partition_values: Vec<ArrayRef>,
    ) -> Result<OpenedSlice> {
        let gate = self.clone();
        let admits = move |i: &str| gate.recipe.admission.admits(i);
        let logs = read_slice_logs(&self.storage, &slice.log_files, &admits, &self.working).await?;
        let base_instant = match (&slice.base_file, self.use_positions) {
            (Some(_), true) => Some(slice.base_instant.as_str()),
            _ => None,
        };
        let applier = LogApplier::of_slice(
            &self.working,
            logs,
            base_instant,
            &self.keys,
            self.rules.clone(),
        )?;
        let memory_size = applier.memory_size();
        let by_position = applier.merges_by_position();
        let base = match &slice.base_file {
            Some(b) => Some(self.base_rows(&b.rel_path, &applier).await?),
            None => None,
        };
        let fill = Fill {
            at: self.dropped.iter().map(|(i, _)| *i).collect(),
            values: self
                .dropped
                .iter()
                .filter_map(|(_, j)| partition_values.get(*j).cloned())
                .collect(),
            partition: slice.partition_path.clone(),
        };
        let reader = self.clone();
        let rows = merged_rows(applier, base, fill, self.base_row.is_some())
            .map(move |b| b.and_then(|(b, rows)| reader.project(&b, rows)))
            .boxed();
        Ok(OpenedSlice {
            memory_size,
            by_position,
            rows,
        })
    }

    /// The base file's rows in the working schema, its ordering column left unread when the
    /// logs make it unneeded, and its key column when the merge goes by record position
    /// (each when the query does not want it).
    async fn base_rows(
        &self,
        rel: &str,
        applier: &LogApplier,
    ) -> Result<BoxStream<'static, Result<RecordBatch>>> {
        let dropped: Vec<String> = self
            .dropped
            .iter()
            .map(|&(i, _)| self.working.field(i).name().clone())
            .collect();
        let ordering_wanted = self
            .rules
            .ordering
            .as_ref()
            .is_some_and(|p| self.output.contains(&p.top()));
        let (rows, _) = crate::base_file::stream_base_file_without(
            &self.storage,
            rel,
            &self.working,
            &dropped,
            |footer| {
                let mut unneeded = Vec::new();
                if !ordering_wanted {
                    unneeded.extend(unneeded_base_ordering(applier, &self.working, footer));
                }
                unneeded.extend(self.unneeded_base_key(applier));
                unneeded
            },
        )
        .await?;
        Ok(rows.boxed())
    }

    /// The key column, when the merge by record position does not need the base file's keys
    /// and the query does not want them (a nullable column: it comes out as NULL).
    fn unneeded_base_key(&self, applier: &LogApplier) -> Option<String> {
        if !applier.merges_by_position() || applier.has_partial_rows() {
            return None;
        }
        let i = self.working.index_of(self.keys.column()?).ok()?;
        let field = self.working.field(i);
        (field.is_nullable() && !self.output.contains(&i)).then(|| field.name().clone())
    }

    /// The query's columns of a merged batch, with its rows' base rows where they are wanted.
    fn project(&self, b: &RecordBatch, base_rows: Option<ArrayRef>) -> Result<RecordBatch> {
        let mut cols: Vec<ArrayRef> = self.output.iter().map(|&i| b.column(i).clone()).collect();
        if let Some(at) = self.base_row {
            let rows = base_rows.unwrap_or_else(|| new_null_array(&DataType::Int64, b.num_rows()));
            cols.insert(at, rows);
        }
        Ok(RecordBatch::try_new_with_options(
            self.out_schema.clone(),
            cols,
            &RecordBatchOptions::new().with_row_count(Some(b.num_rows())),
        )?)
    }
}

/// The partition values a slice's base batches get in the columns its files leave out.
struct Fill {
    at: Vec<usize>,
    values: Vec<ArrayRef>,
    partition: String,
}

impl Fill {
    fn apply(&self, b: RecordBatch) -> Result<RecordBatch> {
        if self.at.is_empty() {
            return Ok(b);
        }
        if self.values.len() != self.at.len() || self.values.iter().any(|v| v.len() != 1) {
            return Err(FormatError::Corrupt {
                path: self.partition.clone(),
                reason: "the partition's values of the columns its files leave out are missing"
                    .into(),
            });
        }
        let first = UInt32Array::from(vec![0u32; b.num_rows()]);
        let mut cols = b.columns().to_vec();
        for (&i, v) in self.at.iter().zip(&self.values) {
            cols[i] = arrow::compute::take(v.as_ref(), &first, None)?;
        }
        Ok(RecordBatch::try_new(b.schema(), cols)?)
    }
}

/// Where a slice's merged rows are: its base batches, then the logged rows no base row held.
enum Phase {
    Base(BoxStream<'static, Result<RecordBatch>>),
    Rest,
    Done,
}

/// A merged batch and, when asked for, each of its rows' row in the base file (`None`: the
/// rows no base file holds).
type Merged = (RecordBatch, Option<ArrayRef>);

/// A slice's merged rows; with `base_rows`, each base batch's rows carry their rows in the
/// base file (the batches are every row of the file, in order).
fn merged_rows(
    applier: LogApplier,
    base: Option<BoxStream<'static, Result<RecordBatch>>>,
    fill: Fill,
    base_rows: bool,
) -> impl futures::Stream<Item = Result<Merged>> + Send + 'static {
    let phase = base.map_or(Phase::Rest, Phase::Base);
    let fill = Arc::new(fill);
    stream::unfold(
        (applier, phase, 0i64),
        move |(mut applier, phase, start)| {
            let fill = fill.clone();
            async move {
                let (item, next, start) = match phase {
                    Phase::Base(mut s) => match s.next().await {
                        Some(Ok(b)) => {
                            let n = b.num_rows() as i64;
                            let merged = fill
                                .apply(b)
                                .and_then(|b| merge_base(&mut applier, &b, start, base_rows));
                            (Some(merged), Phase::Base(s), start + n)
                        }
                        Some(Err(e)) => (Some(Err(e)), Phase::Done, start),
                        None => (None, Phase::Rest, start),
                    },
                    Phase::Rest => {
                        let rest = applier.remaining().transpose();
                        (rest.map(|r| r.map(|b| (b, None))), Phase::Done, start)
                    }
                    Phase::Done => return None,
                };
                Some((item, (applier, next, start)))
            }
        },
    )
    .filter_map(|item| async move { item })
}

/// A base batch whose first row is row `start` of its file, merged with the logs; with
/// `base_rows`, each merged row's row in the file (the rows the logs delete are gone).
fn merge_base(
    applier: &mut LogApplier,
    b: &RecordBatch,
    start: i64,
    base_rows: bool,
) -> Result<Merged> {
    if !base_rows {
        return Ok((applier.apply_to_base(b)?, None));
    }
    let (merged, deleted) = applier.apply_to_base_rows(b)?;
    let mut gone = deleted.into_iter().peekable();
    let rows: Int64Array = (0..b.num_rows())
        .filter(|&r| gone.next_if_eq(&r).is_none())
        .map(|r| start + r as i64)
        .collect();
    Ok((merged, Some(Arc::new(rows))))
}
