//! One tracked TCP connection: both reassembly streams, the HTTP state, what the
//! payload turned out to be (HTTP, TLS), and segments held back because they acknowledge
//! bytes of the other direction that the capture has not shown yet.

use std::net::SocketAddr;

use super::http::HttpConn;
use super::ip::Segment;
use super::message::Stamp;
use super::tcp::{Chunk, Meta, Stream};
use super::tls::{self, Hello};
use crate::trace::Exchange;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Unknown,
    Http,
    Tls,
}

pub(super) struct Conn {
    pub(super) streams: [Stream; 2],
    pub(super) http: HttpConn,
    pub(super) kind: Kind,
    pub(super) hello: Option<Hello>,
    pub(super) bytes: u64,
    pub(super) ended: [bool; 2],
    pub(super) last: Meta,
    pub(super) held: Vec<Held>,
    pub(super) held_bytes: usize,
}

/// Most payload bytes held back per connection waiting for the bytes they acknowledge.
pub const MAX_HELD: usize = 4 << 20;

/// A segment held back until the other direction catches up with its acknowledgment.
pub(super) struct Held {
    pub(super) dir: usize,
    pub(super) seq: u32,
    pub(super) ack_no: u32,
    pub(super) syn: bool,
    pub(super) fin: bool,
    pub(super) payload: Vec<u8>,
    pub(super) missing: u32,
    pub(super) src: SocketAddr,
    pub(super) dst: SocketAddr,
    pub(super) at: Meta,
}

impl Held {
    pub(super) fn new(s: &Segment<'_>, dir: usize, at: Meta) -> Self {
        Held {
            dir,
            seq: s.seq,
            ack_no: s.ack_no,
            syn: s.syn,
            fin: s.fin,
            payload: s.payload.to_vec(),
            missing: s.missing,
            src: s.src,
            dst: s.dst,
            at,
        }
    }

    pub(super) fn segment(&self) -> Segment<'_> {
        Segment {
            src: self.src,
            dst: self.dst,
            seq: self.seq,
            ack_no: self.ack_no,
            syn: self.syn,
            ack: true,
            fin: self.fin,
            rst: false,
            payload: &self.payload,
            missing: self.missing,
        }
    }
}

impl Conn {
    /// Run `f` on the stream of direction `dir`; what it delivers goes to the TLS check
    /// or the HTTP layer, with each packet's acknowledgment turned into an offset of the
    /// other direction's stream. Finished exchanges go to `out`.
    pub(super) fn with_stream(
        &mut self,
        dir: usize,
        ids: &mut u64,
        out: &mut Vec<Exchange>,
        f: impl FnOnce(&mut Stream, &mut dyn FnMut(Chunk<'_>)),
    ) {
        let Conn {
            streams,
            http,
            kind,
            hello,
            bytes,
            ..
        } = self;
        let [a, b] = streams;
        let (this, other) = if dir == 0 { (a, &*b) } else { (b, &*a) };
        f(this, &mut |c| {
            let (Chunk::Data { at, .. } | Chunk::Gap { at, .. }) = &c;
            let stamp = Stamp {
                ts: at.ts,
                frame: at.frame,
                ack: at.ack.and_then(|a| other.ack_offset(a)),
            };
            on_chunk(c, dir, stamp, kind, hello, bytes, http, ids, out)
        });
    }
}

#[allow(clippy::too_many_arguments)]
fn on_chunk(
    c: Chunk<'_>,
    dir: usize,
    at: Stamp,
    kind: &mut Kind,
    hello: &mut Option<Hello>,
    bytes: &mut u64,
    http: &mut HttpConn,
    ids: &mut u64,
    out: &mut Vec<Exchange>,
) {
    match c {
        Chunk::Data { bytes: d, off, .. } => {
            *bytes += d.len() as u64;
            if *kind == Kind::Unknown {
                if tls::looks_like_tls(d) {
                    *kind = Kind::Tls;
                } else {
                    *kind = Kind::Http;
                }
            }
            match *kind {
                Kind::Tls => {
                    if dir == 0 && hello.is_none() {
                        *hello = Some(tls::client_hello(d));
                    }
                }
                _ => http.data(dir, d, off, at, ids, out),
            }
        }
        Chunk::Gap { len, off, .. } => {
            if *kind != Kind::Tls {
                http.gap(dir, len, off, at, ids, out);
            }
        }
    }
}
