//! Importing Codex session files (`$CODEX_HOME/sessions/**/rollout-*.jsonl`, issue 28 §6):
//! the hand-written rollouts in `captures/imports/codex/` (a classic session with
//! exec_command and write_stdin polls, a code-mode one with exec and wait polls) through
//! the commands, as a user would give them: a file, or the `sessions/` directory.

use std::path::PathBuf;

use agentwire::input::open_trace;
use agentwire::trace::Exchange;
use serde_json::Value;

use crate::common::*;

fn sessions() -> PathBuf {
    repo().join("captures/imports/codex/sessions")
}

/// The rollout of the session whose id ends with `tail`.
fn rollout(tail: &str) -> PathBuf {
    let day = sessions().join("2026/12/01");
    std::fs::read_dir(&day)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(&format!("{tail}.jsonl")))
        .unwrap()
}

fn body(x: &Exchange) -> Value {
    serde_json::from_slice(&x.request.body.bytes).unwrap()
}

fn input_counts(xs: &[&Exchange]) -> Vec<usize> {
    xs.iter()
        .map(|x| body(x)["input"].as_array().unwrap().len())
        .collect()
}

#[test]
fn codex_sessions_import_as_one_responses_exchange_per_model_response() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.jsonl");
    let o = agentwire_ok(&[
        "import",
        sessions().to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("14 codex-rollout"), "{said}");
    let t = open_trace(&out).unwrap();
    assert!(t.problems.is_empty(), "{:?}", t.problems);
    let by_session = |model: &str| -> Vec<&Exchange> {
        t.exchanges
            .iter()
            .filter(|x| body(x)["model"] == model)
            .collect()
    };
    let classic = by_session("gpt-5.5");
    let code = by_session("gpt-6.2-sol");
    assert_eq!((classic.len(), code.len()), (7, 7));
    assert_eq!(input_counts(&classic), [4, 7, 9, 11, 13, 15, 17]);
    assert_eq!(input_counts(&code), [5, 8, 10, 12, 14, 16, 18]);
    for x in &t.exchanges {
        assert_eq!(x.source.format.as_deref(), Some("codex-rollout"));
        assert_eq!(x.request.target, "/v1/responses");
        assert!(x
            .source
            .missing
            .iter()
            .any(|m| m.contains("request headers")));
    }
    // usage as recorded: input 5,160 of which 4,992 read from the cache, 20 out
    let r: Value =
        serde_json::from_slice(&classic[1].response.as_ref().unwrap().body.bytes).unwrap();
    assert_eq!(r["usage"]["input_tokens"], 5160);
    assert_eq!(r["usage"]["input_tokens_details"]["cached_tokens"], 4992);
    assert_eq!(r["usage"]["output_tokens"], 20);
    let headers: Vec<String> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with(r#"{"type":"trace""#))
        .map(str::to_string)
        .collect();
    assert_eq!(headers.len(), 2, "one recording context per file");
    // the imported trace reads like a recorded one
    let o = agentwire_ok(&["analyze", "--format", "json", out.to_str().unwrap()]);
    let a: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(a["summary"]["requests"], 14);
    assert!(
        headers[0].contains(r#""cli":"codex","cli_version":"0.171.0""#),
        "{}",
        headers[0]
    );
}

#[test]
fn every_reading_command_reads_a_rollout_and_analyze_counts_its_requests() {
    let classic = rollout("c1a5");
    let code = rollout("c0de5");
    let (a, b) = (classic.to_str().unwrap(), code.to_str().unwrap());
    let d = sessions();
    let dir = d.to_str().unwrap();
    agentwire_ok(&["show", a]);
    agentwire_ok(&["show", dir]);
    agentwire_ok(&["diff", a, b]);
    agentwire_ok(&["export", "--har", b]);
    agentwire_ok(&["prompt", &format!("{b}#1")]);
    let o = agentwire_ok(&["analyze", "--format", "json", dir]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["requests"], 14);
    assert_eq!(v["summary"]["sessions"], 2);
}

#[test]
fn a_rollout_cut_short_keeps_its_responses_names_the_cut_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(rollout("c0de5")).unwrap();
    let cut = &text[..text.len() - 40];
    let p = dir.path().join("rollout-cut.jsonl");
    std::fs::write(&p, cut).unwrap();
    let o = agentwire(&["show", p.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("line 39") && said.contains("truncated"),
        "{said}"
    );
    let shown = String::from_utf8_lossy(&o.stdout);
    assert_eq!(shown.matches("/v1/responses").count(), 7, "{shown}");
}

#[test]
fn a_rollout_without_a_response_is_named_in_a_directory_and_an_error_alone() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(rollout("c1a5")).unwrap();
    let head: String = text.lines().take(6).map(|l| format!("{l}\n")).collect();
    let p = dir.path().join("rollout-empty.jsonl");
    std::fs::write(&p, head).unwrap();
    let o = agentwire(&["show", p.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no model response"));
    std::fs::copy(rollout("c1a5"), dir.path().join("rollout-full.jsonl")).unwrap();
    let o = agentwire_ok(&["show", dir.path().to_str().unwrap()]);
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("skipped 1 file") && said.contains("no model response"),
        "{said}"
    );
}

#[test]
fn a_rollout_whose_first_line_is_damaged_is_read_from_its_second() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(rollout("c1a5")).unwrap();
    let (_, rest) = text.split_once('\n').unwrap();
    let p = dir.path().join("rollout-damaged.jsonl");
    std::fs::write(
        &p,
        format!("{{\"timestamp\":\"2026-12-01T10:00:00Z\"}}\n{rest}"),
    )
    .unwrap();
    let o = agentwire(&["show", p.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let shown = String::from_utf8_lossy(&o.stdout);
    assert_eq!(shown.matches("/v1/responses").count(), 7, "{shown}");
}
