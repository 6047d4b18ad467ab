//! The trace: the `Exchange` model every source produces, its JSON Lines file format
//! (reader and writer), and redaction of secrets before anything reaches disk.
//!
//! File format (version [`FORMAT_VERSION`]): one JSON object per line. A line with
//! `"type":"trace"` is a header carrying the [`Context`] that applies to the exchanges after
//! it; a line with `"type":"exchange"` is one [`Exchange`]; a line with `"type":"mcp"` is
//! one MCP message or server event ([`mcp::McpRecord`]). Other `type`s are kept as
//! [`Record::Other`] so newer files stay readable. See `docs/trace-format.md`.
//!
//! Every reading command opens its inputs with [`open_input`] (or [`Trace::open`], which
//! uses it): files, directories and `-`, with other tools' formats ([`import`]) recognised
//! from their content.

mod ahead;
mod body;
mod exchange;
pub mod export;
mod gunzip;
pub mod import;
pub mod input;
pub mod mcp;
mod reader;
pub mod redact;
mod writer;

pub use body::Body;
pub use exchange::{
    header_value, origin_form, Context, Exchange, ExchangeError, Headers, HttpRequest,
    HttpResponse, Source, SourceKind,
};
#[cfg(test)]
pub(crate) use exchange::{test_exchange, test_headers};
pub use input::{open_input, InputOptions, TraceInput};
pub use mcp::McpRecord;
pub use reader::{Part, ReadProblem, Record, Trace, TraceReader};
pub use writer::{stdout as trace_stdout, LineEncoder, TraceWriter};

/// Version of the trace format this build writes. Readers accept this and older versions.
pub const FORMAT_VERSION: u32 = 1;
/// Value of the `format` field of a header line.
pub const FORMAT_NAME: &str = "agentwire-trace";

/// Errors of the trace module; each names the file and, where it applies, the line and
/// byte offset.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("cannot open trace {path}: {source} (check the path, or record one with `agentwire record`)")]
    Open {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read trace {path} at byte {offset}: {source}")]
    Read {
        path: String,
        offset: u64,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write trace {path}: {source} ({})", crate::output::write_hint(.source))]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
    #[error("trace {path} has format version {found}, newer than this agentwire reads ({FORMAT_VERSION}); upgrade agentwire")]
    Version { path: String, found: u32 },
    /// An input that is not a trace agentwire reads, or an import that failed.
    #[error(transparent)]
    Import(#[from] import::ImportError),
    #[error(
        "{path}: exchange #{index} not found (the trace has {count} exchanges, numbered from 0)"
    )]
    NoSuchExchange {
        path: String,
        index: u64,
        count: usize,
    },
}
