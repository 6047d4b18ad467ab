//! A Chat Completions request body read into the canonical request, every part with its
//! span.
//!
//! How the Chat Completions shape maps onto the canonical one:
//! - **system**: the `system` and `developer` messages that open `messages`, each one
//!   part with its span; a later one is a message of its own (role `system`/`developer`);
//! - **tools**: `tools[]` entries `{type:"function", function:{name, description,
//!   parameters, strict}}`; the schema is `function.parameters`;
//! - **messages**: the other messages, consecutive ones of one side grouped: the
//!   assistant's (`content` text and each `tool_calls[]` entry as a tool call whose
//!   `function.arguments` JSON string is its input) and the user's (`user` messages and
//!   `tool` messages, each a tool result naming its `tool_call_id`). A message's span runs
//!   from its first item to its last; the conversation has no span of its own, since the
//!   system prompt shares its array.

use std::cell::RefCell;
use std::sync::Arc;

use serde_json::Value;

use super::super::content::{Block, BlockKind};
use super::super::dialect::Dialect;
use super::super::memo::{remembered, Memo};
use super::super::request::{
    parse_at, Message, MessageDerived, MessagesRequest, Param, System, Tool,
};
use super::super::span::{array_items, member, object_members, Span};
use super::super::ApiError;

thread_local! {
    /// Tool definitions parsed on this thread ([`crate::api::memo`]).
    static TOOLS: RefCell<Memo<Vec<Arc<Tool>>>> = RefCell::new(Memo::default());
}

/// Top-level keys of a Chat Completions request that the API documents, other than
/// `model`, `messages` and `tools`.
pub const KNOWN_PARAMS: &[&str] = &[
    "stream",
    "stream_options",
    "tool_choice",
    "parallel_tool_calls",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "n",
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "logit_bias",
    "logprobs",
    "top_logprobs",
    "response_format",
    "seed",
    "service_tier",
    "store",
    "metadata",
    "user",
    "safety_identifier",
    "prompt_cache_key",
    "prompt_cache_retention",
    "reasoning_effort",
    "verbosity",
    "modalities",
    "audio",
    "prediction",
    "web_search_options",
    "functions",
    "function_call",
];

/// Parse a Chat Completions body already checked to be valid JSON.
///
/// Errors: [`ApiError::NotAnObject`] when it is not a JSON object.
pub fn parse(body: &[u8]) -> Result<MessagesRequest, ApiError> {
    let (doc, mut req) = MessagesRequest::start(Dialect::ChatCompletions, body)?;
    for m in object_members(body, doc) {
        match m.key.as_str() {
            "model" => req.model = parse_at(body, m.value).as_str().map(str::to_string),
            "tools" => {
                req.tools_span = Some(m.value);
                req.tools.extend(tools_of(body, m.value));
            }
            "messages" => read_messages(body, m.value, &mut req),
            _ => req.params.push(Param {
                known: KNOWN_PARAMS.contains(&m.key.as_str()),
                value: parse_at(body, m.value),
                key: m.key,
                span: m.value,
            }),
        }
    }
    Ok(req)
}

/// Which side of the conversation a message is on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Assistant,
    User,
    /// `system` or `developer` (the role is kept).
    Instructions,
}

fn side_of(role: &str) -> Side {
    match role {
        "assistant" => Side::Assistant,
        "system" | "developer" => Side::Instructions,
        _ => Side::User,
    }
}

/// `messages`: the opening instructions become the system prompt, the rest messages.
fn read_messages(body: &[u8], span: Span, req: &mut MessagesRequest) {
    let mut opening = true;
    let mut group: Option<(Side, String, Span, Span, Vec<Block>)> = None;
    for item in array_items(body, span) {
        let role = parse_at(body, member(body, item, "role").unwrap_or_default())
            .as_str()
            .unwrap_or("user")
            .to_string();
        let side = side_of(&role);
        let blocks = message_blocks(body, item, &role);
        if opening && side == Side::Instructions {
            System::add_part(&mut req.system, item, blocks);
            continue;
        }
        opening = false;
        match &mut group {
            Some((s, _, _, last, bs)) if *s == side && side != Side::Instructions => {
                *last = item;
                bs.extend(blocks);
            }
            _ => {
                if let Some(g) = group.take() {
                    req.messages.push(Arc::new(finish(g)));
                }
                let role = if side == Side::User {
                    "user".into()
                } else {
                    role
                };
                group = Some((side, role, item, item, blocks));
            }
        }
    }
    if let Some(g) = group {
        req.messages.push(Arc::new(finish(g)));
    }
}

fn finish((_, role, first, last, content): (Side, String, Span, Span, Vec<Block>)) -> Message {
    Message {
        span: Span::new(first.start, last.end),
        role,
        content_is_string: false,
        content,
        derived: MessageDerived::default(),
    }
}

/// One message's blocks: a `tool` message is one tool result; otherwise its content (a
/// string, or parts) and, for the assistant, its tool calls.
fn message_blocks(body: &[u8], item: Span, role: &str) -> Vec<Block> {
    let content = member(body, item, "content");
    if role == "tool" {
        let v = parse_at(body, item);
        return vec![Block {
            span: item,
            cache_control: None,
            kind: BlockKind::ToolResult {
                tool_use_id: str_of(&v, "tool_call_id"),
                is_error: false,
                text: content
                    .map(|c| content_text(&parse_at(body, c)))
                    .unwrap_or_default(),
                references: Vec::new(),
                images: 0,
            },
        }];
    }
    let mut blocks = content.map(|c| content_blocks(body, c)).unwrap_or_default();
    if let Some(calls) = member(body, item, "tool_calls") {
        blocks.extend(
            array_items(body, calls)
                .into_iter()
                .map(|s| tool_call_block(parse_at(body, s), s)),
        );
    }
    blocks
}

/// `content`: a string (one text block; an empty one is no block) or an array of parts.
fn content_blocks(body: &[u8], span: Span) -> Vec<Block> {
    match parse_at(body, span) {
        Value::String(text) if text.is_empty() => Vec::new(),
        Value::String(text) => vec![Block {
            span,
            cache_control: None,
            kind: BlockKind::Text { text },
        }],
        Value::Array(_) => array_items(body, span)
            .into_iter()
            .map(|p| part_block(parse_at(body, p), p))
            .collect(),
        _ => Vec::new(),
    }
}

/// A content part (`text`, `image_url`, `input_audio`, `file`, `refusal`) as a block.
fn part_block(v: Value, span: Span) -> Block {
    let kind = match v.get("type").and_then(Value::as_str) {
        Some("text") | Some("refusal") => BlockKind::Text {
            text: str_of(&v, "text") + &str_of(&v, "refusal"),
        },
        Some("image_url") => BlockKind::Image { media_type: None },
        _ => return Block::from_value(v, span),
    };
    Block {
        span,
        cache_control: v.get("cache_control").cloned(),
        kind,
    }
}

/// The text of a `content` value: the string, or its text parts concatenated.
pub(super) fn content_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// A `tool_calls[]` entry `{id, type:"function", function:{name, arguments}}` as a tool
/// call; arguments that are not a JSON text are kept as the string.
pub(super) fn tool_call_block(v: Value, span: Span) -> Block {
    let f = v.get("function");
    let name = f.map(|f| str_of(f, "name")).unwrap_or_default();
    let args = f.map(|f| str_of(f, "arguments")).unwrap_or_default();
    Block {
        span,
        cache_control: None,
        kind: BlockKind::ToolUse {
            id: str_of(&v, "id"),
            name,
            input: arguments(&args),
        },
    }
}

/// A tool call's `arguments` JSON string as a value (empty: `{}`; not JSON: the string).
pub(super) fn arguments(args: &str) -> Value {
    if args.trim().is_empty() {
        return Value::Object(Default::default());
    }
    serde_json::from_str(args).unwrap_or_else(|_| Value::String(args.to_string()))
}

fn str_of(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

/// The tools of a `tools` array.
fn tools_of(body: &[u8], span: Span) -> Vec<Arc<Tool>> {
    array_items(body, span)
        .into_iter()
        .flat_map(|s| {
            let tools = remembered(&TOOLS, body, s, || vec![Arc::new(tool_entry(body, s))]);
            tools.iter().cloned().collect::<Vec<_>>()
        })
        .collect()
}

/// One `tools[]` entry. A `function` tool is a client tool (no `tool_type`); another
/// `type` is kept as the tool's type and name.
fn tool_entry(body: &[u8], span: Span) -> Tool {
    let mut t = Tool {
        span,
        ..Tool::default()
    };
    let mut function = None;
    for m in object_members(body, span) {
        match m.key.as_str() {
            "type" => t.tool_type = parse_at(body, m.value).as_str().map(str::to_string),
            "function" => function = Some(m.value),
            _ => {}
        }
    }
    if t.tool_type.as_deref() == Some("function") {
        t.tool_type = None;
    }
    for m in function
        .map(|f| object_members(body, f))
        .unwrap_or_default()
    {
        let v = || parse_at(body, m.value);
        match m.key.as_str() {
            "name" => t.name = v().as_str().unwrap_or("").to_string(),
            "description" => t.description = v().as_str().map(str::to_string),
            "parameters" => t.schema_span = Some(m.value),
            _ => {}
        }
    }
    if t.name.is_empty() {
        t.name = t.tool_type.clone().unwrap_or_default();
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str = r#"{"model":"fake-model","max_tokens":32000,"messages":[{"role":"system","content":"You are opencode."},{"role":"user","content":[{"type":"text","text":"run it"}]},{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"jobs_get_status","arguments":"{\"job_id\":\"job-1\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"{\"status\":\"running\"}"},{"role":"user","content":"go on"}],"tools":[{"type":"function","function":{"name":"bash","description":"Run","parameters":{"type":"object"},"strict":false}}],"tool_choice":"auto","stream":true,"stream_options":{"include_usage":true},"x_custom":1}"#;

    #[test]
    fn system_tools_calls_and_results_map_onto_the_canonical_request() {
        let r = parse(BODY.as_bytes()).unwrap();
        let body = BODY.as_bytes();
        assert_eq!(r.dialect, Dialect::ChatCompletions);
        assert_eq!(r.model.as_deref(), Some("fake-model"));
        let sys = r.system.as_ref().unwrap();
        assert_eq!(sys.text(), "You are opencode.");
        assert_eq!(
            sys.span.slice(body),
            br#"{"role":"system","content":"You are opencode."}"#
        );
        assert_eq!(r.tool_names(), ["bash"]);
        assert!(!r.tools[0].is_server_tool());
        assert_eq!(r.tools[0].input_schema(body).unwrap()["type"], "object");
        let roles: Vec<&str> = r.messages.iter().map(|m| m.role.as_str()).collect();
        // user; assistant; tool + user grouped as the user's side.
        assert_eq!(roles, ["user", "assistant", "user"]);
        assert_eq!(
            r.messages[1].content[0].kind,
            BlockKind::ToolUse {
                id: "call_1".into(),
                name: "jobs_get_status".into(),
                input: serde_json::json!({"job_id":"job-1"})
            }
        );
        match &r.messages[2].content[0].kind {
            BlockKind::ToolResult {
                tool_use_id, text, ..
            } => assert_eq!(
                (tool_use_id.as_str(), text.as_str()),
                ("call_1", r#"{"status":"running"}"#)
            ),
            k => panic!("{k:?}"),
        }
        assert_eq!(r.turn(), 1);
        assert!(r.stream());
        assert_eq!(r.max_tokens(), Some(32000));
        assert!(r.params.iter().any(|p| p.key == "x_custom" && !p.known));
        assert!(r
            .params
            .iter()
            .any(|p| p.key == "stream_options" && p.known));
        // Bytes: system message + the four other messages, each its own span.
        let whole: usize = r.messages.iter().map(|m| m.span.len()).sum();
        assert_eq!(r.messages_bytes(), whole);
    }

    #[test]
    fn odd_shapes_are_kept_not_fatal() {
        let r = parse(br#"{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","function":{"name":"f","arguments":"{bad"}}]}],"tools":[{"type":"web_search"}]}"#).unwrap();
        assert_eq!(r.tools[0].name, "web_search");
        assert!(r.tools[0].is_server_tool());
        match &r.messages[0].content[0].kind {
            BlockKind::ToolUse { input, .. } => assert_eq!(input, &Value::String("{bad".into())),
            k => panic!("{k:?}"),
        }
        assert!(matches!(parse(b"[1]"), Err(ApiError::NotAnObject)));
    }
}
