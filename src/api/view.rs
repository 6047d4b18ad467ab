//! The canonical view of an exchange that every command reads: its session and thread,
//! and for a `POST /v1/messages` the parsed request with its turn, beta set and whether
//! its headers were recorded. `show`, `diff`, `analyze`, `matrix` and `record`'s summary
//! all place exchanges through one [`Canonicalizer`], so they agree on what a session and
//! a thread are.

use super::betas::BetaSet;
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
    let resp = x.response.as_ref()?;
    let ct = resp.headers.get("content-type");
    let decoded = super::response_body(resp);
    let body = read_response(ct, &decoded.bytes);
    // A body the recorder cut at its size limit cannot decode to its end: that is the
    // cut, already marked (`truncated`), not a fault of the body.
    let Some(reason) = decoded.error.filter(|_| !resp.body.truncated) else {
        return Some(body);
    };
    let reason = format!("response body: {reason}");
    Some(match body {
        ResponseBody::Message(mut m) => {
            m.stream_problems.insert(0, reason);
            ResponseBody::Message(m)
        }
        _ => ResponseBody::Undecodable { reason },
    })
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
    /// The body with its content coding removed ([`super::decode`]), when it had one:
    /// the spans of `req` index it. `None`: they index the body as recorded.
    pub decoded: Option<Vec<u8>>,
}

impl CanonicalRequest {
    /// Canonical form of a body sent with `headers`.
    ///
    /// Errors: [`ApiError`] when the body is not a JSON object.
    pub fn parse(body: &[u8], headers: &[(String, String)]) -> Result<Self, ApiError> {
        Self::of(MessagesRequest::parse(body)?, headers)
    }

    fn of(req: MessagesRequest, headers: &[(String, String)]) -> Result<Self, ApiError> {
        Ok(CanonicalRequest {
            turn: req.turn(),
            betas: BetaSet::from_headers(headers),
            headers_known: !headers.is_empty(),
            req,
            decoded: None,
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
}

/// The stateless half of [`Canonicalizer::view`]: the canonical request of a Messages
/// exchange (its body decoded through the one decoder), or why it cannot be read. Needs
/// no other exchange, so callers may run it on many exchanges at once.
pub fn parse(x: &Exchange) -> Parsed {
    if !x.is_messages() {
        return Parsed::default();
    }
    let decoded = super::decode::request_body(&x.request);
    let coding_error = decoded.error;
    let body = decoded.bytes;
    // A body read from a trace's `"json"` member (or recognised as a bare body) was
    // checked while reading.
    let raw = &x.request.body;
    let known_json = std::ptr::eq(body.as_ref(), raw.bytes.as_slice()) && raw.is_known_json();
    let parsed = if known_json {
        MessagesRequest::parse_known_json(&body)
            .and_then(|req| CanonicalRequest::of(req, &x.request.headers))
    } else {
        CanonicalRequest::parse(&body, &x.request.headers)
    };
    match parsed {
        Ok(mut r) => {
            if let std::borrow::Cow::Owned(decoded) = body {
                r.decoded = Some(decoded);
            }
            Parsed {
                digests: Some(super::thread::message_digests(&r.req)),
                request: Some(r),
                error: None,
            }
        }
        Err(e) => Parsed {
            request: None,
            error: Some(with_coding_error(e, coding_error)),
            digests: None,
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
        let Parsed {
            request,
            error,
            digests,
        } = parsed;
        let req = request.as_ref().map(|r| &r.req);
        let digests = digests.or_else(|| req.map(super::thread::message_digests));
        let place = self
            .sessions
            .place_digested(&x.request.headers, &x.source, req, digests);
        View {
            place,
            request,
            error,
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
