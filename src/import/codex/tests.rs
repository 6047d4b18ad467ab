//! Tests of the rollout importer on hand-written rollouts shaped like Codex 0.171.0's
//! (`captures/imports/codex/`): a classic session (exec_command, then write_stdin polls)
//! and a code-mode one (exec, then wait polls).

use std::path::Path;

use serde_json::Value;

use super::raw;
use super::reader::Rollout;
use crate::import::ImportError;
use crate::trace::{Context, Exchange, ReadProblem, Record};

const CLASSIC: &str = include_str!(
    "../../../captures/imports/codex/sessions/2026/12/01/rollout-2026-12-01T10-00-00-01a30000-0000-7000-8000-00000000c1a5.jsonl"
);
const CODE: &str = include_str!(
    "../../../captures/imports/codex/sessions/2026/12/01/rollout-2026-12-01T10-01-00-01a30000-0000-7000-8000-0000000c0de5.jsonl"
);

/// What one rollout reads as.
#[derive(Default)]
struct Read {
    header: Option<Context>,
    exchanges: Vec<Exchange>,
    problems: Vec<ReadProblem>,
}

fn read_bounded(text: &str, max: usize) -> Result<Read, ImportError> {
    let mut out = Read::default();
    for rec in Rollout::open_bounded(text.as_bytes(), Path::new("r.jsonl"), max)? {
        match rec? {
            Record::Header { context, .. } => out.header = Some(context),
            Record::Exchange(x) => out.exchanges.push(*x),
            Record::Bad(p) => out.problems.push(p),
            _ => {}
        }
    }
    Ok(out)
}

fn read(text: &str) -> Read {
    read_bounded(text, super::MAX_HISTORY).unwrap()
}

fn body(x: &Exchange) -> Value {
    serde_json::from_slice(&x.request.body.bytes).unwrap()
}

fn answer(x: &Exchange) -> Value {
    serde_json::from_slice(&x.response.as_ref().unwrap().body.bytes).unwrap()
}

fn input_counts(r: &Read) -> Vec<usize> {
    r.exchanges
        .iter()
        .map(|x| body(x)["input"].as_array().unwrap().len())
        .collect()
}

fn missing(x: &Exchange, what: &str) -> bool {
    x.source.missing.iter().any(|m| m.contains(what))
}

/// The payload of the `n`th line (from 1) of `text`, as the rollout holds it.
fn payload(text: &str, n: usize) -> String {
    let line = text.lines().nth(n - 1).unwrap();
    raw::member(line, "payload").unwrap().to_string()
}

#[test]
fn a_classic_session_is_one_exchange_per_response_with_the_history_up_to_it() {
    let r = read(CLASSIC);
    let h = r.header.as_ref().unwrap();
    assert_eq!(h.cli.as_deref(), Some("codex"));
    assert_eq!(h.cli_version.as_deref(), Some("0.171.0"));
    assert_eq!(h.model_provider.as_deref(), Some("local"));
    assert_eq!(h.route, None, "the route is not recorded");
    assert!(r.problems.is_empty());
    // exec_command, five write_stdin polls, the closing message: 7 responses; request 1
    // holds the base instructions, a developer and two user messages, each later one the
    // reasoning + call + output of the response before (2 items after the first).
    assert_eq!(input_counts(&r), [4, 7, 9, 11, 13, 15, 17]);
    let first = &r.exchanges[0];
    let b = body(first);
    assert_eq!(b["model"], "gpt-5.5");
    assert_eq!(
        b["prompt_cache_key"],
        "01a30000-0000-7000-8000-00000000c1a5"
    );
    assert!(b["input"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("You are a careful test agent."));
    // the custom provider's wire form: Codex's metadata left out, the rest as recorded
    let mut dev: Value = serde_json::from_str(&payload(CLASSIC, 3)).unwrap();
    dev.as_object_mut()
        .unwrap()
        .remove("internal_chat_message_metadata_passthrough");
    assert_eq!(b["input"][1], dev);
    assert!(missing(first, "tool definitions"));
    assert!(missing(first, "base-instructions message as sent"));
    assert!(missing(first, "cache-write tokens"));
    assert_eq!(first.source.format.as_deref(), Some("codex-rollout"));
    assert_eq!(first.notes["import"]["response_id"], "resp_c100");
    assert_eq!(
        first.started_at.to_rfc3339(),
        "2026-12-01T10:00:00.122+00:00"
    );
    let header =
        |n: &str| crate::trace::header_value(&first.request.headers, n).map(str::to_string);
    assert_eq!(
        header("session-id").as_deref(),
        Some("01a30000-0000-7000-8000-00000000c1a5")
    );
    assert_eq!(header("originator").as_deref(), Some("codex_exec"));
}

#[test]
fn a_classic_response_is_the_api_object_with_the_recorded_usage() {
    let r = read(CLASSIC);
    let a = answer(&r.exchanges[1]);
    assert_eq!(a["id"], "resp_c101");
    assert_eq!(a["status"], "completed");
    assert_eq!(a["output"][0]["name"], "write_stdin");
    assert!(a["output"][0]
        .get("internal_chat_message_metadata_passthrough")
        .is_none());
    assert_eq!(a["usage"]["input_tokens"], 5160);
    assert_eq!(a["usage"]["input_tokens_details"]["cached_tokens"], 4992);
    assert!(a["usage"]["input_tokens_details"]
        .get("cache_write_tokens")
        .is_none());
    let m = crate::api::responses::stream::from_json(&a);
    assert_eq!(
        (m.usage.input_tokens, m.usage.cache_read_input_tokens),
        (Some(168), Some(4992))
    );
}

#[test]
fn a_code_mode_session_carries_its_tools_and_base_instructions_as_recorded() {
    let r = read(CODE);
    assert_eq!(input_counts(&r), [5, 8, 10, 12, 14, 16, 18]);
    let x = &r.exchanges[0];
    let raw_body = std::str::from_utf8(&x.request.body.bytes).unwrap();
    // the built-in provider in code mode: every item byte for byte as the rollout holds it
    let items: Vec<String> = (3..=6).map(|n| payload(CODE, n)).collect();
    assert!(raw_body.contains(&items.join(",")), "{raw_body}");
    assert!(!missing(x, "tool definitions"));
    assert!(!missing(x, "base-instructions"));
    let req = crate::api::responses::parse(&x.request.body.bytes).unwrap();
    let names: Vec<&str> = req.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["exec", "wait"]);
    let last = r.exchanges.last().unwrap();
    assert_eq!(answer(last)["output"][0]["type"], "message");
    assert_eq!(body(last)["model"], "gpt-6.2-sol");
}

#[test]
fn bad_lines_are_named_and_the_requests_after_them_say_what_they_may_lack() {
    let mut lines: Vec<&str> = CLASSIC.lines().collect();
    lines.insert(12, "{not json");
    lines.insert(
        3,
        r#"{"timestamp":"2026-12-01T10:00:00Z","type":"future_kind","payload":{}}"#,
    );
    let mut text = lines.join("\n");
    text.push_str("\n{\"timestamp\":\"2026-12-01T10:01:00Z\",\"type\":\"event");
    let r = read(&text);
    assert_eq!(r.exchanges.len(), 7);
    let msgs: Vec<&str> = r.problems.iter().map(|p| p.message.as_str()).collect();
    assert!(msgs[0].starts_with("not a rollout line"), "{msgs:?}");
    assert!(
        r.problems[1].truncated && msgs[1].contains("cut short"),
        "{msgs:?}"
    );
    assert!(
        msgs[2].contains("1 line(s) of type \"future_kind\""),
        "{msgs:?}"
    );
    assert!(!missing(&r.exchanges[0], "could not be read"));
    assert!(missing(&r.exchanges[1], "what line(s) 14 held"));
}

#[test]
fn rollouts_without_usage_records_end_responses_at_token_counts() {
    let text: String = CLASSIC
        .lines()
        .filter(|l| !l.contains("\"token_usage_record\""))
        .map(|l| format!("{l}\n"))
        .collect();
    let r = read(&text);
    assert_eq!(input_counts(&r), [4, 7, 9, 11, 13, 15, 17]);
    let x = &r.exchanges[1];
    assert!(missing(x, "response id"));
    assert!(x.notes["import"]["layout"]
        .as_str()
        .unwrap()
        .contains("token_count"));
    assert_eq!(answer(x)["usage"]["output_tokens"], 20);
}

#[test]
fn a_response_cut_off_by_the_end_of_the_file_has_no_usage_and_says_so() {
    let lines: Vec<&str> = CLASSIC.lines().collect();
    let last_record = lines
        .iter()
        .rposition(|l| l.contains("\"token_usage_record\""))
        .unwrap();
    let r = read(&lines[..last_record].join("\n"));
    let x = r.exchanges.last().unwrap();
    assert_eq!(r.exchanges.len(), 7);
    assert!(missing(x, "no usage record follows"));
    assert!(answer(x).get("usage").is_none() && answer(x).get("status").is_none());
}

#[test]
fn a_compaction_replaces_the_history_with_its_replacement() {
    let mut lines: Vec<String> = CLASSIC.lines().map(str::to_string).collect();
    let after = lines
        .iter()
        .position(|l| l.contains("\"resp_c102\""))
        .unwrap();
    let replacement = r#"{"timestamp":"2026-12-01T10:00:09Z","type":"compacted","payload":{"message":"summary","replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"summary of the work so far"}]}]}}"#;
    lines.insert(after + 1, replacement.to_string());
    let r = read(&lines.join("\n"));
    // request 4 (after the compaction): base, the replacement, the output of request 3
    assert_eq!(input_counts(&r)[..4], [4, 7, 9, 3]);
    assert!(missing(&r.exchanges[3], "replacement_history"));
    assert_eq!(
        body(&r.exchanges[3])["input"][1]["content"][0]["text"],
        "summary of the work so far"
    );
}

#[test]
fn the_history_bound_stops_reading_and_says_where() {
    let r = read_bounded(CLASSIC, 3000).unwrap();
    assert!(!r.exchanges.is_empty() && r.exchanges.len() < 7);
    let p = r.problems.last().unwrap();
    assert!(p.message.contains("passes 3000 bytes"), "{}", p.message);
}

#[test]
fn a_rollout_without_a_response_is_empty() {
    let first = CLASSIC.lines().next().unwrap();
    let e = read_bounded(first, 1 << 20).err().unwrap();
    assert!(e.to_string().contains("no model response"), "{e}");
}

/// A place in a JSON value.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

/// Every place in `v` (the root included); arrays by their first two elements.
fn places(v: &Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    out.push(at.clone());
    match v {
        Value::Object(o) => {
            for (k, child) in o {
                at.push(Step::Key(k.clone()));
                places(child, at, out);
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate().take(2) {
                at.push(Step::Index(i));
                places(child, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn place_mut<'a>(v: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(v, |v, s| match s {
        Step::Key(k) => &mut v[k.as_str()],
        Step::Index(i) => &mut v[*i],
    })
}

/// Issue 32 item 2: no value of an unexpected JSON type panics the reader: every field of
/// every line of both sample rollouts replaced by each JSON type in turn.
#[test]
fn every_json_type_at_every_field_never_panics() {
    let samples = [
        Value::Null,
        Value::Bool(true),
        serde_json::json!(-1.5),
        serde_json::json!(1e300),
        serde_json::json!("x"),
        serde_json::json!([]),
        serde_json::json!({"type": "message"}),
    ];
    let mut runs = 0;
    for text in [CLASSIC, CODE] {
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let v: Value = serde_json::from_str(line).unwrap();
            let mut all = Vec::new();
            places(&v, &mut Vec::new(), &mut all);
            for path in &all {
                for s in &samples {
                    let mut w = v.clone();
                    *place_mut(&mut w, path) = s.clone();
                    let mut changed = lines.clone();
                    let new_line = w.to_string();
                    changed[i] = &new_line;
                    let t = changed.join("\n");
                    let outcome = std::panic::catch_unwind(|| {
                        read_bounded(&t, 1 << 20).map(|r| r.exchanges.len())
                    });
                    assert!(
                        outcome.is_ok(),
                        "line {} at {path:?} = {s}: panicked",
                        i + 1
                    );
                    runs += 1;
                }
            }
        }
    }
    assert!(runs > 5000, "{runs}");
}
