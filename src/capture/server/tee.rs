//! Accounts for every byte a connection received, so nothing the server read can vanish:
//! a request hyper cannot parse (a bad request line, oversized or malformed headers, a slow
//! head, a head cut off), and requests read but never answered (pipelined behind a request
//! after which the connection closes: `Connection: close`, HTTP/1.0, or both
//! Content-Length and Transfer-Encoding, RFC 9112 §6.3) are recorded raw, secrets redacted.
//!
//! The connection's IO is wrapped in a [`Tee`] that feeds every byte read to a [`Ledger`]:
//! it frames requests the way hyper does (heads with `httparse`, bodies by Content-Length
//! or chunked framing through the one chunked decoder, [`crate::http::chunked`], with
//! hyper's limits; counted, not copied, once a handler has claimed the request), and
//! each request hyper hands to the service claims the oldest framed one. When the
//! connection ends, whatever was not claimed ([`Recent::take`]) is recorded
//! (`super::unclaimed`).

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::http::chunked::{Decoder, Event, Limits};

/// Most bytes kept per unclaimed request or unparseable run: 64 KiB.
pub const KEEP: usize = 64 * 1024;
/// Longest request head, bytes: hyper's default read buffer limit (8 KiB + 100 × 4 KiB),
/// which the server sets explicitly ([`super::conn`]) so the ledger and hyper agree on
/// which heads are requests (a longer one is answered 431 by hyper and recorded raw here).
pub const MAX_HEAD: usize = 8192 + 4096 * 100;
/// Most header lines in a request head: hyper's default (100), also set explicitly by the
/// server, so a head with more is not a request here either (hyper answers it 431).
pub const MAX_HEADERS: usize = 100;
/// Limits on chunked bodies: the longest chunk-size or trailer line followed, 8 KiB.
const CHUNK_LIMITS: Limits = Limits { max_line: 8 << 10 };

/// Where the ledger is in the byte stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum State {
    /// Before or inside a request head.
    #[default]
    Head,
    /// Inside a body of known length: bytes left.
    Length(u64),
    /// Inside a chunked body (where: [`Ledger::chunked`]).
    Chunked,
    /// After CONNECT, or an accepted WebSocket upgrade: the rest is a tunnel (counted by
    /// nobody here).
    Tunnel,
    /// Bytes that do not frame as requests: kept for the record, up to [`KEEP`].
    Garbage,
    /// After a request body's framing broke (a chunk-size line that is not hex, chunk
    /// data not followed by a line end, a line past [`CHUNK_LIMITS`]): hyper stops there and closes the connection, so the rest
    /// belongs to that request (recorded by its handler as `malformed_body`, or raw with
    /// the request when no handler received it), never to a request of its own.
    BrokenBody,
}

/// One request framed from the stream.
#[derive(Debug, Default)]
struct Unit {
    /// Its raw bytes, up to [`KEEP`] (only kept while no handler has claimed it).
    raw: Vec<u8>,
    /// Bytes it has in the stream so far.
    len: u64,
    /// Its framing ended.
    complete: bool,
    /// A handler received it.
    claimed: bool,
}

/// The per-connection account of received bytes.
#[derive(Debug)]
pub(crate) struct Ledger {
    state: State,
    /// Bytes of the head being accumulated (or of the garbage run).
    pending: Vec<u8>,
    /// Total size of the garbage run (may exceed what is kept).
    garbage_len: u64,
    /// The chunked body being framed, in [`State::Chunked`].
    chunked: Decoder,
    /// Framed requests, oldest first; claimed complete ones are dropped from the front.
    units: VecDeque<Unit>,
}

impl Default for Ledger {
    fn default() -> Self {
        Ledger {
            state: State::Head,
            pending: Vec::new(),
            garbage_len: 0,
            chunked: Decoder::new(CHUNK_LIMITS),
            units: VecDeque::new(),
        }
    }
}

impl Ledger {
    fn push(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            match self.state {
                State::Head => match self.head_bytes(data) {
                    Some(rest) => data = rest,
                    None => return,
                },
                State::Length(rem) => {
                    let n = (rem as usize).min(data.len());
                    self.body(&data[..n]);
                    data = &data[n..];
                    if rem == n as u64 {
                        self.end_unit();
                    } else {
                        self.state = State::Length(rem - n as u64);
                    }
                }
                State::Chunked => data = self.chunked_bytes(data),
                State::Tunnel => return,
                State::BrokenBody => {
                    self.body(data);
                    return;
                }
                State::Garbage => {
                    self.add_garbage(data);
                    return;
                }
            }
        }
    }

    /// Bytes of a request head (or the empty lines before one); the bytes after the head,
    /// or `None` when all were taken.
    fn head_bytes<'a>(&mut self, mut data: &'a [u8]) -> Option<&'a [u8]> {
        if self.pending.is_empty() {
            let n = data
                .iter()
                .take_while(|b| **b == b'\r' || **b == b'\n')
                .count();
            data = &data[n..];
            if data.is_empty() {
                return None;
            }
        }
        let had = self.pending.len();
        let room = (MAX_HEAD + 1).saturating_sub(had);
        self.pending
            .extend_from_slice(&data[..data.len().min(room)]);
        match self.parse_head() {
            Ok(Some(used)) => Some(&data[(used - had).min(data.len())..]),
            Ok(None) if self.pending.len() > MAX_HEAD => {
                self.add_garbage(&data[room.min(data.len())..]);
                None
            }
            Ok(None) => None,
            Err(()) => {
                let rest = &data[data.len().min(room)..];
                self.add_garbage(rest);
                None
            }
        }
    }

    /// Bytes of a chunked body, every one counted as the request's; the bytes after what
    /// the decoder took.
    fn chunked_bytes<'a>(&mut self, data: &'a [u8]) -> &'a [u8] {
        let (used, event) = self.chunked.step(data);
        self.body(&data[..used]);
        match event {
            Event::End { .. } => self.end_unit(),
            Event::Broken { .. } => self.state = State::BrokenBody,
            _ => {}
        }
        &data[used..]
    }

    /// Try to parse the pending head: `Ok(Some(bytes used))`, `Ok(None)` when partial,
    /// `Err` when it is not a request hyper would accept.
    fn parse_head(&mut self) -> Result<Option<usize>, ()> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        let used = match req.parse(&self.pending) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(_) => return Err(()),
        };
        let connect = req
            .method
            .is_some_and(|m| m.eq_ignore_ascii_case("CONNECT"));
        let mut te = None;
        let mut cl = None;
        for h in req.headers.iter() {
            let v = String::from_utf8_lossy(h.value);
            if h.name.eq_ignore_ascii_case("transfer-encoding") {
                te = Some(hyper_chunked(&v));
            } else if h.name.eq_ignore_ascii_case("content-length") {
                cl = Some(v.trim().parse::<u64>().map_err(|_| ())?);
            }
        }
        let state = match (te, cl) {
            (Some(true), _) => {
                self.chunked.reset();
                State::Chunked
            }
            (Some(false), _) => return Err(()),
            (None, Some(0)) | (None, None) => State::Head,
            (None, Some(n)) => State::Length(n),
        };
        let raw = self.pending[..used].to_vec();
        self.pending.clear();
        self.units.push_back(Unit {
            len: used as u64,
            raw,
            ..Unit::default()
        });
        self.state = state;
        if state == State::Head {
            self.end_unit();
            if connect {
                self.state = State::Tunnel;
            }
        }
        Ok(Some(used))
    }

    fn body(&mut self, b: &[u8]) {
        if let Some(u) = self.units.back_mut() {
            u.len += b.len() as u64;
            if !u.claimed {
                let room = KEEP.saturating_sub(u.raw.len());
                u.raw.extend_from_slice(&b[..b.len().min(room)]);
            }
        }
    }

    fn end_unit(&mut self) {
        if let Some(u) = self.units.back_mut() {
            u.complete = true;
        }
        self.state = State::Head;
        self.prune();
    }

    fn add_garbage(&mut self, more: &[u8]) {
        if self.state != State::Garbage {
            self.garbage_len = self.pending.len() as u64;
            self.state = State::Garbage;
            self.pending.truncate(KEEP);
        }
        self.garbage_len += more.len() as u64;
        let room = KEEP.saturating_sub(self.pending.len());
        self.pending
            .extend_from_slice(&more[..more.len().min(room)]);
    }

    /// A handler received the oldest unclaimed request.
    fn claim(&mut self) {
        if let Some(u) = self.units.iter_mut().find(|u| !u.claimed) {
            u.claimed = true;
            u.raw = Vec::new();
        }
        self.prune();
    }

    fn prune(&mut self) {
        while self.units.front().is_some_and(|u| u.claimed && u.complete) {
            self.units.pop_front();
        }
    }
}

/// True when hyper frames a request whose last Transfer-Encoding line is `te_line` as
/// chunked: the line's last comma-separated element, trimmed, is `chunked` in any case
/// (hyper `headers::is_chunked_`; the last line alone decides). Deliberately not the list
/// rule of [`crate::http::fields::list`]: hyper neither skips an empty last element nor
/// strips parameters, and it refuses such a head (400) — so the ledger must not frame it as
/// a request either.
fn hyper_chunked(te_line: &str) -> bool {
    te_line
        .rsplit(',')
        .next()
        .is_some_and(|c| c.trim().eq_ignore_ascii_case("chunked"))
}

/// A connection's [`Ledger`], shared between its IO and its requests.
#[derive(Clone, Default, Debug)]
pub(crate) struct Recent(Arc<Mutex<Ledger>>);

impl Recent {
    fn lock(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The service received the next request of this connection.
    pub(crate) fn claim(&self) {
        self.lock().claim();
    }

    /// The connection switched protocols (a WebSocket upgrade was accepted): what
    /// follows is not requests, and is counted by nobody here.
    pub(crate) fn tunnel(&self) {
        let mut l = self.lock();
        l.state = State::Tunnel;
    }

    /// What the connection sent that no handler received, taken out of the ledger (the
    /// connection ended).
    pub(crate) fn take(&self) -> Unclaimed {
        let mut ledger = std::mem::take(&mut *self.lock());
        Unclaimed {
            requests: (ledger.units.drain(..))
                .filter(|u| !u.claimed)
                .map(|u| UnclaimedRequest {
                    raw: u.raw,
                    len: u.len,
                    complete: u.complete,
                })
                .collect(),
            garbage_len: ledger.garbage_len,
            garbage: std::mem::take(&mut ledger.pending),
        }
    }
}

/// What a connection sent that no handler received.
#[derive(Debug)]
pub(crate) struct Unclaimed {
    /// Requests framed but never handed to a handler, oldest first.
    pub(crate) requests: Vec<UnclaimedRequest>,
    /// The bytes kept of a run that does not frame as a request (or of a head not yet
    /// complete), up to [`KEEP`].
    pub(crate) garbage: Vec<u8>,
    /// That run's whole size, bytes (0 when it is only the head not yet complete).
    pub(crate) garbage_len: u64,
}

/// A request framed from the stream but never handed to a handler.
#[derive(Debug)]
pub(crate) struct UnclaimedRequest {
    /// Its raw bytes, up to [`KEEP`].
    pub(crate) raw: Vec<u8>,
    /// Bytes it has in the stream.
    pub(crate) len: u64,
    /// Its framing ended (it was read whole).
    pub(crate) complete: bool,
}

/// An IO that feeds what it reads into a [`Recent`] ledger.
pub(crate) struct Tee<T> {
    inner: T,
    recent: Recent,
}

impl<T> Tee<T> {
    pub(crate) fn new(inner: T, recent: Recent) -> Self {
        Tee { inner, recent }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Tee<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &r {
            let new = &buf.filled()[before..];
            if !new.is_empty() {
                self.recent.lock().push(new);
            }
        }
        r
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Tee<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(parts: &[&[u8]]) -> Ledger {
        let mut l = Ledger::default();
        for p in parts {
            l.push(p);
        }
        l
    }

    #[test]
    fn pipelined_requests_frame_one_by_one() {
        let r = b"POST /a HTTP/1.1\r\ncontent-length: 3\r\n\r\nabcGET /b HTTP/1.1\r\n\r\n";
        let mut l = feed(&[r]);
        assert_eq!(l.units.len(), 2);
        assert!(l.units.iter().all(|u| u.complete));
        l.claim();
        assert_eq!(l.units.len(), 1, "the claimed request is forgotten");
        assert!(l.units[0].raw.starts_with(b"GET /b"));
    }

    #[test]
    fn chunked_bodies_and_garbage_after_them() {
        let mut l = feed(&[
            b"POST /a HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n3\r\nab",
            b"c\r\n0\r\n\r\nGARBAGE\r\n\r\n",
        ]);
        l.claim();
        assert!(l.units.is_empty());
        assert_eq!(l.state, State::Garbage);
        assert_eq!(l.pending, b"GARBAGE\r\n\r\n");
    }

    #[test]
    fn a_broken_chunk_size_keeps_the_rest_with_its_request() {
        // Found by an adversarial test: after `zz\r\n` the chunk data `abc…` was recorded
        // as a request of its own beside the one hyper answered 400.
        let raw: &[u8] =
            b"POST /a HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n";
        let l = feed(&[raw]);
        assert_eq!(l.state, State::BrokenBody);
        assert!(l.pending.is_empty(), "no garbage run of its own");
        assert_eq!(l.units.len(), 1);
        assert_eq!(l.units[0].len, raw.len() as u64);
        assert_eq!(
            l.units[0].raw, raw,
            "kept whole with its request until claimed"
        );
    }

    #[test]
    fn a_head_longer_than_keep_but_within_hypers_limit_is_a_request() {
        // Found by an adversarial test: a 70,000-byte header was answered by hyper and
        // also recorded as an `incomplete_head` of 65,537 bytes.
        let head = format!("GET /a HTTP/1.1\r\nx-big: {}\r\n\r\n", "a".repeat(70_000));
        let mut l = feed(&[head.as_bytes()]);
        assert_eq!(l.units.len(), 1);
        assert_eq!(l.state, State::Head);
        l.claim();
        assert!(l.units.is_empty() && l.pending.is_empty());
        let huge = format!("GET /a HTTP/1.1\r\nx-big: {}", "a".repeat(MAX_HEAD + 10));
        let l = feed(&[huge.as_bytes()]);
        assert_eq!(l.state, State::Garbage);
        assert_eq!(l.pending.len(), KEEP, "at most KEEP bytes kept");
    }

    #[test]
    fn the_last_transfer_encoding_line_decides_as_in_hyper() {
        let head = |te: &str| format!("POST /a HTTP/1.1\r\n{te}\r\n\r\n0\r\n\r\n");
        for te in [
            "transfer-encoding: gzip, CHUNKED",
            "transfer-encoding: chunked\r\ntransfer-encoding: gzip, chunked",
        ] {
            let l = feed(&[head(te).as_bytes()]);
            assert_eq!((l.units.len(), l.state), (1, State::Head), "{te}");
            assert!(l.units[0].complete, "{te}");
        }
        // hyper answers 400 to these heads: not requests here either.
        for te in [
            "transfer-encoding: chunked, ",
            "transfer-encoding: chunked;x=1",
            "transfer-encoding: chunked\r\ntransfer-encoding: gzip",
        ] {
            let l = feed(&[head(te).as_bytes()]);
            assert_eq!(l.state, State::Garbage, "{te}");
            assert!(l.units.is_empty(), "{te}");
        }
    }

    #[test]
    fn chunked_bodies_follow_the_one_decoder_and_hypers_strictness() {
        // Bare LF and whitespace around a size are accepted (as the capture reader does).
        let l = feed(&[b"POST /a HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n3 \nabc\n0\n\n"]);
        assert_eq!(l.state, State::Head);
        assert!(l.units[0].complete);
        // hyper refuses a signed size and bytes between chunk data and its CRLF; the rest
        // stays with the request (it is not framed as requests of its own).
        for body in [&b"+3\r\nabc\r\n0\r\n\r\n"[..], b"3\r\nabcXY\r\n0\r\n\r\n"] {
            let mut raw = b"POST /a HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
            raw.extend_from_slice(body);
            raw.extend_from_slice(b"GET /b HTTP/1.1\r\n\r\n");
            let l = feed(&[&raw]);
            assert_eq!(l.state, State::BrokenBody);
            assert_eq!(l.units.len(), 1);
            assert_eq!(l.units[0].len, raw.len() as u64);
        }
    }

    #[test]
    fn connect_turns_into_a_tunnel() {
        let l = feed(&[b"CONNECT h:443 HTTP/1.1\r\nhost: h\r\n\r\n\x16\x03\x01binary"]);
        assert_eq!(l.state, State::Tunnel);
        assert!(l.pending.is_empty());
    }
}
