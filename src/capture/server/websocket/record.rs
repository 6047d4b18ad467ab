//! Recording a WebSocket connection as [`crate::trace::websocket`] describes: one
//! exchange per client message, open from that message until the next one (or the end of
//! the connection), holding the server's messages of that time (each followed by `\n`),
//! every frame the tap saw for it, and how the connection ended when it ended then.
//! Nothing is lost: a close frame, a ping, a cut in the middle of a client message (its
//! bytes so far, truncated) each land on an exchange.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::tap::{Log, Seen};
use crate::capture::server::draft::Draft;
use crate::capture::server::state::{AppState, ConnInfo};
use crate::http::Headers;
use crate::trace::websocket::{Close, Frame, WebSocketMessage};
use crate::trace::{Body, ExchangeError, HttpRequest, HttpResponse, Source};

/// What every message exchange of a connection repeats from its upgrade.
#[derive(Clone)]
pub(crate) struct Upgrade {
    /// The upgrade's exchange id.
    pub(crate) id: u64,
    /// The upgrade request as recorded (its body is replaced by each message's).
    pub(crate) request: HttpRequest,
    /// The `101` response's headers.
    pub(crate) response_headers: Headers,
    /// The upgrade's source (mode, connection, proxy upstream, intercepted host).
    pub(crate) source: Source,
    /// The connection's facts.
    pub(crate) conn: Option<ConnInfo>,
}

/// The exchange of the client message being answered.
struct Open {
    draft: Draft,
    seq: u64,
    body: Vec<u8>,
    chunks: Vec<(u64, u64)>,
    first_byte_at: Option<DateTime<Utc>>,
    closed: Option<Close>,
    error: Option<ExchangeError>,
}

/// The recorder of one connection's messages.
pub(crate) struct Recording {
    st: Arc<AppState>,
    upgrade: Upgrade,
    log: Arc<Mutex<Log>>,
    answering: Arc<AtomicU64>,
    open: Option<Open>,
    next_seq: u64,
}

impl Recording {
    /// A recorder of the connection upgraded by `upgrade`, reading frames from `log`;
    /// `answering` is the tap's number of the message being answered.
    pub(crate) fn new(
        st: Arc<AppState>,
        upgrade: Upgrade,
        log: Arc<Mutex<Log>>,
        answering: Arc<AtomicU64>,
    ) -> Self {
        Recording {
            st,
            upgrade,
            log,
            answering,
            open: None,
            next_seq: 0,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A client message arrived (`payload`, `truncated` when cut short): the previous
    /// exchange is recorded and this one opens.
    pub(crate) fn begin(&mut self, payload: Vec<u8>, truncated: bool) {
        self.finish_open(false);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.answering.store(seq, Ordering::Relaxed);
        // The exchange starts with its message's first frame.
        let first = (self.lock().frames.iter())
            .filter(|f| f.message == seq)
            .map(|f| f.at)
            .min();
        let clock = first.unwrap_or_else(Instant::now);
        let started_at =
            Utc::now() - chrono::Duration::from_std(clock.elapsed()).unwrap_or_default();
        let mut request = self.upgrade.request.clone();
        request.body = Body::new(payload).with_truncated(truncated);
        let id = self.st.take_id();
        let mut draft = self
            .st
            .draft(self.upgrade.conn.as_ref(), id, started_at, clock, request);
        draft.source = self.upgrade.source.clone();
        draft
            .notes
            .insert("websocket".into(), Value::String("message".into()));
        self.open = Some(Open {
            draft,
            seq,
            body: Vec::new(),
            chunks: Vec::new(),
            first_byte_at: None,
            closed: None,
            error: None,
        });
    }

    /// The open exchange, one opened with an empty client message when there is none (the
    /// server spoke, or the connection ended, before the client sent anything).
    fn open(&mut self) -> &mut Open {
        if self.open.is_none() {
            self.begin(Vec::new(), false);
        }
        self.open.as_mut().expect("opened above")
    }

    /// The server sent `payload` (one message) on the open exchange.
    pub(crate) fn server(&mut self, payload: &[u8]) {
        let o = self.open();
        let at = o.draft.elapsed_us();
        o.first_byte_at.get_or_insert_with(Utc::now);
        o.body.extend_from_slice(payload);
        o.body.push(b'\n');
        o.chunks.push((at, payload.len() as u64 + 1));
    }

    /// A note on the open exchange.
    pub(crate) fn note(&mut self, key: &str, value: Value) {
        self.open().draft.notes.insert(key.into(), value);
    }

    /// The notes of the open exchange (a scenario's decision goes there).
    pub(crate) fn notes(&mut self) -> &mut std::collections::BTreeMap<String, Value> {
        &mut self.open().draft.notes
    }

    /// The open exchange's number.
    pub(crate) fn id(&mut self) -> u64 {
        self.open().draft.id
    }

    /// The connection ended (or began to) during the open exchange.
    pub(crate) fn closed(&mut self, close: Close) {
        let o = self.open();
        o.closed.get_or_insert(close);
    }

    /// The open exchange failed.
    pub(crate) fn error(&mut self, kind: &str, message: String) {
        let o = self.open();
        o.error.get_or_insert(ExchangeError {
            kind: kind.into(),
            message,
        });
    }

    /// The connection is over: a client message cut short gets its exchange (what
    /// arrived, truncated), and the last exchange takes every frame left. `cut` says the
    /// socket ended without a close handshake.
    pub(crate) fn end(mut self, cut: bool) {
        let unfinished = self.lock().take_unfinished();
        if let Some((_, bytes)) = unfinished.filter(|(n, _)| *n >= self.next_seq) {
            let len = bytes.len();
            self.begin(bytes, true);
            self.error(
                "client_disconnected",
                format!("the connection ended {len} payload bytes into this client message"),
            );
        }
        if cut {
            self.closed(Close {
                by: None,
                code: None,
                reason: String::new(),
            });
        }
        if self.open.is_some() {
            self.finish_open(true);
        }
    }

    /// Record the open exchange with its frames (`all`: every frame left).
    fn finish_open(&mut self, all: bool) {
        let Some(o) = self.open.take() else { return };
        let seen = {
            let mut log = self.lock();
            if all {
                log.take_all()
            } else {
                log.take_upto(o.seq)
            }
        };
        let clock = o.draft.clock;
        let frames = seen.iter().map(|f| frame(f, clock)).collect();
        let Open {
            mut draft,
            seq,
            body,
            chunks,
            first_byte_at,
            closed,
            error,
        } = o;
        draft.websocket = Some(Box::new(WebSocketMessage {
            upgrade: self.upgrade.id,
            seq,
            extensions: String::new(),
            frames,
            closed,
        }));
        let response = HttpResponse {
            status: 101,
            version: "HTTP/1.1".into(),
            headers: self.upgrade.response_headers.clone(),
            body: Body::new(body),
            chunks,
            first_byte_at,
        };
        draft.finish(Some(response), error);
    }
}

/// A tapped frame as the trace records it, its time relative to `clock`.
fn frame(f: &Seen, clock: Instant) -> Frame {
    let at_us = if f.at >= clock {
        (f.at - clock).as_micros() as i64
    } else {
        -((clock - f.at).as_micros() as i64)
    };
    Frame {
        dir: f.dir,
        at_us,
        opcode: f.opcode,
        fin: f.fin,
        compressed: f.rsv1,
        wire_bytes: f.wire_bytes,
        payload_bytes: f.payload_bytes,
    }
}
