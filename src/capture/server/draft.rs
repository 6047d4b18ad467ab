//! An exchange being answered: the recorded request plus the response as it goes out.
//! A streamed response is recorded when its last declared byte was sent (Content-Length,
//! or no body for HEAD, 1xx, 204 and 304) or its stream ends — or, if the client goes away
//! or the server stops first, when the stream is dropped — so no exchange is ever lost,
//! and only a real early end is recorded as one.

use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Instant;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use futures_util::Stream;

use super::recorder::Recorder;
use crate::http::Headers;
use crate::trace::{Body, Exchange, ExchangeError, HttpRequest, HttpResponse, Source};

/// A request that has been read and is waiting for its response. If it is dropped
/// unfinished — the client went away while the answer was being prepared (a scripted
/// delay, a slow upstream) or the server shut down — it records itself with the error
/// `client_disconnected`, so no exchange is lost.
pub(crate) struct Draft {
    pub(crate) id: u64,
    pub(crate) started_at: DateTime<Utc>,
    pub(crate) clock: Instant,
    pub(crate) source: Source,
    pub(crate) request: HttpRequest,
    pub(crate) notes: std::collections::BTreeMap<String, serde_json::Value>,
    pub(crate) recorder: Option<Recorder>,
    /// The request body's share of the server's in-flight budget, returned once the
    /// exchange is handed to the recorder.
    pub(crate) permit: Option<tokio::sync::OwnedSemaphorePermit>,
    /// For one message on a WebSocket: its connection and frames.
    pub(crate) websocket: Option<Box<crate::trace::websocket::WebSocketMessage>>,
}

/// Where a request was received, as its record's source says: the server's recorder,
/// mode and listen address, and the connection (none for a request not tied to one).
pub(crate) struct Origin {
    pub(crate) recorder: Recorder,
    pub(crate) mode: &'static str,
    pub(crate) listen: SocketAddr,
    /// Client address and connection number.
    pub(crate) conn: Option<(SocketAddr, u64)>,
}

impl Draft {
    /// A draft for a request received at `origin`, with exchange number `id` (taken when
    /// the head arrived), started at `started_at` / `clock`.
    pub(crate) fn new(
        origin: Origin,
        id: u64,
        started_at: DateTime<Utc>,
        clock: Instant,
        request: HttpRequest,
    ) -> Draft {
        let mut source = Source::new(crate::trace::SourceKind::Server);
        source.mode = Some(origin.mode.into());
        source.server = Some(origin.listen.to_string());
        source.client = origin.conn.map(|(peer, _)| peer.to_string());
        source.connection = origin.conn.map(|(_, id)| id);
        Draft {
            id,
            started_at,
            clock,
            source,
            request,
            notes: Default::default(),
            recorder: Some(origin.recorder),
            permit: None,
            websocket: None,
        }
    }

    /// Finish with a response (or none) and an optional error, and hand it to the recorder.
    pub(crate) fn finish(mut self, response: Option<HttpResponse>, error: Option<ExchangeError>) {
        self.record(response, error);
    }

    fn record(&mut self, response: Option<HttpResponse>, error: Option<ExchangeError>) {
        let Some(recorder) = self.recorder.take() else {
            return;
        };
        let ended_at =
            self.started_at + chrono::Duration::from_std(self.clock.elapsed()).unwrap_or_default();
        let request = std::mem::replace(
            &mut self.request,
            HttpRequest {
                method: String::new(),
                target: String::new(),
                version: String::new(),
                headers: Headers::new(),
                body: Body::default(),
            },
        );
        recorder.record(Exchange {
            id: self.id,
            started_at: self.started_at,
            ended_at: Some(ended_at),
            source: std::mem::replace(
                &mut self.source,
                Source::new(crate::trace::SourceKind::Server),
            ),
            request,
            response,
            error,
            notes: std::mem::take(&mut self.notes),
            websocket: self.websocket.take(),
        });
        self.permit = None;
    }

    /// Microseconds since the request started.
    pub(crate) fn elapsed_us(&self) -> u64 {
        self.clock.elapsed().as_micros() as u64
    }
}

impl Drop for Draft {
    fn drop(&mut self) {
        if let Some(r) = &self.recorder {
            let ms = self.clock.elapsed().as_millis();
            let error = if r.shutting_down() {
                ExchangeError {
                    kind: "shutdown".into(),
                    message: format!(
                        "the server stopped {ms} ms into the exchange, before a response was sent"
                    ),
                }
            } else {
                ExchangeError {
                    kind: "client_disconnected".into(),
                    message: format!("the connection closed {ms} ms into the exchange, before a response was sent"),
                }
            };
            self.record(None, Some(error));
        }
    }
}

/// An error from a response body's source, with the exchange error to record for it.
#[derive(Debug)]
pub(crate) struct StreamFailure {
    /// What to record.
    pub(crate) error: ExchangeError,
    /// Whether the client connection must break (true) or the stream just ends (false).
    pub(crate) abort: bool,
}

/// One item of a response body source: bytes, or the end with a failure.
pub(crate) type SourceItem = Result<Bytes, StreamFailure>;

/// A response body that tees every piece into the trace and records the exchange when
/// the stream ends, fails, or is dropped by hyper (client gone).
pub(crate) struct RecordingStream<S> {
    inner: S,
    draft: Option<Draft>,
    status: u16,
    headers: Headers,
    body: Vec<u8>,
    chunks: Vec<(u64, u64)>,
    first_byte_at: Option<DateTime<Utc>>,
    /// Body bytes the response declared (Content-Length; 0 for HEAD, 1xx, 204, 304).
    expected: Option<u64>,
}

/// Body bytes a response declares by its framing (RFC 9112 §6.3): none for a HEAD request
/// and for 1xx, 204 and 304; else its Content-Length, if any.
pub(crate) fn declared_length(method: &str, status: u16, headers: &Headers) -> Option<u64> {
    if method.eq_ignore_ascii_case("HEAD") || status < 200 || status == 204 || status == 304 {
        return Some(0);
    }
    headers
        .get("content-length")
        .and_then(|v| v.trim().parse().ok())
}

impl<S> RecordingStream<S> {
    pub(crate) fn new(draft: Draft, status: u16, headers: Headers, inner: S) -> Self {
        let expected = declared_length(&draft.request.method, status, &headers);
        RecordingStream {
            inner,
            draft: Some(draft),
            status,
            headers,
            body: Vec::new(),
            chunks: Vec::new(),
            first_byte_at: None,
            expected,
        }
    }

    /// True when the declared body has been sent in full.
    fn all_sent(&self) -> bool {
        self.expected.is_some_and(|e| self.body.len() as u64 >= e)
    }

    fn finish(&mut self, error: Option<ExchangeError>) {
        if let Some(d) = self.draft.take() {
            let response = HttpResponse {
                status: self.status,
                version: "HTTP/1.1".into(),
                headers: std::mem::take(&mut self.headers),
                body: Body::new(std::mem::take(&mut self.body)).with_truncated(error.is_some()),
                chunks: std::mem::take(&mut self.chunks),
                first_byte_at: self.first_byte_at,
            };
            d.finish(Some(response), error);
        }
    }
}

impl<S: Stream<Item = SourceItem> + Unpin> Stream for RecordingStream<S> {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.draft.is_none() {
            return Poll::Ready(None);
        }
        match Pin::new(&mut this.inner).poll_next(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Some(Ok(b))) => {
                if let Some(d) = &this.draft {
                    this.first_byte_at.get_or_insert_with(Utc::now);
                    this.chunks.push((d.elapsed_us(), b.len() as u64));
                }
                this.body.extend_from_slice(&b);
                if this.all_sent() {
                    // The last declared byte: hyper may not poll again.
                    this.finish(None);
                }
                Poll::Ready(Some(Ok(b)))
            }
            Poll::Ready(Some(Err(f))) => {
                let message = f.error.message.clone();
                this.finish(Some(f.error));
                if f.abort {
                    Poll::Ready(Some(Err(std::io::Error::other(message))))
                } else {
                    Poll::Ready(None)
                }
            }
            Poll::Ready(None) => {
                this.finish(None);
                Poll::Ready(None)
            }
        }
    }
}

impl<S> Drop for RecordingStream<S> {
    fn drop(&mut self) {
        let Some(d) = &self.draft else { return };
        if self.all_sent() {
            self.finish(None);
            return;
        }
        let (n, bytes) = (self.chunks.len(), self.body.len());
        let error = if d.recorder.as_ref().is_some_and(|r| r.shutting_down()) {
            ExchangeError {
                kind: "shutdown".into(),
                message: format!(
                    "the server stopped after {n} response pieces ({bytes} bytes) had been sent"
                ),
            }
        } else {
            ExchangeError {
                kind: "client_disconnected".into(),
                message: format!(
                    "client closed the connection after {n} response pieces ({bytes} bytes)"
                ),
            }
        };
        self.finish(Some(error));
    }
}

/// How a scripted stream goes wrong.
#[derive(Clone, Debug)]
pub(crate) enum StreamFault {
    /// After `after` events, drop the connection.
    Drop { after: usize },
    /// After `after` events, send this `error` event and end the stream.
    Error { after: usize, event: Bytes },
}

/// The scripted SSE events of a reply, with an optional fault.
pub(crate) struct ScriptedEvents {
    events: std::vec::IntoIter<Bytes>,
    sent: usize,
    fault: Option<StreamFault>,
    /// Whether `Pending` was returned once before the fault, so hyper flushes what was
    /// sent (the client then sees the break mid-body, as from the real API).
    flushed: bool,
    error_sent: bool,
}

impl ScriptedEvents {
    pub(crate) fn new(events: Vec<Bytes>, fault: Option<StreamFault>) -> Self {
        ScriptedEvents {
            events: events.into_iter(),
            sent: 0,
            fault,
            flushed: false,
            error_sent: false,
        }
    }
}

impl Stream for ScriptedEvents {
    type Item = SourceItem;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<SourceItem>> {
        let this = &mut *self;
        let due = match &this.fault {
            Some(StreamFault::Drop { after }) | Some(StreamFault::Error { after, .. }) => {
                this.sent >= *after
            }
            None => false,
        };
        if due && !this.flushed {
            this.flushed = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        let n = this.sent;
        match (&this.fault, due) {
            (Some(StreamFault::Drop { .. }), true) => {
                return Poll::Ready(Some(Err(StreamFailure {
                    error: ExchangeError {
                        kind: "injected_drop".into(),
                        message: format!("scenario dropped the connection after {n} events"),
                    },
                    abort: true,
                })));
            }
            (Some(StreamFault::Error { event, .. }), true) => {
                if this.error_sent {
                    return Poll::Ready(Some(Err(StreamFailure {
                        error: ExchangeError {
                            kind: "injected_sse_error".into(),
                            message: format!("scenario sent an error event after {n} events"),
                        },
                        abort: false,
                    })));
                }
                this.error_sent = true;
                return Poll::Ready(Some(Ok(event.clone())));
            }
            _ => {}
        }
        match this.events.next() {
            Some(b) => {
                this.sent += 1;
                Poll::Ready(Some(Ok(b)))
            }
            None => Poll::Ready(None),
        }
    }
}
