//! A Responses API response assembled into the canonical response message, from an SSE
//! stream (`POST /v1/responses` with `stream: true`), from the server's messages on a
//! Responses WebSocket (the same event objects, one per message, no `event:` line), or
//! from one JSON `response` object.
//!
//! Events (source: OpenAI API reference, "Streaming events"; every event carries `type`
//! and `sequence_number`): `response.created` / `response.in_progress` /
//! `response.queued` (the response object so far), `response.output_item.added` /
//! `.done` (an output item, by `output_index`), `response.content_part.added` / `.done`,
//! `response.output_text.delta` / `.done`, `response.function_call_arguments.delta` /
//! `.done`, `response.custom_tool_call_input.delta` / `.done`, reasoning summary deltas,
//! and one of `response.completed`, `response.incomplete`, `response.failed` with the
//! final response object (its `output` and `usage`); `error` carries an API error. An
//! item's `.done` event and the final response's `output` are authoritative: the deltas
//! only fill what a cut stream never finished.
//!
//! Mapping: each output item becomes a block as in the request ([`super::items`]); a
//! `message` item gives one text block per `output_text` part. `stop_reason` is the
//! response's `status` (`completed`, `incomplete`, `failed`, `cancelled`), with
//! `incomplete_details.reason` after a colon when the API gives one.

use std::collections::BTreeMap;

use serde_json::Value;

use super::super::content::{Block, BlockKind};
use super::super::response::ResponseMessage;
use super::super::span::Span;
use super::super::sse::SseEvent;
use super::super::usage::{Usage, RESPONSES_USAGE};
use super::items::{is_message, item_block, part_block};

/// The most output items a response may name (`output_index`); an index past it is a bad
/// event, not a reason to keep that many slots (the index is an untrusted number).
pub const MAX_OUTPUT_INDEX: u64 = 4096;

/// Builds the final response from a stream of Responses events.
#[derive(Default)]
pub struct ResponsesAssembler {
    /// The response object as last reported (`response.created` … final event).
    response: serde_json::Map<String, Value>,
    /// Output items by `output_index`, as last reported or built from deltas.
    items: BTreeMap<u64, Value>,
    /// Whether an item's `.done` event arrived (then its deltas are not applied again).
    done: BTreeMap<u64, bool>,
    /// The final event's type (`response.completed`, `response.incomplete`,
    /// `response.failed`), once seen.
    terminal: Option<String>,
    errors: Vec<Value>,
    unknown: Vec<(String, Value)>,
    malformed: usize,
    problems: Vec<String>,
}

impl ResponsesAssembler {
    /// A new assembler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Apply one SSE event (its `data`; the `event:` line, when present, names the same
    /// type as the data's `type`).
    pub fn push_sse(&mut self, ev: &SseEvent) {
        match serde_json::from_str::<Value>(&ev.data) {
            Ok(v) => self.push(v, ev.event.as_deref(), ev.offset),
            Err(_) => {
                self.malformed += 1;
                self.problems.push(format!(
                    "stream event at byte {} is not JSON; it was skipped",
                    ev.offset
                ));
            }
        }
    }

    /// Apply one WebSocket server message (its payload text), found at byte `offset` of
    /// the exchange's response body.
    pub fn push_message(&mut self, payload: &[u8], offset: u64) {
        match serde_json::from_slice::<Value>(payload) {
            Ok(v) => self.push(v, None, offset),
            Err(_) => {
                self.malformed += 1;
                self.problems.push(format!(
                    "server message at byte {offset} is not JSON; it was kept raw and skipped"
                ));
            }
        }
    }

    /// Apply one event object.
    pub fn push(&mut self, v: Value, event: Option<&str>, offset: u64) {
        let ty = v
            .get("type")
            .and_then(Value::as_str)
            .or(event)
            .unwrap_or("")
            .to_string();
        let index = v.get("output_index").and_then(Value::as_u64);
        if index.is_some_and(|i| i > MAX_OUTPUT_INDEX) {
            self.problems.push(format!(
                "stream event at byte {offset}: `{ty}` names output item {} (more than {MAX_OUTPUT_INDEX}); the event was skipped",
                index.unwrap_or(0)
            ));
            return;
        }
        match ty.as_str() {
            "response.created" | "response.in_progress" | "response.queued" => {
                self.take_response(&v)
            }
            "response.completed"
            | "response.incomplete"
            | "response.failed"
            | "response.cancelled" => {
                self.take_response(&v);
                self.terminal = Some(ty);
            }
            "response.output_item.added" | "response.output_item.done" => {
                if let (Some(i), Some(item)) = (index, v.get("item")) {
                    self.items.insert(i, item.clone());
                    if ty.ends_with(".done") {
                        self.done.insert(i, true);
                    }
                }
            }
            "error" => self.errors.push(v.get("error").cloned().unwrap_or(v)),
            t if t.ends_with(".delta") || t.ends_with(".done") || t.ends_with(".added") => {
                self.apply_part(t, index, &v)
            }
            _ => self.unknown.push((ty, v)),
        }
    }

    /// The `response` object of a response-level event.
    fn take_response(&mut self, v: &Value) {
        if let Some(Value::Object(r)) = v.get("response") {
            for (k, val) in r {
                self.response.insert(k.clone(), val.clone());
            }
        }
    }

    /// A delta or part event of an item still being built.
    fn apply_part(&mut self, ty: &str, index: Option<u64>, v: &Value) {
        let Some(i) = index else {
            self.unknown.push((ty.to_string(), v.clone()));
            return;
        };
        if self.done.get(&i).copied().unwrap_or(false) {
            return;
        }
        let item = self
            .items
            .entry(i)
            .or_insert_with(|| Value::Object(Default::default()));
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
        match ty {
            "response.output_text.delta" => append_text(item, v, s("delta")),
            "response.function_call_arguments.delta" => append(item, "arguments", s("delta")),
            "response.custom_tool_call_input.delta" => append(item, "input", s("delta")),
            "response.function_call_arguments.done" => set(item, "arguments", s("arguments")),
            "response.custom_tool_call_input.done" => set(item, "input", s("input")),
            // Part boundaries and summaries: the item's `.done` brings the whole text.
            "response.content_part.added"
            | "response.content_part.done"
            | "response.output_text.done"
            | "response.reasoning_summary_part.added"
            | "response.reasoning_summary_part.done"
            | "response.reasoning_summary_text.delta"
            | "response.reasoning_summary_text.done"
            | "response.reasoning_text.delta"
            | "response.reasoning_text.done" => {}
            _ => self.unknown.push((ty.to_string(), v.clone())),
        }
    }

    /// The response assembled so far. `complete` is true only after
    /// `response.completed` with no `error` event.
    pub fn finish(self) -> ResponseMessage {
        self.finish_with_items().0
    }

    /// [`ResponsesAssembler::finish`], and the output items as the API sent them (what a
    /// later request continuing from this response carries: [`super::chain`]).
    pub fn finish_with_items(self) -> (ResponseMessage, Vec<Value>) {
        let r = Value::Object(self.response);
        let final_output = r
            .get("output")
            .and_then(Value::as_array)
            .filter(|o| !o.is_empty());
        let items: Vec<Value> = match final_output {
            Some(o) => o.clone(),
            None => self.items.into_values().collect(),
        };
        let mut msg = message_of(&r, &items);
        if self.terminal.is_none() {
            // The status of `response.created` is not how the response ended.
            msg.stop_reason = None;
        }
        msg.streamed = true;
        msg.complete =
            self.terminal.as_deref() == Some("response.completed") && self.errors.is_empty();
        if let Some(t) = &self.terminal {
            if t != "response.completed" {
                msg.stream_errors
                    .push(r.get("error").cloned().unwrap_or_else(
                        || serde_json::json!({"type": t, "message": r.get("incomplete_details")}),
                    ));
            }
        }
        msg.stream_errors.extend(self.errors);
        msg.unknown_events = self.unknown;
        msg.malformed_events = self.malformed;
        msg.stream_problems = self.problems;
        (msg.with_usage_problems(), items)
    }
}

/// The canonical message of a response object and its output items.
fn message_of(r: &Value, items: &[Value]) -> ResponseMessage {
    let s = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_string);
    let reason = r
        .pointer("/incomplete_details/reason")
        .and_then(Value::as_str);
    let stop = s("status").map(|st| match reason {
        Some(why) => format!("{st}:{why}"),
        None => st,
    });
    ResponseMessage {
        id: s("id"),
        model: s("model"),
        content: items.iter().flat_map(output_blocks).collect(),
        stop_reason: stop,
        usage: r
            .get("usage")
            .filter(|u| !u.is_null())
            .map(|u| Usage::from_openai(u, &RESPONSES_USAGE))
            .unwrap_or_default(),
        complete: true,
        ..ResponseMessage::default()
    }
}

/// The blocks of one output item.
fn output_blocks(item: &Value) -> Vec<Block> {
    if is_message(item) {
        return item
            .get("content")
            .and_then(Value::as_array)
            .map(|parts| {
                parts
                    .iter()
                    .map(|p| part_block(p.clone(), Span::default()))
                    .collect()
            })
            .unwrap_or_default();
    }
    vec![item_block(item.clone(), Span::default())]
}

/// A non-streaming Responses body (one `response` object) as the canonical message.
pub fn from_json(v: &Value) -> ResponseMessage {
    let items = v
        .get("output")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    message_of(v, &items).with_usage_problems()
}

/// Assemble a whole SSE body of Responses events.
pub fn assemble_sse(body: &[u8]) -> ResponseMessage {
    assembler_of_sse(body).finish()
}

/// An assembler fed a whole SSE body.
pub fn assembler_of_sse(body: &[u8]) -> ResponsesAssembler {
    let mut a = ResponsesAssembler::new();
    for ev in super::super::sse::parse_events(body) {
        a.push_sse(&ev);
    }
    a
}

/// Assemble a WebSocket exchange's response body (the server's messages, one per line;
/// see [`crate::trace::websocket`]).
pub fn assemble_messages(body: &[u8]) -> ResponseMessage {
    assembler_of_messages(body).finish()
}

/// An assembler fed a WebSocket exchange's response body.
pub fn assembler_of_messages(body: &[u8]) -> ResponsesAssembler {
    let mut a = ResponsesAssembler::new();
    let mut offset = 0u64;
    for line in body.split_inclusive(|&b| b == b'\n') {
        let payload = line.strip_suffix(b"\n").unwrap_or(line);
        if !payload.is_empty() {
            a.push_message(payload, offset);
        }
        offset += line.len() as u64;
    }
    a
}

/// The texts of a message item's `output_text` parts appended to by a delta: the part
/// at `content_index`, created when missing.
fn append_text(item: &mut Value, v: &Value, piece: &str) {
    let ci = v.get("content_index").and_then(Value::as_u64).unwrap_or(0) as usize;
    let Value::Object(o) = item else { return };
    o.entry("type").or_insert_with(|| "message".into());
    o.entry("role").or_insert_with(|| "assistant".into());
    let content = o
        .entry("content")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(parts) = content else { return };
    if ci > parts.len() + 64 {
        return;
    }
    while parts.len() <= ci {
        parts.push(serde_json::json!({"type": "output_text", "text": ""}));
    }
    append(&mut parts[ci], "text", piece);
}

fn append(item: &mut Value, key: &str, piece: &str) {
    if let Value::Object(o) = item {
        let cur = o.entry(key).or_insert(Value::String(String::new()));
        if let Value::String(s) = cur {
            s.push_str(piece);
        }
    }
}

fn set(item: &mut Value, key: &str, text: &str) {
    if let Value::Object(o) = item {
        o.insert(key.into(), Value::String(text.to_string()));
    }
}

/// True when a block is a tool call (what a `tool_use` stop means in Messages terms).
pub fn has_tool_calls(m: &ResponseMessage) -> bool {
    m.content
        .iter()
        .any(|b| matches!(b.kind, BlockKind::ToolUse { .. }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sse(events: &[&str]) -> Vec<u8> {
        events
            .iter()
            .map(|e| {
                let ty: Value = serde_json::from_str(e).unwrap();
                format!("event: {}\ndata: {e}\n\n", ty["type"].as_str().unwrap())
            })
            .collect::<String>()
            .into_bytes()
    }

    const CREATED: &str = r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","model":"gpt-5.5","output":[],"usage":null}}"#;

    #[test]
    fn deltas_build_a_message_and_a_call_that_completed_confirms() {
        let body = sse(&[
            CREATED,
            r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"message","role":"assistant","content":[]}}"#,
            r#"{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"Hel"}"#,
            r#"{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"lo"}"#,
            r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","call_id":"c1","name":"exec_command","arguments":""}}"#,
            r#"{"type":"response.function_call_arguments.delta","output_index":1,"delta":"{\"cmd\":"}"#,
            r#"{"type":"response.function_call_arguments.delta","output_index":1,"delta":"\"ls\"}"}"#,
            r#"{"type":"response.completed","response":{"id":"resp_1","status":"completed","model":"gpt-5.5","output":[],"usage":{"input_tokens":1200,"input_tokens_details":{"cached_tokens":1024},"output_tokens":12}}}"#,
        ]);
        let m = assemble_sse(&body);
        assert!(m.complete && m.streamed);
        assert_eq!(m.id.as_deref(), Some("resp_1"));
        assert_eq!(m.stop_reason.as_deref(), Some("completed"));
        assert_eq!(
            m.content[0].kind,
            BlockKind::Text {
                text: "Hello".into()
            }
        );
        assert_eq!(
            m.content[1].kind,
            BlockKind::ToolUse {
                id: "c1".into(),
                name: "exec_command".into(),
                input: serde_json::json!({"cmd":"ls"})
            }
        );
        assert_eq!(m.usage.input_tokens, Some(176));
        assert_eq!(m.usage.cache_read_input_tokens, Some(1024));
        assert!(has_tool_calls(&m));
    }

    #[test]
    fn a_stream_without_completed_is_incomplete_and_keeps_what_came() {
        let body = sse(&[
            CREATED,
            r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"partial"}]}}"#,
        ]);
        let mut body = body;
        body.extend_from_slice(b"data: {not json\n\n");
        let m = assemble_sse(&body);
        assert!(!m.complete);
        assert_eq!(m.content[0].text(), Some("partial"));
        assert_eq!(m.malformed_events, 1);
        assert_eq!(
            m.usage,
            Usage::default(),
            "usage never reported: not recorded"
        );
        assert!(
            m.stream_problems[0].contains("not JSON"),
            "{:?}",
            m.stream_problems
        );
    }

    #[test]
    fn websocket_messages_and_a_failed_response_keep_the_api_error() {
        let body = format!(
            "{CREATED}\n{}\n",
            r#"{"type":"error","status":400,"error":{"code":"previous_response_not_found","message":"Previous response with id 'resp_0' not found."}}"#
        );
        let m = assemble_messages(body.as_bytes());
        assert!(!m.complete);
        assert_eq!(m.stream_errors[0]["code"], "previous_response_not_found");
        let failed = format!(
            "{}\n",
            r#"{"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"server_error","message":"boom"}}}"#
        );
        let m = assemble_messages(failed.as_bytes());
        assert_eq!(m.stop_reason.as_deref(), Some("failed"));
        assert_eq!(m.stream_errors[0]["code"], "server_error");
        let incomplete = r#"{"id":"r","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}"#;
        let m = from_json(&serde_json::from_str(incomplete).unwrap());
        assert_eq!(
            m.stop_reason.as_deref(),
            Some("incomplete:max_output_tokens")
        );
    }
}
