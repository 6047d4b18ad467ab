//! Serving one accepted Responses WebSocket in stub, script or replay mode: each
//! `response.create` is answered with the response's events, one JSON text message each.
//!
//! - `generate: false` (a prewarm) gets `response.created`, `response.in_progress` and
//!   `response.completed` with no output and zero usage;
//! - a `previous_response_id` this connection gave continues that chain ([`Chain`]): the
//!   scenario's turn is counted on the rebuilt conversation; an unknown one gets
//!   `{"type":"error","status":400,"error":{"code":"previous_response_not_found",…}}`;
//! - a message that is not JSON, not an object or not `response.create` gets an `error`
//!   message and is recorded as it came;
//! - with [`WebSocketOptions::close_after`](crate::capture::server::config::WebSocketOptions)
//!   the server closes (1000) after that many generated responses; a server shutdown
//!   closes with 1001.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use hyper::upgrade::Upgraded;
use hyper_util::rt::TokioIo;
use serde_json::{json, Map, Value};
use tokio_tungstenite::tungstenite::protocol::{
    frame::coding::CloseCode, CloseFrame, Role, WebSocketConfig,
};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

use super::chain::{Chain, Rebuilt};
use super::record::{Recording, Upgrade};
use super::tap::Tap;
use crate::api::responses::events::{self, Answer};
use crate::api::{Dialect, MessagesRequest};
use crate::capture::server::config::Mode;
use crate::capture::server::state::AppState;
use crate::trace::websocket::{Close, Direction};

/// The socket as this side speaks it.
pub(crate) type Socket = WebSocketStream<Tap<TokioIo<Upgraded>>>;

/// How long a closing side waits for the other's close frame.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// What happens after a message was answered.
enum Flow {
    /// Keep serving.
    Go,
    /// Close the connection (1000) now.
    Close,
    /// Cut the socket without a close frame.
    Drop,
}

/// The socket over `io` with the server's size limits, and its recorder.
pub(crate) async fn socket(
    st: &Arc<AppState>,
    io: Upgraded,
    upgrade: Upgrade,
    role: Role,
) -> (Socket, Recording) {
    let max = st.config.max_body;
    let tap = Tap::new(TokioIo::new(io), max);
    let rec = Recording::new(st.clone(), upgrade, tap.log(), tap.answering());
    let config = WebSocketConfig::default()
        .max_message_size(Some(max))
        .max_frame_size(Some(max));
    (
        WebSocketStream::from_raw_socket(tap, role, Some(config)).await,
        rec,
    )
}

/// Serve the upgraded connection `io` until it ends, recording every message.
pub(crate) async fn run(st: Arc<AppState>, io: Upgraded, upgrade: Upgrade) {
    let (mut ws, mut rec) = socket(&st, io, upgrade, Role::Server).await;
    let mut local = Local {
        st: st.clone(),
        chain: Chain::default(),
        generated: 0,
        client_closed: false,
    };
    let mut stop = st.stop.clone();
    let mut closing: Option<tokio::time::Instant> = None;
    loop {
        let deadline =
            closing.unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(86_400));
        let msg = tokio::select! {
            m = ws.next() => m,
            _ = async { let _ = stop.wait_for(|s| *s).await; }, if closing.is_none() => {
                close(&mut ws, &mut rec, CloseCode::Away, "agentwire is shutting down").await;
                closing = Some(tokio::time::Instant::now() + CLOSE_WAIT);
                continue;
            }
            _ = tokio::time::sleep_until(deadline) => break,
        };
        let flow = match msg {
            // The end, or the socket ended without a close handshake (Codex does so when
            // it exits): every answer was sent whole, so `closed` says it all (a message
            // cut short gets its own exchange and error, [`Recording::end`]).
            None | Some(Err(_)) => break,
            Some(Ok(m)) => local.on_message(&mut ws, &mut rec, m).await,
        };
        match flow {
            Flow::Go => {}
            Flow::Close if closing.is_none() => {
                let why = format!("agentwire closes after {} responses", local.generated);
                close(&mut ws, &mut rec, CloseCode::Normal, &why).await;
                closing = Some(tokio::time::Instant::now() + CLOSE_WAIT);
            }
            Flow::Close => {}
            Flow::Drop => {
                rec.closed(Close {
                    by: None,
                    code: None,
                    reason: String::new(),
                });
                drop(ws);
                rec.end(false);
                return;
            }
        }
    }
    rec.end(!local.client_closed && closing.is_none());
}

/// Send a close frame and note it on the open exchange.
async fn close(ws: &mut Socket, rec: &mut Recording, code: CloseCode, reason: &str) {
    rec.closed(Close {
        by: Some(Direction::Server),
        code: Some(code.into()),
        reason: reason.to_string(),
    });
    let cf = CloseFrame {
        code,
        reason: reason.to_string().into(),
    };
    let _ = ws.send(Message::Close(Some(cf))).await;
}

/// Send one server message (a JSON value) and record it; false when the socket is gone.
async fn send(ws: &mut Socket, rec: &mut Recording, v: &Value) -> bool {
    let text = v.to_string();
    rec.server(text.as_bytes());
    ws.send(Message::text(text)).await.is_ok()
}

/// The answering side of one connection.
struct Local {
    st: Arc<AppState>,
    chain: Chain,
    /// Responses generated so far (prewarms not counted).
    generated: usize,
    /// The client sent its close frame.
    client_closed: bool,
}

impl Local {
    /// Handle one message from the client.
    async fn on_message(&mut self, ws: &mut Socket, rec: &mut Recording, m: Message) -> Flow {
        match m {
            Message::Close(cf) => {
                rec.closed(super::handshake::close_of(Direction::Client, cf.as_ref()));
                self.client_closed = true;
                Flow::Go
            }
            Message::Text(t) => {
                rec.begin(t.as_bytes().to_vec(), false);
                self.answer(ws, rec, t.as_str()).await
            }
            Message::Binary(b) => {
                rec.begin(b.to_vec(), false);
                let why =
                    "binary messages are not supported; send response.create as a text message";
                rec.error("invalid_message", why.into());
                send(
                    ws,
                    rec,
                    &events::websocket_error(400, why, "invalid_message", None),
                )
                .await;
                Flow::Go
            }
            // Pings are answered by tungstenite; the tap records them.
            _ => Flow::Go,
        }
    }

    /// Answer one client text message.
    async fn answer(&mut self, ws: &mut Socket, rec: &mut Recording, text: &str) -> Flow {
        let Some(read) = self.read(ws, rec, text).await else {
            return Flow::Go;
        };
        let prev = (read.msg.get("previous_response_id"))
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(p) = &prev {
            let items = read.rebuilt.input.len();
            rec.note(
                "chain",
                json!({"previous_response_id": p, "known": true, "items": items}),
            );
        }
        if read.msg.get("generate") == Some(&Value::Bool(false)) {
            return self.prewarm(ws, rec, &read.req, read.rebuilt, prev).await;
        }
        let billed = read.body_bytes;
        let flow = match self.st.config.mode.clone() {
            Mode::Replay(replay) => {
                self.replayed(ws, rec, &replay, &read.req, read.rebuilt)
                    .await
            }
            _ => {
                self.generated_answer(ws, rec, &read.req, read.rebuilt, billed, prev)
                    .await
            }
        };
        if !matches!(flow, Flow::Go) {
            return flow;
        }
        self.generated += 1;
        match self.st.config.websocket.close_after {
            Some(n) if self.generated >= n => Flow::Close,
            _ => Flow::Go,
        }
    }

    /// A client message read as a request: the message, the conversation it stands for,
    /// and that conversation's canonical request; `None` when it was answered with an
    /// error instead (not a `response.create`, an unknown `previous_response_id`).
    async fn read(&mut self, ws: &mut Socket, rec: &mut Recording, text: &str) -> Option<Read> {
        let msg = match parse_message(text) {
            Ok(m) => m,
            Err(e) => {
                rec.error("invalid_message", e.clone());
                send(
                    ws,
                    rec,
                    &events::websocket_error(400, &e, "invalid_message", None),
                )
                .await;
                return None;
            }
        };
        let rebuilt = match self.chain.rebuild(&msg) {
            Ok(r) => r,
            Err(id) => {
                let text = format!("Previous response with id '{id}' not found.");
                let param = Some("previous_response_id");
                let e = events::websocket_error(400, &text, "previous_response_not_found", param);
                rec.note("chain", json!({"previous_response_id": id, "known": false}));
                send(ws, rec, &e).await;
                return None;
            }
        };
        let body = serde_json::to_vec(&Value::Object(rebuilt.body.clone())).unwrap_or_default();
        match MessagesRequest::parse_as(Dialect::Responses, &body) {
            Ok(req) => Some(Read {
                msg,
                rebuilt,
                req,
                body_bytes: body.len(),
            }),
            Err(e) => {
                let e = events::websocket_error(400, &e.to_string(), "invalid_request", None);
                send(ws, rec, &e).await;
                None
            }
        }
    }

    /// Answer a prewarm (`generate: false`): no output, zero usage; its id can be
    /// continued.
    async fn prewarm(
        &mut self,
        ws: &mut Socket,
        rec: &mut Recording,
        req: &MessagesRequest,
        rebuilt: Rebuilt,
        prev: Option<String>,
    ) -> Flow {
        let mut a = Answer::new(format!("resp_agentwire_{:06}", rec.id()), model(req), &[]);
        a.usage = Some(events::usage(0, 0, 0, 0));
        a.previous_response_id = prev;
        rec.note("prewarm", Value::Bool(true));
        self.chain.remember(&a.id, rebuilt.input, &[]);
        for e in a.events() {
            if !send(ws, rec, &e).await {
                return Flow::Drop;
            }
        }
        Flow::Go
    }

    /// A stub or script answer, with the scenario's delay and failure.
    async fn generated_answer(
        &mut self,
        ws: &mut Socket,
        rec: &mut Recording,
        req: &MessagesRequest,
        rebuilt: Rebuilt,
        billed: usize,
        prev: Option<String>,
    ) -> Flow {
        let id = format!("resp_agentwire_{:06}", rec.id());
        let mut d =
            crate::capture::server::responses::decide(&self.st, rec.notes(), req, billed, id);
        d.answer.previous_response_id = prev;
        if d.delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(d.delay_ms)).await;
        }
        let mut out = d.answer.events();
        let mut flow = Flow::Go;
        match d.fault {
            Some(f) if f.status.is_some() => {
                let status = f.status.unwrap_or(500);
                let msg = f.message.unwrap_or_else(|| format!("injected {status}"));
                rec.error("injected_status", msg.clone());
                let code = events::error_type_for(status);
                out = vec![events::websocket_error(status, &msg, code, None)];
            }
            Some(f) => {
                let after = f.after_events.unwrap_or(0).min(out.len());
                out.truncate(after);
                match f.sse_error {
                    Some(code) => {
                        let msg = f.message.unwrap_or_else(|| "injected stream error".into());
                        rec.error("injected_sse_error", msg.clone());
                        out.extend(events::failure_events(&d.answer, after, &code, &msg));
                    }
                    None => {
                        rec.error(
                            "injected_drop",
                            format!("scenario dropped the connection after {after} events"),
                        );
                        flow = Flow::Drop;
                    }
                }
            }
            None => self
                .chain
                .remember(&d.answer.id, rebuilt.input, &d.answer.output),
        }
        for e in &out {
            if !send(ws, rec, e).await {
                return Flow::Drop;
            }
        }
        flow
    }

    /// A recorded answer, its events sent as messages.
    async fn replayed(
        &mut self,
        ws: &mut Socket,
        rec: &mut Recording,
        replay: &crate::capture::server::playback::Replay,
        req: &MessagesRequest,
        rebuilt: Rebuilt,
    ) -> Flow {
        let Some((recorded, m)) = replay.find(req) else {
            let e = events::websocket_error(
                500,
                "the replayed trace has no Responses exchange to answer with",
                "replay_empty",
                None,
            );
            rec.error("replay_empty", "no recorded Responses exchange".into());
            send(ws, rec, &e).await;
            return Flow::Go;
        };
        rec.note("replay", serde_json::to_value(&m).unwrap_or_default());
        rec.note(
            "synthesized",
            json!({"by": "agentwire replay",
            "usage": format!("recorded for exchange {} of the replayed trace", m.recorded_id)}),
        );
        let out = crate::capture::server::replay_responses::events_of(recorded);
        let texts: Vec<String> = out.iter().map(Value::to_string).collect();
        if let Some((id, output)) = super::outcome(texts.iter().map(|t| t.as_bytes())) {
            self.chain.remember(&id, rebuilt.input, &output);
        }
        for e in &out {
            if !send(ws, rec, e).await {
                return Flow::Drop;
            }
        }
        Flow::Go
    }
}

/// A client message read as a request ([`Local::read`]).
struct Read {
    msg: Map<String, Value>,
    rebuilt: Rebuilt,
    req: MessagesRequest,
    /// Bytes of the whole conversation's body (what usage is estimated from).
    body_bytes: usize,
}

/// The model a request names, or agentwire's.
fn model(req: &MessagesRequest) -> String {
    req.model.clone().unwrap_or_else(|| "gpt-agentwire".into())
}

/// A client message as a `response.create` object, or why it is not one.
fn parse_message(text: &str) -> Result<Map<String, Value>, String> {
    let v: Value = serde_json::from_str(text)
        .map_err(|e| format!("the message is not JSON ({e}); send a response.create object"))?;
    let Value::Object(m) = v else {
        return Err("the message is not a JSON object; send a response.create object".into());
    };
    match m.get("type").and_then(Value::as_str) {
        Some("response.create") => Ok(m),
        other => Err(format!(
            "message type {other:?} is not supported; this server answers response.create"
        )),
    }
}
