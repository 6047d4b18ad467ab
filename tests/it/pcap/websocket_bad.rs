//! WebSocket connections that go wrong, built here packet by packet (the real captures
//! are in `websocket`): a server that speaks first, text that is not JSON, frame errors,
//! capture gaps, a connection cut mid-frame, a message that does not inflate, a length
//! over the bound. Each keeps what was read, marks the exchange with an error naming the
//! byte offset, counts the bytes it could not read, and loses nothing else of the
//! capture.

use agentwire::capture::pcap::ExtractionSummary;
use agentwire::trace::websocket::Direction;
use agentwire::trace::Exchange;
use proptest::prelude::*;

use super::build::{self, Flow, Pkt, Seg};
use super::extract_bytes;
use super::websocket::{frame, Deflater};

const T0: i64 = 1_700_000_000_000_000_000;
const MASK: Option<[u8; 4]> = Some([0x11, 0x22, 0x33, 0x44]);

/// One step of a scripted WebSocket connection.
enum Step {
    /// Bytes from one side, in segments of at most `mss` bytes.
    Send(bool, Vec<u8>, usize),
    /// Bytes from one side that the capture misses (the sequence numbers advance).
    Lose(bool, usize),
    /// FIN from one side.
    Fin(bool),
}
use Step::*;

fn client(text: &str) -> Vec<u8> {
    frame(true, false, 1, text.as_bytes(), MASK)
}

fn server(text: &str) -> Vec<u8> {
    frame(true, false, 1, text.as_bytes(), None)
}

/// The packets of an upgraded connection (`deflate`: the 101 accepts permessage-deflate)
/// followed by `steps`, from `t0`.
fn ws_packets(port: u16, deflate: bool, steps: &[Step], t0: i64) -> Vec<Pkt> {
    let mut f = Flow::new(&format!("10.0.0.1:{port}"), "10.0.0.2:80", 1000, 5000);
    let mut segs: Vec<Seg> = f.handshake();
    let upgrade = "GET /v1/responses HTTP/1.1\r\nHost: api\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n";
    segs.extend(f.send(true, upgrade.as_bytes(), 1400));
    let ext = if deflate {
        "Sec-WebSocket-Extensions: permessage-deflate\r\n"
    } else {
        ""
    };
    let reply = format!("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n{ext}\r\n");
    segs.extend(f.send(false, reply.as_bytes(), 1400));
    for s in steps {
        match s {
            Send(c, bytes, mss) => segs.extend(f.send(*c, bytes, *mss)),
            Lose(c, n) => {
                let _ = f.send(*c, &vec![0; *n], *n);
            }
            Fin(c) => segs.push(f.fin(*c)),
        }
    }
    build::packets(&f, &segs, build::ETHERNET, 1 << 20, t0)
}

fn extract(steps: &[Step]) -> (Vec<Exchange>, ExtractionSummary) {
    extract_with(false, steps)
}

fn extract_with(deflate: bool, steps: &[Step]) -> (Vec<Exchange>, ExtractionSummary) {
    let pkts = ws_packets(40000, deflate, steps, T0);
    extract_bytes(&build::pcap(build::ETHERNET, true, &pkts))
}

fn error(x: &Exchange) -> (&str, &str) {
    let e = x.error.as_ref().expect("an error");
    (e.kind.as_str(), e.message.as_str())
}

/// A server message before any client message gets an exchange of its own (empty
/// request, `seq` 0), as agentwire's server records it; a text message that is not JSON
/// is kept as it came and marks its exchange.
#[test]
fn a_server_that_speaks_first_and_text_that_is_not_json() {
    let (xs, s) = extract(&[
        Send(false, server(r#"{"type":"hello"}"#), 1400),
        Send(true, client("not json {"), 1400),
        Send(false, server(r#"{"type":"response.created"}"#), 1400),
        Fin(true),
        Fin(false),
    ]);
    assert_eq!(xs.len(), 3, "{xs:#?}");
    assert_eq!(s.websocket_messages, 2);
    let (first, second) = (&xs[1], &xs[2]);
    let w = first.websocket.as_ref().unwrap();
    assert_eq!((w.upgrade, w.seq), (xs[0].id, 0));
    assert!(first.request.body.is_empty());
    assert_eq!(
        first.response.as_ref().unwrap().body.bytes,
        b"{\"type\":\"hello\"}\n"
    );
    assert!(w.frames.iter().all(|f| f.dir == Direction::Server));
    assert_eq!(first.error, None);
    assert_eq!(second.websocket.as_ref().unwrap().seq, 1);
    assert_eq!(second.request.body.bytes, b"not json {");
    let (kind, message) = error(second);
    assert_eq!(kind, "websocket_error");
    assert!(
        message.contains("client's text message at byte") && message.contains("not JSON"),
        "{message}"
    );
    assert_eq!(
        second.response.as_ref().unwrap().body.bytes,
        b"{\"type\":\"response.created\"}\n"
    );
    // The connection ended with FINs and no close frame: cut.
    let closed = second.websocket.as_ref().unwrap().closed.clone().unwrap();
    assert_eq!(closed.by, None);
}

/// A reserved opcode stops reading the server's frames: the messages before it are kept,
/// the exchange and every later one say so, the bytes after it are counted; the client's
/// messages go on being read, and another connection of the capture is untouched.
#[test]
fn a_frame_error_stops_one_direction_and_nothing_else() {
    let good = server(r#"{"type":"response.created"}"#);
    let mut bad = good.clone();
    bad.extend([0x83, 0x02, b'x', b'y']);
    bad.extend(server(r#"{"type":"never read"}"#));
    let steps = [
        Send(true, client(r#"{"type":"response.create","n":0}"#), 1400),
        Send(false, bad.clone(), 1400),
        Send(true, client(r#"{"type":"response.create","n":1}"#), 1400),
        Send(false, server(r#"{"type":"lost too"}"#), 1400),
        Fin(true),
        Fin(false),
    ];
    let mut pkts = ws_packets(40000, false, &steps, T0);
    // A plain HTTP exchange on another connection, later.
    let mut h = Flow::new("10.0.0.3:40001", "10.0.0.2:80", 7000, 9000);
    let mut segs = h.handshake();
    segs.extend(h.send(true, &super::synth::request(b"{\"after\":true}"), 1400));
    segs.extend(h.send(false, &super::synth::response(b"{\"ok\":true}"), 1400));
    pkts.extend(build::packets(
        &h,
        &segs,
        build::ETHERNET,
        1 << 20,
        T0 + 1_000_000_000,
    ));
    let (xs, s) = extract_bytes(&build::pcap(build::ETHERNET, true, &pkts));
    assert_eq!(xs.len(), 4, "{xs:#?}");
    let (m0, m1, http) = (&xs[1], &xs[2], &xs[3]);
    assert_eq!(
        m0.response.as_ref().unwrap().body.bytes,
        [&good[2..], b"\n"].concat()
    );
    let (kind, message) = error(m0);
    assert_eq!(kind, "websocket_error");
    // The reserved frame starts right after the 101 head and the good frame.
    let at = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
        .len() + good.len();
    assert!(
        message.contains("reserved opcode 3") && message.contains(&format!("byte {at}")),
        "{message}"
    );
    assert_eq!(
        m1.request.body.bytes,
        br#"{"type":"response.create","n":1}"#
    );
    assert!(m1.response.as_ref().unwrap().body.is_empty());
    assert_eq!(error(m1).0, "websocket_error");
    // Counted from the frame at fault on.
    let unread = (bad.len() - good.len()) + server(r#"{"type":"lost too"}"#).len();
    assert_eq!(s.tunneled_bytes, unread as u64);
    assert_eq!(http.error, None);
    assert_eq!(http.request.body.bytes, b"{\"after\":true}");
}

/// Bytes lost inside an uncompressed payload cost only those bytes; lost bytes the frames
/// cannot be followed across stop that direction.
#[test]
fn capture_gaps_inside_a_payload_and_across_frames() {
    let text = format!(
        r#"{{"type":"response.create","input":"{}"}}"#,
        "z".repeat(3000)
    );
    let f = client(&text);
    let (xs, _) = extract(&[
        Send(true, f[..1000].to_vec(), 500),
        Lose(true, 500),
        Send(true, f[1500..].to_vec(), 500),
        Send(false, server(r#"{"type":"response.created"}"#), 1400),
        Send(true, client(r#"{"type":"response.create","n":1}"#), 1400),
        Fin(true),
        Fin(false),
    ]);
    assert_eq!(xs.len(), 3, "{xs:#?}");
    let m0 = &xs[1];
    let header = f.len() - text.len();
    let mut want = text.as_bytes()[..1000 - header].to_vec();
    want.extend_from_slice(&text.as_bytes()[1500 - header..]);
    assert_eq!(m0.request.body.bytes, want);
    assert!(m0.request.body.truncated);
    let (kind, message) = error(m0);
    assert_eq!(kind, "capture_gap");
    assert!(
        message.contains("500 bytes of the client's message"),
        "{message}"
    );
    assert_eq!(
        m0.response.as_ref().unwrap().body.bytes,
        b"{\"type\":\"response.created\"}\n"
    );
    assert_eq!(xs[2].error, None);
    assert_eq!(
        xs[2].request.body.bytes,
        br#"{"type":"response.create","n":1}"#
    );

    // A gap that swallows a frame header: the client's frames cannot be followed.
    let (xs, s) = extract(&[
        Send(true, client(r#"{"type":"response.create","n":0}"#), 1400),
        Send(false, server(r#"{"type":"response.created"}"#), 1400),
        Lose(true, 10),
        Send(true, client(r#"{"type":"response.create","n":2}"#), 1400),
        Fin(true),
        Fin(false),
    ]);
    assert_eq!(xs.len(), 2, "{xs:#?}");
    let (kind, message) = error(&xs[1]);
    assert_eq!(kind, "capture_gap");
    assert!(
        message.contains("10 bytes missing from the capture at byte"),
        "{message}"
    );
    assert!(s.tunneled_bytes >= 10);
}

/// A connection cut inside a client frame: the message so far gets its exchange.
#[test]
fn a_connection_cut_mid_frame_keeps_what_arrived() {
    let f = client(r#"{"type":"response.create","input":"abcdefghijklmnopqrstuvwxyz"}"#);
    let (xs, _) = extract(&[
        Send(true, client(r#"{"type":"response.create","n":0}"#), 1400),
        Send(false, server(r#"{"type":"response.created"}"#), 1400),
        Send(true, f[..40].to_vec(), 1400),
        Fin(true),
        Fin(false),
    ]);
    assert_eq!(xs.len(), 3, "{xs:#?}");
    let cut = &xs[2];
    assert_eq!(
        cut.request.body.bytes,
        br#"{"type":"response.create","input":"ab"#[..40 - 6]
    );
    assert!(cut.request.body.truncated);
    let (kind, message) = error(cut);
    assert_eq!(kind, "websocket_error");
    assert!(
        message.contains("the client closed the connection 40 bytes into the frame at byte"),
        "{message}"
    );
    assert_eq!(xs[1].error, None);
}

/// A compressed message that is not DEFLATE, and a frame longer than agentwire reads.
#[test]
fn a_message_that_does_not_inflate_and_one_over_the_bound() {
    let (xs, s) = extract_with(
        true,
        &[
            Send(true, frame(true, true, 1, &[0xff; 40], MASK), 1400),
            Send(false, server(r#"{"type":"error"}"#), 1400),
            Fin(true),
            Fin(false),
        ],
    );
    assert_eq!(xs.len(), 2, "{xs:#?}");
    let (kind, message) = error(&xs[1]);
    assert_eq!(kind, "websocket_error");
    assert!(message.contains("does not inflate"), "{message}");
    assert!(xs[1].request.body.is_empty());
    assert_eq!(
        xs[1].response.as_ref().unwrap().body.bytes,
        b"{\"type\":\"error\"}\n"
    );
    assert_eq!(s.errors.get("websocket_error"), Some(&1));
    // The message that failed is counted with the bytes not read.
    assert_eq!(s.tunneled_bytes, 46);

    let mut huge = vec![0x81, 127];
    huge.extend_from_slice(&(1u64 << 40).to_be_bytes());
    huge.extend_from_slice(&[b'x'; 100]);
    let (xs, s) = extract(&[
        Send(true, client(r#"{"type":"response.create"}"#), 1400),
        Send(false, huge.clone(), 1400),
        Fin(true),
        Fin(false),
    ]);
    assert_eq!(xs.len(), 2, "{xs:#?}");
    let (_, message) = error(&xs[1]);
    assert!(message.contains("larger than"), "{message}");
    assert_eq!(s.tunneled_bytes, huge.len() as u64);
}

/// A request body and its response body.
type Bodies = (Vec<u8>, Vec<u8>);

/// A session in both directions with deflate: `(from client, frame bytes)`, and each
/// exchange's request and response body.
fn session() -> (Vec<(bool, Vec<u8>)>, Vec<Bodies>) {
    let (mut c, mut s) = (Deflater::new(), Deflater::new());
    let m0 = format!(
        r#"{{"type":"response.create","input":"{}"}}"#,
        "abc ".repeat(900)
    );
    let m1 = r#"{"type":"response.create","n":1}"#.to_string();
    let e: Vec<String> = (0..3)
        .map(|i| format!(r#"{{"type":"e{i}","d":"{}"}}"#, "xyz".repeat(400 * i + 1)))
        .collect();
    // Compressed in the order sent: each message's window is the ones before it.
    let (e0, e1) = (s.message(e[0].as_bytes()), s.message(e[1].as_bytes()));
    let third = e1.len() / 3;
    let frames = vec![
        (true, frame(true, true, 1, &c.message(m0.as_bytes()), MASK)),
        (false, frame(true, true, 1, &e0, None)),
        (false, frame(false, true, 1, &e1[..third], None)),
        (false, frame(true, false, 9, b"ping", None)),
        (false, frame(false, false, 0, &e1[third..2 * third], None)),
        (false, frame(true, false, 0, &e1[2 * third..], None)),
        (true, frame(true, false, 10, b"ping", MASK)),
        (true, client(&m1)),
        (
            false,
            frame(true, true, 1, &s.message(e[2].as_bytes()), None),
        ),
        (true, frame(true, false, 8, &[0x03, 0xe8], MASK)),
        (false, frame(true, false, 8, &[0x03, 0xe8], None)),
    ];
    let line = |t: &str| format!("{t}\n").into_bytes();
    let bodies = vec![
        (m0.into_bytes(), [line(&e[0]), line(&e[1])].concat()),
        (m1.into_bytes(), line(&e[2])),
    ];
    (frames, bodies)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// However the session's bytes are cut into segments, reordered and duplicated, the
    /// same messages come out, inflated, with no error.
    #[test]
    fn any_segmentation_of_a_session_gives_its_messages(
        mss in proptest::collection::vec(1usize..1600, 11),
        order in proptest::collection::vec(any::<u64>(), 64),
        dups in proptest::collection::vec((any::<u16>(), any::<u16>()), 0..6),
    ) {
        let (frames, bodies) = session();
        let steps: Vec<Step> = frames.into_iter().zip(&mss).map(|((c, f), m)| Send(c, f, *m)).collect();
        let pkts = ws_packets(40000, true, &steps, T0);
        // Reorder and duplicate the packets after the handshake (SYN, SYN-ACK, ACK).
        let (head, rest) = pkts.split_at(3);
        let mut keyed: Vec<(u64, &build::Pkt)> =
            rest.iter().enumerate().map(|(i, p)| (order[i % order.len()] ^ i as u64, p)).collect();
        keyed.sort_by_key(|k| k.0);
        let mut all: Vec<&build::Pkt> = head.iter().chain(keyed.into_iter().map(|k| k.1)).collect();
        for (from, to) in dups {
            let p = all[3 + from as usize % (all.len() - 3)];
            all.insert(3 + to as usize % (all.len() - 2), p);
        }
        let pkts: Vec<build::Pkt> = all
            .iter()
            .enumerate()
            .map(|(i, p)| build::Pkt { ts_ns: T0 + i as i64 * 1000, data: p.data.clone(), orig_len: p.orig_len })
            .collect();
        let (xs, _) = extract_bytes(&build::pcap(build::ETHERNET, true, &pkts));
        prop_assert_eq!(xs.len(), 3);
        for (x, (req, resp)) in xs[1..].iter().zip(&bodies) {
            prop_assert!(x.error.is_none(), "{:?}", x.error);
            prop_assert_eq!(&x.request.body.bytes, req);
            prop_assert_eq!(&x.response.as_ref().unwrap().body.bytes, resp);
        }
        // The client's pong went with the first exchange; m1, e2 and both close frames.
        prop_assert_eq!(xs[1].websocket.as_ref().unwrap().frames.len(), 7);
        prop_assert_eq!(xs[2].websocket.as_ref().unwrap().frames.len(), 4);
    }

    /// Any bytes after an upgrade, in any segments, some lost: no panic, exchanges in
    /// order, each with its frames in order and a time after its start.
    #[test]
    fn arbitrary_bytes_after_an_upgrade_never_break_the_reader(
        client_bytes in proptest::collection::vec(any::<u8>(), 0..600),
        server_bytes in proptest::collection::vec(any::<u8>(), 0..600),
        mss in 1usize..200,
        lose in proptest::option::of(1usize..50),
        deflate in any::<bool>(),
    ) {
        let mut steps = vec![Send(true, client_bytes, mss), Send(false, server_bytes.clone(), mss)];
        if let Some(n) = lose {
            steps.push(Lose(false, n));
            steps.push(Send(false, server_bytes, mss));
        }
        steps.push(Fin(true));
        steps.push(Fin(false));
        let (xs, _) = extract_with(deflate, &steps);
        let mut seq = None;
        for x in &xs {
            let (a, b) = x.source.frames.unwrap();
            prop_assert!(a <= b);
            prop_assert!(x.duration_us().is_none_or(|d| d >= 0));
            if let Some(w) = &x.websocket {
                prop_assert!(seq.is_none_or(|s| w.seq == s + 1));
                seq = Some(w.seq);
                prop_assert!(w.frames.iter().all(|f| f.at_us >= 0 && f.wire_bytes >= f.payload_bytes));
            }
        }
    }
}

/// Only a `101` whose request and response both say `Upgrade: websocket` is read as
/// WebSocket; any other switch stays a tunnel whose bytes are counted.
#[test]
fn another_protocol_switch_stays_a_tunnel() {
    for (req_upgrade, resp_upgrade) in [
        ("websocket", "h2c"),
        ("h2c", "websocket"),
        ("WebSocket", "WEBSOCKET"),
    ] {
        let mut f = Flow::new("10.0.0.1:40000", "10.0.0.2:80", 1000, 5000);
        let mut segs = f.handshake();
        let req = format!(
            "GET /x HTTP/1.1\r\nHost: a\r\nUpgrade: {req_upgrade}\r\nConnection: Upgrade\r\n\r\n"
        );
        segs.extend(f.send(true, req.as_bytes(), 1400));
        let resp = format!("HTTP/1.1 101 Switching Protocols\r\nUpgrade: {resp_upgrade}\r\nConnection: Upgrade\r\n\r\n");
        segs.extend(f.send(false, resp.as_bytes(), 1400));
        let msg = client(r#"{"type":"response.create"}"#);
        segs.extend(f.send(true, &msg, 1400));
        segs.push(f.fin(true));
        segs.push(f.fin(false));
        let pkts = build::packets(&f, &segs, build::ETHERNET, 1 << 20, T0);
        let (xs, s) = extract_bytes(&build::pcap(build::ETHERNET, true, &pkts));
        let websocket = req_upgrade.eq_ignore_ascii_case("websocket")
            && resp_upgrade.eq_ignore_ascii_case("websocket");
        assert_eq!(
            xs.len(),
            if websocket { 2 } else { 1 },
            "{req_upgrade} {resp_upgrade}"
        );
        assert_eq!(xs[0].notes.contains_key("websocket"), websocket);
        assert_eq!(
            s.tunneled_bytes,
            if websocket { 0 } else { msg.len() as u64 }
        );
    }
}
