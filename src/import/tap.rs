//! claude-tap files: its trace records (JSON Lines, one per request), the compact trace
//! bundle `claude-tap export` writes (records whose large parts point into a blob table),
//! and the `--format json` export (model, messages, system, tools and the response only).
//!
//! Source: claude-tap 0.1.146 from PyPI (`claude_tap/compact_trace.py`, `export.py`):
//! a record is `{timestamp, request_id, turn, duration_ms, request: {method, path,
//! headers, body}, response: {status, headers, body}}` with bodies stored as parsed JSON
//! (re-serialized here, so request bytes are not the wire bytes) and streamed responses
//! stored as the assembled message. A bundle is `{"__claude_tap_compact_trace__": {...},
//! "records": [...], "blobs": {HASH: {"payload": ...}}}` where any value may be
//! `{"__claude_tap_blob_ref__": {"hash": HASH}}`.

use std::path::Path;

use serde_json::Value;

use super::blobs::Expander;
#[cfg(test)]
use super::blobs::BLOB_REF;
use super::{
    foreign_headers, import_source, imported, json_body, object_headers, response, target_of,
    Format,
};
use crate::http::is_event_stream;
use crate::trace::Exchange;

/// Key marking a compact trace bundle.
pub const BUNDLE_MARKER: &str = "__claude_tap_compact_trace__";
/// Key marking a compact record (the record itself is under `record`).
pub const RECORD_MARKER: &str = "__claude_tap_compact_record__";

/// What claude-tap records never hold.
const MISSING: &[&str] = &[
    "request body bytes (claude-tap stores the parsed JSON; re-serialized here)",
    "response chunk timing",
    "connection addresses",
];

/// Exchanges of a whole claude-tap document: a compact bundle or a `--format json` export,
/// and one warning per bundle record skipped (no request object), naming its index in
/// `records`. `None` when `doc` is neither.
pub fn import_document(doc: Value, path: &Path) -> Option<(Vec<Exchange>, Vec<String>)> {
    match doc {
        Value::Object(mut o) if o.contains_key(BUNDLE_MARKER) => {
            let blobs = o.remove("blobs").unwrap_or(Value::Null);
            let records = match o.remove("records") {
                Some(Value::Array(a)) => a,
                _ => Vec::new(),
            };
            let (mut xs, mut problems) = (Vec::new(), Vec::new());
            let mut expander = Expander::new(&blobs);
            for (i, r) in records.into_iter().enumerate() {
                let r = match expander.expand(unwrap_record(r)) {
                    Ok(r) => r,
                    Err(why) => {
                        problems.push(format!("record {i}: {why}; it was skipped"));
                        continue;
                    }
                };
                match import_record(&r, path) {
                    Some(x) => xs.push(x),
                    None => problems.push(format!(
                        "record {i}: not a claude-tap record (no request object); it was skipped"
                    )),
                }
            }
            Some((xs, problems))
        }
        Value::Array(a) => Some((
            a.iter().map(|e| json_export_entry(e, path)).collect(),
            Vec::new(),
        )),
        _ => None,
    }
}

/// The record inside a compact record wrapper (or the value itself).
fn unwrap_record(v: Value) -> Value {
    match v {
        Value::Object(mut o) if o.contains_key(RECORD_MARKER) => {
            o.remove("record").unwrap_or(Value::Null)
        }
        other => other,
    }
}

/// One claude-tap trace record (a line of its JSON Lines, or a bundle record) as an
/// exchange; `None` when the value has no `request` object.
pub fn import_record(r: &Value, path: &Path) -> Option<Exchange> {
    let r = if r.get(RECORD_MARKER).is_some() {
        r.get("record")?
    } else {
        r
    };
    let req = r.get("request")?.as_object()?;
    let started = super::parse_time(r.get("timestamp").and_then(Value::as_str))
        .unwrap_or(chrono::DateTime::UNIX_EPOCH);
    let mut missing: Vec<&str> = MISSING.to_vec();
    let body = req.get("body").cloned().unwrap_or(Value::Null);
    if body.get("_encoding").is_some() {
        missing.push("request body (claude-tap kept only its length)");
    }
    let mut x = imported(
        import_source(Format::ClaudeTap, path, &missing),
        started,
        req.get("method").and_then(Value::as_str).unwrap_or("POST"),
        target_of(req.get("path").and_then(Value::as_str).unwrap_or("/")),
        foreign_headers(object_headers(req.get("headers"))),
        json_body(&body),
    );
    if let Some(ms) = r.get("duration_ms").and_then(Value::as_f64) {
        x.ended_at = super::ms_after(started, ms);
    }
    if let Some(resp) = r.get("response").filter(|v| v.is_object()) {
        let status = super::status_code(resp.get("status"), &mut x.source.missing);
        let body = resp.get("body").cloned().unwrap_or(Value::Null);
        let mut headers = object_headers(resp.get("headers"));
        let sse = headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && is_event_stream(v));
        if sse && body.is_object() {
            // the stream was stored assembled: say so, and label the body for what it is
            for (k, v) in headers.iter_mut() {
                if k.eq_ignore_ascii_case("content-type") {
                    *v = "application/json".into();
                }
            }
            x.source
                .missing
                .push("response event stream (claude-tap stores the assembled message)".into());
        }
        x.response = Some(response(status, headers, json_body(&body)));
    }
    let mut note = serde_json::Map::new();
    for k in ["request_id", "turn", "upstream_base_url"] {
        if let Some(v) = r.get(k) {
            note.insert(k.into(), v.clone());
        }
    }
    x.notes.insert("import".into(), Value::Object(note));
    Some(x)
}

/// An entry of `claude-tap export --format json`: model, messages, system, tools, response.
fn json_export_entry(e: &Value, path: &Path) -> Exchange {
    let mut body = serde_json::Map::new();
    for k in ["model", "messages", "system", "tools"] {
        if let Some(v) = e.get(k).filter(|v| !v.is_null()) {
            body.insert(k.into(), v.clone());
        }
    }
    let started = super::parse_time(e.get("timestamp").and_then(Value::as_str))
        .unwrap_or(chrono::DateTime::UNIX_EPOCH);
    let mut x = imported(
        import_source(
            Format::ClaudeTap,
            path,
            &[
                crate::trace::MISSING_REQUEST_HEADERS,
                "request parameters other than model, system, tools and messages",
                "request body bytes (rebuilt from the export's fields)",
                "response headers and bytes (rebuilt from content, usage and stop reason)",
                "response chunk timing",
            ],
        ),
        started,
        "POST",
        "/v1/messages".into(),
        vec![("content-type".into(), "application/json".into())],
        json_body(&Value::Object(body)),
    );
    if let Some(ms) = e.get("duration_ms").and_then(Value::as_f64) {
        x.ended_at = super::ms_after(started, ms);
    }
    if let Some(r) = e.get("response") {
        let msg = serde_json::json!({
            "type": "message",
            "role": "assistant",
            "model": e.get("model"),
            "content": r.get("content"),
            "stop_reason": r.get("stop_reason"),
            "usage": r.get("usage"),
        });
        x.response = Some(response(
            200,
            vec![("content-type".into(), "application/json".into())],
            json_body(&msg),
        ));
    }
    x.notes
        .insert("import".into(), serde_json::json!({"turn": e.get("turn")}));
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_blob_refs_are_materialized() {
        let doc = serde_json::json!({
            BUNDLE_MARKER: {"version": 1},
            "records": [{RECORD_MARKER: {"version": 1, "refs": [{"path": "/request/body/tools"}]},
                "record": {"timestamp": "2026-01-01T00:00:00+00:00", "turn": 1, "duration_ms": 5,
                  "request": {"method": "POST", "path": "/v1/messages", "headers": {"X-Api-Key": "sk-ant-api03..."},
                              "body": {"model": "m", "tools": {BLOB_REF: {"hash": "sha256:ab"}}, "messages": []}},
                  "response": {"status": 200, "headers": {"Content-Type": "text/event-stream"},
                               "body": {"type": "message", "content": []}}}}],
            "blobs": {"sha256:ab": {"kind": "json", "payload": [{"name": "Bash"}]}}
        });
        let (xs, problems) = import_document(doc, Path::new("t.ctap.json")).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            xs[0].request.body.bytes,
            br#"{"model":"m","tools":[{"name":"Bash"}],"messages":[]}"#
        );
        assert!(!xs[0].request.headers[0].1.contains("sk-ant-api03..."));
        let r = xs[0].response.as_ref().unwrap();
        assert_eq!(r.headers[0].1, "application/json");
        assert_eq!(xs[0].duration_us(), Some(5000));
    }

    #[test]
    fn duration_past_the_calendar_end_is_unknown_not_a_panic() {
        // duration_ms 1e300 once panicked ("DateTime + TimeDelta overflowed") in show
        let rec = serde_json::json!({"timestamp": "2026-01-01T00:00:00Z", "duration_ms": 1e300,
            "request": {"method": "POST", "path": "/v1/messages", "body": {"model": "m", "messages": []}}});
        let x = import_record(&rec, Path::new("t.jsonl")).unwrap();
        assert_eq!(x.started_at.to_rfc3339(), "2026-01-01T00:00:00+00:00");
        assert_eq!(x.ended_at, None);
        let doc = serde_json::json!([{"timestamp": "2026-01-01T00:00:00Z", "duration_ms": 1e300, "model": "m", "messages": []}]);
        let (xs, _) = import_document(doc, Path::new("t.json")).unwrap();
        assert_eq!(xs[0].ended_at, None);
    }

    #[test]
    fn bundle_record_without_a_request_is_skipped_by_index_not_silently() {
        // such records once vanished without a word (exit 0)
        let doc = serde_json::json!({
            BUNDLE_MARKER: {"version": 1},
            "records": [
                {"timestamp": "2026-01-01T00:00:00Z", "request": {"method": "POST", "path": "/v1/messages", "body": {"model": "m", "messages": []}}},
                {"timestamp": "2026-01-01T00:00:01Z", "request": "not an object"},
                {"timestamp": "2026-01-01T00:00:02Z", "request": {"method": "POST", "path": "/v1/messages", "body": {"model": "m", "messages": []}}}
            ]
        });
        let (xs, problems) = import_document(doc, Path::new("t.ctap.json")).unwrap();
        assert_eq!(xs.len(), 2);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("record 1: "), "{}", problems[0]);
    }
}
