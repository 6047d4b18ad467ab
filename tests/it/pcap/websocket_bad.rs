//! WebSocket connections that go wrong, built here packet by packet (the real captures
//! are in `websocket`): a server that speaks first, text that is not JSON, frame errors,
//! capture gaps, a connection cut mid-frame, a message that does not inflate, a length
//! over the bound. Each keeps what was read, marks the exchange with an error naming the
//! byte offset, counts the bytes it could not read, and loses nothing else of the
//! capture.

use agentwire::capture::pcap::Summary;
use agentwire::trace::websocket::Direction;
use agentwire::trace::Exchange;

use super::build::{self, Flow, Pkt, Seg};
use super::extract_bytes;
use super::websocket::frame;

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

fn extract(steps: &[Step]) -> (Vec<Exchange>, Summary) {
    extract_with(false, steps)
}

fn extract_with(deflate: bool, steps: &[Step]) -> (Vec<Exchange>, Summary) {
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
