//! The `mcp` record kind: one JSON-RPC message between an agent CLI and one of its MCP
//! servers (stdio or Streamable HTTP), with direction, server name, time and wire size,
//! plus the server's lifecycle events (exit, crash). Every string in a record passes the
//! redaction functions ([`super::redact::redact_json`], [`super::redact::redact_text`])
//! before it is built.
//!
//! On disk: `{"type":"mcp","seq":N,"at":…,"server":"jobs","transport":"stdio",
//! "direction":"to_server","size":…,"sha256":…,"message":{…}}`. See
//! `docs/trace-format.md`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::redact::{redact_json, redact_text};

/// How the CLI reached the MCP server.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum McpTransport {
    /// Newline-delimited JSON-RPC over the server process's stdin/stdout.
    Stdio,
    /// Streamable HTTP: JSON-RPC in POST bodies, answers as JSON or per-request SSE.
    Http,
    /// A transport written by a newer agentwire.
    #[serde(other)]
    Unknown,
}

/// Which way a message went.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum McpDirection {
    /// From the client (the agent CLI) to the MCP server.
    ToServer,
    /// From the MCP server to the client.
    ToClient,
    /// Neither: a lifecycle event of the server (see [`McpRecord::event`]).
    Event,
}

/// HTTP facts of a Streamable HTTP message.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct McpHttp {
    /// Number of the HTTP request this message travelled in (per server, from 0); a
    /// request and the answers it got share it.
    pub request: u64,
    /// Request method (`POST`, `GET`, `DELETE`).
    pub method: String,
    /// Response status, on messages to the client (and on a 202 with no message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// `Mcp-Session-Id` of the request or response (2025-11-25 generation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// `MCP-Protocol-Version` header of the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// True when the message came as an event of a `text/event-stream` answer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sse: bool,
}

/// One `mcp` record.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct McpRecord {
    /// Order of the record in the file that captured it (per recording source, from 0).
    pub seq: u64,
    /// When the message's last byte was seen (UTC).
    pub at: DateTime<Utc>,
    /// Server name, as in the CLI's MCP configuration (`mcpServers` key).
    pub server: String,
    /// Transport.
    pub transport: McpTransport,
    /// Direction.
    pub direction: McpDirection,
    /// Bytes of the message on the wire (a stdio line without its `\n`, an HTTP body or
    /// an SSE event's data).
    #[serde(default)]
    pub size: u64,
    /// SHA-256 of those wire bytes, before redaction (so two recordings of the same bytes
    /// agree, and the relay can be checked against either end).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sha256: String,
    /// The JSON-RPC message (object, or array for a batch), strings redacted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Value>,
    /// The bytes as text (lossy UTF-8, redacted) when they were not JSON, e.g. a message
    /// cut short by a crash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// True when the message ended early (the stream closed mid-message).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// Lifecycle event for [`McpDirection::Event`]: `started`, `exited`, `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// Detail of an event (command, exit status, error message), redacted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// HTTP facts (Streamable HTTP only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<McpHttp>,
}

impl McpRecord {
    /// A record of `bytes` seen going `direction`: parsed as JSON when they are JSON
    /// (strings redacted), else kept as redacted text in [`McpRecord::raw`].
    pub fn message(
        server: &str,
        transport: McpTransport,
        direction: McpDirection,
        bytes: &[u8],
        truncated: bool,
    ) -> McpRecord {
        let (message, raw) = match serde_json::from_slice::<Value>(bytes) {
            Ok(mut v) if !truncated => {
                redact_json(&mut v);
                (Some(v), None)
            }
            _ => (None, Some(redact_text(&String::from_utf8_lossy(bytes)))),
        };
        McpRecord {
            seq: 0,
            at: Utc::now(),
            server: redact_text(server),
            transport,
            direction,
            size: bytes.len() as u64,
            sha256: hex::encode(Sha256::digest(bytes)),
            message,
            raw,
            truncated,
            event: None,
            detail: None,
            http: None,
        }
    }

    /// A lifecycle event of `server` (`started`, `exited`, `error`) with a detail.
    pub fn event(server: &str, transport: McpTransport, event: &str, detail: &str) -> McpRecord {
        McpRecord {
            seq: 0,
            at: Utc::now(),
            server: redact_text(server),
            transport,
            direction: McpDirection::Event,
            size: 0,
            sha256: String::new(),
            message: None,
            raw: None,
            truncated: false,
            event: Some(event.to_string()),
            detail: Some(redact_text(detail)),
            http: None,
        }
    }

    /// JSON-RPC method, when the message is a request or notification.
    pub fn method(&self) -> Option<&str> {
        self.message.as_ref()?.get("method")?.as_str()
    }

    /// JSON-RPC id (as written: number or string), when present.
    pub fn id(&self) -> Option<&Value> {
        self.message.as_ref()?.get("id").filter(|v| !v.is_null())
    }

    /// True for a request (method and id).
    pub fn is_request(&self) -> bool {
        self.method().is_some() && self.id().is_some()
    }

    /// True for a notification (method, no id).
    pub fn is_notification(&self) -> bool {
        self.method().is_some() && self.id().is_none()
    }

    /// True for a response (id, and `result` or `error`).
    pub fn is_response(&self) -> bool {
        self.message
            .as_ref()
            .is_some_and(|m| m.get("result").is_some() || m.get("error").is_some())
            && self.id().is_some()
    }
}

/// An [`McpRecord`] as a trace line (with its `"type":"mcp"` tag), for
/// [`super::TraceWriter::write_record`].
#[derive(Serialize)]
pub struct McpLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    record: &'a McpRecord,
}

impl McpRecord {
    /// This record as a trace line.
    pub fn line(&self) -> McpLine<'_> {
        McpLine {
            kind: "mcp",
            record: self,
        }
    }
}

/// The [`McpRecord::event`] of a marker: records of this source were lost (not written)
/// before it; its detail names how many, their `seq` numbers and why.
pub const LOST_EVENT: &str = "lost";

/// Checks one input's `mcp` records for loss, in any order: `lost` markers, and gaps in
/// the `seq` numbers of a source (server and transport) that no marker covers (the
/// marker itself could not be written, or lines were removed). Memory: 8 bytes per
/// record.
#[derive(Debug, Default)]
pub struct Continuity {
    /// Per source (server, transport): the `seq` numbers seen, and the records the
    /// markers among them say were lost.
    sources: std::collections::BTreeMap<(String, String), (Vec<u64>, u64)>,
    /// Stdio sources with a `started` record, and whether their `exited` one came.
    stdio_runs: std::collections::BTreeMap<String, bool>,
    markers: Vec<String>,
}

impl Continuity {
    /// Take one record.
    pub fn see(&mut self, r: &McpRecord) {
        let key = (r.server.clone(), format!("{:?}", r.transport));
        let source = self.sources.entry(key).or_default();
        source.0.push(r.seq);
        if r.transport == McpTransport::Stdio {
            match r.event.as_deref() {
                Some("started") => {
                    self.stdio_runs.insert(r.server.clone(), false);
                }
                Some("exited") => {
                    self.stdio_runs.insert(r.server.clone(), true);
                }
                _ => {}
            }
        }
        if r.event.as_deref() == Some(LOST_EVENT) {
            let detail = r.detail.as_deref().unwrap_or("records lost");
            // "N records lost (seq A–B): why", as the sink writes it
            source.1 += detail
                .split(' ')
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
            self.markers
                .push(format!("MCP server {:?}: {detail}", r.server));
        }
    }

    /// The warnings: one per marker, then one per source whose gaps in `seq` lose more
    /// records than its markers say (a marker takes the `seq` after the records it
    /// stands for), then one per stdio server whose run has no `exited` record (the
    /// records after the last one are missing: the tap was killed, or its disk filled).
    pub fn warnings(self) -> Vec<String> {
        let mut out = self.markers;
        for (server, _) in self.stdio_runs.iter().filter(|(_, exited)| !**exited) {
            let last = self
                .sources
                .get(&(server.clone(), format!("{:?}", McpTransport::Stdio)))
                .and_then(|s| s.0.iter().max().copied())
                .unwrap_or(0);
            out.push(format!(
                "MCP server {server:?}: the trace ends at seq {last} without the server's `exited` record: what came after is missing (mcp-tap was killed, or could not write: a full disk)"
            ));
        }
        for ((server, _), (mut seqs, marked)) in self.sources {
            seqs.sort_unstable();
            seqs.dedup();
            let gaps: u64 = seqs.windows(2).map(|w| w[1] - w[0] - 1).sum();
            let missing = gaps + seqs.first().copied().unwrap_or(0);
            if missing > marked {
                out.push(format!(
                    "MCP server {server:?}: {} missing from the trace (gaps in seq that no `lost` marker explains): the recording is incomplete",
                    crate::text::fmt::plural(missing - marked, "record")
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_in_messages_are_redacted_and_the_digest_is_of_the_wire_bytes() {
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"api_key":"hunter2","url":"http://u:PW9@h/?token=abc","note":"sk-ant-api03-SECRETSECRET"}}}"#;
        let r = McpRecord::message(
            "jobs",
            McpTransport::Stdio,
            McpDirection::ToServer,
            line,
            false,
        );
        let text = serde_json::to_string(&r).unwrap();
        for secret in ["hunter2", "PW9", "abc\"", "SECRETSECRET"] {
            assert!(!text.contains(secret), "{secret} leaked: {text}");
        }
        assert_eq!(r.sha256, hex::encode(Sha256::digest(line)));
        assert_eq!(r.size, line.len() as u64);
        assert_eq!(r.method(), Some("tools/call"));
        assert!(r.is_request());
    }

    #[test]
    fn ids_and_task_ids_are_not_taken_for_secrets() {
        let line = br#"{"jsonrpc":"2.0","id":2,"result":{"taskId":"job-1","status":"working","sessionId":"s"}}"#;
        let r = McpRecord::message(
            "j",
            McpTransport::Stdio,
            McpDirection::ToClient,
            line,
            false,
        );
        let m = r.message.unwrap();
        assert_eq!(m["result"]["taskId"], "job-1");
        assert_eq!(m["result"]["sessionId"], "s");
    }

    #[test]
    fn a_message_cut_short_is_kept_raw() {
        let r = McpRecord::message(
            "j",
            McpTransport::Stdio,
            McpDirection::ToClient,
            br#"{"jsonrpc":"2.0","id":3,"result":{"cont"#,
            true,
        );
        assert!(r.message.is_none());
        assert!(r.truncated);
        assert!(r.raw.unwrap().starts_with("{\"jsonrpc\""));
    }
}
