//! Replaying recorded OpenAI Chat Completions answers: the requests a recording is matched
//! on ([`recorded_request`]), and a recorded body in the shape the new request asks for
//! ([`reshape`]: a stream as one `chat.completion`, or an object as chunks).

use serde_json::{json, Value};

use crate::api::chat::events::{self as chat_events, ChatAnswer};
use crate::api::{request_body, Dialect, MessagesRequest};

/// A recorded Chat Completions body in the other shape: a stream made one
/// `chat.completion` object, or an object made a stream (with its usage chunk); or why
/// not.
pub(crate) fn reshape(
    body: &[u8],
    recorded_sse: bool,
) -> Result<(Vec<u8>, &'static str, String), String> {
    let m = if recorded_sse {
        crate::api::chat::stream::assemble_sse(body)
    } else {
        let v: Value = serde_json::from_slice(body)
            .map_err(|e| format!("the recorded body is not JSON: {e}"))?;
        crate::api::chat::stream::from_json(&v)
    };
    let content: Vec<Value> = m.content.iter().filter_map(block_value).collect();
    let mut a = ChatAnswer::new(
        m.id.clone().unwrap_or_default(),
        m.model.clone().unwrap_or_default(),
        &content,
    );
    let u = &m.usage;
    if let (Some(i), Some(o)) = (u.input_tokens, u.output_tokens) {
        let cached = u.cache_read_input_tokens.unwrap_or(0);
        a.usage = Some(chat_events::usage(i + cached, cached, o));
    }
    if recorded_sse {
        let what = "the recorded stream was sent as one chat.completion (stream: false)";
        return Ok((
            serde_json::to_vec(&a.completion()).unwrap_or_default(),
            "application/json",
            what.into(),
        ));
    }
    let mut text: String = a.chunks(true).iter().map(chat_events::sse).collect();
    text.push_str(chat_events::DONE);
    let what = "the recorded chat.completion was sent as chunks (stream: true)";
    Ok((
        text.into_bytes(),
        "text/event-stream; charset=utf-8",
        what.into(),
    ))
}

/// A canonical block as a Messages-shaped block value (text, tool calls, thinking).
fn block_value(b: &crate::api::Block) -> Option<Value> {
    use crate::api::BlockKind;
    match &b.kind {
        BlockKind::Text { text } => Some(json!({"type": "text", "text": text})),
        BlockKind::ToolUse { id, name, input } => {
            Some(json!({"type": "tool_use", "id": id, "name": name, "input": input}))
        }
        BlockKind::Thinking { thinking, .. } => {
            Some(json!({"type": "thinking", "thinking": thinking}))
        }
        _ => None,
    }
}

/// The canonical request of a recorded Chat Completions exchange answered 200 (what
/// replay matches against), `None` for another.
pub(crate) fn recorded_request(x: &crate::trace::Exchange) -> Option<MessagesRequest> {
    if x.response.as_ref().is_none_or(|r| r.status != 200) {
        return None;
    }
    MessagesRequest::parse_as(Dialect::ChatCompletions, &request_body(&x.request).bytes).ok()
}
