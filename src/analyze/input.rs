//! The analyzer's input model: each Messages exchange reduced to what the analyses need —
//! its thread, the prompt prefix as a list of hashed, token-counted blocks (tools →
//! system → messages), the cache-relevant parameters, recorded usage — and the tool calls,
//! tool results and `<task-notification>`s the conversation carries. Bodies are dropped
//! after this step, so a multi-GB trace is analysed in bounded memory.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::api::thread::ThreadTracker;
use crate::api::{
    estimate_tokens, read_response, request_body, response_body, Block, BlockKind, MessagesRequest,
    ResponseBody, ResponseMessage, Usage,
};
use crate::trace::{Exchange, SourceKind};

use super::events::{cap, parse_notifications};
pub use super::events::{Notification, ToolCall, ToolResult, RESULT_TEXT_CAP};

/// Which part of the prompt prefix a block belongs to (the cache prefix order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Region {
    /// A tool definition.
    Tools,
    /// A `system` block.
    System,
    /// A content block of a message.
    Messages,
}

/// Cache TTL of a breakpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Ttl {
    /// 5 minutes (the default `ephemeral`).
    #[serde(rename = "5m")]
    M5,
    /// 1 hour (`"ttl": "1h"`).
    #[serde(rename = "1h")]
    H1,
}

impl Ttl {
    /// Length in microseconds.
    pub fn micros(self) -> i64 {
        match self {
            Ttl::M5 => 300_000_000,
            Ttl::H1 => 3_600_000_000,
        }
    }
}

/// One block of the prompt prefix.
#[derive(Clone, Debug)]
pub struct PrefixBlock {
    /// Region of the prefix.
    pub region: Region,
    /// Tool index, system block index, or message index.
    pub index: usize,
    /// Hash of the block's normalized content (`cache_control` ignored, a string content
    /// equal to one text block).
    pub hash: u64,
    /// Estimated tokens: [`estimate_tokens`] of the block's bytes.
    pub tokens: u64,
    /// `Some(ttl)` when the block carries `cache_control` (a cache breakpoint).
    pub breakpoint: Option<Ttl>,
}

/// One Messages request, reduced.
#[derive(Clone, Debug)]
pub struct Request {
    /// Position among all analysed requests (all traces), from 0.
    pub seq: usize,
    /// Index of the trace among the inputs.
    pub trace: usize,
    /// Exchange id within its trace.
    pub exchange: u64,
    /// Global thread number (unique across traces).
    pub thread: usize,
    /// Turn within the thread: the number of assistant messages in the history.
    pub turn: usize,
    /// When the request started.
    pub at: DateTime<Utc>,
    /// `model` (empty if absent).
    pub model: String,
    /// Cache-relevant parameters other than model: `thinking`, `tool_choice`, the
    /// `anthropic-beta` header; `(name, value as JSON text)`.
    pub params: Vec<(String, String)>,
    /// Top-level `cache_control` (automatic caching: a breakpoint on the last block).
    pub auto_breakpoint: Option<Ttl>,
    /// The prefix, tools → system → messages.
    pub blocks: Vec<PrefixBlock>,
    /// Tool names and definition hashes, in order.
    pub tools: Vec<(String, u64)>,
    /// System block texts (to locate a change by byte offset).
    pub system: Vec<String>,
    /// Estimated input tokens of the whole body.
    pub total_tokens: u64,
    /// Usage from the response, if any.
    pub recorded: Option<Usage>,
    /// True when agentwire's fake server answered (usage figures are placeholders).
    pub fake_server: bool,
    /// Estimated output tokens (from the response content's bytes).
    pub output_estimate: u64,
}

/// A stable 64-bit hash (SipHash with fixed keys).
pub fn hash_of(parts: &[&[u8]]) -> u64 {
    let mut h = DefaultHasher::new();
    for p in parts {
        p.hash(&mut h);
    }
    h.finish()
}

/// Prefix of the system block in which Claude Code sends a per-request billing
/// fingerprint (`x-anthropic-billing-header: cc_version=…; cch=…`). It changes on every
/// request, yet Claude Code sessions do hit the cache, so the API evidently leaves it out
/// of the cache key; the simulation treats it as constant (an inference, documented in
/// docs/analyze.md).
pub const BILLING_HEADER: &str = "x-anthropic-billing-header";

fn block_hash(b: &Block, body: &[u8]) -> u64 {
    let t = b.block_type().as_bytes();
    match &b.kind {
        BlockKind::Text { text } if text.starts_with(BILLING_HEADER) => {
            hash_of(&[t, BILLING_HEADER.as_bytes()])
        }
        BlockKind::Text { text } => hash_of(&[t, text.as_bytes()]),
        BlockKind::ToolUse { id, name, input } | BlockKind::ServerToolUse { id, name, input } => {
            hash_of(&[
                t,
                id.as_bytes(),
                name.as_bytes(),
                input.to_string().as_bytes(),
            ])
        }
        BlockKind::ToolResult {
            tool_use_id,
            text,
            is_error,
            references,
        } => hash_of(&[
            t,
            tool_use_id.as_bytes(),
            text.as_bytes(),
            &[u8::from(*is_error)],
            references.join("\n").as_bytes(),
        ]),
        BlockKind::Thinking {
            thinking,
            signature,
        } => hash_of(&[
            t,
            thinking.as_bytes(),
            signature.as_deref().unwrap_or("").as_bytes(),
        ]),
        BlockKind::ToolReference { tool_name } => hash_of(&[t, tool_name.as_bytes()]),
        BlockKind::Other { raw, .. } => {
            let mut v = raw.clone();
            if let Some(o) = v.as_object_mut() {
                o.remove("cache_control");
            }
            hash_of(&[t, v.to_string().as_bytes()])
        }
        BlockKind::Image { .. } | BlockKind::Document { .. } | BlockKind::RedactedThinking => {
            hash_of(&[t, b.span.slice(body)])
        }
    }
}

/// Estimated tokens of a block as the prompt sees it: its wire bytes without the
/// `cache_control` member, a string `content` counted as the equivalent text block (so a
/// block costs the same whichever form and wherever the breakpoint is).
fn block_tokens(b: &Block, string_form: bool) -> u64 {
    let mut bytes = b.span.len();
    if string_form {
        bytes += 23; // `{"type":"text","text":` + `}`
    }
    if let Some(cc) = &b.cache_control {
        bytes = bytes.saturating_sub(17 + cc.to_string().len()); // `,"cache_control":` + value
    }
    estimate_tokens(bytes)
}

fn ttl_of(cc: &Value) -> Ttl {
    match cc.get("ttl").and_then(Value::as_str) {
        Some("1h") => Ttl::H1,
        _ => Ttl::M5,
    }
}

fn header<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
    h.iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Everything the input stage extracted from one exchange.
pub struct Extracted {
    /// The reduced request.
    pub request: Request,
    /// Tool calls first seen in this exchange (its response, or history not seen before).
    pub calls: Vec<ToolCall>,
    /// `(tool_use_id, result)` pairs first carried by this request.
    pub results: Vec<(String, ToolResult)>,
    /// Task notifications first carried by this request.
    pub notifications: Vec<Notification>,
    /// True when the response's text says something finished (`finished`, `completed`,
    /// `done`, `succeeded`, `passed`): a claim a job's notification may contradict.
    pub claims_done: bool,
}

/// The model and recorded token figures of an exchange's response, if it is a Messages
/// response with usage (read through the one decoder).
pub fn recorded_tokens(x: &Exchange) -> Option<(String, super::Tokens)> {
    let resp = x.response.as_ref()?;
    let ct = header(&resp.headers, "content-type");
    let ResponseBody::Message(m) = read_response(ct, &response_body(resp).bytes) else {
        return None;
    };
    let tokens = super::result::tokens_of(&m.usage)?;
    Some((m.model.clone().unwrap_or_default(), tokens))
}

/// Per-trace input state: thread tracking and what was already seen.
pub struct InputStage {
    trace: usize,
    thread_base: usize,
    threads: ThreadTracker,
    seen_results: HashSet<String>,
    seen_calls: HashSet<String>,
    seen_notes: HashSet<(usize, u64)>,
    /// Thread labels of this trace, by local thread index.
    pub labels: Vec<String>,
}

impl InputStage {
    /// State for trace number `trace`, whose threads are numbered from `thread_base`.
    pub fn new(trace: usize, thread_base: usize) -> Self {
        InputStage {
            trace,
            thread_base,
            threads: ThreadTracker::new(),
            seen_results: HashSet::new(),
            seen_calls: HashSet::new(),
            seen_notes: HashSet::new(),
            labels: Vec::new(),
        }
    }

    /// Threads seen in this trace.
    pub fn thread_count(&self) -> usize {
        self.threads.len()
    }

    /// Reduce one exchange. `Ok(None)` for exchanges that are not Messages requests;
    /// `Err(message)` (naming the exchange and the byte offset) when a Messages request's
    /// body is not a JSON object — the caller counts it and goes on.
    pub fn extract(&mut self, x: &Exchange, seq: usize) -> Result<Option<Extracted>, String> {
        if !x.is_messages() {
            return Ok(None);
        }
        let decoded = request_body(&x.request);
        let body = &decoded.bytes[..];
        let r = MessagesRequest::parse(body).map_err(|e| format!("exchange {}: {e}", x.id))?;
        let local = self.threads.assign(&r);
        while self.labels.len() < self.threads.len() {
            let i = self.labels.len();
            self.labels.push(self.threads.label(i).to_string());
        }
        let thread = self.thread_base + local;
        let mut blocks = Vec::new();
        let mut tools = Vec::new();
        for (i, t) in r.tools.iter().enumerate() {
            let schema = t
                .input_schema
                .as_ref()
                .map(Value::to_string)
                .unwrap_or_default();
            let h = hash_of(&[
                t.name.as_bytes(),
                t.tool_type.as_deref().unwrap_or("").as_bytes(),
                t.description.as_deref().unwrap_or("").as_bytes(),
                schema.as_bytes(),
                &[u8::from(t.defer_loading)],
            ]);
            tools.push((t.name.clone(), h));
            blocks.push(PrefixBlock {
                region: Region::Tools,
                index: i,
                hash: h,
                tokens: estimate_tokens(
                    t.span.len()
                        - t.cache_control
                            .as_ref()
                            .map_or(0, |c| 17 + c.to_string().len())
                            .min(t.span.len()),
                ),
                breakpoint: t.cache_control.as_ref().map(ttl_of),
            });
        }
        let mut system = Vec::new();
        if let Some(s) = &r.system {
            for (i, b) in s.blocks.iter().enumerate() {
                let text = b.text().unwrap_or("");
                // keep the billing fingerprint out of "system changed" comparisons too
                system.push(
                    if text.starts_with(BILLING_HEADER) {
                        BILLING_HEADER
                    } else {
                        text
                    }
                    .to_string(),
                );
                blocks.push(PrefixBlock {
                    region: Region::System,
                    index: i,
                    hash: block_hash(b, body),
                    tokens: block_tokens(b, s.is_string),
                    breakpoint: b.cache_control.as_ref().map(ttl_of),
                });
            }
        }
        for (mi, m) in r.messages.iter().enumerate() {
            for b in &m.content {
                blocks.push(PrefixBlock {
                    region: Region::Messages,
                    index: mi,
                    hash: hash_of(&[m.role.as_bytes(), &block_hash(b, body).to_le_bytes()]),
                    tokens: block_tokens(b, m.content_is_string),
                    breakpoint: b.cache_control.as_ref().map(ttl_of),
                });
            }
        }
        let mut params = Vec::new();
        for key in ["thinking", "tool_choice"] {
            if let Some(v) = r.param(key) {
                params.push((key.to_string(), v.to_string()));
            }
        }
        if let Some(b) = header(&x.request.headers, "anthropic-beta") {
            params.push(("anthropic-beta".to_string(), b.to_string()));
        }
        let response = x.response.as_ref().and_then(|resp| {
            match read_response(
                header(&resp.headers, "content-type"),
                &response_body(resp).bytes,
            ) {
                ResponseBody::Message(m) => Some(m),
                _ => None,
            }
        });
        let output_estimate = response.as_ref().map_or(0, |m| output_bytes(m));
        let request = Request {
            seq,
            trace: self.trace,
            exchange: x.id,
            thread,
            turn: r.turn(),
            at: x.started_at,
            model: r.model.clone().unwrap_or_default(),
            params,
            auto_breakpoint: r.param("cache_control").map(ttl_of),
            blocks,
            tools,
            system,
            total_tokens: estimate_tokens(body.len()),
            recorded: response.as_ref().map(|m| m.usage.clone()),
            fake_server: x.source.kind == SourceKind::Server,
            output_estimate: estimate_tokens(output_estimate),
        };
        let mut out = Extracted {
            request,
            calls: Vec::new(),
            results: Vec::new(),
            notifications: Vec::new(),
            claims_done: response.as_ref().is_some_and(|m| claims_done(m)),
        };
        self.scan_history(&r, x, seq, thread, &mut out);
        if let Some(m) = &response {
            let at = x.ended_at.unwrap_or(x.started_at);
            for (id, name, input) in m.tool_calls() {
                if self.seen_calls.insert(id.to_string()) {
                    out.calls.push(ToolCall {
                        id: id.to_string(),
                        name: name.to_string(),
                        input: input.clone(),
                        thread,
                        issued_by: seq,
                        issued_at: at,
                        result: None,
                    });
                }
            }
        }
        Ok(Some(out))
    }

    fn scan_history(
        &mut self,
        r: &MessagesRequest,
        x: &Exchange,
        seq: usize,
        thread: usize,
        out: &mut Extracted,
    ) {
        for m in &r.messages {
            for b in &m.content {
                match &b.kind {
                    // A call first seen in history: its response was not captured.
                    BlockKind::ToolUse { id, name, input }
                        if m.role == "assistant" && self.seen_calls.insert(id.clone()) =>
                    {
                        out.calls.push(ToolCall {
                            id: id.clone(),
                            name: name.clone(),
                            input: input.clone(),
                            thread,
                            issued_by: seq.saturating_sub(1),
                            issued_at: x.started_at,
                            result: None,
                        });
                    }
                    BlockKind::ToolResult {
                        tool_use_id,
                        text,
                        is_error,
                        references,
                    } if self.seen_results.insert(tool_use_id.clone()) => {
                        let mut full = text.clone();
                        if !references.is_empty() {
                            full.push_str(&references.join("\n"));
                        }
                        out.results.push((
                            tool_use_id.clone(),
                            ToolResult {
                                hash: hash_of(&[full.as_bytes()]),
                                text: cap(&full),
                                is_error: *is_error,
                                carried_by: seq,
                                at: x.started_at,
                            },
                        ));
                    }
                    BlockKind::Text { text } if text.contains("<task-notification>") => {
                        let key = (thread, hash_of(&[text.as_bytes()]));
                        if self.seen_notes.insert(key) {
                            for mut n in parse_notifications(text) {
                                n.thread = thread;
                                n.carried_by = seq;
                                n.at = x.started_at;
                                out.notifications.push(n);
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
    }
}

fn claims_done(m: &ResponseMessage) -> bool {
    const WORDS: &[&str] = &["finished", "completed", "done", "succeeded", "passed"];
    m.content.iter().any(|b| match &b.kind {
        BlockKind::Text { text } => text
            .split(|c: char| !c.is_ascii_alphabetic())
            .any(|w| WORDS.contains(&w.to_ascii_lowercase().as_str())),
        _ => false,
    })
}

fn output_bytes(m: &ResponseMessage) -> usize {
    m.content
        .iter()
        .map(|b| match &b.kind {
            BlockKind::Text { text } => text.len(),
            BlockKind::Thinking { thinking, .. } => thinking.len(),
            BlockKind::ToolUse { name, input, .. } => name.len() + input.to_string().len(),
            _ => 0,
        })
        .sum()
}
