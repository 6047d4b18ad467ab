//! `agentwire view` at scale: a generated trace of 10,000 requests (~1 GB: sessions of 100
//! requests whose histories grow turn by turn, ~30 KB of tool definitions, ~10 KB of
//! system prompt, each turn adding a tool call and a ~1.2 KB result) opened by the real
//! binary; the figures are the time from start to the printed URL (the index built), the
//! time to fetch the turn list and the last turn's detail (the last page), and the
//! server's peak RSS (`VmHWM` of the `view` process) after that.
//!
//! The viewer's own figure is printed beside it: its log line's `indexed in N ms`, from the
//! process start to the index built (the time the URL waits for).
//!
//! `cargo bench --bench viewer` (quick: `AGENTWIRE_BENCH_REQUESTS=1000`, ~100 MB).
//! `AGENTWIRE_BENCH_TRACE=FILE` opens FILE instead of generating one;
//! `AGENTWIRE_BENCH_WRITE=FILE` only writes the generated trace to FILE and exits.

use std::io::{BufRead, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use chrono::{TimeZone, Utc};
use serde_json::{json, Value};

#[allow(dead_code)] // the viewer bench uses the load average only
mod common;

use agentwire::trace::{
    Body, Context, Exchange, HttpRequest, HttpResponse, Source, SourceKind, TraceWriter,
};

const PER_SESSION: usize = 100;

fn exchange(id: u64, secs: f64, body: &Value, reply: &Value) -> Exchange {
    let t0 = Utc.timestamp_opt(1_800_000_000, 0).unwrap();
    let at = t0 + chrono::Duration::milliseconds((secs * 1000.0) as i64);
    let head = |ct: &str| vec![("content-type".to_string(), ct.to_string())].into();
    Exchange {
        id,
        started_at: at,
        ended_at: Some(at + chrono::Duration::seconds(2)),
        source: Source::new(SourceKind::Proxy),
        request: HttpRequest {
            method: "POST".into(),
            target: "/v1/messages".into(),
            version: "HTTP/1.1".into(),
            headers: head("application/json"),
            body: Body::new(serde_json::to_vec(body).unwrap()),
        },
        response: Some(HttpResponse {
            status: 200,
            version: "HTTP/1.1".into(),
            headers: head("application/json"),
            body: Body::new(serde_json::to_vec(reply).unwrap()),
            chunks: vec![],
            first_byte_at: Some(at + chrono::Duration::milliseconds(300)),
        }),
        error: None,
        notes: Default::default(),
        websocket: None,
    }
}

fn generate(path: &Path, requests: usize) -> u64 {
    let mut w = TraceWriter::create(path, &Context::new()).unwrap();
    let tools: Vec<Value> = (0..20)
        .map(|i| json!({"name": format!("Tool{i}"), "description": "x".repeat(1400), "input_schema": {"type": "object"}}))
        .collect();
    let system = json!([{"type": "text", "text": "s".repeat(10_000), "cache_control": {"type": "ephemeral"}}]);
    let (mut id, mut secs) = (0u64, 0.0f64);
    for s in 0..requests.div_ceil(PER_SESSION) {
        let mut messages: Vec<Value> =
            vec![json!({"role": "user", "content": format!("task {s}")})];
        for k in 0..PER_SESSION {
            if id as usize >= requests {
                break;
            }
            secs += 8.0;
            let body = json!({"model": "claude-sonnet-4-5", "max_tokens": 32000, "tools": tools,
                "system": system, "messages": messages, "stream": false});
            let call = format!("toolu_{s}_{k}");
            let input = json!({"command": format!("grep -n fn src/file{k}.rs")});
            let reply = json!({"type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "tool_use", "id": call, "name": "Bash", "input": input}],
                "stop_reason": "tool_use", "usage": {"input_tokens": 10, "output_tokens": 40}});
            w.write_exchange(&exchange(id, secs, &body, &reply))
                .unwrap();
            id += 1;
            messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": call, "name": "Bash", "input": input}]}));
            messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": format!("{k}: ").repeat(300)}]}));
        }
    }
    drop(w);
    std::fs::metadata(path).unwrap().len()
}

/// GET `target` from the viewer at `addr` with its token; returns the body's length.
fn get(addr: &str, target: &str, token: &str) -> usize {
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(s, "GET {target} HTTP/1.1\r\nHost: {addr}\r\nX-Agentwire-Token: {token}\r\nConnection: close\r\n\r\n").unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    assert!(
        out.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&out[..out.len().min(300)])
    );
    out.len()
}

/// `VmHWM` of process `pid`, KiB.
fn peak_rss_of(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let n: usize = std::env::var("AGENTWIRE_BENCH_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    if let Some(out) = std::env::var_os("AGENTWIRE_BENCH_WRITE") {
        let bytes = generate(Path::new(&out), n);
        eprintln!("wrote {n} requests, {:.1} MB", bytes as f64 / 1e6);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = match std::env::var_os("AGENTWIRE_BENCH_TRACE") {
        Some(p) => std::path::PathBuf::from(p),
        None => {
            let p = dir.path().join("bench.jsonl");
            let bytes = generate(&p, n);
            eprintln!("generated {n} requests, {:.1} MB", bytes as f64 / 1e6);
            p
        }
    };
    let bytes = std::fs::metadata(&path).unwrap().len();
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_agentwire"))
        .arg("view")
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let log = child.stderr.take().unwrap();
    let log = std::thread::spawn(move || {
        let mut first = String::new();
        let mut r = std::io::BufReader::new(log);
        while r.read_line(&mut first).unwrap_or(0) > 0 && !first.contains("indexed in") {
            first.clear();
        }
        first
    });
    let mut url = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let opened = start.elapsed();
    let url = url.trim();
    let (base, token) = url.split_once("/?token=").unwrap();
    let addr = base.trim_start_matches("http://");
    let t = Instant::now();
    let list = get(addr, "/api/turns", token);
    let listed = t.elapsed();
    let t = Instant::now();
    let last = get(addr, &format!("/api/turn/{}", n - 1), token);
    let detailed = t.elapsed();
    let rss = peak_rss_of(child.id());
    let _ = child.kill();
    let _ = child.wait();
    let indexed = log.join().unwrap_or_default();
    let indexed = indexed
        .split_once("indexed in ")
        .and_then(|(_, t)| t.split_once(" ms"))
        .map_or("?", |(ms, _)| ms)
        .to_string();
    eprintln!(
        "view of {:.1} MB: opened (URL printed) in {:.2} s (the viewer's log: indexed in {indexed} ms); turn list {:.1} MB in {} ms; last turn's detail {:.1} MB in {} ms; server peak RSS {} MiB; load average {}",
        bytes as f64 / 1e6,
        opened.as_secs_f64(),
        list as f64 / 1e6,
        listed.as_millis(),
        last as f64 / 1e6,
        detailed.as_millis(),
        rss / 1024,
        common::load_average()
    );
}
