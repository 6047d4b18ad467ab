//! `TraceWriter`: appends records to a JSON Lines trace, one complete line per record,
//! written with one call each so a crash leaves only whole lines (plus at most one partial
//! last line, which the reader reports).
//!
//! Every record passes [`super::redact`] on its way out (the context with
//! [`redact::context`], exchanges with [`redact::exchange`]), so no source can write a
//! secret by forgetting to redact. A failed write (disk full) is cut back to the last whole
//! line, so a later record never lands glued to a partial one.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{redact, Body, Context, Exchange, TraceError, FORMAT_NAME, FORMAT_VERSION};
use crate::output::{self, AtomicFile, OutputError};

/// Standard output for a trace (`-o -`). A pipe or file gets the bytes `-o FILE` would
/// hold: the printable filter's `\uXXXX` escapes would change the bytes of a body embedded
/// verbatim (`"json"`), which its `sha256` covers, and every reader would drop the record.
/// A terminal gets the filtered text ([`crate::text::safe_json`]), since nothing reads
/// the trace back from there and raw control or bidi characters must not reach it.
pub fn stdout() -> Box<dyn Write + Send> {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        Box::new(crate::text::safe_json::stdout())
    } else {
        Box::new(std::io::stdout())
    }
}

/// Where the lines go.
enum Output {
    /// A file written in place (live recorders).
    InPlace(File),
    /// A temporary file renamed over the destination by [`TraceWriter::finish`].
    Atomic(AtomicFile),
    /// Anything else (standard output).
    Stream(Box<dyn Write + Send>),
}

/// Writes a trace file. Not shared between threads: the server funnels records to one
/// writer thread.
pub struct TraceWriter {
    out: Output,
    path: PathBuf,
    buf: Vec<u8>,
    /// Bytes of whole lines written so far.
    good: u64,
    redact_bodies: bool,
}

/// Makes the trace line of an exchange (secrets redacted, `--redact-body` applied when the
/// writer it came from has it) without writing it, so lines can be made on several
/// threads and written in order.
#[derive(Clone, Copy, Debug)]
pub struct LineEncoder {
    redact_bodies: bool,
}

impl LineEncoder {
    /// The line [`TraceWriter::write_exchange`] writes for `exchange`, newline included.
    ///
    /// Errors: serialization failures (none for exchanges built by agentwire).
    pub fn exchange(self, mut exchange: Exchange) -> Result<Vec<u8>, serde_json::Error> {
        redact::exchange_in_place(&mut exchange);
        if self.redact_bodies {
            redact_body(&mut exchange.request.body);
            if let Some(r) = exchange.response.as_mut() {
                redact_body(&mut r.body);
            }
        }
        let bodies =
            exchange.request.body.len() + exchange.response.as_ref().map_or(0, |r| r.body.len());
        let mut line = Vec::with_capacity(bodies + bodies / 8 + 1024);
        serde_json::to_writer(
            &mut line,
            &ExchangeLine {
                kind: "exchange",
                exchange: &exchange,
            },
        )?;
        line.push(b'\n');
        Ok(line)
    }
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

fn out_err(e: OutputError) -> TraceError {
    match e {
        OutputError::Write { path, source } => TraceError::Write { path, source },
        other => TraceError::Output(other),
    }
}

impl TraceWriter {
    /// Create (truncate) `path`, mode 0600, and write the header line with `context`. The
    /// file is written in place; callers that must not replace an existing trace check it
    /// first ([`crate::output::check`]).
    ///
    /// Errors: [`TraceError::Write`] if the file cannot be created or written.
    pub fn create(path: &Path, context: &Context) -> Result<Self, TraceError> {
        let file = output::create_in_place(path, true).map_err(out_err)?;
        Self::with_output(Output::InPlace(file), path, context)
    }

    /// Write the trace to a temporary file next to `path`, renamed over `path` by
    /// [`finish`](Self::finish) (`-`: standard output). An existing `path` is refused
    /// unless `force`.
    ///
    /// Errors: [`TraceError::Output`] when `path` exists, [`TraceError::Write`] otherwise.
    pub fn create_atomic(path: &Path, force: bool, context: &Context) -> Result<Self, TraceError> {
        if output::is_stdout(path) {
            return Self::from_writer(stdout(), path, context);
        }
        let f = AtomicFile::create(path, force).map_err(out_err)?.direct();
        Self::with_output(Output::Atomic(f), path, context)
    }

    /// Write a trace to any writer (`path` is used in error messages only).
    pub fn from_writer(
        out: Box<dyn Write + Send>,
        path: &Path,
        context: &Context,
    ) -> Result<Self, TraceError> {
        Self::with_output(Output::Stream(out), path, context)
    }

    fn with_output(out: Output, path: &Path, context: &Context) -> Result<Self, TraceError> {
        let mut w = TraceWriter {
            out,
            path: path.to_path_buf(),
            buf: Vec::with_capacity(1 << 16),
            good: 0,
            redact_bodies: false,
        };
        w.write_serialized(&HeaderLine {
            kind: "trace",
            format: FORMAT_NAME,
            version: FORMAT_VERSION,
            context: &redact::context(context),
        })?;
        Ok(w)
    }

    /// `--redact-body`: replace Anthropic-key-shaped strings inside request and response
    /// bodies before writing (the body's size and digest then describe the redacted bytes,
    /// and the body is marked `"redacted": true`).
    pub fn redact_bodies(mut self, on: bool) -> Self {
        self.redact_bodies = on;
        self
    }

    /// Append one exchange as one line (secrets redacted) and hand it to the OS.
    pub fn write_exchange(&mut self, exchange: &Exchange) -> Result<(), TraceError> {
        let mut redacted = redact::exchange(exchange);
        if self.redact_bodies {
            let x = redacted.get_or_insert_with(|| exchange.clone());
            redact_body(&mut x.request.body);
            if let Some(r) = x.response.as_mut() {
                redact_body(&mut r.body);
            }
        }
        self.write_serialized(&ExchangeLine {
            kind: "exchange",
            exchange: redacted.as_ref().unwrap_or(exchange),
        })
    }

    /// [`TraceWriter::write_exchange`] for an exchange the caller gives up: redacted in
    /// place instead of copied (the same line is written).
    pub fn write_exchange_owned(&mut self, exchange: Exchange) -> Result<(), TraceError> {
        let line = self
            .encoder()
            .exchange(exchange)
            .map_err(|e| self.err(std::io::Error::other(e)))?;
        self.write_line(&line)
    }

    /// An encoder making this writer's exchange lines on any thread; write them, in order,
    /// with [`TraceWriter::write_line`].
    pub fn encoder(&self) -> LineEncoder {
        LineEncoder {
            redact_bodies: self.redact_bodies,
        }
    }

    /// Append any other record (it must carry its own `"type"` field): MCP messages, and
    /// records of kinds this version does not know, passed through from another trace.
    /// Like every record it passes the redaction on its way out ([`redact::redact_json`]:
    /// secret-shaped strings and values under secret names become markers).
    pub fn write_record<T: Serialize>(&mut self, record: &T) -> Result<(), TraceError> {
        let mut v = serde_json::to_value(record).map_err(|e| self.err(std::io::Error::other(e)))?;
        if redact::json_dirty(&v) {
            redact::redact_json(&mut v);
        }
        self.write_serialized(&v)
    }

    /// [`TraceWriter::write_record`] for a record that must stay readable: a line longer
    /// than `max_line` bytes (newline included; readers skip lines over
    /// [`super::MAX_LINE`]) is not written.
    ///
    /// Errors: [`TraceError::Write`] naming the size and the bound (nothing written), or
    /// the write's own error.
    pub fn write_record_within<T: Serialize>(
        &mut self,
        record: &T,
        max_line: usize,
    ) -> Result<(), TraceError> {
        let mut v = serde_json::to_value(record).map_err(|e| self.err(std::io::Error::other(e)))?;
        if redact::json_dirty(&v) {
            redact::redact_json(&mut v);
        }
        let mut line = serde_json::to_vec(&v).map_err(|e| self.err(std::io::Error::other(e)))?;
        line.push(b'\n');
        if line.len() > max_line {
            return Err(self.err(std::io::Error::other(format!(
                "a record of {} bytes is over the {max_line}-byte line bound readers accept",
                line.len()
            ))));
        }
        self.write_line(&line)
    }

    /// Append one record as one line, as serialized (callers redacted it).
    fn write_serialized<T: Serialize>(&mut self, record: &T) -> Result<(), TraceError> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let r = serde_json::to_writer(&mut buf, record)
            .map_err(|e| self.err(std::io::Error::other(e)))
            .and_then(|_| {
                buf.push(b'\n');
                self.write_line(&buf)
            });
        self.buf = buf;
        r
    }

    /// Append one whole line made by [`LineEncoder`] (newline included) with one write.
    pub fn write_line(&mut self, line: &[u8]) -> Result<(), TraceError> {
        let r = match &mut self.out {
            Output::InPlace(f) => f.write_all(line),
            Output::Atomic(f) => f.write_all(line),
            Output::Stream(s) => s.write_all(line).and_then(|_| s.flush()),
        };
        match r {
            Ok(()) => {
                self.good += line.len() as u64;
                Ok(())
            }
            Err(e) => {
                self.cut_back();
                Err(self.err(e))
            }
        }
    }

    /// After a failed write: remove the partial line, so the next line starts clean.
    fn cut_back(&mut self) {
        match &mut self.out {
            Output::InPlace(f) => {
                let _ = f.set_len(self.good);
                let _ = f.seek(SeekFrom::Start(self.good));
            }
            Output::Atomic(f) => {
                let _ = f.truncate(self.good);
            }
            Output::Stream(_) => {}
        }
    }

    /// Bytes of whole lines written so far.
    pub fn bytes_written(&self) -> u64 {
        self.good
    }

    /// Complete the trace: an atomic output is flushed and renamed over its destination;
    /// standard output is flushed.
    ///
    /// Errors: [`TraceError::Write`], or [`TraceError::Output`] when the destination
    /// appeared meanwhile.
    pub fn finish(self) -> Result<(), TraceError> {
        match self.out {
            Output::InPlace(f) => f.sync_data().map_err(|e| TraceError::Write {
                path: self.path.display().to_string(),
                source: e,
            }),
            Output::Atomic(f) => f.commit().map_err(out_err),
            Output::Stream(mut s) => s.flush().map_err(|e| TraceError::Write {
                path: self.path.display().to_string(),
                source: e,
            }),
        }
    }

    /// The error of a line [`LineEncoder`] could not make, naming this trace.
    pub fn encode_error(&self, e: serde_json::Error) -> TraceError {
        self.err(std::io::Error::other(e))
    }

    fn err(&self, e: std::io::Error) -> TraceError {
        TraceError::Write {
            path: self.path.display().to_string(),
            source: e,
        }
    }
}

fn redact_body(b: &mut Body) {
    let (out, n) = super::body_redact::redact_body_keys(&b.bytes);
    if n > 0 {
        let bytes = out.into_owned();
        let mut nb = Body::new(bytes).with_truncated(b.truncated);
        nb.content_encoding = b.content_encoding.take();
        nb.wire_size = b.wire_size;
        nb.redacted = true;
        *b = nb;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Disk full, simulated: a writer that accepts only part of a line. The partial line is
    /// cut off, so the next record starts on a clean line.
    #[test]
    fn failed_write_leaves_no_partial_line() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.jsonl");
        let mut w = TraceWriter::create(&p, &Context::new()).unwrap();
        let good = w.bytes_written();
        // Simulate a partial write: append half a line by hand, then let the writer cut
        // back as it does after a failed write.
        if let Output::InPlace(f) = &mut w.out {
            f.write_all(b"{\"type\":\"exch").unwrap();
        }
        w.cut_back();
        w.write_record(&serde_json::json!({"type":"note","n":1}))
            .unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text.len() as u64, w.bytes_written());
        assert!(
            text[good as usize..].starts_with("{\"type\":\"note\""),
            "{text}"
        );
    }

    /// A record of a kind this version does not know, passed through from another trace
    /// (`record`, `import`), goes through the same redaction as exchanges.
    #[test]
    fn passed_through_records_are_redacted_too() {
        let key = "sk-ant-api03-PassThroughKEY0123456789abcdef";
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.jsonl");
        let mut w = TraceWriter::create(&p, &Context::new()).unwrap();
        w.write_record(&serde_json::json!({
            "type": "future_kind",
            "note": format!("pasted {key} here"),
            "headers": {"x-api-key": "plain-value"},
        }))
        .unwrap();
        w.finish().unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(!text.contains(key), "{text}");
        assert!(!text.contains("plain-value"), "{text}");
        let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(last["type"], "future_kind");
        assert!(last["note"]
            .as_str()
            .unwrap()
            .starts_with("pasted [redacted"));
    }
}
