//! `ResponseMessage`: the assistant message of a Messages API response, whether it came as
//! one JSON object or was assembled from an SSE stream, plus API error bodies.

use serde_json::Value;

use super::content::Block;
use super::span::Span;
use super::Usage;

/// A response message.
#[derive(Clone, Debug, Default)]
pub struct ResponseMessage {
    /// `id` (e.g. `msg_...`).
    pub id: Option<String>,
    /// `model`.
    pub model: Option<String>,
    /// Content blocks (assembled blocks carry empty spans).
    pub content: Vec<Block>,
    /// `stop_reason` (`end_turn`, `tool_use`, `max_tokens`, ...).
    pub stop_reason: Option<String>,
    /// Usage, final figures.
    pub usage: Usage,
    /// True when assembled from SSE.
    pub streamed: bool,
    /// True when the message is whole (non-streaming: always; streaming: `message_stop`
    /// seen and no `error` event).
    pub complete: bool,
    /// `ping` events seen.
    pub pings: u32,
    /// `error` events' `error` objects.
    pub stream_errors: Vec<Value>,
    /// Unknown events, kept whole: `(type, data)`.
    pub unknown_events: Vec<(String, Value)>,
    /// Events whose data was not JSON.
    pub malformed_events: usize,
    /// Events skipped as impossible, one message each naming the event's byte offset in
    /// the body (see [`super::sse::StreamAssembler::problems`]), after a content coding that could
    /// not be removed, when there was one ([`super::view::exchange_response`]); non-empty
    /// makes a run degraded.
    pub stream_problems: Vec<String>,
}

impl ResponseMessage {
    /// Read a message object (the non-streaming response body shape).
    pub fn from_value(v: &Value) -> ResponseMessage {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        ResponseMessage {
            id: s("id"),
            model: s("model"),
            content: v
                .get("content")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|b| Block::from_value(b.clone(), Span::default()))
                        .collect()
                })
                .unwrap_or_default(),
            stop_reason: s("stop_reason"),
            usage: v.get("usage").map(Usage::from_value).unwrap_or_default(),
            complete: true,
            ..ResponseMessage::default()
        }
        .with_usage_problems()
    }

    /// The message with its usage figures' problems ([`Usage::problems`]) among its
    /// `stream_problems`, once each.
    pub(super) fn with_usage_problems(mut self) -> ResponseMessage {
        for p in &self.usage.problems {
            if !self.stream_problems.contains(p) {
                self.stream_problems.push(p.clone());
            }
        }
        self
    }

    /// Tool calls (`tool_use` blocks) as `(id, name, input)`.
    pub fn tool_calls(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.content.iter().filter_map(|b| match &b.kind {
            super::BlockKind::ToolUse { id, name, input } => {
                Some((id.as_str(), name.as_str(), input))
            }
            _ => None,
        })
    }
}

/// What a response body holds.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)] // one per exchange, read once: boxing buys nothing
pub enum ResponseBody {
    /// A message (streamed or not).
    Message(Box<ResponseMessage>),
    /// An API error body: `{"type":"error","error":{"type":..,"message":..}}`.
    Error {
        /// `error.type`, e.g. `overloaded_error`.
        error_type: String,
        /// `error.message`.
        message: String,
    },
    /// Something else (other endpoints, non-JSON).
    Other,
    /// A body whose content coding could not be removed, and whose still-encoded bytes
    /// read as no message: why, from the one decoder (`cannot decode gzip body: ...`).
    Undecodable {
        /// What the decoder said.
        reason: String,
    },
}

/// The type and message of an API error object as `type: message` (Anthropic
/// `{"type":"overloaded_error","message":"Overloaded"}`; OpenAI `{"code":…,"message":…}`
/// or `{"type":…}`; Google `{"code":429,"message":…,"status":"RESOURCE_EXHAUSTED"}`): the
/// type alone when there is no message, `error` when there is no type.
pub fn error_text(v: &Value) -> String {
    let s = |k: &str| v.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    let code = v.get("code").and_then(Value::as_u64).map(|c| c.to_string());
    let kind = s("type")
        .or_else(|| s("status"))
        .or_else(|| s("code"))
        .map(str::to_string)
        .or(code)
        .unwrap_or_else(|| "error".into());
    match s("message") {
        Some(m) => format!("{kind}: {m}"),
        None => kind.to_string(),
    }
}

impl ResponseMessage {
    /// The API error the stream reported (its last `error` event), as [`error_text`](crate::api::error_text) makes it.
    pub fn stream_error(&self) -> Option<String> {
        self.stream_errors.last().map(error_text)
    }
}

impl ResponseBody {
    /// The API error this body holds: an error body, or a stream that reported one
    /// ([`error_text`](crate::api::error_text) form: `overloaded_error: Overloaded`).
    pub fn api_error(&self) -> Option<String> {
        match self {
            ResponseBody::Error {
                error_type,
                message,
            } if message.is_empty() => Some(error_type.clone()),
            ResponseBody::Error {
                error_type,
                message,
            } => Some(format!("{error_type}: {message}")),
            ResponseBody::Message(m) => m.stream_error(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod error_tests {
    use super::*;

    #[test]
    fn an_error_event_keeps_its_type_and_message() {
        let v = serde_json::json!({"type":"overloaded_error","message":"Overloaded"});
        assert_eq!(error_text(&v), "overloaded_error: Overloaded");
        let v = serde_json::json!({"code":"server_error","message":""});
        assert_eq!(error_text(&v), "server_error");
    }
}
