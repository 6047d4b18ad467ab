//! `agentwire pcap` on real WebSocket captures made here: loopback captured with
//! `dumpcap` while a real client and server talk. The Responses WebSocket's shape
//! (tungstenite on both ends): an upgrade, a prewarm answered by 3 events, a request
//! answered by 5 (one of 70 KB in fragments), a ping, a close. And permessage-deflate
//! with context takeover, written here with flate2 over a socket pair (tungstenite does
//! not deflate). Each is checked against the bytes sent and against tshark's own
//! WebSocket dissector.

use std::io::{BufRead, BufReader};
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
    let text: String = (0..pad).map(|i| (b'a' + ((i * 7 + n) % 26) as u8) as char).collect();
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
    let first = ["response.created", "response.in_progress", "response.completed"]
        .iter()
        .enumerate()
        .map(|(i, k)| event(k, i, 40))
        .collect();
    let second = (0..5)
        .map(|i| event("response.output_text.delta", i, if i == 3 { 70_000 } else { 300 }))
        .collect();
    (first, second)
}

/// The 70 KB event in 4 fragments, so it crosses the wire as a fragmented message.
const FRAGMENTS: usize = 4;

/// The server side: answers as [`server_events`] says, the big event fragmented.
fn serve(listener: TcpListener) -> Vec<String> {
    let (sock, _) = listener.accept().unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
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

#[test]
fn a_real_responses_websocket_capture_reads_as_its_exchanges() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let Some(capture) = Capture::start(dir.path(), port) else {
        return;
    };
    let server = std::thread::spawn(move || serve(listener));
    let url = format!("ws://127.0.0.1:{port}/v1/responses");
    let mut req = tungstenite::client::IntoClientRequest::into_client_request(url).unwrap();
    let h = req.headers_mut();
    h.insert("openai-beta", "responses_websockets=2026-02-06".parse().unwrap());
    h.insert("authorization", "Bearer sk-test-secret-key".parse().unwrap());
    let sock = TcpStream::connect(("127.0.0.1", port)).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let (mut ws, _) = tungstenite::client(req, sock).unwrap();
    let sent = client_messages();
    let (first, second) = server_events();
    for (msg, events) in sent.iter().zip([&first, &second]) {
        ws.send(Message::text(msg.clone())).unwrap();
        for e in events.iter() {
            assert_eq!(ws.read().unwrap().into_text().unwrap().as_str(), e);
        }
    }
    ws.send(Message::Ping(b"are you there".to_vec().into())).unwrap();
    assert!(matches!(ws.read().unwrap(), Message::Pong(_)));
    ws.close(Some(tungstenite::protocol::CloseFrame {
        code: tungstenite::protocol::frame::coding::CloseCode::Normal,
        reason: "done".into(),
    }))
    .unwrap();
    while ws.read().is_ok() {}
    drop(ws);
    assert_eq!(server.join().unwrap(), sent);
    let file = capture.stop();

    let (xs, stderr) = agentwire_pcap(&file);
    assert!(stderr.contains("wrote 3 exchanges (2 of them WebSocket messages)"), "{stderr}");
    assert_eq!(xs.len(), 3, "{xs:#?}");
    let upgrade = &xs[0];
    assert_eq!((upgrade.request.method.as_str(), upgrade.request.target.as_str()), ("GET", "/v1/responses"));
    assert_eq!(upgrade.response.as_ref().unwrap().status, 101);
    assert_eq!(upgrade.notes["websocket"], "upgrade");
    assert!(upgrade.websocket.is_none());
    let auth = upgrade.request.headers.get("authorization").unwrap();
    assert!(!auth.contains("sk-test-secret-key"), "{auth}");
    for (seq, (x, events)) in xs[1..].iter().zip([&first, &second]).enumerate() {
        let w = x.websocket.as_ref().unwrap();
        assert_eq!((w.upgrade, w.seq, w.extensions.as_str()), (upgrade.id, seq as u64, ""));
        assert_eq!(x.error, None, "{:?}", x.error);
        assert_eq!(x.request.body.bytes, sent[seq].as_bytes(), "request {seq}");
        assert_eq!(x.request.headers, upgrade.request.headers);
        let r = x.response.as_ref().unwrap();
        assert_eq!(r.status, 101);
        let want: Vec<u8> = events.iter().flat_map(|e| format!("{e}\n").into_bytes()).collect();
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
        x.websocket.as_ref().unwrap().frames.iter().filter(|f| f.dir == dir && f.opcode == op).count()
    };
    let (m0, m1) = (&xs[1], &xs[2]);
    assert_eq!(m0.websocket.as_ref().unwrap().frames.len(), 4);
    assert_eq!((count(m0, Direction::Client, 1), count(m0, Direction::Server, 1)), (1, 3));
    assert_eq!(m1.websocket.as_ref().unwrap().frames.len(), 1 + 4 + FRAGMENTS + 4);
    assert_eq!(count(m1, Direction::Server, 0), FRAGMENTS - 1);
    assert_eq!((count(m1, Direction::Client, 9), count(m1, Direction::Server, 10)), (1, 1));
    assert_eq!((count(m1, Direction::Client, 8), count(m1, Direction::Server, 8)), (1, 1));
    let w1 = m1.websocket.as_ref().unwrap();
    assert_eq!(
        w1.closed,
        Some(Close { by: Some(Direction::Client), code: Some(1000), reason: "done".into() })
    );
    assert!(m0.websocket.as_ref().unwrap().closed.is_none());
    // Client frames are masked: 4 more bytes on the wire than a server frame's header.
    for f in xs[1..].iter().flat_map(|x| &x.websocket.as_ref().unwrap().frames) {
        let header = f.wire_bytes - f.payload_bytes;
        let base = match f.payload_bytes { 0..=125 => 2, 126..=65535 => 4, _ => 10 };
        let mask = if f.dir == Direction::Client { 4 } else { 0 };
        assert_eq!(header, base + mask, "{f:?}");
        assert!(!f.compressed);
    }

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
    assert!(texts == whole, "tshark's messages differ from what was sent");
}
