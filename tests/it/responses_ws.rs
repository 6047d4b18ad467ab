//! The Responses WebSocket with a real client (`tungstenite`) on loopback: prewarm, a
//! scripted turn, a `previous_response_id` continuation, an unknown id; the recorded
//! upgrade and one exchange per message with its frames; refusal, close-after, a socket
//! cut mid-message, replay over both transports and relay through the recording proxy.

use std::io::Write;
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use agentwire::api::responses::stream::{assemble_messages, assemble_sse};
use agentwire::api::BlockKind;
use agentwire::capture::server::playback::{Replay, Timing};
use agentwire::capture::server::proxy::Upstream;
use agentwire::capture::server::{Mode, Script, ServerConfig, WebSocketOptions};
use agentwire::trace::websocket::Direction;
use agentwire::trace::Trace;
use serde_json::{json, Value};
use tungstenite::client::IntoClientRequest;
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

use super::responses::{body, first_input, SCENARIO};
use crate::common::*;

type Ws = WebSocket<MaybeTlsStream<TcpStream>>;

/// Open `ws://…/v1/responses` as Codex does (it offers deflate; it must be declined).
fn open(base: &str) -> Ws {
    let url = format!("{}/v1/responses", base.replace("http://", "ws://"));
    let mut req = url.into_client_request().unwrap();
    let h = req.headers_mut();
    h.insert(
        "authorization",
        format!("Bearer {TEST_KEY}").parse().unwrap(),
    );
    h.insert(
        "openai-beta",
        "responses_websockets=2026-02-06".parse().unwrap(),
    );
    h.insert(
        "sec-websocket-extensions",
        "permessage-deflate; client_max_window_bits"
            .parse()
            .unwrap(),
    );
    let (ws, resp) = tungstenite::connect(req).unwrap();
    assert!(resp.headers().get("sec-websocket-extensions").is_none());
    if let MaybeTlsStream::Plain(s) = ws.get_ref() {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    }
    ws
}

/// Send one `response.create` and read messages until the response ends (or an error).
fn turn<S: std::io::Read + Write>(ws: &mut WebSocket<S>, msg: Value) -> Vec<Value> {
    ws.send(Message::text(msg.to_string())).unwrap();
    let mut got = Vec::new();
    loop {
        let Message::Text(t) = ws.read().unwrap() else {
            continue;
        };
        let v: Value = serde_json::from_str(t.as_str()).unwrap();
        let ty = v["type"].as_str().unwrap_or("").to_string();
        got.push(v);
        if ty == "response.completed" || ty == "response.failed" || ty == "error" {
            return got;
        }
    }
}

fn create(input: Vec<Value>, prev: Option<&str>, generate: Option<bool>) -> Value {
    let mut m: Value = serde_json::from_slice(&body(&input, true)).unwrap();
    m["type"] = json!("response.create");
    if let Some(p) = prev {
        m["previous_response_id"] = json!(p);
    }
    if let Some(g) = generate {
        m["generate"] = json!(g);
    }
    m
}

fn lines(events: &[Value]) -> Vec<u8> {
    events
        .iter()
        .map(|e| format!("{e}\n"))
        .collect::<String>()
        .into_bytes()
}

fn script_config() -> ServerConfig {
    ServerConfig {
        mode: Mode::Script(Arc::new(Script::parse(SCENARIO).unwrap())),
        ..ServerConfig::default()
    }
}

/// The Codex-like session: prewarm, first turn, continuation, unknown id; then a close.
fn session(base: String) -> Vec<Vec<Value>> {
    let mut ws = open(&base);
    let pre = turn(&mut ws, create(vec![], None, Some(false)));
    let pre_id = pre[0]["response"]["id"].as_str().unwrap().to_string();
    let first = turn(&mut ws, create(first_input(), Some(&pre_id), None));
    let m = assemble_messages(&lines(&first));
    let (call_id, args) = match &m.content[0].kind {
        BlockKind::ToolUse { id, input, .. } => (id.clone(), input.clone()),
        k => panic!("{k:?}"),
    };
    assert_eq!(args["cmd"], "sleep 6; echo done");
    let out = json!({"type": "function_call_output", "call_id": call_id,
        "output": "Process running with session ID 4242\nOutput:\n"});
    let next = turn(&mut ws, create(vec![out], m.id.as_deref(), None));
    let unknown = turn(&mut ws, create(vec![], Some("resp_nobody"), None));
    ws.close(None).unwrap();
    while ws.read().is_ok() {}
    vec![pre, first, next, unknown]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prewarm_turn_continuation_and_unknown_id_are_answered_and_recorded() {
    let s = TestServer::start(script_config()).await;
    let base = s.server.base_url();
    let got = tokio::task::spawn_blocking(move || session(base))
        .await
        .unwrap();
    let types = |evs: &[Value]| {
        evs.iter()
            .map(|e| e["type"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        types(&got[0]),
        [
            "response.created",
            "response.in_progress",
            "response.completed"
        ]
    );
    assert_eq!(got[0][2]["response"]["output"], json!([]));
    assert_eq!(got[0][2]["response"]["usage"]["total_tokens"], 0);
    // The continuation is turn 1 of the rebuilt conversation, with the captured id.
    let next = assemble_messages(&lines(&got[2]));
    assert!(next.complete);
    match &next.content[0].kind {
        BlockKind::ToolUse { name, input, .. } => {
            assert_eq!(
                (name.as_str(), input["session_id"].as_u64()),
                ("write_stdin", Some(4242))
            )
        }
        k => panic!("{k:?}"),
    }
    assert_eq!(got[3][0]["error"]["code"], "previous_response_not_found");
    assert_eq!(got[3][0]["status"], 400);
    let t = s.finish().await;
    check_recording(&t);
}

/// The trace: the upgrade, then one exchange per client message with its frames.
fn check_recording(t: &Trace) {
    assert_eq!(t.exchanges.len(), 5, "upgrade + 4 messages");
    let up = &t.exchanges[0];
    assert_eq!(
        (
            up.request.method.as_str(),
            up.response.as_ref().unwrap().status
        ),
        ("GET", 101)
    );
    assert_eq!(up.notes["websocket"], "upgrade");
    assert!(up.request.headers.get("openai-beta").is_some());
    for (i, x) in t.exchanges[1..].iter().enumerate() {
        let ws = x.websocket.as_ref().expect("a message exchange");
        assert_eq!((ws.upgrade, ws.seq), (up.id, i as u64));
        assert_eq!(x.response.as_ref().unwrap().status, 101);
        assert!(
            x.request.headers.get("openai-beta").is_some(),
            "the upgrade's headers are repeated"
        );
        let client: Vec<_> = ws
            .frames
            .iter()
            .filter(|f| f.dir == Direction::Client)
            .collect();
        assert_eq!((client[0].opcode, client[0].fin), (1, true));
        assert_eq!(client[0].payload_bytes, x.request.body.len() as u64);
        assert!(
            client[0].wire_bytes > client[0].payload_bytes,
            "masked client frame"
        );
        let lines = x
            .response
            .as_ref()
            .unwrap()
            .body
            .bytes
            .iter()
            .filter(|b| **b == b'\n')
            .count();
        let server = ws
            .frames
            .iter()
            .filter(|f| f.dir == Direction::Server && f.opcode == 1)
            .count();
        assert_eq!(lines, server, "one line per server message");
    }
    assert_eq!(t.exchanges[2].notes["script"]["turn"], 0);
    assert_eq!(t.exchanges[3].notes["script"]["turn"], 1);
    assert_eq!(t.exchanges[3].notes["chain"]["known"], true);
    let last = t.exchanges[4].websocket.as_ref().unwrap();
    let closed = last.closed.as_ref().expect("the close is recorded");
    assert_eq!(closed.by, Some(Direction::Client));
    assert!(last
        .frames
        .iter()
        .any(|f| f.opcode == 8 && f.dir == Direction::Client));
    assert!(last
        .frames
        .iter()
        .any(|f| f.opcode == 8 && f.dir == Direction::Server));
    let m = agentwire::api::responses::stream::assemble_messages(
        &t.exchanges[2].response.as_ref().unwrap().body.bytes,
    );
    assert!(m.complete);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_upgrade_is_recorded_and_close_after_closes() {
    let s = TestServer::start(ServerConfig {
        websocket: WebSocketOptions {
            refuse: true,
            close_after: None,
        },
        ..ServerConfig::default()
    })
    .await;
    let base = s.server.base_url().replace("http://", "ws://");
    let e = tokio::task::spawn_blocking(move || {
        tungstenite::connect(format!("{base}/v1/responses")).unwrap_err()
    })
    .await
    .unwrap();
    match e {
        tungstenite::Error::Http(r) => assert_eq!(r.status().as_u16(), 426),
        e => panic!("{e}"),
    }
    let t = s.finish().await;
    let x = &t.exchanges[0];
    assert_eq!(x.response.as_ref().unwrap().status, 426);
    assert_eq!(x.notes["websocket"], "refused");
    assert_eq!(x.error.as_ref().unwrap().kind, "websocket_refused");
    let body: Value = serde_json::from_slice(&x.response.as_ref().unwrap().body.bytes).unwrap();
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("HTTP only"));

    let s = TestServer::start(ServerConfig {
        websocket: WebSocketOptions {
            refuse: false,
            close_after: Some(1),
        },
        ..ServerConfig::default()
    })
    .await;
    let base = s.server.base_url();
    let closed = tokio::task::spawn_blocking(move || {
        let mut ws = open(&base);
        turn(&mut ws, create(vec![], None, Some(false)));
        turn(&mut ws, create(first_input(), None, None));
        loop {
            match ws.read() {
                Ok(Message::Close(cf)) => return cf.map(|c| u16::from(c.code)),
                Ok(_) => continue,
                Err(e) => panic!("{e}"),
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(closed, Some(1000));
    let t = s.finish().await;
    let last = t.exchanges.last().unwrap().websocket.as_ref().unwrap();
    assert_eq!(last.closed.as_ref().unwrap().by, Some(Direction::Server));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_cut_mid_message_is_recorded_with_what_arrived() {
    let s = TestServer::start(ServerConfig::default()).await;
    let base = s.server.base_url();
    tokio::task::spawn_blocking(move || {
        let mut ws = open(&base);
        turn(&mut ws, create(vec![], None, Some(false)));
        let MaybeTlsStream::Plain(tcp) = ws.get_mut() else {
            panic!()
        };
        // A masked text frame declaring 100 payload bytes, of which 10 are sent.
        let mask = [7u8, 1, 2, 3];
        let mut frame = vec![0x81, 0x80 | 100];
        frame.extend_from_slice(&mask);
        frame.extend(
            b"{\"type\":\"r"
                .iter()
                .enumerate()
                .map(|(i, b)| b ^ mask[i % 4]),
        );
        tcp.write_all(&frame).unwrap();
        tcp.flush().unwrap();
        std::thread::sleep(Duration::from_millis(200));
        tcp.shutdown(std::net::Shutdown::Both).unwrap();
    })
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let t = s.finish().await;
    let x = t.exchanges.last().unwrap();
    let ws = x.websocket.as_ref().unwrap();
    assert_eq!(ws.seq, 1);
    assert_eq!(x.request.body.bytes, b"{\"type\":\"r");
    assert!(x.request.body.truncated);
    assert_eq!(ws.closed.as_ref().unwrap().by, None);
    assert_eq!(x.error.as_ref().unwrap().kind, "client_disconnected");
    assert_eq!(ws.frames[0].payload_bytes, 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_recording_replays_over_both_transports_and_the_proxy_relays() {
    // Record through the recording proxy, relaying to a script server over ws://.
    let upstream = TestServer::start(script_config()).await;
    let up = Upstream::new(&upstream.server.base_url(), None, Duration::from_secs(5)).unwrap();
    let proxy = TestServer::start(ServerConfig {
        mode: Mode::Proxy(Arc::new(up)),
        ..ServerConfig::default()
    })
    .await;
    let base = proxy.server.base_url();
    let got = tokio::task::spawn_blocking(move || session(base))
        .await
        .unwrap();
    assert_eq!(got[3][0]["error"]["code"], "previous_response_not_found");
    let recorded = proxy.finish().await;
    upstream.finish().await;
    check_recording_relayed(&recorded);
    // Replay it: over a WebSocket, and over HTTP as SSE.
    let replay = Replay::from_trace(recorded, Timing::None);
    assert_eq!(
        replay.len(),
        2,
        "the two generated turns (the prewarm is not an answer)"
    );
    let s = TestServer::start(ServerConfig {
        mode: Mode::Replay(Arc::new(replay)),
        ..ServerConfig::default()
    })
    .await;
    let base = s.server.base_url();
    let again = tokio::task::spawn_blocking(move || session(base))
        .await
        .unwrap();
    let ids = |evs: &[Vec<Value>]| assemble_messages(&lines(&evs[2])).content[0].clone();
    assert_eq!(ids(&again), ids(&got));
    let (sse_status, sse) = {
        let r = reqwest::Client::new()
            .post(s.url("/v1/responses"))
            .header("content-type", "application/json")
            .body(body(&first_input(), true))
            .send()
            .await
            .unwrap();
        (r.status().as_u16(), r.bytes().await.unwrap().to_vec())
    };
    assert_eq!(sse_status, 200);
    let m = assemble_sse(&sse);
    assert!(m.complete);
    assert_eq!(
        m.content[0].clone(),
        assemble_messages(&lines(&got[1])).content[0]
    );
    let t = s.finish().await;
    let last = t.exchanges.last().unwrap();
    assert!(last.notes["replay"]["converted"]
        .as_str()
        .unwrap()
        .contains("SSE"));
}

/// The proxy's trace: the same shape as the server's own, marked as proxied.
fn check_recording_relayed(t: &Trace) {
    assert_eq!(
        t.exchanges.len(),
        5,
        "{:?}",
        t.exchanges
            .iter()
            .map(|x| &x.request.target)
            .collect::<Vec<_>>()
    );
    assert_eq!(t.exchanges[0].response.as_ref().unwrap().status, 101);
    assert!(t.exchanges[0].source.upstream.is_some());
    for x in &t.exchanges[1..] {
        assert!(x.websocket.is_some());
        assert!(
            !x.response.as_ref().unwrap().body.bytes.is_empty()
                || x.websocket.as_ref().unwrap().closed.is_some()
        );
    }
    let m = assemble_messages(&t.exchanges[2].response.as_ref().unwrap().body.bytes);
    assert!(m.complete);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn intercepted_openai_hosts_get_the_websocket_and_post_inside_tls() {
    use agentwire::capture::ca::CertificateAuthority;
    use agentwire::capture::server::intercept::InterceptConfig;
    use std::io::Read;
    let ca = Arc::new(CertificateAuthority::generate().unwrap());
    let pem = ca.cert_pem().to_string();
    let s = TestServer::start(ServerConfig {
        intercept: Some(Arc::new(InterceptConfig {
            hosts: vec!["api.openai.com".into(), "chatgpt.com".into()],
            ca,
            tunnel_others: false,
        })),
        ..script_config()
    })
    .await;
    let addr = s.server.addr;
    let tls = move |host: &str| {
        let (code, tcp) = crate::connect::connect(addr, &format!("{host}:443"));
        assert_eq!(code, 200);
        let name = rustls::pki_types::ServerName::try_from(host.to_string()).unwrap();
        let conn = rustls::ClientConnection::new(tls_client_config(pem.as_bytes()), name).unwrap();
        rustls::StreamOwned::new(conn, tcp)
    };
    tokio::task::spawn_blocking(move || {
        let stream = tls("api.openai.com");
        let (mut ws, resp) = tungstenite::client("wss://api.openai.com/v1/responses", stream).unwrap();
        assert_eq!(resp.status().as_u16(), 101);
        let pre = turn(&mut ws, create(vec![], None, Some(false)));
        let id = pre[0]["response"]["id"].as_str().unwrap().to_string();
        let first = turn(&mut ws, create(first_input(), Some(&id), None));
        assert!(assemble_messages(&lines(&first)).complete);
        ws.close(None).unwrap();
        while ws.read().is_ok() {}
        let mut https = tls("chatgpt.com");
        let b = body(&first_input(), true);
        write!(https, "POST /backend-api/codex/responses HTTP/1.1\r\nhost: chatgpt.com\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", b.len()).unwrap();
        https.write_all(&b).unwrap();
        let mut out = Vec::new();
        let _ = https.read_to_end(&mut out);
        assert!(out.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&out));
    })
    .await
    .unwrap();
    let t = s.finish().await;
    let servers: Vec<Option<&str>> = (t.exchanges.iter())
        .filter(|x| x.request.method != "CONNECT")
        .map(|x| x.source.server.as_deref())
        .collect();
    assert!(
        servers
            .iter()
            .filter(|s| **s == Some("api.openai.com:443"))
            .count()
            >= 3,
        "{servers:?}"
    );
    assert!(servers.contains(&Some("chatgpt.com:443")));
    let turns: Vec<_> = (t.exchanges.iter())
        .filter_map(|x| x.notes.get("script").map(|n| n["turn"].clone()))
        .collect();
    assert_eq!(
        turns,
        [json!(0), json!(0)],
        "the WebSocket turn and the POST"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_that_is_no_response_create_gets_an_error_and_is_kept_as_it_came() {
    let s = TestServer::start(ServerConfig::default()).await;
    let base = s.server.base_url();
    let got = tokio::task::spawn_blocking(move || {
        let mut ws = open(&base);
        ws.send(Message::text("not json {")).unwrap();
        let Message::Text(t) = ws.read().unwrap() else {
            panic!()
        };
        let first: Value = serde_json::from_str(t.as_str()).unwrap();
        ws.send(Message::Ping(vec![1, 2].into())).unwrap();
        let second = turn(&mut ws, json!({"type": "response.cancel"}));
        ws.close(None).unwrap();
        while ws.read().is_ok() {}
        (first, second)
    })
    .await
    .unwrap();
    assert_eq!(
        (got.0["type"].as_str(), got.0["error"]["code"].as_str()),
        (Some("error"), Some("invalid_message"))
    );
    assert!(got.1[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("response.cancel"));
    let t = s.finish().await;
    let x = &t.exchanges[1];
    assert_eq!(x.request.body.bytes, b"not json {");
    assert_eq!(x.error.as_ref().unwrap().kind, "invalid_message");
    let ws = x.websocket.as_ref().unwrap();
    assert!(
        ws.frames.iter().any(|f| f.opcode == 9),
        "the ping is recorded"
    );
    assert!(ws.frames.iter().any(|f| f.opcode == 10), "and the pong");
}
