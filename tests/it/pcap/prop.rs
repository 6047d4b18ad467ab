//! Property: however a known HTTP conversation is cut into segments, reordered and
//! duplicated, reassembly yields the original bytes.

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
