//! What the fake server says: Messages API replies as SSE events or one JSON object, and
//! the API's error bodies. Shapes follow the Messages API reference ("Streaming messages":
//! `message_start`, `ping`, `content_block_start/delta/stop`, `message_delta`,
//! `message_stop`; "Errors": `{"type":"error","error":{"type","message"},"request_id"}`),
//! and the recorded answers built from them (`error_response`, `respond_json`).

use axum::body::Body as AxumBody;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use chrono::Utc;
use serde_json::{json, Value};

use super::draft::{Draft, RecordingStream, ScriptedEvents};
use crate::api::estimate_tokens;
use crate::http::Headers;
use crate::trace::{Body, ExchangeError, HttpResponse};

/// Characters per `text_delta` piece when streaming text.
pub const TEXT_PIECE: usize = 8;
/// Characters per `input_json_delta` piece when streaming a tool input.
pub const JSON_PIECE: usize = 16;

/// A reply to one Messages request, before it is encoded.
#[derive(Clone, Debug)]
pub struct Reply {
    /// Message id (`msg_...`).
    pub id: String,
    /// Model to echo.
    pub model: String,
    /// Content blocks (API shape: `{"type":"text","text":..}`, `{"type":"tool_use",..}`).
    pub content: Vec<Value>,
    /// `stop_reason`.
    pub stop_reason: String,
    /// Uncached input tokens to report.
    pub input_tokens: u64,
    /// Output tokens to report.
    pub output_tokens: u64,
    /// A recorded `usage` object reported as it is instead of the estimated figures (a
    /// replayed message re-emitted as a stream, see [`Reply::from_message`]).
    pub recorded_usage: Option<Value>,
    /// `stop_sequence` (JSON null unless a stop sequence ended the message).
    pub stop_sequence: Value,
}

impl Reply {
    /// A reply with usage estimated from the request size and the content.
    pub fn new(id: String, model: String, content: Vec<Value>, request_bytes: usize) -> Reply {
        let has_tool = content
            .iter()
            .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"));
        let out_bytes = serde_json::to_string(&content).map_or(0, |s| s.len());
        Reply {
            id,
            model,
            stop_reason: if has_tool { "tool_use" } else { "end_turn" }.into(),
            content,
            input_tokens: estimate_tokens(request_bytes),
            output_tokens: estimate_tokens(out_bytes).max(1),
            recorded_usage: None,
            stop_sequence: Value::Null,
        }
    }

    /// The reply a recorded non-streaming message body (`{"type":"message",…}`) holds:
    /// its id, model, content, stop reason, stop sequence and usage, so that
    /// [`Reply::to_sse_events`] emits it as the stream the API would have sent.
    /// `None` when `message` is no message object.
    pub fn from_message(message: &Value) -> Option<Reply> {
        if message.get("type").and_then(Value::as_str) != Some("message") {
            return None;
        }
        let s = |k: &str| message.get(k).and_then(Value::as_str).map(str::to_string);
        let usage = (message.get("usage"))
            .filter(|u| u.is_object())
            .cloned()
            .unwrap_or_else(|| json!({}));
        let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
        Some(Reply {
            id: s("id").unwrap_or_default(),
            model: s("model").unwrap_or_default(),
            content: message.get("content")?.as_array()?.clone(),
            stop_reason: s("stop_reason").unwrap_or_else(|| "end_turn".into()),
            input_tokens: n("input_tokens"),
            output_tokens: n("output_tokens"),
            stop_sequence: message.get("stop_sequence").cloned().unwrap_or(Value::Null),
            recorded_usage: Some(usage),
        })
    }

    fn usage(&self) -> Value {
        if let Some(u) = &self.recorded_usage {
            return u.clone();
        }
        json!({
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": self.output_tokens,
        })
    }

    /// The non-streaming response body.
    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": self.content,
            "stop_reason": self.stop_reason,
            "stop_sequence": self.stop_sequence,
            "usage": self.usage(),
        })
    }

    /// The streaming response as SSE event texts, one string per event (each ends with a
    /// blank line). Text is cut into [`TEXT_PIECE`]-character deltas and tool inputs into
    /// [`JSON_PIECE`]-character `input_json_delta`s.
    pub fn to_sse_events(&self) -> Vec<String> {
        let mut ev = Vec::new();
        let mut start_usage = self.usage();
        start_usage["output_tokens"] = json!(1);
        ev.push(sse(
            "message_start",
            &json!({"type":"message_start","message":{
                "id": self.id, "type":"message", "role":"assistant", "model": self.model,
                "content": [], "stop_reason": null, "stop_sequence": null, "usage": start_usage}}),
        ));
        ev.push(sse("ping", &json!({"type":"ping"})));
        for (i, block) in self.content.iter().enumerate() {
            let ty = block.get("type").and_then(Value::as_str).unwrap_or("text");
            let (start, deltas) = match ty {
                "text" => {
                    let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                    let mut d = pieces(text, TEXT_PIECE)
                        .into_iter()
                        .map(|p| json!({"type":"text_delta","text":p}))
                        .collect::<Vec<_>>();
                    // Citations stream as one `citations_delta` each after the text (the
                    // Messages API's streaming reference); a block without any has none.
                    match block.get("citations").and_then(Value::as_array) {
                        Some(cites) if !cites.is_empty() => {
                            d.extend(
                                cites
                                    .iter()
                                    .map(|c| json!({"type":"citations_delta","citation":c})),
                            );
                            (json!({"type":"text","text":"","citations":[]}), d)
                        }
                        _ => (json!({"type":"text","text":""}), d),
                    }
                }
                "tool_use" | "server_tool_use" => {
                    let input = block.get("input").cloned().unwrap_or(json!({}));
                    let s = serde_json::to_string(&input).unwrap_or_default();
                    let d = pieces(&s, JSON_PIECE)
                        .into_iter()
                        .map(|p| json!({"type":"input_json_delta","partial_json":p}))
                        .collect::<Vec<_>>();
                    let mut start = block.clone();
                    start["input"] = json!({});
                    (start, d)
                }
                "thinking" => {
                    let t = block.get("thinking").and_then(Value::as_str).unwrap_or("");
                    let mut d: Vec<Value> = pieces(t, TEXT_PIECE)
                        .into_iter()
                        .map(|p| json!({"type":"thinking_delta","thinking":p}))
                        .collect();
                    let sig = block.get("signature").and_then(Value::as_str).unwrap_or("");
                    d.push(json!({"type":"signature_delta","signature":sig}));
                    (json!({"type":"thinking","thinking":"","signature":""}), d)
                }
                _ => (block.clone(), Vec::new()),
            };
            ev.push(sse(
                "content_block_start",
                &json!({"type":"content_block_start","index":i,"content_block":start}),
            ));
            for d in deltas {
                ev.push(sse(
                    "content_block_delta",
                    &json!({"type":"content_block_delta","index":i,"delta":d}),
                ));
            }
            ev.push(sse(
                "content_block_stop",
                &json!({"type":"content_block_stop","index":i}),
            ));
        }
        ev.push(sse(
            "message_delta",
            &json!({"type":"message_delta",
                    "delta":{"stop_reason": self.stop_reason, "stop_sequence": self.stop_sequence},
                    "usage":{"output_tokens": self.output_tokens}}),
        ));
        ev.push(sse("message_stop", &json!({"type":"message_stop"})));
        ev
    }
}

/// One SSE event text.
pub fn sse(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

/// Split `s` into pieces of at most `n` characters (never inside a UTF-8 character).
fn pieces(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    chars.chunks(n).map(|c| c.iter().collect()).collect()
}

/// The API's error type for an HTTP status (Messages API reference, "HTTP errors").
pub fn error_type_for(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        408 => "timeout_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 => "timeout_error",
        // agentwire answers 503 when it is overloaded (trace unwritable, body budget used
        // up): the same retryable error type as the API's 529.
        503 | 529 => "overloaded_error",
        _ => "api_error",
    }
}

/// An API error body.
pub fn error_body(error_type: &str, message: &str, request_id: &str) -> Value {
    json!({"type":"error","error":{"type":error_type,"message":message},"request_id":request_id})
}

/// Answer with the API's error JSON ([`error_body`]) and record the exchange with an
/// error kind.
pub(crate) fn error_response(
    draft: Draft,
    status: u16,
    msg: &str,
    rid: &str,
    kind: &str,
) -> Response {
    // The message may quote the request (method, path, an upstream's error naming the
    // URL): the reply body is recorded, and bodies are not redacted on write.
    let msg = crate::trace::redact::redact_text(msg);
    let body = error_body(error_type_for(status), &msg, rid);
    let err = ExchangeError {
        kind: kind.into(),
        message: msg,
    };
    respond_json(draft, status, &body, rid, Some(err))
}

/// Answer with an OpenAI error body (`{"error":{"message","type","code"}}`, the
/// Responses API's) and record the exchange with error `kind`.
pub(crate) fn openai_error_response(
    draft: Draft,
    status: u16,
    msg: &str,
    rid: &str,
    kind: &str,
) -> Response {
    let msg = crate::trace::redact::redact_text(msg);
    let body = crate::api::responses::events::error_body(
        &msg,
        crate::api::responses::events::error_type_for(status),
        Some(kind),
    );
    let err = ExchangeError {
        kind: kind.into(),
        message: msg,
    };
    respond_json(draft, status, &body, rid, Some(err))
}

/// Answer `status` with the JSON `body` (and the request id `rid`) and record the exchange,
/// with `error` when it failed.
pub(crate) fn respond_json(
    draft: Draft,
    status: u16,
    body: &Value,
    rid: &str,
    error: Option<ExchangeError>,
) -> Response {
    let bytes = Bytes::from(serde_json::to_vec(body).unwrap_or_default());
    let headers: Headers = vec![
        ("content-type".into(), "application/json".into()),
        ("request-id".into(), rid.to_string()),
    ]
    .into();
    let response = HttpResponse {
        status,
        version: "HTTP/1.1".into(),
        headers: headers.clone(),
        body: Body::new(bytes.to_vec()),
        chunks: vec![(draft.elapsed_us(), bytes.len() as u64)],
        first_byte_at: Some(Utc::now()),
    };
    draft.finish(Some(response), error);
    let mut r = plain(
        StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
        bytes,
        "application/json",
    );
    if let Ok(v) = HeaderValue::from_str(rid) {
        r.headers_mut().insert("request-id", v);
    }
    r
}

/// A response of `status` with `body` of content type `ct`; nothing is recorded.
pub(crate) fn plain(status: StatusCode, body: Bytes, ct: &'static str) -> Response {
    let mut r = Response::new(AxumBody::from(body));
    *r.status_mut() = status;
    r.headers_mut()
        .insert("content-type", HeaderValue::from_static(ct));
    r
}

/// A 200 event-stream answer: `headers` (agentwire's own, valid header values) as its head,
/// `source`'s events as its body, each recorded in `draft` as it is sent. Built without a
/// builder, so no builder error can turn into an empty 200.
pub(crate) fn scripted_stream(draft: Draft, headers: Headers, source: ScriptedEvents) -> Response {
    let mut head = axum::http::HeaderMap::new();
    for (k, v) in &headers {
        if let (Ok(k), Ok(v)) = (
            axum::http::HeaderName::from_bytes(k.as_bytes()),
            axum::http::HeaderValue::from_str(v),
        ) {
            head.append(k, v);
        }
    }
    let stream = RecordingStream::new(draft, 200, headers, source);
    let mut r = Response::new(AxumBody::from_stream(stream));
    *r.status_mut() = axum::http::StatusCode::OK;
    *r.headers_mut() = head;
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::{sse::assemble, BlockKind};

    #[test]
    fn sse_round_trips_through_the_assembler() {
        let content = vec![
            json!({"type":"text","text":"Starting the job — now."}),
            json!({"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"sleep 4; echo done","run_in_background":true}}),
        ];
        let r = Reply::new("msg_1".into(), "m".into(), content, 400);
        let events = r.to_sse_events();
        // 1 start + ping + (start + 3 text deltas + stop) + (start + N json deltas + stop) + delta + stop
        let json_len = serde_json::to_string(&r.content[1]["input"]).unwrap().len();
        let n_json = json_len.div_ceil(JSON_PIECE);
        assert_eq!(events.len(), 2 + 5 + (2 + n_json) + 2);
        assert!(n_json > 1, "tool input must be sent in several pieces");
        let m = assemble(events.concat().as_bytes());
        assert!(m.complete);
        assert_eq!(m.stop_reason.as_deref(), Some("tool_use"));
        assert_eq!(m.content[0].text(), Some("Starting the job — now."));
        match &m.content[1].kind {
            BlockKind::ToolUse { input, .. } => assert_eq!(input["run_in_background"], true),
            k => panic!("{k:?}"),
        }
        assert_eq!(m.usage.input_tokens, Some(100));
        assert_eq!(m.pings, 1);
    }

    #[test]
    fn a_recorded_message_streams_back_to_the_same_message() {
        let message = json!({"id":"msg_rec","type":"message","role":"assistant","model":"claude-x",
            "content":[{"type":"thinking","thinking":"hmm","signature":"sig"},
                       {"type":"text","text":"Running it — now."},
                       // Found by a second adversarial round: citations were dropped.
                       {"type":"text","text":"As the docs say.","citations":[
                           {"type":"char_location","cited_text":"say","document_index":0,
                            "document_title":"d","start_char_index":1,"end_char_index":4}]},
                       {"type":"tool_use","id":"toolu_9","name":"Bash","input":{"command":"make -j4 all"}}],
            "stop_reason":"tool_use","stop_sequence":null,
            "usage":{"input_tokens":7,"cache_creation_input_tokens":100,"cache_read_input_tokens":2000,"output_tokens":42}});
        let events = Reply::from_message(&message).unwrap().to_sse_events();
        let back = crate::api::sse::assemble_message(events.concat().as_bytes()).unwrap();
        assert_eq!(back, message);
        assert!(Reply::from_message(&json!({"type":"error"})).is_none());
    }
}
