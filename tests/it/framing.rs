//! HTTP framing at the server and the recording proxy (issue 10, kinds 5, 7 and 13):
//! complete responses are recorded complete for every framing and status class, every
//! byte the server read ends up in an exchange, hop-by-hop headers stay on their hop, and
//! transfer codings other than chunked are refused.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use agentwire::capture::server::proxy::Upstream;
use agentwire::capture::server::{Mode, ServerConfig};

use crate::common::*;

/// The body an upstream sends for `/FRAMING/STATUS`.
fn body_for(path: &str) -> Vec<u8> {
    format!(
        "{{\"type\":\"message\",\"path\":\"{path}\",\"pad\":\"{}\"}}",
        "z".repeat(3000)
    )
    .into_bytes()
}

/// A raw HTTP/1.1 upstream: `/cl/S`, `/chunked/S`, `/close/S` answer status S with that
/// framing; `/none/S` answers S with no body (204, 304), and a HEAD gets a Content-Length
/// but no body.
fn framing_upstream() -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            std::thread::spawn(move || {
                s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                let mut got = Vec::new();
                let mut buf = [0u8; 8192];
                loop {
                    let Some(h) = got.windows(4).position(|w| w == b"\r\n\r\n") else {
                        match s.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(k) => got.extend_from_slice(&buf[..k]),
                        }
                        continue;
                    };
                    let head = String::from_utf8_lossy(&got[..h]).to_string();
                    let cl: usize = head
                        .to_ascii_lowercase()
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .map_or(0, |v| v.trim().parse().unwrap());
                    while got.len() < h + 4 + cl {
                        match s.read(&mut buf) {
                            Ok(0) | Err(_) => return,
                            Ok(k) => got.extend_from_slice(&buf[..k]),
                        }
                    }
                    got.drain(..h + 4 + cl);
                    let mut words = head.split_whitespace();
                    let method = words.next().unwrap().to_string();
                    let path = words.next().unwrap().to_string();
                    let mut parts = path.trim_start_matches('/').split('/');
                    let (framing, status) = (parts.next().unwrap(), parts.next().unwrap());
                    let reason = match status {
                        "200" => "OK",
                        "204" => "No Content",
                        "302" => "Found",
                        "304" => "Not Modified",
                        "404" => "Not Found",
                        _ => "Overloaded",
                    };
                    let body = body_for(&path);
                    let mut out = format!("HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\nlocation: /elsewhere\r\n");
                    match framing {
                        "cl" | "none" if method == "HEAD" => {
                            out.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
                            s.write_all(out.as_bytes()).unwrap();
                        }
                        "cl" => {
                            out.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
                            s.write_all(out.as_bytes()).unwrap();
                            s.write_all(&body).unwrap();
                        }
                        "chunked" => {
                            out.push_str("transfer-encoding: chunked\r\n\r\n");
                            s.write_all(out.as_bytes()).unwrap();
                            for piece in body.chunks(1000) {
                                s.write_all(format!("{:x}\r\n", piece.len()).as_bytes())
                                    .unwrap();
                                s.write_all(piece).unwrap();
                                s.write_all(b"\r\n").unwrap();
                                std::thread::sleep(Duration::from_millis(2));
                            }
                            s.write_all(b"0\r\n\r\n").unwrap();
                        }
                        "close" => {
                            out.push_str("connection: close\r\n\r\n");
                            s.write_all(out.as_bytes()).unwrap();
                            s.write_all(&body).unwrap();
                            return;
                        }
                        _ => {
                            out.push_str("\r\n");
                            s.write_all(out.as_bytes()).unwrap();
                        }
                    }
                }
            });
        }
    });
    addr
}

/// Every response with a Content-Length was recorded as `client_disconnected` and
/// truncated although the client got all of it. Now: framing × status class, complete is
/// complete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_records_complete_responses_for_every_framing_and_status_class() {
    let up = framing_upstream();
    let upstream = Upstream::new(&format!("http://{up}"), None, Duration::from_secs(5)).unwrap();
    let proxy = TestServer::start(ServerConfig {
        mode: Mode::Proxy(Arc::new(upstream)),
        ..Default::default()
    })
    .await;
    let c = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let mut cases: Vec<(&str, String, u16, Vec<u8>)> = Vec::new();
    for framing in ["cl", "chunked", "close"] {
        for status in [200u16, 302, 404, 529] {
            let path = format!("/{framing}/{status}");
            cases.push(("POST", path.clone(), status, body_for(&path)));
        }
    }
    for status in [204u16, 304] {
        cases.push(("GET", format!("/none/{status}"), status, Vec::new()));
    }
    cases.push(("HEAD", "/cl/200".into(), 200, Vec::new()));
    for (method, path, status, body) in &cases {
        let r = c
            .request(method.parse().unwrap(), proxy.url(path))
            .header("content-type", "application/json")
            .body(if *method == "POST" { "{}" } else { "" })
            .send()
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), *status, "{method} {path}");
        assert_eq!(
            &r.bytes().await.unwrap().to_vec(),
            body,
            "{method} {path}: client got all"
        );
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let t = proxy.finish().await;
    assert_eq!(t.exchanges.len(), cases.len());
    for (x, (method, path, status, body)) in t.exchanges.iter().zip(&cases) {
        assert_eq!(&x.request.target, path);
        assert!(x.error.is_none(), "{method} {path}: {:?}", x.error);
        let r = x.response.as_ref().unwrap();
        assert_eq!(r.status, *status);
        assert_eq!(&r.body.bytes, body, "{method} {path}");
        assert!(!r.body.truncated, "{method} {path}");
    }
}

fn json_request(extra: &str, body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    r.extend_from_slice(body);
    r
}

/// A request in the same read as a valid one (pipelined garbage, or behind a request with
/// both Content-Length and chunked framing, or behind `Connection: close`) was never
/// recorded. Every byte read now ends up in an exchange.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_byte_read_ends_up_in_an_exchange() {
    let s = TestServer::start(ServerConfig::default()).await;
    let addr = s.server.addr;
    let body = br#"{"model":"m","messages":[]}"#;
    let clte = {
        let mut r = b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
        r.extend(format!("{:x}\r\n", body.len()).as_bytes());
        r.extend_from_slice(body);
        r.extend_from_slice(b"\r\n0\r\n\r\n");
        r
    };
    let cases: Vec<Vec<u8>> = vec![
        [json_request("", body), json_request("", body)].concat(),
        [
            json_request("", body),
            b"GARBAGE /x HTTP/9\r\n\r\n".to_vec(),
        ]
        .concat(),
        [clte, json_request("x-case: after-clte\r\n", body)].concat(),
        [
            json_request("connection: close\r\n", body),
            json_request("x-case: after-close\r\n", body),
        ]
        .concat(),
    ];
    tokio::task::spawn_blocking(move || {
        for c in cases {
            raw_exchange(addr, &c, Duration::from_secs(3));
        }
    })
    .await
    .unwrap();
    let t = s.finish().await;
    let kinds: Vec<&str> = t
        .exchanges
        .iter()
        .map(|x| x.error.as_ref().map_or("ok", |e| e.kind.as_str()))
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "ok").count(),
        5,
        "2 pipelined + 1 before garbage + CL/TE + before close: {kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| **k == "malformed_http").count(),
        1,
        "{kinds:?}"
    );
    let unprocessed: Vec<&[u8]> = t
        .exchanges
        .iter()
        .filter(|x| x.error.as_ref().is_some_and(|e| e.kind == "unprocessed"))
        .map(|x| x.request.body.bytes.as_slice())
        .collect();
    assert_eq!(unprocessed.len(), 2, "{kinds:?}");
    for u in unprocessed {
        assert!(
            count(u, b"x-case: after-") == 1 && u.ends_with(body),
            "{}",
            String::from_utf8_lossy(u)
        );
    }
}

/// `Transfer-Encoding` with a coding other than chunked was accepted and ignored; RFC 9112
/// answers 501.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transfer_codings_other_than_chunked_get_501() {
    let s = TestServer::start(ServerConfig::default()).await;
    let addr = s.server.addr;
    let resp = tokio::task::spawn_blocking(move || {
        raw_exchange(
            addr,
            b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
            Duration::from_secs(3),
        )
    })
    .await
    .unwrap();
    assert!(
        resp.starts_with(b"HTTP/1.1 501"),
        "{}",
        String::from_utf8_lossy(&resp)
    );
    let t = s.finish().await;
    assert_eq!(
        t.exchanges[0].error.as_ref().unwrap().kind,
        "unsupported_transfer_coding"
    );
}

/// The proxy forwarded headers named in `Connection:` (hop-by-hop by declaration).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headers_named_in_connection_stay_on_their_hop() {
    let up = TestServer::start(ServerConfig::default()).await;
    let upstream = Upstream::new(&up.server.base_url(), None, Duration::from_secs(5)).unwrap();
    let proxy = TestServer::start(ServerConfig {
        mode: Mode::Proxy(Arc::new(upstream)),
        ..Default::default()
    })
    .await;
    let addr = proxy.server.addr;
    let resp = tokio::task::spawn_blocking(move || {
        raw_exchange(
            addr,
            &json_request(
                "connection: keep-alive, x-hop\r\nx-hop: secret-route\r\nx-end: kept\r\n",
                b"{}",
            ),
            Duration::from_secs(2),
        )
    })
    .await
    .unwrap();
    assert!(
        resp.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&resp)
    );
    proxy.finish().await;
    let t = up.finish().await;
    let names: Vec<&str> = t.exchanges[0]
        .request
        .headers
        .iter()
        .map(|(k, _)| k.as_str())
        .collect();
    assert!(names.contains(&"x-end"), "{names:?}");
    assert!(!names.contains(&"x-hop"), "{names:?}");
}

/// Absolute-form targets were answered as Messages requests but not counted by `show` or
/// `analyze`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn absolute_form_messages_requests_are_counted() {
    let s = TestServer::start(ServerConfig::default()).await;
    let addr = s.server.addr;
    let body = br#"{"model":"claude-abs","messages":[{"role":"user","content":"hi"}]}"#;
    let mut req = format!(
        "POST http://{addr}/v1/messages?beta=true HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    req.extend_from_slice(body);
    let resp =
        tokio::task::spawn_blocking(move || raw_exchange(addr, &req, Duration::from_secs(2)))
            .await
            .unwrap();
    assert!(resp.starts_with(b"HTTP/1.1 200"));
    let t = s.finish().await;
    assert!(t.exchanges[0].is_messages());
    assert_eq!(t.exchanges[0].path(), "/v1/messages");
    let rows = agentwire::report::show::rows(&t);
    assert_eq!(
        rows[0].model.as_deref(),
        Some("claude-abs"),
        "show parses it as Messages"
    );
}

/// Malformed requests on a `--tls-cert` listener were not recorded (only plain listeners
/// kept unparsed bytes). Every listener now records them the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_over_tls_are_recorded() {
    use agentwire::capture::ca::CertificateAuthority;
    use agentwire::capture::server::tls;
    let ca = CertificateAuthority::generate().unwrap();
    let (chain, key) = ca.mint_leaf(&["localhost".into()]).unwrap();
    let s = TestServer::start(ServerConfig {
        tls: Some(tls::server_config(chain, key).unwrap()),
        ..Default::default()
    })
    .await;
    let addr = s.server.addr;
    let pem = ca.cert_pem().to_string();
    let reply = tokio::task::spawn_blocking(move || {
        let tcp = std::net::TcpStream::connect(addr).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let conn = rustls::ClientConnection::new(tls_client_config(pem.as_bytes()), name).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        tls.write_all(b"BROKEN\r\nhost: localhost\r\n\r\n").unwrap();
        let mut out = Vec::new();
        let _ = tls.read_to_end(&mut out);
        out
    })
    .await
    .unwrap();
    assert!(
        reply.starts_with(b"HTTP/1.1 400"),
        "{}",
        String::from_utf8_lossy(&reply)
    );
    let t = s.finish().await;
    let x = t
        .exchanges
        .iter()
        .find(|x| x.request.method == "BROKEN")
        .expect("recorded");
    assert_eq!(x.error.as_ref().unwrap().kind, "malformed_http");
    assert_eq!(x.request.body.bytes, b"BROKEN\r\nhost: localhost\r\n\r\n");
}
