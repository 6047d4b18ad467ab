//! `POST …/models/MODEL:generateContent` and `:streamGenerateContent` (the Gemini API)
//! in stub and script mode; in replay mode the recording answers (the URL says whether a
//! stream is wanted); proxy mode forwards before this.
//!
//! The answer's shape follows the URL, as the API's does: `:streamGenerateContent?alt=sse`
//! gets SSE chunks, `:streamGenerateContent` without it a JSON array of chunks, and
//! `:generateContent` one JSON response ([`crate::api::gemini::events`]). A request that
//! asks for structured output (`generationConfig.responseJsonSchema` or `responseSchema`:
//! Gemini CLI's model-router call) is answered with a text part holding an instance of
//! that schema, whatever the scenario says, so scenario turns are the conversation's.
//! Usage is estimated (request bytes / 4, no cached tokens). Injected failures: `status`
//! answers with Google's error body, `sse_error` sends an error chunk after `after_events`
//! chunks, `drop` cuts the connection.

use std::collections::BTreeMap;

use axum::body::Body as AxumBody;
use axum::response::Response;
use bytes::Bytes;
use serde_json::{json, Value};

use super::config::Mode;
use super::draft::{Draft, ScriptedEvents, StreamFault};
use super::reply::respond_json;
use super::script::Failure;
use super::state::AppState;
use crate::api::dialect::gemini_method;
use crate::api::gemini::events;
use crate::api::{estimate_tokens, request_body, Dialect, MessagesRequest};
use crate::http::Headers;
use crate::trace::ExchangeError;

/// How the URL asks for the answer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Json,
    JsonArray,
    Sse,
}

fn shape_of(path: &str, query: Option<&str>) -> Shape {
    let streams = gemini_method(path).is_some_and(|(_, s)| s);
    let sse = query.is_some_and(|q| q.split('&').any(|kv| kv == "alt=sse"));
    match (streams, sse) {
        (true, true) => Shape::Sse,
        (true, false) => Shape::JsonArray,
        _ => Shape::Json,
    }
}

/// Google's error answer.
fn error(draft: Draft, status: u16, msg: &str, rid: &str, kind: &str) -> Response {
    let msg = crate::trace::redact::redact_text(msg);
    let err = ExchangeError {
        kind: kind.into(),
        message: msg.clone(),
    };
    respond_json(
        draft,
        status,
        &events::error_body(status, &msg),
        rid,
        Some(err),
    )
}

/// The parts a stub or script server answers `req` with, the scripted failure and delay.
fn decide(
    st: &AppState,
    notes: &mut BTreeMap<String, Value>,
    req: &MessagesRequest,
) -> (Vec<Value>, Option<Failure>, u64) {
    let config = req.param("generationConfig");
    let schema = config.and_then(|c| c.get("responseJsonSchema").or(c.get("responseSchema")));
    if let Some(schema) = schema {
        notes.insert("gemini".into(), json!({"structured_output": true}));
        let text = events::instance_of(schema).to_string();
        return (vec![json!({"text": text})], None, 0);
    }
    match &st.config.mode {
        Mode::Script(script) => {
            let d = {
                let mut s = st.script_state.lock().unwrap_or_else(|p| p.into_inner());
                script.decide(req, &mut s)
            };
            notes.insert(
                "script".into(),
                json!({"thread": d.thread, "turn": d.turn, "unresolved": d.unresolved}),
            );
            (events::parts_of(&d.content), d.fail, d.delay_ms)
        }
        _ => (vec![json!({"text": "Hello from agentwire."})], None, 0),
    }
}

/// Answer a Gemini request (`path` and `query` of its URL).
pub(crate) async fn answer(
    st: &AppState,
    mut draft: Draft,
    path: &str,
    query: Option<&str>,
    rid: &str,
) -> Response {
    let body = request_body(&draft.request).bytes;
    let req = match MessagesRequest::parse_as(Dialect::Gemini, &body) {
        Ok(r) => crate::api::gemini::with_path(r, path),
        Err(e) => return error(draft, 400, &e.to_string(), rid, "invalid_json"),
    };
    if let Mode::Replay(replay) = &st.config.mode {
        let stream = shape_of(path, query) == Shape::Sse;
        return super::playback::answer_as(replay, draft, &req, stream).await;
    }
    let (parts, fault, delay_ms) = decide(st, &mut draft.notes, &req);
    if delay_ms > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
    }
    if let Some(status) = fault.as_ref().and_then(|f| f.status) {
        let msg = (fault.as_ref().and_then(|f| f.message.clone()))
            .unwrap_or_else(|| format!("injected {status} ({})", events::status_name(status)));
        return error(draft, status, &msg, rid, "injected_status");
    }
    let out = serde_json::to_string(&parts).map_or(0, |s| s.len());
    let tail = json!({
        "usageMetadata": events::usage(estimate_tokens(draft.request.body.len()), 0, estimate_tokens(out).max(1)),
        "modelVersion": req.model.clone().unwrap_or_else(|| "gemini-agentwire".into()),
        "responseId": format!("agentwire_{:06}", draft.id),
    });
    draft.notes.insert(
        "synthesized".into(),
        json!({"by": "agentwire", "usage": "estimate (request bytes / 4; cached 0)"}),
    );
    let chunks = events::stream_chunks(&parts, &tail);
    match shape_of(path, query) {
        Shape::Sse => stream(draft, &chunks, fault, rid),
        _ if fault.as_ref().is_some_and(|f| f.drop) => dropped(draft),
        Shape::JsonArray => respond_json(draft, 200, &Value::Array(chunks), rid, None),
        Shape::Json => {
            let one = events::chunk(parts, Some("STOP"), &tail);
            respond_json(draft, 200, &one, rid, None)
        }
    }
}

/// Cut the connection before any answer, recorded as the scenario's drop.
fn dropped(draft: Draft) -> Response {
    draft.finish(
        None,
        Some(ExchangeError {
            kind: "injected_drop".into(),
            message: "scenario dropped the connection before the response".into(),
        }),
    );
    let body = AxumBody::from_stream(futures_util::stream::once(async {
        Err::<Bytes, _>(std::io::Error::other("injected drop"))
    }));
    Response::new(body)
}

/// Answer with `chunks` as SSE, recorded as they are sent.
fn stream(draft: Draft, chunks: &[Value], fault: Option<Failure>, rid: &str) -> Response {
    let events: Vec<Bytes> = chunks.iter().map(|c| Bytes::from(events::sse(c))).collect();
    let fault = fault.map(|f| {
        let after = f.after_events.unwrap_or(0);
        match f.sse_error {
            Some(_) => {
                let msg = f.message.unwrap_or_else(|| "injected stream error".into());
                StreamFault::Error {
                    after,
                    event: Bytes::from(events::sse(&events::error_body(500, &msg))),
                }
            }
            None => StreamFault::Drop { after },
        }
    });
    let headers: Headers = vec![
        ("content-type".into(), "text/event-stream".into()),
        ("x-request-id".into(), rid.to_string()),
    ]
    .into();
    super::reply::scripted_stream(draft, headers, ScriptedEvents::new(events, fault))
}
