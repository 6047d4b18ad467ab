//! `agentwire pcap` on real WebSocket captures made here: loopback captured with
//! `dumpcap` while a real client and server talk. The Responses WebSocket's shape
//! (tungstenite on both ends): an upgrade, a prewarm answered by 3 events, a request
//! answered by 5 (one of 70 KB in fragments), a ping, a close. And permessage-deflate
//! with context takeover, written here with flate2 over a socket pair (tungstenite does
//! not deflate). Each is checked against the bytes sent and against tshark's own
//! WebSocket dissector.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use agentwire::input::open_trace;
use agentwire::trace::websocket::{Close, Direction};
use agentwire::trace::Exchange;
use tungstenite::protocol::frame::coding::{Data, OpCode};
use tungstenite::protocol::frame::Frame;
use tungstenite::Message;

use crate::common::{bin, signal};

/// `dumpcap` capturing loopback TCP on one port into a pcapng file.
pub struct Capture {
    child: Child,
    pub path: PathBuf,
}

impl Capture {
    /// Start capturing port `port` into `dir`; `None` when dumpcap cannot (not root).
    pub fn start(dir: &Path, port: u16) -> Option<Capture> {
        let path = dir.join("ws.pcapng");
        let mut child = Command::new("dumpcap")
            .args(["-i", "lo", "-f", &format!("tcp port {port}"), "-w"])
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .ok()?;
        let mut err = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        while err.read_line(&mut line).ok()? > 0 {
            if line.contains("Capturing on") {
                // Keep draining stderr so dumpcap never blocks on it.
                std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
                std::thread::sleep(Duration::from_millis(200));
                return Some(Capture { child, path });
            }
            line.clear();
        }
        let _ = child.wait();
        eprintln!("skipped: dumpcap cannot capture on lo (needs root or CAP_NET_RAW)");
        None
    }

    /// Stop once the last packets are written; the capture file.
    pub fn stop(mut self) -> PathBuf {
        std::thread::sleep(Duration::from_millis(300));
        signal(self.child.id(), libc::SIGTERM);
        assert!(self.child.wait().unwrap().success(), "dumpcap failed");
        self.path.clone()
    }
}

/// `agentwire pcap FILE`: its exchanges and its stderr.
pub fn agentwire_pcap(file: &Path) -> (Vec<Exchange>, String) {
    let out = file.with_extension("jsonl");
    let o = Command::new(bin())
        .arg("pcap")
        .arg(file)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{stderr}");
    (open_trace(&out).unwrap().exchanges, stderr)
}

/// Every WebSocket frame tshark sees, in order: `(opcode, payload length)`, and the text
/// of the message it completes, if it completes a text message (tshark reassembles
/// fragments and, by default, inflates permessage-deflate).
pub fn tshark_frames(file: &Path, port: u16) -> Vec<(u8, u64, Option<String>)> {
    let o = Command::new("tshark")
        .arg("-r")
        .arg(file)
        .args(["-d", &format!("tcp.port=={port},http"), "-Y", "websocket"])
        .args(["-T", "json", "--no-duplicate-keys", "-J", "websocket"])
        .output()
        .expect("tshark must be installed for these tests (apt-get install tshark)");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let packets: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut out = Vec::new();
    for p in packets.as_array().unwrap() {
        let layers = &p["_source"]["layers"];
        let ws = match &layers["websocket"] {
            serde_json::Value::Array(a) => a.clone(),
            one => vec![one.clone()],
        };
        for f in ws {
            let field = |k: &str| f[k].as_str().map(str::to_string);
            let opcode: u8 = field("websocket.opcode").unwrap().parse().unwrap();
            let short: u64 = field("websocket.payload_length").unwrap().parse().unwrap();
            let len = field("websocket.payload_length_ext_16")
                .or(field("websocket.payload_length_ext_64"))
                .map_or(short, |l| l.parse().unwrap());
            let text = f["websocket.payload"]["websocket.payload.text"]
                .as_str()
                .map(str::to_string);
            out.push((opcode, len, text));
        }
    }
    out
}

/// A Responses event as the server sends it, about `pad` bytes of text in it.
fn event(kind: &str, n: usize, pad: usize) -> String {
    let text: String = (0..pad)
        .map(|i| (b'a' + ((i * 7 + n) % 26) as u8) as char)
        .collect();
    format!(r#"{{"type":"{kind}","sequence_number":{n},"delta":"{text}"}}"#)
}

/// The client's two messages: a prewarm (`generate: false`) and a request.
fn client_messages() -> [String; 2] {
    let prewarm = format!(
        r#"{{"type":"response.create","model":"gpt-5.5","generate":false,"input":[],"instructions":"{}"}}"#,
        "p".repeat(1_300)
    );
    let request = format!(
        r#"{{"type":"response.create","model":"gpt-5.5","previous_response_id":"resp_1","input":[{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{}"}}]}}]}}"#,
        "q".repeat(9_000)
    );
    [prewarm, request]
}

/// The server's answers: 3 events to the prewarm, 5 to the request (the 4th about 70 KB).
fn server_events() -> (Vec<String>, Vec<String>) {
    let first = [
        "response.created",
        "response.in_progress",
        "response.completed",
    ]
    .iter()
    .enumerate()
    .map(|(i, k)| event(k, i, 40))
    .collect();
    let second = (0..5)
        .map(|i| {
            event(
                "response.output_text.delta",
                i,
                if i == 3 { 70_000 } else { 300 },
            )
        })
        .collect();
    (first, second)
}

/// The 70 KB event in 4 fragments, so it crosses the wire as a fragmented message.
const FRAGMENTS: usize = 4;

/// The server side: answers as [`server_events`] says, the big event fragmented.
fn serve(listener: TcpListener) -> Vec<String> {
    let (sock, _) = listener.accept().unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut ws = tungstenite::accept(sock).unwrap();
    let (first, second) = server_events();
    let mut got = Vec::new();
    for events in [first, second] {
        got.push(ws.read().unwrap().into_text().unwrap().to_string());
        for e in events {
            if e.len() < 10_000 {
                ws.send(Message::text(e)).unwrap();
                continue;
            }
            let step = e.len().div_ceil(FRAGMENTS);
            for (i, part) in e.as_bytes().chunks(step).enumerate() {
                let op = if i == 0 { Data::Text } else { Data::Continue };
                let last = i == FRAGMENTS - 1;
                let f = Frame::message(part.to_vec(), OpCode::Data(op), last);
                ws.write(Message::Frame(f)).unwrap();
            }
            ws.flush().unwrap();
        }
    }
    // The ping is answered, then the close; the next read sees the end.
    while ws.read().is_ok() {}
    got
}

/// The Responses session over a real socket on `port` (the server answering on
/// `listener`); what the client sent.
fn responses_session(listener: TcpListener, port: u16) -> [String; 2] {
    let server = std::thread::spawn(move || serve(listener));
    let url = format!("ws://127.0.0.1:{port}/v1/responses");
    let mut req = tungstenite::client::IntoClientRequest::into_client_request(url).unwrap();
    let h = req.headers_mut();
    h.insert(
        "openai-beta",
        "responses_websockets=2026-02-06".parse().unwrap(),
    );
    h.insert(
        "authorization",
        "Bearer sk-test-secret-key".parse().unwrap(),
    );
    let sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let (mut ws, _) = tungstenite::client(req, sock).unwrap();
    let sent = client_messages();
    let (first, second) = server_events();
    for (msg, events) in sent.iter().zip([&first, &second]) {
        ws.send(Message::text(msg.clone())).unwrap();
        for e in events.iter() {
            assert_eq!(ws.read().unwrap().into_text().unwrap().as_str(), e);
        }
    }
    ws.send(Message::Ping(b"are you there".to_vec().into()))
        .unwrap();
    assert!(matches!(ws.read().unwrap(), Message::Pong(_)));
    ws.close(Some(tungstenite::protocol::CloseFrame {
        code: tungstenite::protocol::frame::coding::CloseCode::Normal,
        reason: "done".into(),
    }))
    .unwrap();
    while ws.read().is_ok() {}
    drop(ws);
    assert_eq!(server.join().unwrap(), sent);
    sent
}

/// The exchanges of [`responses_session`], checked against what was sent.
fn assert_responses_session(xs: &[Exchange], sent: &[String; 2]) {
    let (first, second) = server_events();
    assert_eq!(xs.len(), 3, "{xs:#?}");
    let upgrade = &xs[0];
    assert_eq!(
        (
            upgrade.request.method.as_str(),
            upgrade.request.target.as_str()
        ),
        ("GET", "/v1/responses")
    );
    assert_eq!(upgrade.response.as_ref().unwrap().status, 101);
    assert_eq!(upgrade.notes["websocket"], "upgrade");
    assert!(upgrade.websocket.is_none());
    let auth = upgrade.request.headers.get("authorization").unwrap();
    assert!(!auth.contains("sk-test-secret-key"), "{auth}");
    for (seq, (x, events)) in xs[1..].iter().zip([&first, &second]).enumerate() {
        let w = x.websocket.as_ref().unwrap();
        assert_eq!(
            (w.upgrade, w.seq, w.extensions.as_str()),
            (upgrade.id, seq as u64, "")
        );
        assert_eq!(x.error, None, "{:?}", x.error);
        assert_eq!(x.request.body.bytes, sent[seq].as_bytes(), "request {seq}");
        assert_eq!(x.request.headers, upgrade.request.headers);
        let r = x.response.as_ref().unwrap();
        assert_eq!(r.status, 101);
        let want: Vec<u8> = events
            .iter()
            .flat_map(|e| format!("{e}\n").into_bytes())
            .collect();
        assert_eq!(r.body.bytes, want, "response {seq}");
        assert_eq!(r.chunks.len(), events.len());
        assert_eq!(x.source.connection, upgrade.source.connection);
        let (a, b) = x.source.frames.unwrap();
        assert!(a <= b && a > upgrade.source.frames.unwrap().1);
        assert!(x.ended_at.unwrap() >= x.started_at);
        assert_eq!(x.notes["websocket"], "message");
    }
    // Frames: the prewarm and its 3 events; the request, 4 events + 4 fragments, the
    // ping and its pong, the close and its answer.
    let count = |x: &Exchange, dir: Direction, op: u8| {
        x.websocket
            .as_ref()
            .unwrap()
            .frames
            .iter()
            .filter(|f| f.dir == dir && f.opcode == op)
            .count()
    };
    let (m0, m1) = (&xs[1], &xs[2]);
    assert_eq!(m0.websocket.as_ref().unwrap().frames.len(), 4);
    assert_eq!(
        (
            count(m0, Direction::Client, 1),
            count(m0, Direction::Server, 1)
        ),
        (1, 3)
    );
    assert_eq!(
        m1.websocket.as_ref().unwrap().frames.len(),
        1 + 4 + FRAGMENTS + 4
    );
    assert_eq!(count(m1, Direction::Server, 0), FRAGMENTS - 1);
    assert_eq!(
        (
            count(m1, Direction::Client, 9),
            count(m1, Direction::Server, 10)
        ),
        (1, 1)
    );
    assert_eq!(
        (
            count(m1, Direction::Client, 8),
            count(m1, Direction::Server, 8)
        ),
        (1, 1)
    );
    let w1 = m1.websocket.as_ref().unwrap();
    assert_eq!(
        w1.closed,
        Some(Close {
            by: Some(Direction::Client),
            code: Some(1000),
            reason: "done".into()
        })
    );
    assert!(m0.websocket.as_ref().unwrap().closed.is_none());
    // Client frames are masked: 4 more bytes on the wire than a server frame's header.
    for f in xs[1..]
        .iter()
        .flat_map(|x| &x.websocket.as_ref().unwrap().frames)
    {
        let header = f.wire_bytes - f.payload_bytes;
        let base = match f.payload_bytes {
            0..=125 => 2,
            126..=65535 => 4,
            _ => 10,
        };
        let mask = if f.dir == Direction::Client { 4 } else { 0 };
        assert_eq!(header, base + mask, "{f:?}");
        assert!(!f.compressed);
    }
}

#[test]
fn a_real_responses_websocket_capture_reads_as_its_exchanges() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let Some(capture) = Capture::start(dir.path(), port) else {
        return;
    };
    let sent = responses_session(listener, port);
    let file = capture.stop();

    let (xs, stderr) = agentwire_pcap(&file);
    assert!(
        stderr.contains("wrote 3 exchanges (2 of them WebSocket messages)"),
        "{stderr}"
    );
    assert_responses_session(&xs, &sent);
    let (first, second) = server_events();
    // tshark's dissector, an independent reader: the same frames, in the same order,
    // with the same payload lengths and texts.
    let ours: Vec<(u8, u64)> = xs[1..]
        .iter()
        .flat_map(|x| &x.websocket.as_ref().unwrap().frames)
        .map(|f| (f.opcode, f.payload_bytes))
        .collect();
    let theirs = tshark_frames(&file, port);
    let lengths: Vec<(u8, u64)> = theirs.iter().map(|(o, l, _)| (*o, *l)).collect();
    assert_eq!(lengths, ours);
    let texts: Vec<&str> = theirs.iter().filter_map(|(_, _, t)| t.as_deref()).collect();
    let mut whole = vec![sent[0].as_str()];
    whole.extend(first.iter().map(String::as_str));
    whole.push(&sent[1]);
    whole.extend(second.iter().map(String::as_str));
    assert!(
        texts == whole,
        "tshark's messages differ from what was sent"
    );
}

/// A frame as RFC 6455 §5.2 lays it out; `mask`: the client's masking key.
pub fn frame(fin: bool, rsv1: bool, opcode: u8, payload: &[u8], mask: Option<[u8; 4]>) -> Vec<u8> {
    let mut f = vec![(u8::from(fin) << 7) | (u8::from(rsv1) << 6) | opcode];
    let m = if mask.is_some() { 0x80 } else { 0 };
    match payload.len() {
        n if n < 126 => f.push(m | n as u8),
        n if n < 65536 => {
            f.push(m | 126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            f.push(m | 127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    match mask {
        Some(k) => {
            f.extend_from_slice(&k);
            f.extend(payload.iter().enumerate().map(|(i, b)| b ^ k[i % 4]));
        }
        None => f.extend_from_slice(payload),
    }
    f
}

/// One direction's permessage-deflate compressor (RFC 7692 §7.2.1): raw DEFLATE, a sync
/// flush per message, its `00 00 ff ff` tail stripped, the window kept across messages.
pub struct Deflater(flate2::Compress);

impl Deflater {
    pub fn new() -> Self {
        Deflater(flate2::Compress::new(flate2::Compression::default(), false))
    }

    pub fn message(&mut self, text: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(text.len() + 1024);
        let start = self.0.total_in();
        loop {
            let used = (self.0.total_in() - start) as usize;
            self.0
                .compress_vec(&text[used..], &mut out, flate2::FlushCompress::Sync)
                .unwrap();
            if out.len() < out.capacity() {
                break;
            }
            out.reserve(out.capacity());
        }
        assert!(out.ends_with(&[0, 0, 0xff, 0xff]));
        out.truncate(out.len() - 4);
        out
    }
}

/// Read exactly `n` bytes.
fn read_n(s: &mut TcpStream, n: usize) -> Vec<u8> {
    let mut b = vec![0; n];
    std::io::Read::read_exact(s, &mut b).unwrap();
    b
}

/// Read an HTTP head (up to its empty line).
fn read_head(s: &mut TcpStream) -> String {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        head.extend(read_n(s, 1));
    }
    String::from_utf8(head).unwrap()
}

/// The deflate session's wire bytes, built before anything is sent: the client's two
/// messages and close, the server's answers (`(bytes, pause before)` pieces, so the
/// fragmented message's second frame goes in a packet of its own), and the plaintexts.
struct DeflateSession {
    client: Vec<Vec<u8>>,
    server: Vec<Vec<(Vec<u8>, bool)>>,
    requests: [String; 2],
    answers: [Vec<String>; 2],
}

fn deflate_session() -> DeflateSession {
    let key = Some([0x1c, 0x8e, 0x33, 0x70]);
    let text = |n: usize| "tools and instructions, all of them. ".repeat(n);
    let requests = [
        format!(
            r#"{{"type":"response.create","generate":false,"instructions":"{}"}}"#,
            text(200)
        ),
        // Mostly the same text again: it only inflates with the first message's window.
        format!(
            r#"{{"type":"response.create","previous_response_id":"resp_1","instructions":"{}"}}"#,
            text(201)
        ),
    ];
    let answers = [
        vec![
            event("response.created", 0, 500),
            event("response.in_progress", 1, 60),
            event("response.completed", 2, 20_000),
        ],
        vec![event("response.created", 0, 500)],
    ];
    let (mut c, mut s) = (Deflater::new(), Deflater::new());
    let client = vec![
        frame(true, true, 1, &c.message(requests[0].as_bytes()), key),
        frame(true, true, 1, &c.message(requests[1].as_bytes()), key),
        frame(true, false, 8, &[0x03, 0xe8, b'b', b'y', b'e'], key),
    ];
    // Compressed, uncompressed (RSV1 clear: allowed per message), compressed in 2 frames.
    let first = s.message(answers[0][0].as_bytes());
    let big = s.message(answers[0][2].as_bytes());
    let half = big.len() / 2;
    let server = vec![
        vec![
            (frame(true, true, 1, &first, None), false),
            (frame(true, false, 1, answers[0][1].as_bytes(), None), false),
            (frame(false, true, 1, &big[..half], None), false),
            (frame(true, false, 0, &big[half..], None), true),
        ],
        vec![(
            frame(true, true, 1, &s.message(answers[1][0].as_bytes()), None),
            false,
        )],
        vec![(frame(true, false, 8, &[0x03, 0xe8], None), false)],
    ];
    DeflateSession {
        client,
        server,
        requests,
        answers,
    }
}

/// The server of the deflate session: accepts permessage-deflate (context takeover both
/// ways), reads each client frame, sends its answer.
fn serve_deflate(listener: TcpListener, client: Vec<Vec<u8>>, server: Vec<Vec<(Vec<u8>, bool)>>) {
    let (mut sock, _) = listener.accept().unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    sock.set_nodelay(true).unwrap();
    let head = read_head(&mut sock);
    let key = head
        .lines()
        .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
        .unwrap();
    let accept = tungstenite::handshake::derive_accept_key(key.as_bytes());
    let reply = format!("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n");
    sock.write_all(reply.as_bytes()).unwrap();
    for (from_client, answer) in client.iter().zip(server) {
        assert_eq!(&read_n(&mut sock, from_client.len()), from_client);
        for (bytes, pause) in answer {
            if pause {
                std::thread::sleep(Duration::from_millis(50));
            }
            sock.write_all(&bytes).unwrap();
        }
    }
    sock.shutdown(std::net::Shutdown::Write).unwrap();
}

#[test]
fn a_real_permessage_deflate_capture_inflates_with_the_window_kept() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let Some(capture) = Capture::start(dir.path(), port) else {
        return;
    };
    let session = deflate_session();
    // Context takeover is really needed: the second request alone does not inflate.
    let second = &session.client[1][8..];
    let unmasked: Vec<u8> = second
        .iter()
        .enumerate()
        .map(|(i, b)| b ^ session.client[1][4 + i % 4])
        .collect();
    let mut fresh = flate2::Decompress::new(false);
    let mut out = Vec::with_capacity(1 << 16);
    let alone = fresh.decompress_vec(
        &[unmasked, vec![0, 0, 0xff, 0xff]].concat(),
        &mut out,
        flate2::FlushDecompress::Sync,
    );
    assert!(alone.is_err() || out != session.requests[1].as_bytes());
    let (client, server) = (session.client.clone(), session.server.clone());
    let srv = std::thread::spawn(move || serve_deflate(listener, client, server));
    let mut sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    sock.set_nodelay(true).unwrap();
    let upgrade = format!("GET /v1/responses HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-extensions: permessage-deflate; client_max_window_bits\r\n\r\n");
    sock.write_all(upgrade.as_bytes()).unwrap();
    assert!(read_head(&mut sock).contains("permessage-deflate"));
    for (msg, answer) in session.client.iter().zip(&session.server) {
        sock.write_all(msg).unwrap();
        let n = answer.iter().map(|(b, _)| b.len()).sum();
        read_n(&mut sock, n);
    }
    sock.shutdown(std::net::Shutdown::Write).unwrap();
    srv.join().unwrap();
    drop(sock);
    let file = capture.stop();

    let (xs, _) = agentwire_pcap(&file);
    assert_eq!(xs.len(), 3, "{xs:#?}");
    assert_eq!(xs[0].notes["websocket"], "upgrade");
    for (i, x) in xs[1..].iter().enumerate() {
        let w = x.websocket.as_ref().unwrap();
        assert_eq!(w.extensions, "permessage-deflate");
        assert_eq!(x.error, None, "{:?}", x.error);
        assert_eq!(
            x.request.body.bytes,
            session.requests[i].as_bytes(),
            "request {i}"
        );
        let want: Vec<u8> = session.answers[i]
            .iter()
            .flat_map(|e| format!("{e}\n").into_bytes())
            .collect();
        assert_eq!(x.response.as_ref().unwrap().body.bytes, want, "answer {i}");
    }
    // Frames keep their wire sizes (compressed) and the compressed bit as sent.
    let frames: Vec<_> = xs[1..]
        .iter()
        .flat_map(|x| x.websocket.as_ref().unwrap().frames.clone())
        .collect();
    let wire: Vec<(bool, u64)> = frames
        .iter()
        .map(|f| (f.compressed, f.wire_bytes))
        .collect();
    let sent: Vec<(bool, u64)> = [
        (true, &session.client[0]),
        (true, &session.server[0][0].0),
        (false, &session.server[0][1].0),
        (true, &session.server[0][2].0),
        (false, &session.server[0][3].0),
        (true, &session.client[1]),
        (true, &session.server[1][0].0),
        (false, &session.client[2]),
        (false, &session.server[2][0].0),
    ]
    .iter()
    .map(|(c, b)| (*c, b.len() as u64))
    .collect();
    assert_eq!(wire, sent);
    let closed = xs[2].websocket.as_ref().unwrap().closed.clone();
    assert_eq!(
        closed,
        Some(Close {
            by: Some(Direction::Client),
            code: Some(1000),
            reason: "bye".into()
        })
    );

    // tshark inflates permessage-deflate itself (its `websocket.decompress` preference, on
    // by default): the same frames, and the same texts for both client messages (the
    // second needs the first's window) and the server's unfragmented ones. tshark 4.0.17
    // does not inflate a compressed message sent in fragments (it shows a few bytes of
    // garbage for the 20 KB event) and loses the server's window with it (no text for the
    // event after): those two are not compared.
    let theirs = tshark_frames(&file, port);
    let lengths: Vec<u64> = theirs.iter().map(|(_, l, _)| *l).collect();
    let ours: Vec<u64> = frames.iter().map(|f| f.payload_bytes).collect();
    assert_eq!(lengths, ours);
    let text_at = |i: usize| theirs[i].2.as_deref();
    let agreed = [
        (0, session.requests[0].as_str()),
        (1, session.answers[0][0].as_str()),
        (2, session.answers[0][1].as_str()),
        (5, session.requests[1].as_str()),
    ];
    for (i, want) in agreed {
        assert!(
            text_at(i) == Some(want),
            "tshark's frame {i} inflates to another text"
        );
    }
    eprintln!(
        "tshark on the fragmented compressed event: {:?} bytes; on the next: {:?}",
        text_at(4).map(str::len),
        text_at(6).map(str::len)
    );
}

/// `agentwire capture --iface lo` goes through the same extractor: the same session
/// captured live gives the same exchanges.
#[cfg(feature = "libpcap")]
#[test]
fn a_live_capture_reads_the_websocket_session_too() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: live capture needs root or CAP_NET_RAW");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("live.jsonl");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut child = Command::new(bin())
        .args([
            "capture",
            "--iface",
            "lo",
            "--filter",
            &format!("tcp port {port}"),
        ])
        .args(["--duration", "120", "-o"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while err.read_line(&mut line).unwrap() > 0 && !line.contains("capturing on lo") {
        line.clear();
    }
    let sent = responses_session(listener, port);
    std::thread::sleep(Duration::from_millis(300));
    signal(child.id(), libc::SIGINT);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert!(child.wait().unwrap().success(), "{rest}");
    assert!(rest.contains("(2 of them WebSocket messages)"), "{rest}");
    let xs = open_trace(&out).unwrap().exchanges;
    assert_responses_session(&xs, &sent);
    assert!(xs
        .iter()
        .all(|x| x.source.kind == agentwire::trace::SourceKind::Live));
}
