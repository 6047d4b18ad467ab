//! Importing Claude Code transcripts (issue 12, must-show 1 and 2): real Claude Code runs
//! a scenario (a background job, a subagent, three polls, the notification) under
//! `agentwire record` with a writable config dir, so the same run leaves both the wire
//! trace and the CLI's own transcript; the import must agree with the wire.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use agentwire::api::{read_response, ResponseBody};
use agentwire::input::open_trace;
use agentwire::trace::{header_value as header, Exchange, Trace};
use serde_json::Value;

use crate::common::*;

/// A recorded run: the wire trace and the CLI's config dir (with `projects/`).
struct Run {
    _dir: tempfile::TempDir,
    wire: PathBuf,
    config: PathBuf,
}

fn record_with_transcript(version: &str) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    let wire = dir.path().join("wire.jsonl");
    let scenario = repo().join("captures/scenarios/import-history.json");
    let o = agentwire(&[
        "record",
        "-o",
        wire.to_str().unwrap(),
        "--cli",
        &format!("claude-code@{version}"),
        "--route",
        "base-url",
        "--env",
        &format!("CLAUDE_CONFIG_DIR={}", config.display()),
        "--script",
        scenario.to_str().unwrap(),
        "--",
        "-p",
        "run the build",
        "--allowedTools",
        "Bash,Agent",
    ]);
    assert!(
        o.status.success(),
        "record {version}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    Run {
        _dir: dir,
        wire,
        config,
    }
}

fn import(input: &Path, out: &Path) {
    let o = agentwire(&[
        "import",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(
        o.status.success(),
        "import: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_no_key(out);
}

fn json(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes).unwrap()
}

/// Messages exchanges by the response's request id (wire) or the imported request id.
fn by_request_id(t: &Trace, imported: bool) -> BTreeMap<String, &Exchange> {
    t.exchanges
        .iter()
        .filter(|x| x.is_messages())
        .map(|x| {
            let id = if imported {
                x.notes["import"]["request_id"]
                    .as_str()
                    .unwrap()
                    .to_string()
            } else {
                header(&x.response.as_ref().unwrap().headers, "request-id")
                    .unwrap()
                    .to_string()
            };
            (id, x)
        })
        .collect()
}

fn tool_calls(x: &Exchange) -> Vec<(String, String, Value)> {
    let r = x.response.as_ref().unwrap();
    match read_response(header(&r.headers, "content-type"), &r.body.bytes) {
        ResponseBody::Message(m) => m
            .tool_calls()
            .map(|(id, name, input)| (id.to_string(), name.to_string(), input.clone()))
            .collect(),
        other => panic!("{other:?}"),
    }
}

fn analyze_json(path: &Path) -> Value {
    let o = agentwire(&["analyze", path.to_str().unwrap(), "--format", "json"]);
    assert!(
        o.status.success(),
        "analyze: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    json(&o.stdout)
}

/// `(session, thread)` of every exchange as `show` labels them, sorted (the two sources
/// may order near-simultaneous requests differently).
fn show_sessions(path: &Path) -> Vec<(String, String)> {
    let o = agentwire(&["show", path.to_str().unwrap(), "--format", "json"]);
    assert!(
        o.status.success(),
        "show: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut v: Vec<(String, String)> = json(&o.stdout)
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["session"].as_str().unwrap().into(),
                r["thread"].as_str().unwrap().into(),
            )
        })
        .collect();
    v.sort();
    v
}

/// Polls, redundant polls, jobs (reference, state) and thread count of an analysis.
fn polls_and_jobs(a: &Value) -> (u64, u64, Vec<(String, String)>, u64) {
    let s = &a["summary"];
    let jobs = a["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["reference"].as_str().unwrap().to_string(),
                j["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (
        s["polls"].as_u64().unwrap(),
        s["redundant_polls"].as_u64().unwrap(),
        jobs,
        s["threads"].as_u64().unwrap(),
    )
}

/// Copy a directory tree, replacing `from` by `to` in every file.
fn copy_replacing(src: &Path, dst: &Path, from: &str, to: &str) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap().flatten() {
        let (s, d) = (e.path(), dst.join(e.file_name()));
        if s.is_dir() {
            copy_replacing(&s, &d, from, to);
        } else {
            std::fs::write(&d, std::fs::read_to_string(&s).unwrap().replace(from, to)).unwrap();
        }
    }
}

/// Usage each request's reply recorded in the transcript, read straight from its lines:
/// request id -> input tokens of the reply's last entry.
fn transcript_usage(projects: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for p in files_under(projects) {
        if p.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        for line in std::fs::read_to_string(&p).unwrap().lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            if v["type"] == "assistant" {
                out.insert(
                    v["requestId"].as_str().unwrap().to_string(),
                    v["message"]["usage"]["input_tokens"].as_u64().unwrap(),
                );
            }
        }
    }
    out
}

/// Must-show 1 and 2 for the layout with request records: 2.1.304 and 2.1.332.
#[test]
fn transcripts_of_real_claude_code_match_their_wire_traces() {
    for version in ["2.1.304", "2.1.332"] {
        let run = record_with_transcript(version);
        let imported_path = run.wire.with_file_name("imported.jsonl");
        // the directory form, as a user gives ~/.claude/projects
        import(&run.config.join("projects"), &imported_path);
        let wire = open_trace(&run.wire).unwrap();
        let imp = open_trace(&imported_path).unwrap();
        let (w, i) = (by_request_id(&wire, false), by_request_id(&imp, true));

        // the same requests
        assert_eq!(
            w.keys().collect::<Vec<_>>(),
            i.keys().collect::<Vec<_>>(),
            "{version}"
        );
        assert_eq!(
            w.len(),
            9,
            "{version}: 7 main-thread and 2 subagent requests"
        );

        // the same session, as the client sends it
        let sessions = |m: &BTreeMap<String, &Exchange>| -> BTreeSet<String> {
            m.values()
                .map(|x| {
                    header(&x.request.headers, "x-claude-code-session-id")
                        .unwrap()
                        .to_string()
                })
                .collect()
        };
        assert_eq!(sessions(&w), sessions(&i), "{version}");
        assert_eq!(sessions(&i).len(), 1);
        for x in i.values() {
            assert_eq!(x.notes["import"]["session"], *sessions(&w).first().unwrap());
            assert_eq!(x.source.format.as_deref(), Some("claude-code-transcript"));
        }

        for (id, wx) in &w {
            let ix = i[id];
            // subagent requests: the wire's billing block says so; the import's notes too
            let wbody = json(&wx.request.body.bytes);
            let subagent = wbody["system"][0]["text"]
                .as_str()
                .unwrap()
                .contains("cc_is_subagent=true");
            assert_eq!(
                ix.notes["import"]["sidechain"] == true,
                subagent,
                "{version} {id}"
            );
            // rebuilt bodies: equal to the wire after dropping what the transcript lacks
            assert_eq!(ix.notes["import"]["digest"], "verified", "{version} {id}");
            let ibody = json(&ix.request.body.bytes);
            let differing: Vec<&str> = wbody
                .as_object()
                .unwrap()
                .keys()
                .filter(|k| wbody[k.as_str()] != ibody[k.as_str()])
                .map(String::as_str)
                .collect();
            // metadata.user_id holds a device id the transcript does not record; the
            // stream flag is not recorded either
            assert_eq!(differing, ["metadata", "stream"], "{version} {id}");
            assert_eq!(
                ibody.as_object().unwrap().len(),
                wbody.as_object().unwrap().len() - 2
            );
            for h in ["user-agent", "anthropic-beta", "x-claude-code-session-id"] {
                assert_eq!(
                    header(&wx.request.headers, h),
                    header(&ix.request.headers, h),
                    "{version} {id} {h}"
                );
            }
            // the same tool calls, in each reply
            assert_eq!(tool_calls(wx), tool_calls(ix), "{version} {id}");
        }

        // the same sessions and threads as the session rules find them
        assert_eq!(
            show_sessions(&run.wire),
            show_sessions(&imported_path),
            "{version}"
        );
        // the same polls and jobs; the import uses the usage the transcript recorded
        let (wa, ia) = (analyze_json(&run.wire), analyze_json(&imported_path));
        assert_eq!(wa["sessions"], ia["sessions"], "{version}");
        assert_eq!(ia["sessions"].as_array().unwrap().len(), 1, "{version}");
        let (wp, ip) = (polls_and_jobs(&wa), polls_and_jobs(&ia));
        assert_eq!(wp, ip, "{version}");
        assert_eq!(ip.0, 3, "{version}: three polls of the build output");
        assert_eq!(ip.1, 2, "{version}: two of them redundant");
        assert_eq!(ip.2.len(), 1, "{version}: the background build: {:?}", ip.2);
        assert_eq!(ip.2[0].1, "completed", "{version}");
        // agentwire's stub answered this run (message ids `msg_agentwire_…`), so `auto`
        // rightly simulates usage for it, the import as the wire
        assert_eq!(
            ia["usage_used"]["simulated"], 9,
            "{version}: {}",
            ia["usage_used"]
        );

        // Must-show 2: the same history as a user's, with the API's message ids: `auto`
        // uses the usage the transcript recorded and finds the same redundant polls
        let real = run.wire.with_file_name("real-projects");
        copy_replacing(
            &run.config.join("projects"),
            &real,
            "msg_agentwire_",
            "msg_01Qz",
        );
        let real_trace = run.wire.with_file_name("real.jsonl");
        import(&real, &real_trace);
        let ra = analyze_json(&real_trace);
        assert_eq!(
            ra["usage_used"]["recorded"], 9,
            "{version}: {}",
            ra["usage_used"]
        );
        let recorded = transcript_usage(&real);
        assert_eq!(
            ra["summary"]["input_tokens"].as_u64().unwrap(),
            recorded.values().sum::<u64>(),
            "{version}: input tokens are the transcript's"
        );
        assert_eq!(polls_and_jobs(&ra), wp, "{version}");
    }
}

/// Older layouts (no request records; real Claude Code 2.1.110): requests rebuilt from the
/// conversation give the same requests, tool calls, polls and jobs as the wire.
#[test]
fn older_transcript_layout_imports_requests_tool_calls_polls_and_jobs() {
    let run = record_with_transcript("2.1.110");
    let session = std::fs::read_dir(run.config.join("projects"))
        .unwrap()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    let text = std::fs::read_to_string(&session).unwrap();
    assert!(
        !text.contains("\"api-request\""),
        "2.1.110 writes no request records"
    );
    let imported_path = run.wire.with_file_name("imported.jsonl");
    // the session file alone: its subagent's transcript is found next to it
    import(&session, &imported_path);
    let wire = open_trace(&run.wire).unwrap();
    let imp = open_trace(&imported_path).unwrap();
    let (w, i) = (by_request_id(&wire, false), by_request_id(&imp, true));
    assert_eq!(w.keys().collect::<Vec<_>>(), i.keys().collect::<Vec<_>>());
    for (id, wx) in &w {
        let ix = i[id];
        assert_eq!(tool_calls(wx), tool_calls(ix), "{id}");
        assert_eq!(ix.notes["import"]["layout"], "conversation");
        assert!(ix.source.missing.iter().any(|m| m == "tool definitions"));
        // the conversation's tool results reach the rebuilt request as they did the wire
        let results = |x: &Exchange| -> Vec<String> {
            json(&x.request.body.bytes)["messages"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
                .filter(|b| b["type"] == "tool_result")
                .map(|b| b["tool_use_id"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(results(wx), results(ix), "{id}");
    }
    let (wa, ia) = (analyze_json(&run.wire), analyze_json(&imported_path));
    let (wp, ip) = (polls_and_jobs(&wa), polls_and_jobs(&ia));
    assert_eq!((wp.0, wp.1, &wp.2), (ip.0, ip.1, &ip.2));
    assert_eq!(wa["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(ia["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(ip.0, 3);
}
