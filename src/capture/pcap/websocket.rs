//! A WebSocket connection read from a capture: after a `101` that answers a request with
//! `Upgrade: websocket` (and says `Upgrade: websocket` itself), both directions' bytes
//! go through [`crate::http::websocket::Reader`] (permessage-deflate when the response's
//! `Sec-WebSocket-Extensions` accepted it) and become exchanges as
//! [`crate::trace::websocket`] describes: one per client message, holding the server's
//! messages until the next client message.
//!
//! Times and frame numbers come from the packets: a frame's time is that of the packet
//! that completed it, an exchange starts with the packet that brought its client
//! message's first byte, and `source.frames` spans every packet of its frames. Frames are
//! listed in capture order (packet number, then stream offset).
//!
//! Nothing read is lost on bad input. A frame error (bad length, reserved opcode,
//! fragments out of order, a message over the bound, one that does not inflate) or a
//! capture gap the frames cannot be followed across stops reading that direction: the
//! exchange open then, and every later one, carries the error (`websocket_error`, or
//! `capture_gap` for a gap, naming the stream offset), and the direction's remaining bytes
//! are counted as after a protocol switch, as for any tunnel. A gap inside an
//! uncompressed payload loses only those bytes (`capture_gap` on the exchange, the body
//! marked truncated). A stream that ends inside a frame keeps what arrived of its message
//! (a client message gets its exchange, truncated); a text message that is not JSON is
//! kept as it came and marks its exchange.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::exchange::{self, ConnInfo};
use super::message::{Head, Stamp};
use super::NO_TIME;
use crate::http::framing::combined;
use crate::http::websocket::{close_payload, deflate_accepted, Cut, FrameError, Message, Reader};
use crate::http::Headers;
use crate::trace::redact::redact_headers;
use crate::trace::websocket::{Close, Direction, Frame, WebSocketMessage};
use crate::trace::{Body, Exchange, ExchangeError, HttpRequest, HttpResponse};

/// True when `resp` switches the connection of `req` to WebSocket: a `101` whose request
/// and response both say `Upgrade: websocket` (ASCII case-insensitive).
pub(super) fn is_upgrade(req: &Head, resp: &Head) -> bool {
    let websocket = |h: &Head| h.headers.list("upgrade").iter().any(|u| u == "websocket");
    resp.status == 101 && websocket(req) && websocket(resp)
}

/// The WebSocket side of one connection.
pub(super) struct WsConn {
    info: ConnInfo,
    /// Id of the upgrade's exchange.
    upgrade: u64,
    /// The upgrade request, secrets redacted, with an empty body.
    request: HttpRequest,
    /// The `101`'s version and headers (redacted).
    response: (String, Headers),
    extensions: String,
    dirs: [Dir; 2],
    open: Option<Open>,
    next_seq: u64,
    /// A close frame was seen (the first one says who closed).
    close_seen: bool,
    /// A direction ended (FIN).
    fin: bool,
    /// The latest packet whose bytes were read.
    last: Stamp,
    done: Vec<Exchange>,
}

/// One direction: its reader (made at its first byte, so offsets are stream offsets) and
/// why it stopped being read, if it did.
struct Dir {
    deflate: Option<bool>,
    reader: Option<Reader<Stamp>>,
    dead: Option<ExchangeError>,
}

/// The exchange of the latest client message, still taking the server's messages.
struct Open {
    id: u64,
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
    /// `(packet, stream offset, frame)`, sorted when the exchange is built.
    frames: Vec<(u64, u64, Frame)>,
    closed: Option<Close>,
    error: Option<ExchangeError>,
}

fn err(kind: &str, message: String) -> ExchangeError {
    ExchangeError {
        kind: kind.into(),
        message,
    }
}

fn who(dir: usize) -> &'static str {
    if dir == 0 {
        "client"
    } else {
        "server"
    }
}

impl WsConn {
    /// The WebSocket side of the connection `info` upgraded by exchange `upgrade` with
    /// `req` answered by `resp`.
    pub(super) fn new(info: &ConnInfo, upgrade: u64, req: &Head, resp: &Head) -> Self {
        let extensions = combined(resp, "sec-websocket-extensions").unwrap_or_default();
        let deflate = deflate_accepted(&extensions);
        let (mut req_headers, mut resp_headers) = (req.headers.clone(), resp.headers.clone());
        redact_headers(&mut req_headers);
        redact_headers(&mut resp_headers);
        let dir = |reset: Option<bool>| Dir {
            deflate: reset,
            reader: None,
            dead: None,
        };
        WsConn {
            info: info.clone(),
            upgrade,
            request: HttpRequest {
                method: req.method.clone(),
                target: req.target.clone(),
                version: req.version.clone(),
                headers: req_headers,
                body: Body::default(),
            },
            response: (resp.version.clone(), resp_headers),
            extensions,
            dirs: [dir(deflate.map(|d| d.0)), dir(deflate.map(|d| d.1))],
            open: None,
            next_seq: 0,
            close_seen: false,
            fin: false,
            last: Stamp {
                ts: NO_TIME,
                ..Stamp::default()
            },
            done: Vec::new(),
        }
    }

    /// Id of the exchange still open, if one is.
    pub(super) fn oldest_open(&self) -> Option<u64> {
        self.open.as_ref().map(|o| o.id)
    }

    /// The exchanges finished so far.
    pub(super) fn take_done(&mut self) -> impl Iterator<Item = Exchange> + '_ {
        self.done.drain(..)
    }

    /// Bytes of direction `dir` from stream offset `off`; returns how many bytes were not
    /// read as frames (the direction stopped being read: its bytes from the error on).
    pub(super) fn data(
        &mut self,
        dir: usize,
        data: &[u8],
        off: u64,
        at: Stamp,
        ids: &mut u64,
    ) -> u64 {
        self.last = at;
        let d = &mut self.dirs[dir];
        if d.dead.is_some() {
            return data.len() as u64;
        }
        let deflate = d.deflate;
        let r = d
            .reader
            .get_or_insert_with(|| Reader::tagged(deflate).starting_at(off));
        let mut out = Vec::new();
        let result = r.feed_at(data, at, &mut out);
        let fed = r.offset();
        self.messages(dir, out, ids);
        match result {
            Ok(()) => 0,
            Err(e) => {
                self.fail(dir, "websocket_error", &e, at, ids);
                // From the frame or message at fault on (a message that failed as a
                // whole was taken from the reader already).
                fed.saturating_sub(e.offset())
            }
        }
    }

    /// `len` bytes of direction `dir` from stream offset `off` were not captured; returns
    /// how many bytes are counted as not read.
    pub(super) fn gap(&mut self, dir: usize, len: u64, off: u64, at: Stamp, ids: &mut u64) -> u64 {
        self.last = at;
        let d = &mut self.dirs[dir];
        if d.dead.is_some() {
            return len;
        }
        let deflate = d.deflate;
        let r = d
            .reader
            .get_or_insert_with(|| Reader::tagged(deflate).starting_at(off));
        let mut out = Vec::new();
        let result = r.gap(len, at, &mut out);
        let pending = r.pending() as u64;
        self.messages(dir, out, ids);
        match result {
            Ok(()) => 0,
            Err(e) => {
                self.fail(dir, "capture_gap", &e, at, ids);
                len + pending
            }
        }
    }

    /// Direction `dir` ended (FIN): a frame it cut short is kept.
    pub(super) fn end(&mut self, dir: usize, ids: &mut u64) {
        self.fin = true;
        let why = format!("the {} closed the connection", who(dir));
        self.cut(dir, &why, ids);
    }

    /// The connection is over (`why`: how, as the driver says it): frames cut short are
    /// kept, the end is noted when the connection really ended (FIN, reset, port reuse:
    /// not when the capture or the idle timeout ended it), the last exchange finishes.
    pub(super) fn close(&mut self, why: &str, ids: &mut u64) {
        for dir in 0..2 {
            self.cut(dir, why, ids);
        }
        let ended =
            self.fin || matches!(why, "connection reset" | "port reused by a new connection");
        if ended && !self.close_seen {
            // A connection that carried no frame at all has no exchange to say so.
            if let Some(o) = self.open.as_mut() {
                o.closed = Some(Close {
                    by: None,
                    code: None,
                    reason: String::new(),
                });
            }
        }
        self.finish();
    }

    /// What the end of direction `dir` cut short (`why`: how it ended).
    fn cut(&mut self, dir: usize, why: &str, ids: &mut u64) {
        let d = &mut self.dirs[dir];
        if d.dead.is_some() {
            return;
        }
        let Some(Cut {
            message,
            offset,
            bytes,
        }) = d.reader.as_mut().and_then(Reader::cut)
        else {
            return;
        };
        let text = if bytes == 0 {
            format!(
                "{why} between the fragments of a message, at byte {offset} of the {}'s stream",
                who(dir)
            )
        } else {
            format!(
                "{why} {bytes} bytes into the frame at byte {offset} of the {}'s stream",
                who(dir)
            )
        };
        match message {
            Some(m) => self.message(dir, m, Some(text), ids),
            None => {
                let at = self.last;
                self.exchange(at, ids)
                    .error
                    .get_or_insert(err("websocket_error", text));
            }
        }
    }

    /// Direction `dir` stopped being read at `e`.
    fn fail(&mut self, dir: usize, kind: &str, e: &FrameError, at: Stamp, ids: &mut u64) {
        let message = format!(
            "the {}'s WebSocket frames are unreadable from byte {} of its stream on: {e}",
            who(dir),
            e.offset()
        );
        let error = err(kind, message);
        self.dirs[dir].dead = Some(error.clone());
        self.exchange(at, ids).error.get_or_insert(error);
    }

    fn messages(&mut self, dir: usize, out: Vec<Message<Stamp>>, ids: &mut u64) {
        for m in out {
            self.message(dir, m, None, ids);
        }
    }

    /// One message (or control frame) of direction `dir`; `cut`: why it is cut short.
    fn message(&mut self, dir: usize, m: Message<Stamp>, cut: Option<String>, ids: &mut u64) {
        let first = m.frames.first().map(|f| f.first).unwrap_or_default();
        let data = matches!(m.opcode, 1 | 2);
        if dir == 0 && data {
            self.begin(first, ids);
        }
        let truncated = cut.is_some() || m.missing > 0;
        let problem = cut
            .map(|c| err("websocket_error", c))
            .or_else(|| problem(dir, &m));
        let close = (m.opcode == 8 && !self.close_seen).then(|| {
            let (code, reason) = close_payload(&m.payload);
            let by = Some(if dir == 0 {
                Direction::Client
            } else {
                Direction::Server
            });
            Close { by, code, reason }
        });
        self.close_seen |= close.is_some();
        let o = self.exchange(first, ids);
        if close.is_some() {
            o.closed = close;
        }
        for f in &m.frames {
            o.add_frame(dir, f);
        }
        if let Some(p) = problem {
            o.error.get_or_insert(p);
        }
        match (dir, m.opcode) {
            (0, 1 | 2) => {
                o.request = m.payload;
                o.request_cut = truncated;
            }
            (_, 1 | 2) => {
                let done = m.frames.last().map_or(first.ts, |f| f.last.ts);
                o.first_byte.get_or_insert(first.ts);
                o.chunks.push((done, m.payload.len() as u64 + 1));
                o.body.extend_from_slice(&m.payload);
                o.body.push(b'\n');
                o.body_cut |= truncated;
            }
            _ => {}
        }
    }

    /// The open exchange, one with an empty client message when none is (the server
    /// spoke, or the connection ended, before the client sent a message).
    fn exchange(&mut self, at: Stamp, ids: &mut u64) -> &mut Open {
        if self.open.is_none() {
            self.begin(at, ids);
        }
        self.open.as_mut().expect("opened above")
    }

    /// A client message whose first byte came at `at` opens the next exchange.
    fn begin(&mut self, at: Stamp, ids: &mut u64) {
        self.finish();
        // A direction no longer read leaves every later exchange without its frames.
        let error = self.dirs.iter().find_map(|d| d.dead.clone());
        self.open = Some(Open {
            id: *ids,
            seq: self.next_seq,
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
        });
        *ids += 1;
        self.next_seq += 1;
    }

    /// The open exchange, if any, is finished.
    fn finish(&mut self) {
        if let Some(o) = self.open.take() {
            let x = self.build(o);
            self.done.push(x);
        }
    }

    fn build(&self, mut o: Open) -> Exchange {
        let started = o.started.ts;
        let since = |ts: i64| {
            if ts == NO_TIME || started == NO_TIME {
                0
            } else {
                (ts - started) / 1000
            }
        };
        o.frames
            .sort_by_key(|(packet, offset, _)| (*packet, *offset));
        let frames = o
            .frames
            .into_iter()
            .map(|(_, _, f)| Frame {
                at_us: since(f.at_us),
                ..f
            })
            .collect();
        let mut request = self.request.clone();
        request.body = Body::new(o.request).with_truncated(o.request_cut);
        let response = HttpResponse {
            status: 101,
            version: self.response.0.clone(),
            headers: self.response.1.clone(),
            body: Body::new(o.body).with_truncated(o.body_cut),
            chunks: o
                .chunks
                .iter()
                .map(|&(ts, n)| (since(ts).max(0) as u64, n))
                .collect(),
            first_byte_at: o
                .first_byte
                .filter(|&t| t != NO_TIME && started != NO_TIME)
                .map(|t| time(t.max(started))),
        };
        let mut notes = std::collections::BTreeMap::new();
        notes.insert("websocket".into(), Value::String("message".into()));
        let last = o.last.ts.max(started);
        if started == NO_TIME {
            notes.insert("time_unknown".into(), exchange::TIME_UNKNOWN.into());
        }
        Exchange {
            id: o.id,
            started_at: time(if started == NO_TIME { 0 } else { started }),
            ended_at: (started != NO_TIME).then(|| time(last)),
            source: exchange::source(&self.info, o.packets),
            request,
            response: Some(response),
            error: o.error,
            notes,
            websocket: Some(Box::new(WebSocketMessage {
                upgrade: self.upgrade,
                seq: o.seq,
                extensions: self.extensions.clone(),
                frames,
                closed: o.closed,
            })),
        }
    }
}

impl Open {
    /// A frame of direction `dir` (its `at_us` holds its capture time until the exchange
    /// is built).
    fn add_frame(&mut self, dir: usize, f: &crate::http::websocket::FrameSeen<Stamp>) {
        self.packets.0 = self.packets.0.min(f.first.frame);
        self.packets.1 = self.packets.1.max(f.last.frame);
        if f.last.ts != NO_TIME && (self.last.ts == NO_TIME || f.last.ts > self.last.ts) {
            self.last = f.last;
        }
        let h = &f.header;
        let frame = Frame {
            dir: if dir == 0 {
                Direction::Client
            } else {
                Direction::Server
            },
            at_us: f.last.ts,
            opcode: h.opcode,
            fin: h.fin,
            compressed: h.rsv1,
            wire_bytes: f.read,
            payload_bytes: f.read - h.header_len as u64,
        };
        self.frames.push((f.last.frame, f.offset, frame));
    }
}

/// What is wrong with a whole message of direction `dir`: bytes missing from the
/// capture, or a text message that is not JSON.
fn problem(dir: usize, m: &Message<Stamp>) -> Option<ExchangeError> {
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

fn time(ns: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_nanos(ns)
}
