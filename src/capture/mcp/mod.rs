//! The MCP side of the wire: record the JSON-RPC traffic between an agent CLI and its MCP
//! servers into `mcp` trace records ([`crate::trace::McpRecord`]).
//!
//! - [`tap`]: `agentwire mcp-tap -- COMMAND ARGS` runs a stdio server and relays its
//!   stdin/stdout byte for byte, recording every newline-delimited message.
//! - [`http`]: a recording reverse proxy for one Streamable HTTP server (POSTs, JSON and
//!   per-request SSE answers, 202 for notifications, `Mcp-Session-Id`).
//! - [`config`]: rewrite a CLI's MCP configuration (`--mcp-config`) so each server runs
//!   under the tap or behind the proxy; `record` merges what they wrote into its trace.

pub mod config;
pub mod http;
pub mod tap;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::Diagnostics;
use crate::trace::{Context, McpRecord, Trace, TraceError, TraceWriter};

/// Errors of MCP recording.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// `mcp-tap` was given no server command.
    #[error("mcp-tap: nothing to run: give the server command after `--`, e.g. `agentwire mcp-tap --name jobs -- python3 server.py`")]
    NoCommand,
    /// The server command cannot be started.
    #[error("mcp-tap: cannot start {program}: {source} (check the command and PATH)")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The records cannot be written or read back.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// An MCP configuration (`--mcp-config` of the recorded CLI) cannot be used.
    #[error("MCP configuration {source_name}: {message} (give a JSON object with \"mcpServers\", as for `claude --mcp-config`)")]
    Config {
        /// The file, or where the configuration came from.
        source_name: String,
        /// What is wrong.
        message: String,
    },
    /// A Streamable HTTP server's URL cannot be used.
    #[error("MCP server {server:?}: URL {url:?} is not usable: {reason}")]
    BadUrl {
        /// The server's name (its `mcpServers` key).
        server: String,
        /// The URL as given.
        url: String,
        /// Why.
        reason: String,
    },
    /// The recording proxy cannot listen on loopback.
    #[error("cannot start the MCP recording proxy for {server:?}: {source}")]
    Listen {
        /// The server's name.
        server: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The records cannot be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The trace.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Where one recording source (a tap or an HTTP proxy) writes its `mcp` records: a
/// trace file of its own, one flushed line per record, numbered in writing order.
pub struct McpSink {
    inner: Mutex<(TraceWriter, u64)>,
    diagnostics: Diagnostics,
}

impl McpSink {
    /// Create `path` with a trace header naming the source (`context.cli` = `label`).
    ///
    /// Errors: [`TraceError::Write`] when the file cannot be created.
    pub fn create(path: &Path, label: &str) -> Result<McpSink, TraceError> {
        let mut ctx = Context::new();
        ctx.label = Some(crate::trace::redact::redact_text(label));
        Ok(McpSink {
            inner: Mutex::new((TraceWriter::create(path, &ctx)?, 0)),
            diagnostics: Diagnostics::silent(),
        })
    }

    /// The sink, reporting write errors to `diagnostics` (by default they are not
    /// reported).
    pub fn reporting_to(mut self, diagnostics: Diagnostics) -> McpSink {
        self.diagnostics = diagnostics;
        self
    }

    /// Number and write one record. A write error is reported (the first, then every
    /// thousandth record's) and the relay goes on (the protocol traffic matters more than
    /// its recording).
    pub fn write(&self, mut record: McpRecord) {
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        record.seq = g.1;
        g.1 += 1;
        if let Err(e) = g.0.write_record(&record.line()) {
            if g.1 == 1 || record.seq % 1000 == 0 {
                self.diagnostics.status(&format!("agentwire mcp: {e}"));
            }
        }
    }
}

/// Read the `mcp` records of every `*.jsonl` file in `dir` (the files taps and proxies
/// wrote during a recording), in time order. Unreadable lines are returned as problems
/// (a server that crashed mid-write leaves a readable trace and one reported line); a
/// file that cannot be opened at all is reported to `diagnostics` as a warning.
pub fn collect(
    dir: &Path,
    diagnostics: &Diagnostics,
) -> (Vec<McpRecord>, Vec<(PathBuf, crate::trace::ReadProblem)>) {
    let mut records = Vec::new();
    let mut problems = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        // regular files only: a FIFO would block the read forever
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .collect();
    files.sort();
    for f in files {
        match Trace::read(&f) {
            Ok(t) => {
                records.extend(t.mcp);
                problems.extend(t.problems.into_iter().map(|p| (f.clone(), p)));
            }
            Err(e) => diagnostics.warn(&e.to_string()),
        }
    }
    records.sort_by_key(|r| r.at);
    (records, problems)
}
