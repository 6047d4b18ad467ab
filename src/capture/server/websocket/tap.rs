//! The frame tap: an IO wrapper around an upgraded connection that notes every WebSocket
//! frame crossing it, both ways, for the trace — direction, time, opcode, FIN, RSV1,
//! bytes on the wire and payload bytes — while `tokio-tungstenite` speaks the protocol
//! over it. Frame headers are read with tungstenite's own parser
//! ([`FrameHeader::parse`]); the tap never changes a byte.
//!
//! Each frame is filed under a message number: a client frame that starts a data message
//! opens the next number, the client's other frames (continuations, pings, a close) go
//! with the last one opened, and the server's frames with the number the session is
//! answering ([`Tap::answering`]). The payload of the client's data message still being
//! received is kept (unmasked), so a connection cut in the middle of a message still
//! records what arrived.

use std::io::Cursor;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_tungstenite::tungstenite::protocol::frame::FrameHeader;

use crate::trace::websocket::Direction;

/// A frame seen by the tap.
#[derive(Clone, Debug)]
pub(crate) struct Seen {
    /// The client message it is filed under.
    pub(crate) message: u64,
    pub(crate) dir: Direction,
    /// When its first byte crossed.
    pub(crate) at: Instant,
    pub(crate) opcode: u8,
    pub(crate) fin: bool,
    pub(crate) rsv1: bool,
    /// Bytes on the wire so far (all of them once the frame is complete).
    pub(crate) wire_bytes: u64,
    /// Payload bytes so far.
    pub(crate) payload_bytes: u64,
}

/// One direction's parser state.
#[derive(Debug, Default)]
struct Reader {
    /// Header bytes not yet parsed.
    head: Vec<u8>,
    /// The frame whose payload is being read, and its payload bytes still due.
    open: Option<(Seen, u64, Option<[u8; 4]>)>,
}

/// What the tap has seen, shared with the session.
#[derive(Debug, Default)]
pub(crate) struct Log {
    /// Complete frames, in order.
    pub(crate) frames: Vec<Seen>,
    client: Reader,
    server: Reader,
    /// Client data messages started so far.
    started: u64,
    /// The unmasked payload of the client data message being received, and whether its
    /// last frame has arrived.
    partial: (Vec<u8>, bool),
    /// Most payload bytes kept in `partial`.
    keep: usize,
}

impl Log {
    /// Take the complete frames filed under messages up to `message`.
    pub(crate) fn take_upto(&mut self, message: u64) -> Vec<Seen> {
        let (mine, rest) = std::mem::take(&mut self.frames)
            .into_iter()
            .partition(|f| f.message <= message);
        self.frames = rest;
        mine
    }

    /// Take every frame, the unfinished ones (a cut connection) as far as they got.
    pub(crate) fn take_all(&mut self) -> Vec<Seen> {
        let mut all = std::mem::take(&mut self.frames);
        for r in [&mut self.client, &mut self.server] {
            if let Some((f, _, _)) = r.open.take() {
                all.push(f);
            }
        }
        all.sort_by_key(|f| f.at);
        all
    }

    /// The payload of a client data message that started but never finished, if any
    /// (taken).
    pub(crate) fn take_unfinished(&mut self) -> Option<(u64, Vec<u8>)> {
        let (bytes, done) = std::mem::take(&mut self.partial);
        (!done && self.started > 0).then(|| (self.started - 1, bytes))
    }

    /// Client data messages started so far.
    #[cfg(test)]
    pub(crate) fn started(&self) -> u64 {
        self.started
    }
}

/// An IO stream whose frames are logged.
pub(crate) struct Tap<T> {
    inner: T,
    log: Arc<Mutex<Log>>,
    answering: Arc<AtomicU64>,
}

impl<T> Tap<T> {
    /// Tap `inner`; at most `keep` bytes of an unfinished client message are kept.
    pub(crate) fn new(inner: T, keep: usize) -> Self {
        let log = Log {
            keep,
            ..Log::default()
        };
        Tap {
            inner,
            log: Arc::new(Mutex::new(log)),
            answering: Arc::default(),
        }
    }

    /// The shared log.
    pub(crate) fn log(&self) -> Arc<Mutex<Log>> {
        self.log.clone()
    }

    /// The number of the client message the server is answering (its frames are filed
    /// under it).
    pub(crate) fn answering(&self) -> Arc<AtomicU64> {
        self.answering.clone()
    }
}

impl Log {
    /// Note `data` crossing in direction `dir` (`answering`: the server's message number).
    fn feed(&mut self, dir: Direction, mut data: &[u8], answering: u64) {
        let now = Instant::now();
        while !data.is_empty() {
            let open = match dir {
                Direction::Client => self.client.open.is_some(),
                Direction::Server => self.server.open.is_some(),
            };
            data = if open {
                self.payload(dir, data)
            } else {
                self.header(dir, data, answering, now)
            };
        }
    }

    fn reader(&mut self, dir: Direction) -> &mut Reader {
        match dir {
            Direction::Client => &mut self.client,
            Direction::Server => &mut self.server,
        }
    }

    /// Header bytes: once a header parses, its frame opens (or completes, when it has no
    /// payload). Returns the bytes after what was used.
    fn header<'a>(
        &mut self,
        dir: Direction,
        data: &'a [u8],
        answering: u64,
        now: Instant,
    ) -> &'a [u8] {
        let r = self.reader(dir);
        let had = r.head.len();
        let take = data.len().min(14 - had.min(14));
        r.head.extend_from_slice(&data[..take]);
        let mut cur = Cursor::new(r.head.as_slice());
        let parsed = match FrameHeader::parse(&mut cur) {
            Ok(Some(p)) => p,
            Ok(None) if take > 0 => return &data[take..],
            // Not a frame (or 14 bytes without one): the rest is not followed.
            _ => return &[],
        };
        let used = cur.position() as usize;
        r.head.clear();
        let (h, len) = parsed;
        let opcode: u8 = h.opcode.into();
        let data_start = dir == Direction::Client && (opcode == 1 || opcode == 2);
        let message = match dir {
            Direction::Server => answering,
            Direction::Client if data_start => self.started,
            Direction::Client => self.started.saturating_sub(1),
        };
        if data_start {
            self.started += 1;
            self.partial = (Vec::new(), false);
        }
        let seen = Seen {
            message,
            dir,
            at: now,
            opcode,
            fin: h.is_final,
            rsv1: h.rsv1,
            wire_bytes: used as u64,
            payload_bytes: 0,
        };
        self.reader(dir).open = Some((seen, len, h.mask));
        self.close_if_done(dir);
        &data[(used - had).min(data.len())..]
    }

    /// Payload bytes of the open frame; returns the bytes after it.
    fn payload<'a>(&mut self, dir: Direction, data: &'a [u8]) -> &'a [u8] {
        let keep = self.keep;
        let Some((f, due, mask)) = self.reader(dir).open.as_mut() else {
            return data;
        };
        let n = (*due).min(data.len() as u64) as usize;
        let offset = f.payload_bytes as usize;
        f.wire_bytes += n as u64;
        f.payload_bytes += n as u64;
        *due -= n as u64;
        let data_frame = dir == Direction::Client && matches!(f.opcode, 0..=2);
        let mask = *mask;
        if data_frame && self.partial.0.len() < keep {
            let room = keep - self.partial.0.len();
            let start = self.partial.0.len();
            self.partial.0.extend_from_slice(&data[..n.min(room)]);
            if let Some(m) = mask {
                for (i, b) in self.partial.0[start..].iter_mut().enumerate() {
                    *b ^= m[(offset + i) % 4];
                }
            }
        }
        self.close_if_done(dir);
        &data[n..]
    }

    /// File the open frame of `dir` when all its payload has crossed.
    fn close_if_done(&mut self, dir: Direction) {
        let r = self.reader(dir);
        if r.open.as_ref().is_some_and(|(_, due, _)| *due == 0) {
            if let Some((f, _, _)) = r.open.take() {
                if f.dir == Direction::Client && f.fin && matches!(f.opcode, 0..=2) {
                    self.partial.1 = true;
                }
                self.frames.push(f);
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Tap<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = r {
            let answering = self.answering.load(Ordering::Relaxed);
            let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
            log.feed(Direction::Client, &buf.filled()[before..], answering);
        }
        r
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Tap<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = r {
            let answering = self.answering.load(Ordering::Relaxed);
            let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
            log.feed(Direction::Server, &buf[..n], answering);
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A masked client text frame of `payload`.
    fn masked(payload: &[u8], fin: bool, opcode: u8) -> Vec<u8> {
        let mask = [1u8, 2, 3, 4];
        let mut out = vec![(u8::from(fin) << 7) | opcode, 0x80 | payload.len() as u8];
        out.extend_from_slice(&mask);
        out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        out
    }

    #[test]
    fn frames_are_filed_by_message_and_a_cut_message_keeps_its_bytes() {
        let mut log = Log {
            keep: 1 << 20,
            ..Log::default()
        };
        let first = masked(b"{\"a\":1}", true, 1);
        // Fed byte by byte: headers and payloads may arrive in any pieces.
        for b in &first {
            log.feed(Direction::Client, std::slice::from_ref(b), 0);
        }
        log.feed(Direction::Server, &[0x81, 3, b'a', b'b', b'c'], 0);
        let second = masked(b"{\"b\":", false, 1);
        log.feed(Direction::Client, &second[..second.len() - 1], 0);
        let frames = log.take_upto(0);
        assert_eq!(frames.len(), 2);
        assert_eq!((frames[0].wire_bytes, frames[0].payload_bytes), (13, 7));
        assert_eq!(
            (frames[1].dir, frames[1].wire_bytes),
            (Direction::Server, 5)
        );
        assert_eq!(log.started(), 2);
        let (n, bytes) = log.take_unfinished().unwrap();
        assert_eq!((n, bytes.as_slice()), (1, &b"{\"b\""[..]));
        let rest = log.take_all();
        assert_eq!(rest.len(), 1);
        assert!(!rest[0].fin);
        assert_eq!(rest[0].payload_bytes, 4);
    }
}
