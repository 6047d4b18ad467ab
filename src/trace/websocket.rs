//! WebSocket messages in the trace (RFC 6455). A connection is recorded as its upgrade (an
//! ordinary exchange: `GET` with `Upgrade: websocket`, answered `101` or refused) followed
//! by one exchange per client message: the client's message is the request body, the
//! server's messages until the next client message are the response body, one per line
//! (each followed by `\n`; the frames say where each ends). The upgrade's request headers
//! are repeated on every message exchange, since they carry the session's ids and beta
//! flags (the OpenAI Responses WebSocket sends nothing else per message).
//!
//! Bodies hold the messages' payloads as the endpoints meant them: a payload compressed on
//! the wire (permessage-deflate, RFC 7692) is stored inflated, and each frame keeps its
//! wire size, so sizes that crossed the wire stay known.
//!
//! Rules every recorder follows (agentwire's server, and the capture reader in
//! `capture::pcap`):
//! - a message exchange starts with its client message's first byte and holds every frame
//!   until the next client message, both directions, in order (pings, pongs and close
//!   frames too, though their payloads are in no body);
//! - frames seen before the first client message (the server spoke first, or a control
//!   frame came first) make an exchange of their own with an empty request body; it takes
//!   the next `seq`, so `seq` numbers the connection's message exchanges, and the first
//!   client message of such a connection is 1. (Such an exchange has no client data frame:
//!   that is how a reader tells it apart.);
//! - a client message cut short by the end of the connection gets its exchange with what
//!   arrived, the body marked truncated;
//! - `closed` goes on the exchange open when the first close frame was seen (who sent it,
//!   its code and reason), or when the connection ended without one (`by: None`); a
//!   recording that stops before the connection does (the end of a capture) says nothing.

use serde::{Deserialize, Serialize};

/// Who sent a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Client to server (masked on the wire).
    Client,
    /// Server to client.
    Server,
}

/// One WebSocket frame (RFC 6455 §5.2), without its payload (the payloads are the bodies).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    /// Who sent it.
    pub dir: Direction,
    /// When it was seen, in microseconds after the exchange's `started_at`.
    pub at_us: i64,
    /// Opcode: 0 continuation, 1 text, 2 binary, 8 close, 9 ping, 10 pong.
    pub opcode: u8,
    /// FIN bit: the last frame of its message.
    pub fin: bool,
    /// RSV1 set on a message's first frame: the message is compressed
    /// (permessage-deflate).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub compressed: bool,
    /// Bytes of the frame on the wire (header, mask and payload as sent).
    pub wire_bytes: u64,
    /// Bytes of the payload after unmasking and, for a compressed message's frames,
    /// before inflating.
    pub payload_bytes: u64,
}

/// How a connection ended, on the exchange that saw the end.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Close {
    /// Who closed it (`None`: the connection was cut without a close frame).
    pub by: Option<Direction>,
    /// The close frame's status code (RFC 6455 §7.4), if it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
    /// The close frame's reason text, if any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// The WebSocket side of an exchange that is one client message on a connection.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebSocketMessage {
    /// Id of the exchange that recorded the connection's upgrade.
    pub upgrade: u64,
    /// Position of this client message on its connection, from 0.
    pub seq: u64,
    /// The extensions the server accepted (`permessage-deflate; …`), empty for none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub extensions: String,
    /// Every frame of this exchange, both directions, in order.
    #[serde(default)]
    pub frames: Vec<Frame>,
    /// The end of the connection, when it ended during this exchange.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed: Option<Close>,
}

impl WebSocketMessage {
    /// Bytes on the wire of the frames from `dir`.
    pub fn wire_bytes(&self, dir: Direction) -> u64 {
        self.frames
            .iter()
            .filter(|f| f.dir == dir)
            .map(|f| f.wire_bytes)
            .sum()
    }
}

/// The server's messages of a WebSocket exchange's response body: each message is
/// followed by one `\n`. A message's own bytes never hold a raw LF when it is compact
/// JSON; any other text is split at its LFs, which loses nothing (the bytes are all kept).
pub fn server_messages(body: &[u8]) -> impl Iterator<Item = &[u8]> {
    body.split(|&b| b == b'\n').filter(|m| !m.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_split_at_their_line_ends_and_frames_round_trip() {
        let body = b"{\"type\":\"response.created\"}\n{\"type\":\"response.completed\"}\n";
        let got: Vec<&[u8]> = server_messages(body).collect();
        assert_eq!(
            got,
            [
                &b"{\"type\":\"response.created\"}"[..],
                &b"{\"type\":\"response.completed\"}"[..]
            ]
        );
        let ws = WebSocketMessage {
            upgrade: 3,
            seq: 1,
            extensions: String::new(),
            frames: vec![Frame {
                dir: Direction::Client,
                at_us: 0,
                opcode: 1,
                fin: true,
                compressed: false,
                wire_bytes: 1469,
                payload_bytes: 1463,
            }],
            closed: None,
        };
        let text = serde_json::to_string(&ws).unwrap();
        assert_eq!(
            text,
            r#"{"upgrade":3,"seq":1,"frames":[{"dir":"client","at_us":0,"opcode":1,"fin":true,"wire_bytes":1469,"payload_bytes":1463}]}"#
        );
        assert_eq!(serde_json::from_str::<WebSocketMessage>(&text).unwrap(), ws);
        assert_eq!(ws.wire_bytes(Direction::Client), 1469);
        assert_eq!(ws.wire_bytes(Direction::Server), 0);
    }
}
