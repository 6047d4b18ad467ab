//! One tracked TCP connection: both reassembly streams, the HTTP state, what the
//! payload turned out to be (HTTP, TLS), and segments held back because they acknowledge
//! bytes of the other direction that the capture has not shown yet.

use std::net::SocketAddr;

use super::http::HttpConn;
use super::ip::Segment;
use super::message::Stamp;
use super::tcp::{Chunk, Stream};
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
    pub(super) last: Stamp,
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
    pub(super) at: Stamp,
}

impl Held {
    pub(super) fn new(s: &Segment<'_>, dir: usize, at: Stamp) -> Self {
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

#[allow(clippy::too_many_arguments)]
pub(super) fn on_chunk(
    c: Chunk<'_>,
    dir: usize,
    kind: &mut Kind,
    hello: &mut Option<Hello>,
    bytes: &mut u64,
    http: &mut HttpConn,
    ids: &mut u64,
    out: &mut Vec<Exchange>,
) {
    match c {
        Chunk::Data(d, ts, frame) => {
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
                _ => http.data(dir, d, Stamp { ts, frame }, ids, out),
            }
        }
        Chunk::Gap(n, ts, frame) => {
            if *kind != Kind::Tls {
                http.gap(dir, n, Stamp { ts, frame }, ids, out);
            }
        }
    }
}
