//! The canonical view of an exchange that every command reads: its session and thread,
//! and for a model request of any dialect ([`Dialect`]) the canonical request with its
//! turn, beta set and whether its headers were recorded. `show`, `diff`, `analyze`,
//! `matrix` and `record`'s summary all place exchanges through one [`Canonicalizer`], so
//! they agree on what a session and a thread are.
//!
//! A Responses request that continues a previous response (`previous_response_id`, as
//! Codex sends on its WebSocket route) is rebuilt into the whole conversation in arrival
//! order ([`super::responses::chain`]); [`parse`] leaves it to [`Canonicalizer::place`].

use super::betas::BetaSet;
use super::dialect::Dialect;
use super::responses::chain::Chains;
use super::session::{Placement, SessionInfo, Sessions};
use super::tools::ToolView;
use serde_json::Value;

use super::{sse, ApiError, MessagesRequest, ResponseBody, ResponseMessage};
use crate::http::is_event_stream;
use crate::trace::{Exchange, Trace};

/// An exchange's response body, decoded by the one content decoder
/// ([`super::response_body`]) and read by its `content-type` (a message assembled from SSE
/// or JSON, an API error, or other); `None` when there was no response.
///
/// A content coding that could not be removed is said, as for a request body: first among
/// a message's `stream_problems` when what decoded before the failure still reads as one
/// (a body cut short), else as [`ResponseBody::Undecodable`].
pub fn exchange_response(x: &Exchange) -> Option<ResponseBody> {
    exchange_response_with_items(x).map(|(b, _)| b)
}

/// [`exchange_response`], and for a Responses answer its output items as sent (what a
/// continuation carries; empty for other dialects).
pub fn exchange_response_with_items(x: &Exchange) -> Option<(ResponseBody, Vec<Value>)> {
    let resp = x.response.as_ref()?;
    let ct = resp.headers.get("content-type");
    let decoded = super::response_body(resp);
    let (body, items) = match Dialect::of(x) {
        Some(Dialect::Responses) => read_responses_body(ct, &decoded.bytes, x.websocket.is_some()),
        Some(Dialect::Gemini) => (super::gemini::read_body(ct, &decoded.bytes), Vec::new()),
        Some(Dialect::ChatCompletions) => (
            super::chat::stream::read_body(ct, &decoded.bytes),
            Vec::new(),
        ),
        _ => (read_response(ct, &decoded.bytes), Vec::new()),
    };
    let body = with_coding_problem(body, decoded.error.filter(|_| !resp.body.truncated));
    Some((body, items))
}

/// A response body read despite a content coding that could not be removed, with that
/// said (`reason` from the decoder).
fn with_coding_problem(body: ResponseBody, reason: Option<String>) -> ResponseBody {
    // A body the recorder cut at its size limit cannot decode to its end: that is the
    // cut, already marked (`truncated`), not a fault of the body.
    let Some(reason) = reason else {
        return body;
    };
    let reason = format!("response body: {reason}");
    match body {
        ResponseBody::Message(mut m) => {
            m.stream_problems.insert(0, reason);
            ResponseBody::Message(m)
        }
        _ => ResponseBody::Undecodable { reason },
    }
}

/// Interpret a Responses answer (already decoded): the server's messages of a WebSocket
/// exchange, an SSE stream, a response object, or an OpenAI error body
/// (`{"error":{"message","type","code"}}`); with the output items as sent.
pub fn read_responses_body(
    content_type: Option<&str>,
    body: &[u8],
    websocket: bool,
) -> (ResponseBody, Vec<Value>) {
    use super::responses::stream;
    let assembler = if websocket {
        Some(stream::assembler_of_messages(body))
    } else if sse::looks_like_event_stream(body) || content_type.is_some_and(is_event_stream) {
        Some(stream::assembler_of_sse(body))
    } else {
        None
    };
    if let Some(a) = assembler {
        let (m, items) = a.finish_with_items();
        return (ResponseBody::Message(Box::new(m)), items);
    }
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return (ResponseBody::Other, Vec::new());
    };
    if let Some(e) = v.get("error").filter(|e| e.is_object()) {
        let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let kind = e.get("type").or(e.get("code")).and_then(Value::as_str);
        return (
            ResponseBody::Error {
                error_type: kind.unwrap_or("").to_string(),
                message: s("message"),
            },
            Vec::new(),
        );
    }
    if v.get("object").and_then(Value::as_str) == Some("response") || v.get("output").is_some() {
        let items = v
            .get("output")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        return (
            ResponseBody::Message(Box::new(stream::from_json(&v))),
            items,
        );
    }
    (ResponseBody::Other, Vec::new())
}

/// An exchange kept with a bad part: a stream event skipped, or a response body that
/// cannot be decoded. The exchange stays in the trace; a command reading it counts the
/// problem as it counts an unreadable line, and the run is degraded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExchangeProblem {
    /// The file the exchange was read from (a file under a directory input; ids repeat
    /// across a directory's files).
    pub file: std::path::PathBuf,
    /// The exchange's id.
    pub id: u64,
    /// What is wrong, as [`exchange_response`] says it.
    pub problem: String,
}

/// The bad parts of a trace's responses, in exchange order: each stream problem of a
/// message ([`ResponseMessage::stream_problems`]) and each body that cannot be decoded
/// ([`ResponseBody::Undecodable`]). The trace's unreadable lines are not here: they are
/// [`Trace::problems`].
pub fn problems(trace: &Trace) -> Vec<ExchangeProblem> {
    let mut out = Vec::new();
    for (i, x) in trace.exchanges.iter().enumerate() {
        let found = match exchange_response(x) {
            Some(ResponseBody::Message(m)) => m.stream_problems,
            Some(ResponseBody::Undecodable { reason }) => vec![reason],
            _ => continue,
        };
        let file = trace.file_of(i);
        out.extend(found.into_iter().map(|problem| ExchangeProblem {
            file: file.to_path_buf(),
            id: x.id,
            problem,
        }));
    }
    out
}

/// Interpret a `/v1/messages` response body (already decoded: see [`super::decode`]).
/// `content_type` decides SSE vs JSON ([`is_event_stream`]); a body that starts like an
/// event stream ([`sse::looks_like_event_stream`]) is treated as SSE whatever the header
/// says.
pub fn read_response(content_type: Option<&str>, body: &[u8]) -> ResponseBody {
    let looks_sse = sse::looks_like_event_stream(body);
    if looks_sse || content_type.is_some_and(is_event_stream) {
        return ResponseBody::Message(Box::new(sse::assemble(body)));
    }
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return ResponseBody::Other;
    };
    match v.get("type").and_then(Value::as_str) {
        Some("message") => ResponseBody::Message(Box::new(ResponseMessage::from_value(&v))),
        Some("error") => ResponseBody::Error {
            error_type: v
                .pointer("/error/type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            message: v
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        },
        _ => ResponseBody::Other,
    }
}

/// A Messages request in canonical form.
#[derive(Clone, Debug)]
pub struct CanonicalRequest {
    /// The parsed body.
    pub req: MessagesRequest,
    /// Turn within its thread: assistant replies in the history.
    pub turn: usize,
    /// The `anthropic-beta` set (unknown when headers were not recorded).
    pub betas: BetaSet,
    /// False when the request was recorded without header lines (a bare body).
    pub headers_known: bool,
    /// The body with its content coding removed ([`super::decode`]), when it had one, or
    /// the whole conversation rebuilt from a `previous_response_id` chain: the spans of
    /// `req` index it. `None`: they index the body as recorded.
    pub decoded: Option<Vec<u8>>,
    /// A Responses prewarm (`generate: false`): it sets up state and generates nothing,
    /// so it is not a turn of the conversation.
    pub prewarm: bool,
    /// For a request rebuilt from a chain: the previous response it continued from.
    pub rebuilt_from: Option<String>,
    /// Why a request that names a previous response could not be rebuilt (read as sent).
    pub chain_problem: Option<String>,
}

impl CanonicalRequest {
    /// Canonical form of a body sent with `headers`.
    ///
    /// Errors: [`ApiError`] when the body is not a JSON object.
    pub fn parse(body: &[u8], headers: &[(String, String)]) -> Result<Self, ApiError> {
        Self::of(MessagesRequest::parse(body)?, headers)
    }

    fn of(req: MessagesRequest, headers: &[(String, String)]) -> Result<Self, ApiError> {
        let prewarm = req.param("generate").and_then(Value::as_bool) == Some(false);
        Ok(CanonicalRequest {
            turn: req.turn(),
            betas: BetaSet::from_headers_of(req.dialect, headers),
            headers_known: !headers.is_empty(),
            req,
            decoded: None,
            prewarm,
            rebuilt_from: None,
            chain_problem: None,
        })
    }

    /// The bytes the spans of `req` index: the decoded body, or the body of `x` as
    /// recorded.
    pub fn body<'a>(&'a self, x: &'a Exchange) -> &'a [u8] {
        self.decoded.as_deref().unwrap_or(&x.request.body.bytes)
    }

    /// The tools by role (loaded, deferred, announced, placeholders).
    pub fn tools(&self) -> ToolView {
        ToolView::of(&self.req)
    }
}

/// One exchange, placed.
#[derive(Debug)]
pub struct View {
    /// Session and thread.
    pub place: Placement,
    /// The canonical request, for a Messages exchange whose body parsed.
    pub request: Option<CanonicalRequest>,
    /// Why a Messages exchange's body could not be read.
    pub error: Option<ApiError>,
}

/// What [`parse`] read from one exchange, before it is placed.
#[derive(Debug, Default)]
pub struct Parsed {
    /// The canonical request, for a Messages exchange whose body parsed.
    pub request: Option<CanonicalRequest>,
    /// Why a Messages exchange's body could not be read.
    pub error: Option<ApiError>,
    /// Digests of the request's messages (thread matching), when it parsed.
    pub digests: Option<Vec<super::thread::MessageDigest>>,
    /// A Responses request that continues a previous response: it is read by
    /// [`Canonicalizer::place`], which holds the chain.
    pub continues: bool,
}

/// The stateless half of [`Canonicalizer::view`]: the canonical request of a Messages
/// exchange (its body decoded through the one decoder), or why it cannot be read. Needs
/// no other exchange, so callers may run it on many exchanges at once.
pub fn parse(x: &Exchange) -> Parsed {
    let Some(dialect) = Dialect::of(x) else {
        return Parsed::default();
    };
    let decoded = super::decode::request_body(&x.request);
    let coding_error = decoded.error;
    let body = decoded.bytes;
    if dialect == Dialect::Responses && names_previous_response(&body) {
        return Parsed {
            continues: true,
            ..Parsed::default()
        };
    }
    // A body read from a trace's `"json"` member (or recognised as a bare body) was
    // checked while reading.
    let raw = &x.request.body;
    let known_json = std::ptr::eq(body.as_ref(), raw.bytes.as_slice()) && raw.is_known_json();
    let parsed = if known_json {
        MessagesRequest::parse_known_json_as(dialect, &body)
    } else {
        MessagesRequest::parse_as(dialect, &body)
    }
    .map(|req| match dialect {
        Dialect::Gemini => super::gemini::with_path(req, x.path()),
        _ => req,
    })
    .and_then(|req| CanonicalRequest::of(req, x.sent_headers()));
    match parsed {
        Ok(mut r) => {
            if let std::borrow::Cow::Owned(decoded) = body {
                r.decoded = Some(decoded);
            }
            Parsed {
                digests: Some(super::thread::message_digests(&r.req)),
                request: Some(r),
                error: None,
                continues: false,
            }
        }
        Err(e) => Parsed {
            request: None,
            error: Some(with_coding_error(e, coding_error)),
            digests: None,
            continues: false,
        },
    }
}

/// True when a Responses body names a previous response (a quick look first: most bodies
/// do not mention it at all).
fn names_previous_response(body: &[u8]) -> bool {
    memchr::memmem::find(body, b"\"previous_response_id\"").is_some()
        && serde_json::from_slice::<Value>(body)
            .ok()
            .is_some_and(|v| Chains::previous_of(&v).is_some())
}

/// The canonical request of `body` (the request of `x`, decoded or rebuilt), the spans
/// indexing `body`; `problem`: why a continuation could not be rebuilt.
fn parse_body(x: &Exchange, dialect: Dialect, body: Vec<u8>, problem: Option<String>) -> Parsed {
    match MessagesRequest::parse_as(dialect, &body)
        .and_then(|req| CanonicalRequest::of(req, x.sent_headers()))
    {
        Ok(mut r) => {
            r.decoded = Some(body);
            r.chain_problem = problem;
            Parsed {
                digests: Some(super::thread::message_digests(&r.req)),
                request: Some(r),
                error: None,
                continues: false,
            }
        }
        Err(e) => Parsed {
            error: Some(e),
            ..Parsed::default()
        },
    }
}

/// A parse error of a body whose content coding could not be removed says so first: the
/// bytes parsed were the still-encoded ones (a gzip body cut short reads as "invalid
/// UTF-8" otherwise).
fn with_coding_error(e: ApiError, coding: Option<String>) -> ApiError {
    match (e, coding) {
        (
            ApiError::InvalidJson {
                offset,
                line,
                column,
                message,
            },
            Some(c),
        ) => ApiError::InvalidJson {
            offset,
            line,
            column,
            message: format!("{c}, so the still-encoded bytes were read: {message}"),
        },
        (e, _) => e,
    }
}

/// Places exchanges into sessions and threads, in arrival order.
#[derive(Default)]
pub struct Canonicalizer {
    sessions: Sessions,
    chains: Chains,
}

impl Canonicalizer {
    /// Nothing placed yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The next exchanges come from another input or recording context (a new file, a
    /// trace header line): sessions without client ids do not continue across it.
    pub fn new_context(&mut self) {
        self.sessions.new_scope();
    }

    /// Place one exchange: [`parse`] then [`Canonicalizer::place`].
    pub fn view(&mut self, x: &Exchange) -> View {
        let parsed = parse(x);
        self.place(x, parsed)
    }

    /// Place one exchange whose body [`parse`] read (possibly on another thread), in
    /// arrival order.
    pub fn place(&mut self, x: &Exchange, parsed: Parsed) -> View {
        let parsed = if parsed.continues {
            self.continued(x)
        } else {
            parsed
        };
        self.remember_response(x, parsed.request.as_ref());
        let Parsed {
            request,
            error,
            digests,
            ..
        } = parsed;
        // A prewarm says nothing yet: it joins its session (by its ids) but no thread.
        let req = request.as_ref().filter(|r| !r.prewarm).map(|r| &r.req);
        let digests = match req {
            Some(r) => digests.or_else(|| Some(super::thread::message_digests(r))),
            None => None,
        };
        let place = self
            .sessions
            .place_digested(&x.request.headers, &x.source, req, digests);
        if x.response.as_ref().is_some_and(|r| r.status == 200) {
            self.sessions.answered(&place);
        }
        View {
            place,
            request,
            error,
        }
    }

    /// Read a Responses request that continues a previous response: rebuilt from the
    /// chain when the trace holds it, else as sent with the problem said.
    fn continued(&self, x: &Exchange) -> Parsed {
        let decoded = super::decode::request_body(&x.request);
        let Ok(v) = serde_json::from_slice::<Value>(&decoded.bytes) else {
            return parse_body(x, Dialect::Responses, decoded.bytes.into_owned(), None);
        };
        match self.chains.rebuild(&v) {
            Ok(r) => {
                let problem = r.missing_root.map(|root| {
                    format!(
                        "rebuilt from the responses this trace holds: what came before {root} was not recorded"
                    )
                });
                let mut p = parse_body(x, Dialect::Responses, r.body, problem);
                if let Some(c) = &mut p.request {
                    c.rebuilt_from = Some(r.previous);
                }
                p
            }
            Err(problem) => parse_body(
                x,
                Dialect::Responses,
                decoded.bytes.into_owned(),
                Some(problem),
            ),
        }
    }

    /// Keep a Responses exchange's answer for the requests that may continue from it:
    /// WebSocket messages, and HTTP requests that continue a response or ask the API to
    /// store theirs (`store` is true unless sent false).
    fn remember_response(&mut self, x: &Exchange, request: Option<&CanonicalRequest>) {
        if Dialect::of(x) != Some(Dialect::Responses) {
            return;
        }
        let stored = request
            .and_then(|r| r.req.param("store"))
            .and_then(Value::as_bool)
            != Some(false);
        let continues =
            request.is_some_and(|r| r.rebuilt_from.is_some() || r.chain_problem.is_some());
        if x.websocket.is_none() && !stored && !continues {
            return;
        }
        let Some((ResponseBody::Message(m), items)) = exchange_response_with_items(x) else {
            return;
        };
        let Some(id) = m.id.as_deref() else { return };
        let decoded = super::decode::request_body(&x.request);
        if let Ok(v) = serde_json::from_slice::<Value>(&decoded.bytes) {
            self.chains.record(id, &v, items);
        }
    }

    /// Session `i`.
    pub fn session(&self, i: usize) -> &SessionInfo {
        self.sessions.info(i)
    }

    /// All sessions so far.
    pub fn sessions(&self) -> &Sessions {
        &self.sessions
    }
}

#[cfg(test)]
mod tests {
    use super::super::decode::test_gzip as gzip;
    use super::*;

    #[test]
    fn non_streaming_message_and_error() {
        let body = br#"{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}"#;
        match read_response(Some("application/json"), body) {
            ResponseBody::Message(m) => {
                assert_eq!(m.content[0].text(), Some("ok"));
                assert_eq!(m.stop_reason.as_deref(), Some("end_turn"));
                assert!(m.complete && !m.streamed);
                assert_eq!(m.usage.input_tokens, Some(3));
            }
            other => panic!("{other:?}"),
        }
        let err = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert!(matches!(read_response(None, err),
            ResponseBody::Error { error_type, .. } if error_type == "overloaded_error"));
    }

    #[test]
    fn a_body_whose_coding_cannot_be_removed_says_so_not_just_invalid_utf8() {
        let body = br#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}"#;
        let headers = [("content-encoding", "gzip")];
        // Whole: decoded and parsed.
        let whole = crate::trace::test_exchange("POST", "/v1/messages", &headers, &gzip(body));
        assert!(parse(&whole).request.is_some());
        // Cut short: the error names the coding before the JSON problem.
        let mut cut = gzip(body);
        cut.truncate(cut.len() / 2);
        let x = crate::trace::test_exchange("POST", "/v1/messages", &headers, &cut);
        let e = parse(&x)
            .error
            .expect("a cut gzip body does not parse")
            .to_string();
        assert!(e.contains("cannot decode gzip body"), "{e}");
        assert!(e.contains("still-encoded bytes"), "{e}");
    }

    fn with_response(content_type: &str, body: Vec<u8>) -> Exchange {
        let req = br#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}]}"#;
        let mut x = crate::trace::test_exchange("POST", "/v1/messages", &[], req);
        x.response = Some(crate::trace::HttpResponse {
            status: 200,
            version: "HTTP/1.1".into(),
            headers: crate::trace::test_headers(&[
                ("content-type", content_type),
                ("content-encoding", "gzip"),
            ]),
            body: crate::trace::Body::new(body),
            chunks: vec![],
            first_byte_at: None,
        });
        x
    }

    #[test]
    fn a_response_whose_coding_cannot_be_removed_says_so_instead_of_reading_as_nothing() {
        // A JSON reply whose gzip is cut short: it used to read as "other", silently.
        let reply = br#"{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}"#;
        let whole = with_response("application/json", gzip(reply));
        assert!(
            matches!(exchange_response(&whole), Some(ResponseBody::Message(m)) if m.stream_problems.is_empty())
        );
        let mut cut = gzip(reply);
        cut.truncate(cut.len() / 2);
        match exchange_response(&with_response("application/json", cut)) {
            Some(ResponseBody::Undecodable { reason }) => {
                assert!(reason.contains("cannot decode gzip body"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
        // An event stream that is not gzip at all though the header says so.
        let sse = b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n";
        match exchange_response(&with_response("text/event-stream", sse.to_vec())) {
            Some(ResponseBody::Message(m)) => {
                assert!(
                    m.stream_problems[0].contains("gzip"),
                    "{:?}",
                    m.stream_problems
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn problems_lists_each_bad_part_of_each_response_in_exchange_order() {
        let reply = br#"{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}"#;
        let mut cut = gzip(reply);
        cut.truncate(cut.len() / 2);
        let sse = b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n";
        let mut xs = vec![
            with_response("application/json", gzip(reply)),
            with_response("application/json", cut),
            with_response("text/event-stream", sse.to_vec()),
        ];
        for (i, x) in xs.iter_mut().enumerate() {
            x.id = i as u64;
        }
        let trace = Trace {
            path: "t.jsonl".into(),
            exchanges: xs,
            ..Trace::default()
        };
        let got = problems(&trace);
        let ids: Vec<u64> = got.iter().map(|p| p.id).collect();
        assert_eq!(ids[0], 1, "{got:?}");
        assert!(ids[1..].iter().all(|&id| id == 2), "{got:?}");
        assert!(
            got[0].problem.contains("cannot decode gzip body"),
            "{got:?}"
        );
        assert!(got[1].problem.contains("gzip"), "{got:?}");
        assert!(got
            .iter()
            .all(|p| p.file == std::path::Path::new("t.jsonl")));
    }
}
