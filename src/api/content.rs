//! Content blocks of Messages API messages (requests and responses), typed where the API
//! documents them and kept raw where it does not.
//!
//! Source: Anthropic Messages API reference, "Content blocks"
//! (text, image, document, tool_use, tool_result, thinking, redacted_thinking,
//! server_tool_use, tool_reference, and server-tool result blocks).

use serde_json::Value;

use super::span::Span;

/// One content block with its span in the body it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// Where the block's JSON object sits in the body (empty span for assembled blocks).
    pub span: Span,
    /// The block's `cache_control`, if set (a cache breakpoint).
    pub cache_control: Option<Value>,
    /// What the block is.
    pub kind: BlockKind,
}

/// The typed payload of a block. Unknown `type`s are kept as [`BlockKind::Other`].
#[derive(Clone, Debug, PartialEq)]
pub enum BlockKind {
    /// `text`.
    Text {
        /// The text.
        text: String,
    },
    /// `image` (the data itself is not copied; use the span).
    Image {
        /// `source.media_type` (`image/png`), if given.
        media_type: Option<String>,
    },
    /// `document`.
    Document {
        /// The document's `title`, if given.
        title: Option<String>,
    },
    /// `tool_use`: a client tool call.
    ToolUse {
        /// The call's id (`toolu_…`), which its result names.
        id: String,
        /// The tool called.
        name: String,
        /// The call's arguments.
        input: Value,
    },
    /// `server_tool_use`: a call of a server tool.
    ServerToolUse {
        /// The call's id (`srvtoolu_…`).
        id: String,
        /// The server tool called (`web_search`).
        name: String,
        /// The call's arguments.
        input: Value,
    },
    /// `tool_result`: `text` is the concatenation of its text parts.
    ToolResult {
        /// The id of the `tool_use` this answers.
        tool_use_id: String,
        /// `is_error`: the tool failed.
        is_error: bool,
        /// The result's text parts, concatenated.
        text: String,
        /// Tools referenced inside the result (`tool_reference` items), as ToolSearch
        /// returns them.
        references: Vec<String>,
        /// `image` items inside the result (screenshots).
        images: usize,
    },
    /// `thinking`.
    Thinking {
        /// The thinking text.
        thinking: String,
        /// Its `signature`, if sent.
        signature: Option<String>,
    },
    /// `redacted_thinking`.
    RedactedThinking,
    /// `tool_reference`: a deferred tool loaded by name.
    ToolReference {
        /// The tool's name.
        tool_name: String,
    },
    /// Any other `type`, kept whole.
    Other {
        /// Its `type`.
        block_type: String,
        /// The whole block as sent.
        raw: Value,
    },
}

impl Block {
    /// Build a block from its JSON value.
    pub fn from_value(v: Value, span: Span) -> Block {
        let cache_control = v.get("cache_control").cloned();
        let t = v
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        // Known types take their strings out of the parsed value (no second copy).
        let mut v = v;
        let kind = match t.as_str() {
            "text" => BlockKind::Text {
                text: take_str(&mut v, "text").unwrap_or_default(),
            },
            "image" => BlockKind::Image {
                media_type: v
                    .pointer("/source/media_type")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            },
            "document" => BlockKind::Document {
                title: take_str(&mut v, "title"),
            },
            "tool_use" | "server_tool_use" => {
                let id = take_str(&mut v, "id").unwrap_or_default();
                let name = take_str(&mut v, "name").unwrap_or_default();
                let input = v
                    .as_object_mut()
                    .and_then(|o| o.get_mut("input"))
                    .map_or(Value::Null, Value::take);
                if t == "tool_use" {
                    BlockKind::ToolUse { id, name, input }
                } else {
                    BlockKind::ServerToolUse { id, name, input }
                }
            }
            "tool_result" => {
                let (text, references, images) = result_content(v.get("content"));
                BlockKind::ToolResult {
                    tool_use_id: take_str(&mut v, "tool_use_id").unwrap_or_default(),
                    is_error: v.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                    text,
                    references,
                    images,
                }
            }
            "thinking" => BlockKind::Thinking {
                thinking: take_str(&mut v, "thinking").unwrap_or_default(),
                signature: take_str(&mut v, "signature"),
            },
            "redacted_thinking" => BlockKind::RedactedThinking,
            "tool_reference" => BlockKind::ToolReference {
                tool_name: take_str(&mut v, "tool_name").unwrap_or_default(),
            },
            _ => BlockKind::Other {
                block_type: t,
                raw: v,
            },
        };
        Block {
            span,
            cache_control,
            kind,
        }
    }

    /// The block's `type` as on the wire.
    pub fn block_type(&self) -> &str {
        match &self.kind {
            BlockKind::Text { .. } => "text",
            BlockKind::Image { .. } => "image",
            BlockKind::Document { .. } => "document",
            BlockKind::ToolUse { .. } => "tool_use",
            BlockKind::ServerToolUse { .. } => "server_tool_use",
            BlockKind::ToolResult { .. } => "tool_result",
            BlockKind::Thinking { .. } => "thinking",
            BlockKind::RedactedThinking => "redacted_thinking",
            BlockKind::ToolReference { .. } => "tool_reference",
            BlockKind::Other { block_type, .. } => block_type,
        }
    }

    /// The block's text, for text, thinking and tool_result blocks.
    pub fn text(&self) -> Option<&str> {
        match &self.kind {
            BlockKind::Text { text } | BlockKind::ToolResult { text, .. } => Some(text),
            BlockKind::Thinking { thinking, .. } => Some(thinking),
            _ => None,
        }
    }
}

/// The string member `k` of object `v`, moved out (`None`: absent or not a string).
fn take_str(v: &mut Value, k: &str) -> Option<String> {
    match v.as_object_mut().and_then(|o| o.get_mut(k)) {
        Some(Value::String(s)) => Some(std::mem::take(s)),
        _ => None,
    }
}

/// Text, tool references and image count of a `tool_result`'s `content` (string or
/// blocks).
fn result_content(content: Option<&Value>) -> (String, Vec<String>, usize) {
    let mut text = String::new();
    let mut refs = Vec::new();
    let mut images = 0;
    match content {
        Some(Value::String(s)) => text.push_str(s),
        Some(Value::Array(items)) => {
            for it in items {
                match it.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if !text.is_empty() {
                            text.push('\n');
                        }
                        text.push_str(it.get("text").and_then(Value::as_str).unwrap_or(""));
                    }
                    Some("tool_reference") => {
                        if let Some(n) = it.get("tool_name").and_then(Value::as_str) {
                            refs.push(n.to_string());
                        }
                    }
                    Some("image") => images += 1,
                    _ => {}
                }
            }
        }
        _ => {}
    }
    (text, refs, images)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_result_with_blocks_and_references() {
        let b = Block::from_value(
            json!({"type":"tool_result","tool_use_id":"t1","is_error":true,
                   "content":[{"type":"text","text":"a"},{"type":"tool_reference","tool_name":"CronList"},{"type":"text","text":"b"}]}),
            Span::default(),
        );
        assert_eq!(
            b.kind,
            BlockKind::ToolResult {
                tool_use_id: "t1".into(),
                is_error: true,
                text: "a\nb".into(),
                references: vec!["CronList".into()],
                images: 0,
            }
        );
    }

    #[test]
    fn unknown_block_kept_raw() {
        let v = json!({"type":"future_block","x":[1]});
        let b = Block::from_value(v.clone(), Span::default());
        assert_eq!(b.block_type(), "future_block");
        assert_eq!(
            b.kind,
            BlockKind::Other {
                block_type: "future_block".into(),
                raw: v
            }
        );
    }
}
