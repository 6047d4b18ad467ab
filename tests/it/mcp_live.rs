//! Real Claude Code with the test MCP server (captures/mcp/jobs_server.py) driven by
//! captures/mcp/build-and-poll.json: a slow build tool, then two status polls by the
//! model. Both layers land in one trace; `analyze` links the model's polls to the task
//! they poll; `matrix --mcp` measures versions × CLAUDE_CODE_DISABLE_MCP_TASK_BACKGROUND
//! and every fact it reports is recomputed here from the raw records of both layers.

use std::path::{Path, PathBuf};
use std::process::Command;

use agentwire::input::open_trace;
use agentwire::trace::mcp::McpDirection;
use agentwire::trace::{McpRecord, Trace};
use serde_json::{json, Value};

use crate::common::{assert_no_key, bin, repo};
use crate::mcp_http::HttpServer;
use crate::mcp_tap::jobs_server;

/// The version the two-transport recording uses (shared with the matrix, one download).
const VERSION: &str = "2.1.318";

fn scenario() -> PathBuf {
    repo().join("captures/mcp/build-and-poll.json")
}

fn cli_args(config: &Path) -> Vec<String> {
    [
        "-p",
        "build the app",
        "--mcp-config",
        config.to_str().unwrap(),
        "--allowedTools",
        "mcp__jobs__slow_build,mcp__jobs__get_status",
    ]
    .map(String::from)
    .to_vec()
}

fn write_config(dir: &Path, name: &str, server: Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, json!({"mcpServers": {"jobs": server}}).to_string()).unwrap();
    p
}

fn stdio_config(dir: &Path) -> PathBuf {
    write_config(
        dir,
        "stdio.json",
        json!({"command": "python3", "args": [jobs_server()]}),
    )
}

fn record(config: &Path, out: &Path) -> Trace {
    let o = Command::new(bin())
        .args(["record", "--force", "--route", "base-url", "--cli"])
        .arg(format!("claude-code@{VERSION}"))
        .arg("--script")
        .arg(scenario())
        .arg("-o")
        .arg(out)
        .arg("--")
        .args(cli_args(config))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "record failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_no_key(out);
    open_trace(out).unwrap()
}

/// `tools/call` requests the CLI sent, by the `tool_use` id Claude Code names in `_meta`.
fn tool_calls(t: &Trace) -> Vec<(&McpRecord, &Value)> {
    t.mcp
        .iter()
        .filter(|r| r.direction == McpDirection::ToServer && r.method() == Some("tools/call"))
        .map(|r| (r, &r.message.as_ref().unwrap()["params"]))
        .collect()
}

/// The answer to a request record (same server, same id, opposite direction, later).
fn answer<'a>(t: &'a Trace, req: &McpRecord) -> &'a McpRecord {
    t.mcp
        .iter()
        .find(|r| {
            r.server == req.server
                && r.direction == McpDirection::ToClient
                && r.id() == req.id()
                && r.at >= req.at
        })
        .expect("answered")
}

fn text_of(r: &McpRecord) -> String {
    r.message.as_ref().unwrap()["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// `tasks/get` requests per task id, counted from the raw records.
fn tasks_get_per_task(t: &Trace) -> std::collections::BTreeMap<String, usize> {
    let mut m = std::collections::BTreeMap::new();
    for r in t.mcp.iter().filter(|r| r.method() == Some("tasks/get")) {
        let id = r.message.as_ref().unwrap()["params"]["taskId"]
            .as_str()
            .unwrap_or("")
            .to_string();
        *m.entry(id).or_insert(0) += 1;
    }
    m
}

#[test]
fn real_claude_code_over_stdio_and_http_records_both_layers_and_links_status_polls() {
    let dir = tempfile::tempdir().unwrap();
    let http = HttpServer::start(&[]);
    let configs = [
        ("stdio", stdio_config(dir.path())),
        (
            "http",
            write_config(
                dir.path(),
                "http.json",
                json!({"type": "http", "url": http.url}),
            ),
        ),
    ];
    // The two recordings run at once.
    let runs: Vec<(&str, PathBuf, Trace)> = std::thread::scope(|s| {
        let handles: Vec<_> = configs
            .iter()
            .map(|(transport, cfg)| {
                let out = dir.path().join(format!("{transport}.jsonl"));
                s.spawn(move || {
                    let t = record(cfg, &out);
                    (*transport, out, t)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let job_re = regex::Regex::new(r"job-[0-9]+").unwrap();
    for (transport, path, t) in &runs {
        // Both layers: the scenario's four model turns, and the MCP messages.
        assert_eq!(
            t.exchanges.iter().filter(|x| x.is_messages()).count(),
            4,
            "{transport}"
        );
        assert!(t.mcp.iter().all(|r| r.server == "jobs"));
        let expected_transport = if *transport == "http" {
            "http"
        } else {
            "stdio"
        };
        // The job id the build's MCP answer handed out, and the status calls that name it,
        // found in the raw records.
        let calls = tool_calls(t);
        let build = calls
            .iter()
            .find(|(_, p)| p["name"] == "slow_build")
            .expect("build called");
        let job = job_re
            .find(&text_of(answer(t, build.0)))
            .expect("job id in the build result")
            .as_str()
            .to_string();
        let polls: Vec<String> = calls
            .iter()
            .filter(|(_, p)| p["name"] == "get_status" && p["arguments"]["job_id"] == job.as_str())
            .map(|(_, p)| {
                p["_meta"]["claudecode/toolUseId"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(polls, ["toolu_poll1", "toolu_poll2"], "{transport}");

        let a = crate::mcp_tap::analyze_json(path);
        let m = &a["mcp"];
        assert_eq!(m["servers"][0]["transport"], expected_transport);
        for id in &polls {
            let link = m["links"]
                .as_array()
                .unwrap()
                .iter()
                .find(|l| l["tool_use_id"] == id.as_str())
                .unwrap();
            assert_eq!(link["role"], "status_poll", "{transport} {link}");
            assert_eq!(link["task_id"], job.as_str());
            assert_eq!(link["tool"], "mcp__jobs__get_status");
        }
        let tasks = m["tasks"].as_array().unwrap();
        let task = tasks
            .iter()
            .find(|x| x["task_id"] == job.as_str())
            .expect("the job is a task");
        assert_eq!(task["started_by"], "toolu_build");
        assert_eq!(task["model_polls"], 2);
        // tasks/get per task, as counted from the raw records (what the CLI actually did).
        let per_task = tasks_get_per_task(t);
        for x in tasks {
            let id = x["task_id"].as_str().unwrap();
            assert_eq!(
                x["tasks_get"],
                per_task.get(id).copied().unwrap_or(0),
                "{transport} {id}"
            );
        }
        assert_eq!(m["summary"]["tasks_get"], per_task.values().sum::<usize>());
    }
}

/// The newest published Claude Code version (`npm view … dist-tags.latest`).
fn latest() -> String {
    let o = Command::new("npm")
        .args(["view", "@anthropic-ai/claude-code", "dist-tags.latest"])
        .output()
        .expect("npm runs");
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

/// Facts of one cell recomputed from its trace: both layers, no analyzer code.
fn raw_facts(t: &Trace) -> Value {
    let calls = tool_calls(t);
    let build = calls
        .iter()
        .find(|(_, p)| p["name"] == "slow_build")
        .expect("build called");
    let build_answer = answer(t, build.0);
    let build_tool_use = build.1["_meta"]["claudecode/toolUseId"].as_str().unwrap();
    // Model layer: the request that carried the build's tool_result to the model.
    let carried = t
        .exchanges
        .iter()
        .filter(|x| x.is_messages())
        .find(|x| {
            let b: Value = serde_json::from_slice(&x.request.body.bytes).unwrap();
            b["messages"].as_array().unwrap().iter().any(|m| {
                m["content"].as_array().is_some_and(|c| {
                    c.iter().any(|blk| {
                        blk["type"] == "tool_result" && blk["tool_use_id"] == build_tool_use
                    })
                })
            })
        })
        .expect("the build result reached the model");
    let ended = ["finished", "completed"]
        .iter()
        .any(|w| text_of(build_answer).contains(w));
    let status_calls: Vec<_> = calls
        .iter()
        .filter(|(_, p)| p["name"] == "get_status")
        .collect();
    let end_at = ended.then_some(build_answer.at);
    let last: Value = serde_json::from_slice(
        &t.exchanges
            .iter()
            .rfind(|x| x.is_messages())
            .unwrap()
            .request
            .body
            .bytes,
    )
    .unwrap();
    let model_status_uses = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_use" && b["name"] == "mcp__jobs__get_status")
        .count();
    let declared = t.mcp.iter().filter(|r| r.direction == McpDirection::ToServer).any(|r| {
        let m = r.message.as_ref().unwrap();
        m.pointer("/params/capabilities/tasks").is_some()
            || m.pointer("/params/_meta/io.modelcontextprotocol~1clientCapabilities/extensions/io.modelcontextprotocol~1tasks").is_some()
    });
    let protocol_tasks = t
        .mcp
        .iter()
        .filter(|r| r.direction == McpDirection::ToClient)
        .filter(|r| {
            let m = r.message.as_ref().unwrap();
            m.pointer("/result/resultType") == Some(&json!("task"))
                || m.pointer("/result/task/taskId").is_some()
        })
        .count();
    // A `<task-notification>` the harness put into a user message (tool descriptions
    // mention the tag too).
    let notified = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .any(|m| {
            let texts: Vec<String> = match &m["content"] {
                Value::String(s) => vec![s.clone()],
                Value::Array(blocks) => blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str().map(String::from))
                    .collect(),
                _ => vec![],
            };
            texts.iter().any(|t| t.contains("<task-notification>"))
        });
    json!({
        "client_tasks": declared,
        "protocol_tasks": protocol_tasks,
        "backgrounded": usize::from(carried.started_at < build_answer.at),
        "model_polls": model_status_uses,
        "mcp_status_calls": status_calls.len(),
        "model_redundant_polls": status_calls.iter().filter(|(r, _)| end_at.is_some_and(|e| e < r.at)).count(),
        "tasks_get": tasks_get_per_task(t).values().sum::<usize>(),
        "notified": usize::from(notified),
        "model_requests": t.exchanges.iter().filter(|x| x.is_messages()).count(),
    })
}

#[test]
fn matrix_measures_mcp_task_backgrounding_consistently_across_layers() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = stdio_config(dir.path());
    let versions = format!("claude-code@{VERSION},claude-code@{}", latest());
    let mdir = dir.path().join("matrix");
    let o = Command::new(bin())
        .args([
            "matrix", "--mcp", "--format", "json", "--route", "base-url", "--cli", &versions,
        ])
        .args([
            "--env",
            "CLAUDE_CODE_DISABLE_MCP_TASK_BACKGROUND=unset,1",
            "--script",
        ])
        .arg(scenario())
        .arg("-d")
        .arg(&mdir)
        .arg("--")
        .args(cli_args(&cfg))
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "matrix failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let cells: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(cells.len(), 4, "2 versions × 2 settings");
    for cell in &cells {
        let run = cell["run"].as_str().unwrap();
        let path = mdir.join(agentwire::capture::matrix::file_name(run));
        let t = open_trace(&path).unwrap();
        let raw = raw_facts(&t);
        // The model layer and the MCP layer tell the same story.
        assert_eq!(raw["model_polls"], raw["mcp_status_calls"], "{run}: {raw}");
        for k in [
            "client_tasks",
            "protocol_tasks",
            "backgrounded",
            "model_polls",
            "model_redundant_polls",
            "tasks_get",
            "notified",
            "model_requests",
        ] {
            assert_eq!(
                cell[k], raw[k],
                "{run}: {k}: matrix says {}, the records say {}",
                cell[k], raw[k]
            );
        }
        // A backgrounded task's result reaches the model later, not as the call's result.
        let via = cell["result_via"].as_array().unwrap();
        assert_eq!(
            via.contains(&json!("tool_result")),
            raw["backgrounded"] == 0,
            "{run}: {via:?}"
        );
        assert!(cell["wall_ms"].as_i64().unwrap() > 0);
    }
}
