//! Canonical assistant content written as a Chat Completions answer: the
//! `chat.completion` object, or the `chat.completion.chunk` stream that builds it (what
//! agentwire's fake server sends on `POST …/chat/completions`).
//!
//! Source: OpenAI API reference, "The chat completion object" and "The chat completion
//! chunk object". The chunk sequence is the one opencode 1.18.33 accepted through an
//! `@ai-sdk/openai-compatible` provider (measured 2026-12-01): a role chunk
//! (`delta: {role: "assistant", content: ""}`), text in `delta.content` pieces, each tool
//! call as a fragment with `index`, `id`, `type` and `function.name` (`arguments: ""`)
//! followed by `arguments` pieces, a chunk with `finish_reason` (`stop` or `tool_calls`),
//! with `stream_options.include_usage` a chunk with empty `choices` and `usage`, then
//! `data: [DONE]`.
//!
//! Mapping of content blocks (Messages shape, as scenario files write them): `text` →
//! `content`; `tool_use` → a `tool_calls[]` entry (`arguments` = the input's compact JSON;
//! the block's `id`, else one made up); `thinking` → `reasoning_content`; other blocks are
//! left out.

use serde_json::{json, Value};

/// Characters per `delta.content` piece.
pub const TEXT_PIECE: usize = 8;
/// Characters per `function.arguments` piece.
pub const ARGS_PIECE: usize = 16;

/// A Chat Completions answer before it is encoded.
#[derive(Clone, Debug, PartialEq)]
pub struct ChatAnswer {
    /// Completion id (`chatcmpl-…`).
    pub id: String,
    /// Model to echo.
    pub model: String,
    /// The message's text (empty: `content` null in JSON).
    pub text: String,
    /// Reasoning text (compatible providers' `reasoning_content`), if any.
    pub reasoning: String,
    /// Tool calls `{id, type:"function", function:{name, arguments}}` in order.
    pub tool_calls: Vec<Value>,
    /// The `usage` object, if known.
    pub usage: Option<Value>,
    /// `created`, seconds since the Unix epoch.
    pub created: i64,
}

impl ChatAnswer {
    /// The answer whose content is `content` (Messages-shaped blocks), call ids made from
    /// `id` where a block has none.
    pub fn new(id: String, model: String, content: &[Value]) -> ChatAnswer {
        let mut a = ChatAnswer {
            id,
            model,
            text: String::new(),
            reasoning: String::new(),
            tool_calls: Vec::new(),
            usage: None,
            created: chrono::Utc::now().timestamp(),
        };
        for b in content {
            let s = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("");
            match s("type") {
                "text" => a.text.push_str(s("text")),
                "thinking" => a.reasoning.push_str(s("thinking")),
                "tool_use" => {
                    let n = a.tool_calls.len();
                    let call_id = match s("id") {
                        "" => format!("call_{}_{n}", a.id),
                        id => id.to_string(),
                    };
                    let args = match b.get("input") {
                        Some(Value::String(s)) => s.clone(),
                        Some(v) => v.to_string(),
                        None => "{}".into(),
                    };
                    a.tool_calls.push(json!({"id": call_id, "type": "function",
                        "function": {"name": s("name"), "arguments": args}}));
                }
                _ => {}
            }
        }
        a
    }

    /// `finish_reason`: `tool_calls` when the answer calls tools, else `stop`.
    pub fn finish_reason(&self) -> &'static str {
        if self.tool_calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        }
    }

    /// The non-streaming `chat.completion` object.
    pub fn completion(&self) -> Value {
        let mut message = json!({"role": "assistant",
            "content": if self.text.is_empty() { Value::Null } else { json!(self.text) }});
        if !self.tool_calls.is_empty() {
            message["tool_calls"] = json!(self.tool_calls);
        }
        if !self.reasoning.is_empty() {
            message["reasoning_content"] = json!(self.reasoning);
        }
        json!({"id": self.id, "object": "chat.completion", "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason()}],
            "usage": self.usage.clone().unwrap_or(Value::Null)})
    }

    fn chunk(&self, choices: Value) -> Value {
        json!({"id": self.id, "object": "chat.completion.chunk", "created": self.created,
            "model": self.model, "choices": choices})
    }

    fn delta(&self, delta: Value) -> Value {
        self.chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}]))
    }

    /// The chunks in order (`[DONE]` is not a chunk: [`DONE`]); the usage chunk only when
    /// `include_usage` (the request's `stream_options.include_usage`).
    pub fn chunks(&self, include_usage: bool) -> Vec<Value> {
        let mut out = vec![self.delta(json!({"role": "assistant", "content": ""}))];
        for piece in pieces(&self.reasoning, TEXT_PIECE) {
            out.push(self.delta(json!({"reasoning_content": piece})));
        }
        for piece in pieces(&self.text, TEXT_PIECE) {
            out.push(self.delta(json!({"content": piece})));
        }
        for (i, c) in self.tool_calls.iter().enumerate() {
            let mut head = c.clone();
            head["index"] = json!(i);
            head["function"]["arguments"] = json!("");
            out.push(self.delta(json!({"tool_calls": [head]})));
            let args = c.pointer("/function/arguments").and_then(Value::as_str);
            for piece in pieces(args.unwrap_or(""), ARGS_PIECE) {
                out.push(self.delta(
                    json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                ));
            }
        }
        out.push(
            self.chunk(json!([{"index": 0, "delta": {}, "finish_reason": self.finish_reason()}])),
        );
        if include_usage {
            let mut u = self.chunk(json!([]));
            u["usage"] = self.usage.clone().unwrap_or(Value::Null);
            out.push(u);
        }
        out
    }
}

/// The stream's last line.
pub const DONE: &str = "data: [DONE]\n\n";

/// A chunk as an SSE event (`data:` only, no `event:` name).
pub fn sse(v: &Value) -> String {
    format!("data: {v}\n\n")
}

/// A `usage` object: `prompt` tokens (including the `cached` ones), `completion` tokens.
pub fn usage(prompt: u64, cached: u64, completion: u64) -> Value {
    json!({"prompt_tokens": prompt, "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached}})
}

/// `text` in pieces of `n` characters (none for empty text).
fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chunks_assemble_back_into_the_answer() {
        let content = [
            json!({"type": "text", "text": "Starting the job now."}),
            json!({"type": "tool_use", "name": "jobs_start_job", "input": {"seconds": 3}}),
        ];
        let mut a = ChatAnswer::new("chatcmpl-7".into(), "fake-model".into(), &content);
        a.usage = Some(usage(1200, 1024, 9));
        let mut body: String = a.chunks(true).iter().map(sse).collect();
        body.push_str(DONE);
        let m = super::super::stream::assemble_sse(body.as_bytes());
        assert!(m.complete, "{:?}", m.stream_problems);
        assert_eq!(m.content[0].text(), Some("Starting the job now."));
        let calls: Vec<_> = m.tool_calls().collect();
        assert_eq!(calls[0].1, "jobs_start_job");
        assert_eq!(calls[0].2, &json!({"seconds": 3}));
        assert_eq!(m.usage.input_tokens, Some(176));
        assert_eq!(m.stop_reason.as_deref(), Some("tool_calls"));
        let j = super::super::stream::from_json(&a.completion());
        assert_eq!(j.tool_calls().count(), 1);
        assert_eq!(j.content[0].text(), Some("Starting the job now."));
    }
}
