//! Canonical assistant content written as an OpenAI Responses answer: the output items,
//! the final `response` object, and the streamed events that build it (what agentwire's
//! fake server sends on `POST …/responses` and on the Responses WebSocket).
//!
//! Sources: OpenAI API reference, "Create a model response" (the response object:
//! `id`, `object`, `created_at`, `status`, `model`, `output`, `usage`) and "Streaming
//! events" (every event has `type` and `sequence_number`). The event sequence is the one
//! Codex 0.165.0 and 0.171.0 accepted (measured 2026-12-01): `response.created`,
//! `response.in_progress`, per item `response.output_item.added`, its parts and deltas
//! (`response.content_part.added`, `response.output_text.delta`/`.done`,
//! `response.content_part.done`; `response.function_call_arguments.delta`/`.done`;
//! `response.custom_tool_call_input.delta`/`.done`), `response.output_item.done`, then
//! `response.completed`.
//!
//! Mapping of content blocks (Messages shape, as scenario files write them) to items:
//! `text` → a `message` item with one `output_text` part; `tool_use` whose `input` is an
//! object → `function_call` (`arguments` = its compact JSON); `tool_use` whose `input` is
//! a string → `custom_tool_call` (that `input`, e.g. the JavaScript of Codex's code-mode
//! `exec`); `thinking` → a `reasoning` item (its text as a summary, `signature` as
//! `encrypted_content`). The block's `id` is the call's `call_id` (else one is made up) and
//! a `namespace` is kept. A block already in Responses shape (any other `type`) is an item
//! as it is.

use serde_json::{json, Value};

/// Characters per `response.output_text.delta`.
pub const TEXT_PIECE: usize = 8;
/// Characters per `response.function_call_arguments.delta` or
/// `response.custom_tool_call_input.delta`.
pub const ARGS_PIECE: usize = 16;

/// A Responses answer before it is encoded: the response's id, model and output items.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// Response id (`resp_…`).
    pub id: String,
    /// Model to echo.
    pub model: String,
    /// Output items in order (`message`, `function_call`, `custom_tool_call`, …).
    pub output: Vec<Value>,
    /// The `usage` object of the final response (`None`: JSON null).
    pub usage: Option<Value>,
    /// `created_at`, seconds since the Unix epoch.
    pub created_at: i64,
    /// The `previous_response_id` the request continued, echoed.
    pub previous_response_id: Option<String>,
}

impl Answer {
    /// The answer whose output items are `content` ([`items_of`]), ids made from `id`.
    pub fn new(id: String, model: String, content: &[Value]) -> Answer {
        let output = items_of(&id, content);
        Answer {
            id,
            model,
            output,
            usage: None,
            created_at: chrono::Utc::now().timestamp(),
            previous_response_id: None,
        }
    }

    /// The answer a recorded `response` object holds (id, model, output, usage), so that
    /// [`Answer::events`] emits it as the stream the API would have sent; `None` when `v`
    /// is no response object (no `output` array).
    pub fn from_response(v: &Value) -> Option<Answer> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        Some(Answer {
            id: s("id").unwrap_or_default(),
            model: s("model").unwrap_or_default(),
            output: v.get("output")?.as_array()?.clone(),
            usage: v.get("usage").filter(|u| !u.is_null()).cloned(),
            created_at: v.get("created_at").and_then(Value::as_i64).unwrap_or(0),
            previous_response_id: s("previous_response_id"),
        })
    }

    /// The response object with `status` (`in_progress`: no output, usage null yet).
    pub fn response(&self, status: &str) -> Value {
        let done = status != "in_progress";
        json!({
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "model": self.model,
            "output": if done { Value::Array(self.output.clone()) } else { json!([]) },
            "usage": if done { self.usage.clone().unwrap_or(Value::Null) } else { Value::Null },
            "previous_response_id": self.previous_response_id,
        })
    }

    /// The streamed events, each with its `sequence_number`: created, in progress, each
    /// item's events, completed.
    pub fn events(&self) -> Vec<Value> {
        let mut ev = Events::default();
        ev.push(json!({"type": "response.created", "response": self.response("in_progress")}));
        ev.push(json!({"type": "response.in_progress", "response": self.response("in_progress")}));
        for (i, item) in self.output.iter().enumerate() {
            item_events(&mut ev, i, item);
        }
        ev.push(json!({"type": "response.completed", "response": self.response("completed")}));
        ev.0
    }
}

/// Events being numbered.
#[derive(Default)]
struct Events(Vec<Value>);

impl Events {
    fn push(&mut self, mut v: Value) {
        v["sequence_number"] = json!(self.0.len());
        self.0.push(v);
    }
}

/// The events of output item `item` at `output_index` `i`: added (the item without its
/// text), its parts and deltas, done (the whole item).
fn item_events(ev: &mut Events, i: usize, item: &Value) {
    let ty = item.get("type").and_then(Value::as_str).unwrap_or("");
    let item_id = item.get("id").cloned().unwrap_or(Value::Null);
    let mut added = item.clone();
    added["status"] = json!("in_progress");
    match ty {
        "message" => added["content"] = json!([]),
        "function_call" => added["arguments"] = json!(""),
        "custom_tool_call" => added["input"] = json!(""),
        _ => {}
    }
    ev.push(json!({"type": "response.output_item.added", "output_index": i, "item": added}));
    let at = json!({"item_id": item_id, "output_index": i});
    match ty {
        "message" => message_events(ev, &at, item),
        "function_call" => {
            let args = item.get("arguments").and_then(Value::as_str).unwrap_or("");
            delta_events(
                ev,
                &at,
                "response.function_call_arguments",
                "arguments",
                args,
            );
        }
        "custom_tool_call" => {
            let input = item.get("input").and_then(Value::as_str).unwrap_or("");
            delta_events(ev, &at, "response.custom_tool_call_input", "input", input);
        }
        _ => {}
    }
    ev.push(json!({"type": "response.output_item.done", "output_index": i, "item": item}));
}

/// `base` with the members of `more` added.
fn with(base: &Value, more: Value) -> Value {
    let mut out = base.clone();
    if let (Value::Object(o), Value::Object(m)) = (&mut out, more) {
        o.extend(m);
    }
    out
}

/// A message item's parts: each `output_text` part added, its text in deltas, done.
fn message_events(ev: &mut Events, at: &Value, item: &Value) {
    let parts = item.get("content").and_then(Value::as_array);
    for (ci, part) in parts.into_iter().flatten().enumerate() {
        let text = part.get("text").and_then(Value::as_str).unwrap_or("");
        let mut empty = part.clone();
        if empty.get("text").is_some() {
            empty["text"] = json!("");
        }
        let at = with(at, json!({"content_index": ci}));
        ev.push(with(
            &at,
            json!({"type": "response.content_part.added", "part": empty}),
        ));
        for piece in pieces(text, TEXT_PIECE) {
            ev.push(with(
                &at,
                json!({"type": "response.output_text.delta", "delta": piece, "logprobs": []}),
            ));
        }
        ev.push(with(
            &at,
            json!({"type": "response.output_text.done", "text": text, "logprobs": []}),
        ));
        ev.push(with(
            &at,
            json!({"type": "response.content_part.done", "part": part}),
        ));
    }
}

/// `PREFIX.delta` events carrying `text` in pieces, then `PREFIX.done` with `key`.
fn delta_events(ev: &mut Events, at: &Value, prefix: &str, key: &str, text: &str) {
    for piece in pieces(text, ARGS_PIECE) {
        ev.push(with(
            at,
            json!({"type": format!("{prefix}.delta"), "delta": piece}),
        ));
    }
    ev.push(with(
        at,
        json!({"type": format!("{prefix}.done"), key: text}),
    ));
}

/// Split `s` into pieces of at most `n` characters (never inside a UTF-8 character).
fn pieces(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    chars.chunks(n).map(|c| c.iter().collect()).collect()
}

/// The output items of content blocks (the mapping in the module doc); item ids are the
/// response id's suffix after `resp_` with a per-item prefix (`msg_`, `fc_`, `ctc_`,
/// `rs_`) and the block's position.
pub fn items_of(response_id: &str, content: &[Value]) -> Vec<Value> {
    let tail = response_id.strip_prefix("resp_").unwrap_or(response_id);
    content
        .iter()
        .enumerate()
        .map(|(i, b)| item_of(b, &format!("{tail}_{i}")))
        .collect()
}

/// One block as an output item; `tail` makes its ids unique.
fn item_of(block: &Value, tail: &str) -> Value {
    let s = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or("");
    let call_id = match s("id") {
        "" => format!("call_{tail}"),
        id => id.to_string(),
    };
    let mut item = match s("type") {
        "text" => json!({"id": format!("msg_{tail}"), "type": "message", "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": s("text"), "annotations": []}]}),
        "tool_use" => match block.get("input") {
            Some(Value::String(input)) => json!({"id": format!("ctc_{tail}"),
                "type": "custom_tool_call", "status": "completed", "name": s("name"),
                "call_id": call_id, "input": input}),
            input => json!({"id": format!("fc_{tail}"), "type": "function_call",
                "status": "completed", "name": s("name"), "call_id": call_id,
                "arguments": serde_json::to_string(input.unwrap_or(&json!({}))).unwrap_or_default()}),
        },
        "thinking" => {
            let summary = match s("thinking") {
                "" => json!([]),
                t => json!([{"type": "summary_text", "text": t}]),
            };
            let mut r =
                json!({"id": format!("rs_{tail}"), "type": "reasoning", "summary": summary});
            if !s("signature").is_empty() {
                r["encrypted_content"] = json!(s("signature"));
            }
            r
        }
        _ => return block.clone(),
    };
    if let Some(ns) = block.get("namespace") {
        item["namespace"] = ns.clone();
    }
    item
}

/// A Responses `usage` object: `input` tokens of which `cached` were read from the
/// cache, `output` tokens of which `reasoning` were reasoning.
pub fn usage(input: u64, cached: u64, output: u64, reasoning: u64) -> Value {
    json!({
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": input + output,
    })
}

/// The OpenAI error type for an HTTP status (OpenAI API reference, "Error codes").
pub fn error_type_for(status: u16) -> &'static str {
    match status {
        400 | 404 | 409 | 413 | 422 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        429 => "rate_limit_exceeded",
        _ => "server_error",
    }
}

/// An OpenAI error body: `{"error":{"message","type","code","param"}}`.
pub fn error_body(message: &str, error_type: &str, code: Option<&str>) -> Value {
    json!({"error": {"message": message, "type": error_type, "code": code, "param": null}})
}

/// A Responses WebSocket error message: `{"type":"error","status":S,"error":{…}}`, the
/// shape the API sends for `previous_response_not_found` (OpenAI "WebSocket mode").
pub fn websocket_error(status: u16, message: &str, code: &str, param: Option<&str>) -> Value {
    json!({"type": "error", "status": status, "error": {
        "type": error_type_for(status), "code": code, "message": message, "param": param}})
}

/// The events a failed stream ends with: an `error` event (`code`, `message`) and
/// `response.failed` with the response's error, numbered from `sequence`.
pub fn failure_events(answer: &Answer, sequence: usize, code: &str, message: &str) -> Vec<Value> {
    let mut failed = answer.response("failed");
    failed["output"] = json!([]);
    failed["error"] = json!({"code": code, "message": message});
    vec![
        json!({"type": "error", "code": code, "message": message, "param": null,
               "sequence_number": sequence}),
        json!({"type": "response.failed", "response": failed, "sequence_number": sequence + 1}),
    ]
}

/// One SSE event text for event object `v` (`event: TYPE`, `data: JSON`, blank line).
pub fn sse(v: &Value) -> String {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("message");
    format!("event: {ty}\ndata: {v}\n\n")
}

#[cfg(test)]
mod tests {
    use super::super::stream::{assemble_messages, assemble_sse, from_json};
    use super::*;
    use crate::api::BlockKind;

    fn content() -> Vec<Value> {
        vec![
            json!({"type": "text", "text": "Starting the job — now."}),
            json!({"type": "tool_use", "id": "call_1", "name": "exec_command",
                   "input": {"cmd": "sleep 6; echo done", "yield_time_ms": 500}}),
            json!({"type": "tool_use", "name": "exec", "input": "const r = await tools.exec_command({cmd: \"ls\"});\ntext(r);"}),
        ]
    }

    #[test]
    fn events_assemble_to_the_content_over_sse_and_messages() {
        let mut a = Answer::new("resp_agentwire_000001".into(), "gpt-5.5".into(), &content());
        a.usage = Some(usage(1200, 1024, 12, 0));
        let events = a.events();
        let seq: Vec<u64> = events
            .iter()
            .map(|e| e["sequence_number"].as_u64().unwrap())
            .collect();
        assert_eq!(seq, (0..events.len() as u64).collect::<Vec<_>>());
        assert!(events
            .iter()
            .any(|e| e["type"] == "response.output_text.delta"));
        let body: String = events.iter().map(sse).collect();
        let lines: String = events.iter().map(|e| format!("{e}\n")).collect();
        for m in [
            assemble_sse(body.as_bytes()),
            assemble_messages(lines.as_bytes()),
        ] {
            assert!(m.complete, "{:?}", m.stream_problems);
            assert_eq!(m.id.as_deref(), Some("resp_agentwire_000001"));
            assert_eq!(m.content[0].text(), Some("Starting the job — now."));
            match &m.content[1].kind {
                BlockKind::ToolUse { id, name, input } => {
                    assert_eq!((id.as_str(), name.as_str()), ("call_1", "exec_command"));
                    assert_eq!(input["yield_time_ms"], 500);
                }
                k => panic!("{k:?}"),
            }
            match &m.content[2].kind {
                BlockKind::ToolUse { id, input, .. } => {
                    assert_eq!(id, "call_agentwire_000001_2");
                    assert!(input.as_str().unwrap().starts_with("const r"));
                }
                k => panic!("{k:?}"),
            }
            assert_eq!(m.usage.cache_read_input_tokens, Some(1024));
        }
        assert_eq!(
            a.output[1]["arguments"],
            r#"{"cmd":"sleep 6; echo done","yield_time_ms":500}"#
        );
        assert_eq!(a.output[2]["type"], "custom_tool_call");
        let back = Answer::from_response(&a.response("completed")).unwrap();
        assert_eq!(back.output, a.output);
        assert_eq!(from_json(&a.response("completed")).content.len(), 3);
    }

    #[test]
    fn a_failed_stream_is_incomplete_with_its_error() {
        let a = Answer::new("resp_x".into(), "m".into(), &[]);
        let mut events = a.events();
        events.truncate(2);
        events.extend(failure_events(&a, 2, "server_error", "boom"));
        let body: String = events.iter().map(sse).collect();
        let m = assemble_sse(body.as_bytes());
        assert!(!m.complete);
        assert_eq!(m.stop_reason.as_deref(), Some("failed"));
        assert_eq!(
            error_body("x", "server_error", None)["error"]["code"],
            Value::Null
        );
    }
}
