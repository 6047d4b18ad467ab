//! One direction of an HTTP/1.1 connection: message heads (`httparse`), body framing
//! (RFC 9112 §6: Content-Length, chunked with extensions and trailers, close-delimited),
//! gaps, and resynchronisation at the next request line or status line after a gap or
//! unparseable bytes.

pub use super::head::Head;
use super::head::{chunk_size, find_start, headers, memchr, partial_head, simple_request};
use crate::trace::Headers;

/// Largest message head accepted, bytes; a longer one is treated as not HTTP.
const MAX_HEAD: usize = 256 << 10;
/// Most body bytes reserved up front from a Content-Length.
const PREALLOC: u64 = 16 << 20;
/// Largest chunk-size or trailer line, bytes.
const MAX_LINE: usize = 8 << 10;

/// How a message's body is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// No body.
    Empty,
    /// Exactly this many bytes.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Until the connection closes.
    UntilClose,
    /// Not HTTP after this head (101 Switching Protocols, CONNECT): bytes are counted only.
    Tunnel,
}

/// Capture time (ns) and frame number of a byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stamp {
    /// Nanoseconds since the Unix epoch.
    pub ts: i64,
    /// Frame number.
    pub frame: u64,
}

/// A message, complete or cut short.
#[derive(Clone, Debug, Default)]
pub struct Message {
    /// The head.
    pub head: Head,
    /// Body bytes after de-chunking (content encodings not yet removed).
    pub body: Vec<u8>,
    /// Body bytes lost in capture gaps.
    pub gap_bytes: u64,
    /// Why the message ended before its framing said it would, if it did.
    pub cut: Option<String>,
    /// Time of the first byte of the head.
    pub first: Stamp,
    /// Time of the last byte seen.
    pub last: Stamp,
    /// Arrival of body bytes: `(ts_ns, bytes)`, merged per timestamp.
    pub pieces: Vec<(i64, u64)>,
    /// Trailer fields of a chunked body.
    pub trailers: Headers,
    /// Body framing used.
    pub framing: Option<Framing>,
    /// The head was invalid (see `cut` for why); only its start line is kept.
    pub malformed: bool,
}

/// Receives what a [`MessageParser`] recognises.
pub trait Sink {
    /// A head was parsed; return the body framing (responses depend on the request).
    fn head(&mut self, head: &Head, at: Stamp) -> Framing;
    /// A message ended (normally, or cut short: see [`Message::cut`]).
    fn done(&mut self, msg: Message);
    /// True when the next response answers an HTTP/0.9 simple request: it has no head
    /// and runs until the connection closes (RFC 1945 §6).
    fn simple_response(&mut self) -> bool {
        false
    }
}

enum HeadParse {
    Parsed(usize),
    Partial,
    Bad,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Head,
    Length(u64),
    ChunkSize,
    ChunkData(u64),
    ChunkEnd,
    Trailers,
    UntilClose,
    Tunnel,
    Resync,
}

/// Counters of one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParserStats {
    /// Message heads parsed.
    pub heads: u64,
    /// Bytes skipped while looking for a message start (after a gap or unparseable data).
    pub skipped: u64,
    /// Bytes passed through a tunnel (after 101 or CONNECT).
    pub tunneled: u64,
    /// Times the parser lost sync (bad head, bad chunk, gap outside a sized body).
    pub resyncs: u64,
    /// Heads cut off by a capture gap or invalid (reported as cut messages).
    pub cut_heads: u64,
}

/// Incremental parser for the messages of one direction.
pub struct MessageParser {
    request: bool,
    state: State,
    buf: Vec<u8>,
    msg: Option<Message>,
    /// When the head being accumulated in `buf` started.
    head_start: Option<Stamp>,
    /// Counters.
    pub stats: ParserStats,
}

impl MessageParser {
    /// A parser for requests (`request = true`, the client's direction) or responses.
    pub fn new(request: bool) -> Self {
        MessageParser {
            request,
            state: State::Head,
            buf: Vec::new(),
            msg: None,
            head_start: None,
            stats: ParserStats::default(),
        }
    }

    /// Treat everything from now on as a tunnel (the other side switched protocols).
    pub fn tunnel(&mut self) {
        self.state = State::Tunnel;
        self.stats.tunneled += self.buf.len() as u64;
        self.buf.clear();
    }

    /// True when passing bytes through a tunnel.
    pub fn in_tunnel(&self) -> bool {
        self.state == State::Tunnel
    }

    /// Feed contiguous stream bytes that arrived at `at`.
    pub fn feed(&mut self, data: &[u8], at: Stamp, sink: &mut dyn Sink) {
        let mut again = self.feed_once(data, at, sink);
        // Bytes to parse again after a resync; each round consumes at least one byte.
        while let Some(bytes) = again {
            again = self.feed_once(&bytes, at, sink);
        }
    }

    fn feed_once(&mut self, mut data: &[u8], at: Stamp, sink: &mut dyn Sink) -> Option<Vec<u8>> {
        while !data.is_empty() {
            match self.state {
                State::Head => {
                    if self.buf.is_empty() {
                        // Tolerate empty lines between messages (RFC 9112 §2.2).
                        let blank = data.iter().take_while(|b| **b == b'\r' || **b == b'\n');
                        let n = blank.count();
                        data = &data[n..];
                        if data.is_empty() {
                            return None;
                        }
                        if !self.request && sink.simple_response() {
                            self.start_simple_response(at);
                            continue;
                        }
                    }
                    let had = self.buf.len();
                    if had == 0 {
                        self.head_start = Some(at);
                    }
                    self.buf.extend_from_slice(data);
                    match self.parse_head(at, sink) {
                        HeadParse::Parsed(used) => {
                            // Bytes of `data` beyond the head continue the loop.
                            let consumed_from_data = used - had;
                            self.buf.clear();
                            data = &data[consumed_from_data..];
                        }
                        HeadParse::Partial => return None,
                        HeadParse::Bad => {
                            self.report_malformed(at, sink);
                            return Some(self.bad_head());
                        }
                    }
                }
                State::Length(rem) => {
                    let n = (rem as usize).min(data.len());
                    self.body(&data[..n], at);
                    data = &data[n..];
                    if rem == n as u64 {
                        self.finish(None, sink);
                    } else {
                        self.state = State::Length(rem - n as u64);
                    }
                }
                State::ChunkSize | State::Trailers => {
                    let Some(nl) = memchr(b'\n', data) else {
                        self.buf.extend_from_slice(data);
                        if self.buf.len() > MAX_LINE {
                            self.lose_sync("chunk-size or trailer line too long", sink);
                        }
                        return None;
                    };
                    // Common case: the whole line is in `data`, no copy.
                    let owned;
                    let line: &[u8] = if self.buf.is_empty() {
                        &data[..nl]
                    } else {
                        self.buf.extend_from_slice(&data[..nl]);
                        owned = std::mem::take(&mut self.buf);
                        &owned
                    };
                    data = &data[nl + 1..];
                    let line = line.strip_suffix(b"\r").unwrap_or(line);
                    if let Some(m) = self.msg.as_mut() {
                        m.last = at;
                    }
                    if self.state == State::ChunkSize {
                        match chunk_size(line) {
                            Some(0) => self.state = State::Trailers,
                            Some(n) => self.state = State::ChunkData(n),
                            None => self.lose_sync("invalid chunk size line", sink),
                        }
                    } else if line.is_empty() {
                        self.finish(None, sink);
                    } else if let Some(m) = self.msg.as_mut() {
                        let s = String::from_utf8_lossy(line);
                        if let Some((k, v)) = s.split_once(':') {
                            m.trailers
                                .push((k.trim().to_string(), v.trim().to_string()));
                        }
                    }
                }
                State::ChunkData(rem) => {
                    let n = (rem as usize).min(data.len());
                    self.body(&data[..n], at);
                    data = &data[n..];
                    self.state = if rem == n as u64 {
                        State::ChunkEnd
                    } else {
                        State::ChunkData(rem - n as u64)
                    };
                }
                State::ChunkEnd => {
                    // CRLF after chunk data (a bare LF is tolerated).
                    match data[0] {
                        b'\r' => data = &data[1..],
                        b'\n' => {
                            data = &data[1..];
                            self.state = State::ChunkSize;
                        }
                        _ => self.lose_sync("missing CRLF after chunk data", sink),
                    }
                }
                State::UntilClose => {
                    self.body(data, at);
                    return None;
                }
                State::Tunnel => {
                    self.stats.tunneled += data.len() as u64;
                    return None;
                }
                State::Resync => {
                    self.buf.extend_from_slice(data);
                    data = &[];
                    match find_start(&self.buf, self.request) {
                        Some(pos) => {
                            self.stats.skipped += pos as u64;
                            let rest = self.buf.split_off(pos);
                            self.buf.clear();
                            self.state = State::Head;
                            return Some(rest);
                        }
                        None => {
                            // Keep a tail that may hold the start of a method or status line.
                            let keep = self.buf.len().min(16);
                            let drop = self.buf.len() - keep;
                            self.stats.skipped += drop as u64;
                            self.buf.drain(..drop);
                        }
                    }
                }
            }
        }
        None
    }

    /// `len` bytes of this direction were never captured.
    pub fn gap(&mut self, len: u64, at: Stamp, sink: &mut dyn Sink) {
        match self.state {
            State::Length(rem) | State::ChunkData(rem) => {
                let covered = len.min(rem);
                if let Some(m) = self.msg.as_mut() {
                    m.gap_bytes += covered;
                    m.last = at;
                }
                let left = rem - covered;
                let is_chunk = matches!(self.state, State::ChunkData(_));
                if covered == len {
                    self.state = match (left, is_chunk) {
                        (0, false) => {
                            self.finish(None, sink);
                            return;
                        }
                        (0, true) => State::ChunkEnd,
                        (l, false) => State::Length(l),
                        (l, true) => State::ChunkData(l),
                    };
                    return;
                }
                self.lose_sync(&format!("{len} bytes missing from the capture"), sink);
            }
            State::UntilClose => {
                if let Some(m) = self.msg.as_mut() {
                    m.gap_bytes += len;
                    m.last = at;
                }
            }
            State::Tunnel => self.stats.tunneled += len,
            State::Resync => {
                self.stats.skipped += self.buf.len() as u64;
                self.buf.clear();
            }
            State::Head if self.buf.is_empty() => {
                self.state = State::Resync;
                self.stats.resyncs += 1;
            }
            State::Head => {
                if let Some(head) = partial_head(&self.buf, self.request) {
                    self.stats.cut_heads += 1;
                    let first = self.head_start.take().unwrap_or(at);
                    sink.head(&head, first);
                    let what = if self.request { "request" } else { "response" };
                    sink.done(Message {
                        head,
                        first,
                        last: at,
                        gap_bytes: len,
                        cut: Some(format!(
                            "{what} head cut off by {len} bytes missing from the capture"
                        )),
                        ..Message::default()
                    });
                } else {
                    self.stats.skipped += self.buf.len() as u64;
                }
                self.buf.clear();
                self.head_start = None;
                self.state = State::Resync;
                self.stats.resyncs += 1;
            }
            State::ChunkSize | State::ChunkEnd | State::Trailers => {
                self.lose_sync(&format!("{len} bytes missing from the capture"), sink);
            }
        }
    }

    /// The direction ended (FIN, RST, end of capture): finish or cut the open message.
    pub fn close(&mut self, why: &str, sink: &mut dyn Sink) {
        match self.state {
            State::UntilClose => self.finish(None, sink),
            State::Head | State::Resync => {
                self.stats.skipped += self.buf.len() as u64;
                self.buf.clear();
            }
            State::Tunnel => {}
            _ => {
                let why = why.to_string();
                self.finish(Some(why), sink);
            }
        }
        self.state = State::Head;
    }

    fn parse_head(&mut self, at: Stamp, sink: &mut dyn Sink) -> HeadParse {
        let mut storage = [httparse::EMPTY_HEADER; 256];
        let (used, head) = if self.request {
            let mut req = httparse::Request::new(&mut storage);
            match req.parse(&self.buf) {
                Ok(httparse::Status::Complete(n)) => (
                    n,
                    Head {
                        method: req.method.unwrap_or_default().to_string(),
                        target: req.path.unwrap_or_default().to_string(),
                        status: 0,
                        version: format!("HTTP/1.{}", req.version.unwrap_or(1)),
                        headers: headers(req.headers),
                    },
                ),
                Ok(httparse::Status::Partial) => return self.partial(),
                Err(_) => match simple_request(&self.buf) {
                    Some(parsed) => parsed,
                    None => return HeadParse::Bad,
                },
            }
        } else {
            let mut resp = httparse::Response::new(&mut storage);
            match resp.parse(&self.buf) {
                Ok(httparse::Status::Complete(n)) => (
                    n,
                    Head {
                        status: resp.code.unwrap_or_default(),
                        version: format!("HTTP/1.{}", resp.version.unwrap_or(1)),
                        headers: headers(resp.headers),
                        ..Head::default()
                    },
                ),
                Ok(httparse::Status::Partial) => return self.partial(),
                Err(_) => return HeadParse::Bad,
            }
        };
        self.stats.heads += 1;
        let first = self.head_start.take().unwrap_or(at);
        let framing = sink.head(&head, first);
        let msg = Message {
            head,
            first,
            last: at,
            framing: Some(framing),
            ..Message::default()
        };
        self.msg = Some(msg);
        match framing {
            Framing::Empty => self.finish(None, sink),
            Framing::Length(0) => self.finish(None, sink),
            Framing::Length(n) => {
                // One allocation for the body (capped: the length is untrusted input).
                if let Some(m) = self.msg.as_mut() {
                    m.body.reserve(n.min(PREALLOC) as usize);
                }
                self.state = State::Length(n)
            }
            Framing::Chunked => self.state = State::ChunkSize,
            Framing::UntilClose => self.state = State::UntilClose,
            Framing::Tunnel => {
                self.finish(None, sink);
                self.state = State::Tunnel;
            }
        }
        HeadParse::Parsed(used)
    }

    /// Start a head-less HTTP/0.9 response: status 0, body until close.
    fn start_simple_response(&mut self, at: Stamp) {
        self.stats.heads += 1;
        self.msg = Some(Message {
            head: Head {
                version: "HTTP/0.9".into(),
                ..Head::default()
            },
            first: at,
            last: at,
            framing: Some(Framing::UntilClose),
            ..Message::default()
        });
        self.state = State::UntilClose;
    }

    /// Head not complete yet; give up past [`MAX_HEAD`].
    fn partial(&mut self) -> HeadParse {
        if self.buf.len() > MAX_HEAD {
            HeadParse::Bad
        } else {
            HeadParse::Partial
        }
    }

    /// A head that starts like one (method or `HTTP/1.`) but is invalid becomes a message
    /// marked malformed, so the exchange is reported rather than silently skipped.
    fn report_malformed(&mut self, at: Stamp, sink: &mut dyn Sink) {
        let Some(head) = partial_head(&self.buf, self.request) else {
            return;
        };
        self.stats.cut_heads += 1;
        let what = if self.request { "request" } else { "response" };
        let why = if self.buf.len() > MAX_HEAD {
            format!("{what} head longer than {MAX_HEAD} bytes")
        } else {
            let end = memchr(b'\n', &self.buf).map_or(self.buf.len(), |n| n + 1);
            match self.buf[..end]
                .iter()
                .position(|b| (*b < 0x20 && !matches!(b, b'\r' | b'\n' | b'\t')) || *b == 0x7f)
            {
                Some(i) => format!(
                    "{what} line has the control byte 0x{:02x} at byte {i}: not valid HTTP/1.1",
                    self.buf[i]
                ),
                None => format!("{what} head is not valid HTTP/1.1"),
            }
        };
        let first = self.head_start.unwrap_or(at);
        sink.head(&head, first);
        sink.done(Message {
            head,
            first,
            last: at,
            cut: Some(why),
            malformed: true,
            ..Message::default()
        });
    }

    /// Not a head: skip one byte and search for the next message start in the rest.
    fn bad_head(&mut self) -> Vec<u8> {
        self.stats.resyncs += 1;
        self.stats.skipped += 1;
        let mut buf = std::mem::take(&mut self.buf);
        buf.remove(0);
        self.state = State::Resync;
        self.head_start = None;
        buf
    }

    fn lose_sync(&mut self, why: &str, sink: &mut dyn Sink) {
        self.stats.resyncs += 1;
        self.buf.clear();
        if self.msg.is_some() {
            self.finish(Some(why.to_string()), sink);
        }
        self.state = State::Resync;
    }

    fn body(&mut self, data: &[u8], at: Stamp) {
        if let Some(m) = self.msg.as_mut() {
            m.body.extend_from_slice(data);
            m.last = at;
            if self.request {
                return; // arrival pieces are kept for responses only
            }
            match m.pieces.last_mut() {
                Some((ts, n)) if *ts == at.ts => *n += data.len() as u64,
                _ => m.pieces.push((at.ts, data.len() as u64)),
            }
        }
    }

    fn finish(&mut self, cut: Option<String>, sink: &mut dyn Sink) {
        self.state = State::Head;
        self.buf.clear();
        if let Some(mut m) = self.msg.take() {
            m.cut = cut;
            sink.done(m);
        }
    }
}
