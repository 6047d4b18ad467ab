//! claude-trace logs: JSON Lines, one request/response pair per line.
//!
//! Source: claude-trace (github.com/badlogic/lemmy, `apps/claude-trace/src/types.ts` and
//! `interceptor.ts`, read at commit 9d46530): a line is `{request: {timestamp (Unix
//! seconds), method, url, headers (object), body (parsed JSON, or the text when it did not
//! parse)}, response: {timestamp, status_code, headers, body (parsed JSON) | body_raw
//! (text, e.g. the SSE stream)} | null, logged_at, note?}`. Secret headers are already
//! shortened by claude-trace (`sk-ant-api...abcd`); they are redacted again here.

use std::path::Path;

use serde_json::Value;

use super::{
    foreign_headers, import_source, imported, json_body, object_headers, response, target_of,
    Format,
};
use crate::trace::{Exchange, ExchangeError};

/// What claude-trace logs never hold.
const MISSING: &[&str] = &[
    "request body bytes (claude-trace stores the parsed JSON; re-serialized here)",
    "header order (claude-trace stores headers as an object)",
    "response chunk timing",
    "connection addresses",
];

/// One log line as an exchange; `None` when it has no `request` object.
pub fn import_pair(v: &Value, path: &Path) -> Option<Exchange> {
    let req = v.get("request")?.as_object()?;
    let t = |o: &serde_json::Map<String, Value>| {
        o.get("timestamp")
            .and_then(Value::as_f64)
            .and_then(super::unix_seconds)
    };
    let started = t(req)
        .or_else(|| super::parse_time(v.get("logged_at").and_then(Value::as_str)))
        .unwrap_or(chrono::DateTime::UNIX_EPOCH);
    let mut x = imported(
        import_source(Format::ClaudeTrace, path, MISSING),
        started,
        req.get("method").and_then(Value::as_str).unwrap_or("GET"),
        target_of(req.get("url").and_then(Value::as_str).unwrap_or("/")),
        foreign_headers(object_headers(req.get("headers"))),
        json_body(req.get("body").unwrap_or(&Value::Null)),
    );
    match v.get("response").and_then(Value::as_object) {
        Some(resp) => {
            x.ended_at = t(resp);
            let body = match resp.get("body_raw").and_then(Value::as_str) {
                Some(raw) => raw.as_bytes().to_vec(),
                None => json_body(resp.get("body").unwrap_or(&Value::Null)),
            };
            let status = super::status_code(resp.get("status_code"), &mut x.source.missing);
            x.response = Some(response(status, object_headers(resp.get("headers")), body));
        }
        None => {
            x.error = Some(ExchangeError {
                kind: "no_response".into(),
                message: v
                    .get("note")
                    .and_then(Value::as_str)
                    .unwrap_or("claude-trace logged the request without a response")
                    .into(),
            });
        }
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_with_sse_text_and_orphan() {
        let line = serde_json::json!({
            "request": {"timestamp": 1700000000.5, "method": "POST",
                        "url": "https://api.anthropic.com/v1/messages?beta=true",
                        "headers": {"x-api-key": "sk-ant-api...abcd"}, "body": {"model": "m"}},
            "response": {"timestamp": 1700000001.25, "status_code": 200,
                         "headers": {"content-type": "text/event-stream"}, "body_raw": "event: ping\ndata: {}\n\n"},
            "logged_at": "2023-11-14T22:13:21.000Z"});
        let x = import_pair(&line, Path::new("log.jsonl")).unwrap();
        assert_eq!(x.request.body.bytes, br#"{"model":"m"}"#);
        assert_eq!(x.duration_us(), Some(750_000));
        assert_eq!(x.response.unwrap().body.bytes, b"event: ping\ndata: {}\n\n");
        assert!(!x.request.headers[0].1.contains("abcd"));
        let orphan = serde_json::json!({"request": {"method": "POST", "url": "/v1/messages"},
            "response": null, "logged_at": "2023-11-14T22:13:21.000Z", "note": "ORPHANED"});
        let x = import_pair(&orphan, Path::new("log.jsonl")).unwrap();
        assert_eq!(x.error.unwrap().message, "ORPHANED");
    }
}
