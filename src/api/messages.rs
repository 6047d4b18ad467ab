//! The Anthropic Messages dialect: a `POST /v1/messages` body read into the canonical
//! request ([`MessagesRequest`]), every part with its byte span.
//!
//! Source: Anthropic Messages API reference (`model`, `system`, `tools`, `messages`,
//! `max_tokens`, `thinking`, `tool_choice`, `stream`, `metadata`, ...). Unknown top-level
//! keys are kept in [`MessagesRequest::params`] and flagged by [`Param::known`].

use std::cell::RefCell;

use super::content::Block;
use super::dialect::Dialect;
use super::memo::{remembered, Memo};
use super::request::{
    block_at, parse_at, Message, MessageDerived, MessagesRequest, Param, System, Tool,
};
use super::span::{array_items, object_members, Member, Span};
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

/// Parse a Messages body already checked to be valid JSON; `deep: false` reads only the
/// top level (see [`MessagesRequest::parse_head`]).
pub(super) fn parse_with(body: &[u8], deep: bool) -> Result<MessagesRequest, ApiError> {
    let (doc, mut req) = MessagesRequest::start(Dialect::Messages, body)?;
    for Member { key, value, .. } in object_members(body, doc) {
        match key.as_str() {
            "model" => req.model = parse_at(body, value).as_str().map(str::to_string),
            "system" if !deep => {
                req.system = Some(System {
                    span: value,
                    more_spans: Vec::new(),
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

fn parse_system(body: &[u8], span: Span) -> System {
    if body.get(span.start) == Some(&b'"') {
        let text = parse_at(body, span).as_str().unwrap_or("").to_string();
        return System {
            span,
            more_spans: Vec::new(),
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
        more_spans: Vec::new(),
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
    use std::sync::Arc;

    use super::*;
    use crate::api::request::MessagesRequest;
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
