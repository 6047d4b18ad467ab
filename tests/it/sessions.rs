//! Two real Claude Code sessions recorded by one server, started with the same prompt:
//! 2.1.304, then 2.1.332, each driven through `captures/scenarios/bg-build.json` (a
//! background build, three checks of its output file, the notification). Session identity
//! comes from what the client sends (its session-id header), so `show`, `diff --within`
//! and `analyze` keep the runs apart.

use std::process::Command;

use serde_json::Value;

use agentwire::analyze::{analyze_files, AnalyzeConfig, MissCause};
use agentwire::capture::npm::{ensure, CliSpec};
use agentwire::capture::record::clean_env;
use agentwire::capture::route::FAKE_API_KEY;
use agentwire::capture::server::{Mode, Script, ServerConfig};
use agentwire::trace::{Context, TraceWriter};

use crate::common::{bin, repo, TestServer};

/// Run one CLI version against `base_url` in its own sandbox, as `record` would.
fn run_cli(version: &str, base_url: &str) {
    let spec = CliSpec::parse(&format!("claude-code@{version}")).unwrap();
    let exe = ensure(&spec, &|_| {}).unwrap();
    let sandbox = tempfile::tempdir().unwrap();
    let (home, config, work) = (
        sandbox.path().join("home"),
        sandbox.path().join("config"),
        sandbox.path().join("work"),
    );
    for d in [&home, &config, &work] {
        std::fs::create_dir_all(d).unwrap();
    }
    let o = Command::new(exe)
        .args(["-p", "run the build", "--allowedTools", "Bash"])
        .env_clear()
        .envs(clean_env(&home))
        .env("CLAUDE_CONFIG_DIR", &config)
        .env("ANTHROPIC_BASE_URL", base_url)
        .env("ANTHROPIC_API_KEY", FAKE_API_KEY)
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .current_dir(&work)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{version}: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Reported by a user: two sessions that start with the same prompt became one `main`
/// thread: `analyze` reported 1 job and 3 polls where there were 2 jobs and 6, and blamed
/// the second session's first request as a `tools_changed` miss.
#[tokio::test(flavor = "multi_thread")]
async fn two_sessions_with_one_first_prompt_stay_two_sessions() {
    let script = Script::load(&repo().join("captures/scenarios/bg-build.json")).unwrap();
    let s = TestServer::start(ServerConfig {
        mode: Mode::Script(script.into()),
        ..Default::default()
    })
    .await;
    let url = s.server.base_url();
    tokio::task::spawn_blocking(move || {
        run_cli("2.1.304", &url);
        run_cli("2.1.332", &url);
    })
    .await
    .unwrap();
    let t = s.finish().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("two.jsonl");
    let mut w = TraceWriter::create(&path, &Context::new()).unwrap();
    for x in &t.exchanges {
        w.write_exchange(x).unwrap();
    }
    drop(w);

    let a = analyze_files(&[path.as_path()], AnalyzeConfig::default()).unwrap();
    assert_eq!(a.summary.sessions, 2, "{:#?}", a.sessions);
    assert!(a.sessions.iter().all(|s| s.client_id.is_some()));
    assert_eq!(a.jobs.len(), 2, "{:#?}", a.jobs);
    assert_eq!(a.summary.polls, 6, "{:#?}", a.episodes);
    assert!(a.jobs.iter().all(|j| j.job.state.name() == "completed"));
    // Each session's main thread starts cold; nothing is blamed across sessions.
    for session in ["s1", "s2"] {
        let first = a
            .requests
            .iter()
            .find(|r| r.session == session && r.thread.ends_with("/main"))
            .unwrap();
        assert_eq!(first.cause, Some(MissCause::ColdStart), "{session}");
        assert_eq!(first.status, "cold", "{session}");
        assert_eq!(first.predicted.reference, None, "{session}");
    }
    assert!(
        a.requests
            .iter()
            .all(|r| !matches!(r.cause, Some(MissCause::ToolsChanged { .. }))),
        "no tools_changed across sessions"
    );

    // `show` has a session column with both sessions.
    let o = Command::new(bin())
        .args(["show", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    let rows: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    let sessions: std::collections::BTreeSet<&str> = rows
        .iter()
        .map(|r| r["session"].as_str().unwrap())
        .collect();
    assert_eq!(sessions.into_iter().collect::<Vec<_>>(), ["s1", "s2"]);
    let mains = rows.iter().filter(|r| r["thread"] == "main").count();
    assert_eq!(
        mains,
        a.requests
            .iter()
            .filter(|r| r.thread.ends_with("/main"))
            .count()
    );

    // `diff --within` compares turns of one session only, and says which.
    let o = Command::new(bin())
        .args(["diff", "--format", "json", "--within"])
        .arg(&path)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let comparisons = v["comparisons"].as_array().unwrap();
    assert!(!comparisons.is_empty());
    for c in comparisons {
        assert_eq!(c["a"]["session"], c["b"]["session"], "{}", c["a"]["label"]);
        assert!(c["a"]["turn"].as_u64() < c["b"]["turn"].as_u64());
    }
    assert!(comparisons.iter().any(|c| c["a"]["session"] == "s2"));
}
