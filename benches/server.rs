//! Server benchmark (a bench binary, not a timed test): requests/s and latency p50/p99 of
//! `agentwire serve` (stub mode, recording) with 100 KB request bodies and streamed
//! replies; the same load against a bare hyper server that sends the same SSE bytes without
//! parsing or recording (the baseline for "added latency"); and, in the same run, through
//! claude-tap's reverse proxy (`--tap-no-launch`) in front of agentwire's stub server.
//!
//! Run: `make bench` (installs claude-tap into target/bench-venv) or
//! `CLAUDE_TAP=/path/to/claude-tap cargo bench --bench server`.
//! Knobs: `BENCH_REQUESTS` (default 2000), `BENCH_CONCURRENCY` (default 8).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use agentwire::capture::server::{self, reply::Reply, ServerConfig};
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
}

impl Stats {
    fn pct(&self, p: f64) -> Duration {
        let i = ((self.lat.len() as f64 - 1.0) * p).round() as usize;
        self.lat[i]
    }
    fn rps(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64()
    }
}

async fn load(url: &str, total: usize, concurrency: usize) -> Stats {
    let start = Instant::now();
    let per = total / concurrency;
    let mut tasks = Vec::new();
    for c in 0..concurrency {
        let url = url.to_string();
        tasks.push(tokio::spawn(async move {
            let client = reqwest::Client::new();
            let mut lat = Vec::with_capacity(per);
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
                assert_eq!(r.status(), 200);
                let bytes = r.bytes().await.expect("body");
                assert!(bytes.ends_with(b"{\"type\":\"message_stop\"}\n\n"));
                lat.push(t.elapsed());
            }
            lat
        }));
    }
    let mut lat = Vec::new();
    for t in tasks {
        lat.extend(t.await.unwrap());
    }
    lat.sort();
    Stats {
        requests: lat.len(),
        elapsed: start.elapsed(),
        lat,
    }
}

/// A bare HTTP/1.1 server: drains the body, answers the stub's SSE bytes. No parsing, no
/// recording — what any server costs.
async fn baseline_server() -> SocketAddr {
    let events = Reply::new(
        "msg_1".into(),
        "claude-bench".into(),
        vec![serde_json::json!({"type":"text","text":"Hello from agentwire."})],
        BODY_BYTES,
    )
    .to_sse_events()
    .concat();
    let sse = Bytes::from(events);
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

fn find_tap() -> Option<String> {
    if let Ok(p) = std::env::var("CLAUDE_TAP") {
        return Some(p);
    }
    let venv = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/target/bench-venv/bin/claude-tap"
    );
    if std::path::Path::new(venv).exists() {
        return Some(venv.into());
    }
    std::process::Command::new("claude-tap")
        .arg("--version")
        .output()
        .ok()
        .map(|_| "claude-tap".into())
}

fn row(name: &str, s: &Stats, base: Option<&Stats>) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let added = base.map_or("-".to_string(), |b| {
        format!(
            "{:+.2} / {:+.2}",
            ms(s.pct(0.5)) - ms(b.pct(0.5)),
            ms(s.pct(0.99)) - ms(b.pct(0.99))
        )
    });
    println!(
        "| {name} | {} | {:.0} | {:.2} | {:.2} | {added} |",
        s.requests,
        s.rps(),
        ms(s.pct(0.5)),
        ms(s.pct(0.99))
    );
}

fn main() {
    let total: usize = std::env::var("BENCH_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let conc: usize = std::env::var("BENCH_CONCURRENCY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    if std::env::args().any(|a| a == "--list") {
        return; // cargo test --benches asks for a list; nothing to list
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let writer = TraceWriter::create(&dir.path().join("bench.jsonl"), &Context::new()).unwrap();
        let srv = server::start(ServerConfig::default(), writer).await.unwrap();
        let url = format!("{}/v1/messages", srv.base_url());
        let base_addr = baseline_server().await;
        let base_url = format!("http://{base_addr}/v1/messages");

        let _ = load(&url, conc * 10, conc).await; // warm up
        let baseline = load(&base_url, total, conc).await;
        let direct = load(&url, total, conc).await;
        println!("server bench: {total} requests, {conc} concurrent clients, {BODY_BYTES} B bodies, streamed replies");
        println!();
        println!("| target | requests | req/s | p50 ms | p99 ms | added p50 / p99 ms |");
        println!("| --- | --- | --- | --- | --- | --- |");
        row("bare hyper server (baseline: no parsing, no recording)", &baseline, None);
        row("agentwire serve (stub, recording)", &direct, Some(&baseline));

        match find_tap() {
            Some(tap) => {
                let port = 18000 + (std::process::id() % 1000) as u16;
                let mut child = std::process::Command::new(&tap)
                    .args(["--tap-no-launch", "--tap-no-live", "--tap-no-open", "--tap-host", "127.0.0.1"])
                    .args(["--tap-port", &port.to_string(), "--tap-target", &srv.base_url()])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .expect("start claude-tap");
                let tap_url = format!("http://127.0.0.1:{port}/v1/messages");
                for _ in 0..100 {
                    if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                let tap_total = (total / 4).max(conc * 10);
                let _ = load(&tap_url, conc * 2, conc).await;
                let via_tap = load(&tap_url, tap_total, conc).await;
                let _ = child.kill();
                let _ = child.wait();
                row("claude-tap reverse proxy -> agentwire stub", &via_tap, Some(&direct));
                println!();
                println!(
                    "throughput ratio agentwire / claude-tap: {:.1}x",
                    direct.rps() / via_tap.rps()
                );
            }
            None => println!("\nclaude-tap not found: set CLAUDE_TAP or run `make bench` to install it"),
        }
        let n = srv.shutdown().await.unwrap();
        println!("agentwire recorded {n} exchanges");
    });
}
