//! An OpenAI Responses request body (`POST /v1/responses`, or a WebSocket
//! `response.create` message) read into the canonical request, every part with its span.
//!
//! Source: OpenAI API reference, "Create a model response" (`model`, `input`,
//! `instructions`, `tools`, `tool_choice`, `reasoning`, `text`, `include`, `store`,
//! `prompt_cache_key`, `previous_response_id`, …) and "WebSocket mode" (`response.create`
//! takes the same fields, plus `generate`); the `additional_tools` input item and the
//! namespaces are Codex's, as measured on Codex 0.165.0 and 0.171.0 (2026-12-01).
//!
//! How the Responses shape maps onto the canonical one:
//! - **system**: `instructions`, then the developer (or system) messages that open `input`
//!   before anything else is said: each is one part with its span;
//! - **tools**: the top-level `tools` and the `tools` of every `additional_tools` input
//!   item, namespaces flattened (each tool keeps its namespace); the declarations inside a
//!   tool's description ([`super::nested`]) are its nested tools;
//! - **messages**: the other input items, consecutive items of one side grouped into one
//!   message: the assistant's side (assistant messages, `function_call`,
//!   `custom_tool_call`, `reasoning`, server tool calls) and the user's side (user messages,
//!   `function_call_output`, `custom_tool_call_output`); a developer message later in the
//!   conversation is a message of its own with role `developer`. A message's span runs
//!   from its first item to its last.

use std::cell::RefCell;
use std::sync::Arc;

use super::super::content::{Block, BlockKind};
use super::super::dialect::Dialect;
use super::super::memo::{remembered, Memo};
use super::super::request::{
    parse_at, Message, MessageDerived, MessagesRequest, Param, System, Tool,
};
use super::super::span::{array_items, member, object_members, Member, Span};
use super::super::ApiError;
use super::items::{is_message, item_block, item_side, Side};

thread_local! {
    /// Tool definitions parsed on this thread ([`crate::api::memo`]); a memo of its own,
    /// since a Responses tool at the same bytes and span reads differently from a
    /// Messages one.
    static TOOLS: RefCell<Memo<Vec<Arc<Tool>>>> = RefCell::new(Memo::default());
}

/// Top-level keys of a Responses request (or `response.create` message) that the API
/// documents, other than `model`, `instructions`, `tools` and `input`.
pub const KNOWN_PARAMS: &[&str] = &[
    "type",
    "generate",
    "stream",
    "stream_options",
    "tool_choice",
    "parallel_tool_calls",
    "max_tool_calls",
    "reasoning",
    "text",
    "include",
    "store",
    "metadata",
    "previous_response_id",
    "conversation",
    "prompt",
    "prompt_cache_key",
    "prompt_cache_retention",
    "prompt_cache_options",
    "service_tier",
    "truncation",
    "temperature",
    "top_p",
    "top_logprobs",
    "max_output_tokens",
    "background",
    "user",
    "safety_identifier",
    "context_management",
];

/// Parse a Responses body already checked to be valid JSON.
///
/// Errors: [`ApiError::NotAnObject`] when it is not a JSON object.
pub fn parse(body: &[u8]) -> Result<MessagesRequest, ApiError> {
    let (doc, mut req) = MessagesRequest::start(Dialect::Responses, body)?;
    let mut instructions = None;
    let mut input = None;
    for Member { key, value, .. } in object_members(body, doc) {
        match key.as_str() {
            "model" => req.model = parse_at(body, value).as_str().map(str::to_string),
            "instructions" => instructions = Some(value),
            "tools" => {
                req.tools_span = Some(value);
                req.tools.extend(tools_of(body, value));
            }
            "input" => input = Some(value),
            _ => req.params.push(Param {
                known: KNOWN_PARAMS.contains(&key.as_str()),
                value: parse_at(body, value),
                key,
                span: value,
            }),
        }
    }
    let mut system = instructions.map(|s| instructions_part(body, s));
    if let Some(span) = input {
        read_input(body, span, &mut req, &mut system);
    }
    req.system = system;
    Ok(req)
}

/// `instructions`: a string (one text block), or an array of input items whose text
/// parts are its blocks.
fn instructions_part(body: &[u8], span: Span) -> System {
    let is_string = body.get(span.start) == Some(&b'"');
    let blocks = if is_string {
        vec![text_block(body, span)]
    } else {
        array_items(body, span)
            .into_iter()
            .flat_map(|s| message_blocks(body, s))
            .collect()
    };
    System {
        span,
        more_spans: Vec::new(),
        is_string,
        blocks,
    }
}

/// A string value as a text block whose span is the string.
fn text_block(body: &[u8], span: Span) -> Block {
    Block {
        span,
        cache_control: None,
        kind: BlockKind::Text {
            text: parse_at(body, span).as_str().unwrap_or("").to_string(),
        },
    }
}

/// `input`: a string (one user message) or an array of items.
fn read_input(body: &[u8], span: Span, req: &mut MessagesRequest, system: &mut Option<System>) {
    if body.get(span.start) == Some(&b'"') {
        req.messages.push(Arc::new(message(
            "user",
            span,
            vec![text_block(body, span)],
        )));
        return;
    }
    let mut group: Option<Group> = None;
    let mut opening = true;
    for item in array_items(body, span) {
        let v = parse_at(body, item);
        let side = item_side(&v);
        if side == Side::Tools {
            if let Some(tools) = v.get("tools").and_then(|_| member(body, item, "tools")) {
                req.more_tools_spans.push(tools);
                req.tools.extend(tools_of(body, tools));
            }
            continue;
        }
        if opening && side == Side::Developer {
            System::add_part(system, item, message_blocks(body, item));
            continue;
        }
        opening = false;
        let blocks = if is_message(&v) {
            message_blocks(body, item)
        } else {
            vec![item_block(v, item)]
        };
        match &mut group {
            Some(g) if g.side == side && side != Side::Developer => g.push(item, blocks),
            _ => {
                if let Some(g) = group.take() {
                    req.messages.push(Arc::new(g.finish()));
                }
                group = Some(Group::new(side, item, blocks));
            }
        }
    }
    if let Some(g) = group {
        req.messages.push(Arc::new(g.finish()));
    }
}

/// The content parts of a message item as blocks (a string `content` is one text block).
pub(super) fn message_blocks(body: &[u8], item: Span) -> Vec<Block> {
    let Some(content) = member(body, item, "content") else {
        return Vec::new();
    };
    if body.get(content.start) == Some(&b'"') {
        return vec![text_block(body, content)];
    }
    array_items(body, content)
        .into_iter()
        .map(|p| super::items::part_block(parse_at(body, p), p))
        .collect()
}

/// Consecutive input items of one side, becoming one message.
struct Group {
    side: Side,
    first: Span,
    last: Span,
    blocks: Vec<Block>,
}

impl Group {
    fn new(side: Side, item: Span, blocks: Vec<Block>) -> Group {
        Group {
            side,
            first: item,
            last: item,
            blocks,
        }
    }

    fn push(&mut self, item: Span, blocks: Vec<Block>) {
        self.last = item;
        self.blocks.extend(blocks);
    }

    fn finish(self) -> Message {
        let span = Span::new(self.first.start, self.last.end);
        message(self.side.role(), span, self.blocks)
    }
}

fn message(role: &str, span: Span, content: Vec<Block>) -> Message {
    Message {
        span,
        role: role.to_string(),
        content_is_string: false,
        content,
        derived: MessageDerived::default(),
    }
}

/// The tools of an array of definitions, namespaces flattened.
fn tools_of(body: &[u8], span: Span) -> Vec<Arc<Tool>> {
    array_items(body, span)
        .into_iter()
        .flat_map(|s| {
            let tools = remembered(&TOOLS, body, s, || {
                tool_entry(body, s, None)
                    .into_iter()
                    .map(Arc::new)
                    .collect()
            });
            tools.iter().cloned().collect::<Vec<_>>()
        })
        .collect()
}

/// One entry of a tools array: a tool, or a namespace's tools.
fn tool_entry(body: &[u8], span: Span, namespace: Option<&str>) -> Vec<Tool> {
    let mut t = Tool {
        span,
        namespace: namespace.map(str::to_string),
        ..Tool::default()
    };
    let mut inner = None;
    for m in object_members(body, span) {
        let v = || parse_at(body, m.value);
        match m.key.as_str() {
            "name" => t.name = v().as_str().unwrap_or("").to_string(),
            "type" => t.tool_type = v().as_str().map(str::to_string),
            "description" => t.description = v().as_str().map(str::to_string),
            "parameters" | "format" | "input_schema" => t.schema_span = Some(m.value),
            "defer_loading" => t.defer_loading = v().as_bool().unwrap_or(false),
            "tools" => inner = Some(m.value),
            _ => {}
        }
    }
    if t.tool_type.as_deref() == Some("namespace") {
        if let Some(inner) = inner {
            return array_items(body, inner)
                .into_iter()
                .flat_map(|s| tool_entry(body, s, Some(&t.name)))
                .collect();
        }
    }
    if t.name.is_empty() {
        t.name = t.tool_type.clone().unwrap_or_default();
    }
    t.nested = super::nested::declarations(t.description.as_deref().unwrap_or(""));
    vec![t]
}
