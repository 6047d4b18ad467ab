//! Server, proxy and interception benchmark (a bench binary, not a timed test), all in one
//! run on the same machine with 100 KB request bodies and streamed replies:
//!
//! * a bare hyper server sending the same SSE bytes without parsing or recording (the
//!   baseline for the server's added latency);
//! * `agentwire serve` (stub, recording), reached by base URL;
//! * `agentwire serve --upstream` (the recording proxy) in front of the stub;
//! * a bare forwarding proxy (hyper in, reqwest out, nothing parsed or recorded) in front
//!   of the stub: what one extra hop costs here, the ceiling for any proxy's throughput;
//! * `agentwire serve --intercept` (first-party route: CONNECT, TLS with a minted leaf,
//!   requests on the kept-alive connection) in front of nothing — it answers itself;
//! * claude-tap's reverse proxy (`--tap-no-launch`) and `mitmdump --mode reverse:URL -w FILE`
//!   (recording its flows, as agentwire records) in front of the stub, at 1 client and at
//!   `BENCH_CONCURRENCY`, when installed (`make bench` installs both from PyPI; the venv
//!   the tests install, `target/peer-venv`, is used too).
//!
//! Run: `make bench`, or `cargo bench --bench server` with `CLAUDE_TAP=…`, `MITMDUMP=…`.
//! Knobs: `BENCH_REQUESTS` (default 2000), `BENCH_CONCURRENCY` (default 8).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentwire::capture::ca::CertificateAuthority;
use agentwire::capture::server::intercept::InterceptConfig;
use agentwire::capture::server::proxy::Upstream;
use agentwire::capture::server::{self, reply::Reply, Mode, RunningServer, ServerConfig};
use agentwire::trace::{Context, TraceWriter};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;

const BODY_BYTES: usize = 100 * 1024;

fn body(seed: u64) -> Vec<u8> {
    let head = format!("{{\"model\":\"claude-bench\",\"max_tokens\":1024,\"stream\":true,\"metadata\":{{\"n\":{seed}}},\"messages\":[{{\"role\":\"user\",\"content\":\"");
    let tail = "\"}]}";
    let mut b = head.into_bytes();
    b.extend((0..BODY_BYTES - b.len() - tail.len()).map(|i| b'a' + (i % 26) as u8));
    b.extend_from_slice(tail.as_bytes());
    b
}

struct Stats {
    requests: usize,
    elapsed: Duration,
    lat: Vec<Duration>,
    ttfb: Vec<Duration>,
}

fn pct(v: &[Duration], p: f64) -> Duration {
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

impl Stats {
    fn rps(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }
}

type MakeClient = Arc<dyn Fn() -> reqwest::Client + Send + Sync>;

fn plain() -> MakeClient {
    Arc::new(reqwest::Client::new)
}

async fn load(url: &str, total: usize, concurrency: usize, make: MakeClient) -> Stats {
    let start = Instant::now();
    let per = total / concurrency;
    let mut tasks = Vec::new();
    for c in 0..concurrency {
        let (url, make) = (url.to_string(), make.clone());
        tasks.push(tokio::spawn(async move {
            let client = make();
            let (mut lat, mut ttfb) = (Vec::with_capacity(per), Vec::with_capacity(per));
            for i in 0..per {
                let b = body((c * per + i) as u64);
                let t = Instant::now();
                let r = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .header("x-api-key", "sk-ant-api03-bench")
                    .body(b)
                    .send()
                    .await
                    .expect("request");
                ttfb.push(t.elapsed());
                assert_eq!(r.status(), 200);
                let bytes = r.bytes().await.expect("body");
                assert!(bytes.ends_with(b"{\"type\":\"message_stop\"}\n\n"));
                lat.push(t.elapsed());
            }
            (lat, ttfb)
        }));
    }
    let (mut lat, mut ttfb) = (Vec::new(), Vec::new());
    for t in tasks {
        let (l, f) = t.await.unwrap();
        lat.extend(l);
        ttfb.extend(f);
    }
    lat.sort();
    ttfb.sort();
    Stats {
        requests: lat.len(),
        elapsed: start.elapsed(),
        lat,
        ttfb,
    }
}

/// A bare HTTP/1.1 server: drains the body, answers the stub's SSE bytes.
async fn baseline_server() -> SocketAddr {
    let content = vec![serde_json::json!({"type":"text","text":"Hello from agentwire."})];
    let sse = Bytes::from(
        Reply::new("msg_1".into(), "claude-bench".into(), content, BODY_BYTES)
            .to_sse_events()
            .concat(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (s, _) = listener.accept().await.unwrap();
            let _ = s.set_nodelay(true);
            let sse = sse.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| {
                        let sse = sse.clone();
                        async move {
                            let _ = req.into_body().collect().await;
                            Ok::<_, Infallible>(
                                hyper::Response::builder()
                                    .header("content-type", "text/event-stream")
                                    .body(Full::new(sse))
                                    .unwrap(),
                            )
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(s), svc)
                    .await;
            });
        }
    });
    addr
}

/// A bare forwarding proxy: hyper in, reqwest out (the client library agentwire's proxy
/// uses), each request and reply passed through whole, nothing parsed or recorded. What
/// one extra hop costs on this machine: the ceiling for any proxy's throughput here.
async fn bare_proxy(upstream: String) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let client = reqwest::Client::new();
    tokio::spawn(async move {
        loop {
            let (s, _) = listener.accept().await.unwrap();
            let _ = s.set_nodelay(true);
            let (client, upstream) = (client.clone(), upstream.clone());
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| {
                        let (client, upstream) = (client.clone(), upstream.clone());
                        async move {
                            let (parts, body) = req.into_parts();
                            let body = body
                                .collect()
                                .await
                                .map(|b| b.to_bytes())
                                .unwrap_or_default();
                            let url = format!("{upstream}{}", parts.uri.path());
                            let mut out = client.request(parts.method, url).body(body);
                            for (k, v) in &parts.headers {
                                if k != "host" && k != "content-length" {
                                    out = out.header(k, v);
                                }
                            }
                            let r = out.send().await.unwrap();
                            let mut back = hyper::Response::builder().status(r.status());
                            for (k, v) in r.headers() {
                                if k != "content-length" && k != "transfer-encoding" {
                                    back = back.header(k, v);
                                }
                            }
                            let bytes = r.bytes().await.unwrap_or_default();
                            Ok::<_, Infallible>(back.body(Full::new(bytes)).unwrap())
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(s), svc)
                    .await;
            });
        }
    });
    addr
}

async fn agentwire(config: ServerConfig, dir: &std::path::Path, name: &str) -> RunningServer {
    let writer = TraceWriter::create(&dir.join(name), &Context::new()).unwrap();
    server::start(config, writer).await.unwrap()
}

fn tool(env: &str, venv_bin: &str, name: &str) -> Option<String> {
    if let Ok(p) = std::env::var(env) {
        return Some(p);
    }
    let venv = format!(
        "{}/target/bench-venv/bin/{venv_bin}",
        env!("CARGO_MANIFEST_DIR")
    );
    if std::path::Path::new(&venv).exists() {
        return Some(venv);
    }
    // the venv the tests install (`tests/it/peers.rs`): the same pinned versions
    let peer = format!(
        "{}/target/peer-venv/bin/{venv_bin}",
        env!("CARGO_MANIFEST_DIR")
    );
    if std::path::Path::new(&peer).exists() {
        return Some(peer);
    }
    std::process::Command::new(name)
        .arg("--version")
        .output()
        .ok()
        .map(|_| name.into())
}

struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn spawn_and_wait(cmd: &mut std::process::Command, port: u16) -> Child {
    let child = Child(
        cmd.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start peer tool"),
    );
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    child
}

fn row(name: &str, s: &Stats, base: Option<&Stats>) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let added = |f: fn(&Stats) -> &Vec<Duration>| {
        base.map_or("-".to_string(), |b| {
            format!(
                "{:+.2} / {:+.2}",
                ms(pct(f(s), 0.5)) - ms(pct(f(b), 0.5)),
                ms(pct(f(s), 0.99)) - ms(pct(f(b), 0.99))
            )
        })
    };
    println!(
        "| {name} | {} | {:.0} | {:.2} / {:.2} | {:.2} / {:.2} | {} | {} |",
        s.requests,
        s.rps(),
        ms(pct(&s.ttfb, 0.5)),
        ms(pct(&s.ttfb, 0.99)),
        ms(pct(&s.lat, 0.5)),
        ms(pct(&s.lat, 0.99)),
        added(|s| &s.ttfb),
        added(|s| &s.lat),
    );
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` asks for a list; nothing to list
    }
    let env = |k: &str, d: usize| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let (total, conc) = (env("BENCH_REQUESTS", 2000), env("BENCH_CONCURRENCY", 8));
    let peer_total = (total / 4).max(conc * 10);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let stub = agentwire(ServerConfig::default(), dir.path(), "stub.jsonl").await;
        let stub_url = format!("{}/v1/messages", stub.base_url());
        let base_url = format!("http://{}/v1/messages", baseline_server().await);
        let up = Upstream::new(&stub.base_url(), None, Duration::from_secs(60)).unwrap();
        let proxy = agentwire(ServerConfig { mode: Mode::Proxy(Arc::new(up)), ..Default::default() }, dir.path(), "proxy.jsonl").await;
        let proxy_url = format!("{}/v1/messages", proxy.base_url());
        let bare_url = format!("http://{}/v1/messages", bare_proxy(stub.base_url()).await);
        let ca = Arc::new(CertificateAuthority::generate().unwrap());
        let icpt = InterceptConfig { hosts: vec!["api.anthropic.com".into()], ca: ca.clone(), tunnel_others: false };
        let fp = agentwire(ServerConfig { intercept: Some(Arc::new(icpt)), ..Default::default() }, dir.path(), "fp.jsonl").await;
        let (fp_proxy, ca_pem) = (fp.base_url(), ca.cert_pem().to_string());
        let fp_proxy = Arc::new(fp_proxy);
        let ca_pem = Arc::new(ca_pem);
        let fp_client = move |keep_alive: bool| -> MakeClient {
            let (fp_proxy, ca_pem) = (fp_proxy.clone(), ca_pem.clone());
            Arc::new(move || {
                let b = reqwest::Client::builder()
                    .proxy(reqwest::Proxy::https(fp_proxy.as_str()).unwrap())
                    .add_root_certificate(reqwest::Certificate::from_pem(ca_pem.as_bytes()).unwrap())
                    .resolve("api.anthropic.com", "127.0.0.9:443".parse().unwrap());
                let b = if keep_alive { b } else { b.pool_max_idle_per_host(0) };
                b.build().unwrap()
            })
        };
        let no_keep_alive: MakeClient = Arc::new(|| reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap());

        let _ = load(&stub_url, conc * 10, conc, plain()).await; // warm up
        // One client at a time: added latency without queueing on the two cores.
        let seq_base = load(&base_url, total / 4, 1, plain()).await;
        let seq_direct = load(&stub_url, total / 4, 1, plain()).await;
        let seq_proxy = load(&proxy_url, total / 4, 1, plain()).await;
        let seq_bare = load(&bare_url, total / 4, 1, plain()).await;
        let baseline = load(&base_url, total, conc, plain()).await;
        let direct = load(&stub_url, total, conc, plain()).await;
        let proxied = load(&proxy_url, total, conc, plain()).await;
        let bare = load(&bare_url, total, conc, plain()).await;
        let fp_url = "https://api.anthropic.com/v1/messages";
        let intercepted = load(fp_url, total, conc, fp_client(true)).await;
        // a new connection for every request: CONNECT + TLS handshake with the minted leaf,
        // against new plain TCP connections to the base URL
        let fresh_direct = load(&stub_url, total / 4, conc, no_keep_alive).await;
        let fresh_fp = load(fp_url, total / 4, conc, fp_client(false)).await;
        println!("server bench: {total} requests ({peer_total} through Python peers), {conc} concurrent keep-alive clients, {BODY_BYTES} B bodies, streamed replies");
        println!();
        println!("| target | requests | req/s | TTFB p50 / p99 ms | total p50 / p99 ms | added TTFB p50 / p99 ms | added total p50 / p99 ms |");
        println!("| --- | --- | --- | --- | --- | --- | --- |");
        row("1 client: bare hyper server (baseline)", &seq_base, None);
        row("1 client: agentwire serve (stub, recording) vs baseline", &seq_direct, Some(&seq_base));
        row("1 client: agentwire serve --upstream -> stub, vs direct stub", &seq_proxy, Some(&seq_direct));
        row("1 client: bare forwarding proxy (hyper + reqwest, no recording) -> stub, vs direct stub", &seq_bare, Some(&seq_direct));
        row("bare hyper server (baseline: no parsing, no recording)", &baseline, None);
        row("agentwire serve (stub, recording) vs baseline", &direct, Some(&baseline));
        row("agentwire serve --upstream (recording proxy) -> stub, vs direct stub", &proxied, Some(&direct));
        row("bare forwarding proxy (hyper + reqwest, no recording) -> stub, vs direct stub", &bare, Some(&direct));
        row("agentwire --intercept (first-party: CONNECT + TLS, kept alive) vs base-URL stub", &intercepted, Some(&direct));
        row("base-URL stub, new connection per request", &fresh_direct, None);
        row("first-party, new CONNECT + TLS handshake per request, vs new base-URL connection", &fresh_fp, Some(&fresh_direct));

        // The peers, recording as agentwire does (mitmdump writes its flows with `-w`), each
        // at 1 client and at `conc` clients, against the same stub.
        let mut ratios = Vec::new();
        let flows = dir.path().join("mitm.flows");
        let peers: [(&str, &str, u16, Vec<String>); 2] = [
            ("claude-tap reverse proxy", "claude-tap", 18000, vec![
                "--tap-no-launch".into(), "--tap-no-live".into(), "--tap-no-open".into(),
                "--tap-host".into(), "127.0.0.1".into(), "--tap-target".into(), stub.base_url(),
                "--tap-port".into(),
            ]),
            ("mitmdump --mode reverse -w FILE", "mitmdump", 19000, vec![
                "--mode".into(), format!("reverse:{}", stub.base_url()), "--listen-host".into(),
                "127.0.0.1".into(), "-q".into(), "-w".into(), flows.display().to_string(),
                "--listen-port".into(),
            ]),
        ];
        for (label, bin, port0, args) in peers {
            let Some(exe) = tool(&bin.to_uppercase().replace('-', "_"), bin, bin) else {
                println!("{label}: not installed, no comparison");
                continue;
            };
            let port = port0 + (std::process::id() % 1000) as u16;
            let _child = spawn_and_wait(std::process::Command::new(&exe).args(&args).arg(port.to_string()), port).await;
            let url = format!("http://127.0.0.1:{port}/v1/messages");
            let _ = load(&url, conc * 2, conc, plain()).await;
            let one = load(&url, peer_total / 2, 1, plain()).await;
            let many = load(&url, peer_total, conc, plain()).await;
            row(&format!("1 client: {label} -> stub, vs direct stub"), &one, Some(&seq_direct));
            row(&format!("{label} -> stub, vs direct stub"), &many, Some(&direct));
            ratios.push((bin, one.rps(), many.rps()));
        }
        println!();
        for (name, one, many) in &ratios {
            // No proxy here can beat the bare hop: this is the most any proxy's ratio can be.
            println!("throughput ratio bare forwarding proxy / {name} (the ceiling for any proxy on this machine): {:.1}x at 1 client, {:.1}x at {conc}", seq_bare.rps() / one, bare.rps() / many);
            println!("throughput ratio agentwire recording proxy / {name}: {:.1}x at 1 client, {:.1}x at {conc}", seq_proxy.rps() / one, proxied.rps() / many);
            println!("throughput ratio agentwire serve / {name}: {:.1}x at 1 client, {:.1}x at {conc}", seq_direct.rps() / one, direct.rps() / many);
        }
        for s in [stub, proxy, fp] {
            s.shutdown().await.unwrap();
        }
    });
}
