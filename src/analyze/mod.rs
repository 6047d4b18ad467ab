//! `agentwire analyze`: redundant polling, prompt-cache misses and background-job
//! lifecycles across whole traces.
//!
//! Three layers, each using only the ones before it (and `api`):
//! - **model**: [`events`] (tool calls, results, `<task-notification>`s) and [`requests`]
//!   (each Messages exchange reduced to its session, thread, cached prefix and usage,
//!   the body dropped);
//! - **detectors**: [`cache`] simulates the prompt cache request by request and
//!   [`cause`] names each miss; [`jobs`] finds background jobs (Codex's processes and
//!   cells read by [`codex`]), [`polling`] groups polls into episodes ([`repeats`]: polls
//!   found by repetition alone), [`mcp`] follows the MCP layer's tasks;
//! - **result**: [`result`] prices everything into the report rows, the totals and the
//!   whole report ([`Analysis`]).
//!
//! [`analyzer`] runs them over a stream of records (memory is bounded by the reduced
//! form, not by body sizes); [`config`] holds the settings; [`gate`] evaluates
//! `--fail-on` expressions on the totals (the grammar is [`crate::gate`]'s).

pub mod analyzer;
pub mod cache;
pub mod cause;
pub mod codex;
pub mod config;
pub mod events;
pub mod gate;
pub mod gemini;
pub mod jobs;
pub mod mcp;
pub mod polling;
pub mod repeats;
pub mod requests;
pub mod result;

use crate::trace::TraceError;

pub use crate::api::prices::{ModelPrice, PriceTable, Tokens};
pub use analyzer::{
    analyze_exchanges, analyze_files, analyze_files_observed, analyze_trace, Analyzer,
};
pub use cache::TtlMode;
pub use cause::{BilledAs, CachePrediction, MissCause};
pub use config::{AnalyzeConfig, UsageMode};
pub use result::{
    Analysis, EpisodeRow, InputInfo, JobRow, RequestRow, SkippedFile, ThreadRow, Totals,
    Unattributed, LISTED_BAD_LINES,
};

/// Errors of the analyze module.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// A trace could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// An input could not be opened or read, or is not a format agentwire reads.
    #[error(transparent)]
    Input(#[from] crate::input::InputError),
    /// The price file could not be used.
    #[error(transparent)]
    Prices(#[from] crate::api::ApiError),
}
