//! A Gemini answer assembled into the canonical response message: an SSE stream
//! (`:streamGenerateContent?alt=sse`, one `data:` line per chunk, no `event:` names), a
//! JSON array of chunks (`:streamGenerateContent` without `alt=sse`), or one JSON
//! `GenerateContentResponse` (`:generateContent`); and Google's error body.
//!
//! Source: Gemini API reference, "Generating content" (`GenerateContentResponse`:
//! `candidates[] {content {role, parts[]}, finishReason, index}`, `promptFeedback`,
//! `usageMetadata`, `modelVersion`, `responseId`) and "Troubleshooting" (errors are
//! `{"error": {"code", "message", "status"}}`), read 2026-12-02 through the project's
//! search tool; Gemini CLI 0.61.0 completed on the shapes of `../shared/agents.md` §2.4.
//!
//! Assembly: the first candidate's parts are concatenated chunk by chunk, part by part: a
//! text part continues the previous one when both are text of the same kind (thought or
//! not), any other part is a part of its own. `stop_reason` is the last `finishReason`
//! (`STOP`, `MAX_TOKENS`, `SAFETY`, …); usage is the last `usageMetadata` sent (each chunk
//! that has it carries the figures so far). The message is complete when a
//! `finishReason` arrived and no error did. Bad input is kept and said: a chunk that is
//! not JSON is skipped and counted, a stream that ends inside a chunk or without a
//! `finishReason` is incomplete, and a stream that never reported usage has usage "not
//! recorded", never zero.

use serde_json::{Map, Value};

use super::super::response::{ResponseBody, ResponseMessage};
use super::super::span::Span;
use super::super::sse::{looks_like_event_stream, SseParser};
use super::parts::{part_block, CallIds};
use super::usage::usage_of;
use crate::http::is_event_stream;

/// Builds the final message from Gemini chunks.
#[derive(Default)]
pub struct GeminiAssembler {
    parts: Vec<Value>,
    finish: Option<String>,
    usage: Option<Value>,
    id: Option<String>,
    model: Option<String>,
    chunks: usize,
    errors: Vec<Value>,
    unknown: Vec<(String, Value)>,
    malformed: usize,
    problems: Vec<String>,
}

impl GeminiAssembler {
    /// A new assembler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Apply one chunk's text (an SSE event's `data`), found at byte `offset`.
    pub fn push_text(&mut self, data: &str, offset: u64) {
        match serde_json::from_str::<Value>(data) {
            Ok(v) => self.push(&v),
            Err(_) => {
                self.malformed += 1;
                self.problems.push(format!(
                    "stream chunk at byte {offset} is not JSON; it was kept raw and skipped"
                ));
            }
        }
    }

    /// Apply one chunk object.
    pub fn push(&mut self, v: &Value) {
        self.chunks += 1;
        if let Some(e) = v.get("error") {
            self.errors.push(e.clone());
            return;
        }
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        self.id = s("responseId").or(self.id.take());
        self.model = s("modelVersion").or(self.model.take());
        if let Some(u) = v.get("usageMetadata").filter(|u| u.is_object()) {
            self.usage = Some(u.clone());
        }
        if let Some(pf) = v
            .get("promptFeedback")
            .filter(|p| p.get("blockReason").is_some())
        {
            self.unknown.push(("promptFeedback".into(), pf.clone()));
            self.finish = pf
                .get("blockReason")
                .and_then(Value::as_str)
                .map(|r| format!("BLOCKED:{r}"));
        }
        let Some(c) = v.pointer("/candidates/0") else {
            return;
        };
        if let Some(r) = c.get("finishReason").and_then(Value::as_str) {
            self.finish = Some(r.to_string());
        }
        let parts = c.pointer("/content/parts").and_then(Value::as_array);
        for p in parts.into_iter().flatten() {
            self.add_part(p);
        }
    }

    /// Concatenate one part onto what came before (see the module header).
    fn add_part(&mut self, p: &Value) {
        let text = p.get("text").and_then(Value::as_str);
        let thought = p.get("thought").and_then(Value::as_bool) == Some(true);
        if let (Some(piece), Some(last)) = (text, self.parts.last_mut()) {
            let last_thought = last.get("thought").and_then(Value::as_bool) == Some(true);
            if let (Some(Value::String(t)), true) = (last.get_mut("text"), last_thought == thought)
            {
                t.push_str(piece);
                if let (Some(sig), Some(o)) = (p.get("thoughtSignature"), last.as_object_mut()) {
                    o.insert("thoughtSignature".into(), sig.clone());
                }
                return;
            }
        }
        self.parts.push(p.clone());
    }

    /// The message (streamed: `streamed` is set by the caller's reader).
    pub fn finish(self) -> ResponseMessage {
        let mut ids = CallIds::default();
        let content = self
            .parts
            .into_iter()
            .map(|p| part_block(p, Span::default(), &mut ids))
            .collect();
        let mut problems = self.problems;
        let usage = match &self.usage {
            Some(u) => usage_of(u),
            None => {
                if self.chunks > 0 {
                    problems.push(
                        "the answer carried no usageMetadata; its usage is not recorded".into(),
                    );
                }
                Default::default()
            }
        };
        let msg = ResponseMessage {
            id: self.id,
            model: self.model,
            content,
            complete: self.finish.is_some() && self.errors.is_empty(),
            stop_reason: self.finish,
            usage,
            stream_errors: self.errors,
            unknown_events: self.unknown,
            malformed_events: self.malformed,
            stream_problems: problems,
            ..ResponseMessage::default()
        };
        msg.with_usage_problems()
    }
}

/// Assemble an SSE body of Gemini chunks.
pub fn assemble_sse(body: &[u8]) -> ResponseMessage {
    let mut a = GeminiAssembler::new();
    let mut parser = SseParser::new();
    let mut events = Vec::new();
    parser.feed(body, &mut events);
    for ev in &events {
        a.push_text(&ev.data, ev.offset);
    }
    if let Some(cut) = parser.finish() {
        a.problems.push(format!(
            "the stream ends inside the chunk at byte {}; that chunk was kept raw and skipped",
            cut.offset
        ));
    }
    let cut = a.finish.is_none() && a.errors.is_empty() && a.chunks > 0;
    let mut m = a.finish();
    if cut {
        m.stream_problems
            .push("the stream ended without a finishReason: the answer is incomplete".into());
    }
    m.streamed = true;
    m
}

/// Read a Gemini answer (already decoded): an event stream (by its content type or its
/// first bytes), an error body, a JSON array of chunks or one response object.
pub fn read_body(content_type: Option<&str>, body: &[u8]) -> ResponseBody {
    if looks_like_event_stream(body) || content_type.is_some_and(is_event_stream) {
        return ResponseBody::Message(Box::new(assemble_sse(body)));
    }
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return ResponseBody::Other;
    };
    let error = match &v {
        Value::Array(a) => a.first().and_then(|c| c.get("error")),
        other => other.get("error"),
    };
    if let Some(e) = error.filter(|e| e.is_object()) {
        let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        return ResponseBody::Error {
            error_type: s("status"),
            message: s("message"),
        };
    }
    let mut a = GeminiAssembler::new();
    match &v {
        Value::Array(chunks) => chunks.iter().for_each(|c| a.push(c)),
        Value::Object(o) if is_response(o) => a.push(&v),
        _ => return ResponseBody::Other,
    }
    ResponseBody::Message(Box::new(a.finish()))
}

/// True for an object shaped like a `GenerateContentResponse`.
fn is_response(o: &Map<String, Value>) -> bool {
    ["candidates", "usageMetadata", "promptFeedback"]
        .iter()
        .any(|k| o.contains_key(*k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::BlockKind;

    fn sse(chunks: &[&str]) -> Vec<u8> {
        chunks
            .iter()
            .map(|c| format!("data: {c}\r\n\r\n"))
            .collect::<String>()
            .into_bytes()
    }

    #[test]
    fn chunks_concatenate_part_by_part_with_usage_from_the_chunk_that_has_it() {
        let body = sse(&[
            r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"thinking ","thought":true}]}}]}"#,
            r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}]}"#,
            r#"{"candidates":[{"content":{"role":"model","parts":[{"text":"lo"},{"functionCall":{"name":"ls","args":{}}}]}}]}"#,
            r#"{"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":1200,"candidatesTokenCount":12,"cachedContentTokenCount":1024},"modelVersion":"gemini-3.8-flash","responseId":"r1"}"#,
        ]);
        let m = assemble_sse(&body);
        assert!(m.complete && m.streamed, "{:?}", m.stream_problems);
        assert_eq!(m.content.len(), 3);
        assert!(matches!(m.content[0].kind, BlockKind::Thinking { .. }));
        assert_eq!(m.content[1].text(), Some("Hello"));
        assert_eq!(m.tool_calls().next().map(|c| c.0), Some("ls#0"));
        assert_eq!(m.stop_reason.as_deref(), Some("STOP"));
        assert_eq!(m.usage.input_tokens, Some(176));
        assert_eq!(m.id.as_deref(), Some("r1"));
        assert!(m.stream_problems.is_empty());
    }

    #[test]
    fn bad_chunks_and_cut_streams_are_said_and_the_rest_reads() {
        let mut body = sse(&[
            r#"{"candidates":[{"content":{"parts":[{"text":"a"}]}}]}"#,
            "not json",
            r#"{"candidates":[{"content":{"parts":[{"text":"b"}]}}]}"#,
        ]);
        body.extend_from_slice(br#"data: {"candidates":[{"content""#);
        let m = assemble_sse(&body);
        assert_eq!(m.content[0].text(), Some("ab"));
        assert_eq!(m.malformed_events, 1);
        assert!(!m.complete);
        assert_eq!(m.stop_reason, None);
        assert_eq!(m.usage.input_tokens, None, "never reported: not recorded");
        let all = m.stream_problems.join(" | ");
        for want in [
            "not JSON",
            "ends inside the chunk",
            "no usageMetadata",
            "finishReason",
        ] {
            assert!(all.contains(want), "{want}: {all}");
        }
    }

    #[test]
    fn json_answers_arrays_and_google_errors() {
        let one = br#"{"candidates":[{"content":{"role":"model","parts":[{"text":"{\"complexity_score\":10}"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":3}}"#;
        match read_body(Some("application/json"), one) {
            ResponseBody::Message(m) => {
                assert!(m.complete && !m.streamed);
                assert_eq!(m.usage.output_tokens, Some(3));
            }
            other => panic!("{other:?}"),
        }
        let arr = br#"[{"candidates":[{"content":{"parts":[{"text":"x"}]}}]},{"candidates":[{"content":{"parts":[{"text":"y"}]},"finishReason":"STOP"}]}]"#;
        assert!(
            matches!(read_body(None, arr), ResponseBody::Message(m) if m.content[0].text() == Some("xy"))
        );
        let err = br#"{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}"#;
        assert!(matches!(read_body(None, err),
            ResponseBody::Error { error_type, .. } if error_type == "RESOURCE_EXHAUSTED"));
    }
}
