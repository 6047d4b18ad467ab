//! Imports: other tools' files read as agentwire exchanges — Claude Code session
//! transcripts, Codex session files (rollouts), HAR 1.2, claude-tap exports and
//! claude-trace logs — and the merge of many inputs into one trace ([`merge`],
//! `agentwire import`).
//!
//! Where it sits: a source, beside [`crate::capture`]: it builds [`crate::trace`]
//! exchanges and never analyses. Recognising what a file is (from its content, never its
//! name) and opening it is the input layer's job (`crate::input`, above), which calls the
//! importers here.
//!
//! Every imported exchange has `source.kind = "import"`, `source.format` naming the
//! format, `source.file` the file it came from, and `source.missing` listing what that
//! format does not hold (`response bytes`, `request headers`, ...), so an absent figure is
//! never read as zero. Importers never analyse; they only rebuild exchanges.

mod blobs;
mod canonical;
pub mod claude_trace;
pub mod codex;
pub mod har;
pub mod merge;
pub mod rebuild;
pub mod tap;
pub mod transcript;

use std::path::Path;

use chrono::{DateTime, Utc};

use crate::trace::redact::{redact_headers, redact_text};
use crate::trace::{Body, Exchange, Headers, HttpRequest, HttpResponse, Source, SourceKind};

pub use canonical::{canonical_json, canonical_sha256};
pub use merge::{Merge, MergeOptions, MergeSummary};

/// What agentwire reads, for the one-line message about a foreign input.
pub const READS: &str = "agentwire reads its own traces (JSON Lines from record, serve or pcap), packet captures (pcap, pcapng), Claude Code transcripts (~/.claude/projects/…/SESSION.jsonl), Codex session files ($CODEX_HOME/sessions/…/rollout-*.jsonl), HAR 1.2, claude-tap exports and claude-trace logs";

/// A format agentwire reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// agentwire's own JSON Lines trace.
    Trace,
    /// A Claude Code session transcript (`~/.claude/projects/<project>/<session>.jsonl`).
    ClaudeCodeTranscript,
    /// A Codex session file (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`).
    CodexRollout,
    /// HTTP Archive 1.2 (browser devtools, mitmproxy `hardump`, Charles, Proxyman).
    Har,
    /// claude-tap: a compact trace bundle (`claude-tap export`), its record JSON Lines, or
    /// its `--format json` export.
    ClaudeTap,
    /// claude-trace JSON Lines log (`.claude-trace/log-*.jsonl`).
    ClaudeTrace,
    /// One Messages API request body (a JSON object with `messages`).
    RequestBody,
    /// A packet capture (pcap or pcapng), read by [`crate::capture::pcap`].
    Pcap,
}

impl Format {
    /// The name written to `source.format` and shown in messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::Trace => "agentwire-trace",
            Format::ClaudeCodeTranscript => "claude-code-transcript",
            Format::CodexRollout => "codex-rollout",
            Format::Har => "har",
            Format::ClaudeTap => "claude-tap",
            Format::ClaudeTrace => "claude-trace",
            Format::RequestBody => "request-body",
            Format::Pcap => "pcap",
        }
    }
}

/// Errors of imports. Each names the input and says what agentwire reads or what to do.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The input is not a format agentwire reads.
    #[error("{path}: this is {looks_like}, not a trace; {hint}")]
    Foreign {
        /// The input as named by the user.
        path: String,
        /// What it looks like, in words.
        looks_like: String,
        /// What to do, ending with what agentwire reads.
        hint: String,
    },
    /// The input is of a known format but a layout this build does not know.
    #[error("{path}: looks like a {format}, but {detail}; {READS}")]
    UnknownLayout {
        /// The input.
        path: String,
        /// The format it resembles.
        format: &'static str,
        /// What is unknown about it.
        detail: String,
    },
    /// The input is of a known format but broken (invalid JSON, wrong types).
    #[error("{path}: not a valid {format}: {detail}")]
    Malformed {
        /// The input.
        path: String,
        /// The format.
        format: &'static str,
        /// The parser's message, with the place.
        detail: String,
    },
    /// A directory held nothing agentwire reads (or nothing after `--since`).
    #[error("{path}: no exchanges found ({detail})")]
    Empty {
        /// The input.
        path: String,
        /// What was looked at.
        detail: String,
    },
    /// Reading failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The input.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

impl ImportError {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        ImportError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

/// The source of an imported exchange: kind `import`, the format, the file and what the
/// format does not hold.
pub fn import_source(format: Format, file: &Path, missing: &[&str]) -> Source {
    let mut s = Source::new(SourceKind::Import);
    s.format = Some(format.name().to_string());
    s.file = Some(file.display().to_string());
    s.missing = missing.iter().map(|m| m.to_string()).collect();
    s
}

/// Headers from another tool's file, secrets replaced by the one redaction function.
pub fn foreign_headers(pairs: impl IntoIterator<Item = (String, String)>) -> Headers {
    let mut h: Headers = pairs.into_iter().collect();
    redact_headers(&mut h);
    h
}

/// Header pairs from a JSON object of `name: value` (how claude-tap and claude-trace store
/// them; non-string values as their JSON text). Not yet redacted.
pub fn object_headers(h: Option<&serde_json::Value>) -> Vec<(String, String)> {
    h.and_then(serde_json::Value::as_object)
        .map(|o| {
            o.iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_string),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Request target (path and query) of a URL or path, secrets in the query redacted.
pub fn target_of(url_or_path: &str) -> String {
    let rest = match url_or_path.split_once("://") {
        Some((_, after)) => after.find('/').map_or("/", |i| &after[i..]),
        None => url_or_path,
    };
    let rest = if rest.is_empty() { "/" } else { rest };
    redact_text(rest)
}

/// The authority (`host:port`) of a URL, the target of a CONNECT request (RFC 9112
/// §3.2.3); a value without a scheme is taken as the authority itself. Redacted.
pub fn authority_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, after)| after);
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    // userinfo never names the tunnel's end
    let authority = rest[..end].rsplit('@').next().unwrap_or_default();
    redact_text(authority)
}

/// An imported exchange with no response yet; the importer fills in the rest.
pub fn imported(
    source: Source,
    started_at: DateTime<Utc>,
    method: &str,
    target: String,
    headers: impl Into<Headers>,
    body: Vec<u8>,
) -> Exchange {
    let headers = headers.into();
    Exchange {
        id: 0,
        started_at,
        ended_at: None,
        source,
        request: HttpRequest {
            method: method.to_string(),
            target,
            version: "HTTP/1.1".into(),
            body: decoded_body(&headers, body),
            headers,
        },
        response: None,
        error: None,
        notes: Default::default(),
        websocket: None,
    }
}

/// An HTTP status code as another tool logged it: 100 to 999 (RFC 9110 §15: three
/// digits). An absent one, or any other value, is 0 (unknown), with a line in `missing`
/// naming what the file said, so a bad status never passes as "no response".
pub fn status_code(value: Option<&serde_json::Value>, missing: &mut Vec<String>) -> u16 {
    let v = match value {
        None | Some(serde_json::Value::Null) => {
            missing.push("response status".into());
            return 0;
        }
        Some(v) => v,
    };
    match v
        .as_u64()
        .and_then(|n| u16::try_from(n).ok())
        .filter(|n| (100..=999).contains(n))
    {
        Some(n) => n,
        None => {
            missing.push(format!(
                "response status (the file says {v}, not an HTTP status code)"
            ));
            0
        }
    }
}

/// A response of `status` with `headers` (redacted here) and `body`.
pub fn response(status: u16, headers: impl Into<Headers>, body: Vec<u8>) -> HttpResponse {
    let mut headers = headers.into();
    redact_headers(&mut headers);
    HttpResponse {
        status,
        version: "HTTP/1.1".into(),
        body: decoded_body(&headers, body),
        headers,
        chunks: Vec::new(),
        first_byte_at: None,
    }
}

/// A body as other tools store it: already decoded (HAR 1.2 §content: "the HTTP response
/// is decoded (decompressed & unchunked)"; claude-trace and claude-tap keep what `fetch` or
/// aiohttp returned). A `content-encoding` the headers still name is recorded as removed
/// ([`Body::content_encoding`]), so readers do not try to decode the bytes again.
fn decoded_body(headers: &Headers, bytes: Vec<u8>) -> Body {
    let mut body = Body::new(bytes);
    let coding = headers
        .get("content-encoding")
        .map(str::trim)
        .filter(|c| !c.is_empty() && !c.eq_ignore_ascii_case("identity"));
    body.content_encoding = coding.map(str::to_string);
    body
}

/// A JSON value as body bytes: strings as their UTF-8 text, anything else serialized
/// compactly (the key order kept).
pub fn json_body(v: &serde_json::Value) -> Vec<u8> {
    match v {
        serde_json::Value::Null => Vec::new(),
        serde_json::Value::String(s) => s.clone().into_bytes(),
        other => serde_json::to_vec(other).unwrap_or_default(),
    }
}

/// Parse an RFC 3339 timestamp; `None` when absent or malformed.
pub fn parse_time(s: Option<&str>) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s?)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// `t` plus `ms` milliseconds (a foreign file's duration or offset); `None` when `ms` is
/// negative, not finite, or lands past the calendar's end (an untrusted number: never a
/// panic on overflow).
pub fn ms_after(t: DateTime<Utc>, ms: f64) -> Option<DateTime<Utc>> {
    (ms.is_finite() && ms >= 0.0)
        .then(|| t.checked_add_signed(chrono::Duration::microseconds((ms * 1000.0).round() as i64)))
        .flatten()
}

/// A time from fractional Unix seconds.
pub fn unix_seconds(secs: f64) -> Option<DateTime<Utc>> {
    if !secs.is_finite() {
        return None;
    }
    let micros = (secs * 1e6).round();
    DateTime::from_timestamp_micros(micros as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_keep_path_and_query_and_redact_secrets() {
        assert_eq!(
            target_of("https://api.anthropic.com/v1/messages?beta=true"),
            "/v1/messages?beta=true"
        );
        assert_eq!(target_of("http://127.0.0.1:9"), "/");
        assert_eq!(target_of("/v1/models"), "/v1/models");
        assert!(!target_of("https://h/x?key=SECRET123").contains("SECRET123"));
    }

    #[test]
    fn foreign_header_secrets_are_redacted() {
        let h = foreign_headers([
            ("X-Api-Key".to_string(), "sk-ant-api...abcd".to_string()),
            ("content-type".to_string(), "application/json".to_string()),
        ]);
        assert!(crate::trace::redact::is_marker(&h[0].1), "{h:?}");
        assert_eq!(h[1].1, "application/json");
    }

    #[test]
    fn unix_seconds_keep_microseconds() {
        let t = unix_seconds(1_700_000_000.123_456).unwrap();
        assert_eq!(t.timestamp_subsec_micros(), 123_456);
    }
}
