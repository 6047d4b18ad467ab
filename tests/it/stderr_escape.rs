//! Nothing recorded drives the terminal through stderr: a hostile tool name (an OSC that
//! retitles the terminal, BEL, a clear-screen CSI, bidi and zero-width characters) goes
//! through every `--fail-on` gate of `diff` and `analyze` and through the warning paths
//! (an unreadable record quoting it, a degraded response, a skipped file, an unpriced
//! model, a failed command); stderr never carries a control or bidi character, and the
//! name still shows, escaped.

use std::collections::BTreeMap;
use std::path::Path;

use agentwire::trace::{Body, Context, Exchange, HttpRequest, HttpResponse, Source, SourceKind};
use serde_json::json;

use crate::common::*;

/// The name from the review's repro (b3), plus bidi (RLO, LRI) and zero-width (ZWSP,
/// ZWJ) characters, and a C1 CSI.
const N: &str = "EVIL\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}\u{2066}\u{200b}\u{200d}\u{9b}";
/// How the printable filter shows it.
const SHOWN: &str =
    "EVIL\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{202e}\\u{2066}\\u{200b}\\u{200d}\\u{9b}";

/// Characters that must never reach stderr raw: C0 controls but newline, DEL, C1
/// controls, bidi embeddings, overrides and isolates, zero-width characters and the BOM.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| {
            (c < ' ' && c != '\n')
                || ('\u{7f}'..='\u{9f}').contains(&c)
                || ('\u{202a}'..='\u{202e}').contains(&c)
                || ('\u{2066}'..='\u{2069}').contains(&c)
                || ('\u{200b}'..='\u{200f}').contains(&c)
                || c == '\u{feff}'
        })
        .collect()
}

/// Run agentwire; its stderr, checked to hold no raw control character, and exit code.
fn stderr_of(args: &[&str]) -> (String, Option<i32>) {
    let o = std::process::Command::new(bin())
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    let err = String::from_utf8(o.stderr).expect("stderr is UTF-8");
    let raw = raw_controls(&err);
    assert!(
        raw.is_empty(),
        "agentwire {args:?} printed raw {raw:?} on stderr:\n{err}"
    );
    (err, o.status.code())
}

/// A Messages request body; `side` 0 is A, 1 is B. B adds a tool, removes one, changes
/// one, defers one and undeferres one, each named after [`N`]; the system prompt, an
/// injected reminder and an unknown parameter named after it differ too.
fn request(side: usize) -> serde_json::Value {
    let tool = |name: &str, desc: &str, defer: bool| {
        let mut t = json!({"name": format!("{name}{N}"), "description": desc,
                           "input_schema": {"type": "object"}});
        if defer {
            t["defer_loading"] = json!(true);
        }
        t
    };
    let tools = if side == 0 {
        vec![
            tool("Gone", "x", false),
            tool("Changed", "old", false),
            tool("Deferred", "d", false),
            tool("Undeferred", "u", true),
        ]
    } else {
        vec![
            tool("Added", "x", false),
            tool("Changed", "new", false),
            tool("Deferred", "d", true),
            tool("Undeferred", "u", false),
        ]
    };
    json!({
        "model": format!("claude-{N}"),
        "max_tokens": 10,
        "system": format!("system {side} {N}"),
        "tools": tools,
        format!("x{N}"): side,
        "messages": [{"role": "user", "content": [
            {"type": "text", "text": format!("<system-reminder>{side} {N}</system-reminder>")},
            {"type": "text", "text": "hello"}
        ]}]
    })
}

/// One exchange of `request(side)` with a hostile beta header and `response` as the
/// answer (`content_type` its type).
fn exchange(id: u64, side: usize, content_type: &str, response: Vec<u8>) -> Exchange {
    Exchange {
        id,
        started_at: chrono::DateTime::from_timestamp(1_764_000_000 + id as i64, 0).unwrap(),
        ended_at: None,
        source: Source::new(SourceKind::Server),
        request: HttpRequest {
            method: "POST".into(),
            target: "/v1/messages".into(),
            version: "HTTP/1.1".into(),
            headers: vec![
                ("content-type".into(), "application/json".into()),
                ("anthropic-beta".into(), format!("beta-{side}-{N}")),
            ]
            .into(),
            body: Body::new(serde_json::to_vec(&request(side)).unwrap()),
        },
        response: Some(HttpResponse {
            status: 200,
            version: "HTTP/1.1".into(),
            headers: vec![("content-type".into(), content_type.into())].into(),
            body: Body::new(response),
            chunks: Vec::new(),
            first_byte_at: None,
        }),
        error: None,
        notes: BTreeMap::new(),
        websocket: None,
    }
}

/// A JSON answer with usage, so `analyze` prices (or cannot price) it.
fn answer() -> Vec<u8> {
    serde_json::to_vec(&json!({
        "type": "message", "id": "msg_1", "role": "assistant", "model": format!("claude-{N}"),
        "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 5}
    }))
    .unwrap()
}

/// A stream whose second event names a content block far past the ones started, with a
/// hostile event type: the exchange is degraded and the warning quotes the type.
fn bad_stream() -> Vec<u8> {
    format!(
        "event: message_start\ndata: {}\n\nevent: x\ndata: {}\n\n",
        json!({"type": "message_start", "message": {"id": "m", "model": "claude-sonnet-4-5",
               "usage": {"input_tokens": 1, "output_tokens": 1}}}),
        json!({"type": format!("content_block_{N}"), "index": 100000})
    )
    .into_bytes()
}

fn write_trace(path: &Path, side: usize, exchanges: &[Exchange]) {
    let mut c = Context::new();
    c.cli_version = Some(format!("{side}.0.0"));
    let mut w = agentwire::trace::TraceWriter::create(path, &c).unwrap();
    for x in exchanges {
        w.write_exchange(x).unwrap();
    }
    w.finish().unwrap();
}

/// Two traces A and B (B's file name is hostile too, so every label quoting it is).
fn pair(dir: &Path) -> (String, String) {
    let (a, b) = (dir.join("a.jsonl"), dir.join(format!("b{N}.jsonl")));
    write_trace(&a, 0, &[exchange(0, 0, "application/json", answer())]);
    write_trace(&b, 1, &[exchange(0, 1, "application/json", answer())]);
    (a.display().to_string(), b.display().to_string())
}

/// Found by the architecture review (b3, "the confirmed hole"): `diff --fail-on
/// tools-added` printed the added tool's name raw on stderr (the `gate tripped:` line),
/// so a recorded name could retitle and clear the user's terminal. Every gate, flag and
/// size alike, now trips with the name escaped.
#[test]
fn every_diff_gate_prints_a_hostile_tool_name_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = pair(dir.path());
    // The review's repro itself: two request bodies, B adds the tool.
    let (ja, jb) = (dir.path().join("a.json"), dir.path().join("b.json"));
    let mut with_tool = request(0);
    with_tool["tools"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": N, "description": "x", "input_schema": {"type": "object"}}));
    std::fs::write(&ja, serde_json::to_vec(&request(0)).unwrap()).unwrap();
    std::fs::write(&jb, serde_json::to_vec(&with_tool).unwrap()).unwrap();
    let (err, code) = stderr_of(&[
        "diff",
        ja.to_str().unwrap(),
        jb.to_str().unwrap(),
        "--fail-on",
        "tools-added",
    ]);
    assert_eq!(code, Some(4), "{err}");
    assert!(
        err.contains("gate tripped: --fail-on tools-added: "),
        "{err}"
    );
    assert!(err.contains(SHOWN), "{err}");
    let flags = [
        "any",
        "tools",
        "tools-added",
        "tools-removed",
        "tools-deferred",
        "tools-undeferred",
        "tools-changed",
        "beta-changed",
        "beta-added",
        "beta-removed",
        "headers-changed",
        "system-changed",
        "params-changed",
        "injected-changed",
    ];
    let sizes = [
        "tools",
        "loaded-tools",
        "deferred-tools",
        "announced-tools",
        "deferred-definitions",
        "placeholder-tools",
        "tool-bytes",
        "schema-bytes",
        "system-bytes",
        "messages-bytes",
        "body-bytes",
        "tokens",
    ]
    .map(|m| format!("{m} >= 0"));
    for gate in flags.iter().map(|f| f.to_string()).chain(sizes) {
        let (err, code) = stderr_of(&["diff", &a, &b, "--fail-on", &gate]);
        assert_eq!(code, Some(4), "--fail-on {gate} did not trip:\n{err}");
        assert!(
            err.contains(&format!("gate tripped: --fail-on {gate}: ")),
            "{err}"
        );
        // Every detail names the comparison, whose B label is the hostile file name.
        assert!(err.contains(SHOWN), "--fail-on {gate}:\n{err}");
    }
}

/// `analyze --fail-on` quotes the gate as written: a gate holding characters Rust counts
/// as whitespace (NEL, a C1 control; the line separator) still parses, and every metric's
/// tripped line shows them escaped; a gate that does not parse is a usage error, escaped
/// too. The unpriced hostile model is a warning, escaped.
#[test]
fn every_analyze_gate_and_warning_prints_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let (a, _) = pair(dir.path());
    for metric in [
        "polls",
        "redundant-polls",
        "polls-after-notified",
        "polls-while-pending",
        "wasted-tokens",
        "wasted-cost",
        "cache-miss-tokens",
        "cache-miss-cost",
        "cache-hit-rate",
        "total-cost",
        "failed-jobs",
        "unnotified-jobs",
    ] {
        let gate = format!("{metric}\u{85}>=\u{2028}0");
        let (err, code) = stderr_of(&["analyze", &a, "--usage", "simulated", "--fail-on", &gate]);
        assert_eq!(code, Some(4), "--fail-on {gate:?} did not trip:\n{err}");
        assert!(
            err.contains(&format!(
                "--fail-on {metric}\\u{{85}}>=\\u{{2028}}0: {metric} is "
            )),
            "{err}"
        );
        assert!(
            err.contains(&format!("claude-{SHOWN}")),
            "the unpriced model:\n{err}"
        );
    }
    let (err, code) = stderr_of(&["analyze", &a, "--fail-on", &format!("polls > {N}")]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(SHOWN), "{err}");
}

/// The warning paths quote recorded text: an unreadable record (serde quotes the bad
/// value), a degraded response (the stream event's type), a directory's skipped file (its
/// name), a failed command (a missing input's name).
#[test]
fn warnings_quoting_recorded_text_print_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t.jsonl");
    write_trace(
        &t,
        0,
        &[
            exchange(0, 0, "application/json", answer()),
            exchange(1, 0, "text/event-stream", bad_stream()),
        ],
    );
    let mut bytes = std::fs::read(&t).unwrap();
    bytes.extend_from_slice(format!("{}\n", json!({"type": "exchange", "id": N})).as_bytes());
    std::fs::write(&t, bytes).unwrap();
    let t = t.to_str().unwrap();
    for args in [
        vec!["show", t],
        vec!["analyze", t, "--usage", "simulated"],
        vec!["export", "--har", t, "-o", "-"],
    ] {
        let (err, code) = stderr_of(&args);
        assert_eq!(code, Some(3), "{args:?}: degraded input:\n{err}");
        assert!(err.contains("warning: "), "{args:?}:\n{err}");
        assert!(
            err.contains(SHOWN),
            "{args:?}: the bad record's value:\n{err}"
        );
    }
    let (err, _) = stderr_of(&["show", t]);
    assert!(
        err.contains(&format!("content_block_{SHOWN}")),
        "the degraded exchange's event type:\n{err}"
    );
    let inputs = dir.path().join("inputs");
    std::fs::create_dir(&inputs).unwrap();
    std::fs::copy(dir.path().join("t.jsonl"), inputs.join("t.jsonl")).unwrap();
    std::fs::write(inputs.join(format!("notes{N}.txt")), "plain text\n").unwrap();
    let (err, _) = stderr_of(&["show", inputs.to_str().unwrap()]);
    assert!(
        err.contains("note: ") && err.contains(SHOWN),
        "the skipped file:\n{err}"
    );
    let missing = dir.path().join(format!("missing{N}.jsonl"));
    let (err, code) = stderr_of(&["show", missing.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.starts_with("error: ") && err.contains(SHOWN), "{err}");
}
