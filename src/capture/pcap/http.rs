//! HTTP/1.1 on a reassembled connection: requests and responses paired (keep-alive,
//! pipelining, interim 1xx responses, 101 upgrades), with the body length of a response
//! decided from its request ([`super::framing`]).
//!
//! Pairing is in order, checked against TCP: a response cannot be sent before the server
//! received its request's last byte, and a request whose first segment acknowledges
//! response bytes was sent after they arrived. So
//! - a response the client had already received part of when it sent the oldest
//!   unanswered request answers an earlier request that was not captured: it is kept as
//!   an exchange whose request is marked not captured (so is a response with no request
//!   left to answer);
//! - after the response direction lost sync (a gap that may have swallowed whole
//!   responses), a request is passed over — marked "response lost in a capture gap" —
//!   while the next one was both fully acknowledged by the server before this response
//!   started and sent by the client after it had received bytes from inside the gap.
//!   For traffic that waits for each response this is exact; pipelined requests, sent
//!   before any response arrived, are never passed over.

use std::collections::VecDeque;
use std::net::SocketAddr;

use super::exchange::build;
use super::framing::{body_length, BodyLength, Framing, Role};
use super::message::{Head, Message, MessageParser, ParserStats, Sink, Stamp};
use crate::trace::{Exchange, SourceKind};

/// Where a connection was seen; copied into every exchange's [`crate::trace::Source`].
#[derive(Clone, Debug)]
pub struct ConnInfo {
    /// `Pcap` for files, `Live` for interfaces.
    pub kind: SourceKind,
    /// Capture file (or `iface:NAME`).
    pub file: Option<String>,
    /// Client address.
    pub client: SocketAddr,
    /// Server address.
    pub server: SocketAddr,
    /// Connection number in the order connections were first seen, from 0.
    pub connection: u64,
}

/// Counters of one connection's HTTP layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HttpStats {
    /// Responses whose request was not captured (kept as exchanges).
    pub orphan_responses: u64,
    /// Requests whose response was lost in a capture gap.
    pub lost_responses: u64,
    /// Request direction parser counters.
    pub requests: ParserStats,
    /// Response direction parser counters.
    pub responses: ParserStats,
}

/// A request (or a response without one) on its way to becoming an exchange.
pub(super) struct Entry {
    pub(super) id: u64,
    pub(super) method: String,
    /// An HTTP/0.9 simple request: its response has no head.
    simple: bool,
    /// False for a response whose request was not captured.
    pub(super) captured: bool,
    pub(super) req: Option<Message>,
    pub(super) interim: Vec<u16>,
    pub(super) resp: Option<Message>,
    /// Why no response will be paired: it was lost in a capture gap.
    pub(super) lost: Option<String>,
    /// Response-stream offset the request's first segment acknowledged.
    req_ack: Option<u64>,
    /// Request-stream offset just after the request's last byte, once complete.
    req_end: Option<u64>,
}

impl Entry {
    fn done(&self) -> bool {
        (self.req.is_some() || !self.captured) && (self.resp.is_some() || self.lost.is_some())
    }

    /// Still waiting for its response.
    fn open(&self) -> bool {
        self.captured && self.resp.is_none() && self.lost.is_none()
    }
}

/// The entry the response in progress belongs to.
#[derive(Clone, Copy)]
enum Target {
    Entry(u64),
    /// An interim response with no request: counted, not kept.
    Discard,
}

/// The HTTP state of one TCP connection.
pub struct HttpConn {
    info: ConnInfo,
    parsers: [MessageParser; 2],
    entries: VecDeque<Entry>,
    current: Option<Target>,
    orphans: u64,
    lost: u64,
    upgraded: bool,
}

struct Ctx<'a> {
    entries: &'a mut VecDeque<Entry>,
    ids: &'a mut u64,
    current: &'a mut Option<Target>,
    orphans: &'a mut u64,
    lost: &'a mut u64,
    upgraded: &'a mut bool,
    request: bool,
}

impl Ctx<'_> {
    /// The entry a response starting at stream offset `start`, sent with acknowledgment
    /// `ack` (request-stream offset), answers; `None`: its request was not captured.
    /// `lost_at`: where the response direction lost sync since the last response.
    fn pick(&mut self, start: u64, ack: Option<u64>, lost_at: Option<u64>) -> Option<usize> {
        let open: Vec<usize> = (0..self.entries.len())
            .filter(|&i| self.entries[i].open())
            .collect();
        let (&first, rest) = open.split_first()?;
        let mut pick = first;
        // The client had received part of this response before sending the request.
        if self.entries[pick].req_ack.is_some_and(|x| x > start) {
            return None;
        }
        let (Some(gap), Some(ack)) = (lost_at, ack) else {
            return Some(pick);
        };
        for &next in rest {
            let e = &self.entries[next];
            let later = e.req_end.is_some_and(|end| end <= ack) && e.req_ack.is_some_and(|x| x > gap);
            if !later {
                break;
            }
            self.entries[pick].lost = Some(format!(
                "response lost in a capture gap: the server had received the next request (up to byte {}) before the next response captured, which the client asked for after receiving bytes from the gap",
                e.req_end.unwrap_or_default()
            ));
            *self.lost += 1;
            pick = next;
        }
        Some(pick)
    }

    fn position(&self, id: u64) -> Option<usize> {
        self.entries.iter().position(|e| e.id == id)
    }
}

fn interim(status: u16) -> bool {
    (100..200).contains(&status) && status != 101
}

impl Sink for Ctx<'_> {
    fn head(&mut self, head: &Head, at: Stamp, start: u64, lost_at: Option<u64>) -> BodyLength {
        if self.request {
            self.entries.push_back(Entry {
                id: *self.ids,
                method: head.method.clone(),
                simple: head.version == "HTTP/0.9",
                captured: true,
                req: None,
                interim: Vec::new(),
                resp: None,
                lost: None,
                req_ack: at.ack,
                req_end: None,
            });
            *self.ids += 1;
            return body_length(head, Role::Request);
        }
        let method = match self.pick(start, at.ack, lost_at) {
            Some(i) => {
                *self.current = Some(Target::Entry(self.entries[i].id));
                Some(self.entries[i].method.clone())
            }
            None if interim(head.status) => {
                *self.orphans += 1;
                *self.current = Some(Target::Discard);
                None
            }
            None => {
                *self.orphans += 1;
                *self.current = Some(Target::Entry(*self.ids));
                self.entries.push_back(Entry {
                    id: *self.ids,
                    method: String::new(),
                    simple: false,
                    captured: false,
                    req: None,
                    interim: Vec::new(),
                    resp: None,
                    lost: None,
                    req_ack: None,
                    req_end: None,
                });
                *self.ids += 1;
                None
            }
        };
        let length = body_length(head, Role::Response(method.as_deref()));
        if length.framing == Ok(Framing::Tunnel) {
            *self.upgraded = true;
        }
        length
    }

    fn simple_response(&mut self) -> bool {
        !self.request && self.entries.iter().find(|e| e.open()).is_some_and(|e| e.simple)
    }

    fn done(&mut self, msg: Message) {
        if self.request {
            let e = self.entries.iter_mut().rev().find(|e| e.captured && e.req.is_none());
            if let Some(e) = e {
                e.req_end = Some(msg.end);
                e.req = Some(msg);
            }
            return;
        }
        let i = match self.current.take() {
            Some(Target::Entry(id)) => self.position(id),
            Some(Target::Discard) => return,
            // A head-less HTTP/0.9 response: the oldest open request.
            None => self.entries.iter().position(Entry::open),
        };
        match i {
            Some(i) if interim(msg.head.status) => self.entries[i].interim.push(msg.head.status),
            Some(i) => self.entries[i].resp = Some(msg),
            None => *self.orphans += 1,
        }
    }
}

impl HttpConn {
    /// A connection with nothing parsed yet.
    pub fn new(info: ConnInfo) -> Self {
        HttpConn {
            info,
            parsers: [MessageParser::new(true), MessageParser::new(false)],
            entries: VecDeque::new(),
            current: None,
            orphans: 0,
            lost: 0,
            upgraded: false,
        }
    }

    /// Where the connection was seen.
    pub fn info(&self) -> &ConnInfo {
        &self.info
    }

    /// Counters so far.
    pub fn stats(&self) -> HttpStats {
        HttpStats {
            orphan_responses: self.orphans,
            lost_responses: self.lost,
            requests: self.parsers[0].stats,
            responses: self.parsers[1].stats,
        }
    }

    /// Id of the oldest request not yet emitted as an exchange.
    pub fn oldest_open(&self) -> Option<u64> {
        self.entries.front().map(|e| e.id)
    }

    /// True once any message head was parsed on this connection.
    pub fn saw_http(&self) -> bool {
        let (a, b) = (&self.parsers[0].stats, &self.parsers[1].stats);
        a.heads + b.heads + a.cut_heads + b.cut_heads > 0
    }

    fn with_ctx(
        &mut self,
        dir: usize,
        ids: &mut u64,
        f: impl FnOnce(&mut MessageParser, &mut Ctx<'_>),
    ) {
        let mut ctx = Ctx {
            entries: &mut self.entries,
            ids,
            current: &mut self.current,
            orphans: &mut self.orphans,
            lost: &mut self.lost,
            upgraded: &mut self.upgraded,
            request: dir == 0,
        };
        f(&mut self.parsers[dir], &mut ctx);
        if self.upgraded && !self.parsers[0].in_tunnel() {
            self.parsers[0].tunnel();
            self.parsers[1].tunnel();
        }
    }

    /// Bytes of direction `dir` (0 = client to server, 1 = server to client) starting at
    /// stream offset `off`. Finished exchanges go to `out`; `ids` numbers exchanges as
    /// their first head arrives.
    pub fn data(
        &mut self,
        dir: usize,
        data: &[u8],
        off: u64,
        at: Stamp,
        ids: &mut u64,
        out: &mut Vec<Exchange>,
    ) {
        self.with_ctx(dir, ids, |p, c| p.feed(data, off, at, c));
        self.emit(out, false, "");
    }

    /// `len` bytes of direction `dir` from stream offset `off` were not captured.
    pub fn gap(
        &mut self,
        dir: usize,
        len: u64,
        off: u64,
        at: Stamp,
        ids: &mut u64,
        out: &mut Vec<Exchange>,
    ) {
        self.with_ctx(dir, ids, |p, c| p.gap(len, off, at, c));
        self.emit(out, false, "");
    }

    /// Direction `dir` ended (FIN).
    pub fn end(&mut self, dir: usize, ids: &mut u64, out: &mut Vec<Exchange>) {
        let why = if dir == 0 {
            "client closed the connection mid-request"
        } else {
            "server closed the connection mid-response"
        };
        self.with_ctx(dir, ids, |p, c| p.close(why, c));
        self.emit(out, false, "");
    }

    /// The connection is over (`why`: reset, end of capture, idle): finish everything.
    pub fn close(&mut self, why: &str, ids: &mut u64, out: &mut Vec<Exchange>) {
        for dir in 0..2 {
            let text = format!(
                "{why} mid-{}",
                if dir == 0 { "request" } else { "response" }
            );
            self.with_ctx(dir, ids, |p, c| p.close(&text, c));
        }
        self.emit(out, true, why);
    }

    fn emit(&mut self, out: &mut Vec<Exchange>, all: bool, why: &str) {
        while let Some(pos) = self.entries.iter().position(|e| all || e.done()) {
            let e = self.entries.remove(pos).expect("position is in range");
            if let Some(x) = build(&self.info, e, why) {
                out.push(x);
            }
        }
    }
}
