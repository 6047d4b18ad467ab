//! Snapshots of every `diff` report format, on hand-made requests (no capture text).

use std::path::PathBuf;

use agentwire::api::normalize::Normalizer;
use agentwire::diff::{self, Mode, Resolved};
use agentwire::report::{self, Format};
use agentwire::trace::{Body, Exchange, HttpRequest, Source, SourceKind, Trace};

const A: &str = r#"{"model":"m-1","max_tokens":1000,"system":[{"type":"text","text":"You are a test agent.\nVersion 1.0.0 of the helper.\nBe brief."},{"type":"text","text":"Rules follow.","cache_control":{"type":"ephemeral"}}],"tools":[{"name":"Bash","description":"Run a shell command.","input_schema":{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"number","default":120}},"required":["command"]}},{"name":"Cron","description":"Schedule a job.","input_schema":{"type":"object","properties":{}}},{"name":"Fetch","description":"Fetch a URL.","input_schema":{"type":"object","properties":{"url":{"type":"string"}}}},{"name":"Old","description":"Gone soon.","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>\nToday's date is 2026-01-01.\n</system-reminder>"},{"type":"text","text":"hi"}]}],"metadata":{"user_id":"session 11111111-2222-3333-4444-555555555555"},"stream":true}"#;

const B: &str = r#"{"model":"m-1","max_tokens":2000,"system":[{"type":"text","text":"You are a test agent.\nVersion 1.1.0 of the helper.\nBe brief."},{"type":"text","text":"Rules follow.","cache_control":{"type":"ephemeral"}}],"tools":[{"name":"Bash","description":"Run a shell command and return its output.","input_schema":{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"integer","default":600},"background":{"type":"boolean"}},"required":["command","background"]}},{"name":"Cron","description":"Schedule a job.","input_schema":{"type":"object","properties":{}},"defer_loading":true},{"type":"tool_search_tool_regex_20251119","name":"tool_search"},{"name":"New","description":"Brand new.","input_schema":{"type":"object"}}],"messages":[{"role":"user","content":[{"type":"text","text":"<system-reminder>\nToday's date is 2026-02-02.\n</system-reminder>"},{"type":"text","text":"<system-reminder>\nThe following deferred tools are now available via ToolSearch:\nFetch\n</system-reminder>"},{"type":"text","text":"hi"}]}],"metadata":{"user_id":"session 99999999-8888-7777-6666-555555555555"},"stream":true,"diagnostics":{"on":true}}"#;

pub fn resolved(name: &str, body: &str, betas: &str, ua: &str) -> Resolved {
    let x = Exchange {
        id: 0,
        started_at: chrono::DateTime::UNIX_EPOCH,
        ended_at: None,
        source: Source::new(SourceKind::Server),
        request: HttpRequest {
            method: "POST".into(),
            target: "/v1/messages?beta=true".into(),
            version: "HTTP/1.1".into(),
            headers: vec![
                ("anthropic-beta".into(), betas.into()),
                ("anthropic-version".into(), "2023-06-01".into()),
                ("user-agent".into(), ua.into()),
                ("content-length".into(), body.len().to_string()),
            ]
            .into(),
            body: Body::new(body.as_bytes().to_vec()),
        },
        response: None,
        error: None,
        notes: Default::default(),
        websocket: None,
    };
    Resolved {
        input: name.into(),
        trace: Trace {
            path: PathBuf::from(name),
            exchanges: vec![x],
            ..Trace::default()
        },
        exchange: None,
    }
}

pub fn report() -> diff::DiffReport {
    let a = resolved("a.jsonl", A, "beta-one,beta-two", "test-cli/1.0.0 (x)");
    let b = resolved("b.jsonl", B, "beta-two,beta-three", "test-cli/1.1.0 (x)");
    let mut r = diff::diff_inputs(&a, &b, Mode::First, &Normalizer::defaults()).unwrap();
    r.apply_gates(&[
        diff::gate::parse("tools-removed").unwrap(),
        diff::gate::parse("schema-bytes>+5%").unwrap(),
        diff::gate::parse("schema-bytes>+10%").unwrap(),
    ]);
    r
}

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    // Volatile values: none are expected in these hand-made inputs, but scrub
    // timestamps should a renderer ever print one.
    s.add_filter(
        r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z",
        "[timestamp]",
    );
    s
}

#[test]
fn hand_made_facts() {
    let r = report();
    let d = &r.comparisons[0];
    assert_eq!(d.tools.added, ["tool_search", "New"]);
    assert_eq!(d.tools.removed, ["Old"]);
    assert_eq!(d.tools.deferred, ["Cron", "Fetch"]);
    assert_eq!(d.tools.changed, ["Bash"]);
    assert_eq!(d.tools.b_mechanisms[0].kind, "server");
    assert_eq!(d.headers.betas_added, ["beta-three"]);
    assert_eq!(d.headers.betas_removed, ["beta-one"]);
    let changed: Vec<&str> = d
        .params
        .iter()
        .filter(|p| p.changed)
        .map(|p| p.key.as_str())
        .collect();
    assert_eq!(changed, ["max_tokens", "diagnostics"]);
    // The date and session uuid were normalized away; the new reminder is what differs.
    assert_eq!(d.injected.len(), 1);
    assert_eq!(d.injected[0].status, "added");
    // tools: 485 -> 520 bytes (hand-counted from A and B above) = +7.2%.
    assert_eq!(
        (
            d.size("tool_bytes").unwrap().a,
            d.size("tool_bytes").unwrap().b
        ),
        (485, 520)
    );
    assert!(r.gates[0].tripped && r.gates[1].tripped && !r.gates[2].tripped);
}

#[test]
fn table_format() {
    settings()
        .bind(|| insta::assert_snapshot!(report::diff::render(&report(), Format::Table, false)));
}

#[test]
fn markdown_format() {
    settings()
        .bind(|| insta::assert_snapshot!(report::diff::render(&report(), Format::Markdown, false)));
}

#[test]
fn json_format() {
    settings()
        .bind(|| insta::assert_snapshot!(report::diff::render(&report(), Format::Json, false)));
}

#[test]
fn colour_only_when_asked() {
    let r = report();
    assert!(!report::diff::render(&r, Format::Table, false).contains('\x1b'));
    assert!(report::diff::render(&r, Format::Table, true).contains("\x1b[31m"));
    assert!(!report::diff::render(&r, Format::Markdown, true).contains('\x1b'));
}
