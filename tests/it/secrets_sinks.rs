//! The unique-key grep of round 2 (`secrets.rs`) extended to the write paths added since
//! (issue 32, kinds 3, 4, 5, 8, 9): a key that a body, a command line or a hand-edited
//! trace holds reaches no output of `analyze` (table, Markdown, JSON), `report analyze`
//! (HTML, Markdown, JSON), `export --har`, `prompt`, nor `mcp-tap`'s trace.

use serde_json::json;

use agentwire::trace::{Context, TraceWriter};

use crate::analyze_polls::session;
use crate::common::*;
use crate::hand_trace::tool_use;

const KEY: &str = "sk-ant-api03-SINKSxUNIQUExKEYx5e8b1f4a7c2d";

/// A session whose tool calls carry the key: a background job started with
/// `--api-key KEY`, a shell poll of a path with `?token=KEY`, a same-call poll whose input
/// holds `"api_key": KEY`.
fn trace_with_key_in_tool_inputs(dir: &std::path::Path) -> std::path::PathBuf {
    let bg = json!({"command": format!("./long.sh --api-key {KEY}"), "run_in_background": true});
    let tail = json!({"command": format!("tail -n 1 /srv/app.log?token={KEY}")});
    let status = json!({"job": "j1", "api_key": KEY});
    let started =
        "Command running in background with ID: j1. Output is being written to: /tmp/y/j1.output.";
    let xs = session(&[
        (
            vec![tool_use("b0", "Bash", bg)],
            vec![("b0", started)],
            None,
        ),
        (
            vec![tool_use("k1", "Bash", tail.clone())],
            vec![("k1", "step 1")],
            None,
        ),
        (
            vec![tool_use("k2", "Bash", tail)],
            vec![("k2", "step 1")],
            None,
        ),
        (
            vec![tool_use("m1", "mcp__jobs__status", status.clone())],
            vec![("m1", "running")],
            None,
        ),
        (
            vec![tool_use("m2", "mcp__jobs__status", status)],
            vec![("m2", "running")],
            None,
        ),
        (vec![], vec![], None),
    ]);
    let p = dir.join("polls.jsonl");
    let mut w = TraceWriter::create(&p, &Context::new()).unwrap();
    for x in &xs {
        w.write_exchange(x).unwrap();
    }
    drop(w);
    let bytes = std::fs::read(&p).unwrap();
    assert!(
        count(&bytes, KEY.as_bytes()) > 0,
        "bodies are kept byte-exact"
    );
    p
}

/// Assert no file under `dir` but `keep` and no printed text holds the key.
fn assert_no_key_in(dir: &std::path::Path, keep: &[&std::path::Path], printed: &str) {
    for f in files_under(dir) {
        if keep.iter().any(|k| *k == f) {
            continue;
        }
        let bytes = std::fs::read(&f).unwrap();
        assert_eq!(
            count(&bytes, KEY.as_bytes()),
            0,
            "the key leaked into {}",
            f.display()
        );
    }
    assert_eq!(
        count(printed.as_bytes(), KEY.as_bytes()),
        0,
        "printed:\n{printed}"
    );
}

#[test]
fn a_key_in_tool_inputs_reaches_no_analyze_or_report_output() {
    // Before: poll targets and shell paths were printed raw by `analyze` (all formats)
    // and `report analyze` (HTML, Markdown, JSON): `tail -n 1 /srv/app.log?token=sk-ant-…`.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let t = trace_with_key_in_tool_inputs(d);
    let ts = t.to_str().unwrap();
    let mut printed = String::new();
    for f in ["table", "md", "json"] {
        let o = agentwire(&["analyze", "--format", f, ts]);
        printed.push_str(&String::from_utf8_lossy(&o.stdout));
        printed.push_str(&String::from_utf8_lossy(&o.stderr));
    }
    assert!(
        printed.contains("shell_inspect"),
        "the poll was found:\n{printed}"
    );
    assert!(
        printed.contains("[redacted"),
        "shown as a marker:\n{printed}"
    );
    for (f, ext) in [("html", "html"), ("md", "md"), ("json", "json")] {
        let out = d.join(format!("report.{ext}"));
        let o = agentwire(&[
            "report",
            "analyze",
            ts,
            "--format",
            f,
            "-o",
            out.to_str().unwrap(),
        ]);
        printed.push_str(&String::from_utf8_lossy(&o.stderr));
        assert!(out.exists(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert_no_key_in(d, &[&t], &printed);
}

/// A secret that is not key-shaped: only the name and argv rules can find it.
const PLAIN: &str = "QSECRETxPLAINxVALUEx8d2c";

#[test]
fn mcp_tap_argv_and_json_rpc_values_under_secret_names_reach_no_file() {
    // Before: the `started` record passed argv through the text rule, keeping
    // `--password QSECRET…`; params kept `"password": ["QSECRET…"]`, `"api_key": 9…` and
    // `"args": ["--token", "QSECRET…"]` as sent; `record` kept an inline --mcp-config's
    // `"--api-key","QSECRET…"`.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let trace = d.join("mcp.jsonl");
    // An echo server: every line it reads comes back as its answer.
    let echo = "import sys\nfor l in sys.stdin:\n    sys.stdout.write(l); sys.stdout.flush()";
    let mut child = std::process::Command::new(bin())
        .args(["mcp-tap", "--name", "echo", "-o"])
        .arg(&trace)
        .args([
            "--",
            "python3",
            "-c",
            echo,
            "--password",
            PLAIN,
            &format!("--api-key={PLAIN}"),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let msg = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "login",
        "arguments": {"password": [PLAIN], "api_key": 987654321987u64, "args": ["--token", PLAIN],
            "credentials": {"user": PLAIN}}}});
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{msg}").unwrap();
    }
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        msg.to_string(),
        "relayed byte for byte"
    );
    let rec = std::process::Command::new(bin())
        .args(["record", "--route", "base-url", "-o"])
        .arg(d.join("record.jsonl"))
        .args(["--", "true", "--mcp-config"])
        .arg(format!(
            r#"{{"mcpServers":{{"s":{{"command":"srv","args":["--api-key","{PLAIN}"]}}}}}}"#
        ))
        .output()
        .unwrap();
    assert!(
        rec.status.success(),
        "{}",
        String::from_utf8_lossy(&rec.stderr)
    );
    let mut printed = String::from_utf8_lossy(&o.stderr).into_owned();
    printed.push_str(&String::from_utf8_lossy(&rec.stderr));
    printed.push_str(&String::from_utf8_lossy(&rec.stdout));
    for f in files_under(d) {
        let bytes = std::fs::read(&f).unwrap();
        for needle in [PLAIN, "987654321987"] {
            assert_eq!(
                count(&bytes, needle.as_bytes()),
                0,
                "{needle} in {}",
                f.display()
            );
        }
    }
    assert_eq!(count(printed.as_bytes(), PLAIN.as_bytes()), 0, "{printed}");
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.contains("--password [redacted"), "{text}");
}

#[test]
fn a_hand_edited_traces_clear_secrets_reach_no_export_report_or_prompt() {
    // Before: `export --har` wrote `url` from the raw `Host: u:QSECRET…@h` and
    // `redirectURL` from the raw `Location`; report and prompt titles showed the
    // context's `MY_PASSWORD=QSECRET…`, since the trace claimed to be redacted (the first
    // failure on main: "leaked into …/d.json", the diff report's input settings).
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sample = std::fs::read_to_string(repo().join("captures/sample-session.jsonl")).unwrap();
    let edited = sample
        .replacen("\"env\":{", &format!("\"env\":{{\"MY_PASSWORD\":\"{PLAIN}\","), 1)
        .replace(
            "[\"host\",\"127.0.0.1:37609\"]",
            &format!("[\"host\",\"u:{PLAIN}@127.0.0.1:37609\"]"),
        )
        .replace(
            "\"response\":{\"status\":200,\"version\":\"HTTP/1.1\",\"headers\":[",
            &format!("\"response\":{{\"status\":200,\"version\":\"HTTP/1.1\",\"headers\":[[\"location\",\"https://u:{PLAIN}@h/next\"],"),
        );
    assert!(edited.matches(PLAIN).count() > 3, "the edits applied");
    let t = d.join("edited.jsonl");
    std::fs::write(&t, &edited).unwrap();
    let ts = t.to_str().unwrap();
    let mut printed = String::new();
    let runs: Vec<Vec<String>> = vec![
        vec!["export".into(), "--har".into(), ts.into()],
        vec!["prompt".into(), ts.into()],
        vec!["prompt".into(), "--format".into(), "json".into(), ts.into()],
        vec!["show".into(), ts.into()],
        vec![
            "analyze".into(),
            "--format".into(),
            "json".into(),
            ts.into(),
        ],
    ];
    for args in &runs {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = agentwire(&a);
        assert!(
            o.status.success(),
            "{a:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        printed.push_str(&String::from_utf8_lossy(&o.stdout));
        printed.push_str(&String::from_utf8_lossy(&o.stderr));
    }
    for f in ["html", "md", "json"] {
        let out = d.join(format!("r.{f}"));
        let o = agentwire(&[
            "report",
            "analyze",
            ts,
            "--format",
            f,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let o = agentwire(&[
            "report",
            "diff",
            ts,
            ts,
            "--format",
            f,
            "-o",
            d.join(format!("d.{f}")).to_str().unwrap(),
        ]);
        printed.push_str(&String::from_utf8_lossy(&o.stderr));
    }
    assert!(printed.contains("\"redirectURL\""), "the HAR was printed");
    for f in files_under(d) {
        if f == t {
            continue;
        }
        let bytes = std::fs::read(&f).unwrap();
        assert_eq!(
            count(&bytes, PLAIN.as_bytes()),
            0,
            "leaked into {}",
            f.display()
        );
    }
    let leaks: Vec<&str> = printed.lines().filter(|l| l.contains(PLAIN)).collect();
    assert!(leaks.is_empty(), "printed: {leaks:#?}");
}
