//! `agentwire view`: the conversation viewer, a local web app over a trace (or any input
//! agentwire reads) and, live, over what `serve --ui` / `record --ui` are recording.
//!
//! Where it sits: on top of [`crate::report`] (it uses `analyze`, `input`, `api` and
//! `trace`, and `report` for its export; only the command glue uses it). [`index`] builds the turn list once, by byte offset for a
//! plain trace file ([`scan`]: in batches on every core, with `analyze`'s batched parse;
//! [`model`]: the rows, [`row`]: what a row is read from); [`detail`] reads one turn back on demand; [`badges`] puts `analyze`'s
//! answers on the turns; [`search`] searches the trace; [`server`] is the axum app with its
//! security checks ([`security`]) and the live feed ([`live`]). The page itself
//! (`assets/`: hand-written HTML, CSS and JavaScript, no framework, no build step) ships
//! inside the binary.
//!
//! Every string the server sends passes the one redaction function
//! ([`crate::trace::redact::redact_text`]); the page writes trace strings with
//! `textContent` only.

pub mod badges;
pub mod detail;
pub mod index;
pub mod live;
pub mod model;
pub mod row;
pub mod scan;
pub mod search;
pub mod security;
pub mod server;
pub mod state;

pub use index::open;
pub use model::{Model, TurnRow};
pub use server::app;
pub use state::ViewerState;

/// Errors of the viewer.
#[derive(Debug, thiserror::Error)]
pub enum ViewerError {
    /// The input could not be opened or read.
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
    /// The trace file could not be read.
    #[error(transparent)]
    Trace(#[from] crate::trace::TraceError),
    /// A file could not be opened or read.
    #[error("cannot read {path}: {source}; check that the file still exists and is readable")]
    Open {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// No turn has this number.
    #[error("no turn {0}: the list numbers turns from 0; reload the page")]
    NoTurn(usize),
    /// A turn's line is too large to read back.
    #[error("turn {turn} is {bytes} bytes, more than the viewer reads back (64 MiB); use `agentwire show` or `prompt` on it")]
    TooLarge {
        /// The turn.
        turn: usize,
        /// Its size in bytes.
        bytes: u64,
    },
    /// A turn no longer reads as an exchange.
    #[error("turn {turn} cannot be read back: {why}")]
    Unreadable {
        /// The turn.
        turn: usize,
        /// Why.
        why: String,
    },
}
