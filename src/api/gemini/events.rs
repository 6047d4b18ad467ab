//! Canonical assistant content written as a Gemini answer: the parts, the
//! `GenerateContentResponse` chunks a stream is made of, and Google's error body (what
//! agentwire's fake server sends on `…:generateContent` and `…:streamGenerateContent`).
//!
//! Sources: Gemini API reference, "Generating content" (`candidates[].content.parts`,
//! `finishReason`, `usageMetadata`, `modelVersion`, `responseId`) and "Troubleshooting"
//! (`{"error": {"code", "message", "status"}}`), read 2026-12-02; the single-chunk answer
//! Gemini CLI 0.61.0 completed on (`../shared/agents.md` §2.4).
//!
//! Mapping of content blocks (Messages shape, as scenario files write them) to parts:
//! `text` → `{"text"}`; `tool_use` → `{"functionCall": {"name", "args"}}`, without an `id`
//! as the real API sends it, or with the block's `id` when the block says `"send_id":
//! true`; `thinking` → `{"text", "thought": true}`. A block already in Gemini shape (no
//! `type`) is a part as it is.

use serde_json::{json, Value};

/// Characters of text per streamed chunk.
pub const TEXT_PIECE: usize = 16;

/// The parts of scenario `content`.
pub fn parts_of(content: &[Value]) -> Vec<Value> {
    content.iter().map(part_of).collect()
}

fn part_of(b: &Value) -> Value {
    let s = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("");
    match b.get("type").and_then(Value::as_str) {
        Some("text") => json!({"text": s("text")}),
        Some("thinking") => json!({"text": s("thinking"), "thought": true}),
        Some("tool_use") => {
            let mut call =
                json!({"name": s("name"), "args": b.get("input").cloned().unwrap_or(json!({}))});
            if b.get("send_id").and_then(Value::as_bool) == Some(true) {
                call["id"] = json!(s("id"));
            }
            json!({"functionCall": call})
        }
        Some(other) => json!({"text": format!("[{other} block]")}),
        None => b.clone(),
    }
}

/// A `usageMetadata` object: `prompt` tokens (including `cached`), `output` tokens; the
/// cached count is sent only when non-zero, as the API does.
pub fn usage(prompt: u64, cached: u64, output: u64) -> Value {
    let mut u = json!({"promptTokenCount": prompt, "candidatesTokenCount": output,
        "totalTokenCount": prompt + output});
    if cached > 0 {
        u["cachedContentTokenCount"] = json!(cached);
    }
    u
}

/// One response object holding `parts` (`finish`: the `finishReason`, if this is the
/// last chunk; `tail`: members of the last chunk such as `usageMetadata`).
pub fn chunk(parts: Vec<Value>, finish: Option<&str>, tail: &Value) -> Value {
    let mut cand = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    if let Some(f) = finish {
        cand["finishReason"] = json!(f);
    }
    let mut c = json!({"candidates": [cand]});
    if let (Some(o), Some(t)) = (c.as_object_mut(), tail.as_object()) {
        o.extend(t.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    c
}

/// The chunks of a streamed answer: text in pieces of [`TEXT_PIECE`] characters, every
/// other part whole, and a last chunk with the `finishReason` and `tail` (usage, model,
/// response id).
pub fn stream_chunks(parts: &[Value], tail: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    for p in parts {
        match p.get("text").and_then(Value::as_str) {
            Some(t) if p.get("thought").is_none() && !t.is_empty() => {
                let chars: Vec<char> = t.chars().collect();
                for piece in chars.chunks(TEXT_PIECE) {
                    let text: String = piece.iter().collect();
                    out.push(chunk(vec![json!({ "text": text })], None, &json!({})));
                }
            }
            _ => out.push(chunk(vec![p.clone()], None, &json!({}))),
        }
    }
    out.push(chunk(Vec::new(), Some("STOP"), tail));
    out
}

/// An SSE event of one chunk (`data:` only, as the API sends).
pub fn sse(v: &Value) -> String {
    format!("data: {v}\r\n\r\n")
}

/// Google's error body for `status` with `message`.
pub fn error_body(status: u16, message: &str) -> Value {
    json!({"error": {"code": status, "message": message, "status": status_name(status)}})
}

/// The `status` name Google gives an HTTP status (source: "Troubleshooting", the API's
/// error codes).
pub fn status_name(status: u16) -> &'static str {
    match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        499 => "CANCELLED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
    }
}

/// An instance of a JSON schema (`responseJsonSchema` or `responseSchema`, whose type
/// names may be upper case): an object with every required property (or every property
/// when none is marked required), each filled by its type: the first `enum` value, a
/// number's `minimum` (else 1), `"agentwire"` for strings, false, `[]`.
pub fn instance_of(schema: &Value) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    let ty = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("object")
        .to_ascii_lowercase();
    match ty.as_str() {
        "object" => {
            let props = schema.get("properties").and_then(Value::as_object);
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut o = serde_json::Map::new();
            for (k, v) in props.into_iter().flatten() {
                if required.is_empty() || required.contains(&k.as_str()) {
                    o.insert(k.clone(), instance_of(v));
                }
            }
            Value::Object(o)
        }
        "integer" | "number" => schema.get("minimum").cloned().unwrap_or(json!(1)),
        "boolean" => json!(false),
        "array" => json!([]),
        _ => json!("agentwire"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_blocks_become_parts_and_schemas_get_an_instance() {
        let parts = parts_of(&[
            json!({"type":"text","text":"hi"}),
            json!({"type":"tool_use","id":"t1","name":"ls","input":{"d":"."}}),
            json!({"type":"tool_use","id":"t2","name":"ls","input":{},"send_id":true}),
        ]);
        assert_eq!(parts[0], json!({"text":"hi"}));
        assert!(parts[1]["functionCall"].get("id").is_none());
        assert_eq!(parts[2]["functionCall"]["id"], "t2");
        let schema = json!({"type":"object","properties":{
            "complexity_reasoning":{"type":"string"},
            "complexity_score":{"type":"integer","minimum":1,"maximum":100}},
            "required":["complexity_reasoning","complexity_score"]});
        assert_eq!(
            instance_of(&schema),
            json!({"complexity_reasoning":"agentwire","complexity_score":1})
        );
        let chunks = stream_chunks(
            &parts_of(&[json!({"type":"text","text":"0123456789abcdefXYZ"})]),
            &json!({"responseId":"r"}),
        );
        assert_eq!(chunks.len(), 3);
        assert_eq!(chunks[2]["responseId"], "r");
        let m = crate::api::gemini::stream::assemble_sse(
            chunks.iter().map(sse).collect::<String>().as_bytes(),
        );
        assert_eq!(m.content[0].text(), Some("0123456789abcdefXYZ"));
    }
}
