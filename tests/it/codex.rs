//! Real Codex from npm under agentwire's fake server (issue 28's must-shows): two published
//! versions (0.171.0, the newest on 2026-12-01, and 0.165.0, five releases older), both
//! routes, two models; `diff` names the tool and prompt changes, with every byte figure
//! checked by an independent reader (`independent/responses_tools.py`, Python); a scripted
//! build that Codex polls in classic and in code mode gives the job and polls `analyze`
//! must find; the same session over the WebSocket and over HTTP gives the same canonical
//! turns. Needs `npm` and the registry (the binaries are cached after the first run).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use agentwire::api::view::Canonicalizer;
use agentwire::api::BlockKind;
use agentwire::input::open_trace;

use crate::common::*;

/// The newest Codex on the day these tests were written, and one five releases older.
const NEW: &str = "0.171.0";
const OLD: &str = "0.165.0";

/// A recording's options.
struct Run<'a> {
    version: &'a str,
    route: &'a str,
    websocket: &'a str,
    script: Option<&'a str>,
    args: &'a [&'a str],
}

impl Default for Run<'_> {
    fn default() -> Self {
        Run {
            version: NEW,
            route: "custom-provider",
            websocket: "accept",
            script: None,
            args: &[],
        }
    }
}

/// Record one Codex run into `dir`; returns the trace.
fn record(dir: &Path, name: &str, r: Run) -> PathBuf {
    let out = dir.join(format!("{name}.jsonl"));
    let mut cmd = Command::new(bin());
    cmd.args(["record", "--cli", &format!("codex@{}", r.version)])
        .args([
            "--route",
            r.route,
            "--websocket",
            r.websocket,
            "--timeout",
            "180",
        ])
        .arg("-o")
        .arg(&out);
    if let Some(s) = r.script {
        cmd.arg("--script").arg(repo().join(s));
    }
    if !r.args.is_empty() {
        cmd.arg("--").args(r.args);
    }
    let o = cmd.output().unwrap();
    assert!(
        o.status.success(),
        "record {name}: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(summary.contains("exit 0"), "{name}: {summary}");
    out
}

/// What the independent reader says of one request body.
fn python(trace: &Path, id: u64) -> Value {
    let o = Command::new("python3")
        .arg(repo().join("tests/it/independent/responses_tools.py"))
        .arg(trace)
        .arg(id.to_string())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["sha256_matches"], true,
        "the compact re-serialization is the body as sent, so its byte counts are wire bytes"
    );
    v
}

/// The id of the first model request of a trace (a `POST /v1/responses` or a WebSocket
/// message that is not a prewarm).
fn first_turn(trace: &Path) -> u64 {
    let t = open_trace(trace).unwrap();
    let mut canon = Canonicalizer::new();
    t.exchanges
        .iter()
        .find(|x| canon.view(x).request.is_some_and(|r| !r.prewarm))
        .map(|x| x.id)
        .expect("a model request")
}

/// Tools by qualified name: bytes and compact text (the reader's view).
fn tools(p: &Value) -> BTreeMap<String, (u64, String)> {
    p["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                (
                    t["bytes"].as_u64().unwrap(),
                    t["compact"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect()
}

/// Nested declarations by `PARENT/NAME`: bytes.
fn nested(p: &Value) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for t in p["tools"].as_array().unwrap() {
        for n in t["nested"].as_array().unwrap() {
            out.insert(
                format!(
                    "{}/{}",
                    t["name"].as_str().unwrap(),
                    n["name"].as_str().unwrap()
                ),
                n["bytes"].as_u64().unwrap(),
            );
        }
    }
    out
}

/// Check a diff of the first turns of `a` and `b` against the independent reader: every
/// entry's bytes, the added and removed names, the changed ones among those whose bytes
/// differ, and the sizes of tools, system prompt and body. Returns the diff.
fn diff_checked(a: &Path, b: &Path) -> Value {
    let (ia, ib) = (first_turn(a), first_turn(b));
    let (pa, pb) = (python(a, ia), python(b, ib));
    let d = json_of(&[
        "diff",
        &format!("{}#{ia}", a.display()),
        &format!("{}#{ib}", b.display()),
    ]);
    let c = &d["comparisons"][0];
    let (ta, tb) = (tools(&pa), tools(&pb));
    let (na, nb) = (nested(&pa), nested(&pb));
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
    assert_eq!(size("body_bytes", "a"), pa["body_bytes"].as_u64().unwrap());
    assert_eq!(size("body_bytes", "b"), pb["body_bytes"].as_u64().unwrap());
    assert_eq!(
        size("system_bytes", "a"),
        pa["developer_bytes"].as_u64().unwrap()
    );
    assert_eq!(
        size("system_bytes", "b"),
        pb["developer_bytes"].as_u64().unwrap()
    );
    assert_eq!(size("tools", "a"), ta.len() as u64);
    assert_eq!(size("tools", "b"), tb.len() as u64);
    for e in c["tools"]["entries"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap();
        let (want_a, want_b) = if name.contains('/') {
            (na.get(name).copied(), nb.get(name).copied())
        } else {
            (ta.get(name).map(|t| t.0), tb.get(name).map(|t| t.0))
        };
        assert_eq!(
            e["a_bytes"].as_u64(),
            Some(want_a.unwrap_or(0)),
            "{name} in A"
        );
        assert_eq!(
            e["b_bytes"].as_u64(),
            Some(want_b.unwrap_or(0)),
            "{name} in B"
        );
    }
    let names = |m: &BTreeMap<String, (u64, String)>| m.keys().cloned().collect::<BTreeSet<_>>();
    let list = |k: &str| -> BTreeSet<String> {
        c["tools"][k]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .filter(|n| !n.contains('/'))
            .collect()
    };
    let (sa, sb) = (names(&ta), names(&tb));
    assert_eq!(list("added"), &sb - &sa, "added");
    assert_eq!(list("removed"), &sa - &sb, "removed");
    let differ: BTreeSet<String> = sa
        .intersection(&sb)
        .filter(|n| ta[*n].1 != tb[*n].1)
        .cloned()
        .collect();
    assert!(
        list("changed").is_subset(&differ),
        "a tool diff calls changed differs in its bytes: {:?} vs {differ:?}",
        list("changed")
    );
    d
}

/// Must-show 1: two versions, two models, two routes; every figure the diff gives agrees
/// with the independent reader, and the diff names what changed.
#[test]
fn codex_versions_models_and_routes_diff_with_bytes_an_independent_reader_agrees_with() {
    let dir = tempfile::tempdir().unwrap();
    let old = record(
        dir.path(),
        "old",
        Run {
            version: OLD,
            ..Run::default()
        },
    );
    let new = record(dir.path(), "new", Run::default());
    let classic = record(
        dir.path(),
        "new-gpt-5.5",
        Run {
            args: &["exec", "--skip-git-repo-check", "-m", "gpt-5.5", "hello"],
            ..Run::default()
        },
    );
    let builtin = record(
        dir.path(),
        "new-builtin",
        Run {
            route: "builtin",
            ..Run::default()
        },
    );
    for t in [&old, &new, &classic, &builtin] {
        assert_no_key(t);
    }
    // Versions: the tool list and the developer prompt moved between the two releases.
    let d = diff_checked(&old, &new);
    let c = &d["comparisons"][0];
    assert_eq!(
        c["system"]["text"]["identical"], false,
        "the prompt changed"
    );
    let touched: usize = ["added", "removed", "changed"]
        .iter()
        .map(|k| c["tools"][k].as_array().unwrap().len())
        .sum();
    assert!(touched > 0, "0.165.0 and 0.171.0 send other tools");
    // Models: code mode (namespaced tools in `additional_tools`, `exec`'s nested
    // declarations) against classic (top-level tools).
    let d = diff_checked(&new, &classic);
    let c = &d["comparisons"][0];
    assert!(c["tools"]["added"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n == "exec_command"));
    assert!(c["tools"]["removed"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n == "functions.exec"));
    assert!(
        c["tools"]["removed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "functions.exec/exec_command"),
        "the code-mode declaration of exec_command is named as such"
    );
    // Routes: the built-in provider's first turn (over the WebSocket) against the custom
    // provider's: figures checked the same way.
    diff_checked(&new, &builtin);
    // The report pages name OpenAI's own beta headers, never Anthropic's (a Codex diff page
    // once said "anthropic-beta added: none" and showed an empty `anthropic-version` row).
    for ext in ["md", "html"] {
        let out = dir.path().join(format!("diff.{ext}"));
        let (a, b, o) = (
            old.to_str().unwrap(),
            builtin.to_str().unwrap(),
            out.to_str().unwrap(),
        );
        agentwire_ok(&["report", "diff", a, b, "-o", o]);
        let page = std::fs::read_to_string(&out).unwrap();
        assert!(
            page.contains("openai-beta, x-codex-beta-features added"),
            "{ext}: the betas are named by OpenAI's headers"
        );
        assert!(
            !page.contains("anthropic-"),
            "{ext}: no Anthropic header on a Codex page"
        );
    }
}

/// The analysis of a scripted build polled by Codex: `codex-poll-*.json` start a command
/// that runs 17 s (classic) or 14 s (code mode), poll it three times while it runs (each
/// empty `write_stdin` waits 5 s; each `wait` 4 s), then, after a 6 s pause of the
/// scenario, once more when it has exited (that answer comes at once: `Wall time 0.0`).
/// So: 1 job, completed with exit 0; 4 polls; the 2nd and 3rd answer what the 1st did
/// (redundant: 2); the 4th was issued after the exit (1).
fn assert_one_job_four_polls(trace: &Path, kind: &str, tool: &str) -> Value {
    let a = json_of(&["analyze", trace.to_str().unwrap()]);
    let jobs = a["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "{jobs:#?}");
    assert_eq!(jobs[0]["kind"], kind);
    assert_eq!(jobs[0]["state"], "completed");
    assert_eq!(jobs[0]["exit_code"], 0);
    let eps = a["episodes"].as_array().unwrap();
    assert_eq!(eps.len(), 1, "{eps:#?}");
    assert_eq!(eps[0]["tool"], tool);
    assert_eq!(eps[0]["polls"], 4);
    assert_eq!(eps[0]["redundant"], 2);
    assert_eq!(eps[0]["after_notified"], 1);
    a
}

/// Must-show 2, classic mode (`-m gpt-5.5`: `exec_command`, then `write_stdin` polls) and
/// code mode (the default model: `exec` JavaScript, then `wait` polls on its cell).
#[test]
fn a_codex_build_polled_three_times_then_once_after_exit_is_one_job_and_four_polls() {
    let dir = tempfile::tempdir().unwrap();
    let classic = record(
        dir.path(),
        "classic",
        Run {
            script: Some("captures/scenarios/codex-poll-classic.json"),
            args: &[
                "exec",
                "--skip-git-repo-check",
                "-m",
                "gpt-5.5",
                "run the build",
            ],
            ..Run::default()
        },
    );
    assert_one_job_four_polls(&classic, "codex_exec_session", "write_stdin");
    let code = record(
        dir.path(),
        "code",
        Run {
            script: Some("captures/scenarios/codex-poll-code.json"),
            args: &["exec", "--skip-git-repo-check", "run the build"],
            ..Run::default()
        },
    );
    assert_one_job_four_polls(&code, "codex_exec_cell", "wait");
}

/// A turn reduced to what the model saw: per message its role and each block's kind with
/// its text, tool name or input, and tool result text, after normalization: the built-in
/// rules, and the two values that differ between any two runs of one session (not by
/// transport): the shell's process id and how long a wait took.
fn turns(trace: &Path) -> Vec<Vec<String>> {
    let t = open_trace(trace).unwrap();
    let norm = agentwire::api::normalize::Normalizer::defaults();
    let run_values =
        regex::Regex::new(r#"(session ID |"session_id":)\d+|Wall time: [0-9.]+ seconds"#).unwrap();
    let mut canon = Canonicalizer::new();
    let mut out = Vec::new();
    for x in &t.exchanges {
        let v = canon.view(x);
        let Some(c) = v.request.filter(|c| !c.prewarm) else {
            continue;
        };
        let mut turn = Vec::new();
        for m in &c.req.messages {
            for b in &m.content {
                let what = match &b.kind {
                    BlockKind::Text { text } => format!("text {text}"),
                    BlockKind::ToolUse { name, input, .. } => format!("call {name} {input}"),
                    BlockKind::ToolResult { text, .. } => format!("result {text}"),
                    BlockKind::Thinking { thinking, .. } => format!("reasoning {thinking}"),
                    other => format!("{other:?}"),
                };
                let mut hits = Default::default();
                let what = norm.text(&what, &mut hits).into_owned();
                let what = run_values.replace_all(&what, "$1<run>");
                turn.push(format!("{} {what}", m.role));
            }
        }
        out.push(turn);
    }
    out
}

/// Must-show 3: one session on the built-in provider over the WebSocket (each follow-up
/// sends only new items after `previous_response_id`, rebuilt by agentwire) and over HTTP
/// (the server refuses the upgrade; Codex falls back to POST and sends the whole prompt):
/// the same canonical turns and the same analysis. What differs by transport, in the
/// recorded parameters: `type` (`response.create`) and `previous_response_id` on the
/// WebSocket only; in the headers, the upgrade's fields and the `responses_websockets`
/// beta on the WebSocket, `accept`/`content-type`/`content-length` on HTTP.
#[test]
fn the_same_codex_session_over_websocket_and_http_gives_the_same_turns_and_analysis() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, websocket: &'static str| {
        record(
            dir.path(),
            name,
            Run {
                route: "builtin",
                websocket,
                script: Some("captures/scenarios/codex-poll-classic.json"),
                args: &[
                    "exec",
                    "--skip-git-repo-check",
                    "-m",
                    "gpt-5.5",
                    "run the build",
                ],
                ..Run::default()
            },
        )
    };
    let ws = run("ws", "accept");
    let http = run("http", "refuse");
    let (tw, th) = (turns(&ws), turns(&http));
    assert_eq!(tw.len(), 6, "six turns: the scenario's");
    assert_eq!(tw, th, "the same conversation turn by turn");
    let (aw, ah) = (
        assert_one_job_four_polls(&ws, "codex_exec_session", "write_stdin"),
        assert_one_job_four_polls(&http, "codex_exec_session", "write_stdin"),
    );
    assert_eq!(aw["summary"]["requests"], ah["summary"]["requests"]);
    // Which recorded fields differ by transport: the first follow-up of each.
    let follow = |t: &Path| -> u64 {
        let tr = open_trace(t).unwrap();
        let mut canon = Canonicalizer::new();
        tr.exchanges
            .iter()
            .filter(|x| canon.view(x).request.is_some_and(|r| !r.prewarm))
            .nth(1)
            .unwrap()
            .id
    };
    let d = json_of(&[
        "diff",
        &format!("{}#{}", ws.display(), follow(&ws)),
        &format!("{}#{}", http.display(), follow(&http)),
    ]);
    let c = &d["comparisons"][0];
    assert_eq!(c["tools"]["identical"], true);
    assert_eq!(c["system"]["text"]["identical"], true);
    let changed: BTreeSet<String> = c["params"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["changed"] == true)
        .map(|p| p["key"].as_str().unwrap().to_string())
        .collect();
    for k in ["type", "previous_response_id"] {
        assert!(changed.contains(k), "{k} differs by transport: {changed:?}");
    }
    assert_eq!(
        c["headers"]["betas_removed"],
        serde_json::json!(["responses_websockets=2026-02-06"])
    );
}
