//! A [`SliceReader`] as bytes, for a worker in another process that reads some of the scan's
//! slices: what the reader was built from (the table's configuration, its schema as the scan
//! sees it, which log blocks count, the columns), from which the worker builds the same reader
//! over its own connection to the table's storage.

use std::sync::Arc;

use arrow::datatypes::{FieldRef, Schema, SchemaRef};
use serde::{Deserialize, Serialize};

use super::SliceReader;
use crate::error::Result;
use crate::log::read::Admission;
use crate::storage::TableStorage;
use crate::table_config::TableConfig;
use crate::wire::{Chunks, Frames};

/// What the errors call a reader's bytes.
const WHAT: &str = "slice reader";

/// What a [`SliceReader`] is built from.
#[derive(Debug, Clone)]
pub(super) struct Recipe {
    pub config: TableConfig,
    /// The table's schema as the scan sees it.
    pub schema: SchemaRef,
    /// Which log blocks are read.
    pub admission: Admission,
    pub projection: Option<Vec<usize>>,
    /// The partition columns the files leave out.
    pub dropped: Vec<String>,
    /// Where the base rows go in the output, and their field.
    pub base_row: Option<(usize, FieldRef)>,
}

/// The JSON frame of a reader's bytes; the table's schema and the base rows' field follow as
/// schema frames.
#[derive(Serialize, Deserialize)]
struct Header {
    location: String,
    properties: String,
    admission: Admission,
    projection: Option<Vec<usize>>,
    dropped: Vec<String>,
    use_positions: bool,
    base_row: Option<usize>,
}

impl SliceReader {
    /// The reader as bytes, for [`SliceReader::from_bytes`] in another process.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let recipe = &self.recipe;
        let header = Header {
            location: self.storage.location().to_string(),
            properties: recipe.config.to_text(),
            admission: recipe.admission.clone(),
            projection: recipe.projection.clone(),
            dropped: recipe.dropped.clone(),
            use_positions: self.use_positions,
            base_row: recipe.base_row.as_ref().map(|(at, _)| *at),
        };
        let mut frames = Frames::new(WHAT);
        frames.json(&header)?;
        frames.schema(&recipe.schema)?;
        if let Some((_, field)) = &recipe.base_row {
            frames.schema(&Schema::new(vec![field.clone()]))?;
        }
        Ok(frames.into_bytes())
    }

    /// The reader of [`SliceReader::to_bytes`], reading from the storage `open` gives for the
    /// table's location (the reader's process opens it with its own credentials: none travel
    /// in the bytes).
    pub fn from_bytes(
        bytes: &[u8],
        open: impl FnOnce(&str) -> Result<TableStorage>,
    ) -> Result<Self> {
        let mut chunks = Chunks::new(WHAT, bytes);
        let header: Header = chunks.json()?;
        let schema = chunks.schema()?;
        let base_row = match header.base_row {
            None => None,
            Some(at) => {
                let field = chunks.schema()?;
                match field.fields().first() {
                    Some(f) => Some((at, f.clone())),
                    None => return Err(chunks.corrupt("the base rows' field is missing")),
                }
            }
        };
        if !chunks.is_done() {
            return Err(chunks.corrupt("bytes after the reader"));
        }
        let recipe = Recipe {
            config: TableConfig::parse(header.properties.as_bytes())?,
            schema: Arc::clone(&schema),
            admission: header.admission,
            projection: header.projection,
            dropped: header.dropped,
            base_row,
        };
        let columns = schema.fields().len();
        if recipe.projection.iter().flatten().any(|&c| c >= columns) {
            return Err(chunks.corrupt("a projection past the schema's columns"));
        }
        let storage = open(&header.location)?;
        Ok(Self::of_recipe(storage, recipe)?.with_record_positions(header.use_positions))
    }
}
