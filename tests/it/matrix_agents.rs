//! `agentwire matrix` across agents (issue 29, "one matrix across agents"): the newest
//! version of each of Claude Code, Codex, Gemini CLI and opencode that the other real-CLI
//! tests record (so npm and agentwire's CLI cache are shared), recorded live under the
//! fake server in one `matrix` run of one scenario with a part per agent
//! (`captures/scenarios/agents-bg-build.json`: a background build polled until done);
//! every row's figures checked against that agent's own trace by independent readers
//! (`independent/agent_request.py` for the first request, `independent/agent_polls.py`
//! for the polls, Python), and the HTML page with its charts written beside it.

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

const SCENARIO: &str = "captures/scenarios/agents-bg-build.json";

/// What the independent reader `script` says of `trace` (and its further arguments).
fn reader(script: &str, trace: &Path, more: &[String]) -> Value {
    let o = Command::new("python3")
        .arg(repo().join("tests/it/independent").join(script))
        .arg(trace)
        .args(more)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The polls the scenario scripts for `agent`: its part's tool calls after the first (the
/// call that starts the build).
fn scripted_polls(agent: &str) -> usize {
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join(SCENARIO)).unwrap()).unwrap();
    let turns = v["agents"][agent]["scenario"]["threads"][0]["turns"]
        .as_array()
        .unwrap();
    let calls = turns
        .iter()
        .flat_map(|t| t["content"].as_array().unwrap())
        .filter(|b| b["type"] == "tool_use")
        .count();
    calls - 1
}

#[test]
fn one_matrix_across_four_agents_on_one_scenario_agrees_with_each_agents_own_trace() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("matrix.html");
    let cli: Vec<&str> = RUNS.iter().map(|r| r.0).collect();
    let o = Command::new(bin())
        .args(["matrix", "--format", "json", "--parallel", "4", "-d"])
        .arg(dir.path().join("runs"))
        .arg("--script")
        .arg(repo().join(SCENARIO))
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
        let id = row["exchange"].as_u64().unwrap().to_string();
        let r = reader("agent_request.py", &file, &[id]);
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
        // Every poll the scenario scripts reached the agent's trace, and analyze counts
        // them and the redundant ones as the reader does.
        let agent = label.split('@').next().unwrap();
        let p = reader("agent_polls.py", &file, &[]);
        assert_eq!(p["polls"], scripted_polls(agent), "{label}: {p}");
        assert_eq!(row["polls"], p["polls"], "{label}: {p}");
        assert_eq!(row["redundant_polls"], p["redundant"], "{label}: {p}");
        // each part repeats a poll while its build runs
        assert!(p["redundant"].as_u64().unwrap() >= 1, "{label}: {p}");
        // Anthropic, OpenAI and Google models are priced; the cache was read after turn 1
        assert!(row["cost_usd"].as_f64().unwrap() > 0.0, "{label}");
        assert!(row["cache_hit_rate"].as_f64().unwrap() > 0.0, "{label}");
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

/// A scenario written per agent names what is missing: recording an agent it has no part
/// for fails before anything runs (the parts it has are listed), and `serve`, which
/// answers one scenario, refuses it.
#[test]
fn a_scenario_with_parts_per_agent_refuses_an_agent_it_has_no_part_for_and_serve() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("codex-only.json");
    std::fs::write(
        &file,
        r#"{"agents": {"codex": {"scenario": [[{"type": "text", "text": "ok"}]]}}}"#,
    )
    .unwrap();
    let o = Command::new(bin())
        .args(["record", "--cli", "gemini@0.61.0", "--script"])
        .arg(&file)
        .arg("-o")
        .arg(dir.path().join("t.jsonl"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("the scenario has no part for gemini (its agents: codex)"),
        "{err}"
    );
    assert!(!dir.path().join("t.jsonl").exists());
    let o = Command::new(bin())
        .args(["serve", "--script"])
        .arg(repo().join(SCENARIO))
        .arg("-o")
        .arg(dir.path().join("s.jsonl"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("has a part per agent (`agents`)"), "{err}");
}
