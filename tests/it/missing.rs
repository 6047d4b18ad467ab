//! Missing is not empty (issue 31 kind 9): what a source never held is unknown in every
//! answer and gate, not zero or empty.

use serde_json::{json, Value};

use crate::common::*;

/// One entry of `claude-tap export --format json` (the fields the real export keeps:
/// `tests/it/import_peers.rs` checks them against claude-tap itself): no headers.
fn tap_export() -> Value {
    json!([{"timestamp": "2026-01-01T00:00:00Z", "turn": 1, "duration_ms": 900,
        "model": "claude-sonnet-4-5",
        "system": [{"type": "text", "text": "You are Claude Code."}], "tools": [],
        "messages": [{"role": "user", "content": "hello"}],
        "response": {"content": [{"type": "text", "text": "hi"}],
            "usage": {"input_tokens": 5, "output_tokens": 1}, "stop_reason": "end_turn"}}])
}

/// A claude-tap JSON export holds no request headers; the importer's own `content-type`
/// line made its headers look recorded, so a diff against Claude Code 2.1.304 said every
/// beta was removed and `--fail-on beta-removed` failed. Its betas are unknown: nothing
/// removed, the gate passes, JSON says `null`.
#[test]
fn claude_tap_export_without_headers_diffed_as_all_betas_removed() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("export.json");
    std::fs::write(&export, serde_json::to_vec_pretty(&tap_export()).unwrap()).unwrap();
    let a = shared_capture("claude-code/cc2.1.304-hello.pcap");
    let (a, b) = (a.to_str().unwrap(), export.to_str().unwrap());
    let o = agentwire(&["diff", a, b, "--fail-on", "beta-removed"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let v: Value =
        serde_json::from_slice(&agentwire_ok(&["diff", a, b, "--format", "json"]).stdout).unwrap();
    let h = &v["comparisons"][0]["headers"];
    assert!(
        h["a_betas"].as_array().is_some_and(|b| !b.is_empty()),
        "{h}"
    );
    assert_eq!(
        (&h["a_known"], &h["b_known"]),
        (&json!(true), &json!(false))
    );
    assert_eq!(h["b_betas"], Value::Null, "{h}");
    assert_eq!(h["betas_removed"], json!([]), "{h}");
}

/// The same export minified onto one line was read as JSON Lines of claude-tap records
/// ("line 1: not a claude-tap record") and gave no exchange.
#[test]
fn one_line_claude_tap_export_read_as_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("export.json");
    std::fs::write(&export, serde_json::to_vec(&tap_export()).unwrap()).unwrap();
    let o = agentwire_ok(&["show", export.to_str().unwrap(), "--format", "json"]);
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v.as_array().or_else(|| v["exchanges"].as_array()).unwrap();
    assert_eq!(rows.len(), 1, "{v}");
}
