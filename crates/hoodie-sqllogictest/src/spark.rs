//! The Spark engine: `.slt` records sent to Spark with Hudi, which then is the oracle.
//!
//! Spark runs in the long-lived server of `tests/spark/server.py`; this module is its client.
//! Each message is a frame (a 4-byte big-endian length, then the bytes); a request is the JSON
//! `{"sql": ...}`, an answer the JSON `{"ok": true, "has_result": b}` followed by the result as
//! an Arrow IPC stream when `b`, or `{"ok": false, "error": ...}`. One connection is one Spark
//! session, so a file's `SET`s stay in its file. Results go through the same normalisation as
//! hoodie's ([`crate::normalize`]): only what the engines return differs, never how it is
//! written.

use std::io::{BufReader, BufWriter, Read, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};

use arrow::datatypes::Schema;
use arrow::error::ArrowError;
use arrow::ipc::reader::StreamReader;
use arrow::record_batch::RecordBatch;
use async_trait::async_trait;
use sqllogictest::{AsyncDB, DBOutput};

use crate::normalize::{rows_output, DfColumnType};

/// The label of Spark in `skipif` / `onlyif` conditions.
pub const SPARK_LABEL: &str = "spark";

/// Why a record could not be run on Spark.
#[derive(Debug, thiserror::Error)]
pub enum SparkError {
    /// Spark refused the statement; the message is Spark's (exception class: message, causes).
    #[error("{0}")]
    Statement(String),
    /// The server could not be reached or broke the protocol.
    #[error("Spark server at {address}: {message}")]
    Server {
        /// `host:port` of the server.
        address: String,
        /// What went wrong.
        message: String,
    },
    /// A result could not be decoded or rendered as text.
    #[error("cannot read Spark's result: {0}")]
    Result(#[from] ArrowError),
}

struct Conn {
    address: String,
    reader: BufReader<TcpStream>,
    writer: BufWriter<TcpStream>,
}

impl Conn {
    fn server_error(&self, message: impl std::fmt::Display) -> SparkError {
        SparkError::Server {
            address: self.address.clone(),
            message: message.to_string(),
        }
    }

    fn read_frame(&mut self) -> Result<Vec<u8>, SparkError> {
        let mut head = [0u8; 4];
        self.reader
            .read_exact(&mut head)
            .map_err(|e| self.server_error(format!("connection lost: {e}")))?;
        let mut body = vec![0u8; u32::from_be_bytes(head) as usize];
        self.reader
            .read_exact(&mut body)
            .map_err(|e| self.server_error(format!("connection lost: {e}")))?;
        Ok(body)
    }

    /// Runs one statement: `None` for one without result columns.
    fn run(&mut self, sql: &str) -> Result<Option<(Schema, Vec<RecordBatch>)>, SparkError> {
        let request = serde_json::to_vec(&serde_json::json!({ "sql": sql }))
            .map_err(|e| self.server_error(e))?;
        let len = u32::try_from(request.len()).map_err(|e| self.server_error(e))?;
        self.writer
            .write_all(&len.to_be_bytes())
            .and_then(|_| self.writer.write_all(&request))
            .and_then(|_| self.writer.flush())
            .map_err(|e| self.server_error(format!("cannot send: {e}")))?;
        let head = self.read_frame()?;
        let head: serde_json::Value =
            serde_json::from_slice(&head).map_err(|e| self.server_error(e))?;
        if head["ok"] != serde_json::Value::Bool(true) {
            let message = head["error"].as_str().unwrap_or("unknown error");
            return Err(SparkError::Statement(message.to_string()));
        }
        if head["has_result"] != serde_json::Value::Bool(true) {
            return Ok(None);
        }
        let body = self.read_frame()?;
        let reader = StreamReader::try_new(body.as_slice(), None)?;
        let schema = reader.schema();
        let batches = reader.collect::<Result<Vec<_>, _>>()?;
        Ok(Some((schema.as_ref().clone(), batches)))
    }
}

/// A sqllogictest connection to Spark: one Spark session (clones share it).
#[derive(Clone)]
pub struct SparkDb {
    conn: Arc<Mutex<Conn>>,
}

impl SparkDb {
    /// Connects to the server at `address` (`host:port`) and makes `warehouse` the location of
    /// a new database `name`, the session's current one, so tables created without LOCATION
    /// land in the file's temporary directory as they do under hoodie.
    pub fn connect(address: &str, name: &str, warehouse: &str) -> Result<Self, SparkError> {
        let stream = TcpStream::connect(address).map_err(|e| SparkError::Server {
            address: address.to_string(),
            message: format!("cannot connect ({e}); start it with tests/spark/run.sh"),
        })?;
        let reader = BufReader::new(stream.try_clone().map_err(|e| SparkError::Server {
            address: address.to_string(),
            message: e.to_string(),
        })?);
        let mut conn = Conn {
            address: address.to_string(),
            reader,
            writer: BufWriter::new(stream),
        };
        conn.run(&format!("CREATE DATABASE {name} LOCATION '{warehouse}'"))?;
        conn.run(&format!("USE {name}"))?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    fn run_blocking(&self, sql: &str) -> Result<Option<(Schema, Vec<RecordBatch>)>, SparkError> {
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        conn.run(sql)
    }
}

#[async_trait]
impl AsyncDB for SparkDb {
    type Error = SparkError;
    type ColumnType = DfColumnType;

    async fn run(&mut self, sql: &str) -> Result<DBOutput<DfColumnType>, SparkError> {
        // the socket is blocking; a record runs alone, so holding a worker thread is fine
        let out = tokio::task::block_in_place(|| self.run_blocking(sql))?;
        let Some((schema, batches)) = out else {
            return Ok(DBOutput::StatementComplete(0));
        };
        // Spark's TIMESTAMP is an instant shown in the session's time zone (UTC), as a Hudi
        // table's timestamp columns are in hoodie: both carry the zone and print alike
        Ok(rows_output(&schema, &batches)?)
    }

    async fn shutdown(&mut self) {}

    fn engine_name(&self) -> &str {
        SPARK_LABEL
    }
}
