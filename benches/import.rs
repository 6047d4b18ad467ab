//! Importing Claude Code history: a generated `projects` directory of sessions in the
//! request-record layout (each request named by `base`/`keep`/`tail`, replies and tool
//! results as entries, ~30 KB of tool definitions and ~10 KB of system prompt per shape,
//! ~1.2 KB results), read through `open_input` as `show`/`analyze` do: every request body
//! rebuilt and checked against its digest. 20 sessions of 100 requests by default; set
//! `AGENTWIRE_BENCH_SESSIONS` for another size. Peak RSS (VmHWM) is printed after the run.
//!
//! `cargo bench --bench import`

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Map, Value};

use agentwire::import::canonical_sha256;
use agentwire::input::{open_input, InputOptions};
use agentwire::trace::Record;

const PER_SESSION: usize = 100;

/// Write one session file; returns its size in bytes.
fn session(path: &Path, s: usize) -> u64 {
    let sid = format!("00000000-0000-0000-0000-{s:012}");
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut line = |v: Value| writeln!(f, "{v}").unwrap();
    let tools: Vec<Value> = (0..20)
        .map(|i| json!({"name": format!("Tool{i}"), "description": "x".repeat(1400), "input_schema": {"type": "object"}}))
        .collect();
    let shape = json!({"system": [{"type": "text", "text": "s".repeat(10_000)}], "tools": tools});
    let shape_hash = canonical_sha256(&shape);
    line(
        json!({"type": "api-request-shape", "sessionId": sid, "shapeHash": shape_hash, "shape": shape}),
    );
    let first = json!({"role": "user", "content": [{"type": "text", "text": format!("task {s}")}]});
    line(
        json!({"type": "user", "sessionId": sid, "entrypoint": "cli", "version": "2.1.304",
        "timestamp": "2026-11-01T00:00:00Z", "message": first}),
    );
    let params =
        json!({"model": "claude-opus-5-5", "betas": ["claude-code-20250219"], "max_tokens": 32000});
    let mut messages = vec![first.clone()];
    let mut tail = vec![canonical_sha256(&first)];
    let mut prev: Option<String> = None;
    for k in 0..PER_SESSION {
        let id = format!("r{s}-{k}");
        let keep = messages.len() - tail.len();
        let mut parts = Map::new();
        parts.insert("system".into(), shape["system"].clone());
        parts.insert("tools".into(), shape["tools"].clone());
        parts.insert("messages".into(), Value::Array(messages.clone()));
        parts["system"][0]["cache_control"] = json!({"type": "ephemeral"});
        let mut all = params.as_object().unwrap().clone();
        all.extend(parts);
        let mut rec = json!({"type": "api-request", "sessionId": sid, "id": id, "version": "2.1.304",
            "timestamp": "2026-11-01T00:00:01Z", "shapeHash": shape_hash, "params": params,
            "keep": keep, "tail": tail, "requestDigest": canonical_sha256(&Value::Object(all)),
            "cacheControl": [{"path": ["system", 0], "value": {"type": "ephemeral"}}]});
        if let Some(p) = &prev {
            rec["base"] = json!(p);
        }
        line(rec);
        let call = format!("toolu_{s}_{k}");
        let content = json!([{"type": "tool_use", "id": call, "name": "Bash", "input": {"command": format!("tail -n 5 log{k}")}}]);
        line(
            json!({"type": "assistant", "sessionId": sid, "requestRef": id, "requestId": format!("req_{s}_{k}"),
            "timestamp": "2026-11-01T00:00:02Z", "message": {"id": format!("msg_{s}_{k}"), "model": "claude-opus-5-5",
            "role": "assistant", "content": content, "stop_reason": "tool_use",
            "usage": {"input_tokens": 10, "cache_read_input_tokens": 9000, "output_tokens": 40}}}),
        );
        let result = json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": format!("{k}: ").repeat(300)}]});
        line(
            json!({"type": "user", "sessionId": sid, "timestamp": "2026-11-01T00:00:03Z", "message": result}),
        );
        let reply = json!({"role": "assistant", "content": content});
        tail = vec![canonical_sha256(&reply), canonical_sha256(&result)];
        messages.push(reply);
        messages.push(result);
        prev = Some(id);
    }
    drop(f);
    std::fs::metadata(path).unwrap().len()
}

fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let l = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    l.split_whitespace().nth(1)?.parse().ok()
}

fn bench(c: &mut Criterion) {
    let sessions: usize = std::env::var("AGENTWIRE_BENCH_SESSIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("projects/-work-app");
    std::fs::create_dir_all(&project).unwrap();
    let bytes: u64 = (0..sessions)
        .map(|s| session(&project.join(format!("session-{s}.jsonl")), s))
        .sum();
    let requests = sessions * PER_SESSION;
    eprintln!(
        "generated {sessions} sessions, {requests} requests, {:.1} MB of transcripts",
        bytes as f64 / 1e6
    );
    let mut g = c.benchmark_group("import");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(10));
    g.throughput(criterion::Throughput::Elements(requests as u64));
    g.bench_function(format!("transcripts_{requests}_requests"), |b| {
        b.iter(|| {
            let mut n = 0;
            let mut rebuilt_bytes = 0;
            for rec in open_input(&dir.path().join("projects"), &InputOptions::default()).unwrap() {
                if let Record::Exchange(x) = rec.unwrap() {
                    assert_eq!(x.notes["import"]["digest"], "verified");
                    rebuilt_bytes += x.request.body.len();
                    n += 1;
                }
            }
            assert_eq!(n, requests);
            rebuilt_bytes
        })
    });
    g.finish();
    eprintln!("peak RSS (VmHWM): {:?} KiB", peak_rss_kib());
}

criterion_group!(benches, bench);
criterion_main!(benches);
