//! [`ExtractionSummary`]: the counts of an extraction run — what was read, what became exchanges,
//! what was incomplete and why, and what was skipped (non-HTTP, TLS, unknown link types).

use std::collections::BTreeMap;

use serde::Serialize;

/// A connection that carried TLS (not decrypted).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct TlsConnection {
    /// Client `ip:port`.
    pub client: String,
    /// Server `ip:port`.
    pub server: String,
    /// Highest version offered in the ClientHello (`TLS 1.3`), or `TLS`.
    pub version: String,
    /// Server name (SNI), when the ClientHello was captured.
    pub sni: Option<String>,
    /// Payload bytes in both directions.
    pub bytes: u64,
}

/// Counts of one extraction run (all files).
#[derive(Clone, Debug, Default, Serialize)]
pub struct ExtractionSummary {
    /// Packets read.
    pub packets: u64,
    /// Packets without a timestamp (pcapng Simple Packet Blocks); they took the time of
    /// a neighbouring packet.
    pub untimed_packets: u64,
    /// Captured bytes of those packets.
    pub bytes: u64,
    /// TCP segments that passed the filters.
    pub tcp_segments: u64,
    /// Packets of link types that are not decoded: link type → packets.
    pub unknown_link_types: BTreeMap<u32, u64>,
    /// Packets that are not IP (ARP, ...) or too short for their link header.
    pub not_ip: u64,
    /// IP packets that are not TCP.
    pub not_tcp: u64,
    /// IP fragments (not reassembled).
    pub fragments: u64,
    /// Packets whose TCP header is cut off or invalid.
    pub bad_tcp_header: u64,
    /// TCP segments left out by `--port` / `--host`.
    pub filtered_out: u64,
    /// TCP connections (flows) seen.
    pub connections: u64,
    /// Connections that carried HTTP/1.x.
    pub http_connections: u64,
    /// Connections with payload that was neither HTTP nor TLS.
    pub non_http_connections: u64,
    /// Payload bytes of those connections.
    pub non_http_bytes: u64,
    /// Connections that carried TLS.
    pub tls: Vec<TlsConnection>,
    /// Exchanges extracted.
    pub exchanges: u64,
    /// Of which `POST /v1/messages`.
    pub messages_exchanges: u64,
    /// Of which messages on a WebSocket (one exchange per client message).
    pub websocket_messages: u64,
    /// Exchanges with an error (gap, no response, cut short, stream error).
    pub incomplete: u64,
    /// Incomplete exchanges by error kind.
    pub errors: BTreeMap<String, u64>,
    /// Bytes never captured (TCP holes and snaplen truncation).
    pub gap_bytes: u64,
    /// Gaps.
    pub gaps: u64,
    /// Retransmitted or duplicated payload bytes dropped.
    pub retransmitted_bytes: u64,
    /// Retransmitted bytes that differed from the first copy (first copy kept).
    pub conflicting_bytes: u64,
    /// Segments captured before the bytes they acknowledge (capture-order anomaly),
    /// processed after them.
    pub reordered_segments: u64,
    /// Segments that arrived ahead of a hole.
    pub out_of_order_segments: u64,
    /// Responses whose request was not captured (kept as exchanges marked so).
    pub orphan_responses: u64,
    /// Requests whose response was lost in a capture gap.
    pub lost_responses: u64,
    /// HTTP-stream bytes skipped while resynchronising.
    pub skipped_http_bytes: u64,
    /// Bytes after a protocol switch (101, CONNECT) not read as WebSocket frames.
    pub tunneled_bytes: u64,
}

impl ExtractionSummary {
    /// ` (N of them WebSocket messages)` when the run read any, else empty: for the line
    /// that says how many exchanges were written.
    pub fn websocket_note(&self) -> String {
        match self.websocket_messages {
            0 => String::new(),
            n => format!(
                " ({} of them WebSocket {})",
                n,
                if n == 1 { "message" } else { "messages" }
            ),
        }
    }
}
