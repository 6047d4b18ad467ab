//! One exchange of a rollout: a `POST /v1/responses` whose body is rebuilt from what the
//! rollout records (`model`, the `input` items in order, `prompt_cache_key`), and a JSON
//! response object rebuilt from the response's output items and its usage record; what the
//! rollout does not hold goes into `source.missing`, how the rest was rebuilt into
//! `notes.import`.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};

use super::raw::quoted;
use super::{Meta, CHECKED_VERSIONS};
use crate::import::{import_source, imported, response, Format};
use crate::trace::Exchange;

/// Missing from every exchange of a rollout.
const MISSING: &[&str] = &[
    "request parameters other than model, input and prompt_cache_key (stream, tool_choice, parallel_tool_calls, reasoning, store, include, text, client_metadata are not in the rollout)",
    "request headers other than content-type, originator, session-id and thread-id (user-agent, x-codex-turn-metadata, x-client-request-id, … are not in the rollout)",
    "request target (the provider's base URL is not recorded; /v1/responses is assumed)",
    "request timing (started_at is the time of the rollout line before the response's first item)",
    "response bytes and headers (rebuilt as a JSON response object from the rollout's copy of the output items and its usage record)",
    "response chunk timing",
    "connection addresses",
];

/// How the base instructions appear in a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Base {
    /// As an item of the history (code mode records them as a developer message).
    InHistory,
    /// Put first by rule, from `session_meta.base_instructions` (classic mode).
    Prepended,
    /// The rollout has none.
    Unknown,
}

/// The request side of an exchange.
pub(super) struct Request<'a> {
    /// `turn_context.model` in force.
    pub model: Option<&'a str>,
    /// The input items, in order, as Codex sends them.
    pub input: Vec<Cow<'a, str>>,
    /// How the base instructions appear.
    pub base: Base,
    /// True when an `additional_tools` item carries the tool list.
    pub tools_in_input: bool,
    /// When it was (about to be) sent.
    pub started: Option<DateTime<Utc>>,
}

/// What marked the end of a response in the rollout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum End {
    /// A `token_usage_record` line (response id and usage).
    UsageRecord,
    /// An `event_msg` `token_count` (usage, no response id): rollouts without usage records.
    TokenCount,
    /// Nothing: the items were followed by another request's or by the end of the file.
    Unmarked,
}

/// The response side of an exchange.
pub(super) struct Answer {
    /// Output items as sent (Codex's metadata left out).
    pub outputs: Vec<String>,
    /// The usage as the rollout records it (`input_tokens`, `cached_input_tokens`, …).
    pub usage: Option<Value>,
    /// `response_id`.
    pub response_id: Option<String>,
    /// `turn_id` and `thread_id` of the usage record.
    pub turn_id: Option<String>,
    /// `thread_id` of the usage record.
    pub thread_id: Option<String>,
    /// When the response was recorded complete.
    pub ended: Option<DateTime<Utc>>,
    /// What ended it, and on which line.
    pub end: End,
    /// The line of that record (0 when unmarked).
    pub line: u64,
}

/// The exchange of one response; `caveats` are this exchange's own missing parts (lines
/// that could not be read before it, a compaction the rollout does not explain).
pub(super) fn exchange(meta: &Meta, req: Request, ans: Answer, caveats: &[String]) -> Exchange {
    let mut missing: Vec<String> = MISSING.iter().map(|m| m.to_string()).collect();
    missing.extend(request_missing(meta, &req));
    let body = request_body(req.model, &req.input, meta.session.as_deref());
    let started = req.started.or(ans.ended).unwrap_or(DateTime::UNIX_EPOCH);
    if req.started.is_none() {
        missing.push("request time (no readable timestamp before the response)".into());
    }
    let mut x = imported(
        import_source(Format::CodexRollout, &meta.file, &[]),
        started,
        "POST",
        "/v1/responses".into(),
        headers(meta, ans.thread_id.as_deref()),
        body,
    );
    x.ended_at = ans.ended;
    let mut note = notes(meta, &req, &ans);
    let (resp, resp_missing) = response_body(&ans, req.model);
    missing.extend(resp_missing);
    missing.extend(caveats.iter().cloned());
    x.response = Some(response(
        200,
        vec![("content-type".to_string(), "application/json".to_string())],
        resp,
    ));
    x.source.missing = missing;
    note.insert("rebuilt".into(), json!(rebuilt(&req)));
    x.notes.insert("import".into(), Value::Object(note));
    x
}

/// What the request lacks besides [`MISSING`].
fn request_missing(meta: &Meta, req: &Request) -> Vec<String> {
    let mut m = Vec::new();
    if !req.tools_in_input {
        m.push("tool definitions (the `tools` parameter is not in the rollout; only code mode sends its tools as an input item)".into());
    }
    match req.base {
        Base::Prepended => m.push("the base-instructions message as sent (input[0] is session_meta's base_instructions, which Codex shortens on the wire in classic mode; the item's id and metadata are not recorded)".into()),
        Base::Unknown => m.push("base instructions (session_meta holds none)".into()),
        Base::InHistory => {}
    }
    if req.model.is_none() {
        m.push("model (no turn_context names one before this response)".into());
    }
    if meta.session.is_none() {
        m.push("session id (no session_meta line; prompt_cache_key and the session headers are left out)".into());
    }
    if meta.provider.is_none() {
        m.push("model provider (the input items are kept as the rollout holds them, Codex's metadata included)".into());
    }
    m
}

/// `{"model":…,"input":[…],"prompt_cache_key":…}`: the input items' own bytes, the members
/// in the order Codex sends them.
fn request_body(model: Option<&str>, input: &[Cow<str>], cache_key: Option<&str>) -> Vec<u8> {
    let size: usize = input.iter().map(|i| i.len() + 1).sum();
    let mut b = String::with_capacity(size + 128);
    b.push('{');
    if let Some(m) = model {
        b.push_str("\"model\":");
        b.push_str(&quoted(m));
        b.push(',');
    }
    b.push_str("\"input\":[");
    for (i, item) in input.iter().enumerate() {
        if i > 0 {
            b.push(',');
        }
        b.push_str(item);
    }
    b.push(']');
    if let Some(k) = cache_key {
        b.push_str(",\"prompt_cache_key\":");
        b.push_str(&quoted(k));
    }
    b.push('}');
    b.into_bytes()
}

/// The headers Codex sends whose values the rollout holds (measured: `session-id` and
/// `thread-id` carry the session and thread ids, `originator` session_meta's originator).
fn headers(meta: &Meta, thread: Option<&str>) -> Vec<(String, String)> {
    let mut h = vec![("content-type".to_string(), "application/json".to_string())];
    if let Some(o) = &meta.originator {
        h.push(("originator".into(), o.clone()));
    }
    if let Some(s) = &meta.session {
        h.push(("session-id".into(), s.clone()));
    }
    if let Some(t) = thread.or(meta.session.as_deref()) {
        h.push(("thread-id".into(), t.to_string()));
    }
    h
}

/// The response object and what it lacks.
fn response_body(ans: &Answer, model: Option<&str>) -> (Vec<u8>, Vec<String>) {
    let mut missing = Vec::new();
    let mut b = String::from("{");
    match &ans.response_id {
        Some(id) => b.push_str(&format!("\"id\":{},", quoted(id))),
        None => missing.push("response id (the rollout names none for this response)".into()),
    }
    b.push_str("\"object\":\"response\",");
    if ans.end == End::Unmarked {
        missing.push("response status and usage (no usage record follows this response's items: the session may have ended mid-response)".into());
    } else {
        b.push_str("\"status\":\"completed\",");
    }
    if let Some(m) = model {
        b.push_str(&format!("\"model\":{},", quoted(m)));
    }
    b.push_str("\"output\":[");
    b.push_str(&ans.outputs.join(","));
    b.push(']');
    if ans.end != End::Unmarked {
        match ans.usage.as_ref().and_then(|u| usage(u, &mut missing)) {
            Some(u) => b.push_str(&format!(",\"usage\":{u}")),
            None => missing.push("usage (the usage record holds no usage object)".into()),
        }
    }
    b.push('}');
    (b.into_bytes(), missing)
}

/// The rollout's usage (`input_tokens`, `cached_input_tokens`, `cache_write_input_tokens`,
/// `output_tokens`, `reasoning_output_tokens`, `total_tokens`) in the API's names. The
/// figures pass as they are (a wrong type is the usage reader's to name). A cache-write
/// figure of 0 is left out: the rollout writes 0 when the API reported none.
fn usage(u: &Value, missing: &mut Vec<String>) -> Option<Value> {
    let u = u.as_object()?;
    let mut out = Map::new();
    let put = |to: &mut Map<String, Value>, name: &str, from: &str| {
        if let Some(v) = u.get(from) {
            to.insert(name.into(), v.clone());
        }
    };
    let mut input_details = Map::new();
    let mut output_details = Map::new();
    put(&mut out, "input_tokens", "input_tokens");
    put(&mut input_details, "cached_tokens", "cached_input_tokens");
    match u.get("cache_write_input_tokens") {
        Some(v) if v.as_u64() != Some(0) => {
            input_details.insert("cache_write_tokens".into(), v.clone());
        }
        _ => missing.push("whether the API reported cache-write tokens (the rollout writes 0 when it reported none)".into()),
    }
    if !input_details.is_empty() {
        out.insert("input_tokens_details".into(), Value::Object(input_details));
    }
    put(&mut out, "output_tokens", "output_tokens");
    put(
        &mut output_details,
        "reasoning_tokens",
        "reasoning_output_tokens",
    );
    if !output_details.is_empty() {
        out.insert(
            "output_tokens_details".into(),
            Value::Object(output_details),
        );
    }
    put(&mut out, "total_tokens", "total_tokens");
    Some(Value::Object(out))
}

/// Which parts were rebuilt by rule rather than copied from the rollout.
fn rebuilt(req: &Request) -> Vec<&'static str> {
    let mut r = vec![
        "request body: model (turn_context), input (the rollout's items in order, in their wire form for the provider), prompt_cache_key (the session id, as Codex sends it)",
        "request headers content-type, originator, session-id, thread-id (values from session_meta and the usage record)",
        "response object: the output items (Codex's copy less its metadata), status, usage renamed to the API's names",
    ];
    if req.base == Base::Prepended {
        r.push("input[0]: session_meta's base_instructions as a developer message");
    }
    r
}

/// `notes.import` of an exchange.
fn notes(meta: &Meta, req: &Request, ans: &Answer) -> Map<String, Value> {
    let mut n = Map::new();
    let mut put = |k: &str, v: Option<&str>| {
        if let Some(v) = v {
            n.insert(k.into(), json!(v));
        }
    };
    put("session", meta.session.as_deref());
    put("response_id", ans.response_id.as_deref());
    put("turn_id", ans.turn_id.as_deref());
    put("model_provider", meta.provider.as_deref());
    put("originator", meta.originator.as_deref());
    put("cli_version", meta.cli_version.as_deref());
    n.insert(
        "layout".into(),
        json!(match ans.end {
            End::TokenCount => "rollout (token_count events, no usage records)",
            _ => "rollout",
        }),
    );
    if ans.line > 0 {
        n.insert("line".into(), json!(ans.line));
    }
    n.insert("input_items".into(), json!(req.input.len()));
    let checked = meta
        .cli_version
        .as_deref()
        .is_some_and(|v| CHECKED_VERSIONS.contains(&v));
    n.insert("checked".into(), json!(format!(
        "the rebuilding rules were checked against the request bodies the API received from Codex {} (custom and built-in providers, HTTP and WebSocket): input items byte-identical{}",
        CHECKED_VERSIONS.join(" and "),
        if checked { "" } else { "; this rollout's version was not among them" }
    )));
    n
}
