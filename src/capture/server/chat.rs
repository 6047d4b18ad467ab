//! `POST …/chat/completions` (the OpenAI Chat Completions API) in stub, script and
//! replay mode (proxy mode forwards it like any path).
//!
//! The decision is the Responses one ([`super::responses::decide`]: stub text, or the
//! scenario's blocks for the request's thread and turn, usage estimated); the answer is
//! written as Chat Completions ([`crate::api::chat::events`]): one `chat.completion`
//! object, or with `"stream": true` its chunks, the usage chunk when the request sets
//! `stream_options.include_usage`, and `data: [DONE]`. Completion ids are
//! `chatcmpl-agentwire-` and the exchange number. Injected failures: `status` answers that
//! status with an OpenAI error body (`{"error":{"message","type","code"}}`); `sse_error`
//! sends an `{"error":{…}}` chunk after `after_events` chunks and ends the stream; `drop`
//! cuts the connection.

use axum::body::Body as AxumBody;
use axum::response::Response;
use bytes::Bytes;
use serde_json::{json, Value};

use super::config::Mode;
use super::draft::{Draft, ScriptedEvents, StreamFault};
use super::reply::{openai_error_response, respond_json};
use super::script::Failure;
use super::state::AppState;
use crate::api::chat::events::{self as chat_events, ChatAnswer};
use crate::api::{estimate_tokens, request_body, Dialect, MessagesRequest};
use crate::http::Headers;
use crate::trace::ExchangeError;

/// The canonical request of a Chat Completions exchange, or why it is refused.
fn parse(draft: &Draft) -> Result<MessagesRequest, (String, &'static str)> {
    let ct = (draft.request.headers.get("content-type")).unwrap_or_default();
    if !ct.to_ascii_lowercase().contains("json") {
        let msg = format!("content-type must be application/json, got {ct:?}");
        return Err((msg, "wrong_content_type"));
    }
    let body = request_body(&draft.request).bytes;
    MessagesRequest::parse_as(Dialect::ChatCompletions, &body)
        .map_err(|e| (e.to_string(), "invalid_json"))
}

/// The scripted failure of a decision.
struct Decided {
    fault: Option<Failure>,
}

/// What a stub or script server answers `req` (Messages-shaped blocks), the failure to
/// inject and the milliseconds to wait first, as for a Responses request
/// ([`super::responses`]); `notes` get `synthesized` and, in script mode, the scenario's
/// decision. Usage is estimated: prompt tokens = request bytes / 4, cached 0.
fn decide(
    st: &AppState,
    notes: &mut std::collections::BTreeMap<String, Value>,
    req: &MessagesRequest,
) -> (Vec<Value>, Option<Failure>, u64) {
    notes.insert(
        "synthesized".into(),
        json!({"by": "agentwire", "usage": "estimate (request bytes / 4; cached 0)"}),
    );
    let Mode::Script(script) = &st.config.mode else {
        let text = json!({"type": "text", "text": "Hello from agentwire."});
        return (vec![text], None, 0);
    };
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

/// True when the request asks for the usage chunk (`stream_options.include_usage`).
fn include_usage(req: &MessagesRequest) -> bool {
    req.param("stream_options")
        .and_then(|o| o.get("include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// Answer `POST …/chat/completions`.
pub(crate) async fn answer(st: &AppState, mut draft: Draft, rid: &str) -> Response {
    let req = match parse(&draft) {
        Ok(r) => r,
        Err((msg, kind)) => return openai_error_response(draft, 400, &msg, rid, kind),
    };
    if let Mode::Replay(replay) = &st.config.mode {
        return super::playback::answer(replay, draft, &req).await;
    }
    let id = format!("chatcmpl-agentwire-{:06}", draft.id);
    let (content, fault, delay_ms) = decide(st, &mut draft.notes, &req);
    if delay_ms > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
    }
    let model = req.model.clone().unwrap_or_else(|| "gpt-agentwire".into());
    let mut answer = ChatAnswer::new(id, model, &content);
    let out_bytes = serde_json::to_string(&content).map_or(0, |s| s.len());
    let input = estimate_tokens(draft.request.body.len());
    answer.usage = Some(chat_events::usage(
        input,
        0,
        estimate_tokens(out_bytes).max(1),
    ));
    let d = Decided { fault };
    if let Some(status) = d.fault.as_ref().and_then(|f| f.status) {
        let msg = (d.fault.as_ref().and_then(|f| f.message.clone()))
            .unwrap_or_else(|| format!("injected {status}"));
        return openai_error_response(draft, status, &msg, rid, "injected_status");
    }
    if req.stream() {
        return answer_stream(draft, &answer, include_usage(&req), d.fault, rid);
    }
    if !d.fault.as_ref().is_some_and(|f| f.drop) {
        return respond_json(draft, 200, &answer.completion(), rid, None);
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

/// The stream fault of a scripted failure: an error chunk after `after_events` chunks,
/// or a drop.
fn stream_fault(f: Failure) -> StreamFault {
    let after = f.after_events.unwrap_or(0);
    match f.sse_error {
        Some(code) => {
            let msg = f.message.unwrap_or_else(|| "injected stream error".into());
            let body = crate::api::responses::events::error_body(&msg, &code, Some(&code));
            StreamFault::Error {
                after,
                event: Bytes::from(chat_events::sse(&body)),
            }
        }
        None => StreamFault::Drop { after },
    }
}

/// Answer with the chunks of `answer` as SSE, recorded as they are sent.
fn answer_stream(
    draft: Draft,
    answer: &ChatAnswer,
    usage: bool,
    fault: Option<Failure>,
    rid: &str,
) -> Response {
    let mut events: Vec<Bytes> = (answer.chunks(usage).iter())
        .map(|c| Bytes::from(chat_events::sse(c)))
        .collect();
    events.push(Bytes::from_static(chat_events::DONE.as_bytes()));
    let headers: Headers = vec![
        (
            "content-type".into(),
            "text/event-stream; charset=utf-8".into(),
        ),
        ("cache-control".into(), "no-cache".into()),
        ("x-request-id".into(), rid.to_string()),
    ]
    .into();
    super::reply::scripted_stream(
        draft,
        headers,
        ScriptedEvents::new(events, fault.map(stream_fault)),
    )
}
