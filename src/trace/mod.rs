//! The trace: the `Exchange` model every source produces, its JSON Lines file format
//! (reader and writer), redaction of secrets before anything reaches disk, and the HAR 1.2
//! model and export.
//!
//! File format (version [`FORMAT_VERSION`]): one JSON object per line. A line with
//! `"type":"trace"` is a header carrying the [`Context`] that applies to the exchanges after
//! it; a line with `"type":"exchange"` is one [`Exchange`]; a line with `"type":"mcp"` is
//! one MCP message or server event ([`mcp::McpRecord`]). Other `type`s are kept as
//! [`Record::Other`] so newer files stay readable. See `docs/trace-format.md`.
//!
//! Where it sits: above the bottom layers (`output`, `text`, `gzip`), below everything
//! else. It knows only its own format: [`Trace::read`] reads a trace file. Opening any
//! input (directories, `-`, gzip, packet captures, other tools' files) is the input
//! layer's job (`crate::input`, above the sources), and the importers of other tools'
//! files are sources (`crate::import`); both produce these records.

mod body;
pub mod body_redact;
mod exchange;
pub mod export;
pub mod har;
pub mod mcp;
mod reader;
mod record;
pub mod redact;
pub mod websocket;
mod writer;

pub use body::Body;
pub use exchange::{
    header_value, origin_form, Context, Exchange, ExchangeError, Headers, HttpRequest,
    HttpResponse, Source, SourceKind, MISSING_REQUEST_HEADERS,
};
#[cfg(test)]
pub(crate) use exchange::{test_exchange, test_headers};
pub use mcp::McpRecord;
pub use reader::{LineAt, Part, Trace, TraceReader, MAX_LINE};
pub use record::{ReadProblem, Record};
pub use writer::{stdout as trace_stdout, LineEncoder, TraceWriter};

/// Version of the trace format this build writes. Readers accept this and older versions.
pub const FORMAT_VERSION: u32 = 1;
/// Value of the `format` field of a header line.
pub const FORMAT_NAME: &str = "agentwire-trace";

/// Errors of the trace module; each names the file and, where it applies, the line and
/// byte offset.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// A trace cannot be opened.
    #[error("cannot open trace {path}: {source} (check the path, or record one with `agentwire record`)")]
    Open {
        /// The trace.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Reading a trace failed midway.
    #[error("cannot read trace {path} at byte {offset}: {source}")]
    Read {
        /// The trace.
        path: String,
        /// Where reading stopped, in bytes from the start.
        offset: u64,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Writing a trace failed (the message says what to do about a full disk or a closed pipe).
    #[error("cannot write trace {path}: {source} ({})", crate::output::write_hint(.source))]
    Write {
        /// The trace.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The output policy refused the trace's path.
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
    /// The trace was written by a newer agentwire.
    #[error("trace {path} has format version {found}, newer than this agentwire reads ({FORMAT_VERSION}); upgrade agentwire")]
    Version {
        /// The trace.
        path: String,
        /// The format version it has.
        found: u32,
    },
    #[error(
        "{path}: exchange #{index} not found (the trace has {count} exchanges, numbered from 0)"
    )]
    /// No exchange has the id asked for.
    NoSuchExchange {
        /// The trace.
        path: String,
        /// The id asked for.
        index: u64,
        /// How many exchanges the trace has.
        count: usize,
    },
    /// Several exchanges have the id asked for: the input joins recordings that each
    /// number their exchanges from 0.
    #[error("{path}: exchange #{index} is ambiguous: {count} exchanges have that id (in {files}; each recording numbers its exchanges from 0): give the file that holds the one you mean, FILE#{index}, or split the joined recordings")]
    AmbiguousExchange {
        /// The input.
        path: String,
        /// The id asked for.
        index: u64,
        /// How many exchanges have it.
        count: usize,
        /// The files they are in (the input itself for a file of joined recordings).
        files: String,
    },
}
