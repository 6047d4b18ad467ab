//! The exchange a WebSocket message is recorded as, while it is open and once built:
//! what every message exchange of a connection repeats from its upgrade ([`Upgrade`]),
//! the client message with its frames and the server's messages ([`Open`]), and what is
//! wrong with a message (bytes missing, text that is not JSON).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::super::exchange::{self, ConnInfo};
use super::super::message::{Head, Stamp};
use super::super::NO_TIME;
use crate::http::framing::combined;
use crate::http::websocket::{FrameSeen, Message};
use crate::http::Headers;
use crate::trace::redact::redact_headers;
use crate::trace::websocket::{Close, Direction, Frame, WebSocketMessage};
use crate::trace::{Body, Exchange, ExchangeError, HttpRequest, HttpResponse};

/// What every message exchange of a connection repeats from its upgrade.
pub(super) struct Upgrade {
    info: ConnInfo,
    /// Id of the upgrade's exchange.
    id: u64,
    /// The upgrade request, secrets redacted, with an empty body.
    request: HttpRequest,
    /// The `101`'s version and headers (redacted).
    response: (String, Headers),
    /// The `Sec-WebSocket-Extensions` the `101` accepted.
    pub(super) extensions: String,
}

impl Upgrade {
    /// The upgrade of connection `info` by exchange `id`: `req` answered by `resp`.
    pub(super) fn new(info: &ConnInfo, id: u64, req: &Head, resp: &Head) -> Self {
        let (mut req_headers, mut resp_headers) = (req.headers.clone(), resp.headers.clone());
        redact_headers(&mut req_headers);
        redact_headers(&mut resp_headers);
        Upgrade {
            info: info.clone(),
            id,
            request: HttpRequest {
                method: req.method.clone(),
                target: req.target.clone(),
                version: req.version.clone(),
                headers: req_headers,
                body: Body::default(),
            },
            response: (resp.version.clone(), resp_headers),
            extensions: combined(resp, "sec-websocket-extensions").unwrap_or_default(),
        }
    }
}

/// The exchange of the latest client message, still taking the server's messages.
pub(super) struct Open {
    pub(super) id: u64,
    seq: u64,
    started: Stamp,
    last: Stamp,
    packets: (u64, u64),
    request: Vec<u8>,
    request_cut: bool,
    body: Vec<u8>,
    body_cut: bool,
    /// `(capture time, bytes)` of each server message.
    chunks: Vec<(i64, u64)>,
    first_byte: Option<i64>,
    /// `(packet, stream offset, frame)`, sorted when the exchange is built; `at_us` holds
    /// the capture time until then.
    frames: Vec<(u64, u64, Frame)>,
    pub(super) closed: Option<Close>,
    pub(super) error: Option<ExchangeError>,
}

/// An exchange error.
pub(super) fn err(kind: &str, message: String) -> ExchangeError {
    ExchangeError {
        kind: kind.into(),
        message,
    }
}

/// Who sent direction `dir` (0: the client).
pub(super) fn who(dir: usize) -> &'static str {
    if dir == 0 {
        "client"
    } else {
        "server"
    }
}

fn direction(dir: usize) -> Direction {
    if dir == 0 {
        Direction::Client
    } else {
        Direction::Server
    }
}

impl Open {
    /// Exchange `id`, message `seq` of its connection, starting at `at`, with `error`
    /// from the start (a direction no longer read).
    pub(super) fn new(id: u64, seq: u64, at: Stamp, error: Option<ExchangeError>) -> Self {
        Open {
            id,
            seq,
            started: at,
            last: at,
            packets: (at.frame, at.frame),
            request: Vec::new(),
            request_cut: false,
            body: Vec::new(),
            body_cut: false,
            chunks: Vec::new(),
            first_byte: None,
            frames: Vec::new(),
            closed: None,
            error,
        }
    }

    /// A whole message (or control frame, or a message cut short: `truncated`) of
    /// direction `dir`: its frames, and its payload as the request body (a client data
    /// message) or one more line of the response body (a server data message).
    pub(super) fn add(&mut self, dir: usize, m: Message<Stamp>, truncated: bool) {
        for f in &m.frames {
            self.add_frame(dir, f);
        }
        if !matches!(m.opcode, 1 | 2) {
            return;
        }
        if dir == 0 {
            self.request = m.payload;
            self.request_cut = truncated;
            return;
        }
        let first = m.frames.first().map_or(self.last.ts, |f| f.first.ts);
        let done = m.frames.last().map_or(first, |f| f.last.ts);
        self.first_byte.get_or_insert(first);
        self.chunks.push((done, m.payload.len() as u64 + 1));
        self.body.extend_from_slice(&m.payload);
        self.body.push(b'\n');
        self.body_cut |= truncated;
    }

    fn add_frame(&mut self, dir: usize, f: &FrameSeen<Stamp>) {
        self.packets.0 = self.packets.0.min(f.first.frame);
        self.packets.1 = self.packets.1.max(f.last.frame);
        if f.last.ts != NO_TIME && (self.last.ts == NO_TIME || f.last.ts > self.last.ts) {
            self.last = f.last;
        }
        let h = &f.header;
        let frame = Frame {
            dir: direction(dir),
            at_us: f.last.ts,
            opcode: h.opcode,
            fin: h.fin,
            compressed: h.rsv1,
            wire_bytes: f.read,
            payload_bytes: f.read - h.header_len as u64,
        };
        self.frames.push((f.last.frame, f.offset, frame));
    }

    /// The exchange recorded: frames in capture order with times after the start.
    pub(super) fn build(mut self, up: &Upgrade) -> Exchange {
        let started = self.started.ts;
        let known = started != NO_TIME;
        let since = move |ts: i64| {
            if ts == NO_TIME || !known {
                0
            } else {
                (ts - started) / 1000
            }
        };
        self.frames
            .sort_by_key(|(packet, offset, _)| (*packet, *offset));
        let frames = (self.frames.drain(..))
            .map(|(_, _, f)| Frame {
                at_us: since(f.at_us),
                ..f
            })
            .collect();
        let mut request = up.request.clone();
        request.body =
            Body::new(std::mem::take(&mut self.request)).with_truncated(self.request_cut);
        let mut notes = BTreeMap::new();
        notes.insert("websocket".into(), Value::String("message".into()));
        if !known {
            notes.insert("time_unknown".into(), exchange::TIME_UNKNOWN.into());
        }
        let response = self.response(up, since);
        Exchange {
            id: self.id,
            started_at: time(if known { started } else { 0 }),
            ended_at: known.then(|| time(self.last.ts.max(started))),
            source: exchange::source(&up.info, self.packets),
            request,
            response: Some(response),
            error: self.error,
            notes,
            websocket: Some(Box::new(WebSocketMessage {
                upgrade: up.id,
                seq: self.seq,
                extensions: up.extensions.clone(),
                frames,
                closed: self.closed,
            })),
        }
    }

    /// The `101` response holding the server's messages (`since`: µs after the start).
    fn response(&mut self, up: &Upgrade, since: impl Fn(i64) -> i64) -> HttpResponse {
        let started = self.started.ts;
        HttpResponse {
            status: 101,
            version: up.response.0.clone(),
            headers: up.response.1.clone(),
            body: Body::new(std::mem::take(&mut self.body)).with_truncated(self.body_cut),
            chunks: (self.chunks.iter())
                .map(|&(ts, n)| (since(ts).max(0) as u64, n))
                .collect(),
            first_byte_at: (self.first_byte)
                .filter(|&t| t != NO_TIME && started != NO_TIME)
                .map(|t| time(t.max(started))),
        }
    }
}

/// What is wrong with a whole message of direction `dir`: bytes missing from the
/// capture, or a text message that is not JSON.
pub(super) fn problem(dir: usize, m: &Message<Stamp>) -> Option<ExchangeError> {
    if m.missing > 0 {
        return Some(err(
            "capture_gap",
            format!(
                "{} bytes of the {}'s message at byte {} of its stream are missing from the capture",
                m.missing,
                who(dir),
                m.offset
            ),
        ));
    }
    if m.opcode != 1 {
        return None;
    }
    let e = serde_json::from_slice::<serde::de::IgnoredAny>(&m.payload).err()?;
    Some(err(
        "websocket_error",
        format!(
            "the {}'s text message at byte {} of its stream is not JSON ({e}); it is kept as it came",
            who(dir),
            m.offset
        ),
    ))
}

/// The close frame `m` of direction `dir` as the trace says it.
pub(super) fn close_of(dir: usize, m: &Message<Stamp>) -> Close {
    let (code, reason) = crate::http::websocket::close_payload(&m.payload);
    Close {
        by: Some(direction(dir)),
        code,
        reason,
    }
}

fn time(ns: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_nanos(ns)
}
