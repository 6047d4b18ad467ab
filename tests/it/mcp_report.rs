//! Snapshots of the MCP reports (`show`, `show --mcp --format json`, `analyze`'s MCP
//! sections, `matrix --mcp` rows) on a hand-built trace with fixed times: a 2025-11-25
//! stdio session with one task (polled too fast once, after its notification once), an
//! HTTP notification answered 202, and a server that exits mid-message.

use std::process::Command;

use agentwire::trace::mcp::{McpDirection, McpHttp, McpTransport};
use agentwire::trace::{Context, McpRecord, TraceWriter};
use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};

use crate::common::bin;

fn at(ms: i64) -> DateTime<Utc> {
    "2026-11-30T12:00:00Z".parse::<DateTime<Utc>>().unwrap() + Duration::milliseconds(ms)
}

fn msg(ms: i64, dir: McpDirection, m: Value) -> McpRecord {
    let mut r = McpRecord::message(
        "jobs",
        McpTransport::Stdio,
        dir,
        m.to_string().as_bytes(),
        false,
    );
    r.at = at(ms);
    r
}

fn trace() -> tempfile::TempDir {
    use McpDirection::{ToClient as Down, ToServer as Up};
    let mut recs = vec![
        {
            let mut e = McpRecord::event(
                "jobs",
                McpTransport::Stdio,
                "started",
                "python3 jobs_server.py",
            );
            e.at = at(0);
            e
        },
        msg(
            1,
            Up,
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {"tasks": {}}}}),
        ),
        msg(
            5,
            Down,
            json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tasks": {}}}}),
        ),
        msg(
            10,
            Up,
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow_build", "arguments": {"target": "app"}, "task": {"ttl": 60000}}}),
        ),
        msg(
            20,
            Down,
            json!({"jsonrpc": "2.0", "id": 1, "result": {"task": {"taskId": "job-1", "status": "working", "pollInterval": 500}}}),
        ),
        msg(
            100,
            Up,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": "job-1"}}),
        ),
        msg(
            104,
            Down,
            json!({"jsonrpc": "2.0", "id": 2, "result": {"taskId": "job-1", "status": "working"}}),
        ),
        msg(
            1000,
            Down,
            json!({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": {"taskId": "job-1", "status": "completed"}}),
        ),
        msg(
            1200,
            Up,
            json!({"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": "job-1"}}),
        ),
        msg(
            1203,
            Down,
            json!({"jsonrpc": "2.0", "id": 3, "result": {"taskId": "job-1", "status": "completed"}}),
        ),
        msg(
            1300,
            Up,
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "crash", "arguments": {}}}),
        ),
    ];
    let mut cut = McpRecord::message(
        "jobs",
        McpTransport::Stdio,
        Down,
        br#"{"jsonrpc":"2.0","id":4,"res"#,
        true,
    );
    cut.at = at(1301);
    recs.push(cut);
    let mut exit = McpRecord::event("jobs", McpTransport::Stdio, "exited", "exit status: 3");
    exit.at = at(1302);
    recs.push(exit);
    let http = |status: Option<u16>| McpHttp {
        request: 0,
        method: "POST".into(),
        status,
        session_id: Some("session-9".into()),
        protocol_version: Some("2025-11-25".into()),
        sse: false,
    };
    let mut note = McpRecord::message(
        "web",
        McpTransport::Http,
        Up,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        false,
    );
    note.at = at(2000);
    note.http = Some(http(None));
    recs.push(note);
    let mut accepted = McpRecord::message("web", McpTransport::Http, Down, b"", false);
    accepted.at = at(2001);
    accepted.raw = None;
    accepted.http = Some(http(Some(202)));
    recs.push(accepted);
    let dir = tempfile::tempdir().unwrap();
    let mut w = TraceWriter::create(&dir.path().join("t.jsonl"), &Context::default()).unwrap();
    // numbered per recording source, as taps and proxies number them
    let mut next: std::collections::HashMap<String, u64> = Default::default();
    for mut r in recs {
        let n = next.entry(r.server.clone()).or_default();
        r.seq = *n;
        *n += 1;
        w.write_record(&r.line()).unwrap();
    }
    dir
}

fn run(args: &[&str], dir: &tempfile::TempDir) -> String {
    let o = Command::new(bin())
        .args(args)
        .arg(dir.path().join("t.jsonl"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn show_lists_mcp_records() {
    let d = trace();
    insta::assert_snapshot!("mcp_show_table", run(&["show"], &d));
    insta::assert_snapshot!("mcp_show_md", run(&["show", "--mcp", "--format", "md"], &d));
    let rows: Vec<Value> =
        serde_json::from_str(&run(&["show", "--mcp", "--format", "json"], &d)).unwrap();
    assert_eq!(rows.len(), 15, "one row per mcp record");
    assert_eq!(rows[14]["note"], "HTTP 202");
    assert_eq!(rows[14]["kind"], "status");
}

#[test]
fn analyze_reports_mcp_tables() {
    let d = trace();
    let text = run(&["analyze"], &d);
    let mcp = &text[text.find("MCP summary").expect("MCP sections")..];
    insta::assert_snapshot!("mcp_analyze_table", mcp);
    let md = run(&["analyze", "--format", "md"], &d);
    insta::assert_snapshot!("mcp_analyze_md", &md[md.find("## MCP summary").unwrap()..]);
    // By hand: three requests to jobs answered and one not (the crash); one task, two
    // polls, the first 80 ms after creation (interval 500: too fast), the second after
    // the 1000 ms completion notification.
    let a = crate::mcp_tap::analyze_json(&d.path().join("t.jsonl"));
    let t = &a["mcp"]["tasks"][0];
    assert_eq!(
        (
            t["tasks_get"].as_u64(),
            t["polls_too_fast"].as_u64(),
            t["polls_after_terminal"].as_u64()
        ),
        (Some(2), Some(1), Some(1))
    );
    assert_eq!(t["states"], json!(["working", "completed"]));
    assert_eq!(t["duration_ms"], 990);
    assert_eq!(a["mcp"]["summary"]["unanswered"], 1);
}
