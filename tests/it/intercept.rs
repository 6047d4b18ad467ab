//! The first-party route: TLS interception for api.anthropic.com with agentwire's CA
//! (issue 7's must-shows 1, 3 and 4).

use std::sync::Arc;

use agentwire::api::MessagesRequest;
use agentwire::capture::ca::CertificateAuthority;
use agentwire::capture::server::intercept::InterceptConfig;
use agentwire::capture::server::ServerConfig;
use agentwire::input::open_trace;
use agentwire::trace::Trace;

use crate::common::*;

fn record(route: &str, out: &std::path::Path, data_dir: &std::path::Path) {
    let o = std::process::Command::new(bin())
        .args([
            "record",
            "--cli",
            "claude-code@2.1.303",
            "--route",
            route,
            "-o",
        ])
        .arg(out)
        .env("AGENTWIRE_DATA_DIR", data_dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_no_key(out);
}

fn beta(t: &Trace, i: usize) -> String {
    t.exchanges[i]
        .request
        .headers
        .iter()
        .find(|(k, _)| k == "anthropic-beta")
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}

#[test]
fn first_party_route_shows_what_api_users_send() {
    let dir = tempfile::tempdir().unwrap();
    let (fp, bu) = (dir.path().join("fp.jsonl"), dir.path().join("bu.jsonl"));
    record("first-party", &fp, dir.path());
    record("base-url", &bu, dir.path());

    let t = open_trace(&fp).unwrap();
    assert_eq!(t.context.route.as_deref(), Some("first-party"));
    let msgs: Vec<usize> = (0..t.exchanges.len())
        .filter(|&i| t.exchanges[i].is_messages())
        .collect();
    assert_eq!(msgs.len(), 1);
    let r = MessagesRequest::parse(&t.exchanges[msgs[0]].request.body.bytes).unwrap();
    assert_eq!(r.tools.len(), 12);
    assert!(r.tools.iter().any(|t| t.name == "ToolSearch"));
    assert!(
        r.param("diagnostics").is_some(),
        "a top-level diagnostics object"
    );
    assert!(beta(&t, msgs[0])
        .split(',')
        .any(|b| b == "cache-diagnosis-2026-04-07"));
    assert_eq!(
        t.exchanges[msgs[0]].source.server.as_deref(),
        Some("api.anthropic.com:443")
    );
    // the side requests come before the first /v1/messages
    let side: Vec<&str> = t.exchanges[..msgs[0]].iter().map(|x| x.path()).collect();
    assert!(side.contains(&"/api/claude_code/settings"), "{side:?}");
    assert!(side.contains(&"/api/claude_code/policy_limits"), "{side:?}");
    assert!(t
        .exchanges
        .iter()
        .filter(|x| x.request.method == "CONNECT")
        .all(|x| x.request.target == "api.anthropic.com:443"));

    let t = open_trace(&bu).unwrap();
    assert_eq!(t.context.route.as_deref(), Some("base-url"));
    let x = t.exchanges.iter().find(|x| x.is_messages()).unwrap();
    let r = MessagesRequest::parse(&x.request.body.bytes).unwrap();
    assert_eq!(r.tools.len(), 20);
    assert!(r.param("diagnostics").is_none());
    let b = x
        .request
        .headers
        .iter()
        .find(|(k, _)| k == "anthropic-beta")
        .unwrap();
    assert!(!b.1.contains("cache-diagnosis-2026-04-07"));
    assert!(t
        .exchanges
        .iter()
        .all(|x| !x.path().starts_with("/api/claude_code")));
}

async fn intercepting(dir: &std::path::Path) -> (TestServer, Arc<CertificateAuthority>) {
    let ca = Arc::new(CertificateAuthority::load_or_create(dir).unwrap());
    let cfg = ServerConfig {
        intercept: Some(Arc::new(InterceptConfig {
            hosts: vec!["api.anthropic.com".into()],
            ca: ca.clone(),
            tunnel_others: false,
        })),
        ..Default::default()
    };
    (TestServer::start(cfg).await, ca)
}

fn client(proxy: &str, ca: Option<&str>) -> reqwest::Client {
    let mut b = reqwest::Client::builder()
        .proxy(reqwest::Proxy::https(proxy).unwrap())
        // resolve the first-party host to nowhere: the proxy is the only way there
        .resolve("api.anthropic.com", "127.0.0.9:443".parse().unwrap());
    if let Some(pem) = ca {
        b = b.add_root_certificate(reqwest::Certificate::from_pem(pem.as_bytes()).unwrap());
    }
    b.build().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn intercepted_requests_are_answered_and_untrusting_clients_are_told_what_to_set() {
    let dir = tempfile::tempdir().unwrap();
    let (srv, ca) = intercepting(dir.path()).await;
    let body = r#"{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}"#;
    let ok = client(&srv.server.base_url(), Some(ca.cert_pem()))
        .post("https://api.anthropic.com/v1/messages")
        .header("x-api-key", TEST_KEY)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status().as_u16(), 200);
    let v: serde_json::Value = ok.json().await.unwrap();
    assert_eq!(v["type"], "message");

    let err = client(&srv.server.base_url(), None)
        .post("https://api.anthropic.com/v1/messages")
        .body(body)
        .send()
        .await;
    assert!(err.is_err(), "a client without the CA must fail TLS");
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let t = srv.finish().await;
    let failed: Vec<_> = t
        .exchanges
        .iter()
        .filter_map(|x| x.error.as_ref())
        .filter(|e| e.kind == "tls_failed")
        .collect();
    assert_eq!(
        failed.len(),
        1,
        "{:?}",
        t.exchanges.iter().map(|x| &x.error).collect::<Vec<_>>()
    );
    assert!(
        failed[0].message.contains("NODE_EXTRA_CA_CERTS="),
        "{}",
        failed[0].message
    );
    assert!(failed[0]
        .message
        .contains(&dir.path().join("ca.pem").display().to_string()));
    let m = t.exchanges.iter().find(|x| x.is_messages()).unwrap();
    assert_eq!(m.request.body.bytes, body.as_bytes());
    assert_eq!(m.source.server.as_deref(), Some("api.anthropic.com:443"));
    // the CA key never reaches the trace
    let trace_text = std::fs::read_to_string(dir.path().join("ca.key")).unwrap();
    let key_line = trace_text.lines().nth(1).unwrap();
    assert!(!serde_json::to_string(&t.exchanges)
        .unwrap()
        .contains(key_line));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_hosts_are_refused_and_get_no_certificate() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let (srv, _ca) = intercepting(dir.path()).await;
    let addr = srv.server.addr;
    let responses = tokio::task::spawn_blocking(move || {
        ["127.0.0.1:22", "evil.example:443"]
            .iter()
            .map(|target| {
                let mut s = std::net::TcpStream::connect(addr).unwrap();
                s.write_all(
                    format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").as_bytes(),
                )
                .unwrap();
                let mut buf = [0u8; 512];
                let n = s.read(&mut buf).unwrap();
                // nothing more comes: no TLS server hello, no tunnel
                s.set_read_timeout(Some(std::time::Duration::from_millis(300)))
                    .unwrap();
                let more = s.read(&mut buf[n..]).unwrap_or(0);
                (String::from_utf8_lossy(&buf[..n]).into_owned(), more)
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for (head, more) in &responses {
        assert!(head.starts_with("HTTP/1.1 403"), "{head}");
        assert_eq!(*more, 0);
    }
    let t = srv.finish().await;
    let refused: Vec<&str> = t
        .exchanges
        .iter()
        .filter(|x| {
            x.error
                .as_ref()
                .is_some_and(|e| e.kind == "refused_connect")
        })
        .map(|x| x.request.target.as_str())
        .collect();
    assert_eq!(refused, ["127.0.0.1:22", "evil.example:443"]);
}

/// Found by an adversarial test: `CONNECT alice:PASSWORD@api.anthropic.com:443` was
/// intercepted as if valid and its password written to the trace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connect_target_with_a_password_is_refused_and_the_password_never_reaches_disk() {
    // The second round found an empty user and a token alone as the userinfo.
    for (target, secret) in [
        ("alice:PASSWORDXYZ@api.anthropic.com:443", "PASSWORDXYZ"),
        (":EMPTYUSERPW1@api.anthropic.com:443", "EMPTYUSERPW1"),
        ("TOKENONLYUSER123@api.anthropic.com:443", "TOKENONLYUSER123"),
    ] {
        refused_connect_keeps_no_secret(target, secret).await;
    }
}

async fn refused_connect_keeps_no_secret(target: &'static str, secret: &str) {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let (srv, _ca) = intercepting(dir.path()).await;
    let addr = srv.server.addr;
    let head = tokio::task::spawn_blocking(move || {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.write_all(
            format!("CONNECT {target} HTTP/1.1\r\nHost: api.anthropic.com\r\n\r\n").as_bytes(),
        )
        .unwrap();
        let mut buf = [0u8; 512];
        let n = s.read(&mut buf).unwrap();
        String::from_utf8_lossy(&buf[..n]).into_owned()
    })
    .await
    .unwrap();
    assert!(head.starts_with("HTTP/1.1 400"), "{head}");
    srv.server.shutdown().await.unwrap();
    let path = srv.dir.path().join("trace.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains(secret), "{text}");
    let t = open_trace(&path).unwrap();
    let x = &t.exchanges[0];
    assert_eq!(x.error.as_ref().unwrap().kind, "refused_connect");
    assert!(
        x.request.target.ends_with("]@api.anthropic.com:443"),
        "{}",
        x.request.target
    );
}
