//! `agentwire matrix` across agents (issue 29, "one matrix across agents"): the newest
//! version of each of Claude Code, Codex, Gemini CLI and opencode that the other real-CLI
//! tests record (so npm and agentwire's CLI cache are shared), recorded live under the
//! fake server in one `matrix` run; every row's figures checked against that agent's own
//! trace by an independent reader (`independent/agent_request.py`, Python), and the HTML
//! page with its charts written beside it.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common::*;

/// The versions `claude_code`/`record.rs`, `codex.rs`, `gemini.rs` and `opencode.rs` use.
const RUNS: [(&str, &str); 4] = [
    ("claude-code@2.1.304", "anthropic"),
    ("codex@0.171.0", "openai"),
    ("gemini@0.61.0", "google"),
    // opencode's default provider is anthropic
    ("opencode@1.18.33", "anthropic"),
];

/// What the independent reader says of exchange `id` of `trace`.
fn reader(trace: &Path, id: u64) -> Value {
    let o = Command::new("python3")
        .arg(repo().join("tests/it/independent/agent_request.py"))
        .arg(trace)
        .arg(id.to_string())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn one_matrix_across_four_agents_agrees_with_each_agents_own_trace() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("matrix.html");
    let cli: Vec<&str> = RUNS.iter().map(|r| r.0).collect();
    let o = Command::new(bin())
        .args(["matrix", "--format", "json", "--parallel", "2", "-d"])
        .arg(dir.path().join("runs"))
        .arg("--html")
        .arg(&html)
        .args(["--cli", &cli.join(",")])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "{v:#}");
    for (row, (label, provider)) in rows.iter().zip(RUNS) {
        assert_eq!(row["label"], label);
        assert_eq!(row["agent"], label.split('@').next().unwrap());
        let file = dir
            .path()
            .join("runs")
            .join(format!("{}.jsonl", label.replace(['@', '-'], "_")));
        assert_no_key(&file);
        let r = reader(&file, row["exchange"].as_u64().unwrap());
        assert_eq!(r["sha256_matches"], true, "{label}: the body as sent");
        assert_eq!(row["provider"], provider, "{label}");
        assert_eq!(r["provider"], provider, "{label}");
        assert_eq!(row["path"], r["path"], "{label}");
        for (mine, theirs) in [
            ("tools", "tools"),
            ("tool_bytes", "tools_bytes"),
            ("system_bytes", "system_bytes"),
            ("body_bytes", "body_bytes"),
            ("betas", "betas"),
            ("requests", "model_requests"),
        ] {
            assert_eq!(row[mine], r[theirs], "{label}: {mine}");
        }
        // the estimate is body bytes / 4, rounded up
        let body = r["body_bytes"].as_u64().unwrap();
        assert_eq!(row["est_tokens"].as_u64().unwrap(), body.div_ceil(4));
        assert!(
            row["tools"].as_u64().unwrap() > 0,
            "{label}: a turn with tools"
        );
        // a "hello" run starts no job, so nothing is polled
        assert_eq!(row["polls"], 0, "{label}");
    }
    // Each provider's betas in its own header: Claude Code sends anthropic-beta names;
    // the Gemini API has no beta header, so its list is empty (recorded, not unknown).
    assert!(!rows[0]["betas"].as_array().unwrap().is_empty());
    assert_eq!(rows[0]["beta_headers"], "anthropic-beta");
    assert_eq!(
        rows[1]["beta_headers"],
        "openai-beta, x-codex-beta-features"
    );
    assert_eq!(rows[2]["beta_headers"], "(none)");
    assert_eq!(rows[2]["betas"], serde_json::json!([]));
    // Four agents, four different tool lists.
    assert!(v["identical_tools"].as_array().unwrap().is_empty(), "{v:#}");

    let page = std::fs::read_to_string(&html).unwrap();
    for (label, _) in RUNS {
        assert!(page.contains(label), "{label} in the page");
    }
    assert!(page.matches("<svg").count() >= 2, "bytes and tokens charts");
    assert!(page.contains("Bytes of the first request"));
    assert!(!page.contains("chart not drawn"));
}
