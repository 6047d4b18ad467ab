//! The canonical request every command reads, whatever the dialect it came in
//! ([`MessagesRequest`]): the model, the system prompt (system or instruction text parts),
//! the tool definitions (name, namespace, kind, schema, loaded or deferred, nested
//! declarations), the conversation as messages of content blocks (text, tool calls, tool
//! results, reasoning, images), and every other top-level parameter, each part with its
//! byte span in the body, so sizes are the bytes that crossed the wire. Each dialect's
//! parser fills it ([`super::messages`], [`super::responses`]).
//!
//! The shape is the Messages API's (its names are the canonical ones); a dialect that
//! spreads a part over several places (the Responses API's developer messages, its
//! `additional_tools` input item) records each place's span.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::content::Block;
use super::dialect::Dialect;
use super::span::Span;
use super::ApiError;

/// A parsed request body. Borrow-free: spans index into the body it was parsed from.
#[derive(Clone, Debug)]
pub struct MessagesRequest {
    /// The wire format it was parsed from.
    pub dialect: Dialect,
    /// Size of the whole body in bytes.
    pub body_bytes: usize,
    /// `model`.
    pub model: Option<String>,
    /// `system`, if present.
    pub system: Option<System>,
    /// `tools` in order (empty if absent). Shared with earlier requests that carried
    /// the same definition at the same span ([`super::memo`]).
    pub tools: Vec<Arc<Tool>>,
    /// Span of the top-level `tools` array value, if present.
    pub tools_span: Option<Span>,
    /// Spans of other arrays of tool definitions (Responses: each `additional_tools` input
    /// item's `tools`); their tools are in [`MessagesRequest::tools`] too.
    pub more_tools_spans: Vec<Span>,
    /// `messages` in order. Shared with earlier requests that carried the same message
    /// at the same span ([`super::memo`]).
    pub messages: Vec<Arc<Message>>,
    /// Span of the `messages` array value, if present (Messages). `None` where the
    /// conversation shares its array with other parts (Responses `input`): its bytes are
    /// then those of its messages ([`MessagesRequest::messages_bytes`]).
    pub messages_span: Option<Span>,
    /// Every other top-level member, in document order.
    pub params: Vec<Param>,
}

/// The system prompt: Messages `system` (a string or a list of text blocks); Responses
/// `instructions` and the developer (or system) messages that open `input`.
#[derive(Clone, Debug)]
pub struct System {
    /// Span of the value (Responses: of the first part).
    pub span: Span,
    /// Spans of its other parts, where it has several (Responses: each opening developer
    /// message after the first part).
    pub more_spans: Vec<Span>,
    /// True when sent as a plain string.
    pub is_string: bool,
    /// Blocks (a string system is one block whose span is the string).
    pub blocks: Vec<Block>,
}

impl System {
    /// Bytes of the system prompt as sent: every part's span.
    pub fn bytes(&self) -> usize {
        self.span.len() + self.more_spans.iter().map(Span::len).sum::<usize>()
    }

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
    /// `name` (a server tool without one: its `type`).
    pub name: String,
    /// The namespace it was sent in (Responses `{"type":"namespace","name":…,"tools":[…]}`),
    /// if any: the tool is listed as `namespace.name` ([`Tool::qualified_name`]).
    pub namespace: Option<String>,
    /// Tools declared inside this one's description (Codex's code-mode `exec` lists the
    /// functions its JavaScript may call as `### \`name\`` sections), in order.
    pub nested: Vec<NestedTool>,
    /// `type`: `None` or `custom` for client tools, e.g. `web_search_20250305` or
    /// `tool_search_tool_regex_20251119` for server tools.
    pub tool_type: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// Span of the schema in the body (Messages `input_schema`; Responses `parameters`, or
    /// a custom tool's `format`); [`Tool::input_schema`] parses it.
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

/// A tool declared inside another tool's description: a section of its text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NestedTool {
    /// The declared name.
    pub name: String,
    /// Byte range of its section in the parent's description text (UTF-8 bytes, from the
    /// heading to the next heading or the end).
    pub range: std::ops::Range<usize>,
}

impl NestedTool {
    /// Bytes of its section of the description (UTF-8).
    pub fn bytes(&self) -> usize {
        self.range.len()
    }
}

impl Tool {
    /// The name reports list: `namespace.name` for a tool sent in a namespace, else the
    /// name.
    pub fn qualified_name(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}.{}", self.name),
            None => self.name.clone(),
        }
    }

    /// The text of a nested declaration (its section of the description).
    pub fn nested_text(&self, n: &NestedTool) -> &str {
        self.description
            .as_deref()
            .and_then(|d| d.get(n.range.clone()))
            .unwrap_or("")
    }

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
    /// True when the key is one the dialect's API documents
    /// ([`super::messages::KNOWN_PARAMS`], [`super::responses::KNOWN_PARAMS`]).
    pub known: bool,
}

pub(super) fn parse_at(body: &[u8], span: Span) -> Value {
    serde_json::from_slice(span.slice(body)).unwrap_or(Value::Null)
}

pub(super) fn block_at(body: &[u8], span: Span) -> Block {
    Block::from_value(parse_at(body, span), span)
}

impl System {
    /// Add a message that opens the conversation (a system or developer message of the
    /// OpenAI dialects) to the system prompt `system`: its span and its blocks.
    pub(super) fn add_part(system: &mut Option<System>, span: Span, blocks: Vec<Block>) {
        match system {
            Some(s) => {
                s.more_spans.push(span);
                s.blocks.extend(blocks);
            }
            None => {
                *system = Some(System {
                    span,
                    more_spans: Vec::new(),
                    is_string: false,
                    blocks,
                })
            }
        }
    }
}

impl MessagesRequest {
    /// The start of every dialect's parser: the top-level value of `body` (already checked
    /// to be valid JSON) and an empty canonical request of `dialect` for it.
    ///
    /// Errors: [`ApiError::NotAnObject`] when the top-level value is not an object.
    pub(super) fn start(
        dialect: Dialect,
        body: &[u8],
    ) -> Result<(super::span::Span, MessagesRequest), ApiError> {
        let doc = super::span::document(body);
        if body.get(doc.start) != Some(&b'{') {
            return Err(ApiError::NotAnObject);
        }
        let req = MessagesRequest {
            dialect,
            body_bytes: body.len(),
            model: None,
            system: None,
            tools: Vec::new(),
            tools_span: None,
            more_tools_spans: Vec::new(),
            messages: Vec::new(),
            messages_span: None,
            params: Vec::new(),
        };
        Ok((doc, req))
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

    /// Bytes of the tool definitions as sent: the `tools` array and any other array of
    /// definitions (0 if none).
    pub fn tools_bytes(&self) -> usize {
        self.tools_span.map_or(0, |s| s.len())
            + self.more_tools_spans.iter().map(Span::len).sum::<usize>()
    }

    /// Bytes of the system prompt as sent, every part (0 if absent).
    pub fn system_bytes(&self) -> usize {
        self.system.as_ref().map_or(0, System::bytes)
    }

    /// Bytes of the conversation as sent: the `messages` array, or where it has none of its
    /// own, its messages' spans (0 if absent).
    pub fn messages_bytes(&self) -> usize {
        match self.messages_span {
            Some(s) => s.len(),
            None => self.messages.iter().map(|m| m.span.len()).sum(),
        }
    }

    /// Tools with `defer_loading: true`.
    pub fn deferred_tools(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter().map(|t| &**t).filter(|t| t.defer_loading)
    }

    /// Tool names in order.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }

    /// The text of the tool definitions as sent, every array of them joined by a newline
    /// (for a text diff of the whole list); `None` when there are none.
    pub fn tools_text<'a>(&self, body: &'a [u8]) -> Option<std::borrow::Cow<'a, [u8]>> {
        let mut spans = self.tools_span.iter().chain(&self.more_tools_spans);
        let first = spans.next()?;
        let rest: Vec<&Span> = spans.collect();
        if rest.is_empty() {
            return Some(std::borrow::Cow::Borrowed(first.slice(body)));
        }
        let mut out = first.slice(body).to_vec();
        for s in rest {
            out.push(b'\n');
            out.extend_from_slice(s.slice(body));
        }
        Some(std::borrow::Cow::Owned(out))
    }

    /// The turn number of this request in its thread: how many assistant replies the
    /// history holds (0 for the first request of a conversation). Consecutive assistant
    /// messages count as one reply, and `system`-role messages (Claude Code injects them)
    /// and `developer`-role ones (Responses) do not break a run.
    pub fn turn(&self) -> usize {
        let mut turns = 0;
        let mut in_assistant = false;
        for m in &self.messages {
            match m.role.as_str() {
                "assistant" if !in_assistant => {
                    turns += 1;
                    in_assistant = true;
                }
                "assistant" | "system" | "developer" => {}
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
