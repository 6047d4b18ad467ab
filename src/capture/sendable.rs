//! Recorded or imported header pairs checked before they are sent again on HTTP/1.1 (the
//! replay server's answers, the replay client's requests): a trace keeps whatever a
//! source saw — HTTP/2 pseudo-headers from a browser's HAR, values with control
//! characters from a hand-edited file — and an HTTP builder refuses such a pair with an
//! error that names neither the header nor the exchange. Each pair is checked here once;
//! the ones HTTP/1.1 cannot carry are dropped and named, the rest are sent.

use hyper::header::{HeaderName, HeaderValue};

use crate::http::Headers;

/// Header pairs split into the ones HTTP/1.1 can carry and the ones it cannot.
#[derive(Debug, Default)]
pub struct Sendable {
    /// Pairs to send, in recorded order (names and values already checked).
    pub pairs: Vec<(HeaderName, HeaderValue)>,
    /// The same pairs as text, for the record of what was sent.
    pub text: Headers,
    /// One line per dropped pair: its name (quoted, control characters escaped) and why,
    /// e.g. `":status" (an HTTP/2 pseudo-header; HTTP/1.1 has none)`.
    pub dropped: Vec<String>,
}

/// Why a recorded pair cannot go on an HTTP/1.1 message, or `None` when it can.
///
/// Refused: names starting with `:` (HTTP/2 and HTTP/3 pseudo-headers, RFC 9113 §8.3,
/// which HTTP/1.1 carries in its request or status line and `Host`), names that are no
/// token (RFC 9110 §5.1) and values with a control character other than tab, i.e. a
/// line break or NUL (RFC 9110 §5.5).
pub fn refusal(name: &str, value: &str) -> Option<&'static str> {
    if name.starts_with(':') {
        return Some("an HTTP/2 pseudo-header; HTTP/1.1 has none");
    }
    if HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Some("not a header name on HTTP/1.1 (RFC 9110 §5.1)");
    }
    if HeaderValue::from_bytes(value.as_bytes()).is_err() {
        return Some("its value holds a control character or line break (RFC 9110 §5.5)");
    }
    None
}

/// Check `pairs` (recorded names and values) for HTTP/1.1; see [`refusal`].
pub fn sendable<'a>(pairs: impl IntoIterator<Item = &'a (String, String)>) -> Sendable {
    let mut out = Sendable::default();
    for (k, v) in pairs {
        match (
            refusal(k, v),
            HeaderName::from_bytes(k.as_bytes()),
            HeaderValue::from_bytes(v.as_bytes()),
        ) {
            (None, Ok(name), Ok(value)) => {
                out.pairs.push((name, value));
                out.text.push((k.clone(), v.clone()));
            }
            (why, _, _) => out.dropped.push(format!(
                "{k:?} ({})",
                why.unwrap_or("not valid on HTTP/1.1")
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
        v.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn pseudo_headers_bad_names_and_control_characters_are_dropped_and_named() {
        let h = pairs(&[
            (":status", "200"),
            ("Content-Type", "application/json"),
            ("x-bad", "a\u{1}b"),
            ("bad name", "v"),
            ("x-tab", "a\tb"),
            ("x-split", "a\r\nx-injected: 1"),
        ]);
        let s = sendable(&h);
        let sent: Vec<&str> = s.text.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(sent, ["Content-Type", "x-tab"]);
        assert_eq!(s.pairs.len(), 2);
        assert_eq!(s.pairs[0].0, "content-type");
        assert_eq!(s.dropped.len(), 4);
        assert!(s.dropped[0].starts_with("\":status\" (an HTTP/2 pseudo-header"));
        assert!(s.dropped[1].starts_with("\"x-bad\" (its value holds a control character"));
        assert!(s.dropped[2].starts_with("\"bad name\" (not a header name"));
        assert!(s.dropped[3].starts_with("\"x-split\" (its value"));
    }
}
