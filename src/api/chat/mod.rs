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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_openai_itself_has_known_cache_rules_and_affinity_names_the_session() {
        let body = br#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#;
        let at = |host: &str| {
            let h = [("host", host), ("x-session-affinity", "ses_1")];
            crate::trace::test_exchange("POST", "/v1/chat/completions", &h, body)
        };
        assert_eq!(unknown_provider_host(&at("api.openai.com")), None);
        assert_eq!(unknown_provider_host(&at("api.openai.com:443")), None);
        assert_eq!(
            unknown_provider_host(&at("127.0.0.1:9")).as_deref(),
            Some("127.0.0.1:9")
        );
        let x = at("127.0.0.1:9");
        let id = crate::api::session::client_session_id(&x.request.headers, None);
        assert_eq!(id.map(|(s, _)| s).as_deref(), Some("ses_1"));
        let m = crate::trace::test_exchange("POST", "/v1/messages", &[("host", "h")], body);
        assert_eq!(unknown_provider_host(&m), None);
    }
}
