//! `POST …/responses` (the OpenAI Responses API) in stub, script and replay mode, and the
//! decision both of its transports share ([`decide`]: what a request gets, from the
//! canonical request, so scenario threads, turns and captures work as for Messages).
//!
//! An answer is one JSON response object, or with `"stream": true` the SSE events that
//! build it ([`crate::api::responses::events`]); response ids are `resp_agentwire_` and
//! the exchange number. Injected failures: `status` answers that status with an OpenAI
//! error body (`{"error":{"message","type","code"}}`), `sse_error` sends an `error` event
//! and `response.failed` after `after_events` events, `drop` cuts the connection.

use std::collections::BTreeMap;

use axum::body::Body as AxumBody;
use axum::response::Response;
use bytes::Bytes;
use serde_json::{json, Value};

use super::config::Mode;
use super::draft::{Draft, ScriptedEvents, StreamFault};
use super::reply::{openai_error_response, respond_json};
use super::script::Failure;
use super::state::AppState;
use crate::api::responses::events::{self, Answer};
use crate::api::{estimate_tokens, request_body, Dialect, MessagesRequest};
use crate::http::Headers;
use crate::trace::ExchangeError;

/// What a Responses request gets from a stub or script server.
pub(crate) struct Decided {
    /// The answer (items, usage estimated).
    pub(crate) answer: Answer,
    /// The scripted failure to inject, if any.
    pub(crate) fault: Option<Failure>,
    /// Milliseconds to wait first.
    pub(crate) delay_ms: u64,
}

/// The answer of a stub or script server to `req` (the canonical request; for a
/// WebSocket message, of the whole conversation it continues), with response id `id`.
/// Usage is estimated as for Messages: input tokens from `billed_bytes` (bytes / 4),
/// output tokens from the content, cache figures 0; `notes` get `synthesized` and, in
/// script mode, the scenario's decision.
pub(crate) fn decide(
    st: &AppState,
    notes: &mut BTreeMap<String, Value>,
    req: &MessagesRequest,
    billed_bytes: usize,
    id: String,
) -> Decided {
    let model = req.model.clone().unwrap_or_else(|| "gpt-agentwire".into());
    let (content, fault, delay_ms) = match &st.config.mode {
        Mode::Script(script) => {
            let d = {
                let mut s = st.script_state.lock().unwrap_or_else(|p| p.into_inner());
                script.decide(req, &mut s)
            };
            notes.insert(
                "script".into(),
                json!({"thread": d.thread, "turn": d.turn, "unresolved": d.unresolved}),
            );
            (d.content, d.fail, d.delay_ms)
        }
        _ => (
            vec![json!({"type": "text", "text": "Hello from agentwire."})],
            None,
            0,
        ),
    };
    let out_bytes = serde_json::to_string(&content).map_or(0, |s| s.len());
    let mut answer = Answer::new(id, model, &content);
    let input = estimate_tokens(billed_bytes);
    answer.usage = Some(events::usage(
        input,
        0,
        estimate_tokens(out_bytes).max(1),
        0,
    ));
    notes.insert(
        "synthesized".into(),
        json!({"by": "agentwire", "usage": "estimate (request bytes / 4; cached 0)"}),
    );
    Decided {
        answer,
        fault,
        delay_ms,
    }
}

/// The canonical request of a Responses exchange, or why it is refused (message, kind).
fn parse(draft: &Draft) -> Result<MessagesRequest, (String, &'static str)> {
    let ct = (draft.request.headers.get("content-type")).unwrap_or_default();
    if !ct.to_ascii_lowercase().contains("json") {
        let msg = format!("content-type must be application/json, got {ct:?}");
        return Err((msg, "wrong_content_type"));
    }
    let body = request_body(&draft.request).bytes;
    MessagesRequest::parse_as(Dialect::Responses, &body)
        .map_err(|e| (e.to_string(), "invalid_json"))
}

/// Answer `POST …/responses`.
pub(crate) async fn answer(st: &AppState, mut draft: Draft, rid: &str) -> Response {
    let req = match parse(&draft) {
        Ok(r) => r,
        Err((msg, kind)) => return openai_error_response(draft, 400, &msg, rid, kind),
    };
    if let Mode::Replay(replay) = &st.config.mode {
        return super::playback::answer(replay, draft, &req).await;
    }
    let id = format!("resp_agentwire_{:06}", draft.id);
    let billed = draft.request.body.len();
    let d = decide(st, &mut draft.notes, &req, billed, id);
    if d.delay_ms > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(d.delay_ms)).await;
    }
    if let Some(status) = d.fault.as_ref().and_then(|f| f.status) {
        let et = events::error_type_for(status);
        let msg = (d.fault.as_ref().and_then(|f| f.message.clone()))
            .unwrap_or_else(|| format!("injected {status} ({et})"));
        return openai_error_response(draft, status, &msg, rid, "injected_status");
    }
    if req.stream() {
        return answer_stream(draft, &d.answer, d.fault, rid);
    }
    if !d.fault.as_ref().is_some_and(|f| f.drop) {
        return respond_json(draft, 200, &d.answer.response("completed"), rid, None);
    }
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

/// The stream fault of a scripted failure for `answer`: the `error` and
/// `response.failed` events after `after_events` events, or a drop.
fn stream_fault(answer: &Answer, f: Failure) -> StreamFault {
    let after = f.after_events.unwrap_or(0);
    match f.sse_error {
        Some(code) => {
            let msg = f.message.unwrap_or_else(|| "injected stream error".into());
            let text: String = events::failure_events(answer, after, &code, &msg)
                .iter()
                .map(events::sse)
                .collect();
            StreamFault::Error {
                after,
                event: Bytes::from(text),
            }
        }
        None => StreamFault::Drop { after },
    }
}

/// Answer with the events of `answer` as SSE, recorded as they are sent.
fn answer_stream(draft: Draft, answer: &Answer, fault: Option<Failure>, rid: &str) -> Response {
    let events: Vec<Bytes> = (answer.events().iter())
        .map(|e| Bytes::from(events::sse(e)))
        .collect();
    let fault = fault.map(|f| stream_fault(answer, f));
    let headers: Headers = vec![
        (
            "content-type".into(),
            "text/event-stream; charset=utf-8".into(),
        ),
        ("cache-control".into(), "no-cache".into()),
        ("x-request-id".into(), rid.to_string()),
    ]
    .into();
    super::reply::scripted_stream(draft, headers, ScriptedEvents::new(events, fault))
}
