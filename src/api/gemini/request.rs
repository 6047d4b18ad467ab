//! A Gemini request body (`POST …/models/MODEL:generateContent` or
//! `:streamGenerateContent`) read into the canonical request, every part with its span.
//!
//! Source: Gemini API reference, "Generating content" (`contents`, `systemInstruction`,
//! `tools`, `toolConfig`, `safetySettings`, `generationConfig`, `cachedContent`; a `Tool`
//! holds `functionDeclarations[]` with `parametersJsonSchema` or `parameters`, or a
//! built-in tool such as `googleSearch`, `codeExecution`, `urlContext`), read 2026-12-02
//! through the project's search tool; and Gemini CLI 0.61.0's bodies as measured on
//! 2026-12-01 (`../shared/agents.md` §2).
//!
//! The body names neither the model nor whether the answer streams: both are in the URL
//! ([`crate::api::dialect::gemini_method`]); [`with_path`] fills the model from it.
//!
//! Mapping onto the canonical shape:
//! - **system**: `systemInstruction` (a `Content`; its text parts are the blocks), span of
//!   the whole value;
//! - **tools**: each function declaration is a tool (span of its object); a built-in tool
//!   (`{"googleSearch":{}}`) is a server tool named by its key;
//! - **messages**: each `contents[]` item, role `model` as `assistant`, `user` and
//!   `function` as `user`; parts as [`super::parts`] maps them.

use std::cell::RefCell;
use std::sync::Arc;

use super::super::dialect::Dialect;
use super::super::memo::{remembered, Memo};
use super::super::request::{
    parse_at, Message, MessageDerived, MessagesRequest, Param, System, Tool,
};
use super::super::span::{array_items, object_members, Member, Span};
use super::super::ApiError;
use super::parts::{canonical_role, part_block, CallIds};

thread_local! {
    /// Tool entries parsed on this thread ([`crate::api::memo`]); a memo of its own, since
    /// a Gemini tool entry at the same bytes and span reads differently from others.
    static TOOLS: RefCell<Memo<Vec<Arc<Tool>>>> = RefCell::new(Memo::default());
}

/// Top-level keys of a Gemini request that the API documents, other than `contents`,
/// `systemInstruction` and `tools`.
pub const KNOWN_PARAMS: &[&str] = &[
    "model",
    "toolConfig",
    "safetySettings",
    "generationConfig",
    "cachedContent",
    "labels",
    "serviceTier",
];

/// Parse a Gemini body already checked to be valid JSON. The model is left unset: it is in
/// the URL ([`with_path`]).
///
/// Errors: [`ApiError::NotAnObject`] when it is not a JSON object.
pub fn parse(body: &[u8]) -> Result<MessagesRequest, ApiError> {
    let (doc, mut req) = MessagesRequest::start(Dialect::Gemini, body)?;
    let mut ids = CallIds::default();
    for Member { key, value, .. } in object_members(body, doc) {
        match key.as_str() {
            "systemInstruction" => req.system = Some(system_of(body, value, &mut ids)),
            "tools" => {
                req.tools_span = Some(value);
                req.tools.extend(tools_of(body, value));
            }
            "contents" => {
                req.messages_span = Some(value);
                req.messages = array_items(body, value)
                    .into_iter()
                    .map(|s| Arc::new(content_message(body, s, &mut ids)))
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
    if req.model.is_none() {
        req.model = req
            .param("model")
            .and_then(|v| v.as_str())
            .map(|m| m.trim_start_matches("models/").to_string());
    }
    Ok(req)
}

/// `req` with its model taken from the request path `…/models/MODEL:METHOD`, when the path
/// names one (the body does not).
pub fn with_path(mut req: MessagesRequest, path: &str) -> MessagesRequest {
    if let Some((model, _)) = super::super::dialect::gemini_method(path) {
        req.model = Some(model.to_string());
    }
    req
}

/// `systemInstruction`: a `Content` (its parts' text blocks) or, as some clients send, a
/// plain string.
fn system_of(body: &[u8], span: Span, ids: &mut CallIds) -> System {
    let is_string = body.get(span.start) == Some(&b'"');
    let blocks = if is_string {
        let text = parse_at(body, span).as_str().unwrap_or("").to_string();
        vec![super::super::content::Block {
            span,
            cache_control: None,
            kind: super::super::content::BlockKind::Text { text },
        }]
    } else {
        parts_of(body, span, ids)
    };
    System {
        span,
        more_spans: Vec::new(),
        is_string,
        blocks,
    }
}

/// The blocks of a `Content`'s `parts`.
fn parts_of(body: &[u8], content: Span, ids: &mut CallIds) -> Vec<super::super::content::Block> {
    let Some(parts) = object_members(body, content)
        .into_iter()
        .find(|m| m.key == "parts")
    else {
        return Vec::new();
    };
    array_items(body, parts.value)
        .into_iter()
        .map(|p| part_block(parse_at(body, p), p, ids))
        .collect()
}

/// One `contents[]` item as a message.
fn content_message(body: &[u8], span: Span, ids: &mut CallIds) -> Message {
    let role = object_members(body, span)
        .into_iter()
        .find(|m| m.key == "role")
        .and_then(|m| parse_at(body, m.value).as_str().map(str::to_string));
    Message {
        span,
        role: canonical_role(role.as_deref()).to_string(),
        content_is_string: false,
        content: parts_of(body, span, ids),
        derived: MessageDerived::default(),
    }
}

/// The tools of the `tools` array: every function declaration, and each built-in tool.
fn tools_of(body: &[u8], span: Span) -> Vec<Arc<Tool>> {
    array_items(body, span)
        .into_iter()
        .flat_map(|s| {
            let tools = remembered(&TOOLS, body, s, || {
                tool_entry(body, s).into_iter().map(Arc::new).collect()
            });
            tools.iter().cloned().collect::<Vec<_>>()
        })
        .collect()
}

/// One `Tool` entry: its function declarations, and a server tool per other key.
fn tool_entry(body: &[u8], span: Span) -> Vec<Tool> {
    let mut out = Vec::new();
    for m in object_members(body, span) {
        if m.key == "functionDeclarations" {
            out.extend(
                array_items(body, m.value)
                    .into_iter()
                    .map(|d| declaration(body, d)),
            );
        } else {
            out.push(Tool {
                span: m.member,
                name: m.key.clone(),
                tool_type: Some(m.key),
                ..Tool::default()
            });
        }
    }
    out
}

/// A function declaration.
fn declaration(body: &[u8], span: Span) -> Tool {
    let mut t = Tool {
        span,
        ..Tool::default()
    };
    for m in object_members(body, span) {
        let v = || parse_at(body, m.value);
        match m.key.as_str() {
            "name" => t.name = v().as_str().unwrap_or("").to_string(),
            "description" => t.description = v().as_str().map(str::to_string),
            "parametersJsonSchema" | "parameters" => t.schema_span = Some(m.value),
            _ => {}
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::BlockKind;

    const BODY: &str = r#"{"contents":[{"role":"user","parts":[{"text":"<ctx>"},{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"ls","args":{}},"thoughtSignature":"s"}]},{"role":"user","parts":[{"functionResponse":{"name":"ls","response":{"output":"a"}}}]}],"systemInstruction":{"parts":[{"text":"You are."}]},"tools":[{"functionDeclarations":[{"name":"ls","description":"list","parametersJsonSchema":{"type":"object"}},{"name":"rd","parameters":{"type":"OBJECT"}}]},{"googleSearch":{}}],"generationConfig":{"temperature":1}}"#;

    #[test]
    fn a_gemini_body_reads_into_the_canonical_request() {
        let req = with_path(
            parse(BODY.as_bytes()).unwrap(),
            "/v1beta/models/gemini-3.8-flash:streamGenerateContent",
        );
        assert_eq!(req.model.as_deref(), Some("gemini-3.8-flash"));
        assert_eq!(req.tool_names(), ["ls", "rd", "googleSearch"]);
        assert!(req.tools[2].is_server_tool());
        let schema = req.tools[1].input_schema(BODY.as_bytes()).unwrap();
        assert_eq!(schema["type"], "OBJECT");
        // The system prompt is the whole `systemInstruction` value.
        assert_eq!(
            req.system_bytes(),
            r#"{"parts":[{"text":"You are."}]}"#.len()
        );
        assert_eq!(req.system.as_ref().unwrap().text(), "You are.");
        let roles: Vec<&str> = req.messages.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "user"]);
        assert_eq!(req.turn(), 1);
        assert_eq!(req.first_user_text(), "<ctx>\nhi");
        assert!(
            matches!(&req.messages[1].content[0].kind, BlockKind::ToolUse { id, .. } if id == "ls#0")
        );
        assert!(
            matches!(&req.messages[2].content[0].kind, BlockKind::ToolResult { tool_use_id, .. } if tool_use_id == "ls#0")
        );
        assert_eq!(req.params.len(), 1);
        assert!(req.params[0].known);
        assert!(matches!(parse(b"[1]"), Err(ApiError::NotAnObject)));
    }
}
