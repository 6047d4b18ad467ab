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
pub mod signals;
mod sink;
pub mod tap;

pub use sink::{Lost, McpSink};

use super::Diagnostics;
use crate::trace::{McpRecord, Trace, TraceError};
use std::path::{Path, PathBuf};

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
    /// `-o` names the relay's own standard output (`-`, `/dev/stdout`, `/proc/self/fd/1`,
    /// the file stdout is redirected to): trace lines would land in the protocol stream.
    #[error("mcp-tap: -o {path} is mcp-tap's own standard output, which carries the MCP protocol stream to the client; trace lines there would corrupt it: give a file path (default mcp-NAME.jsonl)")]
    OwnStdout {
        /// The output as given.
        path: String,
    },
    /// Records could not be written (disk full, a record over the line bound): the trace
    /// is incomplete; `lost` markers in it say where.
    #[error("mcp-tap: {count} of {total} records could not be written to {path} (first: {first}); the trace marks where they are missing: free space or write elsewhere, and record again")]
    Lost {
        /// The trace.
        path: String,
        /// Records lost.
        count: u64,
        /// Records made in all.
        total: u64,
        /// The first failure.
        first: String,
        /// The server's exit code (128 + signal when killed by one).
        code: i32,
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
