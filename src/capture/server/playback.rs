//! Playback (`serve --replay`, the server's `replay` mode): answer each request with the
//! recorded response of the matching recorded request, so a new CLI version can be
//! driven through an old session's conversation. (Re-sending a trace's requests to a
//! server, `agentwire replay`, is the client side: [`crate::capture::resend`].)
//!
//! Matching is structural. A request's thread is found by its first user message (then by
//! whether it carries tools), its position by its turn (assistant replies in its history).
//! Within that slot the match is exact when the history's assistant content (texts and
//! tool calls, which come from the recording itself) equals the recorded request's;
//! otherwise the closest recorded request of the thread answers and a divergence entry
//! names the request used and what differed. Volatile text (ids, dates, paths, token
//! budgets) is normalized before any comparison.
//!
//! The request's `stream` flag decides the answer's shape: recorded requests with the
//! same flag are preferred; when only the other shape is recorded, the answer is
//! converted (a recorded stream assembled into one message, a recorded message emitted as
//! events) and the difference is named, so the match is not exact. Recorded headers that
//! HTTP/1.1 cannot carry are dropped and named ([`crate::capture::sendable`]).
//!
//! OpenAI Responses requests are matched the same way, through their canonical request,
//! only against recorded Responses exchanges: `POST …/responses` answers and Responses
//! WebSocket messages, each read as the whole conversation its `previous_response_id`
//! chain stands for (`replay_responses`). A recorded WebSocket answer replays as SSE or
//! one response object over HTTP, and any recorded answer replays as messages over the
//! WebSocket.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;

use axum::body::Body as AxumBody;
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use bytes::Bytes;

use super::draft::{Draft, RecordingStream};
use super::error::ServerError;
use super::reply::error_response;
use crate::api::normalize::{Hits, Normalizer};
use crate::api::{request_body, BlockKind, Dialect, MessagesRequest};
use crate::capture::sendable::{sendable, Sendable};
use crate::http::{fields, is_event_stream};
use crate::trace::{Exchange, HttpResponse, Trace};

/// How recorded timing is reproduced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Timing {
    /// Send each recorded chunk after its recorded delay.
    Recorded,
    /// Send everything at once.
    None,
    /// Recorded delays divided by this factor (`x2` is twice as fast).
    Speed(f64),
}

impl Timing {
    /// Parse `recorded`, `none` or `xN` (N finite, from 0.001 to 1,000,000).
    pub fn parse(s: &str) -> Option<Timing> {
        match s {
            "recorded" => Some(Timing::Recorded),
            "none" => Some(Timing::None),
            _ => s
                .strip_prefix('x')
                .and_then(|n| n.parse::<f64>().ok())
                .filter(|f| f.is_finite() && (0.001..=1e6).contains(f))
                .map(Timing::Speed),
        }
    }

    /// The delay to wait for a recorded offset (µs), at most [`MAX_DELAY`].
    pub fn scale(&self, us: u64) -> Duration {
        let d = match self {
            Timing::Recorded => Duration::from_micros(us),
            Timing::None => Duration::ZERO,
            Timing::Speed(f) => {
                Duration::try_from_secs_f64(us as f64 / 1e6 / f).unwrap_or(MAX_DELAY)
            }
        };
        d.min(MAX_DELAY)
    }
}

/// Longest wait before a replayed piece: 1 hour (a recorded offset beyond it, or beyond
/// the recorded exchange's own duration, is clamped: numbers read from a trace are not
/// trusted to be sane).
pub const MAX_DELAY: Duration = Duration::from_secs(3600);

/// Cut a recorded body at its recorded piece boundaries: `(delay, start..end)` per piece,
/// with offsets clamped to the exchange's recorded duration (`limit_us`) and lengths to the
/// body; whatever the recorded pieces do not cover is sent last, at once.
pub fn pieces(
    body_len: usize,
    chunks: &[(u64, u64)],
    limit_us: Option<u64>,
    timing: Timing,
) -> Vec<(Duration, std::ops::Range<usize>)> {
    let mut out = Vec::with_capacity(chunks.len() + 1);
    let mut at = 0usize;
    let mut last = Duration::ZERO;
    for (offset_us, len) in chunks {
        let offset = limit_us.map_or(*offset_us, |l| (*offset_us).min(l));
        let end = at
            .saturating_add(usize::try_from(*len).unwrap_or(usize::MAX))
            .min(body_len);
        // Offsets only move forward.
        last = last.max(timing.scale(offset));
        out.push((last, at..end));
        at = end;
    }
    if at < body_len || out.is_empty() {
        out.push((last, at..body_len));
    }
    out
}

/// One recorded model request (Messages or Responses) and its response, indexed for
/// matching.
struct Entry {
    exchange: Exchange,
    /// Its dialect: only requests of the same dialect are matched to it.
    dialect: Dialect,
    thread_key: String,
    has_tools: bool,
    turn: usize,
    assistant_fp: Vec<String>,
    /// The recorded request's `stream` flag.
    stream: bool,
    /// The recorded request's tool results, `(tool_use_id, text)`: what the recorded run
    /// learnt from its tools ([`super::rewrite`]).
    results: Vec<(String, String)>,
}

/// A loaded recording to replay.
pub struct Replay {
    entries: Vec<Entry>,
    /// Entries already used, so a repeated turn takes the next recorded retry.
    used: Mutex<HashMap<usize, usize>>,
    /// How timing is reproduced.
    pub timing: Timing,
    normalizer: Normalizer,
}

/// The outcome of matching one request.
#[derive(Clone, Debug, Serialize)]
pub struct Match {
    /// Recorded exchange id that answered.
    pub recorded_id: u64,
    /// True when thread, turn and the assistant history all matched.
    pub exact: bool,
    /// Human-readable differences (empty when exact).
    pub differences: Vec<String>,
    /// How the recorded response was reshaped for the request's `stream` flag, if it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub converted: Option<String>,
    /// Recorded response headers not sent because HTTP/1.1 cannot carry them, each named
    /// with why (see [`crate::capture::sendable::refusal`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dropped_headers: Vec<String>,
    /// Values of the recorded run (task ids, output paths, agent ids) rewritten in the
    /// answer to the live run's, as learnt from the two requests' tool results: `old →
    /// new (N×)`. A recorded value with no counterpart in the live run is named in
    /// `differences` instead, and the match is not exact.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rewritten: Vec<String>,
    /// What was learnt for this request (not written to the trace).
    #[serde(skip)]
    learnt: super::rewrite::Learnt,
}

/// How much of a recorded trace a [`Replay`] answers with
/// ([`Replay::from_trace_counted`]). Displays as `replaying 1 of 3 recorded requests; 2
/// lines unreadable`: every line of the trace is counted, and what is not replayed is
/// said by why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// Exchanges read from the trace.
    pub exchanges: usize,
    /// Lines of the trace that could not be read.
    pub unreadable: usize,
    /// Recorded requests answered with: `/v1/messages` exchanges answered 200.
    pub replayed: usize,
}

impl Coverage {
    /// Errors: [`ServerError::NothingToReplay`] naming `path` (the trace) when nothing is
    /// replayed.
    pub fn check(&self, path: &std::path::Path) -> Result<(), ServerError> {
        if self.replayed == 0 {
            return Err(ServerError::NothingToReplay {
                path: path.display().to_string(),
            });
        }
        Ok(())
    }
}

impl std::fmt::Display for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut why = Vec::new();
        if self.unreadable > 0 {
            why.push(format!(
                "{} unreadable",
                crate::text::fmt::plural(self.unreadable as u64, "line")
            ));
        }
        if self.exchanges > self.replayed {
            why.push(format!(
                "{} not a /v1/messages request answered 200",
                self.exchanges - self.replayed
            ));
        }
        write!(
            f,
            "replaying {} of {} recorded requests",
            self.replayed,
            self.exchanges + self.unreadable
        )?;
        for w in why {
            write!(f, "; {w}")?;
        }
        Ok(())
    }
}

/// The one normalization of volatile text ([`crate::api::normalize`]): ids, dates,
/// working directories, temporary paths, task ids, token budgets, ...
fn norm(n: &Normalizer, s: &str) -> String {
    n.text(s, &mut Hits::new()).into_owned()
}

impl std::fmt::Debug for Replay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replay")
            .field("entries", &self.entries.len())
            .field("timing", &self.timing)
            .finish()
    }
}

impl Replay {
    /// Index the model exchanges (with responses) of a trace already in memory (read by
    /// the caller, who reports the trace's unreadable lines): `/v1/messages` answered 200,
    /// and Responses ones (`replay_responses::Requests`: `POST …/responses`
    /// answered 200, and Responses WebSocket messages read through their chains).
    pub fn from_trace(trace: Trace, timing: Timing) -> Replay {
        let normalizer = Normalizer::defaults();
        let mut entries = Vec::new();
        let mut responses = super::replay_responses::Requests::default();
        for x in trace.exchanges {
            let dialect = Dialect::of(&x);
            let req = match dialect {
                Some(Dialect::Messages) => {
                    if x.response.as_ref().is_none_or(|r| r.status != 200) {
                        continue;
                    }
                    MessagesRequest::parse(&request_body(&x.request).bytes).ok()
                }
                Some(Dialect::Responses) => responses.request(&x),
                Some(Dialect::Gemini) if x.response.as_ref().is_some_and(|r| r.status == 200) => {
                    crate::api::view::parse(&x).request.map(|c| c.req)
                }
                Some(Dialect::ChatCompletions) => super::replay_chat::recorded_request(&x),
                _ => None,
            };
            let (Some(req), Some(dialect)) = (req, dialect) else {
                continue;
            };
            entries.push(Entry {
                dialect,
                thread_key: norm(&normalizer, &req.first_user_text()),
                has_tools: !req.tools.is_empty(),
                turn: req.turn(),
                assistant_fp: assistant_fingerprint(&req, &normalizer),
                results: super::rewrite::tool_results(&req),
                stream: req.stream()
                    || x.websocket.is_some()
                    || crate::api::dialect::gemini_method(x.path()).is_some_and(|(_, s)| s),
                exchange: x,
            });
        }
        Replay {
            entries,
            used: Mutex::new(HashMap::new()),
            timing,
            normalizer,
        }
    }

    /// [`Replay::from_trace`], and how much of the trace it answers with: the figures
    /// the caller reports, so no recorded turn goes missing without a word.
    pub fn from_trace_counted(trace: Trace, timing: Timing) -> (Replay, Coverage) {
        let (exchanges, unreadable) = (trace.exchanges.len(), trace.problems.len());
        let r = Replay::from_trace(trace, timing);
        let coverage = Coverage {
            exchanges,
            unreadable,
            replayed: r.len(),
        };
        (r, coverage)
    }

    /// Number of recorded requests available.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the recording has no usable request.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries a request of `dialect` is matched among: its thread's (first user
    /// text `key`, carrying tools or not), else those carrying tools alike (with a note
    /// saying the thread is new), else every entry of the dialect.
    fn pool(&self, dialect: Dialect, key: &str, has_tools: bool) -> (Vec<usize>, Option<String>) {
        let of_dialect: Vec<usize> = (0..self.entries.len())
            .filter(|&i| self.entries[i].dialect == dialect)
            .collect();
        let same_thread: Vec<usize> = (of_dialect.iter().copied())
            .filter(|&i| {
                self.entries[i].thread_key == key && self.entries[i].has_tools == has_tools
            })
            .collect();
        if !same_thread.is_empty() {
            return (same_thread, None);
        }
        let by_kind: Vec<usize> = (of_dialect.iter().copied())
            .filter(|&i| self.entries[i].has_tools == has_tools)
            .collect();
        let note = Some("no recorded thread starts with this first user message".to_string());
        if by_kind.is_empty() {
            (of_dialect, note)
        } else {
            (by_kind, note)
        }
    }

    /// Find the recorded exchange that answers `req`.
    pub fn find(&self, req: &MessagesRequest) -> Option<(&Exchange, Match)> {
        self.find_as(req, req.stream())
    }

    /// [`Replay::find_as`] for a live request whose raw body is `body`, with the values
    /// the recorded run learnt from its tools paired with the live run's
    /// ([`super::rewrite::Learnt::between`]), ready to rewrite the answer.
    pub(crate) fn find_learning(
        &self,
        req: &MessagesRequest,
        body: &[u8],
        stream: bool,
    ) -> Option<(&Exchange, Match)> {
        let (i, mut m) = self.find_index(req, stream)?;
        let e = &self.entries[i];
        m.learnt = super::rewrite::Learnt::between(&e.results, req, body);
        Some((&e.exchange, m))
    }

    /// [`Replay::find`] for a request that asks for a stream when `stream` is true (a
    /// Gemini request says so in its URL, not its body).
    pub fn find_as(&self, req: &MessagesRequest, stream: bool) -> Option<(&Exchange, Match)> {
        let (i, m) = self.find_index(req, stream)?;
        Some((&self.entries[i].exchange, m))
    }

    /// [`Replay::find_as`]: the index of the entry that answers, and the match.
    fn find_index(&self, req: &MessagesRequest, stream: bool) -> Option<(usize, Match)> {
        let key = norm(&self.normalizer, &req.first_user_text());
        let has_tools = !req.tools.is_empty();
        let turn = req.turn();
        let fp = assistant_fingerprint(req, &self.normalizer);
        let (pool, thread_note) = self.pool(req.dialect, &key, has_tools);
        // Closest turn; among equals, matching history first, then the same `stream`
        // flag (the answer's shape), then the least used.
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        let best = pool.into_iter().min_by_key(|&i| {
            let e = &self.entries[i];
            (
                e.turn.abs_diff(turn),
                e.assistant_fp != fp,
                e.stream != stream,
                used.get(&i).copied().unwrap_or(0),
            )
        })?;
        *used.entry(best).or_insert(0) += 1;
        let e = &self.entries[best];
        let mut differences = Vec::new();
        if let Some(n) = thread_note {
            differences.push(n);
        }
        if e.turn != turn {
            differences.push(format!(
                "turn {turn} has no recording; used turn {}",
                e.turn
            ));
        }
        if e.assistant_fp != fp {
            differences.push(first_difference(&e.assistant_fp, &fp));
        }
        if e.stream != stream {
            differences.push(format!("stream: recorded {}, now {stream}", e.stream));
        }
        let m = Match {
            recorded_id: e.exchange.id,
            exact: differences.is_empty(),
            differences,
            converted: None,
            dropped_headers: Vec::new(),
            rewritten: Vec::new(),
            learnt: Default::default(),
        };
        Some((best, m))
    }
}

/// The assistant side of a history, normalized: one string per assistant block.
fn assistant_fingerprint(req: &MessagesRequest, n: &Normalizer) -> Vec<String> {
    let mut out = Vec::new();
    for m in req.messages.iter().filter(|m| m.role == "assistant") {
        for b in &m.content {
            match &b.kind {
                BlockKind::Text { text } => out.push(format!("text:{}", norm(n, text.trim()))),
                BlockKind::ToolUse { name, input, .. } => {
                    // Over the input's text view: a rule stops where a string does.
                    let input = n.value(input, &mut Hits::new()).replace('\n', " ");
                    out.push(format!("tool_use:{name}:{input}"))
                }
                _ => out.push(b.block_type().to_string()),
            }
        }
    }
    out
}

fn first_difference(recorded: &[String], now: &[String]) -> String {
    let i = recorded
        .iter()
        .zip(now)
        .position(|(a, b)| a != b)
        .unwrap_or(recorded.len().min(now.len()));
    let show =
        |v: Option<&String>| v.map_or("(none)".to_string(), |s| s.chars().take(120).collect());
    format!(
        "assistant block {i} differs: recorded {:?}, now {:?}",
        show(recorded.get(i)),
        show(now.get(i))
    )
}

/// A recorded response body in the other shape: a recorded stream assembled into the
/// one message a non-streaming request gets, or a recorded message emitted as the events
/// a streaming request gets. Returns the body, its content type and what was done; or
/// why the recorded body makes no whole message.
fn reshape(body: &[u8], recorded_sse: bool) -> Result<(Vec<u8>, &'static str, String), String> {
    if recorded_sse {
        let message = crate::api::sse::assemble_message(body)?;
        let bytes = serde_json::to_vec(&message).map_err(|e| e.to_string())?;
        let what = "the recorded stream was assembled into one message (stream: false)";
        return Ok((bytes, "application/json", what.into()));
    }
    let message: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("the recorded body is not JSON: {e}"))?;
    let reply = super::reply::Reply::from_message(&message)
        .ok_or("the recorded body is no message object (`type` is not `message`)")?;
    let bytes = reply.to_sse_events().concat().into_bytes();
    let what = "the recorded message was emitted as a stream of events (stream: true)";
    Ok((bytes, "text/event-stream; charset=utf-8", what.into()))
}

/// Answer from a recording: the matched exchange's status, headers and body, re-emitted
/// piece by piece with its recorded timing (or as the replay's timing says), reshaped when
/// the request's `stream` flag asks for the other shape ([`reshape`]). Recorded headers
/// HTTP/1.1 cannot carry are dropped and named in `notes.replay.dropped_headers`.
pub(crate) async fn answer(replay: &Replay, draft: Draft, req: &MessagesRequest) -> Response {
    answer_as(replay, draft, req, req.stream()).await
}

/// [`answer`] for a request that asks for a stream when `stream` is true (a Gemini
/// request says so in its URL).
pub(crate) async fn answer_as(
    replay: &Replay,
    mut draft: Draft,
    req: &MessagesRequest,
    stream: bool,
) -> Response {
    let rid = format!("req_agentwire_{:06}", draft.id);
    // The live body is read in place (decoded only if it was compressed).
    let found = replay.find_learning(req, &request_body(&draft.request).bytes, stream);
    let Some((recorded, mut m)) = found else {
        if req.dialect != Dialect::Messages {
            let msg = match req.dialect {
                Dialect::Responses => "the replayed trace has no Responses exchange with an answer",
                _ => "the replayed trace has no exchange of this API with an answer",
            };
            return super::reply::openai_error_response(draft, 500, msg, &rid, "replay_empty");
        }
        let msg = "the replayed trace has no /v1/messages exchange with a 200 response";
        return error_response(draft, 500, msg, &rid, "replay_empty");
    };
    draft.notes.insert(
        "synthesized".into(),
        serde_json::json!({"by": "agentwire replay",
            "usage": format!("recorded for exchange {} of the replayed trace", m.recorded_id)}),
    );
    let note = |draft: &mut Draft, m: &Match| {
        draft
            .notes
            .insert("replay".into(), serde_json::to_value(m).unwrap_or_default());
    };
    // A recorded WebSocket answer is first made the HTTP answer it stands for.
    let from_ws =
        (recorded.websocket.is_some()).then(|| super::replay_responses::as_http(recorded, stream));
    let answered = match &from_ws {
        Some((resp, what)) => Ok((resp, StatusCode::OK, Shaped::converted(resp, what))),
        None => recorded_answer(recorded, m.recorded_id).and_then(|(resp, status)| {
            let shaped = shaped(m.recorded_id, resp, stream, req.dialect)?;
            Ok((resp, status, shaped))
        }),
    };
    let (resp, status, mut shaped) = match answered {
        Ok(a) => a,
        Err((status, msg, kind)) => {
            note(&mut draft, &m);
            return error_response(draft, status, &msg, &rid, kind);
        }
    };
    relearn(resp, &mut shaped, &mut m);
    m.converted = shaped.converted.clone();
    let mut sent = sent_headers(resp, shaped.content_type, &rid);
    m.dropped_headers = std::mem::take(&mut sent.dropped);
    note(&mut draft, &m);
    let limit_us = recorded.duration_us().and_then(|d| u64::try_from(d).ok());
    send_recorded(draft, status, sent, shaped, limit_us, replay.timing)
}

/// Rewrite in `shaped` the recorded run's values that the live run has its own of
/// ([`super::rewrite`]), saying so in `m`: what was replaced, and each recorded value with
/// no counterpart (then the match is not exact). A body sent as recorded under a
/// `content-encoding` is not rewritten: the values it names are checked on its decoded
/// text and named.
fn relearn(resp: &HttpResponse, shaped: &mut Shaped, m: &mut Match) {
    let encoded = shaped.content_type.is_none() && resp.headers.get("content-encoding").is_some();
    let decoded;
    let body: &[u8] = if encoded {
        decoded = crate::api::response_body(resp).bytes.into_owned();
        &decoded
    } else {
        &shaped.body
    };
    let Some(r) = super::rewrite::rewrite(body, &shaped.chunks, &m.learnt) else {
        return;
    };
    if encoded && !r.replaced.is_empty() {
        m.differences.push(format!(
            "the recorded body is compressed and was sent as recorded: recorded values not rewritten: {}",
            r.replaced.join(", ")
        ));
    } else if !encoded {
        shaped.body = Bytes::from(r.body);
        shaped.chunks = r.chunks;
        m.rewritten = r.replaced;
    }
    for v in r.stale {
        m.differences.push(format!(
            "stale value {v:?}: the recorded run learnt it from a tool result, this run has no counterpart"
        ));
    }
    m.exact = m.differences.is_empty();
}

/// Send `shaped` (with status and headers `sent`) cut at its recorded piece boundaries,
/// each piece at its recorded offset (clamped to `limit_us`) as `timing` says, recorded as
/// it goes.
fn send_recorded(
    draft: Draft,
    status: StatusCode,
    sent: Sendable,
    shaped: Shaped,
    limit_us: Option<u64>,
    timing: Timing,
) -> Response {
    let body = shaped.body;
    let pieces: Vec<(Duration, Bytes)> = pieces(body.len(), &shaped.chunks, limit_us, timing)
        .into_iter()
        .map(|(d, r)| (d, body.slice(r)))
        .collect();
    let start = tokio::time::Instant::from_std(draft.clock);
    let source = futures_util::stream::unfold(pieces.into_iter(), move |mut it| async move {
        let (delay, b) = it.next()?;
        tokio::time::sleep_until(start + delay).await;
        Some((Ok::<Bytes, super::draft::StreamFailure>(b), it))
    });
    let stream = RecordingStream::new(draft, status.as_u16(), sent.text, Box::pin(source));
    // Built from checked parts: no builder error can turn into an empty answer.
    let mut response = Response::new(AxumBody::from_stream(stream));
    *response.status_mut() = status;
    for (k, v) in sent.pairs {
        response.headers_mut().append(k, v);
    }
    response
}

/// Why a recording cannot answer: the status to answer, the message and the error kind.
type Unanswerable = (u16, String, &'static str);

/// The recorded response of exchange `id` with its status, or why it cannot answer (no
/// response, a status that is no HTTP status).
fn recorded_answer(
    recorded: &Exchange,
    id: u64,
) -> Result<(&HttpResponse, StatusCode), Unanswerable> {
    let Some(resp) = recorded.response.as_ref() else {
        let msg = format!("recorded exchange #{id} has no response");
        return Err((500, msg, "replay_empty"));
    };
    let Ok(status) = StatusCode::from_u16(resp.status) else {
        let msg = format!(
            "recorded exchange #{id} has status {}, which is no HTTP status (100-999); fix or remove that exchange in the replayed trace",
            resp.status
        );
        return Err((500, msg, "replay_bad_recording"));
    };
    Ok((resp, status))
}

/// A recorded body in the shape a request asks for.
struct Shaped {
    body: Bytes,
    /// Its pieces, `(offset_us, length_bytes)` as recorded chunks are.
    chunks: Vec<(u64, u64)>,
    /// The content type of a reshaped body (`None`: as recorded).
    content_type: Option<&'static str>,
    /// What reshaping did, if it was needed.
    converted: Option<String>,
}

impl Shaped {
    /// The body of a response made from another transport's recording, as `what` says.
    fn converted(resp: &HttpResponse, what: &str) -> Shaped {
        Shaped {
            body: Bytes::from(resp.body.bytes.clone()),
            chunks: resp.chunks.clone(),
            content_type: None,
            converted: Some(what.to_string()),
        }
    }
}

/// The recorded body of `resp` (of exchange `id`, a `dialect` answer) as is when its
/// shape (event stream or one message) is what the request asks for (`wants_stream`),
/// else reshaped ([`reshape`], or for Responses
/// [`super::replay_responses::reshape`]); or why it cannot be reshaped.
fn shaped(
    id: u64,
    resp: &HttpResponse,
    wants_stream: bool,
    dialect: Dialect,
) -> Result<Shaped, Unanswerable> {
    let decoded = crate::api::response_body(resp);
    let recorded_sse = crate::api::sse::looks_like_event_stream(&decoded.bytes)
        || resp
            .headers
            .get("content-type")
            .is_some_and(is_event_stream);
    if recorded_sse == wants_stream {
        return Ok(Shaped {
            body: Bytes::from(resp.body.bytes.clone()),
            chunks: resp.chunks.clone(),
            content_type: None,
            converted: None,
        });
    }
    let reshaped = match &decoded.error {
        Some(e) => Err(e.clone()),
        None if dialect == Dialect::Responses => {
            super::replay_responses::reshape(&decoded.bytes, recorded_sse)
        }
        None if dialect == Dialect::ChatCompletions => {
            super::replay_chat::reshape(&decoded.bytes, recorded_sse)
        }
        None => reshape(&decoded.bytes, recorded_sse),
    };
    match reshaped {
        Ok((bytes, ct, what)) => {
            // The whole body at the recorded end of the response.
            let end = resp.chunks.iter().map(|c| c.0).max().unwrap_or(0);
            Ok(Shaped {
                chunks: vec![(end, bytes.len() as u64)],
                body: Bytes::from(bytes),
                content_type: Some(ct),
                converted: Some(what),
            })
        }
        Err(why) => {
            let (was, now) = if recorded_sse {
                ("a stream", "one message (stream: false)")
            } else {
                ("one message", "a stream (stream: true)")
            };
            let msg = format!(
                "recorded exchange #{id} answered with {was} and cannot be reshaped into {now}: {why}; replay a trace recorded with the client's current stream setting"
            );
            Err((400, msg, "replay_shape"))
        }
    }
}

/// The headers the answer carries: the recorded ones HTTP/1.1 can carry, minus framing
/// and hop-by-hop fields (and a reshaped body's old type and coding), plus the new
/// content type and a request id when the recording has none.
fn sent_headers(resp: &HttpResponse, content_type: Option<&'static str>, rid: &str) -> Sendable {
    // Recorded names keep their wire case (`Content-Length` from a packet capture): the
    // framing of the new response is hyper's; a reshaped body has its own type and coding.
    let own_type = |k: &str| {
        content_type.is_some()
            && ["content-type", "content-encoding"]
                .iter()
                .any(|h| k.eq_ignore_ascii_case(h))
    };
    let kept = (resp.headers.iter()).filter(|(k, _)| !fields::skip_response(k) && !own_type(k));
    let mut sent = sendable(kept);
    let mut extra: Vec<(&'static str, String)> = Vec::new();
    if let Some(ct) = content_type {
        extra.push(("content-type", ct.to_string()));
    }
    if sent.text.get("request-id").is_none() {
        extra.push(("request-id", rid.to_string()));
    }
    for (k, v) in extra {
        if let Ok(value) = HeaderValue::from_str(&v) {
            sent.pairs.push((HeaderName::from_static(k), value));
            sent.text.push((k.to_string(), v));
        }
    }
    sent
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_parse() {
        assert_eq!(Timing::parse("none"), Some(Timing::None));
        assert_eq!(Timing::parse("x4"), Some(Timing::Speed(4.0)));
        assert_eq!(Timing::parse("x0"), None);
        assert_eq!(Timing::Speed(4.0).scale(4000), Duration::from_micros(1000));
    }

    #[test]
    fn matching_uses_the_one_normalizer() {
        let n = Normalizer::defaults();
        assert_eq!(
            norm(&n, "ID: bj69g8yir. Output is being written to: /tmp/claude-0/x/ff545e2f-b8fe-4a79-a3d8-73994fb948fc/tasks/bj69g8yir.output"),
            "ID: <task-id>. Output is being written to: <tmp-path>"
        );
        assert_eq!(
            norm(&n, "<total_tokens>14988946 tokens left</total_tokens>"),
            "<total_tokens><n> tokens left</total_tokens>"
        );
    }

    #[test]
    fn coverage_counts_every_line_and_says_why_the_rest_is_not_replayed() {
        let c = Coverage {
            exchanges: 1,
            unreadable: 2,
            replayed: 1,
        };
        assert_eq!(
            c.to_string(),
            "replaying 1 of 3 recorded requests; 2 lines unreadable"
        );
        let c = Coverage {
            exchanges: 4,
            unreadable: 1,
            replayed: 2,
        };
        assert_eq!(
            c.to_string(),
            "replaying 2 of 5 recorded requests; 1 line unreadable; 2 not a /v1/messages request answered 200"
        );
        assert!(c.check(std::path::Path::new("t.jsonl")).is_ok());
        let (r, c) = Replay::from_trace_counted(Trace::default(), Timing::None);
        assert!(r.is_empty());
        assert_eq!(c.to_string(), "replaying 0 of 0 recorded requests");
        assert_eq!(
            c.check(std::path::Path::new("t.jsonl"))
                .unwrap_err()
                .to_string(),
            "t.jsonl: no /v1/messages exchange with a 200 response to replay"
        );
    }
}
