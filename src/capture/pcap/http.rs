//! HTTP/1.1 on a reassembled connection: requests and responses paired (keep-alive,
//! pipelining, interim 1xx responses, 101 upgrades), with the body length of a response
//! decided from its request ([`crate::http::framing`]).
//!
//! Pairing is in order, checked against TCP: a response cannot be sent before the server
//! received its request's last byte, and a request whose first segment acknowledges
//! response bytes was sent after they arrived. So
//! - a response the client had already received part of when it sent the oldest
//!   unanswered request, or sent before the server had received any byte of that
//!   request, answers an earlier request that was not captured: it is kept as an
//!   exchange whose request is marked not captured (so is a response with no request
//!   left to answer);
//! - after the response direction lost sync (a gap that may have swallowed whole
//!   responses), on a connection that waits for each response before sending the next
//!   request, the response answers the request that ends where the server's
//!   acknowledgment in the response's first segment points (every request byte before
//!   it was received, and the client sends nothing more until the response ends). Older
//!   requests still waiting are marked "response lost in a capture gap"; when the bytes
//!   before that point are a gap of the request direction, the request was not captured.
//!   This is exact for such traffic. A connection seen pipelining (a request sent before
//!   the previous response had arrived whole) is paired in order instead.

use std::collections::VecDeque;

pub use super::exchange::ConnInfo;
use super::exchange::{build, Entry};
use super::message::{Head, Message, MessageParser, ParserStats, Sink, Stamp};
use super::websocket::{is_upgrade, WsConn};
use crate::http::framing::{body_length, BodyLength, Framing, Role};
use crate::trace::Exchange;

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

/// The HTTP state of one TCP connection.
pub struct HttpConn {
    info: ConnInfo,
    parsers: [MessageParser; 2],
    entries: VecDeque<Entry>,
    order: Order,
    orphans: u64,
    lost: u64,
    upgraded: bool,
    /// The connection's WebSocket side, after a `101` to `Upgrade: websocket`.
    ws: Option<Box<WsConn>>,
}

/// Most request-direction gaps remembered for pairing.
const MAX_GAPS: usize = 64;
/// Most responses waiting for the request direction to catch up.
const MAX_WAITING: usize = 64;

/// What pairing knows of the connection's order.
#[derive(Default)]
struct Order {
    /// Complete responses not paired yet: they acknowledge request bytes the request
    /// direction has not delivered (capture order), in order.
    waiting: VecDeque<Message>,
    /// Request-stream ranges `[start, end)` that were not captured, latest last.
    req_gaps: VecDeque<(u64, u64)>,
    /// Response-stream offset where the latest complete response ended.
    last_resp_end: Option<u64>,
    /// A request was seen sent before the previous response had arrived whole.
    pipelined: bool,
}

struct Ctx<'a> {
    entries: &'a mut VecDeque<Entry>,
    ids: &'a mut u64,
    order: &'a mut Order,
    orphans: &'a mut u64,
    lost: &'a mut u64,
    upgraded: &'a mut bool,
    ws: &'a mut Option<Box<WsConn>>,
    info: &'a ConnInfo,
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
        let &first = open.first()?;
        let e = &self.entries[first];
        // The client had received part of this response before sending the request, or
        // the server had received none of the request when it sent the response.
        if e.req_ack.is_some_and(|x| x > start) || ack.is_some_and(|a| a <= e.req_start) {
            return None;
        }
        let (Some(_), Some(ack), false) = (lost_at, ack, self.order.pipelined) else {
            return Some(first);
        };
        // The request that ends at or before the acknowledged point: the latest such.
        let done_before = |i: &usize| self.entries[*i].req_end.is_some_and(|e| e <= ack);
        let Some(q) = open.iter().rposition(done_before) else {
            return Some(first);
        };
        let (q_end, q_cut) = (
            self.entries[open[q]].req_end.unwrap_or(0),
            self.entries[open[q]].req_cut,
        );
        // Request bytes after it and before that point were not captured: a request.
        let uncaptured = !q_cut
            && self
                .order
                .req_gaps
                .iter()
                .any(|&(s, _)| s >= q_end && s < ack);
        let skipped = if uncaptured { &open[..=q] } else { &open[..q] };
        for &i in skipped {
            self.entries[i].lost = Some(format!(
                "response lost in a capture gap: the next response captured answers a later request (the server had received {ack} request bytes)"
            ));
            *self.lost += 1;
        }
        (!uncaptured).then_some(open[q])
    }
}

fn interim(status: u16) -> bool {
    (100..200).contains(&status) && status != 101
}

impl Ctx<'_> {
    /// Pair the waiting responses whose acknowledged request bytes have been read
    /// (`req_seen`: request-stream offset read so far; `force`: all of them).
    fn settle(&mut self, req_seen: u64, force: bool) {
        while let Some(front) = self.order.waiting.front() {
            let ready = force
                || self.order.waiting.len() > MAX_WAITING
                || front.first.ack.is_none_or(|a| a <= req_seen);
            if !ready {
                return;
            }
            let msg = self.order.waiting.pop_front().expect("front exists");
            self.assign(msg);
        }
    }

    /// Pair a complete response with its request, or keep it as a response whose request
    /// was not captured.
    fn assign(&mut self, msg: Message) {
        let status = msg.head.status;
        let end = msg.end;
        match self.pick(msg.start, msg.first.ack, msg.lost_before) {
            Some(i) if interim(status) => self.entries[i].interim.push(status),
            Some(i) => {
                self.entries[i].resp = Some(msg);
                // The next request was sent before this response had arrived whole.
                let next = self.entries.iter().skip(i + 1).find(|e| e.captured);
                if next.and_then(|e| e.req_ack).is_some_and(|x| x < end) {
                    self.order.pipelined = true;
                }
                self.order.last_resp_end = Some(end);
            }
            // An interim response with no request: counted, not kept.
            None if interim(status) => *self.orphans += 1,
            None => {
                *self.orphans += 1;
                self.entries.push_back(Entry {
                    id: *self.ids,
                    method: String::new(),
                    simple: false,
                    captured: false,
                    req: None,
                    interim: Vec::new(),
                    resp: Some(msg),
                    lost: None,
                    req_ack: None,
                    req_start: 0,
                    req_cut: false,
                    req_end: None,
                    websocket: false,
                });
                *self.ids += 1;
                self.order.last_resp_end = Some(end);
            }
        }
    }
}

impl Sink for Ctx<'_> {
    fn head(&mut self, head: &Head, at: Stamp, start: u64) -> BodyLength {
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
                req_start: start,
                req_cut: false,
                req_end: None,
                websocket: false,
            });
            *self.ids += 1;
            if at
                .ack
                .zip(self.order.last_resp_end)
                .is_some_and(|(x, e)| x < e)
            {
                self.order.pipelined = true;
            }
            return body_length(head, Role::Request);
        }
        // The framing depends on the request's method (HEAD, CONNECT); pairing waits for
        // the whole response, this is the request it will most likely answer.
        let waiting = self.order.waiting.len();
        let method = self
            .entries
            .iter()
            .filter(|e| e.open())
            .nth(waiting)
            .filter(|e| at.ack.is_none_or(|a| a > e.req_start))
            .map(|e| e.method.as_str());
        let length = body_length(head, Role::Response(method));
        if length.framing == Ok(Framing::Tunnel) {
            *self.upgraded = true;
            // A WebSocket when both heads say so; any other switch stays a tunnel.
            let e = self.entries.iter_mut().filter(|e| e.open()).nth(waiting);
            if let Some(e) = e.filter(|e| at.ack.is_none_or(|a| a > e.req_start)) {
                let req = e.req.as_ref().map(|m| &m.head);
                if let Some(req) = req.filter(|r| self.ws.is_none() && is_upgrade(r, head)) {
                    e.websocket = true;
                    *self.ws = Some(Box::new(WsConn::new(self.info, e.id, req, head)));
                }
            }
        }
        length
    }

    fn tunnel(&mut self, data: &[u8], off: u64, at: Stamp) -> u64 {
        let dir = usize::from(!self.request);
        match self.ws.as_mut() {
            Some(ws) => ws.data(dir, data, off, at, self.ids),
            None => data.len() as u64,
        }
    }

    fn tunnel_gap(&mut self, len: u64, off: u64, at: Stamp) -> u64 {
        let dir = usize::from(!self.request);
        match self.ws.as_mut() {
            Some(ws) => ws.gap(dir, len, off, at, self.ids),
            None => len,
        }
    }

    fn simple_response(&mut self) -> bool {
        !self.request
            && self
                .entries
                .iter()
                .find(|e| e.open())
                .is_some_and(|e| e.simple)
    }

    fn done(&mut self, msg: Message) {
        if self.request {
            let e = self
                .entries
                .iter_mut()
                .rev()
                .find(|e| e.captured && e.req.is_none());
            if let Some(e) = e {
                e.req_end = Some(msg.end);
                e.req_cut = msg.cut.is_some();
                e.req = Some(msg);
            }
            return;
        }
        self.order.waiting.push_back(msg);
    }
}

impl HttpConn {
    /// A connection with nothing parsed yet.
    pub fn new(info: ConnInfo) -> Self {
        HttpConn {
            info,
            parsers: [MessageParser::new(true), MessageParser::new(false)],
            entries: VecDeque::new(),
            order: Order::default(),
            orphans: 0,
            lost: 0,
            upgraded: false,
            ws: None,
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
        let ws = self.ws.as_ref().and_then(|w| w.oldest_open());
        let http = self.entries.front().map(|e| e.id);
        http.into_iter().chain(ws).min()
    }

    /// True once any message head was parsed on this connection (or a response kept
    /// without its head).
    pub fn saw_http(&self) -> bool {
        let (a, b) = (&self.parsers[0].stats, &self.parsers[1].stats);
        a.heads + b.heads + a.cut_heads + b.cut_heads + b.headless > 0
    }

    /// Run `f` on the parser of direction `dir` with the pairing state, then pair the
    /// responses that can be (`force`: all of them: no more request bytes will come).
    fn with_ctx(
        &mut self,
        dir: usize,
        ids: &mut u64,
        force: bool,
        f: impl FnOnce(&mut MessageParser, &mut Ctx<'_>),
    ) {
        let mut ctx = Ctx {
            entries: &mut self.entries,
            ids,
            order: &mut self.order,
            orphans: &mut self.orphans,
            lost: &mut self.lost,
            upgraded: &mut self.upgraded,
            ws: &mut self.ws,
            info: &self.info,
            request: dir == 0,
        };
        f(&mut self.parsers[dir], &mut ctx);
        let req_seen = self.parsers[0].seen();
        ctx.settle(req_seen, force);
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
        self.with_ctx(dir, ids, false, |p, c| p.feed(data, off, at, c));
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
        if dir == 0 {
            let gaps = &mut self.order.req_gaps;
            if gaps.len() == MAX_GAPS {
                gaps.pop_front();
            }
            gaps.push_back((off, off + len));
        }
        self.with_ctx(dir, ids, false, |p, c| p.gap(len, off, at, c));
        self.emit(out, false, "");
    }

    /// Direction `dir` ended (FIN).
    pub fn end(&mut self, dir: usize, ids: &mut u64, out: &mut Vec<Exchange>) {
        let why = if dir == 0 {
            "client closed the connection mid-request"
        } else {
            "server closed the connection mid-response"
        };
        self.with_ctx(dir, ids, dir == 0, |p, c| p.close(why, c));
        if let Some(ws) = self.ws.as_mut() {
            ws.end(dir, ids);
        }
        self.emit(out, false, "");
    }

    /// The connection is over (`why`: reset, end of capture, idle): finish everything.
    pub fn close(&mut self, why: &str, ids: &mut u64, out: &mut Vec<Exchange>) {
        for dir in 0..2 {
            let text = format!(
                "{why} mid-{}",
                if dir == 0 { "request" } else { "response" }
            );
            self.with_ctx(dir, ids, true, |p, c| p.close(&text, c));
        }
        if let Some(ws) = self.ws.as_mut() {
            ws.close(why, ids);
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
        if let Some(ws) = self.ws.as_mut() {
            out.extend(ws.take_done());
        }
    }
}
