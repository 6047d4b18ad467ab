//! Test-built captures, one per hard case, each asserting the exact extracted bodies.

use std::io::Write;

use agentwire::api::response_body;
use agentwire::capture::pcap::{read_packets, PcapError};
use agentwire::trace::Exchange;

use super::build::{self, Flow, Pkt, Seg};
use super::extract_bytes;

const T0: i64 = 1_700_000_000_000_000_000;

pub fn request(body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "POST /v1/messages?beta=true HTTP/1.1\r\nHost: api\r\nx-api-key: sk-ant-api03-secret\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body);
    r
}

pub fn response(body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body);
    r
}

fn chunked(head: &str, chunks: &[&[u8]], trailer: &str) -> Vec<u8> {
    let mut r = format!("{head}transfer-encoding: chunked\r\n\r\n").into_bytes();
    for c in chunks {
        r.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
        r.extend_from_slice(c);
        r.extend_from_slice(b"\r\n");
    }
    r.extend_from_slice(format!("0\r\n{trailer}\r\n").as_bytes());
    r
}

pub fn json_body(n: usize, seed: u8) -> Vec<u8> {
    let mut b = b"{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"".to_vec();
    b.extend((0..n).map(|i| b'a' + ((i as u8).wrapping_mul(7).wrapping_add(seed)) % 26));
    b.extend_from_slice(b"\"}]}");
    b
}

/// Capture of one flow's segments on Ethernet, microsecond pcap.
fn cap(flow: &Flow, segs: &[Seg]) -> Vec<u8> {
    build::pcap(
        build::ETHERNET,
        false,
        &build::packets(flow, segs, build::ETHERNET, 1 << 20, T0),
    )
}

/// Handshake, one request and its response, FINs.
pub fn exchange_segs(flow: &mut Flow, req: &[u8], resp: &[u8], mss: usize) -> Vec<Seg> {
    let mut s = flow.handshake();
    s.extend(flow.send(true, req, mss));
    s.extend(flow.send(false, resp, mss));
    s.push(flow.fin(true));
    s.push(flow.fin(false));
    s
}

fn bodies(x: &Exchange) -> (Vec<u8>, Vec<u8>) {
    (
        x.request.body.bytes.clone(),
        x.response
            .as_ref()
            .map(|r| r.body.bytes.clone())
            .unwrap_or_default(),
    )
}

#[test]
fn every_link_layer_and_both_ip_versions() {
    let req = json_body(3000, 1);
    let resp = json_body(5000, 2);
    for (client, server) in [
        ("10.0.0.1:40000", "10.0.0.2:8080"),
        ("[fd00::1]:40000", "[fd00::2]:8080"),
    ] {
        for link in [
            build::ETHERNET,
            build::QINQ,
            build::NULL,
            build::LOOP,
            build::SLL,
            build::SLL2,
            build::RAW,
        ] {
            let mut f = Flow::new(client, server, 1000, 2000);
            let segs = exchange_segs(&mut f, &request(&req), &response(&resp), 1448);
            let pcap = build::pcap(link, true, &build::packets(&f, &segs, link, 1 << 20, T0));
            let (xs, s) = extract_bytes(&pcap);
            assert_eq!(xs.len(), 1, "link {link} {client}");
            assert_eq!(
                bodies(&xs[0]),
                (req.clone(), resp.clone()),
                "link {link} {client}"
            );
            assert_eq!(xs[0].source.client.as_deref(), Some(client));
            assert_eq!(xs[0].source.frames, Some((4, 4 + 3 + 4 - 1)));
            assert!(xs[0].error.is_none());
            assert_eq!(s.connections, 1);
            // Secrets never leave the extractor.
            let key = xs[0]
                .request
                .headers
                .iter()
                .find(|h| h.0 == "x-api-key")
                .unwrap();
            assert!(key.1.starts_with("[redacted sk-ant-api03 fp="), "{}", key.1);
        }
    }
}

#[test]
fn pcapng_interfaces_with_own_link_type_and_resolution_and_gzip() {
    let mut a = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 1, 2);
    let mut b = Flow::new("10.0.0.3:40001", "10.0.0.4:80", 3, 4);
    let sa = exchange_segs(
        &mut a,
        &request(b"{\"a\":1}"),
        &response(b"{\"r\":1}"),
        1448,
    );
    let sb = exchange_segs(
        &mut b,
        &request(b"{\"b\":2}"),
        &response(b"{\"r\":2}"),
        1448,
    );
    // Interface 0: Ethernet, nanoseconds; interface 1: raw IP, microseconds.
    let pa = build::packets(&a, &sa, build::ETHERNET, 1 << 20, T0 + 123_456_789);
    let pb = build::packets(&b, &sb, build::RAW, 1 << 20, T0 + 500_000_000);
    let mut pkts: Vec<(u32, &Pkt)> = pa.iter().map(|p| (0, p)).collect();
    pkts.extend(pb.iter().map(|p| (1, p)));
    let ng = build::pcapng(&[(build::ETHERNET, 9), (build::RAW, 6)], &pkts);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&ng).unwrap();
    for file in [ng.clone(), gz.finish().unwrap()] {
        let (xs, _) = extract_bytes(&file);
        assert_eq!(xs.len(), 2);
        assert_eq!(xs[0].request.body.bytes, b"{\"a\":1}");
        assert_eq!(xs[1].request.body.bytes, b"{\"b\":2}");
        // Request starts at packet 4 of each flow (3 ms after its first packet).
        let ns = |x: &Exchange| x.started_at.timestamp_nanos_opt().unwrap();
        assert_eq!(ns(&xs[0]), T0 + 123_456_789 + 3_000_000);
        assert_eq!(ns(&xs[1]), T0 + 500_000_000 + 3_000_000);
    }
}

#[test]
fn bad_files_name_the_file_and_offset_and_keep_what_came_before() {
    let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 1, 2);
    let segs = exchange_segs(&mut f, &request(b"{}"), &response(b"{}"), 1448);
    let pkts = build::packets(&f, &segs, build::ETHERNET, 1 << 20, T0);
    let whole = build::pcap(build::ETHERNET, false, &pkts);
    let last = 16 + pkts.last().unwrap().data.len();
    let cut = &whole[..whole.len() - 5];
    let mut n = 0;
    let e = read_packets(cut, "cut.pcap", &mut |_| n += 1).unwrap_err();
    assert_eq!(n, pkts.len() - 1);
    let offset = (whole.len() - last) as u64;
    assert!(
        matches!(e, PcapError::Truncated { offset: o, .. } if o == offset),
        "{e}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("cut.pcap") && msg.contains(&format!("byte {offset}")),
        "{msg}"
    );
    let e = read_packets(&b"not a capture file"[..], "x.txt", &mut |_| {}).unwrap_err();
    assert!(
        e.to_string().contains("x.txt is not a pcap or pcapng file"),
        "{e}"
    );
    // An unknown link type is counted per link type, not fatal.
    let (xs, s) = extract_bytes(&build::pcap(147, false, &pkts));
    assert!(xs.is_empty());
    assert_eq!(s.unknown_link_types.get(&147), Some(&(pkts.len() as u64)));
}

#[test]
fn out_of_order_duplicates_and_overlaps_first_copy_wins() {
    let body = json_body(6000, 3);
    let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 5000, 9000);
    let mut segs = f.handshake();
    let data = f.send(true, &request(&body), 1000);
    // 0, 2, 1, 1 again, then a retransmission overlapping 3 and 4 with other bytes, 3, 4...
    let mut bad = data[3].clone();
    bad.payload.extend_from_slice(&data[4].payload[..100]);
    for b in &mut bad.payload[..50] {
        *b = b'#';
    }
    let order = [0, 2, 1, 1];
    segs.extend(order.iter().map(|&i| data[i].clone()));
    segs.push(data[3].clone());
    segs.push(bad);
    segs.extend(data[4..].iter().cloned());
    segs.extend(f.send(false, &response(b"{}"), 1000));
    let (xs, s) = extract_bytes(&cap(&f, &segs));
    assert_eq!(xs.len(), 1);
    assert_eq!(xs[0].request.body.bytes, body);
    assert_eq!(s.conflicting_bytes, 50);
    assert_eq!(s.retransmitted_bytes, 1000 + 1000 + 100);
    assert!(s.out_of_order_segments >= 1);
}

#[test]
fn sequence_numbers_wrap_around() {
    let body = json_body(20_000, 4);
    let mut f = Flow::new(
        "10.0.0.1:40000",
        "10.0.0.2:80",
        u32::MAX - 7000,
        u32::MAX - 100,
    );
    let segs = exchange_segs(&mut f, &request(&body), &response(&body), 1448);
    let (xs, _) = extract_bytes(&cap(&f, &segs));
    assert_eq!(bodies(&xs[0]), (body.clone(), body));
}

#[test]
fn connection_seen_from_the_middle() {
    let (b1, b2) = (json_body(5000, 5), json_body(700, 6));
    let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 100, 200);
    f.handshake();
    let mut first = f.send(true, &request(&b1), 1448);
    first.extend(f.send(false, &response(b"{\"one\":1}"), 1448));
    let mut segs: Vec<Seg> = first[2..].to_vec(); // capture starts mid-body of request 1
    segs.extend(f.send(true, &request(&b2), 1448));
    segs.extend(f.send(false, &response(b"{\"two\":2}"), 1448));
    let (xs, s) = extract_bytes(&cap(&f, &segs));
    // Response 1 is kept, its request marked not captured; request 2 pairs with its own.
    assert_eq!(xs.len(), 2);
    assert!(!xs[0].request.captured());
    assert_eq!(bodies(&xs[0]), (Vec::new(), b"{\"one\":1}".to_vec()));
    assert_eq!(bodies(&xs[1]), (b2, b"{\"two\":2}".to_vec()));
    assert_eq!(s.orphan_responses, 1);
    assert!(s.skipped_http_bytes > 0);
}

#[test]
fn port_reuse_starts_a_new_connection() {
    let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 100, 200);
    let mut segs = exchange_segs(
        &mut f,
        &request(b"{\"n\":1}"),
        &response(b"{\"r\":1}"),
        1448,
    );
    let mut g = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 7_000_000, 8_000_000);
    segs.extend(exchange_segs(
        &mut g,
        &request(b"{\"n\":2}"),
        &response(b"{\"r\":2}"),
        1448,
    ));
    let mut pkts = build::packets(&f, &segs[..11], build::ETHERNET, 1 << 20, T0);
    pkts.extend(build::packets(
        &g,
        &segs[11..],
        build::ETHERNET,
        1 << 20,
        T0 + 1_000_000_000,
    ));
    let (xs, s) = extract_bytes(&build::pcap(build::ETHERNET, false, &pkts));
    assert_eq!(s.connections, 2);
    assert_eq!(xs.len(), 2);
    assert_eq!(
        bodies(&xs[1]),
        (b"{\"n\":2}".to_vec(), b"{\"r\":2}".to_vec())
    );
    assert_eq!(xs[1].source.connection, Some(1));
}

#[test]
fn keep_alive_pipelining_framing_and_bodiless_responses() {
    let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 1, 2);
    let mut segs = f.handshake();
    let reqs = [
        request(b"{\"q\":1}"),
        request(b"{\"q\":2}"),
        b"HEAD /x HTTP/1.1\r\nHost: a\r\n\r\n".to_vec(),
        b"GET /nc HTTP/1.1\r\n\r\n".to_vec(),
        b"GET /nm HTTP/1.1\r\n\r\n".to_vec(),
        b"GET /close HTTP/1.1\r\n\r\n".to_vec(),
    ]
    .concat();
    segs.extend(f.send(true, &reqs, 4000)); // pipelined: all requests in one segment
    let resps = [
        response(b"{\"a\":1}"),
        chunked(
            "HTTP/1.1 200 OK\r\n",
            &[b"{\"a\":", b"2}"],
            "x-checksum: 1\r\n",
        ),
        b"HTTP/1.1 200 OK\r\ncontent-length: 1234\r\n\r\n".to_vec(),
        b"HTTP/1.1 204 No Content\r\n\r\n".to_vec(),
        b"HTTP/1.1 304 Not Modified\r\ncontent-length: 99\r\n\r\n".to_vec(),
        b"HTTP/1.1 200 OK\r\n\r\nuntil the end".to_vec(),
    ]
    .concat();
    segs.extend(f.send(false, &resps, 7));
    segs.push(f.fin(false));
    segs.push(f.fin(true));
    let (xs, _) = extract_bytes(&cap(&f, &segs));
    let got: Vec<_> = xs
        .iter()
        .map(|x| (x.request.target.as_str(), bodies(x).1))
        .collect();
    assert_eq!(
        got,
        [
            ("/v1/messages?beta=true", b"{\"a\":1}".to_vec()),
            ("/v1/messages?beta=true", b"{\"a\":2}".to_vec()),
            ("/x", vec![]),
            ("/nc", vec![]),
            ("/nm", vec![]),
            ("/close", b"until the end".to_vec()),
        ]
    );
    assert!(
        xs.iter().all(|x| x.error.is_none()),
        "{:?}",
        xs.iter().map(|x| &x.error).collect::<Vec<_>>()
    );
    assert_eq!(
        xs[1].notes["response_trailers"],
        serde_json::json!([["x-checksum", "1"]])
    );
}

#[test]
fn expect_100_continue() {
    let body = json_body(3000, 7);
    let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 1, 2);
    let mut segs = f.handshake();
    let head = format!(
        "POST /up HTTP/1.1\r\nexpect: 100-continue\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    segs.extend(f.send(true, head.as_bytes(), 1448));
    segs.extend(f.send(false, b"HTTP/1.1 100 Continue\r\n\r\n", 1448));
    segs.extend(f.send(true, &body, 1448));
    segs.extend(f.send(false, &response(b"{\"ok\":true}"), 1448));
    let (xs, _) = extract_bytes(&cap(&f, &segs));
    assert_eq!(xs.len(), 1);
    assert_eq!(bodies(&xs[0]), (body, b"{\"ok\":true}".to_vec()));
    assert_eq!(xs[0].notes["interim_statuses"], serde_json::json!([100]));
}

#[test]
fn content_encodings_are_stored_as_sent_and_decoded_by_readers() {
    let plain = json_body(4000, 8);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&plain).unwrap();
    let mut df = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    df.write_all(&plain).unwrap();
    let mut br = Vec::new();
    brotli::CompressorWriter::new(&mut br, 4096, 5, 22)
        .write_all(&plain)
        .unwrap();
    let encoded = [
        ("gzip", gz.finish().unwrap()),
        ("deflate", df.finish().unwrap()),
        ("br", br),
        ("zstd", zstd::encode_all(&plain[..], 3).unwrap()),
    ];
    for (name, wire) in encoded {
        let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 1, 2);
        let mut resp = format!(
            "HTTP/1.1 200 OK\r\ncontent-encoding: {name}\r\ncontent-length: {}\r\n\r\n",
            wire.len()
        )
        .into_bytes();
        resp.extend_from_slice(&wire);
        let segs = exchange_segs(&mut f, &request(b"{}"), &resp, 1448);
        let (xs, _) = extract_bytes(&cap(&f, &segs));
        let resp = xs[0].response.as_ref().unwrap();
        assert_eq!(resp.body.bytes, wire, "{name}: stored as on the wire");
        let d = response_body(resp);
        assert_eq!(d.bytes, plain, "{name}");
        assert_eq!(d.encoding.as_deref(), Some(name));
        assert_eq!(d.wire_size, wire.len() as u64, "{name}");
    }
}

#[test]
fn gap_in_sized_body_marks_exchange_and_next_one_survives() {
    let big = json_body(10_000, 9);
    let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 1, 2);
    let mut segs = f.handshake();
    segs.extend(f.send(true, &request(b"{\"n\":1}"), 1448));
    let mut r1 = f.send(false, &response(&big), 1000);
    let lost = r1.remove(4).payload.len() as u64; // never captured
    segs.extend(r1);
    segs.extend(f.send(true, &request(b"{\"n\":2}"), 1448));
    segs.extend(f.send(false, &response(b"{\"r\":2}"), 1448));
    let (xs, s) = extract_bytes(&cap(&f, &segs));
    assert_eq!(xs.len(), 2);
    let e = xs[0].error.as_ref().unwrap();
    assert_eq!(e.kind, "capture_gap");
    assert!(
        e.message
            .contains(&format!("0 in the request, {lost} in the response")),
        "{}",
        e.message
    );
    let b = &xs[0].response.as_ref().unwrap().body;
    assert!(b.truncated);
    assert_eq!(b.len() as u64, big.len() as u64 - lost);
    assert_eq!(
        bodies(&xs[1]),
        (b"{\"n\":2}".to_vec(), b"{\"r\":2}".to_vec())
    );
    assert!(xs[1].error.is_none());
    assert_eq!(s.gap_bytes, lost);
}

#[test]
fn gap_in_chunked_body_resyncs_at_the_next_message() {
    let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 1, 2);
    let mut segs = f.handshake();
    segs.extend(f.send(true, &request(b"{\"n\":1}"), 1448));
    let chunks: Vec<Vec<u8>> = (0..20).map(|i| json_body(300, i)).collect();
    let refs: Vec<&[u8]> = chunks.iter().map(|c| c.as_slice()).collect();
    let mut r1 = f.send(false, &chunked("HTTP/1.1 200 OK\r\n", &refs, ""), 500);
    r1.remove(3);
    segs.extend(r1);
    segs.extend(f.send(true, &request(b"{\"n\":2}"), 1448));
    segs.extend(f.send(false, &response(b"{\"r\":2}"), 1448));
    let (xs, _) = extract_bytes(&cap(&f, &segs));
    assert_eq!(xs.len(), 2);
    assert_eq!(xs[0].error.as_ref().unwrap().kind, "capture_gap");
    assert!(xs[0].response.as_ref().unwrap().body.truncated);
    assert_eq!(
        bodies(&xs[1]),
        (b"{\"n\":2}".to_vec(), b"{\"r\":2}".to_vec())
    );
}

#[test]
fn snaplen_truncation_is_a_gap_not_shorter_data() {
    let body = json_body(3000, 10);
    let req = request(&body);
    let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 1, 2);
    let segs = exchange_segs(&mut f, &req, &response(b"{}"), 1448);
    // 54 bytes of headers + 200 of payload kept per packet.
    let pkts = build::packets(&f, &segs, build::ETHERNET, 254, T0);
    let lost: u64 = pkts
        .iter()
        .map(|p| (p.orig_len as usize - p.data.len()) as u64)
        .sum();
    let (xs, s) = extract_bytes(&build::pcap(build::ETHERNET, false, &pkts));
    assert_eq!(s.gap_bytes, lost);
    let x = &xs[0];
    assert_eq!(x.error.as_ref().unwrap().kind, "capture_gap");
    assert!(x.request.body.truncated);
    // Kept: the first 200 payload bytes of each 1448-byte segment, less the head.
    let kept: Vec<u8> = req
        .chunks(1448)
        .flat_map(|c| c[..c.len().min(200)].to_vec())
        .collect();
    let head = req.len() - body.len();
    assert_eq!(x.request.body.bytes, kept[head..]);
}
