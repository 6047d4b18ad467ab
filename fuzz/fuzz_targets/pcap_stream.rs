//! Fuzz target over reassembly + HTTP parsing (`cargo +nightly fuzz run pcap_stream`).
//!
//! Mode 0 (first byte even): the rest is a capture file, read through the file reader,
//! link layers, reassembly and HTTP. Mode 1: the rest is `seed (8 bytes) | client bytes
//! | 0xff 0xfe | server bytes`; both streams are cut into segments of random size,
//! reordered, duplicated, truncated (snaplen) or dropped (gaps) as the seed decides, then
//! fed as raw-IP packets, so the HTTP parser meets arbitrary bytes through every
//! reassembly path. With bit 1 of the first byte set as well, a WebSocket upgrade (bit 2:
//! accepting permessage-deflate) comes first, so the bytes are read as WebSocket frames.
//! The property: no panic, and every exchange's frames are in order.

#![no_main]

use agentwire::capture::pcap::{read_packets, Config, Extractor, Packet};
use etherparse::PacketBuilder;
use libfuzzer_sys::fuzz_target;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn check(ex: Extractor) {
    let (xs, _) = ex.finish();
    for x in xs {
        if let Some((a, b)) = x.source.frames {
            assert!(a <= b);
        }
        if let Some(d) = x.duration_us() {
            assert!(d >= 0);
        }
    }
}

const UPGRADE: &[u8] = b"GET /v1/responses HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
const SWITCH: &[u8] = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
const SWITCH_DEFLATE: &[u8] = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n";

fn stream_mode(data: &[u8], mode: u8) {
    if data.len() < 8 {
        return;
    }
    let mut rng = Rng(u64::from_le_bytes(data[..8].try_into().unwrap()) | 1);
    let rest = &data[8..];
    let split = rest.windows(2).position(|w| w == [0xff, 0xfe]);
    let (client, server) = match split {
        Some(i) => (&rest[..i], &rest[i + 2..]),
        None => rest.split_at(rest.len() / 2),
    };
    let (mut c, mut s) = (Vec::new(), Vec::new());
    if mode & 2 != 0 {
        c.extend_from_slice(UPGRADE);
        s.extend_from_slice(if mode & 4 != 0 { SWITCH_DEFLATE } else { SWITCH });
    }
    c.extend_from_slice(client);
    s.extend_from_slice(server);
    let (client, server) = (&c[..], &s[..]);
    let (cisn, sisn) = (rng.next() as u32, rng.next() as u32);
    // (from_client, seq, payload, flags: 1 syn, 2 fin, 4 rst)
    let mut segs: Vec<(bool, u32, Vec<u8>, u8)> = vec![(true, cisn, vec![], 1), (false, sisn, vec![], 1)];
    let (mut ci, mut si) = (0usize, 0usize);
    while ci < client.len() || si < server.len() {
        let from_client = si >= server.len() || (ci < client.len() && rng.below(2) == 0);
        let (buf, pos, isn) = if from_client { (client, &mut ci, cisn) } else { (server, &mut si, sisn) };
        let n = 1 + rng.below(64) as usize;
        let end = (*pos + n).min(buf.len());
        let seq = isn.wrapping_add(1).wrapping_add(*pos as u32);
        segs.push((from_client, seq, buf[*pos..end].to_vec(), 0));
        *pos = end;
    }
    segs.push((true, cisn.wrapping_add(1).wrapping_add(client.len() as u32), vec![], 2));
    segs.push((false, sisn.wrapping_add(1).wrapping_add(server.len() as u32), vec![], if rng.below(4) == 0 { 4 } else { 2 }));
    // Disorder: swaps, duplicates, drops.
    for _ in 0..rng.below(segs.len() as u64) {
        let len = segs.len() as u64;
        let (a, b) = (rng.below(len) as usize, rng.below(len) as usize);
        match rng.below(8) {
            0..=4 => segs.swap(a, b),
            5 | 6 => {
                let s = segs[a].clone();
                segs.insert(b, s);
            }
            _ => {
                segs.remove(a.min(segs.len() - 1));
            }
        }
        if segs.is_empty() {
            return;
        }
    }
    let mut ex = Extractor::new(Config::default());
    let (c, s) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    for (i, (from_client, seq, payload, flags)) in segs.iter().enumerate() {
        let (src, dst, sp, dp, ack) = if *from_client {
            (c, s, 40000, 80, sisn.wrapping_add(1))
        } else {
            (s, c, 80, 40000, cisn.wrapping_add(1))
        };
        let mut b = PacketBuilder::ipv4(src, dst, 64).tcp(sp, dp, *seq, 65535);
        if flags & 1 != 0 {
            b = b.syn();
        }
        if !(*from_client && flags & 1 != 0) {
            b = b.ack(ack);
        }
        if flags & 2 != 0 {
            b = b.fin();
        }
        if flags & 4 != 0 {
            b = b.rst();
        }
        let mut pkt = Vec::new();
        b.write(&mut pkt, payload).unwrap();
        let orig = pkt.len() as u32;
        if rng.below(16) == 0 {
            pkt.truncate(40 + rng.below(payload.len() as u64 + 1) as usize);
        }
        ex.packet(&Packet { frame: i as u64 + 1, ts_ns: Some(i as i64 * 1000), link_type: 101, data: &pkt, orig_len: orig });
    }
    check(ex);
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else { return };
    if mode & 1 == 0 {
        let mut ex = Extractor::new(Config::default());
        let _ = read_packets(rest, "fuzz.pcap", &mut |p| ex.packet(p));
        check(ex);
    } else {
        stream_mode(rest, mode);
    }
});
