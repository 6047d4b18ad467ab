//! Server-sent events: an incremental parser (bytes in any split, including inside a
//! multi-byte UTF-8 character) and the assembly of a streamed Messages response into the
//! final message.
//!
//! Sources: the SSE format of the WHATWG HTML standard ("event stream interpretation":
//! `event:`, `data:` lines joined by `\n`, `:` comments, blank line dispatches, CR/LF/CRLF
//! line ends); the Messages API streaming reference for the event types (`message_start`,
//! `content_block_start`, `content_block_delta` with `text_delta`, `input_json_delta`,
//! `thinking_delta`, `signature_delta`, `citations_delta`, `content_block_stop`,
//! `message_delta` with cumulative usage, `message_stop`, `ping`, `error`).

use serde_json::{Map, Value};

use super::response::ResponseMessage;
use super::Usage;

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field (`None` if absent).
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// Byte offset of the event's first line in the stream.
    pub offset: u64,
}

/// Incremental SSE parser: feed bytes as they arrive, take events as they complete.
#[derive(Default)]
pub struct SseParser {
    line: Vec<u8>,
    event: Option<String>,
    data: Option<String>,
    consumed: u64,
    event_start: Option<u64>,
    last_was_cr: bool,
}

impl SseParser {
    /// A new parser.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed bytes; completed events are appended to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) {
        for &b in bytes {
            let pos = self.consumed;
            self.consumed += 1;
            if self.last_was_cr {
                self.last_was_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' | b'\r' => {
                    self.last_was_cr = b == b'\r';
                    self.end_line(out);
                }
                _ => {
                    if self.line.is_empty() && self.event_start.is_none() {
                        self.event_start = Some(pos);
                    }
                    self.line.push(b);
                }
            }
        }
    }

    /// Dispatch a final event not followed by a blank line (a stream cut short).
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.line.is_empty() {
            self.end_line(out);
        }
        self.dispatch(out);
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        if self.line.is_empty() {
            self.dispatch(out);
            return;
        }
        let line = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f.to_string(), v.strip_prefix(' ').unwrap_or(v).to_string()),
            None => (line, String::new()),
        };
        match field.as_str() {
            "event" => self.event = Some(value),
            "data" => match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(&value);
                }
                None => self.data = Some(value),
            },
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let start = self.event_start.take();
        if self.data.is_none() && self.event.is_none() {
            return;
        }
        out.push(SseEvent {
            event: self.event.take(),
            data: self.data.take().unwrap_or_default(),
            offset: start.unwrap_or(0),
        });
    }
}

/// Parse a complete SSE body into events.
pub fn parse_events(body: &[u8]) -> Vec<SseEvent> {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    p.feed(body, &mut out);
    p.finish(&mut out);
    out
}

/// Builds the final message from a stream of Messages API events.
#[derive(Default)]
pub struct StreamAssembler {
    message: Map<String, Value>,
    blocks: Vec<Value>,
    partial_json: Vec<String>,
    usage: Usage,
    /// Count of `ping` events.
    pub pings: u32,
    /// `error` events (their `error` objects).
    pub errors: Vec<Value>,
    /// Events of unknown type, kept whole: `(event type, data)`.
    pub unknown: Vec<(String, Value)>,
    /// Events whose data was not JSON: `(offset, data)`.
    pub malformed: Vec<(u64, String)>,
    started: bool,
    stopped: bool,
}

impl StreamAssembler {
    /// A new assembler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Apply one event.
    pub fn push(&mut self, ev: &SseEvent) {
        let v: Value = match serde_json::from_str(&ev.data) {
            Ok(v) => v,
            Err(_) => {
                self.malformed.push((ev.offset, ev.data.clone()));
                return;
            }
        };
        let ty = v
            .get("type")
            .and_then(Value::as_str)
            .or(ev.event.as_deref())
            .unwrap_or("")
            .to_string();
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
        match ty.as_str() {
            "message_start" => {
                self.started = true;
                if let Some(Value::Object(m)) = v.get("message") {
                    self.message = m.clone();
                    if let Some(u) = m.get("usage") {
                        self.usage.merge(u);
                    }
                }
            }
            "content_block_start" => {
                let block = v.get("content_block").cloned().unwrap_or(Value::Null);
                self.ensure(index);
                self.blocks[index] = block;
            }
            "content_block_delta" => {
                self.ensure(index);
                let delta = v.get("delta").cloned().unwrap_or(Value::Null);
                self.apply_delta(index, &delta);
            }
            "content_block_stop" => {
                self.ensure(index);
                self.close_block(index);
            }
            "message_delta" => {
                if let Some(Value::Object(d)) = v.get("delta") {
                    for (k, val) in d {
                        self.message.insert(k.clone(), val.clone());
                    }
                }
                if let Some(u) = v.get("usage") {
                    self.usage.merge(u);
                }
            }
            "message_stop" => self.stopped = true,
            "ping" => self.pings += 1,
            "error" => self.errors.push(v.get("error").cloned().unwrap_or(v)),
            _ => self.unknown.push((ty, v)),
        }
    }

    fn ensure(&mut self, index: usize) {
        while self.blocks.len() <= index {
            self.blocks.push(Value::Null);
            self.partial_json.push(String::new());
        }
    }

    fn apply_delta(&mut self, index: usize, delta: &Value) {
        let block = &mut self.blocks[index];
        let append = |block: &mut Value, key: &str, piece: &str| {
            if let Value::Object(b) = block {
                let cur = b.entry(key).or_insert(Value::String(String::new()));
                if let Value::String(s) = cur {
                    s.push_str(piece);
                }
            }
        };
        let s = |k: &str| delta.get(k).and_then(Value::as_str).unwrap_or("");
        match delta.get("type").and_then(Value::as_str).unwrap_or("") {
            "text_delta" => append(block, "text", s("text")),
            "thinking_delta" => append(block, "thinking", s("thinking")),
            "signature_delta" => append(block, "signature", s("signature")),
            "input_json_delta" => self.partial_json[index].push_str(s("partial_json")),
            "citations_delta" => {
                if let (Value::Object(b), Some(c)) = (block, delta.get("citation")) {
                    let list = b.entry("citations").or_insert(Value::Array(vec![]));
                    if let Value::Array(a) = list {
                        a.push(c.clone());
                    }
                }
            }
            other => self.unknown.push((format!("delta:{other}"), delta.clone())),
        }
    }

    fn close_block(&mut self, index: usize) {
        let pj = std::mem::take(&mut self.partial_json[index]);
        if pj.is_empty() {
            return;
        }
        if let Value::Object(b) = &mut self.blocks[index] {
            match serde_json::from_str::<Value>(&pj) {
                Ok(input) => {
                    b.insert("input".into(), input);
                }
                Err(_) => {
                    b.insert("input_unparsed".into(), Value::String(pj));
                }
            }
        }
    }

    /// The message assembled so far. `complete` is true only after `message_stop`.
    pub fn finish(mut self) -> ResponseMessage {
        for i in 0..self.blocks.len() {
            self.close_block(i);
        }
        let mut m = self.message;
        m.insert("content".into(), Value::Array(self.blocks));
        let mut msg = ResponseMessage::from_value(&Value::Object(m));
        msg.usage = self.usage;
        msg.streamed = true;
        msg.complete = self.started && self.stopped && self.errors.is_empty();
        msg.pings = self.pings;
        msg.stream_errors = self.errors;
        msg.unknown_events = self.unknown;
        msg.malformed_events = self.malformed.len();
        msg
    }
}

/// Assemble a whole SSE body.
pub fn assemble(body: &[u8]) -> ResponseMessage {
    let mut a = StreamAssembler::new();
    for ev in parse_events(body) {
        a.push(&ev);
    }
    a.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::BlockKind;

    const STREAM: &str = "event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":12,\"cache_read_input_tokens\":4,\"output_tokens\":1}}}\r\n\r\n\
event: ping\ndata: {\"type\": \"ping\"}\n\n\
: comment\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"h\u{e9}llo \"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"world\"}}\n\n\
event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Bash\",\"input\":{}}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"comm\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"and\\\":\\\"ls\\\"}\"}}\n\n\
event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n\
event: future_event\ndata: {\"type\":\"future_event\",\"x\":1}\n\n\
event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":30}}\n\n\
event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

    #[test]
    fn assembles_text_and_tool_use() {
        let m = assemble(STREAM.as_bytes());
        assert!(m.complete);
        assert_eq!(m.id.as_deref(), Some("msg_1"));
        assert_eq!(m.stop_reason.as_deref(), Some("tool_use"));
        assert_eq!(m.pings, 1);
        assert_eq!(m.content.len(), 2);
        assert_eq!(m.content[0].text(), Some("h\u{e9}llo world"));
        match &m.content[1].kind {
            BlockKind::ToolUse { name, input, .. } => {
                assert_eq!(name, "Bash");
                assert_eq!(input["command"], "ls");
            }
            k => panic!("{k:?}"),
        }
        assert_eq!(m.usage.input_tokens, Some(12));
        assert_eq!(m.usage.cache_read_input_tokens, Some(4));
        assert_eq!(m.usage.output_tokens, Some(30));
        assert_eq!(m.unknown_events.len(), 1);
        assert_eq!(m.unknown_events[0].0, "future_event");
    }

    #[test]
    fn any_split_gives_the_same_events() {
        let bytes = STREAM.as_bytes();
        let whole = parse_events(bytes);
        for step in [1, 2, 3, 7, 64] {
            let mut p = SseParser::new();
            let mut out = Vec::new();
            for chunk in bytes.chunks(step) {
                p.feed(chunk, &mut out);
            }
            p.finish(&mut out);
            assert_eq!(out, whole, "split every {step} bytes");
        }
        // the é is split across chunks at step 1: still decoded correctly
        assert!(whole.iter().any(|e| e.data.contains("h\u{e9}llo")));
    }

    #[test]
    fn error_mid_stream_marks_incomplete_and_keeps_partial() {
        let cut = STREAM.find("event: content_block_stop").unwrap();
        let mut s = STREAM[..cut].to_string();
        s.push_str("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n");
        let m = assemble(s.as_bytes());
        assert!(!m.complete);
        assert_eq!(m.stream_errors[0]["type"], "overloaded_error");
        assert_eq!(m.content[0].text(), Some("h\u{e9}llo world"));
    }
}
