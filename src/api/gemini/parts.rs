//! Gemini `Part`s as canonical content blocks, in requests (`contents[].parts[]`,
//! `systemInstruction.parts[]`) and in answers (`candidates[].content.parts[]`).
//!
//! Source: Gemini API reference, "Caching / Content" and "Generating content" (`Part` is
//! one of `text`, `inlineData {mimeType, data}`, `fileData {mimeType, fileUri}`,
//! `functionCall {id?, name, args}`, `functionResponse {id?, name, response}`,
//! `executableCode`, `codeExecutionResult`; with `thought: true` on a text part that is
//! the model's thinking, and `thoughtSignature` beside any part). Read 2026-12-02 through
//! the project's search tool, and as Gemini CLI 0.61.0 sends them (`../shared/agents.md`).
//!
//! Mapping: `text` → text (or thinking when `thought` is true); `functionCall` → tool use;
//! `functionResponse` → tool result (its text: `response.output` when that is a string,
//! `response.error` as an error, else the response object's JSON); image `inlineData` →
//! image; other inline data → an `inline_data` block holding the MIME type and the size of
//! its base64 data, never the data; a part with only a `thoughtSignature` → thinking with
//! that signature and no text; anything else is kept whole.
//!
//! The API's function calls usually carry no `id` (Gemini CLI adds its own when it echoes
//! them back). A call without one gets `NAME#K`, K counting the id-less calls of that name
//! before it in the same body; an id-less response answers the oldest unanswered id-less
//! call of its name ([`CallIds`]), so a call and its result stay paired.

use std::collections::{HashMap, VecDeque};

use serde_json::{json, Value};

use super::super::content::{Block, BlockKind};
use super::super::span::Span;

/// Synthetic ids for function calls and responses sent without one (see the module
/// header). One per body: ids depend on the calls before them.
#[derive(Default)]
pub struct CallIds {
    /// Id-less calls seen per name.
    seen: HashMap<String, usize>,
    /// Synthetic ids of id-less calls not answered yet, per name, oldest first.
    open: HashMap<String, VecDeque<String>>,
}

impl CallIds {
    /// The id of a call of `name` sent without one.
    pub fn call(&mut self, name: &str) -> String {
        let k = self.seen.entry(name.to_string()).or_default();
        let id = format!("{name}#{k}");
        *k += 1;
        self.open
            .entry(name.to_string())
            .or_default()
            .push_back(id.clone());
        id
    }

    /// The id of a response to `name` sent without one: the oldest unanswered id-less
    /// call of that name, else a fresh one.
    pub fn response(&mut self, name: &str) -> String {
        match self.open.get_mut(name).and_then(VecDeque::pop_front) {
            Some(id) => id,
            None => {
                let id = self.call(name);
                self.open.get_mut(name).map(VecDeque::pop_back);
                id
            }
        }
    }
}

/// True for an id [`CallIds`] made up (`NAME#K`), not one the wire carried.
pub fn is_made_up(id: &str) -> bool {
    id.rsplit_once('#')
        .is_some_and(|(_, k)| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}

/// The string member `k` of `v`.
fn str_of<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

/// One part as a block whose span is `span` (empty for assembled parts).
pub fn part_block(v: Value, span: Span, ids: &mut CallIds) -> Block {
    let kind = part_kind(v, ids);
    Block {
        span,
        cache_control: None,
        kind,
    }
}

fn part_kind(mut v: Value, ids: &mut CallIds) -> BlockKind {
    let signature = str_of(&v, "thoughtSignature").map(str::to_string);
    if let Some(Value::String(text)) = v.get_mut("text").map(Value::take) {
        if v.get("thought").and_then(Value::as_bool) == Some(true) {
            return BlockKind::Thinking {
                thinking: text,
                signature,
            };
        }
        return BlockKind::Text { text };
    }
    if let Some(call) = v.get_mut("functionCall").map(Value::take) {
        let name = str_of(&call, "name").unwrap_or("").to_string();
        let id = match str_of(&call, "id") {
            Some(id) => id.to_string(),
            None => ids.call(&name),
        };
        let input = call.get("args").cloned().unwrap_or(Value::Null);
        return BlockKind::ToolUse { id, name, input };
    }
    if let Some(resp) = v.get("functionResponse") {
        return response_kind(resp, ids);
    }
    if let Some(data) = v.get("inlineData") {
        return inline_kind(data);
    }
    if signature.is_some() && v.as_object().is_some_and(|o| o.len() == 1) {
        return BlockKind::Thinking {
            thinking: String::new(),
            signature,
        };
    }
    let block_type = v
        .as_object()
        .and_then(|o| {
            o.keys()
                .find(|k| *k != "thoughtSignature" && *k != "thought")
        })
        .map_or("part", String::as_str)
        .to_string();
    BlockKind::Other { block_type, raw: v }
}

/// A `functionResponse` as a tool result.
fn response_kind(resp: &Value, ids: &mut CallIds) -> BlockKind {
    let name = str_of(resp, "name").unwrap_or("");
    let tool_use_id = match str_of(resp, "id") {
        Some(id) => id.to_string(),
        None => ids.response(name),
    };
    let r = resp.get("response");
    let (text, is_error) = match r {
        Some(r) if r.get("output").and_then(Value::as_str).is_some() => {
            (str_of(r, "output").unwrap_or("").to_string(), false)
        }
        Some(r) if r.get("error").is_some() => (value_text(&r["error"]), true),
        Some(r) => (value_text(r), false),
        None => (String::new(), false),
    };
    BlockKind::ToolResult {
        tool_use_id,
        is_error,
        text,
        references: Vec::new(),
        images: 0,
    }
}

/// A string value's text, any other value's JSON.
fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Inline data: an image, or a sized placeholder (never the data itself).
fn inline_kind(data: &Value) -> BlockKind {
    let mime = str_of(data, "mimeType").map(str::to_string);
    if mime.as_deref().is_some_and(|m| m.starts_with("image/")) {
        return BlockKind::Image { media_type: mime };
    }
    let bytes = str_of(data, "data").map_or(0, str::len);
    BlockKind::Other {
        block_type: "inline_data".into(),
        raw: json!({"mimeType": mime, "data_bytes": bytes}),
    }
}

/// The Gemini role of a canonical role (`assistant` → `model`).
pub fn wire_role(role: &str) -> &str {
    match role {
        "assistant" => "model",
        other => other,
    }
}

/// The canonical role of a Gemini content's `role` (`model` → `assistant`; `user`,
/// `function` and a missing role are the client's: `user`).
pub fn canonical_role(role: Option<&str>) -> &str {
    match role {
        Some("model") => "assistant",
        Some("user" | "function") | None => "user",
        Some(other) => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(v: Value, ids: &mut CallIds) -> BlockKind {
        part_block(v, Span::default(), ids).kind
    }

    #[test]
    fn parts_map_to_blocks_and_idless_calls_pair_with_their_responses() {
        let mut ids = CallIds::default();
        let call = block(
            json!({"functionCall":{"name":"ls","args":{"d":"."}}}),
            &mut ids,
        );
        assert!(matches!(&call, BlockKind::ToolUse { id, .. } if id == "ls#0"));
        let second = block(json!({"functionCall":{"name":"ls","args":{}}}), &mut ids);
        assert!(matches!(&second, BlockKind::ToolUse { id, .. } if id == "ls#1"));
        let resp = block(
            json!({"functionResponse":{"name":"ls","response":{"output":"a b"}}}),
            &mut ids,
        );
        assert!(
            matches!(&resp, BlockKind::ToolResult { tool_use_id, text, is_error: false, .. } if tool_use_id == "ls#0" && text == "a b")
        );
        let with_id = block(
            json!({"functionResponse":{"id":"x1","name":"ls","response":{"error":"denied"}}}),
            &mut ids,
        );
        assert!(
            matches!(&with_id, BlockKind::ToolResult { tool_use_id, is_error: true, text, .. } if tool_use_id == "x1" && text == "denied")
        );
        let thought = block(json!({"text":"hmm","thought":true}), &mut ids);
        assert!(matches!(thought, BlockKind::Thinking { .. }));
        let pdf = block(
            json!({"inlineData":{"mimeType":"application/pdf","data":"QUJD"}}),
            &mut ids,
        );
        assert!(
            matches!(&pdf, BlockKind::Other { block_type, raw } if block_type == "inline_data" && raw["data_bytes"] == 4)
        );
        let code = block(json!({"executableCode":{"code":"1"}}), &mut ids);
        assert!(
            matches!(&code, BlockKind::Other { block_type, .. } if block_type == "executableCode")
        );
    }
}
