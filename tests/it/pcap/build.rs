//! Test-built captures: TCP segments of a flow made with etherparse's `PacketBuilder`,
//! framed for a link type, written as pcap or pcapng by hand (formats from the
//! tcpdump.org pcap and IETF pcapng drafts).

use std::net::{IpAddr, SocketAddr};

use etherparse::PacketBuilder;

pub const ETHERNET: u32 = 1;
pub const NULL: u32 = 0;
pub const LOOP: u32 = 108;
pub const RAW: u32 = 101;
pub const SLL: u32 = 113;
pub const SLL2: u32 = 276;
/// Ethernet with two VLAN tags (QinQ), written with link type Ethernet.
pub const QINQ: u32 = 0x1_0000;

/// One TCP segment, before framing.
#[derive(Clone, Debug)]
pub struct Seg {
    pub from_client: bool,
    pub seq: u32,
    pub ack: Option<u32>,
    pub syn: bool,
    pub fin: bool,
    pub rst: bool,
    pub payload: Vec<u8>,
}

/// A TCP connection being scripted: tracks both sides' next sequence numbers.
pub struct Flow {
    pub client: SocketAddr,
    pub server: SocketAddr,
    pub cseq: u32,
    pub sseq: u32,
}

impl Flow {
    pub fn new(client: &str, server: &str, cisn: u32, sisn: u32) -> Flow {
        Flow {
            client: client.parse().unwrap(),
            server: server.parse().unwrap(),
            cseq: cisn,
            sseq: sisn,
        }
    }

    fn seg(&self, from_client: bool, payload: &[u8]) -> Seg {
        let (seq, ack) = if from_client {
            (self.cseq, self.sseq)
        } else {
            (self.sseq, self.cseq)
        };
        Seg {
            from_client,
            seq,
            ack: Some(ack),
            syn: false,
            fin: false,
            rst: false,
            payload: payload.to_vec(),
        }
    }

    /// SYN, SYN-ACK, ACK.
    pub fn handshake(&mut self) -> Vec<Seg> {
        let mut syn = self.seg(true, b"");
        syn.syn = true;
        syn.ack = None;
        self.cseq = self.cseq.wrapping_add(1);
        let mut synack = self.seg(false, b"");
        synack.syn = true;
        self.sseq = self.sseq.wrapping_add(1);
        let ack = self.seg(true, b"");
        vec![syn, synack, ack]
    }

    /// `data` from one side cut into segments of at most `mss` bytes.
    pub fn send(&mut self, from_client: bool, data: &[u8], mss: usize) -> Vec<Seg> {
        let mut out = Vec::new();
        for piece in data.chunks(mss.max(1)) {
            out.push(self.seg(from_client, piece));
            let n = piece.len() as u32;
            if from_client {
                self.cseq = self.cseq.wrapping_add(n);
            } else {
                self.sseq = self.sseq.wrapping_add(n);
            }
        }
        out
    }

    /// A bare acknowledgment from one side of everything the other side sent so far.
    pub fn ack(&self, from_client: bool) -> Seg {
        self.seg(from_client, b"")
    }

    /// FIN from one side.
    pub fn fin(&mut self, from_client: bool) -> Seg {
        let mut s = self.seg(from_client, b"");
        s.fin = true;
        if from_client {
            self.cseq = self.cseq.wrapping_add(1);
        } else {
            self.sseq = self.sseq.wrapping_add(1);
        }
        s
    }

    /// The IP packet of a segment.
    pub fn ip_packet(&self, s: &Seg) -> Vec<u8> {
        let (src, dst) = if s.from_client {
            (self.client, self.server)
        } else {
            (self.server, self.client)
        };
        let b = match (src.ip(), dst.ip()) {
            (IpAddr::V4(a), IpAddr::V4(b)) => PacketBuilder::ipv4(a.octets(), b.octets(), 64),
            (IpAddr::V6(a), IpAddr::V6(b)) => PacketBuilder::ipv6(a.octets(), b.octets(), 64),
            _ => panic!("mixed address families"),
        };
        let mut b = b.tcp(src.port(), dst.port(), s.seq, 65535);
        if s.syn {
            b = b.syn();
        }
        if let Some(a) = s.ack {
            b = b.ack(a);
        }
        if s.fin {
            b = b.fin();
        }
        if s.rst {
            b = b.rst();
        }
        if !s.payload.is_empty() {
            b = b.psh();
        }
        let mut out = Vec::with_capacity(b.size(s.payload.len()));
        b.write(&mut out, &s.payload).unwrap();
        out
    }
}

/// Frame an IP packet for a link type.
pub fn frame(link: u32, ip: &[u8]) -> Vec<u8> {
    let v6 = ip[0] >> 4 == 6;
    let ethertype: u16 = if v6 { 0x86dd } else { 0x0800 };
    let mut f = Vec::new();
    match link {
        ETHERNET => {
            f.extend_from_slice(&[2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2]);
            f.extend_from_slice(&ethertype.to_be_bytes());
        }
        QINQ => {
            f.extend_from_slice(&[2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2]);
            f.extend_from_slice(&[0x88, 0xa8, 0x00, 0x64, 0x81, 0x00, 0x00, 0xc8]);
            f.extend_from_slice(&ethertype.to_be_bytes());
        }
        NULL => f.extend_from_slice(&(if v6 { 30u32 } else { 2 }).to_le_bytes()),
        LOOP => f.extend_from_slice(&(if v6 { 24u32 } else { 2 }).to_be_bytes()),
        SLL => {
            f.extend_from_slice(&[0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
            f.extend_from_slice(&ethertype.to_be_bytes());
        }
        SLL2 => {
            f.extend_from_slice(&ethertype.to_be_bytes());
            f.extend_from_slice(&[0, 0, 0, 0, 0, 1, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0]);
        }
        RAW => {}
        other => panic!("no framing for link type {other}"),
    }
    f.extend_from_slice(ip);
    f
}

/// A captured packet: time (ns), bytes kept, length on the wire.
pub struct Pkt {
    pub ts_ns: i64,
    pub data: Vec<u8>,
    pub orig_len: u32,
}

/// Frame segments of `flow` for `link`, 1 ms apart from `t0_ns`, cut to `snaplen` bytes.
pub fn packets(flow: &Flow, segs: &[Seg], link: u32, snaplen: usize, t0_ns: i64) -> Vec<Pkt> {
    segs.iter()
        .enumerate()
        .map(|(i, s)| {
            let f = frame(link, &flow.ip_packet(s));
            Pkt {
                ts_ns: t0_ns + i as i64 * 1_000_000,
                orig_len: f.len() as u32,
                data: f[..f.len().min(snaplen)].to_vec(),
            }
        })
        .collect()
}

/// A classic pcap file (little-endian, micro- or nanosecond timestamps).
pub fn pcap(link: u32, nanos: bool, pkts: &[Pkt]) -> Vec<u8> {
    let link = if link == QINQ { ETHERNET } else { link };
    let mut out = Vec::new();
    let magic: u32 = if nanos { 0xa1b2_3c4d } else { 0xa1b2_c3d4 };
    out.extend_from_slice(&magic.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&0i32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&262_144u32.to_le_bytes());
    out.extend_from_slice(&link.to_le_bytes());
    for p in pkts {
        let sec = p.ts_ns.div_euclid(1_000_000_000);
        let frac = p.ts_ns.rem_euclid(1_000_000_000);
        let frac = if nanos { frac } else { frac / 1000 };
        out.extend_from_slice(&(sec as u32).to_le_bytes());
        out.extend_from_slice(&(frac as u32).to_le_bytes());
        out.extend_from_slice(&(p.data.len() as u32).to_le_bytes());
        out.extend_from_slice(&p.orig_len.to_le_bytes());
        out.extend_from_slice(&p.data);
    }
    out
}

fn pad4(v: &mut Vec<u8>) {
    while v.len() % 4 != 0 {
        v.push(0);
    }
}

fn block(kind: u32, body: &[u8]) -> Vec<u8> {
    let mut b = body.to_vec();
    pad4(&mut b);
    let len = (b.len() + 12) as u32;
    let mut out = Vec::new();
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&b);
    out.extend_from_slice(&len.to_le_bytes());
    out
}

/// A pcapng section with one interface of `link` (microseconds) whose packets are
/// Enhanced Packet Blocks, or Simple Packet Blocks (no timestamp) where `simple` is set.
pub fn pcapng_simple(link: u32, pkts: &[(bool, &Pkt)]) -> Vec<u8> {
    let mut out = pcapng(&[(link, 6)], &[]);
    for (simple, p) in pkts {
        if *simple {
            // SPB (block type 3): original length, then the packet data.
            let mut spb = p.orig_len.to_le_bytes().to_vec();
            spb.extend_from_slice(&p.data);
            out.extend(block(3, &spb));
        } else {
            out.extend(epb(0, 6, p));
        }
    }
    out
}

/// A pcapng section with interfaces `(link type, if_tsresol)` and packets `(interface,
/// packet)`; timestamps are written in each interface's resolution (10^-tsresol s).
pub fn pcapng(ifaces: &[(u32, u8)], pkts: &[(u32, &Pkt)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1a2b_3c4du32.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    out.extend(block(0x0a0d_0d0a, &shb));
    for (link, res) in ifaces {
        let mut idb = Vec::new();
        idb.extend_from_slice(&(*link as u16).to_le_bytes());
        idb.extend_from_slice(&0u16.to_le_bytes());
        idb.extend_from_slice(&0u32.to_le_bytes());
        // if_tsresol option (code 9, length 1), then opt_endofopt.
        idb.extend_from_slice(&[9, 0, 1, 0, *res, 0, 0, 0, 0, 0, 0, 0]);
        out.extend(block(1, &idb));
    }
    for (iface, p) in pkts {
        out.extend(epb(*iface, ifaces[*iface as usize].1, p));
    }
    out
}

/// An Enhanced Packet Block of interface `iface`, time in units of 10^-`res` s.
fn epb(iface: u32, res: u8, p: &Pkt) -> Vec<u8> {
    let units = (p.ts_ns as i128 * 10i128.pow(res as u32) / 1_000_000_000) as u64;
    let mut epb = Vec::new();
    epb.extend_from_slice(&iface.to_le_bytes());
    epb.extend_from_slice(&((units >> 32) as u32).to_le_bytes());
    epb.extend_from_slice(&(units as u32).to_le_bytes());
    epb.extend_from_slice(&(p.data.len() as u32).to_le_bytes());
    epb.extend_from_slice(&p.orig_len.to_le_bytes());
    epb.extend_from_slice(&p.data);
    block(6, &epb)
}
