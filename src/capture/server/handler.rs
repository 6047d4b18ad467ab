//! The request handler: reads the request (with size and time limits), records it, and
//! answers per endpoint and mode: Messages here, Responses in `responses`, the Responses
//! WebSocket's upgrade in `websocket`.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body as AxumBody;
use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use chrono::Utc;
use http_body_util::BodyExt;
use serde_json::{json, Value};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::config::Mode;
use super::draft::{Draft, ScriptedEvents, StreamFault};
use super::reply::{error_response, error_type_for, plain, respond_json, sse, Reply};
use super::script::Failure;
use super::state::{AppState, ConnInfo};
use crate::api::{estimate_tokens, request_body, MessagesRequest};
use crate::http::Headers;
use crate::trace::redact::{redact_headers, redact_text};
use crate::trace::{Body, ExchangeError, HttpRequest, HttpResponse};

/// Why reading a request body stopped early.
enum BodyEnd {
    TooLarge {
        seen: u64,
    },
    Timeout,
    Disconnected(String),
    /// The body's framing is invalid (a chunk-size line that is not hex, a bad chunk
    /// end): hyper stops reading and answers 400.
    Malformed(String),
    /// The server's in-flight body budget is used up.
    Overloaded,
}

/// How long a body frame may wait for room in the in-flight budget before the request is
/// answered 503.
const BUDGET_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// The transfer codings of a request other than `chunked` (which hyper removes), e.g.
/// `gzip` in `Transfer-Encoding: gzip, chunked`: RFC 9112 §6.1 answers those 501.
fn unsupported_codings(h: &Headers) -> Vec<String> {
    let mut codings = h.list("transfer-encoding");
    codings.retain(|c| c != "chunked");
    codings
}

/// When and where a request arrived, and its number: what its record starts from.
struct Arrival {
    started_at: chrono::DateTime<Utc>,
    clock: Instant,
    id: u64,
    /// The request id answered in `request-id` (`req_agentwire_` and the number).
    rid: String,
    conn: Option<ConnInfo>,
}

impl Arrival {
    fn now(st: &AppState, conn: Option<ConnInfo>) -> Self {
        let started_at = Utc::now();
        let clock = Instant::now();
        let id = st.take_id();
        Arrival {
            started_at,
            clock,
            id,
            rid: format!("req_agentwire_{id:06}"),
            conn,
        }
    }

    /// The draft of the request with head `parts`, recorded `headers` and `body`.
    fn draft(&self, st: &AppState, parts: &Parts, headers: Headers, body: Body) -> Draft {
        let request = HttpRequest {
            method: parts.method.to_string(),
            target: redact_text(&parts.uri.to_string()),
            version: format!("{:?}", parts.version),
            headers,
            body,
        };
        st.draft(
            self.conn.as_ref(),
            self.id,
            self.started_at,
            self.clock,
            request,
        )
    }
}

/// Record and answer one request: refused before its body is read when the trace cannot
/// be written or its transfer coding is not supported; else its body is read within the
/// limits and the request is routed ([`route`]).
pub(crate) async fn handle(State(st): State<Arc<AppState>>, mut req: Request) -> Response {
    let arrival = Arrival::now(&st, req.extensions().get::<ConnInfo>().cloned());
    let on_upgrade = super::websocket::wants(&req).then(|| hyper::upgrade::on(&mut req));
    let (parts, body) = req.into_parts();
    let headers = recorded_headers(&parts.headers);
    if let Some((status, msg, kind)) = refusal(&st, &headers).await {
        // Answered before the body is read: the request is recorded with its head only.
        let draft = arrival.draft(&st, &parts, headers, Body::default().with_truncated(true));
        return error_response(draft, status, &msg, &arrival.rid, kind);
    }
    if let Some(on) = on_upgrade {
        // A WebSocket upgrade: no body; the connection is served as frames from here.
        let mut draft = arrival.draft(&st, &parts, headers, Body::default());
        mark_intercepted(&st, &mut draft, &arrival);
        let conn = arrival.conn.clone();
        return super::websocket::upgrade(st.clone(), draft, parts, on, conn, &arrival.rid).await;
    }
    let deadline = arrival.clock + st.config.body_timeout;
    let (bytes, end, permit) = read_body(body, st.config.max_body, deadline, &st.bodies).await;
    let body = Body::new(bytes).with_truncated(end.is_some());
    let mut draft = arrival.draft(&st, &parts, headers, body);
    draft.permit = permit;
    mark_intercepted(&st, &mut draft, &arrival);
    match end {
        Some(end) => body_ended(&st, draft, end, &arrival.rid),
        None => route(&st, draft, parts, &arrival.rid).await,
    }
}

/// A request that came through CONNECT records the host the client believed it was
/// talking to, and the mode `MODE+intercept`.
fn mark_intercepted(st: &AppState, draft: &mut Draft, arrival: &Arrival) {
    if let Some(host) = arrival.conn.as_ref().and_then(|c| c.host.as_ref()) {
        draft.source.server = Some(host.to_string());
        draft.source.mode = Some(format!("{}+intercept", st.config.mode.name()));
    }
}

/// The request's header fields as recorded: text, secrets redacted.
fn recorded_headers(h: &HeaderMap) -> Headers {
    let mut headers: Headers = h
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                crate::http::fields::field_text(v.as_bytes()),
            )
        })
        .collect();
    redact_headers(&mut headers);
    headers
}

/// Why a request is answered before its body is read (status, message, error kind), if
/// it is.
async fn refusal(st: &AppState, headers: &Headers) -> Option<(u16, String, &'static str)> {
    // Backpressure: wait while the trace writer is behind; answer 503 while the trace
    // cannot be written at all (disk full), so clients retry later.
    if st.recorder.admit().await.is_err() {
        let msg = "agentwire cannot write its trace right now (see its stderr: disk full?); retry shortly";
        return Some((503, msg.into(), "trace_unwritable"));
    }
    let codings = unsupported_codings(headers);
    if codings.is_empty() {
        return None;
    }
    let msg = format!(
        "transfer coding {} is not supported (only chunked; RFC 9112 §6.1)",
        codings.join(", ")
    );
    Some((501, msg, "unsupported_transfer_coding"))
}

/// Answer and record a request whose body ended early (`end` says why).
fn body_ended(st: &AppState, draft: Draft, end: BodyEnd, rid: &str) -> Response {
    match end {
        BodyEnd::TooLarge { seen } => {
            let max = st.config.max_body;
            let msg = format!("request body of {seen}+ bytes exceeds the limit of {max} bytes (raise it with --max-body)");
            error_response(draft, 413, &msg, rid, "body_too_large")
        }
        BodyEnd::Timeout => {
            let msg = format!(
                "request body not received within {} s (raise it with --body-timeout)",
                st.config.body_timeout.as_secs()
            );
            error_response(draft, 408, &msg, rid, "body_timeout")
        }
        BodyEnd::Overloaded => {
            let msg = format!(
                "request bodies in flight exceed {} bytes; retry shortly",
                st.config.max_inflight
            );
            error_response(draft, 503, &msg, rid, "overloaded")
        }
        BodyEnd::Malformed(e) => {
            let n = draft.request.body.len();
            let why = format!("the request body's framing is invalid after {n} body bytes: {e}");
            // hyper stopped at the broken framing; the 400 below reaches the client.
            let sent = HttpResponse {
                status: 400,
                version: "HTTP/1.1".into(),
                headers: vec![("content-type".into(), "text/plain".into())].into(),
                body: Body::default(),
                chunks: Vec::new(),
                first_byte_at: Some(Utc::now()),
            };
            ended_early(draft, Some(sent), "malformed_body", why)
        }
        BodyEnd::Disconnected(e) => {
            let n = draft.request.body.len();
            let why = format!("client went away after {n} body bytes: {e}");
            // Nothing reaches a client that went away.
            ended_early(draft, None, "client_disconnected", why)
        }
    }
}

/// Answer a request read whole: forwarded in proxy mode, else by endpoint.
async fn route(st: &AppState, draft: Draft, parts: Parts, rid: &str) -> Response {
    if let Mode::Proxy(up) = &st.config.mode {
        return super::proxy::forward(up, draft, parts.method, parts.uri, parts.headers, rid).await;
    }
    let path = parts.uri.path().to_string();
    match (parts.method.as_str(), path.as_str()) {
        ("POST", "/v1/messages") => messages(st, draft, rid).await,
        ("POST", "/v1/messages/count_tokens") => count_tokens(draft, rid),
        ("POST", p) if p.ends_with("/responses") => super::responses::answer(st, draft, rid).await,
        ("POST", p) if crate::api::dialect::gemini_method(p).is_some() => {
            super::gemini::answer(st, draft, p, parts.uri.query(), rid).await
        }
        ("POST", p) if p.ends_with("/chat/completions") => {
            super::chat::answer(st, draft, rid).await
        }
        // First-party side endpoints Claude Code calls before its first message, answered
        // as for a user without managed settings or policy limits (the shape the CLI
        // itself falls back to: no restrictions, no taints, no notice, no defaults).
        ("GET", "/api/claude_code/settings") => respond_json(draft, 200, &json!({}), rid, None),
        ("GET", "/api/claude_code/policy_limits") => {
            let body = json!({"restrictions": {}, "compliance_taints": [], "monitoring_notice": null, "defaults": {}});
            respond_json(draft, 200, &body, rid, None)
        }
        ("GET", "/v1/models") => {
            let body = models_list();
            respond_json(draft, 200, &body, rid, None)
        }
        _ => {
            let msg = format!(
                "{} {} is not an endpoint of this server",
                parts.method, path
            );
            error_response(draft, 404, &msg, rid, "not_found")
        }
    }
}

/// Record an exchange whose request body ended early (as far as it got, with why) and
/// answer 400.
fn ended_early(draft: Draft, sent: Option<HttpResponse>, kind: &str, message: String) -> Response {
    draft.finish(
        sent,
        Some(ExchangeError {
            kind: kind.into(),
            message,
        }),
    );
    plain(StatusCode::BAD_REQUEST, Bytes::new(), "text/plain")
}

/// Why hyper stopped a body: its decoders report broken framing as `InvalidInput` or
/// `InvalidData` I/O errors (hyper `proto/h1/decode.rs`) and a connection that ended
/// early as `UnexpectedEof`.
fn body_error(e: &axum::Error) -> BodyEnd {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            if matches!(
                io.kind(),
                std::io::ErrorKind::InvalidInput | std::io::ErrorKind::InvalidData
            ) {
                return BodyEnd::Malformed(e.to_string());
            }
        }
        source = s.source();
    }
    BodyEnd::Disconnected(e.to_string())
}

/// Read a body up to `max` bytes by `deadline`, taking room for every byte from the
/// in-flight budget `bodies` (returned with the bytes; dropped, it frees the room).
async fn read_body(
    mut body: AxumBody,
    max: usize,
    deadline: Instant,
    bodies: &Arc<Semaphore>,
) -> (Vec<u8>, Option<BodyEnd>, Option<OwnedSemaphorePermit>) {
    let mut buf = Vec::new();
    let mut held: Option<OwnedSemaphorePermit> = None;
    let deadline = tokio::time::Instant::from_std(deadline);
    loop {
        match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) => return (buf, Some(BodyEnd::Timeout), held),
            Ok(None) => return (buf, None, held),
            Ok(Some(Err(e))) => return (buf, Some(body_error(&e)), held),
            Ok(Some(Ok(frame))) => {
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                let want = u32::try_from(data.len().min(max.saturating_sub(buf.len()) + 1))
                    .unwrap_or(u32::MAX);
                let got = match bodies.clone().try_acquire_many_owned(want) {
                    Ok(p) => Some(p),
                    Err(_) => {
                        tokio::time::timeout(BUDGET_WAIT, bodies.clone().acquire_many_owned(want))
                            .await
                            .ok()
                            .and_then(Result::ok)
                    }
                };
                match (got, held.as_mut()) {
                    (None, _) => return (buf, Some(BodyEnd::Overloaded), held),
                    (Some(p), Some(h)) => h.merge(p),
                    (Some(p), None) => held = Some(p),
                }
                if buf.len() + data.len() > max {
                    let keep = max - buf.len();
                    buf.extend_from_slice(&data[..keep]);
                    let mut seen = (buf.len() + data.len() - keep) as u64;
                    // Drain (bounded) so the client can finish sending and read the 413.
                    let drain_cap = (max as u64).saturating_mul(8).max(256 << 20);
                    while seen < drain_cap {
                        match tokio::time::timeout_at(deadline, body.frame()).await {
                            Ok(Some(Ok(f))) => {
                                seen += f.data_ref().map_or(0, |d| d.len() as u64);
                            }
                            _ => break,
                        }
                    }
                    return (buf, Some(BodyEnd::TooLarge { seen }), held);
                }
                buf.extend_from_slice(&data);
            }
        }
    }
}

/// Answer `POST /v1/messages`: parse the request, then reply as the mode says (replay
/// answers from its recording; stub and script reply here), as one JSON message or as
/// SSE events, with a scripted fault if any.
async fn messages(st: &AppState, mut draft: Draft, rid: &str) -> Response {
    let req = match parse_messages(st, &draft) {
        Ok(r) => r,
        Err((msg, kind)) => return error_response(draft, 400, &msg, rid, kind),
    };
    if let Mode::Replay(replay) = &st.config.mode {
        return super::playback::answer(replay, draft, &req).await;
    }
    let (reply, fault, delay) = decide(st, &mut draft, &req);
    // Marked so `analyze --usage auto` never takes these made-up figures for the API's.
    draft.notes.insert(
        "synthesized".into(),
        json!({"by": "agentwire", "usage": "estimate (request bytes / 4; cache fields 0)"}),
    );
    if delay > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
    }
    if let Some(status) = fault.as_ref().and_then(|f| f.status) {
        let et = error_type_for(status);
        let msg = (fault.as_ref().and_then(|f| f.message.clone()))
            .unwrap_or_else(|| format!("injected {status} ({et})"));
        return error_response(draft, status, &msg, rid, "injected_status");
    }
    if req.stream() {
        answer_stream(draft, &reply, fault, rid)
    } else {
        answer_json(draft, &reply, fault.as_ref(), rid)
    }
}

/// The Messages request of `draft`, or why it is refused (message, error kind): a
/// content type that is not JSON, or a body that is no request.
fn parse_messages(st: &AppState, draft: &Draft) -> Result<MessagesRequest, (String, &'static str)> {
    let ct = (draft.request.headers.get("content-type")).unwrap_or_default();
    if !ct.to_ascii_lowercase().contains("json") {
        let msg = format!("content-type must be application/json, got {ct:?}");
        return Err((msg, "wrong_content_type"));
    }
    let body = request_body(&draft.request).bytes;
    let parsed = match &st.config.mode {
        Mode::Stub => MessagesRequest::parse_head(&body),
        _ => MessagesRequest::parse(&body),
    };
    parsed.map_err(|e| (e.to_string(), "invalid_json"))
}

/// The reply of a stub or script server to `req`, with the scripted fault and delay (ms);
/// a script's decision is noted on `draft`.
fn decide(
    st: &AppState,
    draft: &mut Draft,
    req: &MessagesRequest,
) -> (Reply, Option<Failure>, u64) {
    let model = req
        .model
        .clone()
        .unwrap_or_else(|| "claude-agentwire".into());
    let msg_id = format!("msg_agentwire_{:06}", draft.id);
    let body_len = draft.request.body.len();
    match &st.config.mode {
        // (proxied requests were forwarded before routing; stub is the safe answer)
        Mode::Stub | Mode::Proxy(_) | Mode::Replay(_) => {
            let content = vec![json!({"type":"text","text":"Hello from agentwire."})];
            (Reply::new(msg_id, model, content, body_len), None, 0)
        }
        Mode::Script(script) => {
            let d = {
                let mut s = st.script_state.lock().unwrap_or_else(|p| p.into_inner());
                script.decide(req, &mut s)
            };
            draft.notes.insert(
                "script".into(),
                json!({"thread": d.thread, "turn": d.turn, "unresolved": d.unresolved}),
            );
            let mut reply = Reply::new(msg_id, model, d.content, body_len);
            if let Some(sr) = d.stop_reason {
                reply.stop_reason = sr;
            }
            (reply, d.fail, d.delay_ms)
        }
    }
}

/// Answer with one JSON message, or drop the connection when the script says so.
fn answer_json(draft: Draft, reply: &Reply, fault: Option<&Failure>, rid: &str) -> Response {
    if !fault.is_some_and(|f| f.drop) {
        return respond_json(draft, 200, &reply.to_json(), rid, None);
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

/// Answer with the reply's SSE events, recorded as they are sent; a scripted fault ends
/// the stream with an `error` event or a drop after some events.
fn answer_stream(draft: Draft, reply: &Reply, fault: Option<Failure>, rid: &str) -> Response {
    let events: Vec<Bytes> = reply.to_sse_events().into_iter().map(Bytes::from).collect();
    let fault = fault.map(|f| {
        let after = f.after_events.unwrap_or(0);
        match f.sse_error {
            Some(et) => {
                let msg = f.message.unwrap_or_else(|| "injected stream error".into());
                let data = json!({"type":"error","error":{"type":et,"message":msg}});
                StreamFault::Error {
                    after,
                    event: Bytes::from(sse("error", &data)),
                }
            }
            None => StreamFault::Drop { after },
        }
    });
    let headers: Headers = vec![
        (
            "content-type".into(),
            "text/event-stream; charset=utf-8".into(),
        ),
        ("cache-control".into(), "no-cache".into()),
        ("request-id".into(), rid.to_string()),
    ]
    .into();
    super::reply::scripted_stream(draft, headers, ScriptedEvents::new(events, fault))
}

fn count_tokens(draft: Draft, rid: &str) -> Response {
    match MessagesRequest::parse(&request_body(&draft.request).bytes) {
        Ok(_) => {
            let n = estimate_tokens(draft.request.body.len());
            respond_json(draft, 200, &json!({"input_tokens": n}), rid, None)
        }
        Err(e) => error_response(draft, 400, &e.to_string(), rid, "invalid_json"),
    }
}

fn models_list() -> Value {
    let models = [
        (
            "claude-opus-4-5-20251101",
            "Claude Opus 4.5",
            "2025-11-01T00:00:00Z",
        ),
        (
            "claude-sonnet-4-5-20250929",
            "Claude Sonnet 4.5",
            "2025-09-29T00:00:00Z",
        ),
        (
            "claude-haiku-4-5-20251001",
            "Claude Haiku 4.5",
            "2025-10-01T00:00:00Z",
        ),
    ];
    let data: Vec<Value> = models
        .iter()
        .map(|(id, name, at)| json!({"type":"model","id":id,"display_name":name,"created_at":at}))
        .collect();
    json!({"data": data, "has_more": false, "first_id": models[0].0, "last_id": models[2].0})
}
