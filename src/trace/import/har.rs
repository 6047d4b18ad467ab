//! HTTP Archive (HAR) 1.2: the model (tolerant on input: every field optional, unknown
//! fields ignored) and the import of its entries as exchanges. Export lives in
//! [`crate::trace::export`].
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
use serde::{Deserialize, Serialize};

use super::{
    authority_of, foreign_headers, import_source, imported, response, target_of, Format,
    ImportError,
};
use crate::trace::{Exchange, ExchangeError};

/// A HAR document.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Har {
    /// The log.
    pub log: Log,
}

/// `log`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Log {
    /// Format version (`1.2`).
    #[serde(default)]
    pub version: String,
    /// The writing tool.
    #[serde(default)]
    pub creator: Creator,
    /// Exchanges in order.
    #[serde(default)]
    pub entries: Vec<Entry>,
}

/// `log.creator`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Creator {
    /// Tool name.
    #[serde(default)]
    pub name: String,
    /// Tool version.
    #[serde(default)]
    pub version: String,
}

/// One entry: a request and its response.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Entry {
    /// Start of the request (ISO 8601).
    #[serde(rename = "startedDateTime", default)]
    pub started_date_time: String,
    /// Total time in milliseconds.
    #[serde(default)]
    pub time: f64,
    /// The request.
    #[serde(default)]
    pub request: Request,
    /// The response (`status` 0 when there was none).
    #[serde(default)]
    pub response: Response,
    /// Cache state (always empty from agentwire).
    #[serde(default)]
    pub cache: serde_json::Map<String, serde_json::Value>,
    /// Phase durations in milliseconds.
    #[serde(default)]
    pub timings: Timings,
    /// Server IP address.
    #[serde(
        rename = "serverIPAddress",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub server_ip_address: Option<String>,
    /// Connection id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<String>,
    /// Free text (agentwire writes the error of an exchange that failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

/// A header, cookie or query parameter.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct NameValue {
    /// Name.
    #[serde(default)]
    pub name: String,
    /// Value.
    #[serde(default)]
    pub value: String,
}

/// `request`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Request {
    /// Method.
    #[serde(default)]
    pub method: String,
    /// Absolute URL.
    #[serde(default)]
    pub url: String,
    /// `HTTP/1.1`, `h2`, ...
    #[serde(rename = "httpVersion", default)]
    pub http_version: String,
    /// Cookies.
    #[serde(default)]
    pub cookies: Vec<NameValue>,
    /// Headers in order.
    #[serde(default)]
    pub headers: Vec<NameValue>,
    /// Query parameters.
    #[serde(rename = "queryString", default)]
    pub query_string: Vec<NameValue>,
    /// The body.
    #[serde(rename = "postData", default, skip_serializing_if = "Option::is_none")]
    pub post_data: Option<PostData>,
    /// Header bytes (−1: unknown).
    #[serde(rename = "headersSize", default = "unknown")]
    pub headers_size: i64,
    /// Body bytes (−1: unknown).
    #[serde(rename = "bodySize", default = "unknown")]
    pub body_size: i64,
}

/// `request.postData`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct PostData {
    /// MIME type.
    #[serde(rename = "mimeType", default)]
    pub mime_type: String,
    /// The body text.
    #[serde(default)]
    pub text: Option<String>,
    /// `base64` when `text` is base64 (an extension to 1.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
}

/// `response`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Response {
    /// Status code; 0 when no response was received. Read as any JSON value, so an entry
    /// whose status is a string, a float or null keeps its request and response (the
    /// value is checked by `status_code`, which names a bad one in `source.missing`).
    #[serde(default)]
    pub status: serde_json::Value,
    /// Reason phrase.
    #[serde(rename = "statusText", default)]
    pub status_text: String,
    /// Protocol version.
    #[serde(rename = "httpVersion", default)]
    pub http_version: String,
    /// Cookies.
    #[serde(default)]
    pub cookies: Vec<NameValue>,
    /// Headers in order.
    #[serde(default)]
    pub headers: Vec<NameValue>,
    /// The body.
    #[serde(default)]
    pub content: Content,
    /// Redirect target.
    #[serde(rename = "redirectURL", default)]
    pub redirect_url: String,
    /// Header bytes (−1: unknown).
    #[serde(rename = "headersSize", default = "unknown")]
    pub headers_size: i64,
    /// Body bytes as transferred (−1: unknown).
    #[serde(rename = "bodySize", default = "unknown")]
    pub body_size: i64,
}

/// `response.content`.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Content {
    /// Decoded body size in bytes.
    #[serde(default)]
    pub size: i64,
    /// Bytes saved by compression.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression: Option<i64>,
    /// MIME type.
    #[serde(rename = "mimeType", default)]
    pub mime_type: String,
    /// The body (decoded text, or base64 when `encoding` says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// `base64` for binary bodies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
}

/// `timings`, in milliseconds (−1: not applicable).
#[derive(Debug, Serialize, Deserialize)]
pub struct Timings {
    /// Queued.
    #[serde(default = "unknown_f")]
    pub blocked: f64,
    /// DNS lookup.
    #[serde(default = "unknown_f")]
    pub dns: f64,
    /// TCP connect.
    #[serde(default = "unknown_f")]
    pub connect: f64,
    /// Sending the request.
    #[serde(default)]
    pub send: f64,
    /// Waiting for the first response byte.
    #[serde(default)]
    pub wait: f64,
    /// Receiving the response.
    #[serde(default)]
    pub receive: f64,
    /// TLS handshake.
    #[serde(default = "unknown_f")]
    pub ssl: f64,
}

impl Default for Timings {
    fn default() -> Self {
        Timings {
            blocked: -1.0,
            dns: -1.0,
            connect: -1.0,
            send: 0.0,
            wait: 0.0,
            receive: 0.0,
            ssl: -1.0,
        }
    }
}

fn unknown() -> i64 {
    -1
}

fn unknown_f() -> f64 {
    -1.0
}

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

fn entry(e: Entry, index: usize, path: &Path, creator: &Creator) -> Exchange {
    let started = super::parse_time(Some(&e.started_date_time)).unwrap_or(DateTime::UNIX_EPOCH);
    let mut missing: Vec<&str> = MISSING.to_vec();
    let body = match &e.request.post_data {
        Some(p) => p.text.as_deref().map(|t| decode(t, p.encoding.as_deref())),
        None => None,
    };
    let (req_body, req_ok) = match body {
        Some(b) => b,
        None => {
            if e.request.body_size > 0 {
                missing.push("request body");
            }
            (Vec::new(), true)
        }
    };
    if !req_ok {
        missing.push("request body (its base64 did not decode; kept as text)");
    }
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
    // Status 0 (or none, with no content) is how browsers log a request that got no
    // response (HAR 1.2); any other value keeps the response, checked by `status_code`.
    let no_response = e.response.status == 0
        || (e.response.status.is_null() && e.response.content.text.is_none());
    if !no_response {
        let status = super::status_code(Some(&e.response.status), &mut x.source.missing);
        let c = e.response.content;
        let (bytes, ok) = match &c.text {
            Some(t) => decode(t, c.encoding.as_deref()),
            None => (Vec::new(), true),
        };
        if c.text.is_none() && c.size > 0 {
            x.source.missing.push("response body".into());
        }
        if !ok {
            x.source
                .missing
                .push("response body (its base64 did not decode; kept as text)".into());
        }
        let mut r = response(status, pairs(e.response.headers).collect::<Vec<_>>(), bytes);
        if !e.response.http_version.is_empty() {
            r.version = e.response.http_version.to_ascii_uppercase();
        }
        r.first_byte_at = super::ms_after(started, before_body);
        x.response = Some(r);
    }
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
