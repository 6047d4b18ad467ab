//! HTTP/1.1 on a reassembled connection: requests and responses paired in order
//! (keep-alive, pipelining, interim 1xx responses, 101 upgrades), response framing from
//! the request (HEAD, 204, 304, CONNECT; RFC 9112 §6.3), and the finished [`Exchange`]
//! records: times from the packets, bodies de-chunked and content-decoded with their wire
//! size kept, secrets redacted, gaps and early ends reported in [`Exchange::error`].

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;

use chrono::{DateTime, Utc};

use super::message::{Framing, Head, Message, MessageParser, ParserStats, Sink, Stamp};
use crate::trace::redact::redact_headers;
use crate::trace::{Body, Exchange, ExchangeError, HttpRequest, HttpResponse, Source, SourceKind};

/// Where a connection was seen; copied into every exchange's [`Source`].
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
    /// Responses that arrived with no request to pair with (request not captured).
    pub orphan_responses: u64,
    /// Request direction parser counters.
    pub requests: ParserStats,
    /// Response direction parser counters.
    pub responses: ParserStats,
}

struct Entry {
    id: u64,
    method: String,
    /// An HTTP/0.9 simple request: its response has no head.
    simple: bool,
    req: Option<Message>,
    interim: Vec<u16>,
    resp: Option<Message>,
}

impl Entry {
    fn done(&self) -> bool {
        self.req.is_some() && self.resp.is_some()
    }
}

/// The HTTP state of one TCP connection.
pub struct HttpConn {
    info: ConnInfo,
    parsers: [MessageParser; 2],
    entries: VecDeque<Entry>,
    orphans: u64,
    upgraded: bool,
}

struct Ctx<'a> {
    entries: &'a mut VecDeque<Entry>,
    ids: &'a mut u64,
    orphans: &'a mut u64,
    upgraded: &'a mut bool,
    request: bool,
}

impl Sink for Ctx<'_> {
    fn head(&mut self, head: &Head, _at: Stamp) -> Framing {
        if self.request {
            self.entries.push_back(Entry {
                id: *self.ids,
                method: head.method.clone(),
                simple: head.version == "HTTP/0.9",
                req: None,
                interim: Vec::new(),
                resp: None,
            });
            *self.ids += 1;
            return request_framing(head);
        }
        let method = self
            .entries
            .iter()
            .find(|e| e.resp.is_none())
            .map_or("", |e| e.method.as_str());
        let f = response_framing(head, method);
        if f == Framing::Tunnel {
            *self.upgraded = true;
        }
        f
    }

    fn simple_response(&mut self) -> bool {
        !self.request
            && self
                .entries
                .iter()
                .find(|e| e.resp.is_none())
                .is_some_and(|e| e.simple)
    }

    fn done(&mut self, msg: Message) {
        if self.request {
            if let Some(e) = self.entries.iter_mut().rev().find(|e| e.req.is_none()) {
                e.req = Some(msg);
            }
            return;
        }
        let status = msg.head.status;
        match self.entries.iter_mut().find(|e| e.resp.is_none()) {
            Some(e) if (100..200).contains(&status) && status != 101 => e.interim.push(status),
            Some(e) => e.resp = Some(msg),
            None => *self.orphans += 1,
        }
    }
}

/// Body framing of a request (RFC 9112 §6.3 rules 4–6, 8).
fn request_framing(head: &Head) -> Framing {
    if let Some(te) = head.header("transfer-encoding") {
        return if last_coding_is_chunked(te) {
            Framing::Chunked
        } else {
            Framing::Empty
        };
    }
    match head
        .header("content-length")
        .map(|v| v.trim().parse::<u64>())
    {
        Some(Ok(n)) => Framing::Length(n),
        _ => Framing::Empty,
    }
}

/// Body framing of a response to a request with `method` (RFC 9112 §6.3 rules 1–7).
fn response_framing(head: &Head, method: &str) -> Framing {
    let s = head.status;
    if s == 101 || (method.eq_ignore_ascii_case("CONNECT") && (200..300).contains(&s)) {
        return Framing::Tunnel;
    }
    if method.eq_ignore_ascii_case("HEAD") || (100..200).contains(&s) || s == 204 || s == 304 {
        return Framing::Empty;
    }
    if let Some(te) = head.header("transfer-encoding") {
        return if last_coding_is_chunked(te) {
            Framing::Chunked
        } else {
            Framing::UntilClose
        };
    }
    match head
        .header("content-length")
        .map(|v| v.trim().parse::<u64>())
    {
        Some(Ok(n)) => Framing::Length(n),
        _ => Framing::UntilClose,
    }
}

fn last_coding_is_chunked(te: &str) -> bool {
    te.rsplit(',')
        .next()
        .is_some_and(|c| c.trim().eq_ignore_ascii_case("chunked"))
}

impl HttpConn {
    /// A connection with nothing parsed yet.
    pub fn new(info: ConnInfo) -> Self {
        HttpConn {
            info,
            parsers: [MessageParser::new(true), MessageParser::new(false)],
            entries: VecDeque::new(),
            orphans: 0,
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
            orphans: &mut self.orphans,
            upgraded: &mut self.upgraded,
            request: dir == 0,
        };
        f(&mut self.parsers[dir], &mut ctx);
        if self.upgraded && !self.parsers[0].in_tunnel() {
            self.parsers[0].tunnel();
            self.parsers[1].tunnel();
        }
    }

    /// Bytes of direction `dir` (0 = client to server, 1 = server to client).
    /// Finished exchanges go to `out`; `ids` numbers requests as their heads arrive.
    pub fn data(
        &mut self,
        dir: usize,
        data: &[u8],
        at: Stamp,
        ids: &mut u64,
        out: &mut Vec<Exchange>,
    ) {
        self.with_ctx(dir, ids, |p, c| p.feed(data, at, c));
        self.emit(out, false, "");
    }

    /// `len` bytes of direction `dir` were not captured.
    pub fn gap(&mut self, dir: usize, len: u64, at: Stamp, ids: &mut u64, out: &mut Vec<Exchange>) {
        self.with_ctx(dir, ids, |p, c| p.gap(len, at, c));
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

fn time(ns: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_nanos(ns)
}

/// Body from a message (its bytes are moved out): de-chunked, content codings kept as
/// on the wire (readers decode through [`crate::api::decode`]).
fn body_of(msg: &mut Message, notes: &mut BTreeMap<String, serde_json::Value>, side: &str) -> Body {
    let truncated = msg.gap_bytes > 0 || msg.cut.is_some();
    let body = Body::new(std::mem::take(&mut msg.body)).with_truncated(truncated);
    if !msg.trailers.is_empty() {
        let t: Vec<_> = msg
            .trailers
            .iter()
            .map(|(k, v)| vec![k.clone(), v.clone()])
            .collect();
        notes.insert(format!("{side}_trailers"), serde_json::json!(t));
    }
    body
}

fn build(info: &ConnInfo, e: Entry, why: &str) -> Option<Exchange> {
    let mut req = e.req?;
    let mut resp_msg = e.resp;
    let mut notes = BTreeMap::new();
    let mut headers = req.head.headers.clone();
    redact_headers(&mut headers);
    let request = HttpRequest {
        method: req.head.method.clone(),
        target: req.head.target.clone(),
        version: req.head.version.clone(),
        headers,
        body: body_of(&mut req, &mut notes, "request"),
    };
    let started = req.first.ts;
    let mut error = None;
    let mut gaps = (req.gap_bytes, 0);
    let mut last = req.last;
    let response = resp_msg.as_mut().map(|resp| {
        gaps.1 = resp.gap_bytes;
        last = resp.last;
        let mut headers = resp.head.headers.clone();
        redact_headers(&mut headers);
        let chunks = resp
            .pieces
            .iter()
            .map(|(ts, n)| (((ts - started).max(0) / 1000) as u64, *n))
            .collect();
        HttpResponse {
            status: resp.head.status,
            version: resp.head.version.clone(),
            headers,
            body: body_of(resp, &mut notes, "response"),
            chunks,
            first_byte_at: Some(time(resp.first.ts.max(started))),
        }
    });
    if !e.interim.is_empty() {
        notes.insert("interim_statuses".into(), serde_json::json!(e.interim));
    }
    let mut ended = response.as_ref().map(|_| last.ts);
    if let Some(end) = ended {
        if end < started {
            notes.insert(
                "capture_order_anomaly".into(),
                format!(
                    "response ended {} us before the request started; latency set to 0",
                    (started - end) / 1000
                )
                .into(),
            );
            ended = Some(started);
        }
    }
    if gaps != (0, 0) {
        let mut message = format!(
            "bytes missing from the capture: {} in the request, {} in the response",
            gaps.0, gaps.1
        );
        let cuts = [
            req.cut.as_ref(),
            resp_msg.as_ref().and_then(|r| r.cut.as_ref()),
        ];
        for c in cuts.into_iter().flatten() {
            message.push_str("; ");
            message.push_str(c);
        }
        error = Some(ExchangeError {
            kind: "capture_gap".into(),
            message,
        });
    } else if let Some(cut) = &req.cut {
        let kind = if req.malformed {
            "malformed_request"
        } else {
            "incomplete_request"
        };
        error = Some(err(kind, cut));
    } else if response.is_none() {
        let why = if why.is_empty() {
            "connection ended"
        } else {
            why
        };
        error = Some(err("no_response", &format!("no response seen ({why})")));
    } else if let Some(r) = resp_msg.as_ref().filter(|r| r.cut.is_some()) {
        let kind = if r.malformed {
            "malformed_response"
        } else {
            "incomplete_response"
        };
        error = Some(err(kind, r.cut.as_deref().unwrap_or_default()));
    }
    if error.is_none() {
        error = stream_error(response.as_ref());
    }
    let frames = (
        req.first.frame.min(last.frame),
        req.first.frame.max(last.frame),
    );
    let mut source = Source::new(info.kind);
    source.file = info.file.clone();
    source.frames = Some(frames);
    source.client = Some(info.client.to_string());
    source.server = Some(info.server.to_string());
    source.connection = Some(info.connection);
    Some(Exchange {
        id: e.id,
        started_at: time(started),
        ended_at: ended.map(time),
        source,
        request,
        response,
        error,
        notes,
    })
}

fn err(kind: &str, message: &str) -> ExchangeError {
    ExchangeError {
        kind: kind.into(),
        message: message.into(),
    }
}

/// An SSE `error` event in a complete event-stream response marks the exchange failed
/// (the partial content stays in the body). The body is read through the one decoder and
/// the one SSE parser.
fn stream_error(resp: Option<&HttpResponse>) -> Option<ExchangeError> {
    let resp = resp?;
    let ct = resp
        .headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))?;
    if !ct.1.trim_start().starts_with("text/event-stream") {
        return None;
    }
    let body = crate::api::decode::response_body(resp);
    let first = crate::api::sse::first_error(&body.bytes)?;
    let kind = first
        .get("type")
        .and_then(|v| v.as_str())
        .unwrap_or("error");
    let text = first.get("message").and_then(|v| v.as_str()).unwrap_or("");
    Some(err(
        "stream_error",
        &format!("error event in the stream: {kind}: {text}"),
    ))
}
