//! Streamable HTTP MCP recording through agentwire's proxy, against the real test server
//! (captures/mcp/jobs_server.py --http) in both protocol generations: POSTs, JSON and
//! per-request SSE answers, 202 for notifications, `Mcp-Session-Id`, tasks.

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use agentwire::capture::mcp::{http, McpSink};
use agentwire::input::open_trace;
use agentwire::trace::mcp::McpDirection;
use serde_json::{json, Value};

use crate::common::{sha256_hex, spawn_first_line};
use crate::mcp_tap::jobs_server;

/// The test server over HTTP; killed on drop.
pub struct HttpServer {
    child: std::process::Child,
    /// Its endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl HttpServer {
    pub fn start(args: &[&str]) -> HttpServer {
        let (child, url) = spawn_first_line(
            Command::new("python3")
                .arg(jobs_server())
                .args(["--http", "127.0.0.1:0"])
                .args(args),
        );
        HttpServer { child, url }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What one POST sent and got.
struct Sent {
    body: Vec<u8>,
    status: u16,
    session: Option<String>,
    answer: Vec<u8>,
}

async fn post(url: &str, msg: &Value, headers: &[(&str, &str)]) -> Sent {
    let body = serde_json::to_vec(msg).unwrap();
    let mut req = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.body(body.clone()).send().await.unwrap();
    let status = resp.status().as_u16();
    let session = resp
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    let answer = resp.bytes().await.unwrap().to_vec();
    Sent {
        body,
        status,
        session,
        answer,
    }
}

/// The JSON-RPC message in an answer: the body, or the `data:` of its one SSE event.
fn answer_json(a: &[u8]) -> (Value, Vec<u8>) {
    let text = String::from_utf8(a.to_vec()).unwrap();
    let data = match text.lines().find_map(|l| l.strip_prefix("data: ")) {
        Some(d) => d.as_bytes().to_vec(),
        None => a.to_vec(),
    };
    (serde_json::from_slice(&data).unwrap(), data)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_is_recorded_in_both_generations_with_tasks() {
    let server = HttpServer::start(&["--seconds", "0.5", "--poll-interval-ms", "200"]);
    let dir = tempfile::tempdir().unwrap();
    let trace_path = dir.path().join("http.jsonl");
    let sink = Arc::new(McpSink::create(&trace_path, "test").unwrap());
    let old = http::start("jobs-2025", &server.url, sink.clone())
        .await
        .unwrap();
    let new = http::start("jobs-2026", &server.url, sink.clone())
        .await
        .unwrap();
    assert!(
        old.url.starts_with("http://127.0.0.1:") && old.url.ends_with("/mcp"),
        "{}",
        old.url
    );
    let mut exchanges: Vec<(String, Sent)> = Vec::new();

    // 2025-11-25: handshake, session id, 202 for the notification, a task over SSE.
    let init = post(
        &old.url,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"tasks": {}},
            "clientInfo": {"name": "t", "version": "1"}}}),
        &[],
    )
    .await;
    let sid = init.session.clone().expect("Mcp-Session-Id");
    let h = [
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    exchanges.push(("jobs-2025".into(), init));
    let note = post(
        &old.url,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        &h,
    )
    .await;
    assert_eq!(note.status, 202);
    exchanges.push(("jobs-2025".into(), note));
    let call = post(
        &old.url,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "slow_build", "arguments": {"target": "web", "seconds": 0.5}, "task": {"ttl": 60000}}}),
        &h,
    )
    .await;
    let (created, _) = answer_json(&call.answer);
    let old_task = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    exchanges.push(("jobs-2025".into(), call));
    tokio::time::sleep(Duration::from_millis(800)).await;
    let get = post(
        &old.url,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": old_task}}),
        &h,
    )
    .await;
    assert_eq!(answer_json(&get.answer).0["result"]["status"], "completed");
    exchanges.push(("jobs-2025".into(), get));

    // 2026-07-28: stateless, the tasks extension declared per request.
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}});
    let h2 = [("mcp-protocol-version", "2026-07-28")];
    let disc = post(&new.url, &json!({"jsonrpc": "2.0", "id": "d", "method": "server/discover", "params": {"_meta": meta}}), &h2).await;
    exchanges.push(("jobs-2026".into(), disc));
    let call = post(
        &new.url,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "slow_build", "arguments": {"target": "api", "seconds": 0.5}, "_meta": meta}}),
        &h2,
    )
    .await;
    let (created, _) = answer_json(&call.answer);
    assert_eq!(created["result"]["resultType"], "task");
    let new_task = created["result"]["taskId"].as_str().unwrap().to_string();
    exchanges.push(("jobs-2026".into(), call));
    let mut polls = 0;
    loop {
        let g = post(&new.url, &json!({"jsonrpc": "2.0", "id": 2 + polls, "method": "tasks/get", "params": {"taskId": new_task, "_meta": meta}}), &h2).await;
        polls += 1;
        let done = answer_json(&g.answer).0["result"]["status"] == "completed";
        exchanges.push(("jobs-2026".into(), g));
        if done {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(polls < 40, "task never completed");
    }
    old.stop().await;
    new.stop().await;
    drop(sink);

    // Every POST body and every answer is in the trace, byte-exact by digest, in order.
    let t = open_trace(&trace_path).unwrap();
    assert!(t.problems.is_empty(), "{:?}", t.problems);
    for (server, x) in &exchanges {
        let up = t.mcp.iter().find(|r| {
            &r.server == server
                && r.direction == McpDirection::ToServer
                && r.sha256 == sha256_hex(&x.body)
        });
        let up = up.unwrap_or_else(|| {
            panic!("request not recorded: {}", String::from_utf8_lossy(&x.body))
        });
        let n = up.http.as_ref().unwrap().request;
        let down: Vec<_> = t
            .mcp
            .iter()
            .filter(|r| {
                &r.server == server
                    && r.direction == McpDirection::ToClient
                    && r.http.as_ref().unwrap().request == n
            })
            .collect();
        assert_eq!(down.len(), 1, "one answer record per request");
        let http = down[0].http.as_ref().unwrap();
        assert_eq!(http.status, Some(x.status));
        if x.answer.is_empty() {
            assert!(down[0].message.is_none() && x.status == 202);
        } else {
            let (_, data) = answer_json(&x.answer);
            assert_eq!(down[0].sha256, sha256_hex(&data));
            assert_eq!(http.sse, data != x.answer, "SSE answers are marked");
        }
    }
    let init_answer = t
        .mcp
        .iter()
        .find(|r| r.server == "jobs-2025" && r.direction == McpDirection::ToClient)
        .unwrap();
    assert_eq!(
        init_answer.http.as_ref().unwrap().session_id.as_deref(),
        Some(sid.as_str())
    );

    // analyze: the generation of each server, one protocol task each, their polls.
    let a = crate::mcp_tap::analyze_json(&trace_path);
    let servers = a["mcp"]["servers"].as_array().unwrap();
    let version = |name: &str| {
        servers.iter().find(|s| s["server"] == name).unwrap()["protocol_version"].clone()
    };
    assert_eq!(version("jobs-2025"), "2025-11-25");
    assert_eq!(version("jobs-2026"), "2026-07-28");
    let tasks = a["mcp"]["tasks"].as_array().unwrap();
    let task = |id: &str| tasks.iter().find(|t| t["task_id"] == id).unwrap().clone();
    assert_eq!(task(&old_task)["tasks_get"], 1);
    assert_eq!(task(&old_task)["terminal"], "completed");
    assert_eq!(task(&new_task)["tasks_get"], polls);
    assert_eq!(task(&new_task)["terminal"], "completed");
    assert_eq!(task(&new_task)["poll_interval_ms"], 200);
    assert_eq!(a["mcp"]["summary"]["protocol_tasks"], 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_tap_http_serves_a_recording_proxy_until_interrupted() {
    let server = HttpServer::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let trace_path = dir.path().join("h.jsonl");
    let (mut tap, local) = spawn_first_line(
        Command::new(crate::common::bin())
            .args(["mcp-tap", "--name", "web", "--http", &server.url, "-o"])
            .arg(&trace_path),
    );
    assert!(
        local.starts_with("http://127.0.0.1:") && local.ends_with("/mcp"),
        "{local}"
    );
    let init = post(
        &local,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        &[],
    )
    .await;
    assert_eq!(init.status, 200);
    // SIGTERM ends it cleanly.
    unsafe {
        libc::kill(tap.id() as i32, libc::SIGTERM);
    }
    let status = tap.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let t = open_trace(&trace_path).unwrap();
    let dirs: Vec<McpDirection> = t.mcp.iter().map(|r| r.direction).collect();
    assert_eq!(dirs, [McpDirection::ToServer, McpDirection::ToClient]);
    assert_eq!(t.mcp[1].sha256, sha256_hex(&init.answer));
    assert_eq!(t.mcp[1].http.as_ref().unwrap().session_id, init.session);
}
