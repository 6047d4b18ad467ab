//! JSON-RPC pairing: every request of an MCP server's records matched with its response
//! (same id, opposite direction, first open request first), and what the handshake or
//! per-request metadata says about the protocol generation and task support.
//!
//! Sources: MCP specification 2025-11-25 (Lifecycle: `initialize`, capabilities `tasks`;
//! Tasks) and 2026-07-28 (`server/discover`, `_meta` keys
//! `io.modelcontextprotocol/protocolVersion` and `…/clientCapabilities`), and the Tasks
//! extension `io.modelcontextprotocol/tasks`.

use std::collections::{HashMap, VecDeque};

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::trace::mcp::{McpDirection, McpTransport};
use crate::trace::McpRecord;

/// `_meta` key of the protocol version a 2026-07-28 request speaks.
pub const PROTOCOL_VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key of a 2026-07-28 request's client capabilities.
pub const CLIENT_CAPABILITIES_META: &str = "io.modelcontextprotocol/clientCapabilities";
/// Identifier of the Tasks extension (2026-07-28).
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// `_meta` key in which Claude Code names the `tool_use` a `tools/call` serves.
pub const TOOL_USE_ID_META: &str = "claudecode/toolUseId";

/// One request and, when seen, its response.
#[derive(Clone, Debug)]
pub struct Call {
    /// Index of the trace among the inputs.
    pub trace: usize,
    /// Server name.
    pub server: String,
    /// Method.
    pub method: String,
    /// `params` (Null when absent).
    pub params: Value,
    /// True when the client sent it (false: a server-to-client request).
    pub to_server: bool,
    /// When the request was seen.
    pub at: DateTime<Utc>,
    /// When the response was seen.
    pub answered_at: Option<DateTime<Utc>>,
    /// `result` of the response.
    pub result: Option<Value>,
    /// `error` of the response.
    pub error: Option<Value>,
    /// When the sender cancelled it (`notifications/cancelled` naming its id).
    pub cancelled_at: Option<DateTime<Utc>>,
}

/// What became of a request: answered, answered with an error, cancelled by its sender
/// and never answered, answered although cancelled (the reply came after the cancel, and
/// the sender should ignore it), or never answered.
/// Source: MCP specification 2025-11-25, "Cancellation" (`notifications/cancelled`
/// `{requestId, reason}`: "the sender of the cancellation notification SHOULD ignore any
/// response to the request that arrives afterward").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A result.
    Answered,
    /// A JSON-RPC error.
    Error,
    /// Cancelled, no reply.
    Cancelled,
    /// Cancelled, then replied to anyway.
    AnsweredAfterCancel,
    /// No reply and no cancel.
    Unanswered,
}

impl Call {
    /// What became of the request.
    pub fn outcome(&self) -> Outcome {
        match (self.cancelled_at, self.answered_at) {
            (Some(c), Some(a)) if a >= c => Outcome::AnsweredAfterCancel,
            (Some(_), None) => Outcome::Cancelled,
            (_, Some(_)) if self.error.is_some() => Outcome::Error,
            (_, Some(_)) => Outcome::Answered,
            (None, None) => Outcome::Unanswered,
        }
    }

    /// Latency in milliseconds, when answered.
    pub fn latency_ms(&self) -> Option<f64> {
        self.answered_at
            .map(|a| (a - self.at).num_microseconds().unwrap_or(0) as f64 / 1000.0)
    }

    /// `params._meta[key]`.
    pub fn meta(&self, key: &str) -> Option<&Value> {
        self.params.get("_meta")?.get(key)
    }
}

/// A notification (method, no id).
#[derive(Clone, Debug)]
pub struct Note {
    /// Server name.
    pub server: String,
    /// Method.
    pub method: String,
    /// `params`.
    pub params: Value,
    /// True when the client sent it.
    pub to_server: bool,
    /// When it was seen.
    pub at: DateTime<Utc>,
}

/// What one server's records say about it.
#[derive(Clone, Debug, Default)]
pub struct ServerFacts {
    /// Transport of its records.
    pub transport: Option<McpTransport>,
    /// Messages recorded (both directions).
    pub messages: usize,
    /// Messages kept raw (not JSON, or cut short).
    pub raw_messages: usize,
    /// Negotiated protocol version.
    pub protocol_version: Option<String>,
    /// The client declared task support (2025-11-25 capability or 2026-07-28 extension).
    pub client_tasks: bool,
    /// The server announced task support.
    pub server_tasks: bool,
    /// Last lifecycle event (`exited: exit status: 3`).
    pub last_event: Option<String>,
}

/// Facts per `(trace, server)`, in order of first appearance.
pub type FactsByServer = Vec<((usize, String), ServerFacts)>;

/// Pair requests with responses, per trace and server, in record order.
pub fn pair(records: &[(usize, McpRecord)]) -> (Vec<Call>, Vec<Note>, FactsByServer) {
    let mut calls: Vec<Call> = Vec::new();
    let mut notes = Vec::new();
    let mut open: HashMap<(usize, String, bool, String), VecDeque<usize>> = HashMap::new();
    let mut facts: FactsByServer = Vec::new();
    for (trace, r) in records {
        let key = (*trace, r.server.clone());
        let fi = match facts.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                facts.push((key.clone(), ServerFacts::default()));
                facts.len() - 1
            }
        };
        let f = &mut facts[fi].1;
        f.transport.get_or_insert(r.transport);
        if r.direction == McpDirection::Event {
            f.last_event = Some(format!(
                "{}: {}",
                r.event.as_deref().unwrap_or("event"),
                r.detail.as_deref().unwrap_or("")
            ));
            continue;
        }
        if r.message.is_none() {
            if r.size > 0 {
                f.messages += 1;
                f.raw_messages += 1;
            }
            continue;
        }
        let to_server = r.direction == McpDirection::ToServer;
        for m in messages(r.message.as_ref().expect("checked")) {
            f.messages += 1;
            let id = m.get("id").filter(|v| !v.is_null()).map(Value::to_string);
            let method = m.get("method").and_then(Value::as_str);
            match (method, id) {
                (Some(method), Some(id)) => {
                    open.entry((*trace, r.server.clone(), to_server, id))
                        .or_default()
                        .push_back(calls.len());
                    calls.push(Call {
                        trace: *trace,
                        server: r.server.clone(),
                        method: method.to_string(),
                        params: m.get("params").cloned().unwrap_or(Value::Null),
                        to_server,
                        at: r.at,
                        answered_at: None,
                        result: None,
                        error: None,
                        cancelled_at: None,
                    });
                }
                (Some("notifications/cancelled"), None) => {
                    // The canceller sent the request: its open request with that id.
                    let id = m.pointer("/params/requestId").map(Value::to_string);
                    let q = id.and_then(|id| open.get(&(*trace, r.server.clone(), to_server, id)));
                    if let Some(&i) = q.and_then(|q| q.front()) {
                        calls[i].cancelled_at.get_or_insert(r.at);
                    }
                    notes.push(Note {
                        server: r.server.clone(),
                        method: "notifications/cancelled".into(),
                        params: m.get("params").cloned().unwrap_or(Value::Null),
                        to_server,
                        at: r.at,
                    });
                }
                (Some(method), None) => notes.push(Note {
                    server: r.server.clone(),
                    method: method.to_string(),
                    params: m.get("params").cloned().unwrap_or(Value::Null),
                    to_server,
                    at: r.at,
                }),
                (None, Some(id)) => {
                    let q = open.get_mut(&(*trace, r.server.clone(), !to_server, id));
                    if let Some(i) = q.and_then(VecDeque::pop_front) {
                        let c = &mut calls[i];
                        c.answered_at = Some(r.at);
                        c.result = m.get("result").cloned();
                        c.error = m.get("error").cloned();
                    }
                }
                (None, None) => {}
            }
        }
    }
    for c in &calls {
        let f = &mut facts
            .iter_mut()
            .find(|(k, _)| k.0 == c.trace && k.1 == c.server)
            .expect("server seen")
            .1;
        learn(f, c);
    }
    (calls, notes, facts)
}

/// The messages of a record: one object, or each element of a batch.
fn messages(v: &Value) -> Vec<&Value> {
    match v {
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    }
}

/// Update a server's facts from one call.
fn learn(f: &mut ServerFacts, c: &Call) {
    let ok = c.result.as_ref();
    match c.method.as_str() {
        "initialize" => {
            if c.params.pointer("/capabilities/tasks").is_some() {
                f.client_tasks = true;
            }
            if let Some(r) = ok {
                if let Some(v) = r.get("protocolVersion").and_then(Value::as_str) {
                    f.protocol_version = Some(v.to_string());
                }
                if r.pointer("/capabilities/tasks").is_some() {
                    f.server_tasks = true;
                }
            }
        }
        "server/discover"
            if ok
                .and_then(|r| r.pointer("/capabilities/extensions"))
                .is_some_and(|e| e.get(TASKS_EXTENSION).is_some()) =>
        {
            f.server_tasks = true;
        }
        _ => {}
    }
    if c.meta(CLIENT_CAPABILITIES_META)
        .and_then(|m| m.get("extensions"))
        .is_some_and(|e| e.get(TASKS_EXTENSION).is_some())
    {
        f.client_tasks = true;
    }
    // A stateless request that was answered (not refused) fixes the version, unless a
    // handshake already did.
    if let (Some(v), Some(_)) = (c.meta(PROTOCOL_VERSION_META).and_then(Value::as_str), ok) {
        if f.protocol_version.is_none() {
            f.protocol_version = Some(v.to_string());
        }
    }
}
