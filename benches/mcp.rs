//! The MCP side: what `mcp-tap` adds to a JSON-RPC round trip, and how fast the MCP
//! analysis reads records.
//!
//! - `tap_round_trip`: one 1 KiB newline-delimited JSON-RPC message written to a stdio
//!   "server" that echoes it back (`cat`), directly and through `agentwire mcp-tap`
//!   (which relays and records both directions).
//! - `analyze_records`: `analyze::mcp::analyze` over 20,000 records (1,000 task sessions:
//!   a task-augmented `tools/call`, three `tasks/get`, `tasks/result`, their answers).
//!
//! `cargo bench --bench mcp`

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use chrono::{TimeZone, Utc};
use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::json;

use agentwire::analyze::mcp::analyze;
use agentwire::trace::mcp::{McpDirection, McpTransport};
use agentwire::trace::McpRecord;

struct Echo {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Echo {
    fn start(cmd: &mut Command) -> Echo {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        Echo {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
        }
    }

    fn round_trip(&mut self, line: &[u8], buf: &mut Vec<u8>) {
        self.stdin.write_all(line).unwrap();
        self.stdin.flush().unwrap();
        buf.clear();
        self.stdout.read_until(b'\n', buf).unwrap();
        assert_eq!(buf.len(), line.len());
    }
}

impl Drop for Echo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tap_round_trip(c: &mut Criterion) {
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "x", "arguments": {"pad": "p".repeat(930)}}});
    let mut line = msg.to_string().into_bytes();
    line.push(b'\n');
    let dir = tempfile::tempdir().unwrap();
    let mut g = c.benchmark_group("tap_round_trip");
    let mut buf = Vec::new();
    let mut direct = Echo::start(&mut Command::new("cat"));
    g.bench_function("direct", |b| b.iter(|| direct.round_trip(&line, &mut buf)));
    drop(direct);
    let mut tapped = Echo::start(
        Command::new(env!("CARGO_BIN_EXE_agentwire"))
            .args(["mcp-tap", "--name", "echo", "-o"])
            .arg(dir.path().join("tap.jsonl"))
            .args(["--", "cat"]),
    );
    g.bench_function("mcp-tap", |b| b.iter(|| tapped.round_trip(&line, &mut buf)));
    g.finish();
}

fn session_records(sessions: usize) -> Vec<(usize, McpRecord)> {
    let t0 = Utc.timestamp_opt(1_800_000_000, 0).unwrap();
    let mut out = Vec::new();
    let mut ms = 0i64;
    let mut push = |dir, v: serde_json::Value, ms: i64| {
        let mut r = McpRecord::message(
            "jobs",
            McpTransport::Stdio,
            dir,
            v.to_string().as_bytes(),
            false,
        );
        r.at = t0 + chrono::Duration::milliseconds(ms);
        out.push((0, r));
    };
    for s in 0..sessions {
        let task = format!("task-{s}");
        let base = (s * 10) as u64;
        push(
            McpDirection::ToServer,
            json!({"jsonrpc": "2.0", "id": base, "method": "tools/call", "params": {"name": "build", "arguments": {}, "task": {"ttl": 1000}}}),
            ms,
        );
        push(
            McpDirection::ToClient,
            json!({"jsonrpc": "2.0", "id": base, "result": {"task": {"taskId": task, "status": "working", "pollInterval": 100}}}),
            ms + 1,
        );
        for k in 1..=3u64 {
            let st = if k == 3 { "completed" } else { "working" };
            push(
                McpDirection::ToServer,
                json!({"jsonrpc": "2.0", "id": base + k, "method": "tasks/get", "params": {"taskId": task}}),
                ms + 100 * k as i64,
            );
            push(
                McpDirection::ToClient,
                json!({"jsonrpc": "2.0", "id": base + k, "result": {"taskId": task, "status": st}}),
                ms + 100 * k as i64 + 1,
            );
        }
        push(
            McpDirection::ToServer,
            json!({"jsonrpc": "2.0", "id": base + 4, "method": "tasks/result", "params": {"taskId": task}}),
            ms + 400,
        );
        push(
            McpDirection::ToClient,
            json!({"jsonrpc": "2.0", "id": base + 4, "result": {"content": []}}),
            ms + 401,
        );
        ms += 1000;
    }
    out
}

fn analyze_records(c: &mut Criterion) {
    let records = session_records(1000);
    let mut g = c.benchmark_group("analyze_records");
    g.throughput(criterion::Throughput::Elements(records.len() as u64));
    g.sample_size(10);
    g.bench_function("20k records", |b| {
        b.iter(|| {
            let a = analyze(&records, &[], &[], &[]);
            assert_eq!(a.summary.tasks_get, 3000);
        })
    });
    g.finish();
}

criterion_group!(benches, tap_round_trip, analyze_records);
criterion_main!(benches);
