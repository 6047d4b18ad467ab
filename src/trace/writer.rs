//! `TraceWriter`: appends records to a JSON Lines trace, one complete line per record,
//! flushed after each so a crash leaves only whole lines (plus at most one partial last
//! line, which the reader reports).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{Context, Exchange, TraceError, FORMAT_NAME, FORMAT_VERSION};

/// Writes a trace file. Not shared between threads: the server funnels records to one
/// writer task.
pub struct TraceWriter {
    out: BufWriter<Box<dyn Write + Send>>,
    path: PathBuf,
    buf: Vec<u8>,
}

#[derive(Serialize)]
struct HeaderLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    format: &'static str,
    version: u32,
    context: &'a Context,
}

#[derive(Serialize)]
struct ExchangeLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    exchange: &'a Exchange,
}

impl TraceWriter {
    /// Create (truncate) `path` and write the header line with `context`.
    ///
    /// Errors: [`TraceError::Write`] if the file cannot be created or written.
    pub fn create(path: &Path, context: &Context) -> Result<Self, TraceError> {
        let file = File::create(path).map_err(|e| TraceError::Write {
            path: path.display().to_string(),
            source: e,
        })?;
        Self::from_writer(Box::new(file), path, context)
    }

    /// Write a trace to any writer (`path` is used in error messages only).
    pub fn from_writer(
        out: Box<dyn Write + Send>,
        path: &Path,
        context: &Context,
    ) -> Result<Self, TraceError> {
        let mut w = TraceWriter {
            out: BufWriter::with_capacity(1 << 16, out),
            path: path.to_path_buf(),
            buf: Vec::with_capacity(1 << 16),
        };
        w.write_record(&HeaderLine {
            kind: "trace",
            format: FORMAT_NAME,
            version: FORMAT_VERSION,
            context,
        })?;
        Ok(w)
    }

    /// Append one exchange as one line and flush it to the OS.
    pub fn write_exchange(&mut self, exchange: &Exchange) -> Result<(), TraceError> {
        self.write_record(&ExchangeLine {
            kind: "exchange",
            exchange,
        })
    }

    /// Append any serializable record (it must carry its own `"type"` field).
    pub fn write_record<T: Serialize>(&mut self, record: &T) -> Result<(), TraceError> {
        self.buf.clear();
        serde_json::to_writer(&mut self.buf, record)
            .map_err(|e| self.err(std::io::Error::other(e)))?;
        self.buf.push(b'\n');
        let r = self.out.write_all(&self.buf).and_then(|_| self.out.flush());
        r.map_err(|e| self.err(e))
    }

    fn err(&self, e: std::io::Error) -> TraceError {
        TraceError::Write {
            path: self.path.display().to_string(),
            source: e,
        }
    }
}
