//! Field rules of HTTP (RFC 9110), each written once:
//! - [`list`] / [`items`]: the elements of a comma-separated list field (RFC 9110 §5.6.1)
//!   over all its field lines (§5.3), trimmed, lowercase, parameters (`;…`) stripped,
//!   empty elements ignored — Transfer-Encoding, Content-Encoding, Connection;
//! - [`HOP_BY_HOP`], [`is_hop_by_hop`], [`skip_request`], [`skip_response`]: which fields
//!   belong to one connection only (§7.6.1) and so are never copied onto another
//!   message (forwarded, replayed or sent again);
//! - [`is_event_stream`]: whether a Content-Type names `text/event-stream`, by the media
//!   type rule (§8.3.1: `type/subtype` before any `;`, whitespace trimmed, ASCII
//!   case-insensitive).

/// Hop-by-hop headers (RFC 9110 §7.6.1): never forwarded in either direction.
pub const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Request headers a sender sets itself or must not pass on (identity encoding keeps a
/// recorded response readable; proxy credentials are for one hop only).
pub const REQUEST_ONLY: &[&str] = &[
    "host",
    "content-length",
    "accept-encoding",
    "proxy-authorization",
];

/// The elements of one list field value: split on commas, each trimmed, cut at its first
/// `;` (parameters), lowercase; empty elements are dropped (RFC 9110 §5.6.1).
pub fn items(value: &str) -> impl Iterator<Item = String> + '_ {
    value
        .split(',')
        .map(|c| {
            c.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .filter(|c| !c.is_empty())
}

/// The elements of the list field `name` (ASCII case-insensitive) over all its field
/// lines in order, as [`items`] splits each line: e.g. `Transfer-Encoding: gzip` and
/// `transfer-encoding: Chunked;x=1` give `["gzip", "chunked"]`.
pub fn list(headers: &[(String, String)], name: &str) -> Vec<String> {
    headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case(name))
        .flat_map(|(_, v)| items(v))
        .collect()
}

/// True for a hop-by-hop header name (ASCII case-insensitive: recorded names keep their
/// wire case).
pub fn is_hop_by_hop(name: &str) -> bool {
    HOP_BY_HOP.iter().any(|h| name.eq_ignore_ascii_case(h))
}

/// True for a request header that a client sending a recorded request again must not copy:
/// hop-by-hop, or set by the sender itself ([`REQUEST_ONLY`]). ASCII case-insensitive.
pub fn skip_request(name: &str) -> bool {
    is_hop_by_hop(name) || REQUEST_ONLY.iter().any(|h| name.eq_ignore_ascii_case(h))
}

/// True for a response header that a server answering with a recorded response must not
/// copy: hop-by-hop, or `content-length` (the new response is framed by its own server).
pub fn skip_response(name: &str) -> bool {
    is_hop_by_hop(name) || name.eq_ignore_ascii_case("content-length")
}

/// True when the Content-Type value `content_type` names an event stream: its media type
/// (before any `;`, whitespace trimmed) is `text/event-stream`, in any case (RFC 9110
/// §8.3.1).
pub fn is_event_stream(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .eq_ignore_ascii_case("text/event-stream")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn list_joins_field_lines_trims_lowercases_and_strips_parameters() {
        let hs = h(&[
            ("Transfer-Encoding", " gzip , CHUNKED;q=1"),
            ("Content-Type", "text/plain"),
            ("transfer-encoding", ", ,identity"),
        ]);
        assert_eq!(
            list(&hs, "transfer-encoding"),
            ["gzip", "chunked", "identity"]
        );
        assert!(list(&hs, "connection").is_empty());
        assert!(list(&h(&[("Connection", " , ")]), "connection").is_empty());
    }

    #[test]
    fn hop_by_hop_and_skip_rules_ignore_case() {
        assert!(is_hop_by_hop("Transfer-Encoding"));
        assert!(!is_hop_by_hop("content-length"));
        assert!(skip_request("Host") && skip_request("PROXY-AUTHORIZATION"));
        assert!(skip_request("Keep-Alive"));
        assert!(!skip_request("content-type"));
        assert!(skip_response("Content-Length") && skip_response("upgrade"));
        assert!(!skip_response("host"));
    }

    #[test]
    fn event_stream_is_the_media_type_before_parameters() {
        assert!(is_event_stream("text/event-stream"));
        assert!(is_event_stream("text/event-stream; charset=utf-8"));
        assert!(is_event_stream("text/event-stream;charset=utf-8"));
        assert!(!is_event_stream("application/json"));
        assert!(!is_event_stream(""));
    }

    // One test per case where the five checks this replaces disagreed.

    #[test]
    fn event_stream_ignores_case_which_no_old_check_did() {
        assert!(is_event_stream("Text/Event-Stream"));
        assert!(is_event_stream("TEXT/EVENT-STREAM; charset=UTF-8"));
    }

    #[test]
    fn event_stream_trims_leading_whitespace_as_only_the_pcap_check_did() {
        // `starts_with` (MCP tap) said no; `trim_start().starts_with` (pcap) and
        // `contains` (API view, replay, tap import) said yes.
        assert!(is_event_stream("  text/event-stream"));
        assert!(is_event_stream("\ttext/event-stream ; charset=utf-8"));
    }

    #[test]
    fn event_stream_is_not_a_prefix_of_another_media_type() {
        // `starts_with` and `trim_start().starts_with` said yes.
        assert!(!is_event_stream("text/event-streamx"));
        assert!(!is_event_stream("text/event-stream-v2; charset=utf-8"));
    }

    #[test]
    fn event_stream_is_not_found_inside_another_value() {
        // `contains` said yes to all of these.
        assert!(!is_event_stream("application/json, text/event-stream"));
        assert!(!is_event_stream("application/x-text/event-stream"));
        assert!(!is_event_stream(
            "application/json; profile=text/event-stream"
        ));
    }
}

/// A field value's bytes as recorded text: UTF-8 when they are UTF-8, else each byte as
/// the character of the same number (ISO-8859-1), so obs-text (0x80–0xFF, RFC 9110 §5.5,
/// which the proxy forwards as it came) is recorded without loss instead of as U+FFFD:
/// every byte of such a value is one character of the recorded text, below U+0100.
pub fn field_text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => bytes.iter().map(|&b| char::from(b)).collect(),
    }
}

#[cfg(test)]
mod obs_text_tests {
    use super::*;

    /// What broke: obs-text bytes were recorded as U+FFFD while the proxy forwarded them
    /// raw, so the trace did not say what was sent.
    #[test]
    fn obs_text_header_bytes_recorded_lossily() {
        let raw = b"caf\xe9 \xff";
        let text = field_text(raw);
        assert_eq!(text, "caf\u{e9} \u{ff}");
        let back: Vec<u8> = text.chars().map(|c| c as u8).collect();
        assert_eq!(back, raw);
        // UTF-8 stays UTF-8
        assert_eq!(field_text("café ☕".as_bytes()), "café ☕");
    }
}
