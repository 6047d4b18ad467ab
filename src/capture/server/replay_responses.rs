//! Replaying recorded OpenAI Responses answers: a recorded answer can be an SSE stream
//! (`POST` with `stream: true`), one JSON response object, or the server's messages on a
//! Responses WebSocket (one JSON event per line). Each can answer either transport: as
//! events over a WebSocket ([`events_of`]), as SSE or one object over HTTP ([`as_http`],
//! [`reshape`]). The requests a recording is matched on are read as the replay module
//! reads Messages ones, a WebSocket message as the whole conversation its
//! `previous_response_id` chain stands for ([`requests`]).

use std::collections::HashMap;

use serde_json::Value;

use super::websocket::{outcome, Chain};
use crate::api::responses::events::{self, Answer};
use crate::api::{request_body, response_body, Dialect, MessagesRequest};
use crate::http::is_event_stream;
use crate::trace::websocket::server_messages;
use crate::trace::{Body, Exchange, HttpResponse};

/// The event objects of a recorded Responses answer, in order: the WebSocket messages,
/// the SSE events' data, or the events a JSON response object streams as.
pub(crate) fn events_of(x: &Exchange) -> Vec<Value> {
    let Some(resp) = &x.response else {
        return Vec::new();
    };
    let body = response_body(resp).bytes;
    if x.websocket.is_some() {
        return (server_messages(&body))
            .filter_map(|m| serde_json::from_slice(m).ok())
            .collect();
    }
    if is_sse(resp, &body) {
        return (crate::api::sse::parse_events(&body).iter())
            .filter_map(|e| serde_json::from_str(&e.data).ok())
            .collect();
    }
    (serde_json::from_slice::<Value>(&body).ok())
        .and_then(|v| Answer::from_response(&v))
        .map(|a| a.events())
        .unwrap_or_default()
}

/// True when a recorded HTTP body is an event stream.
fn is_sse(resp: &HttpResponse, body: &[u8]) -> bool {
    crate::api::sse::looks_like_event_stream(body)
        || resp
            .headers
            .get("content-type")
            .is_some_and(is_event_stream)
}

/// The final response object among `events` (the last event carrying one).
fn final_response(events: &[Value]) -> Option<Value> {
    events.iter().rev().find_map(|e| e.get("response").cloned())
}

/// A recorded WebSocket answer as the HTTP response a `POST` gets: SSE events at the
/// messages' recorded times (`wants_stream`), else the final response object; with what
/// was done.
pub(crate) fn as_http(x: &Exchange, wants_stream: bool) -> (HttpResponse, String) {
    let evs = events_of(x);
    let recorded = x.response.as_ref();
    let times: Vec<u64> = recorded.map_or(Vec::new(), |r| r.chunks.iter().map(|c| c.0).collect());
    let (body, chunks, ct, what) = if wants_stream {
        let mut body = Vec::new();
        let mut chunks = Vec::new();
        for (i, e) in evs.iter().enumerate() {
            let text = events::sse(e);
            chunks.push((times.get(i).copied().unwrap_or(0), text.len() as u64));
            body.extend_from_slice(text.as_bytes());
        }
        let what = "the recorded WebSocket messages were sent as SSE events";
        (body, chunks, "text/event-stream; charset=utf-8", what)
    } else {
        let body = (final_response(&evs).map(|r| r.to_string()))
            .unwrap_or_default()
            .into_bytes();
        let end = times.iter().copied().max().unwrap_or(0);
        let what =
            "the recorded WebSocket messages were assembled into one response (stream: false)";
        (
            body.clone(),
            vec![(end, body.len() as u64)],
            "application/json",
            what,
        )
    };
    let response = HttpResponse {
        status: 200,
        version: "HTTP/1.1".into(),
        headers: vec![("content-type".into(), ct.to_string())].into(),
        body: Body::new(body),
        chunks,
        first_byte_at: recorded.and_then(|r| r.first_byte_at),
    };
    (response, what.into())
}

/// A recorded HTTP Responses body in the other shape: a stream's final response object
/// (stream: false), or a response object's events as SSE (stream: true). Returns the
/// body, its content type and what was done; or why it cannot be reshaped.
pub(crate) fn reshape(
    body: &[u8],
    recorded_sse: bool,
) -> Result<(Vec<u8>, &'static str, String), String> {
    if recorded_sse {
        let evs: Vec<Value> = (crate::api::sse::parse_events(body).iter())
            .filter_map(|e| serde_json::from_str(&e.data).ok())
            .collect();
        let r = final_response(&evs).ok_or("the recorded stream carries no response object")?;
        let what = "the recorded stream was assembled into one response (stream: false)";
        return Ok((r.to_string().into_bytes(), "application/json", what.into()));
    }
    let v: Value =
        serde_json::from_slice(body).map_err(|e| format!("the recorded body is not JSON: {e}"))?;
    let a =
        Answer::from_response(&v).ok_or("the recorded body is no response object (no `output`)")?;
    let text: String = a.events().iter().map(events::sse).collect();
    let what = "the recorded response was emitted as a stream of events (stream: true)";
    Ok((
        text.into_bytes(),
        "text/event-stream; charset=utf-8",
        what.into(),
    ))
}

/// Reads the requests of recorded Responses exchanges, keeping each recorded WebSocket
/// connection's chain.
#[derive(Default)]
pub(crate) struct Requests {
    chains: HashMap<u64, Chain>,
}

impl Requests {
    /// The canonical request of a recorded Responses exchange that answered (200 over
    /// HTTP, or a WebSocket message with a response); `None` for prewarms
    /// (`generate: false`), unreadable bodies, and continuations of unknown responses.
    pub(crate) fn request(&mut self, x: &Exchange) -> Option<MessagesRequest> {
        let body = request_body(&x.request).bytes;
        let Some(ws) = &x.websocket else {
            let ok = x.response.as_ref().is_some_and(|r| r.status == 200);
            let req = MessagesRequest::parse_as(Dialect::Responses, &body).ok()?;
            return (ok && req.param("generate") != Some(&Value::Bool(false))).then_some(req);
        };
        let msg: serde_json::Map<String, Value> = serde_json::from_slice(&body).ok()?;
        let chain = self.chains.entry(ws.upgrade).or_default();
        let rebuilt = chain.rebuild(&msg).ok()?;
        let answer = x.response.as_ref().map(|r| response_body(r).bytes);
        if let Some((id, output)) = answer.as_deref().and_then(|b| outcome(server_messages(b))) {
            chain.remember(&id, rebuilt.input.clone(), &output);
        }
        if msg.get("generate") == Some(&Value::Bool(false)) || answer.is_none() {
            return None;
        }
        let full = serde_json::to_vec(&Value::Object(rebuilt.body)).ok()?;
        MessagesRequest::parse_as(Dialect::Responses, &full).ok()
    }
}
