//! Request and trace diffs: what changed in the Messages requests between two CLI
//! versions, two settings, or two turns of one conversation.
//!
//! - [`input`]: resolving what the user names (`trace.jsonl`, `trace.jsonl#3`; the
//!   recorder adds CLI specs through [`input::InputResolver`]) to traces.
//! - [`select`]: which requests are compared: the first main-thread request of each
//!   trace, every turn aligned by thread and turn, or each request against the previous
//!   one of its thread.
//! - [`request`]: the diff of two requests (sizes, [`tools`], system prompt, [`headers`],
//!   parameters, injected context), after the api layer's normalization
//!   ([`crate::api::normalize`]) hid volatile values.
//! - [`gate`]: `--fail-on` expressions for CI.
//! - [`matrix`]: the version × settings table over recorded traces.

pub mod gate;
pub mod headers;
pub mod input;
pub mod matrix;
pub mod request;
pub mod schema;
pub mod select;
pub mod text;
pub mod tools;

use std::borrow::Cow;

use crate::api::normalize::Normalizer;

pub use gate::{Gate, GateResult};
pub use input::{resolve, InputResolver, Resolved};
pub use request::{diff_parsed, diff_requests, RequestDiff, RequestSide};
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
    /// A `--fail-on` expression does not parse.
    #[error("bad --fail-on expression {expr:?}: {message}")]
    Gate {
        /// The expression.
        expr: String,
        /// What is wrong, with the accepted forms.
        message: String,
    },
    /// Reading a trace failed.
    #[error(transparent)]
    Trace(#[from] crate::trace::TraceError),
    /// Opening an input failed, or it is not a format agentwire reads.
    #[error(transparent)]
    Open(#[from] crate::input::InputError),
}

/// Normalization state of one comparison: the rules and the replacements made per side.
pub(crate) struct Norm<'n> {
    rules: &'n Normalizer,
    hits_a: crate::api::normalize::Hits,
    hits_b: crate::api::normalize::Hits,
}

impl<'n> Norm<'n> {
    pub(crate) fn new(rules: &'n Normalizer) -> Self {
        Norm {
            rules,
            hits_a: Default::default(),
            hits_b: Default::default(),
        }
    }
    /// Normalize a text of side A.
    pub(crate) fn a<'t>(&mut self, t: &'t str) -> Cow<'t, str> {
        self.rules.text(t, &mut self.hits_a)
    }
    /// Normalize a text of side B.
    pub(crate) fn b<'t>(&mut self, t: &'t str) -> Cow<'t, str> {
        self.rules.text(t, &mut self.hits_b)
    }
    /// Normalize a JSON document (a tool definition) of side A over its text view
    /// ([`crate::api::normalize::text_view`]).
    pub(crate) fn json_a(&mut self, bytes: &[u8]) -> String {
        self.rules.json(bytes, &mut self.hits_a)
    }
    /// Normalize a JSON document of side B.
    pub(crate) fn json_b(&mut self, bytes: &[u8]) -> String {
        self.rules.json(bytes, &mut self.hits_b)
    }
    /// Normalize a JSON value over its text view, to compare it only: replacements are not
    /// counted (the displayed text of the value is normalized and counted by the caller).
    pub(crate) fn quiet_value(&self, v: &serde_json::Value) -> String {
        self.rules.value(v, &mut crate::api::normalize::Hits::new())
    }
    /// Normalize a text for display only: replacements are not counted in [`Norm::rows`].
    pub(crate) fn quiet(&self, t: &str) -> String {
        self.rules
            .text(t, &mut crate::api::normalize::Hits::new())
            .into_owned()
    }
    pub(crate) fn header_a(&mut self, name: &str, v: &str) -> String {
        self.rules.header(name, v, &mut self.hits_a).into_owned()
    }
    pub(crate) fn header_b(&mut self, name: &str, v: &str) -> String {
        self.rules.header(name, v, &mut self.hits_b).into_owned()
    }
    /// One row per rule that fired, in rule order.
    pub(crate) fn rows(&self) -> Vec<request::NormalizedRow> {
        self.rules
            .rules()
            .iter()
            .filter_map(|r| {
                let a = self.hits_a.get(&r.name).copied().unwrap_or(0);
                let b = self.hits_b.get(&r.name).copied().unwrap_or(0);
                (a + b > 0).then(|| request::NormalizedRow {
                    rule: r.name.clone(),
                    description: r.description.clone(),
                    a,
                    b,
                })
            })
            .collect()
    }
}
