//! Recognising an input from its first bytes: agentwire's own trace, a packet capture, a
//! format agentwire imports, or something foreign (a database, binary data, text, JSON of
//! another shape), named in words for a one-line message. File names are never consulted.
//!
//! Binary formats are recognised by the magic numbers their readers own: gzip's in
//! [`crate::gzip`], the pcap and pcapng ones in [`crate::capture::pcap::is_capture_start`].

use serde_json::Value;

use crate::import::tap::{BUNDLE_MARKER, RECORD_MARKER};
use crate::import::Format;

/// What the first bytes of an input say it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Detected {
    /// A format agentwire reads, line by line or as a whole.
    Format(Format),
    /// Starts like a JSON document spanning several lines (pretty-printed HAR, claude-tap
    /// `--format json`, a request body): parse the whole input, then call
    /// [`classify_document`].
    Document,
    /// gzip-compressed: decompress and detect again.
    Gzip,
    /// Not something agentwire reads: what it looks like and what to do.
    Foreign {
        /// What it looks like, in words.
        looks_like: String,
        /// What to do (a command that reads it), possibly empty.
        hint: String,
    },
}

fn foreign(looks_like: impl Into<String>, hint: impl Into<String>) -> Detected {
    Detected::Foreign {
        looks_like: looks_like.into(),
        hint: hint.into(),
    }
}

/// Claude Code transcript entry types whose lines may carry no `sessionId` (a session's
/// first line can be one of these).
const TRANSCRIPT_HEAD_TYPES: &[&str] = &["summary", "file-history-snapshot", "custom-title"];

/// Recognise an input from `head`: its first line (or, when the input has no newline
/// early on, its first bytes). `head` may end mid-line.
pub fn detect(head: &[u8]) -> Detected {
    match detect_prefix(head) {
        Detected::Document => {}
        other => return other,
    }
    // The first line that is not blank (readers skip blank lines before a trace's first
    // record, so they do not decide the format either).
    let first = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(&head[..0], |i| &head[i..]);
    let line = &first[..memchr::memchr(b'\n', first).unwrap_or(first.len())];
    if is_request_body(line) {
        return Detected::Format(Format::RequestBody);
    }
    match serde_json::from_slice::<Value>(line) {
        Ok(v) => classify_line(&v),
        Err(_) => Detected::Document,
    }
}

/// What the first 8 KiB of `head` say before any JSON is parsed: a binary format by its
/// magic number, text that is not JSON (named), or JSON text ([`Detected::Document`]:
/// read on to the end of the first line and call [`detect`]). It looks at the magic number
/// and at the first 8,192 bytes after leading blank lines only, so a longer head gives the
/// same answer.
pub fn detect_prefix(head: &[u8]) -> Detected {
    if head.is_empty() {
        return foreign("an empty file", "");
    }
    if crate::gzip::is_gzip(head) {
        return Detected::Gzip;
    }
    // (gzip, also a capture's start, is told apart above)
    if crate::capture::pcap::is_capture_start(head) {
        return Detected::Format(Format::Pcap);
    }
    if head.starts_with(b"SQLite format 3\0") {
        return foreign(
            "a SQLite database (claude-tap keeps its traces in one)",
            "export a session with `claude-tap export SESSION -o trace.ctap.json` and read that",
        );
    }
    if head.starts_with(b"PK\x03\x04") {
        return foreign("a zip archive", "unpack it and give the file inside");
    }
    detect_text(head)
}

/// [`detect_prefix`] for an input that is no binary format agentwire knows: its first
/// 8,192 bytes after leading blank lines are JSON text ([`Detected::Document`]), other
/// text, or binary data (named).
fn detect_text(head: &[u8]) -> Detected {
    // Blank lines before the first record do not decide: the sample starts after them.
    let lead = head.iter().take_while(|b| b.is_ascii_whitespace()).count();
    let sample = &head[lead..head.len().min(lead + 8192)];
    let text = match std::str::from_utf8(sample) {
        Ok(t) => t,
        // a multi-byte character cut at the sample's end is still text
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&sample[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return foreign("binary data (not UTF-8 text)", ""),
    };
    if text.contains('\0') {
        return foreign("binary data (it holds NUL bytes)", "");
    }
    if text.starts_with('\u{feff}') {
        // JSON text must not start with one (RFC 8259 §8.1); readers would fail at byte 0.
        return foreign(
            "text that starts with a UTF-8 byte order mark (EF BB BF), which JSON may not",
            "remove the mark (`sed -i '1s/^\\xEF\\xBB\\xBF//' FILE`) and read the file again",
        );
    }
    let trimmed = text.trim_start();
    if trimmed.is_empty() {
        return foreign("an empty file (only whitespace)", "");
    }
    if !trimmed.starts_with(['{', '[']) {
        let first: String = trimmed
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(60)
            .collect();
        return foreign(
            format!(
                "text that is not JSON (it starts with {:?})",
                crate::text::printable(&first)
            ),
            "",
        );
    }
    Detected::Document
}

/// True when `bytes` is one JSON object that the first-line classifier (and so
/// [`classify_document`]) calls a bare Messages request body: a `messages` array, `model`
/// or `max_tokens`, and none of the members the other formats are recognised by (`type`,
/// `log`, `request`, `record`, claude-tap's bundle marker). Checked on the top-level
/// members only (one validating pass, no tree), so a 1 MB body is not parsed into a
/// `Value` to be named. False is not a verdict: callers go on to the full classifiers.
pub fn is_request_body(bytes: &[u8]) -> bool {
    use serde_json::value::RawValue;
    let Ok(top) = serde_json::from_slice::<std::collections::HashMap<String, &RawValue>>(bytes)
    else {
        return false;
    };
    let has = |k: &str| top.contains_key(k);
    top.get("messages")
        .is_some_and(|m| m.get().starts_with('['))
        && (has("model") || has("max_tokens"))
        && !["type", "log", "request", "record", BUNDLE_MARKER]
            .iter()
            .any(|k| has(k))
}

/// Classify the first record of a JSON Lines input.
fn classify_line(v: &Value) -> Detected {
    let Some(o) = v.as_object() else {
        return match classify_document(v) {
            // a one-line (minified) `claude-tap export --format json` is a document, not
            // JSON Lines of claude-tap records: read it whole
            Detected::Format(Format::ClaudeTap) => Detected::Document,
            other => other,
        };
    };
    let s = |k: &str| o.get(k).and_then(Value::as_str);
    let kind = s("type");
    if kind == Some("exchange")
        || (kind == Some("trace") && s("format") == Some(crate::trace::FORMAT_NAME))
    {
        return Detected::Format(Format::Trace);
    }
    if o.contains_key(BUNDLE_MARKER) || o.get("log").is_some_and(Value::is_object) {
        return Detected::Document; // a one-line document: read it whole
    }
    if o.get("request").is_some_and(Value::is_object) && o.contains_key("logged_at") {
        return Detected::Format(Format::ClaudeTrace);
    }
    if is_tap_record(v) {
        return Detected::Format(Format::ClaudeTap);
    }
    if crate::import::codex::is_rollout_line(v) {
        return Detected::Format(Format::CodexRollout);
    }
    if s("sessionId").is_some() && kind.is_some()
        || kind.is_some_and(|k| TRANSCRIPT_HEAD_TYPES.contains(&k))
    {
        return Detected::Format(Format::ClaudeCodeTranscript);
    }
    classify_document(v)
}

/// A claude-tap trace record (possibly wrapped as a compact record).
fn is_tap_record(v: &Value) -> bool {
    let rec = v
        .get("record")
        .filter(|_| v.get(RECORD_MARKER).is_some())
        .unwrap_or(v);
    rec.get("request")
        .and_then(|r| r.get("path"))
        .is_some_and(Value::is_string)
        && (rec.get("turn").is_some() || rec.get("request_id").is_some())
}

/// Classify a whole JSON document (an object or array parsed from the entire input).
pub fn classify_document(v: &Value) -> Detected {
    match v {
        Value::Object(o) => {
            if o.get("log")
                .and_then(|l| l.get("entries"))
                .is_some_and(Value::is_array)
            {
                return Detected::Format(Format::Har);
            }
            if o.get(BUNDLE_MARKER).is_some() {
                return Detected::Format(Format::ClaudeTap);
            }
            if o.get("messages").is_some_and(Value::is_array)
                && (o.contains_key("model") || o.contains_key("max_tokens"))
                && !o.contains_key("type")
            {
                return Detected::Format(Format::RequestBody);
            }
            let mut keys: Vec<&str> = o.keys().map(String::as_str).take(6).collect();
            if o.len() > 6 {
                keys.push("…");
            }
            foreign(
                if keys.is_empty() {
                    "JSON whose first object is empty ({})".to_string()
                } else {
                    format!(
                        "JSON whose first object has the keys {}",
                        crate::text::printable(&keys.join(", "))
                    )
                },
                "",
            )
        }
        Value::Array(a) => {
            let tap_json = a.first().is_some_and(|e| {
                e.get("turn").is_some()
                    && e.get("messages").is_some()
                    && e.get("response").is_some()
            });
            if tap_json {
                return Detected::Format(Format::ClaudeTap);
            }
            foreign(format!("a JSON array of {} items", a.len()), "")
        }
        other => foreign(
            format!(
                "a JSON {}",
                match other {
                    Value::String(_) => "string",
                    Value::Number(_) => "number",
                    Value::Bool(_) => "boolean",
                    _ => "null",
                }
            ),
            "",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn looks_like(d: Detected) -> String {
        match d {
            Detected::Foreign { looks_like, .. } => looks_like,
            other => panic!("{other:?}"),
        }
    }

    /// Reported by an adversarial tester: a trace saved with a byte order mark read as
    /// "text that starts like JSON but is not valid JSON (expected value at line 1
    /// column 1)", which does not say what to remove.
    #[test]
    fn a_byte_order_mark_is_named_with_the_fix_not_read_as_invalid_json() {
        let line = br#"{"type":"trace","format":"agentwire-trace","version":1}"#;
        assert!(matches!(detect(line), Detected::Format(Format::Trace)));
        let with_bom = [&b"\xEF\xBB\xBF"[..], line].concat();
        assert!(looks_like(detect(&with_bom)).contains("byte order mark (EF BB BF)"));
    }

    #[test]
    fn bare_body_shortcut_names_what_the_full_classifier_names() {
        let docs = [
            r#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#,
            r#"{"max_tokens":5,"messages":[]}"#,
            r#"{"model":"m","messages":"not a list"}"#,
            r#"{"messages":[]}"#,
            r#"{"type":"exchange","model":"m","messages":[]}"#,
            r#"{"log":{"entries":[]},"model":"m","messages":[]}"#,
            r#"{"__claude_tap_compact_trace__":{"version":1},"model":"m","messages":[]}"#,
            r#"{"request":{"path":"/v1/messages"},"turn":1,"model":"m","messages":[]}"#,
            r#"{"request":{},"logged_at":"x","model":"m","messages":[]}"#,
            r#"[{"model":"m","messages":[]}]"#,
            r#"{"model":"m","messages":[]"#,
        ];
        for d in docs {
            let full = serde_json::from_str::<Value>(d).map(|v| classify_line(&v));
            let named_body = matches!(full, Ok(Detected::Format(Format::RequestBody)));
            assert_eq!(is_request_body(d.as_bytes()), named_body, "{d}");
        }
        assert!(is_request_body(docs[0].as_bytes()));
    }

    #[test]
    fn own_trace_and_imports_are_recognised() {
        let f = |s: &str| detect(s.as_bytes());
        assert_eq!(
            f("{\"type\":\"trace\",\"format\":\"agentwire-trace\",\"version\":1}\n{}"),
            Detected::Format(Format::Trace)
        );
        assert_eq!(
            f("{\"type\":\"queue-operation\",\"sessionId\":\"s\"}\n"),
            Detected::Format(Format::ClaudeCodeTranscript)
        );
        assert_eq!(
            f("{\"type\":\"summary\",\"summary\":\"x\",\"leafUuid\":\"u\"}\n"),
            Detected::Format(Format::ClaudeCodeTranscript)
        );
        assert_eq!(
            f("{\"request\":{\"url\":\"u\"},\"response\":null,\"logged_at\":\"t\"}\n"),
            Detected::Format(Format::ClaudeTrace)
        );
        assert_eq!(
            f("{\"turn\":1,\"request\":{\"path\":\"/v1/messages\"}}\n"),
            Detected::Format(Format::ClaudeTap)
        );
        assert_eq!(f("{\n  \"log\": {"), Detected::Document);
        assert_eq!(
            f("{\"__claude_tap_compact_trace__\":{},\"records\":[]}"),
            Detected::Document
        );
        assert_eq!(
            f("{\"model\":\"m\",\"messages\":[]}"),
            Detected::Format(Format::RequestBody)
        );
    }

    #[test]
    fn codex_rollouts_are_recognised_by_their_line_shape() {
        let meta = r#"{"timestamp":"2026-12-01T10:00:00.000Z","ordinal":0,"type":"session_meta","payload":{"session_id":"s"}}"#;
        assert_eq!(
            detect(format!("{meta}\n").as_bytes()),
            Detected::Format(Format::CodexRollout)
        );
        let item = r#"{"timestamp":"t","type":"response_item","payload":{"type":"message"}}"#;
        assert_eq!(
            detect(item.as_bytes()),
            Detected::Format(Format::CodexRollout)
        );
        // a type a rollout never has, or no payload: not a rollout
        assert!(
            looks_like(detect(br#"{"timestamp":"t","type":"x","payload":{}}"#)).contains("keys")
        );
        assert!(looks_like(detect(br#"{"timestamp":"t","type":"event_msg"}"#)).contains("keys"));
    }

    #[test]
    fn packet_captures_are_recognised_by_their_magic_in_every_byte_order() {
        for magic in [
            [0xd4, 0xc3, 0xb2, 0xa1],
            [0xa1, 0xb2, 0xc3, 0xd4],
            [0x4d, 0x3c, 0xb2, 0xa1],
            [0xa1, 0xb2, 0x3c, 0x4d],
            [0x0a, 0x0d, 0x0d, 0x0a],
        ] {
            assert_eq!(detect(&magic), Detected::Format(Format::Pcap), "{magic:x?}");
        }
    }

    #[test]
    fn foreign_inputs_are_named() {
        assert!(looks_like(detect(&[0x89, b'P', b'N', b'G', 0, 0xff])).contains("binary"));
        assert!(looks_like(detect(b"hello world\n")).contains("\"hello world\""));
        assert!(looks_like(detect(b"{\"a\":1,\"b\":2}\n")).contains("keys a, b"));
        assert!(looks_like(detect(b"")).contains("empty"));
        assert!(looks_like(detect(b"\x1b[31mred\n")).contains("\\u{1b}"));
    }
}
