//! HTTP Archive (HAR) 1.2 import: the entries of a HAR document as exchanges. The
//! document model is [`crate::trace::har`] (shared with the export,
//! [`crate::trace::export`]).
//!
//! Source: the HAR 1.2 specification (W3C Web Performance WG draft, "HTTP Archive (HAR)
//! format", 2012): `log.entries[]` with `startedDateTime`, `time` (ms), `request`
//! (`method`, `url`, `httpVersion`, `headers[]`, `postData.text`), `response` (`status`,
//! `headers[]`, `content.text`, `content.encoding` = `base64` for binary) and `timings`
//! (ms, −1 when not applicable). `postData.encoding` is not in 1.2; some writers (and
//! agentwire's export) add it for binary request bodies, and it is honoured here.

use std::path::Path;

use base64::Engine;
use chrono::DateTime;

use super::{
    authority_of, foreign_headers, import_source, imported, response, target_of, Format,
    ImportError,
};
use crate::trace::har::{Creator, Entry, Har, NameValue, Request, Response};
use crate::trace::{Exchange, ExchangeError, HttpResponse};

/// What a HAR never holds: chunk arrival times and connection addresses.
const MISSING: &[&str] = &["response chunk timing", "connection addresses"];

/// Import a parsed HAR document read from `path`: the exchanges, and one warning per
/// entry that was skipped (not an entry object, a field of the wrong type such as a
/// `null` header value) or read with a guess (a `startedDateTime` that is no date),
/// naming the entry's index in `log.entries`.
///
/// Errors: [`ImportError::Malformed`] when the document does not have the HAR shape
/// (naming the serde path of the first bad field outside the entries).
pub fn import(
    mut doc: serde_json::Value,
    path: &Path,
) -> Result<(Vec<Exchange>, Vec<String>), ImportError> {
    let malformed = |detail: String| ImportError::Malformed {
        path: path.display().to_string(),
        format: "HAR file",
        detail,
    };
    // Entries are read one by one, so one bad entry costs that entry, not the file.
    let entries = match doc
        .get_mut("log")
        .and_then(serde_json::Value::as_object_mut)
        .and_then(|log| log.remove("entries"))
    {
        None | Some(serde_json::Value::Null) => Vec::new(),
        Some(serde_json::Value::Array(a)) => a,
        Some(_) => return Err(malformed("log.entries is not an array".into())),
    };
    let har: Har = serde_json::from_value(doc).map_err(|e| malformed(e.to_string()))?;
    let mut out = Vec::with_capacity(entries.len());
    let mut problems = Vec::new();
    for (i, v) in entries.into_iter().enumerate() {
        match serde_json::from_value::<Entry>(v) {
            Ok(e) => {
                if super::parse_time(Some(&e.started_date_time)).is_none() {
                    problems.push(format!(
                        "entry {i}: startedDateTime {:?} is not an ISO 8601 date; the exchange is dated 1970-01-01",
                        e.started_date_time
                    ));
                }
                out.push(entry(e, i, path, &har.log.creator));
            }
            Err(e) => problems.push(format!(
                "entry {i}: not a HAR entry ({e}); the entry was skipped"
            )),
        }
    }
    Ok((out, problems))
}

fn decode(text: &str, encoding: Option<&str>) -> (Vec<u8>, bool) {
    if encoding.is_some_and(|e| e.eq_ignore_ascii_case("base64")) {
        match base64::engine::general_purpose::STANDARD.decode(text.trim()) {
            Ok(b) => return (b, true),
            Err(_) => return (text.as_bytes().to_vec(), false),
        }
    }
    (text.as_bytes().to_vec(), true)
}

fn pairs(v: Vec<NameValue>) -> impl Iterator<Item = (String, String)> {
    v.into_iter().map(|h| (h.name, h.value))
}

/// One HAR entry as an exchange; what the entry lacks is listed in `source.missing`.
fn entry(e: Entry, index: usize, path: &Path, creator: &Creator) -> Exchange {
    let started = super::parse_time(Some(&e.started_date_time)).unwrap_or(DateTime::UNIX_EPOCH);
    let mut missing: Vec<&str> = MISSING.to_vec();
    let req_body = request_body(&e.request, &mut missing);
    let source = import_source(Format::Har, path, &missing);
    let method = if e.request.method.is_empty() {
        "GET"
    } else {
        &e.request.method
    };
    let target = if method.eq_ignore_ascii_case("CONNECT") {
        authority_of(&e.request.url)
    } else {
        target_of(&e.request.url)
    };
    let mut x = imported(
        source,
        started,
        method,
        target,
        foreign_headers(pairs(e.request.headers)),
        req_body,
    );
    if !e.request.http_version.is_empty() {
        x.request.version = e.request.http_version.to_ascii_uppercase();
    }
    x.ended_at = super::ms_after(started, e.time);
    let t = &e.timings;
    let before_body: f64 = [t.blocked, t.dns, t.connect, t.send, t.wait]
        .iter()
        .filter(|v| **v > 0.0)
        .sum();
    x.response = entry_response(e.response, started, before_body, &mut x.source.missing);
    if x.response.is_none() {
        x.error = Some(ExchangeError {
            kind: "no_response".into(),
            message: e
                .comment
                .unwrap_or_else(|| "the HAR entry has no response (status 0)".into()),
        });
    }
    x.notes.insert(
        "import".into(),
        serde_json::json!({"entry": index, "creator": format!("{} {}", creator.name, creator.version).trim()}),
    );
    x
}

/// The request body of an entry (`postData.text`, base64-decoded when it says so); what
/// it lacks is added to `missing`.
fn request_body(req: &Request, missing: &mut Vec<&str>) -> Vec<u8> {
    let body = match &req.post_data {
        Some(p) => p.text.as_deref().map(|t| decode(t, p.encoding.as_deref())),
        None => None,
    };
    let (req_body, req_ok) = match body {
        Some(b) => b,
        None => {
            if req.body_size > 0 {
                missing.push("request body");
            }
            (Vec::new(), true)
        }
    };
    if !req_ok {
        missing.push("request body (its base64 did not decode; kept as text)");
    }
    req_body
}

/// The response of an entry, its first byte `before_body_ms` milliseconds after
/// `started`; what it lacks is added to `missing`. Status 0 (or none, with no content) is
/// how browsers log a request that got no response (HAR 1.2): `None`. Any other value
/// keeps the response, checked by `status_code`.
fn entry_response(
    resp: Response,
    started: DateTime<chrono::Utc>,
    before_body_ms: f64,
    missing: &mut Vec<String>,
) -> Option<HttpResponse> {
    let no_response = resp.status == 0 || (resp.status.is_null() && resp.content.text.is_none());
    if no_response {
        return None;
    }
    let status = super::status_code(Some(&resp.status), missing);
    let c = resp.content;
    let (bytes, ok) = match &c.text {
        Some(t) => decode(t, c.encoding.as_deref()),
        None => (Vec::new(), true),
    };
    if c.text.is_none() && c.size > 0 {
        missing.push("response body".into());
    }
    if !ok {
        missing.push("response body (its base64 did not decode; kept as text)".into());
    }
    let mut r = response(status, pairs(resp.headers).collect::<Vec<_>>(), bytes);
    if !resp.http_version.is_empty() {
        r.version = resp.http_version.to_ascii_uppercase();
    }
    r.first_byte_at = super::ms_after(started, before_body_ms);
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_with_base64_response_and_no_response() {
        let doc = serde_json::json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"},
        "entries": [
          {"startedDateTime": "2026-01-02T03:04:05.006Z", "time": 12.5,
           "request": {"method": "POST", "url": "https://api.anthropic.com/v1/messages?beta=true",
                       "headers": [{"name": "x-api-key", "value": "sk-ant-api03-SECRET"}],
                       "postData": {"mimeType": "application/json", "text": "{\"a\": 1}"}},
           "response": {"status": 200, "headers": [], "content": {"size": 3, "text": "/wA=", "encoding": "base64"}},
           "timings": {"send": 1, "wait": 10, "receive": 1.5}},
          {"startedDateTime": "2026-01-02T03:04:06Z", "request": {"method": "GET", "url": "http://h/x"},
           "response": {"status": 0}}
        ]}});
        let (xs, problems) = import(doc, Path::new("a.har")).unwrap();
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(xs.len(), 2);
        assert_eq!(xs[0].request.target, "/v1/messages?beta=true");
        assert_eq!(xs[0].request.body.bytes, b"{\"a\": 1}");
        assert!(!xs[0].request.headers[0].1.contains("SECRET"));
        let r = xs[0].response.as_ref().unwrap();
        assert_eq!(r.body.bytes, [0xff, 0x00]);
        assert_eq!(xs[0].duration_us(), Some(12_500));
        assert_eq!(
            (r.first_byte_at.unwrap() - xs[0].started_at).num_microseconds(),
            Some(11_000)
        );
        assert!(xs[1].response.is_none());
        assert_eq!(xs[1].error.as_ref().unwrap().kind, "no_response");
        assert_eq!(xs[0].source.format.as_deref(), Some("har"));
    }

    #[test]
    fn bad_entries_are_skipped_by_index_and_a_bad_date_is_named() {
        // a null header value or a string entry once rejected the whole file naming no
        // entry; "not a date" silently became 1970
        let ok = serde_json::json!({"startedDateTime": "2026-01-02T03:04:05Z",
            "request": {"method": "GET", "url": "http://h/ok"}, "response": {"status": 200}});
        let doc = serde_json::json!({"log": {"entries": [
            ok,
            {"startedDateTime": "2026-01-02T03:04:06Z",
             "request": {"method": "GET", "url": "http://h/x", "headers": [{"name": "a", "value": null}]},
             "response": {"status": 200}},
            "not an entry",
            {"startedDateTime": "not a date", "time": 1e300,
             "request": {"method": "GET", "url": "http://h/late"}, "response": {"status": 204}},
        ]}});
        let (xs, problems) = import(doc, Path::new("b.har")).unwrap();
        let targets: Vec<&str> = xs.iter().map(|x| x.request.target.as_str()).collect();
        assert_eq!(targets, ["/ok", "/late"]);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].starts_with("entry 1: ") && problems[0].contains("skipped"));
        assert!(problems[1].starts_with("entry 2: ") && problems[1].contains("skipped"));
        assert!(problems[2].starts_with("entry 3: ") && problems[2].contains("\"not a date\""));
        assert_eq!(xs[1].started_at, DateTime::UNIX_EPOCH);
        assert_eq!(
            xs[1].ended_at, None,
            "a duration past the calendar's end is unknown"
        );
        // the document's shape outside the entries is still checked
        let bad = serde_json::json!({"log": {"entries": {"a": 1}}});
        assert!(import(bad, Path::new("c.har")).is_err());
    }
}
