//! A Chat Completions answer assembled into the canonical response message: from an SSE
//! stream of `chat.completion.chunk` objects (`stream: true`), or from one
//! `chat.completion` object.
//!
//! Chunks (source: OpenAI API reference, "The chat completion chunk object"): each is a
//! `data:` line without an `event:` name, `{id, object, model, choices:[{index, delta,
//! finish_reason}], usage}`. `delta.role` opens the message, `delta.content` appends text,
//! `delta.reasoning_content` (compatible providers) appends reasoning, and
//! `delta.tool_calls[]` fragments build tool calls by their `index`: the first fragment of
//! an index carries `id`, `type` and `function.name`, later ones append to
//! `function.arguments`. `finish_reason` (`stop`, `tool_calls`, `length`,
//! `content_filter`) ends the choice; with `stream_options.include_usage` a last chunk
//! with empty `choices` carries `usage`; the stream ends with `data: [DONE]`.
//!
//! Bad input is kept and said, never fatal: a chunk that is not JSON (counted in
//! `malformed_events`), a fragment for an index no fragment opened (kept raw in
//! `unknown_events`), a stream cut before `[DONE]` (not complete), and usage no chunk
//! carried ("not recorded": the figures stay `None`, never zero).

use std::collections::BTreeMap;

use serde_json::Value;

use super::super::content::{Block, BlockKind};
use super::super::response::{ResponseBody, ResponseMessage};
use super::super::span::Span;
use super::super::sse::SseEvent;
use super::super::usage::{Usage, CHAT_USAGE};
use super::request::{arguments, content_text, tool_call_block};

/// The most tool calls a choice may open (`index`); an index past it is a bad fragment,
/// not a reason to keep that many slots (the index is an untrusted number).
pub const MAX_TOOL_INDEX: u64 = 1024;

/// A tool call being built from fragments.
#[derive(Default)]
struct Call {
    id: String,
    name: String,
    arguments: String,
}

/// Builds the final response from a stream of chunks.
#[derive(Default)]
pub struct ChatAssembler {
    id: Option<String>,
    model: Option<String>,
    text: String,
    reasoning: String,
    calls: BTreeMap<u64, Call>,
    finish: Option<String>,
    usage: Option<Value>,
    done: bool,
    errors: Vec<Value>,
    unknown: Vec<(String, Value)>,
    malformed: usize,
    problems: Vec<String>,
}

impl ChatAssembler {
    /// A new assembler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Apply one SSE event: a chunk, or `[DONE]`.
    pub fn push_sse(&mut self, ev: &SseEvent) {
        if ev.data.trim() == "[DONE]" {
            self.done = true;
            return;
        }
        match serde_json::from_str::<Value>(&ev.data) {
            Ok(v) => self.push(v, ev.offset),
            Err(_) => {
                self.malformed += 1;
                self.problems.push(format!(
                    "stream chunk at byte {} is not JSON; it was skipped",
                    ev.offset
                ));
            }
        }
    }

    /// Apply one chunk object found at byte `offset` of the body.
    pub fn push(&mut self, v: Value, offset: u64) {
        if let Some(e) = v.get("error") {
            self.errors.push(e.clone());
            return;
        }
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        self.id = self.id.take().or_else(|| s("id"));
        self.model = self.model.take().or_else(|| s("model"));
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        }
        let Some(choices) = v.get("choices").and_then(Value::as_array) else {
            if v.get("usage").is_none() {
                self.unknown.push(("chunk".into(), v.clone()));
            }
            return;
        };
        for c in choices {
            if c.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                self.unknown.push(("choice".into(), c.clone()));
                continue;
            }
            if let Some(d) = c.get("delta") {
                self.apply_delta(d, offset);
            }
            if let Some(f) = c.get("finish_reason").and_then(Value::as_str) {
                self.finish = Some(f.to_string());
            }
        }
    }

    /// One choice's `delta`.
    fn apply_delta(&mut self, d: &Value, offset: u64) {
        let s = |k: &str| d.get(k).and_then(Value::as_str).unwrap_or("");
        self.text.push_str(s("content"));
        self.reasoning.push_str(s("reasoning_content"));
        self.reasoning.push_str(s("reasoning"));
        for f in d
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.apply_fragment(f, offset);
        }
    }

    /// One tool-call fragment.
    fn apply_fragment(&mut self, f: &Value, offset: u64) {
        let index = f.get("index").and_then(Value::as_u64).unwrap_or(0);
        let id = f
            .get("id")
            .and_then(Value::as_str)
            .filter(|i| !i.is_empty());
        let func = f.get("function");
        let piece = |k: &str| func.and_then(|x| x.get(k)).and_then(Value::as_str);
        if index > MAX_TOOL_INDEX || (!self.calls.contains_key(&index) && id.is_none()) {
            self.problems.push(format!(
                "stream chunk at byte {offset}: a tool-call fragment for index {index}, which no fragment with an id opened; it was kept raw and skipped"
            ));
            self.unknown.push(("tool_call_fragment".into(), f.clone()));
            return;
        }
        let call = self.calls.entry(index).or_default();
        if let Some(id) = id {
            call.id = id.to_string();
        }
        if let Some(name) = piece("name").filter(|n| !n.is_empty()) {
            call.name = name.to_string();
        }
        call.arguments.push_str(piece("arguments").unwrap_or(""));
    }

    /// The response assembled so far: complete only after `[DONE]` with a
    /// `finish_reason` and no error.
    pub fn finish(mut self) -> ResponseMessage {
        let mut content = Vec::new();
        if !self.reasoning.is_empty() {
            content.push(thinking(std::mem::take(&mut self.reasoning)));
        }
        if !self.text.is_empty() {
            content.push(text(std::mem::take(&mut self.text)));
        }
        content.extend(self.calls.into_values().map(|c| Block {
            span: Span::default(),
            cache_control: None,
            kind: BlockKind::ToolUse {
                id: c.id,
                name: c.name,
                input: arguments(&c.arguments),
            },
        }));
        if !self.done {
            self.problems
                .push("the stream ended before `data: [DONE]`: the answer may be cut".into());
        }
        if self.usage.is_none() {
            self.problems
                .push("no chunk carried `usage`: the answer's tokens are not recorded".into());
        }
        let msg = ResponseMessage {
            id: self.id,
            model: self.model,
            content,
            complete: self.done && self.finish.is_some() && self.errors.is_empty(),
            stop_reason: self.finish,
            usage: self
                .usage
                .map(|u| Usage::from_openai(&u, &CHAT_USAGE))
                .unwrap_or_default(),
            streamed: true,
            stream_errors: self.errors,
            unknown_events: self.unknown,
            malformed_events: self.malformed,
            stream_problems: self.problems,
            ..ResponseMessage::default()
        };
        msg.with_usage_problems()
    }
}

fn text(text: String) -> Block {
    Block {
        span: Span::default(),
        cache_control: None,
        kind: BlockKind::Text { text },
    }
}

fn thinking(thinking: String) -> Block {
    Block {
        span: Span::default(),
        cache_control: None,
        kind: BlockKind::Thinking {
            thinking,
            signature: None,
        },
    }
}

/// Assemble a whole SSE body of chunks.
pub fn assemble_sse(body: &[u8]) -> ResponseMessage {
    let mut a = ChatAssembler::new();
    for ev in super::super::sse::parse_events(body) {
        a.push_sse(&ev);
    }
    a.finish()
}

/// A non-streaming `chat.completion` object as the canonical message (its first choice).
pub fn from_json(v: &Value) -> ResponseMessage {
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let choice = v.pointer("/choices/0");
    let m = choice.and_then(|c| c.get("message"));
    let mut content = Vec::new();
    if let Some(r) = m
        .and_then(|m| m.get("reasoning_content"))
        .and_then(Value::as_str)
    {
        content.push(thinking(r.to_string()));
    }
    let t = m
        .and_then(|m| m.get("content"))
        .map(content_text)
        .unwrap_or_default();
    if !t.is_empty() {
        content.push(text(t));
    }
    for c in m
        .and_then(|m| m.get("tool_calls"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        content.push(tool_call_block(c.clone(), Span::default()));
    }
    ResponseMessage {
        id: s("id"),
        model: s("model"),
        content,
        stop_reason: choice
            .and_then(|c| c.get("finish_reason"))
            .and_then(Value::as_str)
            .map(str::to_string),
        usage: v
            .get("usage")
            .filter(|u| u.is_object())
            .map(|u| Usage::from_openai(u, &CHAT_USAGE))
            .unwrap_or_default(),
        complete: true,
        ..ResponseMessage::default()
    }
    .with_usage_problems()
}

/// Interpret a Chat Completions answer (already decoded): an SSE stream of chunks, a
/// `chat.completion` object, or an OpenAI error body (`{"error":{"message","type","code"}}`).
pub fn read_body(content_type: Option<&str>, body: &[u8]) -> ResponseBody {
    let sse = super::super::sse::looks_like_event_stream(body)
        || content_type.is_some_and(crate::http::is_event_stream);
    if sse {
        return ResponseBody::Message(Box::new(assemble_sse(body)));
    }
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return ResponseBody::Other;
    };
    if let Some(e) = v.get("error").filter(|e| e.is_object()) {
        let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let kind = e.get("type").or(e.get("code")).and_then(Value::as_str);
        return ResponseBody::Error {
            error_type: kind.unwrap_or("").to_string(),
            message: s("message"),
        };
    }
    if v.get("choices").is_some() {
        return ResponseBody::Message(Box::new(from_json(&v)));
    }
    ResponseBody::Other
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sse(chunks: &[&str]) -> Vec<u8> {
        chunks
            .iter()
            .map(|c| format!("data: {c}\n\n"))
            .collect::<String>()
            .into_bytes()
    }

    const ROLE: &str = r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"fake-model","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#;
    const USAGE: &str = r#"{"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":12,"total_tokens":1212,"prompt_tokens_details":{"cached_tokens":1024},"completion_tokens_details":{"reasoning_tokens":4}}}"#;

    #[test]
    fn text_and_fragments_joined_by_index_with_usage_from_the_last_chunk() {
        let body = sse(&[
            ROLE,
            r#"{"choices":[{"index":0,"delta":{"content":"Hel"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"lo"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"jobs_get_status","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"job_id\":"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"job-1\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            USAGE,
            "[DONE]",
        ]);
        let m = assemble_sse(&body);
        assert!(m.complete && m.streamed, "{:?}", m.stream_problems);
        assert!(m.stream_problems.is_empty(), "{:?}", m.stream_problems);
        assert_eq!(m.id.as_deref(), Some("chatcmpl-1"));
        assert_eq!(m.stop_reason.as_deref(), Some("tool_calls"));
        assert_eq!(m.content[0].text(), Some("Hello"));
        assert_eq!(
            m.content[1].kind,
            BlockKind::ToolUse {
                id: "call_1".into(),
                name: "jobs_get_status".into(),
                input: serde_json::json!({"job_id":"job-1"})
            }
        );
        // prompt_tokens includes the cached ones: 1200 - 1024 = 176 uncached.
        assert_eq!(m.usage.input_tokens, Some(176));
        assert_eq!(m.usage.cache_read_input_tokens, Some(1024));
        assert_eq!(m.usage.output_tokens, Some(12));
        assert_eq!(m.usage.reasoning_output_tokens, Some(4));
    }

    #[test]
    fn bad_chunks_are_kept_said_and_counted() {
        let mut body = sse(&[
            ROLE,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"function":{"arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"partial"}}]}"#,
        ]);
        body.extend_from_slice(b"data: {not json\n\n");
        let m = assemble_sse(&body);
        assert!(!m.complete);
        assert_eq!(m.content[0].text(), Some("partial"));
        assert_eq!(m.malformed_events, 1);
        assert_eq!(m.unknown_events[0].0, "tool_call_fragment");
        assert_eq!(m.usage, Usage::default(), "never reported: not recorded");
        let p = m.stream_problems.join("\n");
        assert!(p.contains("index 3"), "{p}");
        assert!(p.contains("not JSON"), "{p}");
        assert!(p.contains("[DONE]"), "{p}");
        assert!(p.contains("not recorded"), "{p}");
    }

    #[test]
    fn a_chat_completion_object() {
        let v: Value = serde_json::from_str(r#"{"id":"chatcmpl-2","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":3}}"#).unwrap();
        let m = from_json(&v);
        assert!(m.complete && !m.streamed);
        assert_eq!(m.tool_calls().count(), 1);
        assert_eq!(m.usage.input_tokens, Some(10));
        assert_eq!(m.stop_reason.as_deref(), Some("tool_calls"));
    }
}
