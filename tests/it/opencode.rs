//! Real opencode from npm under agentwire's fake server (issue 29, the opencode half): the
//! newest version on 2026-12-02 (1.18.33) and one eight releases older (1.18.25), each on
//! its three providers, which speak three wire formats (`anthropic` → Messages, `openai`
//! → Responses, `compatible` → Chat Completions). Every request's tool list and byte
//! figures are checked against an independent reader of the raw bodies
//! (`independent/opencode_bodies.py`, Python); the newest version runs a scripted build
//! on agentwire's test MCP server (`captures/mcp/jobs_server.py`) that it polls, and the
//! same job and polls come out of all three wire formats. Needs `npm` and the registry
//! (the binaries are cached after the first run).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use agentwire::api::view::Canonicalizer;
use agentwire::input::open_trace;

use crate::common::*;

/// The newest opencode on the day these tests were written, and one eight releases older.
pub(crate) const NEW: &str = "1.18.33";
const OLD: &str = "1.18.25";

/// Each provider and the path its requests take.
const PROVIDERS: [(&str, &str); 3] = [
    ("anthropic", "/v1/messages"),
    ("openai", "/v1/responses"),
    ("compatible", "/v1/chat/completions"),
];

/// The recordings every test here reads: `new-PROVIDER` (the polling scenario with the
/// jobs MCP server) and `old-PROVIDER` (one `hello`).
pub(crate) struct Recordings {
    _dir: tempfile::TempDir,
    pub(crate) traces: BTreeMap<String, PathBuf>,
}

/// Record one opencode run; returns the trace.
fn record(dir: &Path, name: &str, version: &str, provider: &str, poll: bool) -> PathBuf {
    let out = dir.join(format!("{name}.jsonl"));
    let mut cmd = Command::new(bin());
    cmd.args(["record", "--cli", &format!("opencode@{version}")])
        .args(["--provider", provider, "--timeout", "240", "-o"])
        .arg(&out);
    if poll {
        let mcp = dir.join("mcp.json");
        let server = repo().join("captures/mcp/jobs_server.py");
        let cfg = serde_json::json!({"mcpServers": {"jobs": {"command": "python3",
            "args": [server, "--tasks", "always"]}}});
        std::fs::write(&mcp, cfg.to_string()).unwrap();
        cmd.arg("--script")
            .arg(repo().join("captures/scenarios/opencode-poll.json"))
            .args(["--", "run", "build the app", "--mcp-config"])
            .arg(&mcp);
    }
    let o = cmd.output().unwrap();
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success() && summary.contains("exit 0"),
        "record {name}: {summary}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// The six recordings, made once: one run per version first (it downloads the binary),
/// then the others two at a time.
pub(crate) fn recordings() -> &'static Recordings {
    static R: OnceLock<Recordings> = OnceLock::new();
    R.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let mut traces = BTreeMap::new();
        traces.insert(
            "old-compatible".into(),
            record(d, "old-compatible", OLD, "compatible", false),
        );
        traces.insert(
            "new-compatible".into(),
            record(d, "new-compatible", NEW, "compatible", true),
        );
        for (p, _) in &PROVIDERS[..2] {
            let (old, new) = std::thread::scope(|s| {
                let old = s.spawn(|| record(d, &format!("old-{p}"), OLD, p, false));
                let new = s.spawn(|| record(d, &format!("new-{p}"), NEW, p, true));
                (old.join().unwrap(), new.join().unwrap())
            });
            traces.insert(format!("old-{p}"), old);
            traces.insert(format!("new-{p}"), new);
        }
        Recordings { _dir: dir, traces }
    })
}

/// What the independent reader says of every model request of a trace.
fn python(trace: &Path) -> Vec<Value> {
    let o = Command::new("python3")
        .arg(repo().join("tests/it/independent/opencode_bodies.py"))
        .arg(trace)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v.as_array().unwrap().clone()
}

#[test]
fn every_request_on_every_provider_and_version_reads_as_its_wire_format() {
    let r = recordings();
    for (name, trace) in &r.traces {
        let provider = name.split_once('-').unwrap().1;
        let path = PROVIDERS.iter().find(|(p, _)| *p == provider).unwrap().1;
        let t = open_trace(trace).unwrap();
        let want = python(trace);
        let mut canon = Canonicalizer::new();
        let mut got = Vec::new();
        for x in &t.exchanges {
            let v = canon.view(x);
            let Some(c) = v.request else { continue };
            let info = canon.session(v.place.session);
            got.push((
                x.id,
                x.path().to_string(),
                c.req,
                v.place.thread_label,
                info.clone(),
            ));
        }
        assert_eq!(got.len(), want.len(), "{name}: every model request is read");
        for ((id, p, req, thread, session), w) in got.iter().zip(&want) {
            assert_eq!(
                w["sha256_matches"], true,
                "{name}: stored bodies are the wire bytes"
            );
            assert_eq!(
                (*id, p.as_str()),
                (w["id"].as_u64().unwrap(), path),
                "{name}"
            );
            let names: Vec<&str> = w["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap())
                .collect();
            assert_eq!(req.tool_names(), names, "{name} #{id}");
            assert_eq!(
                req.tools_bytes() as u64,
                w["tools_bytes"].as_u64().unwrap(),
                "{name} #{id}"
            );
            assert_eq!(
                req.system_bytes() as u64,
                w["system_bytes"].as_u64().unwrap(),
                "{name} #{id}"
            );
            assert_eq!(
                req.body_bytes as u64,
                w["body_bytes"].as_u64().unwrap(),
                "{name} #{id}"
            );
            // opencode's session header: one session, its `ses_…` id.
            assert!(
                session
                    .client_id
                    .as_deref()
                    .is_some_and(|s| s.starts_with("ses_")),
                "{name}: {session:?}"
            );
            assert_eq!(session.label, "s1", "{name}");
            // The title request comes first, without tools: a side request of the session.
            if want[0]["id"] == *id {
                assert!(
                    names.is_empty() && thread.starts_with("side"),
                    "{name}: {thread}"
                );
            } else {
                assert_eq!(thread, "main", "{name} #{id}");
            }
        }
        // Without MCP: opencode's own tools (9 on the openai provider, apply_patch in
        // place of edit/write; 10 on the others); with the jobs server, its 4 tools too.
        let main_tools = want[1]["tools"].as_array().unwrap().len();
        let own = if provider == "openai" { 9 } else { 10 };
        let mcp = if name.starts_with("new") { 4 } else { 0 };
        assert_eq!(main_tools, own + mcp, "{name}");
    }
}

#[test]
fn the_polled_job_is_the_same_on_all_three_wire_formats() {
    let r = recordings();
    for (p, _) in PROVIDERS {
        let trace = &r.traces[&format!("new-{p}")];
        // The calls the last request's history holds, by the independent reader: the
        // scenario's start and its three polls of job-1, on every wire format.
        let want = python(trace);
        let calls = want.last().unwrap()["calls"].clone();
        let poll = serde_json::json!(["jobs_get_status", {"job_id": "job-1"}]);
        let start = serde_json::json!(["jobs_slow_build", {"target": "app", "seconds": 20}]);
        assert_eq!(calls, serde_json::json!([start, poll, poll, poll]), "{p}");
        let a = json_of(&["analyze", trace.to_str().unwrap()]);
        // From the scenario: a 20 s job polled twice at once ("working" twice: the second
        // answer repeats the first) and once 21 s later ("completed"): 3 polls, 1 redundant.
        let s = &a["summary"];
        assert_eq!(
            (s["polls"].as_u64(), s["redundant_polls"].as_u64()),
            (Some(3), Some(1)),
            "{p}: {s}"
        );
        let e = &a["episodes"][0];
        assert_eq!(e["tool"], "jobs_get_status", "{p}");
        assert_eq!(e["target"], r#"jobs_get_status({"job_id":"job-1"})"#, "{p}");
        // The recording named the jobs server, so its `jobs_*` tools are linked to the MCP
        // records: the start and the three polls, all of one task; the protocol layer
        // counts a poll redundant when it reached the server after the task's end was
        // seen: the third.
        let m = &a["mcp"]["summary"];
        assert_eq!(
            (m["linked_calls"].as_u64(), m["unlinked_calls"].as_u64()),
            (Some(4), Some(0)),
            "{p}: {m}"
        );
        assert_eq!(
            (
                m["tasks"].as_u64(),
                m["model_polls"].as_u64(),
                m["model_redundant_polls"].as_u64()
            ),
            (Some(1), Some(3), Some(1)),
            "{p}: {m}"
        );
        let task = &a["mcp"]["tasks"][0];
        assert_eq!(task["task_id"], "job-1", "{p}");
        // Nothing but the model's own poll delivered the result.
        assert_eq!(task["result_via"], "model_poll", "{p}");
    }
}

#[test]
fn diff_between_the_versions_is_checked_against_the_raw_bodies() {
    let r = recordings();
    let (a, b) = (&r.traces["old-compatible"], &r.traces["new-compatible"]);
    let (pa, pb) = (python(a), python(b));
    let (ia, ib) = (pa[1]["id"].as_u64().unwrap(), pb[1]["id"].as_u64().unwrap());
    let d = json_of(&[
        "diff",
        &format!("{}#{ia}", a.display()),
        &format!("{}#{ib}", b.display()),
    ]);
    let c = &d["comparisons"][0];
    let size = |m: &str, side: &str| {
        c["sizes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["metric"] == m)
            .unwrap()[side]
            .as_u64()
            .unwrap()
    };
    for (side, p) in [("a", &pa[1]), ("b", &pb[1])] {
        assert_eq!(size("body_bytes", side), p["body_bytes"].as_u64().unwrap());
        assert_eq!(
            size("system_bytes", side),
            p["system_bytes"].as_u64().unwrap()
        );
        assert_eq!(size("tool_bytes", side), p["tools_bytes"].as_u64().unwrap());
        assert_eq!(
            size("tools", side),
            p["tools"].as_array().unwrap().len() as u64
        );
    }
    // The MCP server's four tools are the added ones.
    let added = serde_json::json!([
        "jobs_crash",
        "jobs_get_status",
        "jobs_plain_slow",
        "jobs_slow_build"
    ]);
    assert_eq!(c["tools"]["added"], added, "{c}");
}
