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
/// Bytes that cannot be redacted ([`unredactable`]) are not kept: the exchange has their
/// size and SHA-256 only.
fn record_raw(
    st: &AppState,
    conn: &ConnInfo,
    raw: Vec<u8>,
    len: u64,
    kind: &str,
    mut message: String,
) {
    let refused = unredactable(&raw, kind == "unprocessed");
    let line = match refused {
        Some(_) => &[][..],
        None => raw.split(|&b| b == b'\n').next().unwrap_or(&[]),
    };
    let line = String::from_utf8_lossy(line).trim_end().to_string();
    let mut parts = line.splitn(3, ' ');
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let mut body = match refused {
        None => Body::new(raw_head(&raw)),
        Some(why) => {
            if let Some(kept) = message.strip_suffix("; they are kept raw as the body, secrets redacted") {
                message = kept.to_string();
            }
            message = format!(
                "{}; {why}, so they are not kept: the exchange has their size and the SHA-256 of the first {} bytes (notes raw_bytes, raw_sha256)",
                message.trim_end_matches("; kept raw"),
                raw.len()
            );
            Body::new(Vec::new())
        }
    }
    .with_truncated(true);
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
    if refused.is_some() {
        use sha2::Digest;
        let digest = hex::encode(sha2::Sha256::digest(&raw));
        draft
            .notes
            .insert("raw_sha256".into(), serde_json::json!(digest));
    }
    draft.finish(
        None,
        Some(ExchangeError {
            kind: kind.into(),
            message,
        }),
    );
}

/// Why `raw` (bytes that did not frame as a request) cannot be kept redacted, or `None`
/// when it can: the redaction reads HTTP/1.1 text (request line, header lines), so an
/// HTTP/2 connection preface (whose HPACK-compressed HEADERS frames carry `x-api-key`
/// and `authorization` where no text rule sees them) and binary bytes (a TLS handshake,
/// any other protocol) are refused. `framed_body`: the bytes after the head are a body
/// the request framed (kept as bodies are); else every byte must be text.
pub(crate) fn unredactable(raw: &[u8], framed_body: bool) -> Option<&'static str> {
    if raw.starts_with(b"PRI * HTTP/2") {
        return Some("they are an HTTP/2 connection (prior knowledge), whose HPACK-compressed header fields cannot be redacted (the proxy speaks HTTP/1.1)");
    }
    let text = if framed_body {
        let end = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .map_or(raw.len(), |p| p + 4);
        &raw[..end]
    } else {
        raw
    };
    // obs-text (0x80–0xFF, RFC 9110 §5.5) is text here; control bytes are not
    let is_text = !text
        .iter()
        .any(|&b| (b < 0x20 && !matches!(b, b'\t' | b'\r' | b'\n')) || b == 0x7f);
    (!is_text).then_some(
        "they are binary (not HTTP/1.1 text), which the redaction cannot read for secrets",
    )
}

#[cfg(test)]
mod tests {
    use super::unredactable;

    #[test]
    fn only_http1_text_is_kept() {
        assert!(unredactable(b"GET / HTTP/1.1\r\nHost: a\r\nBad header\r\n\r\n", false).is_none());
        assert!(unredactable(b"GET / HTTP/1.1\r\nX: caf\xe9\r\n\r\n", false).is_none());
        assert!(unredactable(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", false).is_some());
        assert!(unredactable(b"\x16\x03\x01\x02\x00\x01", false).is_some());
        // a framed request keeps its body as every body is kept
        assert!(unredactable(b"POST / HTTP/1.1\r\n\r\n\x1f\x8b\x08", true).is_none());
        assert!(unredactable(b"POST / HTTP/1.1\r\n\r\n\x1f\x8b\x08", false).is_some());
    }
}
