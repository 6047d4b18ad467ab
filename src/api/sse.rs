//! Server-sent events: the one event-stream parser (every source and reader uses it), an
//! incremental parser (bytes in any split, including inside a multi-byte UTF-8
//! character) and the assembly of a streamed Messages response into the final message.
//!
//! Parsing follows the WHATWG HTML standard, "Interpreting an event stream" (§9.2.6): a
//! leading U+FEFF byte order mark is ignored; lines end in CRLF, LF or CR; a line starting
//! with `:` is a comment; `field: value` loses one leading space of the value; a line
//! without `:` is a field with an empty value; `event` sets the type, `data` lines are
//! joined with LF, `id` (without NUL) sets the last event id, `retry` (ASCII digits only)
//! sets the reconnection time, other fields are ignored; a blank line dispatches the event
//! unless its data buffer is empty; an event not ended by a blank line when the stream
//! ends is not dispatched ([`SseParser::finish`] hands it back for readers that show cut
//! streams). Event types are from the Messages API streaming reference (`message_start`,
//! `content_block_start`, `content_block_delta` with `text_delta`, `input_json_delta`,
//! `thinking_delta`, `signature_delta`, `citations_delta`, `content_block_stop`,
//! `message_delta` with cumulative usage, `message_stop`, `ping`, `error`).

use serde_json::{Map, Value};

use super::response::ResponseMessage;
use super::Usage;

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field (`None` if absent or empty: the type is then `message`).
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last event id when this event was dispatched (`id:` field), if any was set.
    pub id: Option<String>,
    /// Byte offset of the event's first line in the stream (the byte order mark counts).
    pub offset: u64,
}

/// UTF-8 byte order mark.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Incremental SSE parser: feed bytes as they arrive, take events as they complete.
#[derive(Default)]
pub struct SseParser {
    line: Vec<u8>,
    event: String,
    data: String,
    /// Set once a `data` field was seen for the pending event.
    has_data: bool,
    last_id: Option<String>,
    retry: Option<u64>,
    consumed: u64,
    event_start: Option<u64>,
    last_was_cr: bool,
    /// Bytes of a possible byte order mark held at the start of the stream.
    bom: Vec<u8>,
}

impl SseParser {
    /// A new parser.
    pub fn new() -> Self {
        Self::default()
    }

    /// The reconnection time the stream asked for (`retry:`), in milliseconds.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry
    }

    /// Feed bytes; completed events are appended to `out`.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<SseEvent>) {
        // A byte order mark is only ever the stream's first three bytes.
        while self.consumed == 0 && !bytes.is_empty() {
            self.bom.push(bytes[0]);
            bytes = &bytes[1..];
            if !BOM.starts_with(&self.bom) {
                let held = std::mem::take(&mut self.bom);
                self.feed_bytes(&held, out);
            } else if self.bom.len() == BOM.len() {
                self.consumed = BOM.len() as u64;
                self.bom.clear();
            }
        }
        self.feed_bytes(bytes, out);
    }

    fn feed_bytes(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) {
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

    /// The stream ended. By the standard an event not ended by a blank line is not
    /// dispatched; it is returned here (with a last line not ended by a line break
    /// included) for readers that show what a cut stream held.
    pub fn finish(&mut self) -> Option<SseEvent> {
        if !self.bom.is_empty() {
            let held = std::mem::take(&mut self.bom);
            self.consumed = 1; // no longer at the start: a partial mark is content
            let mut out = Vec::new();
            self.feed_bytes(&held, &mut out);
            debug_assert!(out.is_empty());
        }
        if !self.line.is_empty() {
            let mut out = Vec::new();
            self.end_line(&mut out);
        }
        let start = self.event_start.take();
        let cut = self.has_data.then(|| SseEvent {
            event: Some(std::mem::take(&mut self.event)).filter(|e| !e.is_empty()),
            data: strip_last_lf(std::mem::take(&mut self.data)),
            id: self.last_id.clone(),
            offset: start.unwrap_or(0),
        });
        self.event.clear();
        self.data.clear();
        self.has_data = false;
        cut
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
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
        };
        match field {
            "event" => self.event = value.to_string(),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "id" if !value.contains('\0') => self.last_id = Some(value.to_string()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                self.retry = value.parse().ok().or(Some(u64::MAX));
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let start = self.event_start.take();
        let event = std::mem::take(&mut self.event);
        if !std::mem::take(&mut self.has_data) {
            self.data.clear();
            return;
        }
        out.push(SseEvent {
            event: Some(event).filter(|e| !e.is_empty()),
            data: strip_last_lf(std::mem::take(&mut self.data)),
            id: self.last_id.clone(),
            offset: start.unwrap_or(0),
        });
    }
}

fn strip_last_lf(mut s: String) -> String {
    if s.ends_with('\n') {
        s.pop();
    }
    s
}

/// Parse a complete SSE body into its dispatched events (an event cut off at the end is
/// not one, by the standard).
pub fn parse_events(body: &[u8]) -> Vec<SseEvent> {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    p.feed(body, &mut out);
    p.finish();
    out
}

/// True when `body` starts like an event stream (after an optional byte order mark: a
/// field `event:`, `data:`, `id:`, `retry:` or a `:` comment), whatever the content type says.
pub fn looks_like_event_stream(body: &[u8]) -> bool {
    let b = body.strip_prefix(BOM).unwrap_or(body);
    [&b"event:"[..], b"data:", b"id:", b"retry:", b":"]
        .iter()
        .any(|p| b.starts_with(p))
}

/// The `error` object of the first `error` event of a stream (by event type or by the
/// data's `type`), if there is one; JSON is parsed only for candidate events.
pub fn first_error(body: &[u8]) -> Option<Value> {
    parse_events(body).into_iter().find_map(|ev| {
        let named = ev.event.as_deref() == Some("error");
        if !named && !ev.data.contains("\"error\"") {
            return None;
        }
        let v: Value = serde_json::from_str(&ev.data).ok()?;
        let ty = v
            .get("type")
            .and_then(Value::as_str)
            .or(ev.event.as_deref());
        (ty == Some("error")).then(|| v.get("error").cloned().unwrap_or(v))
    })
}

/// How far past the blocks started so far a `content_block_*` event's `index` may point.
/// The Messages API numbers a message's content blocks 0, 1, 2… in the order it starts
/// them (streaming reference), so a gap means lost events; a gap wider than this is a bad
/// event, not a reason to allocate that many blocks (the index is an untrusted number).
pub const MAX_INDEX_GAP: usize = 64;

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
    /// Events skipped as impossible (a content block index far beyond the blocks seen),
    /// one message each naming the event's byte offset.
    pub problems: Vec<String>,
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
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        let index = match usize::try_from(index) {
            Ok(i)
                if !ty.starts_with("content_block_") || i <= self.blocks.len() + MAX_INDEX_GAP =>
            {
                i
            }
            _ => {
                self.problems.push(format!(
                    "stream event at byte {}: `{ty}` names content block {index} but {} blocks were started; the event was skipped",
                    ev.offset,
                    self.blocks.len()
                ));
                return;
            }
        };
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
                    // The message object keeps the final figures too (`into_message`).
                    if let (Some(Value::Object(to)), Value::Object(from)) =
                        (self.message.get_mut("usage"), u)
                    {
                        for (k, val) in from {
                            to.insert(k.clone(), val.clone());
                        }
                    }
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

    fn close_all(&mut self) {
        for i in 0..self.blocks.len() {
            self.close_block(i);
        }
    }

    /// The message a whole stream assembles to, in the shape a non-streaming response
    /// carries (`{"id","type":"message","role","model","content":[…],"stop_reason",
    /// "stop_sequence","usage"}`): `message_start`'s message with the blocks built from
    /// the deltas (tool inputs parsed from their `input_json_delta`s) and the fields and
    /// usage figures of `message_delta` applied.
    ///
    /// Errors: why the stream makes no whole message — no `message_start` or no
    /// `message_stop` (cut short), an `error` event, an event whose data is not JSON or
    /// was skipped, a tool input whose JSON does not parse.
    pub fn into_message(mut self) -> Result<Value, String> {
        self.close_all();
        if let Some(e) = self.errors.first() {
            return Err(format!("the stream holds an error event: {e}"));
        }
        if !self.started {
            return Err("the stream has no message_start event".into());
        }
        if !self.stopped {
            return Err("the stream has no message_stop event (it was cut short)".into());
        }
        if let Some((offset, _)) = self.malformed.first() {
            return Err(format!("the event at byte {offset} is not JSON"));
        }
        if let Some(p) = self.problems.first() {
            return Err(p.clone());
        }
        if let Some(i) = self
            .blocks
            .iter()
            .position(|b| b.get("input_unparsed").is_some())
        {
            return Err(format!("the input of content block {i} is not JSON"));
        }
        let mut m = self.message;
        m.insert("content".into(), Value::Array(self.blocks));
        Ok(Value::Object(m))
    }

    /// The message assembled so far. `complete` is true only after `message_stop`.
    pub fn finish(mut self) -> ResponseMessage {
        self.close_all();
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
        msg.stream_problems = self.problems;
        msg.with_usage_problems()
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

/// The message of a whole SSE body in the non-streaming shape; see
/// [`StreamAssembler::into_message`].
pub fn assemble_message(body: &[u8]) -> Result<Value, String> {
    let mut a = StreamAssembler::new();
    for ev in parse_events(body) {
        a.push(&ev);
    }
    a.into_message()
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
    fn a_whole_stream_assembles_to_the_non_streaming_message_and_a_cut_one_does_not() {
        let m = assemble_message(STREAM.as_bytes()).unwrap();
        assert_eq!(m["type"], "message");
        assert_eq!(m["id"], "msg_1");
        assert_eq!(m["stop_reason"], "tool_use");
        assert_eq!(
            m["content"][0],
            serde_json::json!({"type":"text","text":"h\u{e9}llo world"})
        );
        assert_eq!(
            m["content"][1]["input"],
            serde_json::json!({"command":"ls"})
        );
        // message_start's figures, with message_delta's output count applied
        assert_eq!(
            m["usage"],
            serde_json::json!({"input_tokens":12,"cache_read_input_tokens":4,"output_tokens":30})
        );
        let cut = STREAM.find("event: message_delta").unwrap();
        let e = assemble_message(&STREAM.as_bytes()[..cut]).unwrap_err();
        assert!(e.contains("no message_stop"), "{e}");
        let err = format!("{STREAM}event: error\ndata: {{\"type\":\"error\",\"error\":{{\"type\":\"overloaded_error\"}}}}\n\n");
        let e = assemble_message(err.as_bytes()).unwrap_err();
        assert!(e.contains("overloaded_error"), "{e}");
    }

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
            assert_eq!(p.finish(), None);
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

    /// A stream cut before `message_stop` (connection closed, no error event) is
    /// incomplete, and so is one without `message_start`; the text received is kept.
    #[test]
    fn a_stream_cut_before_message_stop_is_incomplete() {
        let cut = STREAM.find("event: message_stop").unwrap();
        let m = assemble(&STREAM.as_bytes()[..cut]);
        assert!(!m.complete);
        assert!(m.stream_errors.is_empty());
        assert_eq!(m.content[0].text(), Some("h\u{e9}llo world"));
        let start = STREAM.find("event: ping").unwrap();
        assert!(!assemble(&STREAM.as_bytes()[start..]).complete);
    }

    fn events(body: &[u8]) -> Vec<(Option<String>, String)> {
        parse_events(body)
            .into_iter()
            .map(|e| (e.event, e.data))
            .collect()
    }

    fn ev(name: Option<&str>, data: &str) -> (Option<String>, String) {
        (name.map(str::to_string), data.to_string())
    }

    #[test]
    fn cr_lf_and_crlf_line_ends_are_one_rule() {
        let want = vec![ev(Some("a"), "1"), ev(Some("b"), "2")];
        for nl in ["\n", "\r", "\r\n"] {
            let body = format!("event: a{nl}data: 1{nl}{nl}event: b{nl}data: 2{nl}{nl}");
            assert_eq!(events(body.as_bytes()), want, "{nl:?}");
        }
        // Mixed within one stream, CRLF split across feeds.
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for piece in [&b"data: x\r"[..], b"\ndata: y\r", b"\r"] {
            p.feed(piece, &mut out);
        }
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data, "x\ny");
    }

    #[test]
    fn bom_comments_ids_retry_and_multi_line_data() {
        let body = "\u{feff}: a comment\nretry: 2500\nid: 7\nevent: error\ndata: {\"a\":\ndata:1}\ndata\n\n";
        let mut p = SseParser::new();
        let mut out = Vec::new();
        // The byte order mark split across feeds is still one mark.
        let bytes = body.as_bytes();
        p.feed(&bytes[..1], &mut out);
        p.feed(&bytes[1..2], &mut out);
        p.feed(&bytes[2..], &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].event.as_deref(), Some("error"));
        assert_eq!(out[0].data, "{\"a\":\n1}\n");
        assert_eq!(out[0].id.as_deref(), Some("7"));
        assert_eq!(p.retry_ms(), Some(2500));
        // `retry` with anything but digits is ignored; an id with NUL is ignored.
        let mut p = SseParser::new();
        p.feed(b"retry: 1s\nid: a\0b\ndata: z\n\n", &mut out);
        assert_eq!(p.retry_ms(), None);
        assert_eq!(out[1].id, None);
        // A mark that is not at the start is content (an unknown field here).
        assert_eq!(events("data: 1\n\n\u{feff}data: 2\n\n".as_bytes()).len(), 1);
    }

    /// An error event is found by its event name alone (data without a `type`, returned
    /// whole) or by its data's `type` alone (no `event:` line); text that merely contains
    /// `"error"` is no error.
    #[test]
    fn an_error_event_is_found_by_its_name_or_by_its_data_type_alone() {
        use serde_json::json;
        assert_eq!(
            first_error(
                b"event: ping\ndata: {}\n\nevent: error\ndata: {\"message\":\"bad gateway\"}\n\n"
            ),
            Some(json!({"message": "bad gateway"}))
        );
        assert_eq!(
            first_error(b"data: {\"type\":\"error\",\"error\":{\"type\":\"api_error\"}}\n\n"),
            Some(json!({"type": "api_error"}))
        );
        assert_eq!(
            first_error(b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"error\"}}\n\n"),
            None
        );
    }

    /// A byte order mark before the first field (`event:`) is dropped, whether it comes in
    /// one feed or split byte by byte: the event keeps its name, and offsets still count
    /// the mark's 3 bytes (the event starts at byte 3).
    #[test]
    fn a_byte_order_mark_before_the_first_field_is_dropped_whole_or_split() {
        let body = b"\xEF\xBB\xBFevent: a\ndata: 1\n\n";
        let check = |out: &[SseEvent]| {
            assert_eq!(out.len(), 1);
            assert_eq!(
                (out[0].event.as_deref(), out[0].data.as_str(), out[0].offset),
                (Some("a"), "1", 3)
            );
        };
        check(&parse_events(body));
        for split in [1, 2, 3, 4] {
            let (mut p, mut out) = (SseParser::new(), Vec::new());
            p.feed(&body[..split], &mut out);
            p.feed(&body[split..], &mut out);
            check(&out);
        }
        // Two bytes of a mark and then no third: both are content of the event's first
        // line (an unknown field), so the event starts at byte 0.
        let mut out = Vec::new();
        let mut p = SseParser::new();
        p.feed(b"\xEF\xBBx\ndata: 2\n\n", &mut out);
        assert_eq!(
            (out.len(), out[0].data.as_str(), out[0].offset),
            (1, "2", 0)
        );
    }

    #[test]
    fn events_without_data_are_not_dispatched_and_a_cut_event_is_handed_back() {
        assert_eq!(events(b"event: ping\n\n"), vec![]);
        // `data:` with an empty value is data.
        assert_eq!(events(b"data:\n\n"), vec![ev(None, "")]);
        // Only one leading space is removed; a field without a colon has an empty value.
        assert_eq!(events(b"data:  two\n\n"), vec![ev(None, " two")]);
        let mut p = SseParser::new();
        let mut out = Vec::new();
        p.feed(
            b"data: whole\n\nevent: message_stop\ndata: {\"cut\"",
            &mut out,
        );
        assert_eq!(out.len(), 1);
        let cut = p.finish().unwrap();
        assert_eq!(cut.event.as_deref(), Some("message_stop"));
        assert_eq!(cut.data, "{\"cut\"");
        assert_eq!(cut.offset, 13);
    }

    #[test]
    fn error_event_is_found_whatever_the_line_ends() {
        let body = "event: message_start\rdata: {\"type\":\"message_start\",\"message\":{}}\r\revent: error\rdata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\r\r";
        let e = first_error(body.as_bytes()).unwrap();
        assert_eq!(e["type"], "overloaded_error");
        assert_eq!(first_error(STREAM.as_bytes()), None);
        assert!(looks_like_event_stream(b"\xEF\xBB\xBF: hi\n"));
        assert!(!looks_like_event_stream(b"{\"type\":\"message\"}"));
    }

    #[test]
    fn huge_content_block_index_is_a_bad_event_not_an_allocation() {
        // index 4294967295 once grew the block list to that length (abort / 23 GB)
        let body = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":4294967295,\"content_block\":{\"type\":\"text\",\"text\":\"x\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":18446744073709551615,\"delta\":{\"type\":\"text_delta\",\"text\":\"y\"}}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n\
event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
        let m = assemble(body.as_bytes());
        assert_eq!(m.content.len(), 1, "only the real block");
        assert_eq!(m.content[0].text(), Some("ok"));
        assert_eq!(m.stream_problems.len(), 2, "{:?}", m.stream_problems);
        // the first bad event starts after the 66-byte message_start event
        assert!(
            m.stream_problems[0].contains("byte 66"),
            "{}",
            m.stream_problems[0]
        );
        assert!(m.stream_problems[0].contains("content block 4294967295"));
        // a small gap (a lost start event) is kept, as before
        let gap = "data: {\"type\":\"content_block_start\",\"index\":3,\"content_block\":{\"type\":\"text\",\"text\":\"z\"}}\n\n";
        let m = assemble(gap.as_bytes());
        assert_eq!(m.content.len(), 4);
        assert!(m.stream_problems.is_empty());
    }
}
