//! Request and trace diffs: what changed in the Messages requests between two CLI
//! versions, two settings, or two turns of one conversation.
//!
//! - [`resolve`](mod@resolve): resolving what the user names (`trace.jsonl`,
//!   `trace.jsonl#3`; the recorder adds CLI specs through [`InputResolver`]) to traces.
//! - [`select`]: which requests are compared: the first main-thread request of each
//!   trace, every turn aligned by thread and turn, or each request against the previous
//!   one of its thread.
//! - [`request`]: the diff of two requests (sizes, [`tools`], system prompt, [`headers`],
//!   parameters, injected context), after the api layer's normalization
//!   ([`crate::api::normalize`]) hid volatile values.
//! - [`gate`]: `--fail-on` flags and metrics for CI (the grammar is [`crate::gate`]'s).
//! - [`matrix`]: the version × settings table over recorded traces.
//! - [`norm`]: the normalization state of one comparison.

mod entry;
pub mod gate;
pub mod headers;
pub mod matrix;
mod nested;
pub mod norm;
pub mod request;
pub mod resolve;
pub mod schema;
pub mod select;
pub mod text;
pub mod tools;

pub use gate::GateResult;
pub use request::{diff_parsed, diff_requests, RequestDiff, RequestSide};
pub use resolve::{resolve, InputResolver, Resolved};
pub use select::{diff_inputs, diff_within, DiffReport, Mode};

/// Errors of the diff module.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// A normalization rules file or rule is bad.
    #[error(transparent)]
    Rules(#[from] crate::api::ApiError),
    /// An input could not be resolved or read.
    #[error("{input}: {message}")]
    Input {
        /// The input as the user wrote it.
        input: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The `#N` of a `FILE#N` input is not an exchange id (a usage error: what was typed).
    #[error("{input}: {n:?} after '#' is not an exchange id; write FILE#N with N a whole number, as `agentwire show` numbers the exchanges")]
    Selector {
        /// The input as the user wrote it.
        input: String,
        /// What followed the `#`.
        n: String,
    },
    /// A request body is not a Messages request.
    #[error("{input}: request body is not a Messages request: {message}")]
    Body {
        /// Which side / exchange.
        input: String,
        /// Parser message (with byte offset).
        message: String,
    },
    /// Reading a trace failed.
    #[error(transparent)]
    Trace(#[from] crate::trace::TraceError),
    /// Opening an input failed, or it is not a format agentwire reads.
    #[error(transparent)]
    Open(#[from] crate::input::InputError),
}
