//! An exchange being answered: the recorded request plus the response as it goes out.
//! A streamed reply is recorded when its stream ends — or, if the client goes away first,
//! when hyper drops the stream, so no exchange is ever lost.

use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};
use std::time::Instant;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use futures_util::Stream;

use super::recorder::Recorder;
use crate::trace::{Body, Exchange, ExchangeError, Headers, HttpRequest, HttpResponse, Source};

/// A request that has been read and is waiting for its response.
pub(crate) struct Draft {
    pub(crate) id: u64,
    pub(crate) started_at: DateTime<Utc>,
    pub(crate) clock: Instant,
    pub(crate) source: Source,
    pub(crate) request: HttpRequest,
    pub(crate) notes: std::collections::BTreeMap<String, serde_json::Value>,
}

impl Draft {
    /// Finish with a response (or none) and an optional error, and hand it to the recorder.
    pub(crate) fn finish(
        self,
        recorder: &Recorder,
        response: Option<HttpResponse>,
        error: Option<ExchangeError>,
    ) {
        let ended_at =
            self.started_at + chrono::Duration::from_std(self.clock.elapsed()).unwrap_or_default();
        recorder.record(Exchange {
            id: self.id,
            started_at: self.started_at,
            ended_at: Some(ended_at),
            source: self.source,
            request: self.request,
            response,
            error,
            notes: self.notes,
        });
    }

    /// Microseconds since the request started.
    pub(crate) fn elapsed_us(&self) -> u64 {
        self.clock.elapsed().as_micros() as u64
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

/// The body of a streamed reply: yields one SSE event per frame and records the exchange
/// when done.
pub(crate) struct ReplyStream {
    events: std::vec::IntoIter<Bytes>,
    total: usize,
    sent: usize,
    fault: Option<StreamFault>,
    draft: Option<Draft>,
    recorder: Recorder,
    status: u16,
    headers: Headers,
    body: Vec<u8>,
    chunks: Vec<(u64, u64)>,
    first_byte_at: Option<DateTime<Utc>>,
    /// Whether the stream has yielded `Pending` once before its fault, so hyper flushes
    /// what was sent (the client then sees the break mid-body, as from the real API).
    flushed_before_fault: bool,
}

impl ReplyStream {
    pub(crate) fn new(
        draft: Draft,
        recorder: Recorder,
        headers: Headers,
        events: Vec<Bytes>,
        fault: Option<StreamFault>,
    ) -> Self {
        ReplyStream {
            total: events.len(),
            events: events.into_iter(),
            sent: 0,
            fault,
            draft: Some(draft),
            recorder,
            status: 200,
            headers,
            body: Vec::new(),
            chunks: Vec::new(),
            first_byte_at: None,
            flushed_before_fault: false,
        }
    }

    fn emit(&mut self, b: Bytes) -> Bytes {
        if let Some(d) = &self.draft {
            if self.first_byte_at.is_none() {
                self.first_byte_at = Some(Utc::now());
            }
            self.chunks.push((d.elapsed_us(), b.len() as u64));
        }
        self.body.extend_from_slice(&b);
        self.sent += 1;
        b
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
            d.finish(&self.recorder, Some(response), error);
        }
    }
}

impl Stream for ReplyStream {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.draft.is_none() {
            return Poll::Ready(None);
        }
        let due = match &this.fault {
            Some(StreamFault::Drop { after }) | Some(StreamFault::Error { after, .. }) => {
                this.sent >= *after
            }
            None => false,
        };
        if due && !this.flushed_before_fault {
            this.flushed_before_fault = true;
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
        match this.fault.clone() {
            Some(StreamFault::Drop { after }) if this.sent >= after => {
                let n = this.sent;
                this.finish(Some(ExchangeError {
                    kind: "injected_drop".into(),
                    message: format!("scenario dropped the connection after {n} events"),
                }));
                return Poll::Ready(Some(Err(std::io::Error::other("injected drop"))));
            }
            Some(StreamFault::Error { after, event }) if this.sent >= after => {
                this.fault = None;
                let b = this.emit(event);
                let n = this.sent - 1;
                this.finish(Some(ExchangeError {
                    kind: "injected_sse_error".into(),
                    message: format!("scenario sent an error event after {n} events"),
                }));
                return Poll::Ready(Some(Ok(b)));
            }
            _ => {}
        }
        match this.events.next() {
            Some(b) => Poll::Ready(Some(Ok(this.emit(b)))),
            None => {
                this.finish(None);
                Poll::Ready(None)
            }
        }
    }
}

impl Drop for ReplyStream {
    fn drop(&mut self) {
        if self.draft.is_some() {
            let (sent, total) = (self.sent, self.total);
            self.finish(Some(ExchangeError {
                kind: "client_disconnected".into(),
                message: format!("client closed the connection after {sent} of {total} events"),
            }));
        }
    }
}
