//! `agentwire record` with real Claude Code binaries from the npm registry (Must-show 1, 2
//! and 6 of the capture issue). Needs `npm` and the registry; the binaries are cached under
//! the user cache directory after the first run.

use agentwire::api::{BlockKind, MessagesRequest};
use agentwire::input::open_trace;
use agentwire::trace::Trace;

use crate::common::*;

fn record(args: &[&str], out: &std::path::Path) -> std::process::Output {
    let o = std::process::Command::new(bin())
        .arg("record")
        .args(["-o"])
        .arg(out)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "record {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_no_key(out);
    o
}

fn messages_requests(t: &Trace) -> Vec<MessagesRequest> {
    t.exchanges
        .iter()
        .filter(|x| x.is_messages())
        .map(|x| MessagesRequest::parse(&x.request.body.bytes).unwrap())
        .collect()
}

#[test]
fn claude_code_303_and_304_say_hello_with_20_and_12_tools() {
    let dir = tempfile::tempdir().unwrap();
    for (version, tools) in [("2.1.303", 20), ("2.1.304", 12)] {
        let out = dir.path().join(format!("{version}.jsonl"));
        let o = record(
            &[
                "--cli",
                &format!("claude-code@{version}"),
                "--route",
                "base-url",
            ],
            &out,
        );
        let summary = String::from_utf8_lossy(&o.stdout);
        assert!(summary.contains(&format!("{tools} tools")), "{summary}");
        let t = open_trace(&out).unwrap();
        assert_eq!(t.context.cli_version.as_deref(), Some(version));
        assert_eq!(t.context.route.as_deref(), Some("base-url"));
        assert!(t.context.env["ANTHROPIC_API_KEY"].starts_with("[redacted sk-ant-api03 fp="));
        let reqs = messages_requests(&t);
        assert_eq!(reqs.len(), 1, "{version}: one /v1/messages exchange");
        assert_eq!(reqs[0].tools.len(), tools, "{version}: tool count");
        let ua = t.exchanges[0]
            .request
            .headers
            .iter()
            .find(|(k, _)| k == "user-agent")
            .unwrap();
        assert!(ua.1.contains(version), "{}", ua.1);
        assert!(t.exchanges.iter().all(|x| x.request.body.verify()));
    }
}

/// A scenario drives real 2.1.304 through a background Bash command, three polls of its
/// output file, and the task notification that arrives afterwards.
#[test]
fn scenario_drives_background_job_polls_and_notification() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bg.jsonl");
    let script = repo().join("captures/scenarios/bg-build.json");
    record(
        &[
            "--cli",
            "claude-code@2.1.304",
            "--route",
            "base-url",
            "--script",
            script.to_str().unwrap(),
            "--",
            "-p",
            "run the build",
            "--allowedTools",
            "Bash",
        ],
        &out,
    );
    let t = open_trace(&out).unwrap();
    let reqs = messages_requests(&t);
    let main: Vec<&MessagesRequest> = reqs.iter().filter(|r| !r.tools.is_empty()).collect();
    assert!(main.len() >= 6, "{} main-thread requests", main.len());

    // The background start's tool_result names the output file.
    let results: Vec<(String, String)> = main
        .last()
        .unwrap()
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match &b.kind {
            BlockKind::ToolResult {
                tool_use_id, text, ..
            } => Some((tool_use_id.clone(), text.clone())),
            _ => None,
        })
        .collect();
    let start = &results
        .iter()
        .find(|(id, _)| id == "toolu_aw_01")
        .unwrap()
        .1;
    let out_file = start
        .split("Output is being written to: ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .map(|s| s.trim_end_matches('.'))
        .expect("output path in the background start's result");
    assert!(out_file.ends_with(".output"), "{out_file}");

    // Three polls of that file: Bash tool calls whose command reads it.
    let polls: Vec<String> = main
        .last()
        .unwrap()
        .messages
        .iter()
        .flat_map(|m| &m.content)
        .filter_map(|b| match &b.kind {
            BlockKind::ToolUse { input, .. } => input["command"].as_str().map(str::to_string),
            _ => None,
        })
        .filter(|c| c.contains(out_file))
        .collect();
    assert_eq!(polls.len(), 3, "{polls:?}");
    for id in ["toolu_aw_02", "toolu_aw_03", "toolu_aw_04"] {
        assert!(results.iter().any(|(i, _)| i == id), "{id} answered");
    }

    // The notification arrives in a later request, after the polls.
    let last_text: String = main.last().unwrap().messages.last().unwrap().text();
    assert!(last_text.contains("<task-notification>"), "{last_text}");
    assert!(last_text.contains("completed"), "{last_text}");
    let notified_at = main.iter().position(|r| {
        r.messages
            .iter()
            .any(|m| m.text().contains("<task-notification>"))
    });
    let polled_by = main.iter().position(|r| r.turn() >= 4).unwrap();
    assert!(notified_at.unwrap() > polled_by);
}
