//! Finished requests and responses of a connection as [`Exchange`] records, from what the
//! pairing hands over ([`Entry`], with the connection's [`ConnInfo`]): times from
//! the packets, bodies de-chunked with their content codings kept as on the wire, secrets
//! redacted, what the reader noted (trailers, interim statuses, framing leniencies), and
//! the error that explains an exchange that is not whole (malformed, gap, lost response,
//! cut short, no response, SSE `error` event).

use std::collections::BTreeMap;

use std::net::SocketAddr;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::message::Message;
use super::NO_TIME;
use crate::http::is_event_stream;
use crate::trace::redact::redact_headers;
use crate::trace::{Body, Exchange, ExchangeError, HttpRequest, HttpResponse, Source, SourceKind};

/// Where a connection was seen; copied into every exchange's [`crate::trace::Source`].
#[derive(Clone, Debug)]
pub struct ConnInfo {
    /// `Pcap` for files, `Live` for interfaces.
    pub kind: SourceKind,
    /// Capture file (or `iface:NAME`).
    pub file: Option<String>,
    /// Client address.
    pub client: SocketAddr,
    /// Server address.
    pub server: SocketAddr,
    /// Connection number in the order connections were first seen, from 0.
    pub connection: u64,
}

/// A request (or a response without one) on its way to becoming an exchange.
pub(super) struct Entry {
    pub(super) id: u64,
    pub(super) method: String,
    /// An HTTP/0.9 simple request: its response has no head.
    pub(super) simple: bool,
    /// False for a response whose request was not captured.
    pub(super) captured: bool,
    pub(super) req: Option<Message>,
    pub(super) interim: Vec<u16>,
    pub(super) resp: Option<Message>,
    /// Why no response will be paired: it was lost in a capture gap.
    pub(super) lost: Option<String>,
    /// Response-stream offset the request's first segment acknowledged.
    pub(super) req_ack: Option<u64>,
    /// Request-stream offset of the request's first byte.
    pub(super) req_start: u64,
    /// The request was cut short (its end is where it was cut, not where it ended).
    pub(super) req_cut: bool,
    /// Request-stream offset just after the request's last byte, once complete.
    pub(super) req_end: Option<u64>,
    /// Its response switched the connection to WebSocket (`notes.websocket: "upgrade"`).
    pub(super) websocket: bool,
}

impl Entry {
    pub(super) fn done(&self) -> bool {
        (self.req.is_some() || !self.captured) && (self.resp.is_some() || self.lost.is_some())
    }

    /// Still waiting for its response.
    pub(super) fn open(&self) -> bool {
        self.captured && self.resp.is_none() && self.lost.is_none()
    }
}

fn time(ns: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_nanos(ns)
}

/// A packet time, unless no packet of the capture gave one.
fn known(ns: i64) -> Option<i64> {
    (ns != NO_TIME).then_some(ns)
}

/// Body from a message (its bytes are moved out): de-chunked, content codings kept as
/// on the wire (readers decode through [`crate::api::decode`]); trailers and framing
/// notes go to `notes` under `{side}_trailers` and `{side}_framing_notes`.
fn body_of(msg: &mut Message, notes: &mut BTreeMap<String, Value>, side: &str) -> Body {
    let truncated = msg.gap_bytes > 0 || msg.cut.is_some();
    let body = Body::new(std::mem::take(&mut msg.body)).with_truncated(truncated);
    if !msg.trailers.is_empty() {
        let t: Vec<_> = msg
            .trailers
            .iter()
            .map(|(k, v)| vec![k.clone(), v.clone()])
            .collect();
        notes.insert(format!("{side}_trailers"), serde_json::json!(t));
    }
    if !msg.notes.is_empty() {
        notes.insert(
            format!("{side}_framing_notes"),
            serde_json::json!(msg.notes),
        );
    }
    body
}

fn request_of(req: &mut Message, notes: &mut BTreeMap<String, Value>) -> HttpRequest {
    let mut headers = req.head.headers.clone();
    redact_headers(&mut headers);
    HttpRequest {
        method: req.head.method.clone(),
        target: req.head.target.clone(),
        version: req.head.version.clone(),
        headers,
        body: body_of(req, notes, "request"),
    }
}

/// The exchange of a finished entry (`why`: how the connection ended, for entries without
/// a response). `None` for an entry with neither a request nor a response.
pub(super) fn build(info: &ConnInfo, e: Entry, why: &str) -> Option<Exchange> {
    let mut notes = BTreeMap::new();
    let mut req_msg = e.req;
    let mut resp_msg = e.resp;
    let request = match req_msg.as_mut() {
        Some(req) => request_of(req, &mut notes),
        None if resp_msg.is_some() => {
            notes.insert(
                "request_not_captured".into(),
                "the request was sent before the capture began or lost in a capture gap".into(),
            );
            HttpRequest::not_captured()
        }
        None => return None,
    };
    let first = req_msg
        .as_ref()
        .or(resp_msg.as_ref())
        .map(|m| m.first)
        .unwrap_or_default();
    let started = first.ts;
    let mut last = req_msg.as_ref().map_or(first, |m| m.last);
    if resp_msg.as_ref().is_some_and(|m| m.head_not_captured) {
        notes.insert(
            "response_head_not_captured".into(),
            "the capture started inside this response: status, headers and the first bytes are unknown".into(),
        );
    }
    let response = resp_msg.as_mut().map(|resp| {
        last = resp.last;
        let mut headers = resp.head.headers.clone();
        redact_headers(&mut headers);
        let chunks = resp
            .pieces
            .iter()
            .map(|(ts, n)| ((ts.saturating_sub(started).max(0) / 1000) as u64, *n))
            .collect();
        HttpResponse {
            status: resp.head.status,
            version: resp.head.version.clone(),
            headers,
            body: body_of(resp, &mut notes, "response"),
            chunks,
            first_byte_at: known(resp.first.ts)
                .zip(known(started))
                .map(|(t, s)| time(t.max(s))),
        }
    });
    if !e.interim.is_empty() {
        notes.insert("interim_statuses".into(), serde_json::json!(e.interim));
    }
    let mut ended = response.as_ref().and_then(|_| known(last.ts));
    if let Some(end) = ended.filter(|end| *end < started) {
        notes.insert(
            "capture_order_anomaly".into(),
            format!(
                "response ended {} us before the request started; latency set to 0",
                (started - end) / 1000
            )
            .into(),
        );
        ended = Some(started);
    }
    if known(started).is_none() {
        // No packet of the capture carried a time: the record needs one, the note says
        // it is not real, and no latency is made up.
        notes.insert("time_unknown".into(), TIME_UNKNOWN.into());
        ended = None;
    }
    let error = with_stream_error(
        error_of(req_msg.as_ref(), resp_msg.as_ref(), e.lost.as_deref(), why),
        stream_error(response.as_ref()),
    );
    let frames = (first.frame.min(last.frame), first.frame.max(last.frame));
    if e.websocket {
        notes.insert("websocket".into(), "upgrade".into());
    }
    Some(Exchange {
        id: e.id,
        started_at: time(known(started).unwrap_or(0)),
        ended_at: ended.map(time),
        source: source(info, frames),
        request,
        response,
        error,
        notes,
        websocket: None,
    })
}

/// The note of an exchange none of whose packets carried a time.
pub(super) const TIME_UNKNOWN: &str = "no packet of this exchange carried a timestamp (pcapng Simple Packet Blocks): started_at is not a capture time";

/// The source of an exchange of connection `info` made of the packets `frames` (first,
/// last).
pub(super) fn source(info: &ConnInfo, frames: (u64, u64)) -> Source {
    let mut source = Source::new(info.kind);
    source.file = info.file.clone();
    source.frames = Some(frames);
    source.client = Some(info.client.to_string());
    source.server = Some(info.server.to_string());
    source.connection = Some(info.connection);
    source
}

/// Why an exchange is not whole, most fundamental first: a malformed message, bytes
/// missing from the capture, a response lost in a gap, a request cut short, no
/// response, a response cut short.
fn error_of(
    req: Option<&Message>,
    resp: Option<&Message>,
    lost: Option<&str>,
    why: &str,
) -> Option<ExchangeError> {
    for (m, kind) in [(req, "malformed_request"), (resp, "malformed_response")] {
        if let Some(cut) = m.filter(|m| m.malformed).and_then(|m| m.cut.as_deref()) {
            return Some(err(kind, cut));
        }
    }
    let gaps = (
        req.map_or(0, |m| m.gap_bytes),
        resp.map_or(0, |m| m.gap_bytes),
    );
    if gaps != (0, 0) {
        let mut message = format!(
            "bytes missing from the capture: {} in the request, {} in the response",
            gaps.0, gaps.1
        );
        for c in [req, resp]
            .into_iter()
            .flatten()
            .filter_map(|m| m.cut.as_ref())
        {
            message.push_str("; ");
            message.push_str(c);
        }
        return Some(err("capture_gap", &message));
    }
    if let Some(lost) = lost {
        return Some(err("capture_gap", lost));
    }
    if let Some(cut) = req.and_then(|m| m.cut.as_deref()) {
        return Some(err("incomplete_request", cut));
    }
    let Some(resp) = resp else {
        let why = if why.is_empty() {
            "connection ended"
        } else {
            why
        };
        return Some(err("no_response", &format!("no response seen ({why})")));
    };
    resp.cut
        .as_deref()
        .map(|cut| err("incomplete_response", cut))
}

fn err(kind: &str, message: &str) -> ExchangeError {
    ExchangeError {
        kind: kind.into(),
        message: message.into(),
    }
}

/// The exchange's error: a stream's own `error` event names it, also when the response
/// was then cut (the API's error type is what the user needs; the cut stays in the
/// message), so `overloaded_error` is never hidden behind `incomplete_response`.
fn with_stream_error(
    wire: Option<ExchangeError>,
    stream: Option<ExchangeError>,
) -> Option<ExchangeError> {
    match (wire, stream) {
        (Some(w), Some(mut s)) if w.kind == "incomplete_response" => {
            s.message = format!("{}; then the response was cut: {}", s.message, w.message);
            Some(s)
        }
        (w, s) => w.or(s),
    }
}

/// An SSE `error` event in an event-stream response marks the exchange failed
/// (the partial content stays in the body). The body is read through the one decoder and
/// the one SSE parser.
fn stream_error(resp: Option<&HttpResponse>) -> Option<ExchangeError> {
    let resp = resp?;
    if !is_event_stream(resp.headers.get("content-type")?) {
        return None;
    }
    let body = crate::api::decode::response_body(resp);
    // An error event is named `error` or carries `"error"` in its data, both within one
    // line: a stream without the word has none, and is not parsed (most are long).
    memchr::memmem::find(&body.bytes, b"error")?;
    let first = crate::api::sse::first_error(&body.bytes)?;
    // The one rendering of an API error object (the same text show and analyze give).
    Some(err(
        "stream_error",
        &format!(
            "error event in the stream: {}",
            crate::api::error_text(&first)
        ),
    ))
}
