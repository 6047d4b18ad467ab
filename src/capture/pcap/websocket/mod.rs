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

mod record;

use super::exchange::ConnInfo;
use super::message::{Head, Stamp};
use super::NO_TIME;
use crate::http::websocket::{deflate_accepted, Cut, FrameError, Message, Reader};
use crate::trace::websocket::Close;
use crate::trace::{Exchange, ExchangeError};
use record::{close_of, err, problem, who, Open, Upgrade};

/// True when `resp` switches the connection of `req` to WebSocket: a `101` whose request
/// and response both say `Upgrade: websocket` (ASCII case-insensitive).
pub(super) fn is_upgrade(req: &Head, resp: &Head) -> bool {
    let websocket = |h: &Head| h.headers.list("upgrade").iter().any(|u| u == "websocket");
    resp.status == 101 && websocket(req) && websocket(resp)
}

/// The WebSocket side of one connection.
pub(super) struct WsConn {
    upgrade: Upgrade,
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

impl WsConn {
    /// The WebSocket side of the connection `info` upgraded by exchange `upgrade` with
    /// `req` answered by `resp`.
    pub(super) fn new(info: &ConnInfo, upgrade: u64, req: &Head, resp: &Head) -> Self {
        let upgrade = Upgrade::new(info, upgrade, req, resp);
        let deflate = deflate_accepted(&upgrade.extensions);
        let dir = |reset: Option<bool>| Dir {
            deflate: reset,
            reader: None,
            dead: None,
        };
        WsConn {
            upgrade,
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
        let first = m.frames.first().map_or(self.last, |f| f.first);
        if dir == 0 && matches!(m.opcode, 1 | 2) {
            self.begin(first, ids);
        }
        let truncated = cut.is_some() || m.missing > 0;
        let problem = (cut.map(|c| err("websocket_error", c))).or_else(|| problem(dir, &m));
        let close = (m.opcode == 8 && !self.close_seen).then(|| close_of(dir, &m));
        self.close_seen |= close.is_some();
        let o = self.exchange(first, ids);
        if close.is_some() {
            o.closed = close;
        }
        if let Some(p) = problem {
            o.error.get_or_insert(p);
        }
        o.add(dir, m, truncated);
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
        self.open = Some(Open::new(*ids, self.next_seq, at, error));
        *ids += 1;
        self.next_seq += 1;
    }

    /// The open exchange, if any, is finished.
    fn finish(&mut self) {
        if let Some(o) = self.open.take() {
            self.done.push(o.build(&self.upgrade));
        }
    }
}
