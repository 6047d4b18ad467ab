//! Recording what a connection sent that no handler received, when it ends: requests the
//! server read but never processed, and bytes that are no valid HTTP/1.1 request, raw,
//! secrets redacted (the byte accounting is [`super::tee`]'s).

use std::time::Instant;

use chrono::Utc;

use super::state::{AppState, ConnInfo};
use crate::trace::redact::{raw_head, redact_text};
use crate::trace::{Body, ExchangeError, HttpRequest};

/// The connection ended (`error`: how hyper ended it): record every request it read but
/// never handed to a handler, and every byte that did not frame as a request, raw, with
/// secrets redacted.
pub(crate) fn record(st: &AppState, conn: &ConnInfo, error: Option<&hyper::Error>) {
    let left = conn.recent.take();
    let hyper_kind = error.map(|e| {
        if e.is_parse_too_large() {
            "head_too_large"
        } else if e.is_parse() || e.is_parse_status() {
            "malformed_http"
        } else if e.is_timeout() {
            "head_timeout"
        } else {
            "incomplete_head"
        }
    });
    let why = error.map_or_else(|| "the connection closed".to_string(), |e| e.to_string());
    for u in left.requests {
        let (kind, message) = if u.complete {
            (
                "unprocessed",
                format!("the server read this request ({} bytes) but did not process it: the connection ended after an earlier request ({why}; HTTP/1.0, `Connection: close`, or both Content-Length and Transfer-Encoding, RFC 9112 §6.3, end a connection); kept raw", u.len),
            )
        } else {
            (
                hyper_kind.unwrap_or("incomplete_request"),
                format!(
                    "the connection ended ({why}) after {} bytes of this request; kept raw",
                    u.len
                ),
            )
        };
        record_raw(st, conn, u.raw, u.len, kind, message);
    }
    let raw = left.garbage;
    if raw.iter().all(u8::is_ascii_whitespace) {
        return; // an idle keep-alive connection closed or timed out: nothing was sent
    }
    let n = left.garbage_len.max(raw.len() as u64);
    let kind = hyper_kind.unwrap_or("incomplete_head");
    let message = format!("the connection sent {n} bytes that are not a valid HTTP/1.1 request ({why}); they are kept raw as the body, secrets redacted");
    record_raw(st, conn, raw, n, kind, message.to_string());
}

/// Record raw request bytes (`len` bytes seen, `raw` kept) as an exchange with an error.
fn record_raw(st: &AppState, conn: &ConnInfo, raw: Vec<u8>, len: u64, kind: &str, message: String) {
    let line = raw.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let line = String::from_utf8_lossy(line).trim_end().to_string();
    let mut parts = line.splitn(3, ' ');
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let mut body = Body::new(raw_head(&raw)).with_truncated(true);
    body.redacted = true;
    let request = HttpRequest {
        method: method.chars().take(32).collect(),
        target: {
            let t: String = target.chars().take(2048).collect();
            // A CONNECT's target is authority form: all of a userinfo there is secret.
            if method.eq_ignore_ascii_case("CONNECT") {
                crate::trace::redact::redact_authority(&t)
            } else {
                redact_text(&t)
            }
        },
        version: String::new(),
        headers: crate::http::Headers::new(),
        body,
    };
    let mut draft = st.draft(
        Some(conn),
        st.take_id(),
        Utc::now(),
        Instant::now(),
        request,
    );
    if conn.host.is_some() {
        draft.source.mode = Some(format!("{}+intercept", st.config.mode.name()));
    }
    draft
        .notes
        .insert("raw_bytes".into(), serde_json::json!(len));
    draft.finish(
        None,
        Some(ExchangeError {
            kind: kind.into(),
            message,
        }),
    );
}
