//! One Parquet table set over traces of all four agents (issue 34): real Claude Code
//! 2.1.304 (a shared capture), Codex 0.171.0 (the rollout files of `captures/imports`),
//! real Gemini CLI and real opencode on each of its three wire formats (the recordings the
//! `gemini` and `opencode` tests make once per run), read back by DuckDB: every request,
//! thread and episode names the agent, provider and dialect its file came from.

use std::collections::{BTreeMap, BTreeSet};

use crate::common::{agentwire_ok, repo};
use crate::fleet::duckdb;

/// Must-show of issue 34: `agent`, `provider`, `dialect` and `schema_version` columns,
/// with the values each input's origin gives (the agent and version from how it was
/// made, the provider and dialect from the route its requests took), so one query spans
/// the four agents.
#[test]
fn one_parquet_query_spans_claude_code_codex_gemini_and_opencode() {
    let claude = std::path::Path::new("../shared/captures/claude-code/cc2.1.304-bg-polling.pcap");
    let claude = repo().join(claude);
    let codex = repo().join("captures/imports/codex/sessions");
    let gemini = &crate::gemini::recordings().new;
    let opencode = &crate::opencode::recordings().traces;
    let oc = |p: &str| opencode[&format!("new-{p}")].clone();
    // file (as the `file` column names it) → (agent, provider, dialect, cli_version).
    let mut want: BTreeMap<String, [&str; 4]> = BTreeMap::new();
    let g = crate::gemini::NEW;
    let o = crate::opencode::NEW;
    want.insert(
        claude.display().to_string(),
        ["claude-code", "anthropic", "messages", "2.1.304"],
    );
    want.insert(
        gemini.display().to_string(),
        ["gemini", "google", "gemini", g],
    );
    want.insert(
        oc("anthropic").display().to_string(),
        ["opencode", "anthropic", "messages", o],
    );
    want.insert(
        oc("openai").display().to_string(),
        ["opencode", "openai", "responses", o],
    );
    want.insert(
        oc("compatible").display().to_string(),
        ["opencode", "openai", "chat_completions", o],
    );
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("tables");
    let mut args = vec![
        "analyze".to_string(),
        "--parquet".into(),
        tables.display().to_string(),
        codex.display().to_string(),
    ];
    args.extend(want.keys().cloned());
    agentwire_ok(&args.iter().map(String::as_str).collect::<Vec<_>>());

    let rows = duckdb(
        &tables,
        "select file, agent, provider, dialect, cli_version, min(schema_version), max(schema_version) from requests group by all order by all",
    );
    let mut got: BTreeMap<String, [String; 4]> = BTreeMap::new();
    let mut codex_rows = BTreeSet::new();
    for r in &rows {
        let s = |i: usize| r[i].as_str().unwrap_or("null").to_string();
        assert_eq!((r[5].as_i64(), r[6].as_i64()), (Some(2), Some(2)), "{r:?}");
        let file = s(0);
        if file.starts_with(&codex.display().to_string()) {
            codex_rows.insert([s(1), s(2), s(3), s(4)]);
            continue;
        }
        let prev = got.insert(file.clone(), [s(1), s(2), s(3), s(4)]);
        assert!(prev.is_none(), "{file}: two origins: {rows:?}");
    }
    let want_s: BTreeMap<String, [String; 4]> = want
        .iter()
        .map(|(k, v)| (k.clone(), v.map(str::to_string)))
        .collect();
    assert_eq!(got, want_s);
    // Both rollout files: Codex 0.171.0 over the Responses API.
    assert_eq!(
        codex_rows,
        BTreeSet::from([["codex", "openai", "responses", "0.171.0"].map(str::to_string)])
    );

    // One query over every agent: threads and polling episodes carry the agent too.
    let agents = duckdb(
        &tables,
        "select agent, provider, count(*) from threads group by all order by all",
    );
    let names: BTreeSet<(String, String)> = agents
        .iter()
        .map(|r| (r[0].as_str().unwrap().into(), r[1].as_str().unwrap().into()))
        .collect();
    let expected: BTreeSet<(String, String)> = [
        ("claude-code", "anthropic"),
        ("codex", "openai"),
        ("gemini", "google"),
        ("opencode", "anthropic"),
        ("opencode", "openai"),
    ]
    .iter()
    .map(|(a, p)| (a.to_string(), p.to_string()))
    .collect();
    assert_eq!(names, expected);
    // opencode's polling scenario: 3 polls of job 1 on each of its three wire formats
    // (`captures/scenarios/opencode-poll.json`).
    let polls = duckdb(
        &tables,
        "select dialect, sum(polls) from episodes where agent = 'opencode' group by 1 order by 1",
    );
    assert_eq!(
        polls,
        vec![
            serde_json::json!(["chat_completions", 3]),
            serde_json::json!(["messages", 3]),
            serde_json::json!(["responses", 3]),
        ]
    );
}
