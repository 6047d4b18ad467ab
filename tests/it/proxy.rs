//! The recording proxy (`serve --upstream`): fidelity against direct traffic, HTTPS
//! upstreams with a private CA, error pass-through, and no open relay.

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::Duration;

use agentwire::capture::ca::CertificateAuthority;
use agentwire::capture::server::proxy::Upstream;
use agentwire::capture::server::{tls, Mode, Script, ServerConfig};
use agentwire::trace::redact::marker;

use crate::common::*;

const SCRIPT: &str = r#"{"threads":[
  {"name":"main","match":{"has_tools":true},"turns":[
    {"content":[{"type":"text","text":"Let me look."},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls -la /tmp"}}]},
    {"content":[{"type":"text","text":"Done: three files."}]}]},
  {"name":"overloaded","match":{"first_user_contains":"overload"},"turns":[{"content":[],"fail":{"status":529}}]},
  {"name":"reset","match":{"first_user_contains":"reset"},"turns":[{"content":[{"type":"text","text":"a long partial answer"}],"fail":{"drop":true,"after_events":4}}]}]}"#;

fn script_mode() -> ServerConfig {
    ServerConfig {
        mode: Mode::Script(Arc::new(Script::parse(SCRIPT).unwrap())),
        ..Default::default()
    }
}

fn proxy_to(url: &str, ca: Option<&std::path::Path>) -> ServerConfig {
    let up = Upstream::new(url, ca, Duration::from_secs(5)).unwrap();
    ServerConfig {
        mode: Mode::Proxy(Arc::new(up)),
        ..Default::default()
    }
}

fn traffic() -> Vec<(&'static str, Vec<u8>)> {
    let turn0 = br#"{"model":"m","stream":true,"tools":[{"name":"Bash","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"list files"}]}"#.to_vec();
    let turn1 = br#"{"model":"m","stream":false,"tools":[{"name":"Bash","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":"list files"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls -la /tmp"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"a b c"}]}]}"#.to_vec();
    vec![
        ("/v1/messages?beta=true", turn0),
        ("/v1/messages", turn1),
        (
            "/v1/messages/count_tokens",
            br#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#.to_vec(),
        ),
    ]
}

async fn send_all(base: &str) -> Vec<(u16, Vec<u8>)> {
    let c = reqwest::Client::new();
    let mut out = Vec::new();
    for (path, body) in traffic() {
        let r = c
            .post(format!("{base}{path}"))
            .header("content-type", "application/json")
            .header("x-api-key", TEST_KEY)
            .body(body)
            .send()
            .await
            .unwrap();
        out.push((r.status().as_u16(), r.bytes().await.unwrap().to_vec()));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxied_traffic_is_identical_to_direct_traffic() {
    let direct_up = TestServer::start(script_mode()).await;
    let direct = send_all(&direct_up.server.base_url()).await;

    let up = TestServer::start(script_mode()).await;
    let proxy = TestServer::start(proxy_to(&up.server.base_url(), None)).await;
    let via = send_all(&proxy.server.base_url()).await;
    assert_eq!(
        via, direct,
        "the client sees the same statuses and bytes, event for event"
    );
    assert!(direct[0].1.starts_with(b"event: message_start"));

    let (pt, ut) = (proxy.finish().await, up.finish().await);
    direct_up.finish().await;
    let sent: Vec<Vec<u8>> = traffic().into_iter().map(|(_, b)| b).collect();
    let at_proxy: Vec<Vec<u8>> = pt
        .exchanges
        .iter()
        .map(|x| x.request.body.bytes.clone())
        .collect();
    let at_upstream: Vec<Vec<u8>> = ut
        .exchanges
        .iter()
        .map(|x| x.request.body.bytes.clone())
        .collect();
    assert_eq!(at_proxy, sent);
    assert_eq!(at_upstream, sent);
    // the key went upstream (the upstream saw the same key, by fingerprint) but only its
    // marker is on disk (TestServer::finish checked the key is in neither file)
    let key_at = |t: &agentwire::trace::Trace| {
        t.exchanges[0]
            .request
            .headers
            .iter()
            .find(|(k, _)| k == "x-api-key")
            .unwrap()
            .1
            .clone()
    };
    assert_eq!(key_at(&ut), marker(TEST_KEY));
    assert_eq!(key_at(&pt), marker(TEST_KEY));
    assert_eq!(
        pt.exchanges[0].source.upstream.as_deref(),
        Some(format!("{}/", ut_base(&ut)).as_str())
    );
    // recorded responses equal what the client received
    for (x, (_, bytes)) in pt.exchanges.iter().zip(&via) {
        assert_eq!(&x.response.as_ref().unwrap().body.bytes, bytes);
    }
}

fn ut_base(t: &agentwire::trace::Trace) -> String {
    format!("http://{}", t.exchanges[0].source.server.as_ref().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_upstream_with_a_private_ca_works_only_when_trusted() {
    let ca = CertificateAuthority::generate().unwrap();
    let (chain, key) = ca.mint_leaf(&["localhost".into()]).unwrap();
    let up = TestServer::start(ServerConfig {
        tls: Some(tls::server_config(chain, key).unwrap()),
        ..script_mode()
    })
    .await;
    let url = format!("https://localhost:{}", up.server.addr.port());
    let dir = tempfile::tempdir().unwrap();
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca.cert_pem()).unwrap();

    let trusted = TestServer::start(proxy_to(&url, Some(&ca_file))).await;
    let got = send_all(&trusted.server.base_url()).await;
    assert_eq!(
        got.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
        [200, 200, 200]
    );

    let untrusted = TestServer::start(proxy_to(&url, None)).await;
    let (status, body) = send_all(&untrusted.server.base_url()).await.remove(0);
    assert_eq!(status, 502);
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("certificate") || msg.contains("UnknownIssuer"),
        "{msg}"
    );
    let t = untrusted.finish().await;
    assert_eq!(
        t.exchanges[0].error.as_ref().unwrap().kind,
        "upstream_error"
    );
    trusted.finish().await;
    assert_eq!(
        up.finish().await.exchanges.len(),
        3,
        "only the trusted proxy's requests arrived"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_529_and_reset_mid_stream_pass_through() {
    let up = TestServer::start(script_mode()).await;
    let proxy = TestServer::start(proxy_to(&up.server.base_url(), None)).await;
    let c = reqwest::Client::new();
    let post = |text: &str| {
        c.post(proxy.url("/v1/messages"))
            .header("content-type", "application/json")
            .body(format!(
                r#"{{"model":"m","stream":true,"messages":[{{"role":"user","content":"{text}"}}]}}"#
            ))
            .send()
    };
    let r = post("overload").await.unwrap();
    assert_eq!(r.status().as_u16(), 529);
    let v: serde_json::Value = r.json().await.unwrap();
    assert_eq!(v["error"]["type"], "overloaded_error");

    let r = post("reset").await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(
        r.bytes().await.is_err(),
        "the client sees the stream break, as from the API"
    );

    let t = proxy.finish().await;
    assert_eq!(t.exchanges[0].response.as_ref().unwrap().status, 529);
    let reset = &t.exchanges[1];
    assert_eq!(reset.error.as_ref().unwrap().kind, "upstream_reset");
    let partial = agentwire::api::sse::parse_events(&reset.response.as_ref().unwrap().body.bytes);
    assert_eq!(
        partial.len(),
        4,
        "the 4 events sent before the reset are kept"
    );
    up.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_refuses_other_hosts_and_connect() {
    let up = TestServer::start(script_mode()).await;
    let proxy = TestServer::start(proxy_to(&up.server.base_url(), None)).await;
    let addr = proxy.server.addr;
    let ask = move |head: &'static str| {
        std::thread::spawn(move || {
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            s.write_all(head.as_bytes()).unwrap();
            let mut buf = [0u8; 4096];
            let n = s.read(&mut buf).unwrap_or(0);
            String::from_utf8_lossy(&buf[..n]).into_owned()
        })
        .join()
        .unwrap()
    };
    let r1 = tokio::task::spawn_blocking(move || {
        ask("GET http://evil.example/v1/models HTTP/1.1\r\nHost: evil.example\r\n\r\n")
    })
    .await
    .unwrap();
    assert!(r1.starts_with("HTTP/1.1 403"), "{r1}");
    assert!(r1.contains("only forwards to"), "{r1}");
    let r2 = tokio::task::spawn_blocking(move || {
        ask("CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n")
    })
    .await
    .unwrap();
    assert!(r2.starts_with("HTTP/1.1 403"), "{r2}");
    let t = proxy.finish().await;
    assert_eq!(t.exchanges.len(), 2);
    assert!(t
        .exchanges
        .iter()
        .all(|x| x.error.as_ref().unwrap().kind == "refused_upstream"));
    assert_eq!(
        up.finish().await.exchanges.len(),
        0,
        "nothing reached the upstream"
    );
}
