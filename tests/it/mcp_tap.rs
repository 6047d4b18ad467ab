//! `mcp-tap` against the real test MCP server (captures/mcp/jobs_server.py): byte-for-byte
//! relay (digests on both sides), every message recorded, a 2025-11-25 task session
//! followed through `tasks/get` by `analyze`, and a server that crashes mid-message.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use agentwire::input::open_trace;
use agentwire::trace::mcp::McpDirection;
use serde_json::{json, Value};

use crate::common::{bin, repo, sha256_hex};

/// The test MCP server's path.
pub fn jobs_server() -> String {
    repo()
        .join("captures/mcp/jobs_server.py")
        .to_string_lossy()
        .into_owned()
}

/// A JSON-RPC client talking to `agentwire mcp-tap` over pipes, keeping every byte it
/// sent and received.
struct Client {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    sent: Vec<u8>,
    received: Vec<u8>,
    pending: Vec<Value>,
}

impl Client {
    fn start(trace: &Path, server_args: &[&str]) -> Client {
        let mut child = Command::new(bin())
            .args(["mcp-tap", "--name", "jobs", "-o"])
            .arg(trace)
            .args(["--", "python3", &jobs_server()])
            .args(server_args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        Client {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            sent: Vec::new(),
            received: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Send raw bytes in two writes split mid-message (the relay must not care).
    fn send(&mut self, msg: &Value) {
        let line = format!("{msg}\n").into_bytes();
        let (a, b) = line.split_at(line.len() / 2);
        self.stdin.write_all(a).unwrap();
        self.stdin.flush().unwrap();
        self.stdin.write_all(b).unwrap();
        self.stdin.flush().unwrap();
        self.sent.extend_from_slice(&line);
    }

    fn read_one(&mut self) -> Option<Value> {
        let mut line = Vec::new();
        if self.stdout.read_until(b'\n', &mut line).unwrap() == 0 {
            return None;
        }
        self.received.extend_from_slice(&line);
        serde_json::from_slice(&line).ok()
    }

    /// The response with `id` (notifications that arrive first are kept).
    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.read_one().expect("server answered");
            if m["id"] == json!(id) {
                return m;
            }
            self.pending.push(m);
        }
    }
}

#[test]
fn mcp_tap_relays_a_task_session_byte_for_byte_and_records_every_message() {
    let dir = tempfile::tempdir().unwrap();
    let trace_path = dir.path().join("tap.jsonl");
    let wire = dir.path().join("wire");
    std::fs::create_dir(&wire).unwrap();
    let mut c = Client::start(
        &trace_path,
        &[
            "--seconds",
            "1",
            "--poll-interval-ms",
            "300",
            "--wire-log",
            wire.to_str().unwrap(),
        ],
    );
    let init = c.call(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {"tasks": {}},
               "clientInfo": {"name": "test", "version": "1"}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    c.call(1, "tools/list", json!({}));
    let created = c.call(
        2,
        "tools/call",
        json!({"name": "slow_build", "arguments": {"target": "app", "seconds": 1}, "task": {"ttl": 60000}}),
    );
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    // Poll at once (sooner than the 300 ms interval), then well after the task ended
    // (1 s) and the server's status notification went out, then 50 ms later again: three
    // polls, two too fast, two after the terminal state was known.
    let created_at = Instant::now();
    c.call(3, "tasks/get", json!({"taskId": task_id}));
    std::thread::sleep(Duration::from_millis(2500).saturating_sub(created_at.elapsed()));
    let st = c.call(4, "tasks/get", json!({"taskId": task_id}));
    assert_eq!(st["result"]["status"], "completed");
    std::thread::sleep(Duration::from_millis(50));
    c.call(5, "tasks/get", json!({"taskId": task_id}));
    let (id, polls, too_fast) = (6, 3, 2);
    let result = c.call(id, "tasks/result", json!({"taskId": task_id}));
    assert_eq!(
        result["result"]["content"][0]["text"],
        format!("build of app finished: ok (job {task_id})")
    );
    // The server's status notification arrived among the answers.
    let notified = c
        .pending
        .iter()
        .filter(|m| m["method"] == "notifications/tasks/status")
        .count();
    assert_eq!(notified, 1, "{:?}", c.pending);
    drop(c.stdin);
    let status = c.child.wait().unwrap();
    assert!(status.success());
    // Byte for byte in both directions.
    let server_in = std::fs::read(wire.join("in.bin")).unwrap();
    let server_out = std::fs::read(wire.join("out.bin")).unwrap();
    assert_eq!(sha256_hex(&c.sent), sha256_hex(&server_in));
    assert_eq!(sha256_hex(&c.received), sha256_hex(&server_out));

    // Every message recorded, with its digest and direction.
    let t = open_trace(&trace_path).unwrap();
    assert!(t.problems.is_empty(), "{:?}", t.problems);
    let msgs: Vec<_> = t
        .mcp
        .iter()
        .filter(|r| r.direction != McpDirection::Event)
        .collect();
    let lines = |b: &[u8]| -> Vec<String> {
        b.split(|&x| x == b'\n')
            .filter(|l| !l.is_empty())
            .map(sha256_hex)
            .collect()
    };
    let up: Vec<String> = msgs
        .iter()
        .filter(|r| r.direction == McpDirection::ToServer)
        .map(|r| r.sha256.clone())
        .collect();
    let down: Vec<String> = msgs
        .iter()
        .filter(|r| r.direction == McpDirection::ToClient)
        .map(|r| r.sha256.clone())
        .collect();
    assert_eq!(up, lines(&server_in));
    assert_eq!(down, lines(&server_out));
    assert!(msgs
        .iter()
        .all(|r| r.server == "jobs" && r.message.is_some()));
    assert_eq!(t.mcp.last().unwrap().event.as_deref(), Some("exited"));

    // analyze follows the task: its polls, the too-fast ones, the one after the end.
    let a = analyze_json(&trace_path);
    let tasks = a["mcp"]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    let task = &tasks[0];
    assert_eq!(task["task_id"], task_id.as_str());
    assert_eq!(task["kind"], "protocol");
    assert_eq!(task["tasks_get"], polls);
    assert_eq!(task["polls_too_fast"], too_fast);
    assert_eq!(task["polls_after_terminal"], 2);
    assert_eq!(task["tasks_result"], 1);
    assert_eq!(task["notifications"], 1);
    assert_eq!(task["poll_interval_ms"], 300);
    assert_eq!(task["states"], json!(["working", "completed"]));
    assert_eq!(a["mcp"]["servers"][0]["protocol_version"], "2025-11-25");
    assert_eq!(a["mcp"]["servers"][0]["client_tasks"], true);
    let get = a["mcp"]["methods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["method"] == "tasks/get")
        .unwrap();
    assert_eq!(get["calls"], polls);
}

/// `analyze --format json` of a trace, checked against the committed schema.
pub fn analyze_json(trace: &Path) -> Value {
    let out = Command::new(bin())
        .args(["analyze", "--format", "json"])
        .arg(trace)
        .output()
        .unwrap();
    let a: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_matches_schema(&a);
    a
}

/// `analyze --format json` output with MCP tables against the committed schema, which
/// must also reject a value outside it.
fn assert_matches_schema(a: &Value) {
    let schema: Value =
        serde_json::from_slice(&std::fs::read(repo().join("schemas/analyze.schema.json")).unwrap())
            .unwrap();
    let v = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = v
        .iter_errors(a)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let mut bad = a.clone();
    bad["mcp"]["summary"]["tasks_get"] = json!(-1);
    assert!(!v.is_valid(&bad));
}

#[test]
fn mcp_tap_keeps_a_readable_trace_when_the_server_crashes_mid_message() {
    let dir = tempfile::tempdir().unwrap();
    let trace_path = dir.path().join("crash.jsonl");
    let mut c = Client::start(&trace_path, &[]);
    c.call(
        0,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    c.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "crash", "arguments": {}}}));
    // The server writes half an answer and exits 3; the relay passes the half through.
    let mut rest = Vec::new();
    std::io::Read::read_to_end(&mut c.stdout, &mut rest).unwrap();
    assert!(
        rest.starts_with(br#"{"jsonrpc":"2.0","id":1,"result":{"cont"#),
        "{}",
        String::from_utf8_lossy(&rest)
    );
    let status = c.child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(3),
        "the tap exits with the server's status"
    );
    let t = open_trace(&trace_path).unwrap();
    assert!(t.problems.is_empty(), "{:?}", t.problems);
    let cut = t
        .mcp
        .iter()
        .find(|r| r.truncated)
        .expect("the half message is recorded");
    assert_eq!(cut.direction, McpDirection::ToClient);
    assert_eq!(
        cut.raw.as_deref(),
        Some(r#"{"jsonrpc":"2.0","id":1,"result":{"cont"#)
    );
    let last = t.mcp.last().unwrap();
    assert_eq!(last.event.as_deref(), Some("exited"));
    assert!(last.detail.as_deref().unwrap().contains('3'), "{last:?}");
    // analyze reads it and counts the call as unanswered.
    let a = analyze_json(&trace_path);
    assert_eq!(a["mcp"]["summary"]["unanswered"], 1);
    assert_eq!(a["mcp"]["servers"][0]["raw_messages"], 1);
}
