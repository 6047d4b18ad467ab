//! Every JSON type at every field of every import (issue 32, kind 2): a value of an
//! unexpected type (`message` a string, `headers` a number, `entries` an object, ...)
//! never panics a reader. Each sample below is hand-made in the importer's documented
//! layout; every field of every line is replaced in turn by each JSON type, and the file
//! is read, shown and analysed as `agentwire analyze DIR` does.

use std::path::Path;

use agentwire::analyze::{analyze_exchanges, AnalyzeConfig};
use agentwire::input::open_trace;
use agentwire::trace::Exchange;
use serde_json::{json, Value};

/// One value of each JSON type, with the edge values that once broke readers.
fn kinds() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(1e300),
        json!(u64::MAX),
        json!(""),
        json!("x"),
        json!([]),
        json!({}),
    ]
}

/// One step of a path into a JSON value.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    At(usize),
}

/// Every path to a value inside `v` (the root excluded).
fn paths(v: &Value, here: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    let children: Vec<(Step, &Value)> = match v {
        Value::Object(o) => o.iter().map(|(k, x)| (Step::Key(k.clone()), x)).collect(),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, x)| (Step::At(i), x))
            .collect(),
        _ => return,
    };
    for (step, child) in children {
        here.push(step);
        out.push(here.clone());
        paths(child, here, out);
        here.pop();
    }
}

/// The value at `path` inside `v`.
fn at<'a>(v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(v, |v, s| match s {
        Step::Key(k) => &mut v[k.as_str()],
        Step::At(i) => &mut v[*i],
    })
}

/// Read `bytes` as the file `name`: open, list the exchanges' problems and show; the
/// exchanges read, for [`analyse`]. A panic anywhere is the failure (named by the
/// mutation); errors are fine.
fn read_everything(dir: &Path, name: &str, bytes: &[u8], what: &str) -> Vec<Exchange> {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    let got = std::panic::catch_unwind(|| match open_trace(&p) {
        Ok(t) => {
            let _ = agentwire::api::view::problems(&t);
            let _ = agentwire::report::show::rows(&t);
            t.exchanges
        }
        Err(_) => Vec::new(),
    });
    got.unwrap_or_else(|_| panic!("{name}: a reader panicked on {what}"))
}

/// Analyse the exchanges of every mutation of one line at once (an analysis costs
/// ~20 ms in a debug build; one per line keeps the test to seconds).
fn analyse(xs: &[Exchange], name: &str, what: &str) {
    let got = std::panic::catch_unwind(|| analyze_exchanges(xs, AnalyzeConfig::default()));
    assert!(got.is_ok(), "{name}: analyze panicked on one of {what}");
}

/// Every mutation of every line of a JSON Lines sample (or of a whole document when
/// `lines` is one value written as a document); returns how many files were read.
fn every_type_at_every_field(name: &str, lines: &[Value], jsonl: bool) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    for (i, line) in lines.iter().enumerate() {
        let mut ps = Vec::new();
        paths(line, &mut Vec::new(), &mut ps);
        let mut xs = Vec::new();
        for path in ps {
            for kind in kinds() {
                let mut doc = lines.to_vec();
                *at(&mut doc[i], &path) = kind.clone();
                let bytes = if jsonl {
                    doc.iter().map(|l| format!("{l}\n")).collect::<String>()
                } else {
                    doc[0].to_string()
                };
                let what = format!("line {i}, {path:?} = {kind}");
                xs.extend(read_everything(dir.path(), name, bytes.as_bytes(), &what));
                n += 1;
            }
        }
        analyse(&xs, name, &format!("the mutations of line {i}"));
    }
    n
}

fn transcript() -> Vec<Value> {
    let (s, u, a) = ("s1", "u1", "a1");
    vec![
        json!({"type": "user", "sessionId": s, "uuid": u, "parentUuid": null, "version": "2.1.0",
            "timestamp": "2026-01-01T00:00:00Z", "cwd": "/p",
            "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]}}),
        json!({"type": "assistant", "sessionId": s, "uuid": a, "parentUuid": u, "version": "2.1.0",
            "timestamp": "2026-01-01T00:00:01Z", "requestId": "req_1",
            "message": {"id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "hello"}], "stop_reason": "end_turn",
                "usage": {"input_tokens": 3, "output_tokens": 2, "cache_read_input_tokens": 0}}}),
    ]
}

fn transcript_records() -> Vec<Value> {
    let shape = json!({"system": [{"type": "text", "text": "S"}], "tools": []});
    let sh = agentwire::import::canonical_sha256(&shape);
    let user = json!({"role": "user", "content": [{"type": "text", "text": "hi"}]});
    let mut t = transcript();
    t.push(json!({"type": "api-request-shape", "shapeHash": sh, "shape": shape}));
    t.push(
        json!({"type": "api-request", "id": "r1", "shapeHash": sh, "keep": 0,
        "timestamp": "2026-01-01T00:00:02Z", "sessionId": "s1",
        "params": {"model": "m", "betas": ["b1"], "max_tokens": 5},
        "tail": [agentwire::import::canonical_sha256(&user)],
        "cacheControl": [{"path": ["system", 0], "value": {"type": "ephemeral"}}]}),
    );
    t
}

fn tap_record() -> Value {
    json!({"timestamp": "2026-01-01T00:00:00+00:00", "request_id": "r", "turn": 1, "duration_ms": 5,
        "request": {"method": "POST", "path": "/v1/messages", "headers": {"content-type": "application/json"},
            "body": {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": true}},
        "response": {"status": 200, "headers": {"content-type": "text/event-stream"},
            "body": {"type": "message", "content": [{"type": "text", "text": "x"}],
                "usage": {"input_tokens": 1, "output_tokens": 1}}}})
}

fn tap_bundle() -> Value {
    json!({"__claude_tap_compact_trace__": {"version": 1},
        "records": [{"__claude_tap_compact_record__": {"version": 1}, "record": {
            "timestamp": "2026-01-01T00:00:00Z", "request": {"method": "POST", "path": "/v1/messages",
            "body": {"model": "m", "messages": [], "tools": {"__claude_tap_blob_ref__": {"hash": "h"}}}}}}],
        "blobs": {"h": {"kind": "json", "payload": [{"name": "Bash"}]}}})
}

fn tap_export() -> Value {
    json!([{"timestamp": "2026-01-01T00:00:00Z", "turn": 1, "duration_ms": 3, "model": "m",
        "messages": [{"role": "user", "content": "hi"}], "system": "S", "tools": [],
        "response": {"content": [{"type": "text", "text": "x"}], "usage": {"input_tokens": 1}}}])
}

fn claude_trace() -> Value {
    json!({"request": {"timestamp": 1767225600.0, "method": "POST", "url": "https://api.anthropic.com/v1/messages",
            "headers": {"content-type": "application/json"}, "body": {"model": "m", "messages": []}},
        "response": {"timestamp": 1767225601.5, "status_code": 200, "headers": {"content-type": "text/event-stream"},
            "body_raw": "event: ping\ndata: {}\n\n"},
        "logged_at": "2026-01-01T00:00:02Z"})
}

fn har() -> Value {
    json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": [{
        "startedDateTime": "2026-01-01T00:00:00Z", "time": 12.5,
        "request": {"method": "POST", "url": "http://h/v1/messages?beta=true", "httpVersion": "HTTP/1.1",
            "headers": [{"name": "content-type", "value": "application/json"}],
            "postData": {"mimeType": "application/json", "text": "{\"model\":\"m\",\"messages\":[]}"}},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
            "headers": [{"name": "content-type", "value": "application/json"}],
            "content": {"size": 2, "mimeType": "application/json", "text": "{}"}},
        "timings": {"send": 1, "wait": 10, "receive": 1.5}}]}})
}

/// A Codex rollout: the shipped sample's first lines (session meta, turn context, one
/// request and its answer), as the repository holds it.
fn rollout() -> Vec<Value> {
    let p = crate::common::repo().join("captures/imports/codex/sessions/2026/12/01/rollout-2026-12-01T10-00-00-01a30000-0000-7000-8000-00000000c1a5.jsonl");
    let text = std::fs::read_to_string(p).unwrap();
    text.lines()
        .take(12)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn no_json_type_at_any_field_panics_a_transcript_reader() {
    // Before: `message` as a string panicked in `Reply::message` ("cannot access key
    // \"content\" in JSON string") and aborted `analyze DIR` for every file.
    let n = every_type_at_every_field("s1.jsonl", &transcript(), true)
        + every_type_at_every_field("s2.jsonl", &transcript_records(), true);
    assert!(n > 500, "{n} files read");
}

#[test]
fn no_json_type_at_any_field_panics_the_claude_tap_and_claude_trace_readers() {
    let n = every_type_at_every_field("tap.jsonl", &[tap_record(), tap_record()], true)
        + every_type_at_every_field("bundle.json", &[tap_bundle()], false)
        + every_type_at_every_field("export.json", &[tap_export()], false)
        + every_type_at_every_field("log.jsonl", &[claude_trace()], true);
    assert!(n > 500, "{n} files read");
}

#[test]
fn no_json_type_at_any_field_panics_the_har_and_codex_readers() {
    let n = every_type_at_every_field("a.har", &[har()], false)
        + every_type_at_every_field("rollout.jsonl", &rollout(), true);
    assert!(n > 500, "{n} files read");
}

/// A transcript mixing main-thread and sidechain entries was flagged once per file from
/// the first `agentId`: every exchange became the subagent's. Each exchange now takes the
/// flag of its own entry (`isSidechain`, `agentId`).
#[test]
fn subagent_flag_set_for_every_entry_of_a_file_with_one_sidechain() {
    let mut lines = transcript();
    let (s, u, a) = ("s1", "u2", "a2");
    lines.push(
        json!({"type": "user", "sessionId": s, "uuid": u, "parentUuid": null,
        "isSidechain": true, "agentId": "agent-7", "version": "2.1.0",
        "timestamp": "2026-01-01T00:00:02Z", "cwd": "/p",
        "message": {"role": "user", "content": [{"type": "text", "text": "look"}]}}),
    );
    lines.push(
        json!({"type": "assistant", "sessionId": s, "uuid": a, "parentUuid": u,
        "isSidechain": true, "agentId": "agent-7", "version": "2.1.0",
        "timestamp": "2026-01-01T00:00:03Z", "requestId": "req_2",
        "message": {"id": "msg_2", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "found"}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 3, "output_tokens": 2, "cache_read_input_tokens": 0}}}),
    );
    // the main thread's entries say `isSidechain: false` explicitly, as Claude Code writes
    lines[0]["isSidechain"] = json!(false);
    lines[1]["isSidechain"] = json!(false);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s1.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    let mut t = open_trace(&path).unwrap();
    t.exchanges.sort_by_key(|x| x.started_at);
    let flags: Vec<(Value, Value)> = t
        .exchanges
        .iter()
        .map(|x| {
            let n = &x.notes["import"];
            (n["sidechain"].clone(), n["agent"].clone())
        })
        .collect();
    assert_eq!(
        flags,
        [(Value::Null, Value::Null), (json!(true), json!("agent-7"))]
    );
}
