//! Nothing hostile reaches the terminal (issue 10, kind 14): a trace with control, bidi and
//! zero-width characters in every string field renders escaped in every command and
//! format; JSON keeps the values (escaped as `\uXXXX`).

use std::collections::BTreeMap;

use agentwire::trace::{
    Body, Context, Exchange, ExchangeError, HttpRequest, HttpResponse, Source, SourceKind,
    TraceWriter,
};
use serde_json::json;

use crate::common::*;

/// Escape sequence, bidi override, zero-width space, line separator, C1 CSI, BEL, BOM.
const H: &str = "E\u{1b}[31m\u{202e}\u{200b}\u{2028}\u{9b}\u{7}\u{feff}";

/// Characters that must never appear raw in terminal output (newline and tab excepted).
fn raw_hostile(s: &str) -> Vec<char> {
    let re = regex::Regex::new(r"[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]").unwrap();
    re.find_iter(s)
        .flat_map(|m| m.as_str().chars())
        .filter(|c| *c != '\n' && *c != '\t')
        .collect()
}

fn request_body(tool: &str, beta_text: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "model": format!("claude-{H}"),
        "max_tokens": 10,
        "system": [{"type": "text", "text": format!("system {H} {beta_text}"), "cache_control": {"type": "ephemeral"}}],
        "tools": [
            {"name": format!("{tool}{H}"), "description": format!("does {H} things {beta_text}"),
             "input_schema": {"type": "object", "properties": {format!("p{H}"): {"type": "string", "description": H}}}},
            {"name": "Bash", "description": "run", "input_schema": {"type": "object"}}
        ],
        "messages": [
            {"role": "user", "content": format!("hello {H}")},
            {"role": "assistant", "content": [{"type": "tool_use", "id": format!("toolu_{H}"), "name": "Bash",
                "input": {"command": format!("sleep 5; cat /tmp/{H}.out"), "run_in_background": true}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{H}"),
                "content": format!("Command running in background with ID: {H}. Output is being written to: /tmp/{H}.out")}]}
        ]
    }))
    .unwrap()
}

fn exchange(id: u64, tool: &str, beta: &str) -> Exchange {
    let resp = serde_json::to_vec(&json!({
        "type": "message", "id": format!("msg_{H}"), "role": "assistant", "model": format!("m{H}"),
        "content": [{"type": "text", "text": format!("answer {H}")},
                    {"type": "tool_use", "id": format!("toolu_2{H}"), "name": format!("Read{H}"), "input": {"path": H}}],
        "stop_reason": format!("end_turn{H}"),
        "usage": {"input_tokens": 10, "output_tokens": 5}
    }))
    .unwrap();
    let mut source = Source::new(SourceKind::Pcap);
    source.file = Some(format!("/captures/{H}.pcap"));
    source.server = Some(format!("api{H}:443"));
    let mut notes = BTreeMap::new();
    notes.insert("script".into(), json!({"thread": H, "turn": 0}));
    Exchange {
        id,
        started_at: chrono::DateTime::from_timestamp(1_764_000_000 + id as i64, 0).unwrap(),
        ended_at: None,
        source,
        request: HttpRequest {
            method: "POST".into(),
            target: format!("/v1/messages?beta={H}"),
            version: "HTTP/1.1".into(),
            headers: vec![
                ("content-type".into(), "application/json".into()),
                ("anthropic-beta".into(), format!("beta-{beta}{H}")),
                ("user-agent".into(), format!("claude-cli/{H}")),
                (format!("x-{H}"), H.into()),
            ]
            .into(),
            body: Body::new(request_body(tool, beta)),
        },
        response: Some(HttpResponse {
            status: 200,
            version: "HTTP/1.1".into(),
            headers: vec![("content-type".into(), "application/json".into())].into(),
            body: Body::new(resp),
            chunks: Vec::new(),
            first_byte_at: None,
        }),
        error: (id == 1).then(|| ExchangeError {
            kind: format!("odd{H}"),
            message: format!("message {H}"),
        }),
        notes,
        websocket: None,
    }
}

fn write_trace(path: &std::path::Path, tool: &str, beta: &str) {
    let mut c = Context::new();
    c.label = Some(H.into());
    c.cli = Some(format!("cli{H}"));
    let mut w = TraceWriter::create(path, &c).unwrap();
    for id in 0..3 {
        w.write_exchange(&exchange(id, tool, beta)).unwrap();
    }
}

fn run(args: &[&str]) -> String {
    let o = std::process::Command::new(bin())
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        raw_hostile(&text).is_empty(),
        "agentwire {args:?} printed raw {:?}:\n{text}",
        raw_hostile(&text)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `diff`, `analyze` and `replay --compare` printed trace strings raw; `show` passed bidi
/// overrides, zero-width characters and line separators. Every command and format now
/// escapes them.
#[test]
fn hostile_strings_render_escaped_in_every_command_and_format() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    write_trace(&a, "Alpha", "one");
    write_trace(&b, "Beta", "two");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    for format in ["table", "md", "json"] {
        let show = run(&["show", a, "--format", format]);
        let diff = run(&["diff", a, b, "--format", format]);
        let within = run(&["diff", "--within", a, "--format", format]);
        let analyze = run(&["analyze", a, b, "--usage", "simulated", "--format", format]);
        if format == "json" {
            // the JSON values are unchanged, only written with escapes
            let v: serde_json::Value = serde_json::from_str(&show).unwrap();
            assert_eq!(v[0]["model"], format!("claude-{H}"));
            assert!(
                show.contains("\\u202e") && show.contains("\\u009b"),
                "{show}"
            );
            for j in [&diff, &within, &analyze] {
                serde_json::from_str::<serde_json::Value>(j).unwrap();
            }
        } else {
            assert!(
                show.contains("\\u{202e}") && show.contains("\\u{1b}"),
                "{show}"
            );
            assert!(
                diff.contains("Alpha") && diff.contains("\\u{200b}"),
                "{diff}"
            );
        }
        if format == "table" {
            insta::assert_snapshot!("hostile_show_table", scrub(&show));
        }
        if format == "md" {
            insta::assert_snapshot!("hostile_diff_md_tools", tools_section(&diff));
        }
    }
}

fn scrub(s: &str) -> String {
    s.lines().map(|l| l.trim_end().to_string() + "\n").collect()
}

/// The diff's tools section (stable across runs: no times or paths).
fn tools_section(md: &str) -> String {
    let start = md.find("# Tools").unwrap();
    let end = md[start..].find("# System").map_or(md.len(), |e| start + e);
    md[start..end].to_string()
}

/// The pcap summary (TLS server names) and the replay report (a live response's fields)
/// come from libraries; they escape too.
#[test]
fn pcap_summary_and_replay_report_escape_hostile_strings() {
    use agentwire::capture::pcap::{ExtractionSummary, TlsConnection};
    use agentwire::capture::resend::{Outcome, ResendSummary as ReplaySummary};
    use agentwire::report::{self, Format};
    let mut s = ExtractionSummary::default();
    s.tls.push(TlsConnection {
        client: "10.0.0.1:5000".into(),
        server: "10.0.0.2:443".into(),
        version: "TLS 1.3".into(),
        sni: Some(format!("api{H}.example")),
        bytes: 10,
    });
    s.errors.insert(format!("kind{H}"), 1);
    let r = ReplaySummary {
        requests: 1,
        statuses: [(format!("2{H}"), 1)].into_iter().collect(),
        latency_ms: Some([1.0; 4]),
        differing: Some(1),
        seconds: 1.0,
        outcomes: vec![Outcome {
            id: 0,
            status: Some(200),
            latency_ms: 1.0,
            error: None,
            differences: vec![format!("text \"a\" -> \"b{H}\"")],
            dropped_headers: Vec::new(),
        }],
    };
    for f in [Format::Table, Format::Markdown, Format::Json] {
        for out in [
            report::capture::render(&s, f),
            report::replay::render(&r, f),
        ] {
            assert!(raw_hostile(&out).is_empty(), "{f:?}:\n{out}");
        }
    }
}
