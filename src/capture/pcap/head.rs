//! HTTP/1.1 message heads and lines as a passive reader meets them: header conversion
//! from `httparse`, HTTP/0.9 simple requests, the readable start of a cut or invalid head,
//! and the search for the next plausible message start when resynchronising. The parsed
//! head is [`crate::http::framing::Head`].

use crate::http::framing::Head;
use crate::http::Headers;

/// Request methods recognised when resynchronising (RFC 9110 §9 and WebDAV's common ones).
pub(super) const METHODS: &[&[u8]] = &[
    b"GET ",
    b"POST ",
    b"PUT ",
    b"HEAD ",
    b"DELETE ",
    b"OPTIONS ",
    b"PATCH ",
    b"CONNECT ",
    b"TRACE ",
    b"PROPFIND ",
    b"PROPPATCH ",
    b"MKCOL ",
    b"COPY ",
    b"MOVE ",
    b"LOCK ",
    b"UNLOCK ",
    b"SEARCH ",
    b"REPORT ",
];

pub(super) fn headers(h: &[httparse::Header<'_>]) -> Headers {
    h.iter()
        .map(|h| (h.name.to_string(), crate::http::fields::field_text(h.value)))
        .collect()
}

/// An HTTP/0.9 simple request, `GET target CRLF` (RFC 1945 §4.1): bytes used and head.
pub(super) fn simple_request(buf: &[u8]) -> Option<(usize, Head)> {
    let nl = memchr(b'\n', buf)?;
    let line = buf[..nl].strip_suffix(b"\r").unwrap_or(&buf[..nl]);
    let target = line.strip_prefix(b"GET ")?;
    if target.is_empty() || target.iter().any(|b| *b <= b' ' || *b == 0x7f) {
        return None;
    }
    let head = Head {
        method: "GET".into(),
        target: String::from_utf8_lossy(target).into_owned(),
        version: "HTTP/0.9".into(),
        ..Head::default()
    };
    Some((nl + 1, head))
}

/// What can be read from the start of a head that a gap cut off: the method and the
/// target up to the cut (requests), the status (responses). `None` if it is not a head.
pub(super) fn partial_head(buf: &[u8], request: bool) -> Option<Head> {
    let line_end = memchr(b'\n', buf).unwrap_or(buf.len());
    let line = String::from_utf8_lossy(&buf[..line_end]);
    let line = line.trim_end_matches('\r');
    let mut parts = line.splitn(3, ' ');
    if request {
        // Any method token (RFC 9110 §9.1): upper-case letters then a space.
        let n = buf.iter().take_while(|b| b.is_ascii_uppercase()).count();
        if !(3..=20).contains(&n) || buf.get(n) != Some(&b' ') {
            return None;
        }
        Some(Head {
            method: parts.next()?.to_string(),
            target: parts.next().unwrap_or("").to_string(),
            version: parts.next().unwrap_or("").to_string(),
            ..Head::default()
        })
    } else {
        if !buf.starts_with(b"HTTP/1.") {
            return None;
        }
        let version = parts.next()?.to_string();
        let status = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        Some(Head {
            status,
            version,
            ..Head::default()
        })
    }
}

pub(super) fn memchr(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|b| *b == needle)
}

/// Position of the first plausible message start in `buf`: a request line
/// `METHOD SP target SP HTTP/1.x` or a status line `HTTP/1.x SP NNN`, anywhere (a message
/// that follows a body does not start a line). A candidate cut off by the end of `buf`
/// counts: the head parser decides when the rest arrives.
pub(super) fn find_start(buf: &[u8], request: bool) -> Option<usize> {
    (0..buf.len()).find(|&i| {
        let rest = &buf[i..];
        if request {
            METHODS.iter().any(|m| {
                if rest.len() < m.len() {
                    return m.starts_with(rest);
                }
                rest.starts_with(m) && plausible_request_line(&rest[m.len()..])
            })
        } else {
            plausible_status_line(rest)
        }
    })
}

/// After `METHOD SP`: a target of visible bytes, a space and `HTTP/1.` (or the end).
fn plausible_request_line(rest: &[u8]) -> bool {
    let n = rest
        .iter()
        .take_while(|b| **b > b' ' && **b != 0x7f)
        .count();
    if n == rest.len() {
        return n > 0;
    }
    if n == 0 || rest[n] != b' ' {
        return false;
    }
    let v = &rest[n + 1..];
    let want = b"HTTP/1.";
    v.len() < want.len() && want.starts_with(v) || v.starts_with(want)
}

/// `HTTP/1.x SP DDD` (or a prefix of it at the end of the buffer).
fn plausible_status_line(rest: &[u8]) -> bool {
    let pattern = b"HTTP/1.# ###";
    rest.iter().zip(pattern).all(|(b, p)| match p {
        b'#' => b.is_ascii_digit(),
        _ => b == p,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_plausible_message_starts() {
        assert_eq!(find_start(b"x}POST /a HTTP/1.1\r\n", true), Some(2));
        assert_eq!(
            find_start(b"GET me a coffee; POST /a HTTP/1.1", true),
            Some(17)
        );
        assert_eq!(find_start(b"data PO", true), Some(5));
        assert_eq!(find_start(b"nothing here", true), None);
        assert_eq!(
            find_start(b"body says HTTP/1.1 is old\nHTTP/1.1 200 OK", false),
            Some(26)
        );
        assert_eq!(find_start(b"tail HTT", false), Some(5));
    }
}
