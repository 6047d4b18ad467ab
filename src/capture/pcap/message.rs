//! One direction of an HTTP/1.1 connection: message heads (`httparse`), bodies delimited
//! as [`crate::http::framing::body_length`] says (Content-Length, chunked with extensions
//! and trailers through [`crate::http::chunked::Decoder`], close-delimited), gaps, and
//! resynchronisation at the next request line or status line after a gap, a framing error
//! or unparseable bytes.
//!
//! Every message keeps its stream offsets (first byte of the head, byte after its end),
//! which pair requests with responses by acknowledgment numbers after a gap. A message
//! whose framing cannot be used keeps the bytes that follow it, raw, until the next
//! message start. Where a passive reader is more lenient than a strict server (bare LF
//! line ends, whitespace around a chunk size) the message says so in [`Message::notes`].

use super::head::{find_start, headers, memchr, partial_head, simple_request};
use crate::http::chunked::{self, ChunkError, Decoder, Event};
pub use crate::http::framing::{BodyLength, Framing, Head};
use crate::http::Headers;

/// Largest message head accepted, bytes; a longer one is treated as not HTTP.
const MAX_HEAD: usize = 256 << 10;
/// Most body bytes reserved up front from a Content-Length.
const PREALLOC: u64 = 16 << 20;
/// Limits on chunked bodies: the largest chunk-size or trailer line, 8 KiB.
const CHUNK_LIMITS: chunked::Limits = chunked::Limits { max_line: 8 << 10 };

/// Leniency noted on a message: a line ended by LF alone (RFC 9112 §2.2 lets a recipient
/// accept it).
pub const BARE_LF: &str = "bare LF line ends accepted";
/// Leniency noted on a message: spaces or tabs before a chunk size or after it without an
/// extension (RFC 9112 §7.1 allows neither).
pub const CHUNK_SIZE_SPACE: &str = "whitespace around a chunk size accepted";

/// Capture time, frame and acknowledgment of the packet that carried a byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stamp {
    /// Nanoseconds since the Unix epoch.
    pub ts: i64,
    /// Frame number.
    pub frame: u64,
    /// The packet's acknowledgment as an offset in the other direction's stream (every
    /// byte before it had been received), when known.
    pub ack: Option<u64>,
}

/// A message, complete or cut short.
#[derive(Clone, Debug, Default)]
pub struct Message {
    /// The head.
    pub head: Head,
    /// Body bytes after de-chunking (content codings kept); for a malformed message,
    /// the bytes that followed its head up to the next message start, raw.
    pub body: Vec<u8>,
    /// Body bytes lost in capture gaps.
    pub gap_bytes: u64,
    /// Why the message ended before its framing said it would, if it did.
    pub cut: Option<String>,
    /// Time of the first byte of the head.
    pub first: Stamp,
    /// Time of the last byte seen.
    pub last: Stamp,
    /// Stream offset of the head's first byte.
    pub start: u64,
    /// Stream offset just after the message's last byte.
    pub end: u64,
    /// Arrival of body bytes: `(ts_ns, bytes)`, merged per timestamp.
    pub pieces: Vec<(i64, u64)>,
    /// Trailer fields of a chunked body.
    pub trailers: Headers,
    /// Body framing used.
    pub framing: Option<Framing>,
    /// The head or its framing was invalid (see `cut` for why).
    pub malformed: bool,
    /// Leniencies and fields the framing rules ignored.
    pub notes: Vec<String>,
    /// Where this direction lost sync since the previous message (whole messages may
    /// have been lost there), if it did.
    pub lost_before: Option<u64>,
    /// A response whose head preceded the capture (`headless`): status 0, no
    /// version or fields.
    pub head_not_captured: bool,
}

impl Message {
    fn note(&mut self, note: &str) {
        if !self.notes.iter().any(|n| n == note) {
            self.notes.push(note.to_string());
        }
    }
}

/// Receives what a [`MessageParser`] recognises.
pub trait Sink {
    /// A head starting at stream offset `start` was parsed. Returns the body length.
    fn head(&mut self, head: &Head, at: Stamp, start: u64) -> BodyLength;
    /// A message ended (normally, or cut short: see [`Message::cut`]).
    fn done(&mut self, msg: Message);
    /// True when the next response answers an HTTP/0.9 simple request: it has no head
    /// and runs until the connection closes (RFC 1945 §6).
    fn simple_response(&mut self) -> bool {
        false
    }
    /// Bytes after a protocol switch, the first at stream offset `off`; returns how many
    /// were not read (counted in [`ParserStats::tunneled`]).
    fn tunnel(&mut self, data: &[u8], _off: u64, _at: Stamp) -> u64 {
        data.len() as u64
    }
    /// `len` bytes after a protocol switch, from stream offset `off`, were not captured;
    /// returns how many are counted in [`ParserStats::tunneled`].
    fn tunnel_gap(&mut self, len: u64, _off: u64, _at: Stamp) -> u64 {
        len
    }
}

/// What a step of [`MessageParser::feed_once`] leaves.
enum Step<'a> {
    /// Go on with these bytes (in the state the step left).
    Go(&'a [u8]),
    /// Stop; parse these bytes again if any (after a resync).
    Stop(Option<Vec<u8>>),
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
    /// Inside a chunked body (where: [`MessageParser::chunked`]).
    Chunked,
    UntilClose,
    Tunnel,
    /// Looking for the next message start; a malformed message in `msg` collects the
    /// bytes on the way.
    Resync,
}

/// Counters of one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParserStats {
    /// Message heads parsed.
    pub heads: u64,
    /// Bytes skipped while looking for a message start (after a gap or unparseable data).
    pub skipped: u64,
    /// Bytes passed through a tunnel (after 101 or CONNECT) that were not read as
    /// WebSocket frames.
    pub tunneled: u64,
    /// Times the parser lost sync (bad head, bad framing, gap outside a sized body).
    pub resyncs: u64,
    /// Heads cut off by a capture gap or invalid (reported as cut messages).
    pub cut_heads: u64,
    /// Responses kept without their head: the capture started inside them.
    pub headless: u64,
}

/// Incremental parser for the messages of one direction.
pub struct MessageParser {
    request: bool,
    state: State,
    /// A head being accumulated, or bytes held while resynchronising.
    buf: Vec<u8>,
    /// The chunked body being read, in [`State::Chunked`].
    chunked: Decoder,
    msg: Option<Message>,
    /// When and where (stream offset) the head being accumulated in `buf` started.
    head_start: Option<(Stamp, u64)>,
    /// Stream offset just after the last byte or gap seen.
    seen: u64,
    /// Where sync was lost since the last head, if it was.
    lost: Option<u64>,
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
            chunked: Decoder::new(CHUNK_LIMITS),
            msg: None,
            head_start: None,
            seen: 0,
            lost: None,
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

    /// Stream offset just after the last byte or gap seen.
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// Feed contiguous stream bytes starting at stream offset `off`, which arrived at `at`.
    pub fn feed(&mut self, data: &[u8], off: u64, at: Stamp, sink: &mut dyn Sink) {
        let end = off + data.len() as u64;
        self.seen = end;
        let mut again = self.feed_once(data, end, at, sink);
        // Bytes to parse again after a resync (they end at `end`); each round consumes at
        // least one byte.
        while let Some(bytes) = again {
            again = self.feed_once(&bytes, end, at, sink);
        }
    }

    /// Parse `data`, the bytes that end at stream offset `end`; returns bytes to parse
    /// again after a resync. One step per state, each returning the bytes left.
    fn feed_once(
        &mut self,
        mut data: &[u8],
        end: u64,
        at: Stamp,
        sink: &mut dyn Sink,
    ) -> Option<Vec<u8>> {
        while !data.is_empty() {
            let step = match self.state {
                State::Head => self.head_bytes(data, end, at, sink),
                State::Length(rem) => self.length_bytes(data, rem, end, at, sink),
                State::Chunked => self.chunked_bytes(data, end, at, sink),
                State::UntilClose => {
                    self.body(data, at);
                    return None;
                }
                State::Tunnel => {
                    let off = end - data.len() as u64;
                    self.stats.tunneled += sink.tunnel(data, off, at);
                    return None;
                }
                State::Resync => return self.resync_bytes(data, end, at, sink),
            };
            match step {
                Step::Go(rest) => data = rest,
                Step::Stop(again) => return again,
            }
        }
        None
    }

    /// Bytes of a head (or the empty lines before one).
    fn head_bytes<'a>(
        &mut self,
        mut data: &'a [u8],
        end: u64,
        at: Stamp,
        sink: &mut dyn Sink,
    ) -> Step<'a> {
        if self.buf.is_empty() {
            // Tolerate empty lines between messages (RFC 9112 §2.2).
            let n = data
                .iter()
                .take_while(|b| **b == b'\r' || **b == b'\n')
                .count();
            data = &data[n..];
            if data.is_empty() {
                return Step::Stop(None);
            }
            let start = end - data.len() as u64;
            if !self.request && sink.simple_response() {
                self.start_simple_response(at, start);
                return Step::Go(data);
            }
            self.head_start = Some((at, start));
        }
        let had = self.buf.len();
        self.buf.extend_from_slice(data);
        match self.parse_head(at, sink) {
            HeadParse::Parsed(used) => {
                // Bytes of `data` beyond the head continue the loop.
                self.buf.clear();
                Step::Go(&data[used - had..])
            }
            HeadParse::Partial => Step::Stop(None),
            HeadParse::Bad => {
                self.report_malformed(at, sink);
                Step::Stop(Some(self.bad_head(end)))
            }
        }
    }

    /// Bytes of a body of known length, `rem` bytes of it left.
    fn length_bytes<'a>(
        &mut self,
        data: &'a [u8],
        rem: u64,
        end: u64,
        at: Stamp,
        sink: &mut dyn Sink,
    ) -> Step<'a> {
        let n = (rem as usize).min(data.len());
        self.body(&data[..n], at);
        let rest = &data[n..];
        if rem == n as u64 {
            self.finish(None, end - rest.len() as u64, sink);
        } else {
            self.state = State::Length(rem - n as u64);
        }
        Step::Go(rest)
    }

    /// Bytes of a chunked body, read by the one chunked decoder; its leniencies become
    /// notes, its trailers the message's, a broken framing a malformed message.
    fn chunked_bytes<'a>(
        &mut self,
        data: &'a [u8],
        end: u64,
        at: Stamp,
        sink: &mut dyn Sink,
    ) -> Step<'a> {
        let (used, event) = self.chunked.step(data);
        let rest = &data[used..];
        let off = end - rest.len() as u64;
        match event {
            Event::Data(bytes) => self.body(bytes, at),
            Event::More => debug_assert!(rest.is_empty(), "the decoder took every byte"),
            Event::Size { bare_lf, space, .. } => {
                self.line_seen(at, bare_lf);
                if let Some(m) = self.msg.as_mut().filter(|_| space) {
                    m.note(CHUNK_SIZE_SPACE);
                }
            }
            Event::DataEnd { bare_lf } => {
                if let Some(m) = self.msg.as_mut().filter(|_| bare_lf) {
                    m.note(BARE_LF);
                }
            }
            Event::Trailer { field, bare_lf } => {
                self.line_seen(at, bare_lf);
                if let (Some(m), Some(field)) = (self.msg.as_mut(), field) {
                    m.trailers.push(field);
                }
            }
            Event::End { bare_lf } => {
                self.line_seen(at, bare_lf);
                self.finish(None, off, sink);
            }
            Event::Broken {
                error,
                mut held,
                bare_lf,
            } => {
                if matches!(error, ChunkError::BadSize { .. }) {
                    // The invalid line is kept in the body, ended by LF.
                    self.line_seen(at, bare_lf);
                    held.push(b'\n');
                }
                self.buf = held;
                self.framing_error(&error.to_string(), off, sink);
            }
        }
        Step::Go(rest)
    }

    /// A chunk-size or trailer line ended at `at` (`bare_lf`: by LF alone).
    fn line_seen(&mut self, at: Stamp, bare_lf: bool) {
        if let Some(m) = self.msg.as_mut() {
            m.last = at;
            if bare_lf {
                m.note(BARE_LF);
            }
        }
    }

    /// Bytes searched for the next message start (a malformed message in `msg` collects
    /// them on the way); returns the bytes from the start found, to parse again.
    fn resync_bytes(
        &mut self,
        data: &[u8],
        end: u64,
        at: Stamp,
        sink: &mut dyn Sink,
    ) -> Option<Vec<u8>> {
        self.buf.extend_from_slice(data);
        let found = find_start(&self.buf, self.request);
        // Keep a tail that may hold the start of a method or status line.
        let drop = found.unwrap_or(self.buf.len().saturating_sub(16));
        match self.msg.as_mut() {
            Some(m) if m.head_not_captured => {
                let keep = drop.min(super::headless::MAX_HEADLESS.saturating_sub(m.body.len()));
                m.body.extend_from_slice(&self.buf[..keep]);
                self.stats.skipped += (drop - keep) as u64;
                m.last = at;
            }
            Some(m) => {
                m.body.extend_from_slice(&self.buf[..drop]);
                m.last = at;
            }
            None => self.stats.skipped += drop as u64,
        }
        let rest = self.buf.split_off(drop);
        if found.is_none() {
            self.buf = rest;
            return None;
        }
        self.buf.clear();
        let cut = self.msg.as_mut().and_then(|m| m.cut.take());
        self.finish(cut, end - rest.len() as u64, sink);
        Some(rest)
    }

    /// `len` bytes of this direction, from stream offset `off`, were never captured.
    pub fn gap(&mut self, len: u64, off: u64, at: Stamp, sink: &mut dyn Sink) {
        self.seen = off + len;
        let why = || format!("{len} bytes missing from the capture");
        match self.state {
            State::Length(rem) => self.gap_in_body(len, rem, false, off, at, sink),
            State::Chunked => match self.chunked.data_left() {
                Some(rem) => self.gap_in_body(len, rem, true, off, at, sink),
                None => self.lose_sync(&why(), off, sink),
            },
            State::UntilClose => {
                if let Some(m) = self.msg.as_mut() {
                    m.gap_bytes += len;
                    m.last = at;
                }
            }
            State::Tunnel => self.stats.tunneled += sink.tunnel_gap(len, off, at),
            State::Resync => {
                // A malformed message collecting raw bytes ends where the capture does.
                let cut = self.msg.as_mut().and_then(|m| m.cut.take());
                self.finish(cut, off, sink);
                self.state = State::Resync;
                self.stats.skipped += self.buf.len() as u64;
                self.buf.clear();
                self.lost.get_or_insert(off);
            }
            State::Head if self.buf.is_empty() => {
                self.state = State::Resync;
                self.stats.resyncs += 1;
                self.lost.get_or_insert(off);
                // The stream's start was not captured (no SYN): a response may be under
                // way; its bytes are collected until the next status line.
                let start = len == 0 && off == 0 && self.msg.is_none();
                if start && !self.request && self.stats.heads == 0 {
                    self.msg = Some(Message {
                        first: at,
                        last: at,
                        head_not_captured: true,
                        ..Message::default()
                    });
                }
            }
            State::Head => self.gap_in_head(len, off, at, sink),
        }
    }

    /// A gap of `len` bytes at `off` inside a sized body or chunk data with `rem` bytes
    /// left: counted as missing body bytes when it lies within them, else sync is lost.
    fn gap_in_body(
        &mut self,
        len: u64,
        rem: u64,
        chunk: bool,
        off: u64,
        at: Stamp,
        sink: &mut dyn Sink,
    ) {
        let covered = len.min(rem);
        if let Some(m) = self.msg.as_mut() {
            m.gap_bytes += covered;
            m.last = at;
        }
        if covered < len {
            let why = format!("{len} bytes missing from the capture");
            self.lose_sync(&why, off + covered, sink);
        } else if chunk {
            self.chunked.skip(covered);
        } else if rem == covered {
            self.finish(None, off + len, sink);
        } else {
            self.state = State::Length(rem - covered);
        }
    }

    /// A gap of `len` bytes at `off` cut off the head being accumulated: what can be read
    /// of it is reported as a cut message, then sync is lost.
    fn gap_in_head(&mut self, len: u64, off: u64, at: Stamp, sink: &mut dyn Sink) {
        let (first, start) = self.head_start.take().unwrap_or((at, off));
        if let Some(head) = partial_head(&self.buf, self.request) {
            self.stats.cut_heads += 1;
            sink.head(&head, first, start);
            let what = if self.request { "request" } else { "response" };
            sink.done(Message {
                head,
                first,
                last: at,
                start,
                end: off + len,
                gap_bytes: len,
                cut: Some(format!(
                    "{what} head cut off by {len} bytes missing from the capture"
                )),
                lost_before: self.lost.take(),
                ..Message::default()
            });
        } else {
            self.stats.skipped += self.buf.len() as u64;
        }
        self.buf.clear();
        self.state = State::Resync;
        self.stats.resyncs += 1;
        self.lost.get_or_insert(start);
    }

    /// The direction ended (FIN, RST, end of capture): finish or cut the open message.
    pub fn close(&mut self, why: &str, sink: &mut dyn Sink) {
        let end = self.seen;
        match self.state {
            State::UntilClose => self.finish(None, end, sink),
            State::Resync => {
                if let Some(m) = self.msg.as_mut() {
                    m.body.extend_from_slice(&self.buf);
                } else {
                    self.stats.skipped += self.buf.len() as u64;
                }
                self.buf.clear();
                let cut = self.msg.as_mut().and_then(|m| m.cut.take());
                self.finish(cut, end, sink);
            }
            State::Head => {
                self.stats.skipped += self.buf.len() as u64;
                self.buf.clear();
            }
            State::Tunnel => {}
            _ => self.finish(Some(why.to_string()), end, sink),
        }
        self.state = State::Head;
    }

    /// Parse the head accumulated in `buf` and start its message ([`Self::start_message`]).
    fn parse_head(&mut self, at: Stamp, sink: &mut dyn Sink) -> HeadParse {
        match self.httparse_head() {
            Ok((used, head)) => {
                self.start_message(used, head, at, sink);
                HeadParse::Parsed(used)
            }
            Err(not) => not,
        }
    }

    /// The head in `buf` (bytes used and head) by `httparse`, an HTTP/0.9 simple request,
    /// or why there is none yet ([`HeadParse::Partial`]) or at all ([`HeadParse::Bad`]).
    fn httparse_head(&mut self) -> Result<(usize, Head), HeadParse> {
        let mut storage = [httparse::EMPTY_HEADER; 256];
        if self.request {
            let mut req = httparse::Request::new(&mut storage);
            return match req.parse(&self.buf) {
                Ok(httparse::Status::Complete(n)) => Ok((
                    n,
                    Head {
                        method: req.method.unwrap_or_default().to_string(),
                        target: req.path.unwrap_or_default().to_string(),
                        status: 0,
                        version: format!("HTTP/1.{}", req.version.unwrap_or(1)),
                        headers: headers(req.headers),
                    },
                )),
                Ok(httparse::Status::Partial) => Err(self.partial()),
                Err(_) => simple_request(&self.buf).ok_or(HeadParse::Bad),
            };
        }
        let mut resp = httparse::Response::new(&mut storage);
        match resp.parse(&self.buf) {
            Ok(httparse::Status::Complete(n)) => Ok((
                n,
                Head {
                    status: resp.code.unwrap_or_default(),
                    version: format!("HTTP/1.{}", resp.version.unwrap_or(1)),
                    headers: headers(resp.headers),
                    ..Head::default()
                },
            )),
            Ok(httparse::Status::Partial) => Err(self.partial()),
            Err(_) => Err(HeadParse::Bad),
        }
    }

    /// Start the message of `head` (its first `used` bytes of `buf`): its framing from the
    /// sink decides the next state; an unusable one makes it malformed (resync).
    fn start_message(&mut self, used: usize, head: Head, at: Stamp, sink: &mut dyn Sink) {
        self.stats.heads += 1;
        let (first, start) = self.head_start.take().unwrap_or((at, self.seen));
        let length = sink.head(&head, first, start);
        let bare_lf = self.buf[..used]
            .iter()
            .enumerate()
            .any(|(i, b)| *b == b'\n' && (i == 0 || self.buf[i - 1] != b'\r'));
        let mut msg = Message {
            head,
            first,
            last: at,
            start,
            end: start + used as u64,
            notes: length.notes,
            lost_before: self.lost.take(),
            ..Message::default()
        };
        if bare_lf {
            msg.note(BARE_LF);
        }
        let end = msg.end;
        let framing = match length.framing {
            Ok(f) => f,
            Err(why) => {
                // Unusable framing: the message is malformed and keeps what follows, raw,
                // until the next message start.
                msg.malformed = true;
                msg.cut = Some(why);
                self.msg = Some(msg);
                self.stats.resyncs += 1;
                self.lost.get_or_insert(end);
                self.state = State::Resync;
                return;
            }
        };
        msg.framing = Some(framing);
        if let Framing::Length(n) = framing {
            // One allocation for the body (capped: the length is untrusted input).
            msg.body.reserve(n.min(PREALLOC) as usize);
        }
        self.msg = Some(msg);
        match framing {
            Framing::Empty | Framing::Length(0) => self.finish(None, end, sink),
            Framing::Length(n) => self.state = State::Length(n),
            Framing::Chunked => {
                self.chunked.reset();
                self.state = State::Chunked;
            }
            Framing::UntilClose => self.state = State::UntilClose,
            Framing::Tunnel => {
                self.finish(None, end, sink);
                self.state = State::Tunnel;
            }
        }
    }

    /// Start a head-less HTTP/0.9 response at stream offset `start`: status 0, body until
    /// close.
    fn start_simple_response(&mut self, at: Stamp, start: u64) {
        self.stats.heads += 1;
        self.msg = Some(Message {
            head: Head {
                version: "HTTP/0.9".into(),
                ..Head::default()
            },
            first: at,
            last: at,
            start,
            end: start,
            framing: Some(Framing::UntilClose),
            lost_before: self.lost.take(),
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
        let (first, start) = self.head_start.unwrap_or((at, self.seen));
        sink.head(&head, first, start);
        sink.done(Message {
            head,
            first,
            last: at,
            start,
            end: start + 1,
            cut: Some(why),
            malformed: true,
            lost_before: self.lost.take(),
            ..Message::default()
        });
    }

    /// Not a head (the bytes in `buf` end at stream offset `end`): skip one byte and
    /// search for the next message start in the rest.
    fn bad_head(&mut self, end: u64) -> Vec<u8> {
        self.stats.resyncs += 1;
        self.stats.skipped += 1;
        let mut buf = std::mem::take(&mut self.buf);
        self.lost.get_or_insert(end - buf.len() as u64);
        buf.remove(0);
        self.state = State::Resync;
        self.head_start = None;
        buf
    }

    /// A gap made the framing unusable at stream offset `off`: the message is cut there.
    fn lose_sync(&mut self, why: &str, off: u64, sink: &mut dyn Sink) {
        self.stats.resyncs += 1;
        self.buf.clear();
        self.lost.get_or_insert(off);
        if self.msg.is_some() {
            self.finish(Some(why.to_string()), off, sink);
        }
        self.state = State::Resync;
    }

    /// The bytes at stream offset `off` break the message's framing: it is malformed and
    /// keeps what follows, raw, until the next message start.
    fn framing_error(&mut self, why: &str, off: u64, sink: &mut dyn Sink) {
        self.stats.resyncs += 1;
        self.lost.get_or_insert(off);
        match self.msg.as_mut() {
            Some(m) => {
                m.malformed = true;
                m.cut = Some(why.to_string());
                let held = std::mem::take(&mut self.buf);
                m.body.extend_from_slice(&held);
            }
            None => self.lose_sync(why, off, sink),
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

    /// The message ends at stream offset `end` (`cut`: why early).
    fn finish(&mut self, cut: Option<String>, end: u64, sink: &mut dyn Sink) {
        self.state = State::Head;
        self.buf.clear();
        if let Some(mut m) = self.msg.take() {
            m.cut = cut;
            m.end = end;
            if !m.head_not_captured {
                return sink.done(m);
            }
            let raw = std::mem::take(&mut m.body);
            match super::headless::recover(raw, m.cut.take()) {
                Ok(r) => {
                    self.stats.headless += 1;
                    m.body = r.body;
                    m.framing = r.chunked.then_some(Framing::Chunked);
                    m.cut = Some(r.cut);
                    sink.done(m);
                }
                Err(skipped) => self.stats.skipped += skipped,
            }
        }
    }
}
