//! The `Exchange` record: one HTTP request with its response or the error that ended it,
//! where it was seen, and when. Also the recording `Context` a trace header carries.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::Body;

pub use crate::http::headers::header_value;
pub use crate::http::Headers;

/// A request-only exchange (id 0, server source, started at the Unix epoch), for tests.
#[cfg(test)]
pub(crate) fn test_exchange(
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Exchange {
    Exchange {
        id: 0,
        started_at: chrono::DateTime::UNIX_EPOCH,
        ended_at: None,
        source: Source::new(SourceKind::Server),
        request: HttpRequest {
            method: method.into(),
            target: target.into(),
            version: "HTTP/1.1".into(),
            headers: test_headers(headers),
            body: crate::trace::Body::new(body.to_vec()),
        },
        response: None,
        error: None,
        notes: Default::default(),
        websocket: None,
    }
}

/// Headers from `(name, value)` pairs, for tests.
#[cfg(test)]
pub(crate) fn test_headers(pairs: &[(&str, &str)]) -> Headers {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// One HTTP exchange.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Exchange {
    /// Position in the trace, from 0, in order of request arrival.
    pub id: u64,
    /// When the first byte of the request arrived (UTC, nanosecond resolution where the
    /// source has it).
    pub started_at: DateTime<Utc>,
    /// When the last byte of the response was sent or seen; `None` if it never ended.
    #[serde(default)]
    pub ended_at: Option<DateTime<Utc>>,
    /// Where the bytes were seen.
    pub source: Source,
    /// The request.
    pub request: HttpRequest,
    /// The response, if one was sent or seen.
    #[serde(default)]
    pub response: Option<HttpResponse>,
    /// Why the exchange did not complete normally, if it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ExchangeError>,
    /// Free-form remarks by the source (e.g. which scenario turn answered it).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub notes: BTreeMap<String, serde_json::Value>,
    /// For one message on a WebSocket: its connection and frames
    /// ([`super::websocket`]); `None` for an HTTP exchange.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub websocket: Option<Box<super::websocket::WebSocketMessage>>,
}

impl Exchange {
    /// The request header lines as the client sent them: none when the source held none
    /// ([`Source::request_headers_missing`]; lines an importer added, such as
    /// `content-type`, are not what was sent), so every header figure and beta is unknown.
    pub fn sent_headers(&self) -> &[(String, String)] {
        if self.source.request_headers_missing() {
            &[]
        } else {
            &self.request.headers
        }
    }

    /// Duration from the request's first byte to the response's last byte, in microseconds.
    pub fn duration_us(&self) -> Option<i64> {
        self.ended_at
            .map(|e| (e - self.started_at).num_microseconds().unwrap_or(i64::MAX))
    }

    /// Path without the query string (`/v1/messages` for `/v1/messages?beta=true`); an
    /// absolute-form target (`http://host:port/v1/messages`, as sent to a proxy) gives its
    /// path too, so such requests count like any other.
    pub fn path(&self) -> &str {
        let t = origin_form(&self.request.target);
        t.split_once('?').map_or(t, |(p, _)| p)
    }

    /// True for a `POST /v1/messages` (any query string).
    pub fn is_messages(&self) -> bool {
        self.request.method.eq_ignore_ascii_case("POST") && self.path() == "/v1/messages"
    }
}

/// The origin form (`/path?query`) of a request target: absolute-form targets
/// (`http://host/path`) lose their scheme and authority (RFC 9112 §3.2.2).
pub fn origin_form(target: &str) -> &str {
    let lower = target.get(..8).unwrap_or(target).to_ascii_lowercase();
    let rest = if lower.starts_with("http://") {
        &target[7..]
    } else if lower.starts_with("https://") {
        &target[8..]
    } else {
        return target;
    };
    match rest.find(['/', '?']) {
        Some(i) if rest[i..].starts_with('/') => &rest[i..],
        Some(i) => &rest[i..],
        None => "/",
    }
}

/// The request half of an exchange.
///
/// A request that was not captured (a packet capture that began after it was sent, or a
/// capture gap that swallowed it, while its response was captured) has every field empty
/// ([`HttpRequest::not_captured`]) and is written as `"request": {"captured": false}`: no
/// request field is invented.
#[derive(Clone, Debug, Deserialize)]
pub struct HttpRequest {
    /// Method, e.g. `POST` (empty: not captured).
    #[serde(default)]
    pub method: String,
    /// Request target as sent: path and query (`/v1/messages?beta=true`).
    #[serde(default)]
    pub target: String,
    /// Protocol version, e.g. `HTTP/1.1`.
    #[serde(default)]
    pub version: String,
    /// Header fields, secrets redacted.
    #[serde(default)]
    pub headers: Headers,
    /// The body, byte-exact.
    #[serde(default)]
    pub body: Body,
}

impl HttpRequest {
    /// The request of an exchange whose request was not captured: every field empty.
    pub fn not_captured() -> Self {
        HttpRequest {
            method: String::new(),
            target: String::new(),
            version: String::new(),
            headers: Headers::new(),
            body: Body::default(),
        }
    }

    /// False when the request was not captured (see [`HttpRequest::not_captured`]); a
    /// captured request always has a method.
    pub fn captured(&self) -> bool {
        !self.method.is_empty()
    }
}

impl Serialize for HttpRequest {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = ser.serialize_map(None)?;
        if !self.captured() {
            m.serialize_entry("captured", &false)?;
            return m.end();
        }
        m.serialize_entry("method", &self.method)?;
        m.serialize_entry("target", &self.target)?;
        m.serialize_entry("version", &self.version)?;
        m.serialize_entry("headers", &self.headers)?;
        m.serialize_entry("body", &self.body)?;
        m.end()
    }
}

/// The response half of an exchange.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HttpResponse {
    /// Status code.
    pub status: u16,
    /// Protocol version.
    #[serde(default)]
    pub version: String,
    /// Header fields, secrets redacted.
    #[serde(default)]
    pub headers: Headers,
    /// The body (for SSE, the whole event stream text).
    #[serde(default)]
    pub body: Body,
    /// Arrival of body pieces: `[offset_us, length_bytes]` pairs, offset from
    /// `started_at` of the exchange, in order. Used to replay a stream with its timing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chunks: Vec<(u64, u64)>,
    /// When the first response byte went out or was seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_byte_at: Option<DateTime<Utc>>,
}

impl HttpResponse {
    /// The status code, when one is known: `None` for a response recorded with status 0
    /// (its head was not captured, or an HTTP/0.9 response has none).
    pub fn known_status(&self) -> Option<u16> {
        (self.status != 0).then_some(self.status)
    }
}

/// Why an exchange ended abnormally.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ExchangeError {
    /// Machine-readable kind: `client_disconnected`, `body_too_large`, `body_timeout`,
    /// `invalid_json`, `injected_drop`, `upstream_error`, `capture_gap`, ...
    pub kind: String,
    /// Human-readable detail.
    pub message: String,
}

/// Which kind of source produced an exchange.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// agentwire's fake API server answered it.
    Server,
    /// agentwire's recording proxy forwarded it to an upstream.
    Proxy,
    /// Read from a packet capture file.
    Pcap,
    /// Captured live from an interface.
    Live,
    /// Imported from another tool's format.
    Import,
    /// A kind written by a newer agentwire.
    #[serde(other)]
    Unknown,
}

/// Where an exchange was seen. Fields that do not apply to a kind are absent.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Source {
    /// The kind of source.
    pub kind: SourceKind,
    /// Server mode that answered (`stub`, `script`, `replay`, `proxy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// Client address `ip:port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// Server address `ip:port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// Connection number (server: accept order from 0; pcap: flow order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection: Option<u64>,
    /// Capture file the exchange came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Frame numbers (from 1, as tshark counts) of the first and last packet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frames: Option<(u64, u64)>,
    /// Upstream URL the request was forwarded to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    /// For imports: the format the exchange was read from (`claude-code-transcript`,
    /// `har`, `claude-tap`, `claude-trace`, `request-body`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// For imports: what the source did not contain, in words (`response bytes`,
    /// `request headers`, ...), so a reader knows which figures are absent, not zero.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
}

/// The [`Source::missing`] entry of a source that held no request header at all (an
/// export of bodies): its headers, and the betas they carry, are unknown, not empty.
pub const MISSING_REQUEST_HEADERS: &str = "request headers";

impl Source {
    /// True when the source held no request header ([`MISSING_REQUEST_HEADERS`]): header
    /// lines an importer wrote itself (`content-type`) say nothing about what was sent.
    pub fn request_headers_missing(&self) -> bool {
        self.missing.iter().any(|m| m == MISSING_REQUEST_HEADERS)
    }

    /// A source of `kind` with every optional field empty.
    pub fn new(kind: SourceKind) -> Self {
        Source {
            kind,
            mode: None,
            client: None,
            server: None,
            connection: None,
            file: None,
            frames: None,
            upstream: None,
            format: None,
            missing: Vec::new(),
        }
    }
}

/// The recording context: what was run, how, and by which agentwire.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Context {
    /// Client name, e.g. `claude-code` (or the command's file name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli: Option<String>,
    /// Client version, e.g. `2.1.304`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli_version: Option<String>,
    /// The npm dist-tag the version was resolved from when the run asked for one (`latest`);
    /// `cli_version` is the version the tag named at recording time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli_tag: Option<String>,
    /// Platform of the client binary, e.g. `linux-x64`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    /// How the client reached agentwire: `base-url` or `first-party`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    /// Command line that was run (argv), when agentwire ran it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// Environment variables agentwire set for the run (secrets redacted).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Base URL the client was pointed at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The model provider the client was configured with, when the source records it
    /// (Codex's `model_provider`: `openai` for its built-in provider, else the id of a
    /// custom provider from its `config.toml`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_provider: Option<String>,
    /// agentwire version that wrote the trace.
    #[serde(default)]
    pub agentwire_version: String,
    /// Free-form label (e.g. a matrix cell name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The MCP servers the client was configured with, by name, when the recording set
    /// them up (opencode names their tools `NAME_TOOL`; the list tells those apart).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mcp_servers: Vec<String>,
}

impl Context {
    /// A context stamped with this agentwire's version.
    pub fn new() -> Self {
        Context {
            agentwire_version: env!("CARGO_PKG_VERSION").to_string(),
            ..Context::default()
        }
    }
}
