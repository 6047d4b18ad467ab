//! The OpenAI Chat Completions dialect (`POST /v1/chat/completions`): request bodies read
//! into the canonical request ([`parse`]), and answers, streamed as
//! `chat.completion.chunk` deltas or sent as one `chat.completion` object, assembled into
//! the canonical response ([`stream`]).
//!
//! Source: OpenAI API reference, "Create chat completion" and "The chat completion chunk
//! object"; the shapes opencode 1.18.33 sends through an `@ai-sdk/openai-compatible`
//! provider were measured on 2026-12-01.

pub mod events;
mod request;
pub mod stream;

pub use request::{parse, KNOWN_PARAMS};

/// The host OpenAI's own Chat Completions API is served from.
pub const OPENAI_HOST: &str = "api.openai.com";

/// The host a Chat Completions request of `x` went to when its provider's cache rules are
/// not known: any host but [`OPENAI_HOST`] (an OpenAI-compatible provider, or agentwire's
/// fake server standing for one). `None` for other dialects and for OpenAI itself.
pub fn unknown_provider_host(x: &crate::trace::Exchange) -> Option<String> {
    if super::Dialect::of(x) != Some(super::Dialect::ChatCompletions) {
        return None;
    }
    let host = crate::http::headers::header_value(&x.request.headers, "host").unwrap_or("");
    let name = host.rsplit_once(':').map_or(host, |(h, _)| h);
    (name != OPENAI_HOST).then(|| host.to_string())
}
