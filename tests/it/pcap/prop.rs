//! Properties: however a known HTTP conversation is cut into segments, reordered and
//! duplicated, reassembly yields the original bytes; and however much of its start the
//! capture misses and whichever whole messages it loses, every message captured whole is
//! recovered and a response is paired with its own request or with none.

use proptest::prelude::*;

use super::build::{self, Flow, Seg};
use super::extract_bytes;
use super::synth::{json_body, request, response};

/// Request bodies 1 and 2, response 1 body, response 2 on the wire, response 2 body.
type Conversation = (Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>, Vec<u8>);

fn conversation() -> Conversation {
    let (b1, b2) = (json_body(3000, 1), json_body(1200, 2));
    let r1 = json_body(2500, 3);
    let chunks: [&[u8]; 3] = [b"{\"part\":", b"\"one\",", b"\"end\":true}"];
    let mut r2 = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
    for c in chunks {
        r2.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
        r2.extend_from_slice(c);
        r2.extend_from_slice(b"\r\n");
    }
    r2.extend_from_slice(b"0\r\n\r\n");
    (b1, b2, r1, r2, chunks.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn segmentation_reordering_duplication_preserve_bytes(
        mss in proptest::collection::vec(1usize..1600, 4),
        order in proptest::collection::vec(any::<u64>(), 64),
        dups in proptest::collection::vec((any::<u16>(), any::<u16>()), 0..8),
        isn in any::<(u32, u32)>(),
    ) {
        let (b1, b2, r1, r2, r2_body) = conversation();
        let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:80", isn.0, isn.1);
        let mut segs = f.handshake();
        let mut data: Vec<Seg> = Vec::new();
        data.extend(f.send(true, &request(&b1), mss[0]));
        data.extend(f.send(false, &response(&r1), mss[1]));
        data.extend(f.send(true, &request(&b2), mss[2]));
        data.extend(f.send(false, &r2, mss[3]));
        // Random permutation (a key per segment), then duplicates at random places.
        let mut keyed: Vec<(u64, Seg)> =
            data.into_iter().enumerate().map(|(i, s)| (order[i % order.len()] ^ i as u64, s)).collect();
        keyed.sort_by_key(|k| k.0);
        let mut shuffled: Vec<Seg> = keyed.into_iter().map(|k| k.1).collect();
        for (from, to) in dups {
            let s = shuffled[from as usize % shuffled.len()].clone();
            let at = to as usize % (shuffled.len() + 1);
            shuffled.insert(at, s);
        }
        segs.extend(shuffled);
        segs.push(f.fin(true));
        segs.push(f.fin(false));
        let pcap = build::pcap(build::ETHERNET, false, &build::packets(&f, &segs, build::ETHERNET, 1 << 20, 0));
        let (xs, _) = extract_bytes(&pcap);
        prop_assert_eq!(xs.len(), 2);
        prop_assert!(xs.iter().all(|x| x.error.is_none()), "{:?}", xs.iter().map(|x| &x.error).collect::<Vec<_>>());
        prop_assert_eq!(&xs[0].request.body.bytes, &b1);
        prop_assert_eq!(&xs[0].response.as_ref().unwrap().body.bytes, &r1);
        prop_assert_eq!(&xs[1].request.body.bytes, &b2);
        prop_assert_eq!(&xs[1].response.as_ref().unwrap().body.bytes, &r2_body);
    }
}

/// Response `i` of the gap property: a JSON body, sized and chunked or not.
fn reply(i: usize, chunked: bool) -> (Vec<u8>, Vec<u8>) {
    let body = json_body(900 + 700 * i, 40 + i as u8);
    if !chunked {
        return (response(&body), body);
    }
    let mut r =
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
            .to_vec();
    for piece in body.chunks(500) {
        r.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        r.extend_from_slice(piece);
        r.extend_from_slice(b"\r\n");
    }
    r.extend_from_slice(b"0\r\n\r\n");
    (r, body)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A capture that starts anywhere in the connection and loses whole messages: every
    /// message captured whole is recovered, a response with its own request or none.
    #[test]
    fn dropped_prefix_and_whole_message_gaps_never_mispair(
        k in 2usize..6,
        mss in proptest::collection::vec(100usize..1600, 2),
        chunked in proptest::collection::vec(any::<bool>(), 6),
        prefix in any::<u16>(),
        dropped in proptest::collection::vec(any::<bool>(), 12),
        swaps in proptest::collection::vec(any::<u16>(), 0..6),
        dups in proptest::collection::vec(any::<u16>(), 0..4),
        isn in any::<(u32, u32)>(),
    ) {
        let shuffle = Shuffle { swaps, dups };
        gaps_never_mispair(k, &mss, &chunked, prefix, &dropped, &shuffle, isn)?;
    }
}

/// Capture-order noise on top of the losses: neighbouring captured segments swapped,
/// segments captured twice (positions modulo the count). A swap never puts an
/// acknowledgment before the data it acknowledges: a capture point on the path sees data
/// before the acknowledgment the data caused (a direction seen without its SYN has no
/// other clue to its start; the other property covers any order when the SYN is seen).
struct Shuffle {
    swaps: Vec<u16>,
    dups: Vec<u16>,
}

/// The body of the property above: `k` exchanges, requests and responses cut at
/// `mss`, responses `chunked`, the first `prefix` segments (modulo their count) and the
/// messages marked `dropped` not captured, the rest shuffled a little.
fn gaps_never_mispair(
    k: usize,
    mss: &[usize],
    chunked: &[bool],
    prefix: u16,
    dropped: &[bool],
    shuffle: &Shuffle,
    isn: (u32, u32),
) -> Result<(), TestCaseError> {
    let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:80", isn.0, isn.1);
    // (segment, message index: 2i = request i, 2i + 1 = response i)
    let mut all: Vec<(Seg, Option<usize>)> = f.handshake().into_iter().map(|s| (s, None)).collect();
    let mut bodies = Vec::new();
    for (i, &chunked) in chunked.iter().enumerate().take(k) {
        let req = json_body(300 + 200 * i, i as u8);
        let (wire, body) = reply(i, chunked);
        all.extend(
            f.send(true, &request(&req), mss[0])
                .into_iter()
                .map(|s| (s, Some(2 * i))),
        );
        all.extend(
            f.send(false, &wire, mss[1])
                .into_iter()
                .map(|s| (s, Some(2 * i + 1))),
        );
        all.push((f.ack(true), None));
        bodies.push((req, body));
    }
    all.push((f.fin(true), None));
    all.push((f.fin(false), None));
    let start = prefix as usize % (all.len() + 1);
    // Drop whole messages; never the only two messages left (nothing to check).
    let gone = |m: usize| dropped[m % dropped.len()] && m % 3 != 0;
    let captured: Vec<&(Seg, Option<usize>)> = all[start..]
        .iter()
        .filter(|(_, m)| m.is_none_or(|m| !gone(m)))
        .collect();
    let whole = |m: usize| {
        let n = all.iter().filter(|(_, x)| *x == Some(m)).count();
        captured.iter().filter(|(_, x)| *x == Some(m)).count() == n
    };
    let mut segs: Vec<Seg> = captured.iter().map(|(s, _)| s.clone()).collect();
    if segs.len() > 1 {
        for &at in &shuffle.swaps {
            let i = at as usize % (segs.len() - 1);
            let (a, b) = (&segs[i], &segs[i + 1]);
            let len = a.payload.len() as u32 + u32::from(a.fin || a.syn);
            let acks_a = len > 0
                && a.from_client != b.from_client
                && b.ack
                    .is_some_and(|x| x.wrapping_sub(a.seq).wrapping_sub(1) < (1 << 30));
            if !acks_a {
                segs.swap(i, i + 1);
            }
        }
        for &at in &shuffle.dups {
            let i = at as usize % segs.len();
            segs.insert(i, segs[i].clone());
        }
    }
    let pcap = build::pcap(
        build::ETHERNET,
        false,
        &build::packets(&f, &segs, build::ETHERNET, 1 << 20, 0),
    );
    let (xs, _) = extract_bytes(&pcap);
    let req_of = |b: &[u8]| bodies.iter().position(|(r, _)| r == b);
    let resp_of = |b: &[u8]| bodies.iter().position(|(_, r)| r == b);
    // Never a response with another request's request.
    for x in &xs {
        let Some(r) = x.response.as_ref() else {
            continue;
        };
        if let (Some(i), Some(j)) = (req_of(&x.request.body.bytes), resp_of(&r.body.bytes)) {
            prop_assert_eq!(i, j, "request {} paired with response {}", i, j);
        }
    }
    for (i, (req, body)) in bodies.iter().enumerate() {
        let (q, r) = (whole(2 * i), whole(2 * i + 1));
        let x = xs.iter().find(|x| {
            (q && x.request.body.bytes == *req)
                || (!q && r && x.response.as_ref().is_some_and(|p| p.body.bytes == *body))
        });
        match (q, r) {
            (false, false) => {}
            (true, true) => {
                let x = x.expect("a whole exchange is recovered");
                prop_assert_eq!(
                    &x.response.as_ref().expect("with its response").body.bytes,
                    body,
                    "exchange {}",
                    i
                );
                prop_assert!(x.error.is_none(), "exchange {}: {:?}", i, x.error);
            }
            (true, false) => {
                let x = x.expect("a whole request is recovered");
                prop_assert!(x.response.is_none(), "request {} got a response", i);
            }
            (false, true) => {
                let x = x.expect("a whole response is recovered");
                prop_assert!(
                    !x.request.captured(),
                    "response {} paired with a request",
                    i
                );
            }
        }
    }
    Ok(())
}
