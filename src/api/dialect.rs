//! Dialects: the wire formats agentwire reads, and how an exchange is recognised as one.
//! Every dialect's parser produces the same canonical request ([`super::MessagesRequest`])
//! and response ([`super::ResponseMessage`]); commands read only those.
//!
//! Recognition is by method and path, since a request body does not say which API it is
//! for (sources: each provider's API reference):
//! - Anthropic Messages: `POST /v1/messages` (any query string);
//! - OpenAI Responses: `POST …/responses` (`/v1/responses`, or a gateway prefix before
//!   it, as Codex's custom providers send), and the messages of a WebSocket opened with
//!   `GET …/responses` (the Responses WebSocket mode);
//! - OpenAI Chat Completions: `POST …/chat/completions`;
//! - Gemini: `POST …/models/MODEL:generateContent` and `…:streamGenerateContent`.

use serde::Serialize;

use crate::trace::Exchange;

/// A wire format of a model API.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    /// Anthropic Messages API (`POST /v1/messages`).
    #[default]
    Messages,
    /// OpenAI Responses API (`POST /v1/responses`, or its WebSocket mode).
    Responses,
    /// OpenAI Chat Completions API (`POST /v1/chat/completions`).
    ChatCompletions,
    /// Google Gemini API (`models/M:generateContent`, `:streamGenerateContent`).
    Gemini,
}

/// Who defines a dialect (prices, cache rules and usage meanings are per provider).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    /// Anthropic.
    Anthropic,
    /// OpenAI.
    OpenAi,
    /// Google.
    Google,
}

impl Dialect {
    /// The dialect's name as reports show it (`messages`, `responses`,
    /// `chat_completions`, `gemini`).
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Messages => "messages",
            Dialect::Responses => "responses",
            Dialect::ChatCompletions => "chat_completions",
            Dialect::Gemini => "gemini",
        }
    }

    /// The provider whose API it is.
    pub fn provider(self) -> Provider {
        match self {
            Dialect::Messages => Provider::Anthropic,
            Dialect::Responses | Dialect::ChatCompletions => Provider::OpenAi,
            Dialect::Gemini => Provider::Google,
        }
    }

    /// The dialect of a request `method` to `path` (no query string), if it is a model
    /// request agentwire reads. A WebSocket message's exchange carries its upgrade's
    /// `GET` and path: `websocket` is true for it.
    pub fn of_request(method: &str, path: &str, websocket: bool) -> Option<Dialect> {
        let post = method.eq_ignore_ascii_case("POST");
        if websocket {
            return path.ends_with("/responses").then_some(Dialect::Responses);
        }
        if !post {
            return None;
        }
        if path == "/v1/messages" {
            Some(Dialect::Messages)
        } else if path.ends_with("/responses") {
            Some(Dialect::Responses)
        } else if path.ends_with("/chat/completions") {
            Some(Dialect::ChatCompletions)
        } else if gemini_method(path).is_some() {
            Some(Dialect::Gemini)
        } else {
            None
        }
    }

    /// The dialect of an exchange, if it is a model request.
    pub fn of(x: &Exchange) -> Option<Dialect> {
        Dialect::of_request(&x.request.method, x.path(), x.websocket.is_some())
    }
}

impl Provider {
    /// The provider's name as reports show it.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAi => "openai",
            Provider::Google => "google",
        }
    }
}

/// For a Gemini path `…/models/MODEL:METHOD`, the model and whether the method streams
/// (`streamGenerateContent`); `None` for other paths.
pub fn gemini_method(path: &str) -> Option<(&str, bool)> {
    let (_, rest) = path.rsplit_once("/models/")?;
    let (model, method) = rest.split_once(':')?;
    match method {
        "generateContent" => Some((model, false)),
        "streamGenerateContent" => Some((model, true)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_dialect_is_known_by_method_and_path() {
        let of = |m, p, ws| Dialect::of_request(m, p, ws);
        assert_eq!(of("POST", "/v1/messages", false), Some(Dialect::Messages));
        assert_eq!(of("post", "/v1/responses", false), Some(Dialect::Responses));
        assert_eq!(
            of("POST", "/backend-api/codex/responses", false),
            Some(Dialect::Responses)
        );
        assert_eq!(of("GET", "/v1/responses", true), Some(Dialect::Responses));
        assert_eq!(of("GET", "/v1/responses", false), None);
        assert_eq!(
            of("POST", "/v1/chat/completions", false),
            Some(Dialect::ChatCompletions)
        );
        assert_eq!(
            of(
                "POST",
                "/v1beta/models/gemini-3.8-flash:streamGenerateContent",
                false
            ),
            Some(Dialect::Gemini)
        );
        assert_eq!(of("POST", "/v1/messages/count_tokens", false), None);
        assert_eq!(of("POST", "/v1beta/models/m:countTokens", false), None);
        assert_eq!(
            gemini_method("/v1beta/models/gemini-3.5-flash-lite:generateContent"),
            Some(("gemini-3.5-flash-lite", false))
        );
    }
}
