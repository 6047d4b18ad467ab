//! `MessagesRequest`: a typed, tolerant view of a `POST /v1/messages` body in which every
//! part carries its byte span, so sizes are the bytes that crossed the wire.
//!
//! Source: Anthropic Messages API reference (`model`, `system`, `tools`, `messages`,
//! `max_tokens`, `thinking`, `tool_choice`, `stream`, `metadata`, ...). Unknown top-level
//! keys are kept in [`MessagesRequest::params`] and flagged by [`Param::known`].

use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::content::Block;
use super::memo::{remembered, Memo};
use super::span::{array_items, document, object_members, Member, Span};
use super::ApiError;

thread_local! {
    /// Messages parsed on this thread, shared by the requests that resend them
    /// ([`super::memo`]).
    static MESSAGES: RefCell<Memo<Message>> = RefCell::new(Memo::default());
    /// Tool definitions parsed on this thread, likewise.
    static TOOLS: RefCell<Memo<Tool>> = RefCell::new(Memo::default());
}

/// Top-level keys of a Messages request that the API documents, other than `model`,
/// `system`, `tools` and `messages`.
pub const KNOWN_PARAMS: &[&str] = &[
    "max_tokens",
    "thinking",
    "context_management",
    "output_config",
    "metadata",
    "tool_choice",
    "stream",
    "temperature",
    "top_p",
    "top_k",
    "stop_sequences",
    "service_tier",
    "container",
    "mcp_servers",
];

/// A parsed request body. Borrow-free: spans index into the body it was parsed from.
#[derive(Clone, Debug)]
pub struct MessagesRequest {
    /// Size of the whole body in bytes.
    pub body_bytes: usize,
    /// `model`.
    pub model: Option<String>,
    /// `system`, if present.
    pub system: Option<System>,
    /// `tools` in order (empty if absent). Shared with earlier requests that carried
    /// the same definition at the same span ([`super::memo`]).
    pub tools: Vec<Arc<Tool>>,
    /// Span of the `tools` array value, if present.
    pub tools_span: Option<Span>,
    /// `messages` in order. Shared with earlier requests that carried the same message
    /// at the same span ([`super::memo`]).
    pub messages: Vec<Arc<Message>>,
    /// Span of the `messages` array value, if present.
    pub messages_span: Option<Span>,
    /// Every other top-level member, in document order.
    pub params: Vec<Param>,
}

/// The `system` parameter: a string or a list of text blocks.
#[derive(Clone, Debug)]
pub struct System {
    /// Span of the value.
    pub span: Span,
    /// True when sent as a plain string.
    pub is_string: bool,
    /// Blocks (a string system is one block whose span is the string).
    pub blocks: Vec<Block>,
}

impl System {
    /// All system text, blocks joined with a blank line.
    pub fn text(&self) -> String {
        let parts: Vec<&str> = self.blocks.iter().filter_map(Block::text).collect();
        parts.join("\n\n")
    }
}

/// A tool definition.
#[derive(Clone, Debug, Default)]
pub struct Tool {
    /// Span of the tool's object.
    pub span: Span,
    /// `name`.
    pub name: String,
    /// `type`: `None` or `custom` for client tools, e.g. `web_search_20250305` or
    /// `tool_search_tool_regex_20251119` for server tools.
    pub tool_type: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// Span of `input_schema` in the body; [`Tool::input_schema`] parses it.
    pub schema_span: Option<Span>,
    /// `defer_loading: true` (loaded only through tool search).
    pub defer_loading: bool,
    /// `cache_control`, if set.
    pub cache_control: Option<Value>,
    /// Values computed from the definition once (it is shared between requests).
    pub derived: ToolDerived,
}

/// What is computed from a tool definition once and kept with it: a definition is shared
/// by every request that carries it at the same span ([`super::memo`]), and these depend
/// only on its bytes.
#[derive(Clone, Debug, Default)]
pub struct ToolDerived {
    /// The definition's prompt-cache hash ([`super::cache`]).
    pub(crate) cache_hash: OnceLock<u64>,
}

impl Tool {
    /// True for a server tool (a `type` other than `custom`).
    pub fn is_server_tool(&self) -> bool {
        matches!(&self.tool_type, Some(t) if t != "custom")
    }

    /// `input_schema`, parsed from `body` (the request body this tool was parsed from) on
    /// demand: only the diff of a changed tool and the prompt report look inside a schema,
    /// and parsing every schema of a 200-tool list up front was a third of parsing the
    /// request. `None` when the tool has no `input_schema`.
    pub fn input_schema(&self, body: &[u8]) -> Option<Value> {
        self.schema_span.map(|s| parse_at(body, s))
    }
}

/// One message of the conversation.
#[derive(Clone, Debug)]
pub struct Message {
    /// Span of the message object.
    pub span: Span,
    /// `role`: `user`, `assistant` or (Claude Code) `system`; other values kept.
    pub role: String,
    /// True when `content` was a plain string (then `content` holds one text block).
    pub content_is_string: bool,
    /// Content blocks.
    pub content: Vec<Block>,
    /// Values computed from the message once (it is shared between requests).
    pub derived: MessageDerived,
}

/// What is computed from a message once and kept with it: a message is shared by every
/// request that carries it at the same span ([`super::memo`]), and these depend only on
/// its bytes.
#[derive(Clone, Debug, Default)]
pub struct MessageDerived {
    /// [`super::thread::message_digest`].
    pub(crate) digest: OnceLock<[u8; 16]>,
    /// The prompt-cache hash of each content block, in order ([`super::cache`]).
    pub(crate) block_hashes: OnceLock<Vec<u64>>,
}

impl Message {
    /// All text of the message's text blocks, joined with newlines.
    pub fn text(&self) -> String {
        let parts: Vec<&str> = self
            .content
            .iter()
            .filter(|b| b.block_type() == "text")
            .filter_map(Block::text)
            .collect();
        parts.join("\n")
    }
}

/// A top-level member other than model/system/tools/messages.
#[derive(Clone, Debug)]
pub struct Param {
    /// The key.
    pub key: String,
    /// The value.
    pub value: Value,
    /// Span of the value.
    pub span: Span,
    /// True when the key is one of [`KNOWN_PARAMS`].
    pub known: bool,
}

fn parse_at(body: &[u8], span: Span) -> Value {
    serde_json::from_slice(span.slice(body)).unwrap_or(Value::Null)
}

fn block_at(body: &[u8], span: Span) -> Block {
    Block::from_value(parse_at(body, span), span)
}

impl MessagesRequest {
    /// Parse a request body.
    ///
    /// Errors: [`ApiError::InvalidJson`] (with the byte offset) when the body is not JSON;
    /// [`ApiError::NotAnObject`] when it is JSON but not an object. Missing or oddly typed
    /// fields are not errors: they are left empty.
    pub fn parse(body: &[u8]) -> Result<MessagesRequest, ApiError> {
        super::check_json(body)?;
        Self::parse_with(body, true)
    }

    /// [`MessagesRequest::parse`] of a body the caller already knows to be one valid JSON
    /// document in UTF-8 (a trace body read from `"json"`: [`crate::trace::Body::is_known_json`]),
    /// so it is not checked again. Errors: [`ApiError::NotAnObject`].
    pub(crate) fn parse_known_json(body: &[u8]) -> Result<MessagesRequest, ApiError> {
        Self::parse_with(body, true)
    }

    /// Like [`MessagesRequest::parse`] but only the top level: `model`, parameters and the
    /// spans of `system`, `tools` and `messages`, whose contents stay unparsed (empty
    /// `tools` and `messages`). Several times cheaper on large bodies; the stub server uses
    /// it.
    pub fn parse_head(body: &[u8]) -> Result<MessagesRequest, ApiError> {
        super::check_json(body)?;
        Self::parse_with(body, false)
    }

    /// Parse a body already checked to be valid JSON.
    fn parse_with(body: &[u8], deep: bool) -> Result<MessagesRequest, ApiError> {
        let doc = document(body);
        if body.get(doc.start) != Some(&b'{') {
            return Err(ApiError::NotAnObject);
        }
        let mut req = MessagesRequest {
            body_bytes: body.len(),
            model: None,
            system: None,
            tools: Vec::new(),
            tools_span: None,
            messages: Vec::new(),
            messages_span: None,
            params: Vec::new(),
        };
        for Member { key, value, .. } in object_members(body, doc) {
            match key.as_str() {
                "model" => req.model = parse_at(body, value).as_str().map(str::to_string),
                "system" if !deep => {
                    req.system = Some(System {
                        span: value,
                        is_string: body.get(value.start) == Some(&b'"'),
                        blocks: Vec::new(),
                    })
                }
                "tools" | "messages" if !deep => {
                    let slot = if key == "tools" {
                        &mut req.tools_span
                    } else {
                        &mut req.messages_span
                    };
                    *slot = Some(value);
                }
                "system" => req.system = Some(parse_system(body, value)),
                "tools" => {
                    req.tools_span = Some(value);
                    req.tools = array_items(body, value)
                        .into_iter()
                        .map(|s| remembered(&TOOLS, body, s, || parse_tool(body, s)))
                        .collect();
                }
                "messages" => {
                    req.messages_span = Some(value);
                    req.messages = array_items(body, value)
                        .into_iter()
                        .map(|s| remembered(&MESSAGES, body, s, || parse_message(body, s)))
                        .collect();
                }
                _ => req.params.push(Param {
                    known: KNOWN_PARAMS.contains(&key.as_str()),
                    value: parse_at(body, value),
                    key,
                    span: value,
                }),
            }
        }
        Ok(req)
    }

    /// The value of a top-level parameter.
    pub fn param(&self, key: &str) -> Option<&Value> {
        self.params.iter().find(|p| p.key == key).map(|p| &p.value)
    }

    /// `stream: true`.
    pub fn stream(&self) -> bool {
        self.param("stream")
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// `max_tokens`.
    pub fn max_tokens(&self) -> Option<u64> {
        self.param("max_tokens").and_then(Value::as_u64)
    }

    /// Bytes of the `tools` array as sent (0 if absent).
    pub fn tools_bytes(&self) -> usize {
        self.tools_span.map_or(0, |s| s.len())
    }

    /// Bytes of the `system` value as sent (0 if absent).
    pub fn system_bytes(&self) -> usize {
        self.system.as_ref().map_or(0, |s| s.span.len())
    }

    /// Bytes of the `messages` array as sent (0 if absent).
    pub fn messages_bytes(&self) -> usize {
        self.messages_span.map_or(0, |s| s.len())
    }

    /// Tools with `defer_loading: true`.
    pub fn deferred_tools(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter().map(|t| &**t).filter(|t| t.defer_loading)
    }

    /// Tool names in order.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }

    /// The turn number of this request in its thread: how many assistant replies the
    /// history holds (0 for the first request of a conversation). Consecutive assistant
    /// messages count as one reply, and `system`-role messages (Claude Code injects them)
    /// do not break a run.
    pub fn turn(&self) -> usize {
        let mut turns = 0;
        let mut in_assistant = false;
        for m in &self.messages {
            match m.role.as_str() {
                "assistant" if !in_assistant => {
                    turns += 1;
                    in_assistant = true;
                }
                "assistant" | "system" => {}
                _ => in_assistant = false,
            }
        }
        turns
    }

    /// The first user message's text (used to tell threads apart).
    pub fn first_user_text(&self) -> String {
        self.messages
            .iter()
            .find(|m| m.role == "user")
            .map(|m| m.text())
            .unwrap_or_default()
    }
}

fn parse_system(body: &[u8], span: Span) -> System {
    if body.get(span.start) == Some(&b'"') {
        let text = parse_at(body, span).as_str().unwrap_or("").to_string();
        return System {
            span,
            is_string: true,
            blocks: vec![Block {
                span,
                cache_control: None,
                kind: super::BlockKind::Text { text },
            }],
        };
    }
    System {
        span,
        is_string: false,
        blocks: array_items(body, span)
            .into_iter()
            .map(|s| block_at(body, s))
            .collect(),
    }
}

fn parse_tool(body: &[u8], span: Span) -> Tool {
    let mut t = Tool {
        span,
        ..Tool::default()
    };
    for m in object_members(body, span) {
        let v = || parse_at(body, m.value);
        match m.key.as_str() {
            "name" => t.name = v().as_str().unwrap_or("").to_string(),
            "type" => t.tool_type = v().as_str().map(str::to_string),
            "description" => t.description = v().as_str().map(str::to_string),
            "input_schema" => t.schema_span = Some(m.value),
            "defer_loading" => t.defer_loading = v().as_bool().unwrap_or(false),
            "cache_control" => t.cache_control = Some(v()),
            _ => {}
        }
    }
    t
}

fn parse_message(body: &[u8], span: Span) -> Message {
    let mut msg = Message {
        span,
        role: String::new(),
        content_is_string: false,
        content: Vec::new(),
        derived: MessageDerived::default(),
    };
    for m in object_members(body, span) {
        match m.key.as_str() {
            "role" => msg.role = parse_at(body, m.value).as_str().unwrap_or("").to_string(),
            "content" if body.get(m.value.start) == Some(&b'"') => {
                msg.content_is_string = true;
                let text = parse_at(body, m.value).as_str().unwrap_or("").to_string();
                msg.content = vec![Block {
                    span: m.value,
                    cache_control: None,
                    kind: super::BlockKind::Text { text },
                }];
            }
            "content" => {
                msg.content = array_items(body, m.value)
                    .into_iter()
                    .map(|s| block_at(body, s))
                    .collect();
            }
            _ => {}
        }
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::BlockKind;

    const BODY: &str = r#"{"model":"claude-x","max_tokens":32000,"system":[{"type":"text","text":"You are A."},{"type":"text","text":"B","cache_control":{"type":"ephemeral"}}],"tools":[{"name":"Bash","description":"run","input_schema":{"type":"object","properties":{"command":{"type":"string"}}}},{"name":"Cron","defer_loading":true,"input_schema":{}},{"type":"web_search_20250305","name":"web_search"}],"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"a b"}]}],"stream":true,"diagnostics":{"x":1}}"#;

    #[test]
    fn parts_and_wire_sizes() {
        let b = BODY.as_bytes();
        let r = MessagesRequest::parse(b).unwrap();
        assert_eq!(r.model.as_deref(), Some("claude-x"));
        assert_eq!(r.tool_names(), vec!["Bash", "Cron", "web_search"]);
        // tools bytes = the literal `[...]` after "tools":
        let start = BODY.find(r#""tools":"#).unwrap() + 8;
        let end = BODY.find(r#","messages""#).unwrap();
        assert_eq!(r.tools_bytes(), end - start);
        assert_eq!(r.deferred_tools().count(), 1);
        assert!(r.tools[2].is_server_tool());
        assert!(!r.tools[0].is_server_tool());
        let sys = r.system.as_ref().unwrap();
        assert_eq!(sys.blocks.len(), 2);
        assert!(sys.blocks[1].cache_control.is_some());
        assert_eq!(sys.text(), "You are A.\n\nB");
        assert_eq!(r.messages.len(), 3);
        assert!(r.messages[0].content_is_string);
        assert_eq!(r.turn(), 1);
        let split = br#"{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"t"},
            {"role":"system","content":"s"},{"role":"assistant","content":[{"type":"tool_use","id":"1","name":"B","input":{}}]},
            {"role":"user","content":"r"},{"role":"system","content":"s"},{"role":"assistant","content":"x"},{"role":"user","content":"y"}]}"#;
        assert_eq!(MessagesRequest::parse(split).unwrap().turn(), 2);
        assert_eq!(r.first_user_text(), "hi");
        match &r.messages[2].content[0].kind {
            BlockKind::ToolResult { text, .. } => assert_eq!(text, "a b"),
            k => panic!("{k:?}"),
        }
        assert!(r.stream());
        assert_eq!(r.max_tokens(), Some(32000));
        let diag = r.params.iter().find(|p| p.key == "diagnostics").unwrap();
        assert!(!diag.known);
        assert_eq!(diag.span.slice(b), br#"{"x":1}"#);
    }

    #[test]
    fn head_only_keeps_spans_and_params() {
        let b = BODY.as_bytes();
        let (full, head) = (
            MessagesRequest::parse(b).unwrap(),
            MessagesRequest::parse_head(b).unwrap(),
        );
        assert!(head.tools.is_empty() && head.messages.is_empty());
        assert_eq!(head.tools_bytes(), full.tools_bytes());
        assert_eq!(head.messages_bytes(), full.messages_bytes());
        assert_eq!(head.system_bytes(), full.system_bytes());
        assert_eq!(head.model, full.model);
        assert!(head.stream());
    }

    #[test]
    fn invalid_json_names_offset() {
        let e = MessagesRequest::parse(b"{\"model\": }").unwrap_err();
        assert!(e.to_string().contains("byte"), "{e}");
        assert!(matches!(
            MessagesRequest::parse(b"[1]"),
            Err(ApiError::NotAnObject)
        ));
    }

    #[test]
    fn a_resent_history_is_shared_and_a_shifted_one_keeps_its_own_spans() {
        let history = format!(
            r#"[{{"role":"user","content":"{}"}},{{"role":"assistant","content":[{{"type":"text","text":"{}"}}]}}]"#,
            "q".repeat(300),
            "a".repeat(300)
        );
        let turn1 = format!(r#"{{"model":"m","messages":{history},"max_tokens":1}}"#);
        let turn2 = format!(r#"{{"model":"m","messages":{history},"max_tokens":2}}"#);
        // The same messages one byte further on: offsets differ.
        let shifted = format!(r#"{{"model":"mm","messages":{history},"max_tokens":1}}"#);
        let a = MessagesRequest::parse(turn1.as_bytes()).unwrap();
        let b = MessagesRequest::parse(turn2.as_bytes()).unwrap();
        let c = MessagesRequest::parse(shifted.as_bytes()).unwrap();
        assert!(Arc::ptr_eq(&a.messages[1], &b.messages[1]));
        assert!(!Arc::ptr_eq(&a.messages[1], &c.messages[1]));
        for (r, body) in [(&a, &turn1), (&c, &shifted)] {
            let m = &r.messages[1];
            assert!(m
                .span
                .slice(body.as_bytes())
                .starts_with(br#"{"role":"assistant""#));
            assert_eq!(
                m.content[0].span.slice(body.as_bytes())[..15],
                *br#"{"type":"text","#
            );
            assert_eq!(m.content[0].text(), Some("a".repeat(300).as_str()));
        }
    }
}
