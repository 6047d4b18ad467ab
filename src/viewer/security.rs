//! The viewer's security model. Traces hold prompts, file contents and tool output, so:
//! every request must carry the random token of the printed URL (`?token=` or the
//! `X-Agentwire-Token` header; 403 without); the `Host` header must name the address the
//! server listens on (a DNS-rebinding page reaches us under its own host name: refused)
//! and an `Origin`, when sent, must be ours; every response carries a strict CSP
//! (`default-src 'none'`, scripts, styles and fetches from the app itself), no referrer
//! (the token is in the URL) and no caching. Every string sent passes [`redact_value`].

use std::net::SocketAddr;

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};

use crate::trace::redact::redact_text_cow;

/// The page's Content-Security-Policy: nothing but the app itself.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The header that may carry the token instead of the query.
pub const TOKEN_HEADER: &str = "x-agentwire-token";

/// A new random token: 32 hex digits (128 bits from the system's random source).
pub fn new_token() -> String {
    let mut b = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut b));
    if read.is_err() {
        // No /dev/urandom: hash what differs between runs (time, process, address).
        use sha2::{Digest, Sha256};
        let seed = format!(
            "{:?}{}{:p}",
            std::time::SystemTime::now(),
            std::process::id(),
            &b
        );
        b.copy_from_slice(&Sha256::digest(seed.as_bytes())[..16]);
    }
    hex::encode(b)
}

/// The `Host` values the server answers to when listening on `addr`: the address itself
/// and, on loopback, `localhost` and `127.0.0.1` with its port.
pub fn allowed_hosts(addr: SocketAddr) -> Vec<String> {
    let port = addr.port();
    let mut hosts = vec![addr.to_string()];
    if addr.ip().is_loopback() {
        hosts.extend([
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("[::1]:{port}"),
        ]);
    }
    hosts
}

/// Why a request is refused, or `None` when it may pass: a missing or foreign `Host`, a
/// foreign `Origin`, a missing or wrong token.
pub fn refusal(
    headers: &HeaderMap,
    query: Option<&str>,
    token: &str,
    hosts: &[String],
) -> Option<&'static str> {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    if !host.is_some_and(|h| hosts.iter().any(|a| a.eq_ignore_ascii_case(h))) {
        return Some("refused: the Host header does not name this server (open the printed URL)");
    }
    if let Some(o) = headers.get(header::ORIGIN) {
        let ok = o
            .to_str()
            .ok()
            .and_then(|o| o.strip_prefix("http://"))
            .is_some_and(|h| hosts.iter().any(|a| a.eq_ignore_ascii_case(h)));
        if !ok {
            return Some("refused: a page of another origin may not read this viewer");
        }
    }
    let given = headers
        .get(TOKEN_HEADER)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or_else(|| query.and_then(query_token));
    match given {
        Some(g) if same(g.as_bytes(), token.as_bytes()) => None,
        _ => Some("refused: this viewer needs the token of its printed URL (?token=…)"),
    }
}

/// The `token` parameter of a query string.
fn query_token(q: &str) -> Option<String> {
    q.split('&')
        .find_map(|kv| kv.strip_prefix("token="))
        .map(str::to_string)
}

/// Constant-time equality (the comparison does not stop at the first difference).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The headers every response carries.
pub fn harden(headers: &mut HeaderMap) {
    let set = |h: &mut HeaderMap, k: header::HeaderName, v: &'static str| {
        h.insert(k, HeaderValue::from_static(v));
    };
    set(headers, header::CONTENT_SECURITY_POLICY, CSP);
    set(headers, header::REFERRER_POLICY, "no-referrer");
    set(headers, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(headers, header::CACHE_CONTROL, "no-store");
    set(headers, header::X_FRAME_OPTIONS, "DENY");
    headers.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
}

/// The status of a refusal.
pub const REFUSED: StatusCode = StatusCode::FORBIDDEN;

/// Pass every string of `v` (object keys too) through the redaction function.
pub fn redact_value(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            if let std::borrow::Cow::Owned(r) = redact_text_cow(s) {
                *s = r;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(redact_value),
        Value::Object(o) => {
            let secret = o
                .keys()
                .any(|k| matches!(redact_text_cow(k), std::borrow::Cow::Owned(_)));
            if secret {
                let old = std::mem::take(o);
                for (k, mut val) in old {
                    redact_value(&mut val);
                    o.insert(redact_text_cow(&k).into_owned(), val);
                }
            } else {
                o.values_mut().for_each(redact_value);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(
                header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    #[test]
    fn token_host_and_origin_are_all_checked() {
        let hosts = allowed_hosts("127.0.0.1:4000".parse().unwrap());
        let good = headers(&[("host", "localhost:4000")]);
        assert_eq!(refusal(&good, Some("token=abc"), "abc", &hosts), None);
        assert!(refusal(&good, Some("token=abd"), "abc", &hosts).is_some());
        assert!(refusal(&good, None, "abc", &hosts).is_some());
        let rebound = headers(&[("host", "evil.example:4000")]);
        assert!(refusal(&rebound, Some("token=abc"), "abc", &hosts).is_some());
        let foreign = headers(&[
            ("host", "127.0.0.1:4000"),
            ("origin", "http://evil.example"),
        ]);
        assert!(refusal(&foreign, Some("token=abc"), "abc", &hosts).is_some());
        let own = headers(&[
            ("host", "127.0.0.1:4000"),
            ("origin", "http://127.0.0.1:4000"),
            (TOKEN_HEADER, "abc"),
        ]);
        assert_eq!(refusal(&own, None, "abc", &hosts), None);
    }

    #[test]
    fn tokens_differ_and_are_128_bits() {
        let (a, b) = (new_token(), new_token());
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
    }
}
