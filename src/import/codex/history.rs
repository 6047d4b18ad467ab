//! The conversation a rollout records: its `response_item` payloads in file order, which
//! side wrote each (the model's output items, or what Codex sends), and each item as
//! Codex puts it on the wire.
//!
//! Wire rules (measured on Codex 0.165.0 and 0.171.0 by comparing every rebuilt item with
//! the request bodies the API received, 1,775 items, all byte-identical under them):
//! - a custom provider's requests carry the items without
//!   `internal_chat_message_metadata_passthrough` (Codex's own metadata);
//! - the built-in `openai` provider's carry it; with a classic tool list (no
//!   `additional_tools` item) its `content_item_metadata` member is left out;
//! - otherwise the item is the rollout's payload, byte for byte.
//!
//! `ghost_snapshot` items (Codex's undo snapshots) are history but never sent.

use std::borrow::Cow;

use serde_json::Value;

use super::raw::{edit, member, without};

/// Codex's metadata member of an item.
pub(super) const PASSTHROUGH: &str = "internal_chat_message_metadata_passthrough";

/// Item types only the model writes (its output items, echoed in later requests).
const OUTPUT_TYPES: &[&str] = &[
    "reasoning",
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "web_search_call",
    "tool_search_call",
    "image_generation_call",
    "mcp_call",
    "code_interpreter_call",
    "file_search_call",
    "computer_call",
];

/// Item types Codex keeps in its history but never sends.
const NOT_SENT: &[&str] = &["ghost_snapshot"];

/// Which provider a session used, as far as the wire form of items goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Provider {
    /// The built-in `openai` provider.
    BuiltIn,
    /// A provider from the user's `config.toml`.
    Custom,
    /// The rollout does not say.
    Unknown,
}

impl Provider {
    /// The provider of a `model_provider` id.
    pub(super) fn of(id: Option<&str>) -> Provider {
        match id {
            Some("openai") => Provider::BuiltIn,
            Some(_) => Provider::Custom,
            None => Provider::Unknown,
        }
    }
}

/// One item of the conversation.
pub(super) struct Item {
    /// The payload as the rollout holds it.
    pub text: Box<str>,
    /// True for the model's output items.
    pub output: bool,
    /// True for an `additional_tools` item (the tool list travels in `input`).
    pub tools: bool,
}

/// How a `response_item` payload enters the history.
pub(super) enum Kind {
    /// Sent in later requests.
    Item(Item),
    /// Kept by Codex, never sent.
    NotSent,
}

/// Classify a `response_item` payload (`v`, parsed from `text`).
pub(super) fn classify(text: &str, v: &Value) -> Kind {
    let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
    if NOT_SENT.contains(&ty) {
        return Kind::NotSent;
    }
    let role = v.get("role").and_then(Value::as_str);
    Kind::Item(Item {
        text: text.into(),
        output: OUTPUT_TYPES.contains(&ty) || (ty == "message" && role == Some("assistant")),
        tools: ty == "additional_tools",
    })
}

/// True when `v` is a developer message whose text is `base` (the base instructions as
/// an item of the history, as code-mode sessions record them).
pub(super) fn is_base_message(v: &Value, base: &str) -> bool {
    v.get("role").and_then(Value::as_str) == Some("developer")
        && v.get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|p| p.get("text").and_then(Value::as_str) == Some(base))
}

/// The item as the request carries it (see the module docs); `lite` is true when the
/// request's tools travel in an `additional_tools` item.
pub(super) fn wire(item: &Item, provider: Provider, lite: bool) -> Cow<'_, str> {
    match provider {
        Provider::Custom => Cow::Owned(without(&item.text, PASSTHROUGH)),
        Provider::BuiltIn if !lite => match member(&item.text, PASSTHROUGH) {
            Some(p) if member(p, "content_item_metadata").is_some() => {
                let edited = edit(&item.text, |k, v| {
                    Some(if k == PASSTHROUGH {
                        without(v, "content_item_metadata")
                    } else {
                        v.to_string()
                    })
                });
                edited.map_or(Cow::Borrowed(&*item.text), Cow::Owned)
            }
            _ => Cow::Borrowed(&item.text),
        },
        _ => Cow::Borrowed(&item.text),
    }
}

/// An output item as the API sent it, as far as the rollout keeps it: Codex's copy less
/// the metadata Codex adds.
pub(super) fn as_sent(item: &Item) -> String {
    without(&item.text, PASSTHROUGH)
}

/// The base-instructions message a classic-mode request opens with: session_meta's
/// `base_instructions` text as a developer message (id and metadata not recorded).
pub(super) fn base_message(base: &str) -> String {
    format!(
        r#"{{"type":"message","role":"developer","content":[{{"type":"input_text","text":{}}}]}}"#,
        super::raw::quoted(base)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(text: &str) -> Item {
        match classify(text, &serde_json::from_str(text).unwrap()) {
            Kind::Item(i) => i,
            Kind::NotSent => panic!("not sent"),
        }
    }

    #[test]
    fn wire_forms_follow_the_provider_and_the_tool_list() {
        let msg = item(
            r#"{"type":"message","role":"user","content":[],"internal_chat_message_metadata_passthrough":{"turn_id":"t","create_time":1.5,"content_item_metadata":[{}]}}"#,
        );
        assert!(!msg.output);
        assert_eq!(
            wire(&msg, Provider::Custom, false),
            r#"{"type":"message","role":"user","content":[]}"#
        );
        assert_eq!(
            wire(&msg, Provider::BuiltIn, false),
            r#"{"type":"message","role":"user","content":[],"internal_chat_message_metadata_passthrough":{"turn_id":"t","create_time":1.5}}"#
        );
        assert_eq!(wire(&msg, Provider::BuiltIn, true), &*msg.text);
        let call = item(
            r#"{"type":"function_call","name":"x","internal_chat_message_metadata_passthrough":{}}"#,
        );
        assert!(call.output);
        assert_eq!(as_sent(&call), r#"{"type":"function_call","name":"x"}"#);
        let ghost = r#"{"type":"ghost_snapshot"}"#;
        assert!(matches!(
            classify(ghost, &serde_json::from_str(ghost).unwrap()),
            Kind::NotSent
        ));
    }
}
