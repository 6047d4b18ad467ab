//! Responses input and output items, and content parts, as canonical content blocks.
//!
//! Source: OpenAI API reference, "Create a model response" (`input` item types: `message`
//! with `input_text`/`output_text`/`input_image`/`input_file` parts, `function_call`,
//! `function_call_output`, `custom_tool_call`, `custom_tool_call_output`, `reasoning`,
//! server tool calls such as `web_search_call`, `item_reference`). Unknown item and part
//! types are kept whole ([`BlockKind::Other`]).

use serde_json::Value;

use super::super::content::{Block, BlockKind};
use super::super::span::Span;

/// Which side of the conversation an input item is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Said by the model: its messages, tool calls and reasoning.
    Assistant,
    /// Sent by the client: the user's messages and tool outputs.
    User,
    /// Developer or system messages.
    Developer,
    /// An `additional_tools` item: tool definitions, not conversation.
    Tools,
}

impl Side {
    /// The canonical role of a message of this side.
    pub fn role(self) -> &'static str {
        match self {
            Side::Assistant => "assistant",
            Side::User | Side::Tools => "user",
            Side::Developer => "developer",
        }
    }
}

/// Item types the model produces (its side of the conversation).
const ASSISTANT_ITEMS: &[&str] = &[
    "function_call",
    "custom_tool_call",
    "reasoning",
    "web_search_call",
    "file_search_call",
    "computer_call",
    "code_interpreter_call",
    "image_generation_call",
    "local_shell_call",
    "shell_call",
    "apply_patch_call",
    "mcp_call",
    "mcp_list_tools",
    "mcp_approval_request",
    "tool_search_call",
];

/// The side an input item is on: by its role for messages (and role-carrying items), by
/// its type for the others; an unknown item without a role is the client's.
pub fn item_side(v: &Value) -> Side {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("message");
    if ty == "additional_tools" {
        return Side::Tools;
    }
    if ASSISTANT_ITEMS.contains(&ty) {
        return Side::Assistant;
    }
    match v.get("role").and_then(Value::as_str) {
        Some("assistant") => Side::Assistant,
        Some("developer" | "system") => Side::Developer,
        _ => Side::User,
    }
}

/// True for a message item (`type: "message"`, or a bare `{role, content}`).
pub fn is_message(v: &Value) -> bool {
    match v.get("type").and_then(Value::as_str) {
        Some(t) => t == "message",
        None => v.get("role").is_some(),
    }
}

/// A non-message item as one block whose span is the item.
pub fn item_block(mut v: Value, span: Span) -> Block {
    let ty = v
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let kind = match ty.as_str() {
        "function_call" => BlockKind::ToolUse {
            id: call_id(&v),
            name: take_str(&mut v, "name"),
            input: arguments(v.get("arguments")),
        },
        "custom_tool_call" => BlockKind::ToolUse {
            id: call_id(&v),
            name: take_str(&mut v, "name"),
            input: Value::String(take_str(&mut v, "input")),
        },
        "function_call_output" | "custom_tool_call_output" => {
            let (text, images) = output_text(v.get("output"));
            BlockKind::ToolResult {
                tool_use_id: call_id(&v),
                is_error: false,
                text,
                references: Vec::new(),
                images,
            }
        }
        "reasoning" => BlockKind::Thinking {
            thinking: reasoning_text(&v),
            signature: v
                .get("encrypted_content")
                .and_then(Value::as_str)
                .map(str::to_string),
        },
        _ => BlockKind::Other {
            block_type: if ty.is_empty() { "item".into() } else { ty },
            raw: v,
        },
    };
    Block {
        span,
        cache_control: None,
        kind,
    }
}

/// A content part of a message (`input_text`, `output_text`, `input_image`,
/// `input_file`, …) as a block.
pub fn part_block(mut v: Value, span: Span) -> Block {
    let ty = v
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let kind = match ty.as_str() {
        "input_text" | "output_text" | "text" | "summary_text" => BlockKind::Text {
            text: take_str(&mut v, "text"),
        },
        "input_image" => BlockKind::Image { media_type: None },
        "input_file" => BlockKind::Document {
            title: v
                .get("filename")
                .and_then(Value::as_str)
                .map(str::to_string),
        },
        _ => BlockKind::Other {
            block_type: if ty.is_empty() { "part".into() } else { ty },
            raw: v,
        },
    };
    Block {
        span,
        cache_control: None,
        kind,
    }
}

/// A function call's `call_id` (the id its output names), else its `id`.
fn call_id(v: &Value) -> String {
    v.get("call_id")
        .or_else(|| v.get("id"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// `arguments`: a JSON text, read as JSON; kept as the string when it is not JSON (a
/// model may send anything).
fn arguments(a: Option<&Value>) -> Value {
    match a {
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        Some(v) => v.clone(),
        None => Value::Null,
    }
}

/// A tool output's text (a string, or the text of its parts joined by newlines) and how
/// many image parts it holds.
pub fn output_text(o: Option<&Value>) -> (String, usize) {
    match o {
        Some(Value::String(s)) => (s.clone(), 0),
        Some(Value::Array(parts)) => {
            let mut text = Vec::new();
            let mut images = 0;
            for p in parts {
                match p.get("type").and_then(Value::as_str) {
                    Some("input_image") => images += 1,
                    _ => {
                        if let Some(t) = p.get("text").and_then(Value::as_str) {
                            text.push(t);
                        }
                    }
                }
            }
            (text.join("\n"), images)
        }
        Some(v) if !v.is_null() => (v.to_string(), 0),
        _ => (String::new(), 0),
    }
}

/// A reasoning item's readable text: its summary parts, else its content parts.
fn reasoning_text(v: &Value) -> String {
    let texts = |k: &str| -> Vec<String> {
        v.get(k)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let summary = texts("summary");
    if summary.is_empty() {
        texts("content").join("\n")
    } else {
        summary.join("\n")
    }
}

fn take_str(v: &mut Value, k: &str) -> String {
    match v.as_object_mut().and_then(|o| o.get_mut(k)) {
        Some(Value::String(s)) => std::mem::take(s),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn calls_outputs_and_reasoning_become_canonical_blocks() {
        let b = item_block(
            json!({"type":"function_call","id":"fc_1","call_id":"call_1","name":"write_stdin",
                   "arguments":"{\"session_id\":99109,\"chars\":\"\"}"}),
            Span::default(),
        );
        assert_eq!(
            b.kind,
            BlockKind::ToolUse {
                id: "call_1".into(),
                name: "write_stdin".into(),
                input: json!({"session_id":99109,"chars":""}),
            }
        );
        let b = item_block(
            json!({"type":"custom_tool_call","call_id":"c2","name":"exec","input":"text(1)"}),
            Span::default(),
        );
        assert!(matches!(b.kind, BlockKind::ToolUse { ref input, .. } if input == "text(1)"));
        let b = item_block(
            json!({"type":"custom_tool_call_output","call_id":"c2","output":[
                {"type":"input_text","text":"Script completed"},{"type":"input_text","text":"{}"}]}),
            Span::default(),
        );
        assert_eq!(
            b.kind,
            BlockKind::ToolResult {
                tool_use_id: "c2".into(),
                is_error: false,
                text: "Script completed\n{}".into(),
                references: vec![],
                images: 0
            }
        );
        let b = item_block(
            json!({"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"plan"}],"encrypted_content":"gAAA"}),
            Span::default(),
        );
        assert_eq!(
            b.kind,
            BlockKind::Thinking {
                thinking: "plan".into(),
                signature: Some("gAAA".into())
            }
        );
        // Arguments that are not JSON are kept as the string.
        let b = item_block(
            json!({"type":"function_call","call_id":"x","name":"f","arguments":"{not json"}),
            Span::default(),
        );
        assert!(matches!(b.kind, BlockKind::ToolUse { ref input, .. } if input == "{not json"));
        let b = item_block(json!({"type":"future_item","x":1}), Span::default());
        assert_eq!(b.block_type(), "future_item");
    }

    #[test]
    fn sides_follow_role_then_type() {
        assert_eq!(
            item_side(&json!({"role":"developer","content":"x"})),
            Side::Developer
        );
        assert_eq!(
            item_side(&json!({"type":"message","role":"system"})),
            Side::Developer
        );
        assert_eq!(item_side(&json!({"type":"function_call"})), Side::Assistant);
        assert_eq!(
            item_side(&json!({"type":"function_call_output"})),
            Side::User
        );
        assert_eq!(item_side(&json!({"type":"additional_tools"})), Side::Tools);
        assert_eq!(
            item_side(&json!({"type":"item_reference","id":"x"})),
            Side::User
        );
        assert!(is_message(&json!({"role":"user","content":"hi"})));
        assert!(!is_message(&json!({"type":"reasoning"})));
    }
}
