//! What a turn's row is made from, read once: the request as parsed (placed later by the
//! viewer's [`crate::api::view::Canonicalizer`]) and what its response says
//! ([`ResponseFacts`]): by the batched parse of [`super::scan`], or here for a single
//! exchange.

use crate::api::view::{exchange_response, Parsed};
use crate::api::ResponseBody;
use crate::trace::Exchange;

/// What a turn's row and the index keep of a response body.
#[derive(Clone, Debug, Default)]
pub struct ResponseFacts {
    /// Uncached input tokens (0: not recorded).
    pub input_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cached_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Stop reason, or the API error's type.
    pub stop: Option<String>,
    /// The body is an API error.
    pub api_error: bool,
    /// The first problem reading it (a stream event skipped, a coding not removed).
    pub problem: Option<String>,
    /// `(id, name)` of each tool call, in order.
    pub calls: Vec<(String, String)>,
}

impl ResponseFacts {
    /// The facts of a response body (`None`: no response).
    pub fn of(body: Option<&ResponseBody>) -> ResponseFacts {
        let mut f = ResponseFacts::default();
        match body {
            Some(ResponseBody::Message(m)) => {
                let u = &m.usage;
                f.input_tokens = u.input_tokens.unwrap_or(0);
                f.cached_tokens = u.cache_read_input_tokens.unwrap_or(0);
                f.cache_write_tokens = u.cache_creation_input_tokens.unwrap_or(0);
                f.output_tokens = u.output_tokens.unwrap_or(0);
                f.stop = m.stop_reason.clone();
                f.problem = m.stream_problems.first().cloned();
                f.calls = m
                    .tool_calls()
                    .map(|(id, name, _)| (id.to_string(), name.to_string()))
                    .collect();
            }
            Some(ResponseBody::Error { error_type, .. }) => {
                f.stop = Some(error_type.clone());
                f.api_error = true;
            }
            Some(ResponseBody::Undecodable { reason }) => f.problem = Some(reason.clone()),
            Some(ResponseBody::Other) | None => {}
        }
        f
    }

    /// The facts of an exchange's response, read now.
    pub fn read(x: &Exchange) -> ResponseFacts {
        ResponseFacts::of(exchange_response(x).as_ref())
    }
}

/// What the batched parse read of one exchange for its row: the request as parsed (for
/// the viewer's own placement) and the response's facts.
#[derive(Debug, Default)]
pub struct ReadRow {
    /// The request body as parsed, its error taken out into `error`.
    pub parsed: Parsed,
    /// Why the request body could not be read.
    pub error: Option<String>,
    /// What the response says.
    pub response: ResponseFacts,
}

impl ReadRow {
    /// The row's share of what [`crate::analyze::analyzer::prepare_batch`] read once.
    pub fn of(r: &crate::analyze::analyzer::ReadOnce) -> ReadRow {
        let p = r.parsed;
        ReadRow {
            parsed: Parsed {
                request: p.request.clone(),
                error: None,
                digests: p.digests.clone(),
                continues: p.continues,
            },
            error: p.error.as_ref().map(ToString::to_string),
            response: ResponseFacts::of(r.response()),
        }
    }

    /// Read one exchange now (no batch).
    pub fn read(x: &Exchange) -> ReadRow {
        let mut parsed = crate::api::view::parse(x);
        ReadRow {
            error: parsed.error.take().map(|e| e.to_string()),
            parsed,
            response: ResponseFacts::read(x),
        }
    }
}
