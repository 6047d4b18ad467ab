//! `previous_response_id` chains of one Responses WebSocket connection: the responses it
//! gave, so a `response.create` that continues one is read as the whole conversation it
//! stands for — the previous request's input, that response's output, then the new input
//! (OpenAI "WebSocket mode": a continuation sends only the new items; Codex's measured
//! chains do exactly that).
//!
//! Like the API's connection-local cache, only the most recent responses are kept
//! ([`KEPT`]); a continuation of a forgotten or unknown one is answered
//! `previous_response_not_found`.

use std::collections::VecDeque;

use serde_json::{Map, Value};

/// Responses kept per connection.
pub const KEPT: usize = 32;

/// The responses of one connection, newest last.
#[derive(Debug, Default)]
pub(crate) struct Chain {
    known: VecDeque<(String, Vec<Value>)>,
}

/// A `response.create` message read as a whole request.
#[derive(Debug)]
pub(crate) struct Rebuilt {
    /// The message with `input` = the whole conversation and without
    /// `previous_response_id` and `type`: the body a stateless request would carry.
    pub(crate) body: Map<String, Value>,
    /// That conversation's items (what a continuation of this request's response starts
    /// from, before the response's output).
    pub(crate) input: Vec<Value>,
}

impl Chain {
    /// The whole request `msg` stands for; `Err(id)` when it continues a response `id`
    /// this connection does not know.
    pub(crate) fn rebuild(&self, msg: &Map<String, Value>) -> Result<Rebuilt, String> {
        let mut input = match msg.get("previous_response_id").and_then(Value::as_str) {
            Some(prev) => match self.known.iter().rev().find(|(id, _)| id == prev) {
                Some((_, items)) => items.clone(),
                None => return Err(prev.to_string()),
            },
            None => Vec::new(),
        };
        match msg.get("input") {
            Some(Value::Array(items)) => input.extend(items.iter().cloned()),
            // A string input is one user message (API reference, `input`).
            Some(Value::String(s)) => input.push(serde_json::json!({
                "type": "message", "role": "user",
                "content": [{"type": "input_text", "text": s}]})),
            _ => {}
        }
        let mut body = msg.clone();
        body.remove("type");
        body.remove("previous_response_id");
        body.insert("input".into(), Value::Array(input.clone()));
        Ok(Rebuilt { body, input })
    }

    /// Remember response `id` to the request whose conversation was `input`, with its
    /// `output` items.
    pub(crate) fn remember(&mut self, id: &str, mut input: Vec<Value>, output: &[Value]) {
        input.extend(output.iter().cloned());
        self.known.retain(|(k, _)| k != id);
        self.known.push_back((id.to_string(), input));
        while self.known.len() > KEPT {
            self.known.pop_front();
        }
    }
}

/// The response id and output items of a server's messages (the final response event's
/// `response`, else the first one that names an id), each message a JSON text.
pub(crate) fn outcome<'a>(
    messages: impl IntoIterator<Item = &'a [u8]>,
) -> Option<(String, Vec<Value>)> {
    let mut id = None;
    let mut output = Vec::new();
    for m in messages {
        let Ok(v) = serde_json::from_slice::<Value>(m) else {
            continue;
        };
        let Some(r) = v.get("response") else { continue };
        if let Some(i) = r.get("id").and_then(Value::as_str) {
            id.get_or_insert_with(|| i.to_string());
        }
        let ty = v.get("type").and_then(Value::as_str).unwrap_or("");
        if matches!(ty, "response.completed" | "response.incomplete") {
            if let Some(o) = r.get("output").and_then(Value::as_array) {
                output = o.clone();
            }
        }
    }
    id.map(|i| (i, output))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn a_continuation_is_the_previous_input_and_output_then_the_new_items() {
        let mut c = Chain::default();
        let first = c
            .rebuild(&obj(json!({"type":"response.create","model":"m","input":[{"role":"user","content":"hi"}]})))
            .unwrap();
        c.remember(
            "resp_1",
            first.input,
            &[json!({"type":"function_call","call_id":"c1"})],
        );
        let next = c
            .rebuild(&obj(
                json!({"type":"response.create","previous_response_id":"resp_1",
                "input":[{"type":"function_call_output","call_id":"c1","output":"ok"}]}),
            ))
            .unwrap();
        assert_eq!(next.input.len(), 3);
        assert!(next.body.get("previous_response_id").is_none());
        assert_eq!(next.body["input"][1]["type"], "function_call");
        let e = c
            .rebuild(&obj(json!({"previous_response_id":"resp_9","input":[]})))
            .unwrap_err();
        assert_eq!(e, "resp_9");
        let done = br#"{"type":"response.completed","response":{"id":"resp_2","output":[{"type":"message"}]}}"#;
        let created = br#"{"type":"response.created","response":{"id":"resp_2","output":[]}}"#;
        let (id, out) = outcome([&created[..], &done[..]]).unwrap();
        assert_eq!((id.as_str(), out.len()), ("resp_2", 1));
    }
}
