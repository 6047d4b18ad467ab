//! Builder of hand-made traces for the analyzer tests: blocks of exact byte sizes (so token
//! figures can be computed by hand: agentwire estimates one token per 4 bytes, rounded
//! up), conversations that grow turn by turn, JSON responses with tool calls.

#![allow(dead_code)]

use chrono::{DateTime, TimeZone, Utc};
use serde_json::{json, Value};

use agentwire::trace::{Body, Exchange, HttpRequest, HttpResponse, Source, SourceKind};

/// A text block whose JSON is exactly `bytes` long (`{"type":"text","text":"aaa…"}` is
/// 25 bytes plus the text), without `cache_control`.
pub fn text(bytes: usize, fill: char) -> Value {
    assert!(bytes >= 25);
    json!({"type": "text", "text": fill.to_string().repeat(bytes - 25)})
}

/// A tool definition whose JSON is exactly `bytes` long
/// (`{"name":"N","description":"…","input_schema":{}}` is 46 bytes + name + description).
pub fn tool(name: &str, bytes: usize) -> Value {
    let n = bytes - 46 - name.len();
    json!({"name": name, "description": "d".repeat(n), "input_schema": {}})
}

/// Add `cache_control` (a breakpoint) to a block; `ttl` `None` = default 5 minutes.
pub fn cc(mut b: Value, ttl: Option<&str>) -> Value {
    let c = match ttl {
        Some(t) => json!({"type": "ephemeral", "ttl": t}),
        None => json!({"type": "ephemeral"}),
    };
    b.as_object_mut().unwrap().insert("cache_control".into(), c);
    b
}

/// A conversation being built.
#[derive(Clone)]
pub struct Conv {
    pub model: String,
    pub tools: Vec<Value>,
    pub system: Vec<Value>,
    pub messages: Vec<Value>,
    pub extra: serde_json::Map<String, Value>,
    /// Put a breakpoint on the last block of the last message (as Claude Code does).
    pub cc_last: bool,
}

impl Conv {
    pub fn new(model: &str) -> Self {
        Conv {
            model: model.into(),
            tools: vec![],
            system: vec![],
            messages: vec![],
            extra: Default::default(),
            cc_last: true,
        }
    }

    pub fn user(&mut self, blocks: Vec<Value>) -> &mut Self {
        self.messages
            .push(json!({"role": "user", "content": blocks}));
        self
    }

    pub fn assistant(&mut self, blocks: Vec<Value>) -> &mut Self {
        self.messages
            .push(json!({"role": "assistant", "content": blocks}));
        self
    }

    /// The request body as sent now.
    pub fn body(&self) -> Vec<u8> {
        let mut msgs = self.messages.clone();
        if self.cc_last {
            if let Some(last) = msgs.last_mut() {
                let blocks = last["content"].as_array_mut().unwrap();
                let b = blocks.last_mut().unwrap().take();
                *blocks.last_mut().unwrap() = cc(b, None);
            }
        }
        let mut o = serde_json::Map::new();
        o.insert("model".into(), json!(self.model));
        o.insert("max_tokens".into(), json!(1000));
        if !self.tools.is_empty() {
            o.insert("tools".into(), Value::Array(self.tools.clone()));
        }
        if !self.system.is_empty() {
            o.insert("system".into(), Value::Array(self.system.clone()));
        }
        o.insert("messages".into(), Value::Array(msgs));
        for (k, v) in &self.extra {
            o.insert(k.clone(), v.clone());
        }
        serde_json::to_vec(&Value::Object(o)).unwrap()
    }
}

/// A tool_use block.
pub fn tool_use(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

/// A tool_result block.
pub fn tool_result(id: &str, text: &str, is_error: bool) -> Value {
    json!({"type": "tool_result", "tool_use_id": id, "content": text, "is_error": is_error})
}

/// Builds exchanges in time order.
#[derive(Default)]
pub struct TraceBuilder {
    pub exchanges: Vec<Exchange>,
    /// The source kind of the exchanges (pcap: usage may be treated as recorded).
    pub kind: Option<SourceKind>,
    /// Header lines sent with the next requests (besides `content-type`).
    pub headers: Vec<(String, String)>,
}

pub fn at(secs: f64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_800_000_000, 0).unwrap()
        + chrono::Duration::microseconds((secs * 1e6) as i64)
}

impl TraceBuilder {
    /// Send `conv` at `secs`; the reply holds `reply` blocks and `usage`.
    pub fn send(&mut self, conv: &Conv, secs: f64, reply: Vec<Value>, usage: Value) {
        let body = conv.body();
        let resp = json!({"id": "msg", "type": "message", "role": "assistant", "model": conv.model,
            "content": reply, "stop_reason": "end_turn", "usage": usage});
        self.exchanges.push(Exchange {
            id: self.exchanges.len() as u64,
            started_at: at(secs),
            ended_at: Some(at(secs + 0.5)),
            source: Source::new(self.kind.unwrap_or(SourceKind::Server)),
            request: HttpRequest {
                method: "POST".into(),
                target: "/v1/messages".into(),
                version: "HTTP/1.1".into(),
                headers: std::iter::once(("content-type".into(), "application/json".into()))
                    .chain(self.headers.iter().cloned())
                    .collect(),
                body: Body::new(body),
            },
            response: Some(HttpResponse {
                status: 200,
                version: "HTTP/1.1".into(),
                headers: vec![("content-type".into(), "application/json".into())].into(),
                body: Body::new(serde_json::to_vec(&resp).unwrap()),
                chunks: vec![],
                first_byte_at: None,
            }),
            error: None,
            notes: Default::default(),
            websocket: None,
        });
    }

    /// Send with a text reply and placeholder usage.
    pub fn send_text(&mut self, conv: &Conv, secs: f64) {
        self.send(
            conv,
            secs,
            vec![json!({"type":"text","text":"ok"})],
            json!({"input_tokens": 1, "output_tokens": 1}),
        );
    }
}

/// Estimated tokens of a body: ceil(bytes / 4).
pub fn body_tokens(conv: &Conv) -> u64 {
    conv.body().len().div_ceil(4) as u64
}
