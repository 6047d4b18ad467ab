//! Recording reverse proxy for one Streamable HTTP MCP server: listens on loopback,
//! forwards every request to the server's origin through the recording proxy's upstream
//! seam ([`crate::capture::server::proxy::Upstream`]), streams answers back as they
//! arrive, and records each JSON-RPC message as an `mcp` record: the POSTed message,
//! a JSON answer, every event of a per-request SSE stream (`http.sse`), and a bodiless
//! answer (202 Accepted for a notification or response) with its status only. Both
//! protocol generations pass through unchanged: 2025-11-25 (`initialize`,
//! `Mcp-Session-Id`) and 2026-07-28 (stateless, `MCP-Protocol-Version` on each request).
//!
//! Source: MCP specification 2025-11-25, Transports, Streamable HTTP ("sending messages
//! to the server", "session management").

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body as AxumBody;
use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::response::Response;
use futures_util::StreamExt;
use http_body_util::BodyExt;
use tokio::sync::oneshot;

use super::{McpError, McpSink};
use crate::api::sse::SseParser;
use crate::capture::server::proxy::Upstream;
use crate::http::fields::skip_response;
use crate::http::is_event_stream;
use crate::trace::mcp::{McpDirection, McpHttp, McpTransport};
use crate::trace::McpRecord;

/// Largest request body forwarded, in bytes (32 MiB); larger ones get 413.
pub const MAX_BODY: usize = 32 << 20;

struct Proxy {
    name: String,
    upstream: Upstream,
    sink: Arc<McpSink>,
    next: AtomicU64,
}

/// A running proxy; [`HttpTap::stop`] ends it.
pub struct HttpTap {
    /// Server name.
    pub name: String,
    /// The URL to give the client instead of the server's (same path and query).
    pub url: String,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl HttpTap {
    /// Stop accepting and wait (up to 2 s) for the accept loop to end.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        let _ = tokio::time::timeout(Duration::from_secs(2), self.task).await;
    }
}

/// Start a proxy on `127.0.0.1:0` for the server `name` at `url`, recording to `sink`.
///
/// Errors: [`McpError::BadUrl`] for anything but an http(s) URL with a host;
/// [`McpError::Listen`] when no loopback port can be bound.
pub async fn start(name: &str, url: &str, sink: Arc<McpSink>) -> Result<HttpTap, McpError> {
    let bad = |reason: String| McpError::BadUrl {
        server: name.into(),
        url: url.into(),
        reason,
    };
    let target = reqwest::Url::parse(url).map_err(|e| bad(e.to_string()))?;
    let origin = target.origin().ascii_serialization();
    let upstream =
        Upstream::new(&origin, None, Duration::from_secs(600)).map_err(|e| bad(e.to_string()))?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| McpError::Listen {
            server: name.into(),
            source: e,
        })?;
    let addr = listener.local_addr().map_err(|e| McpError::Listen {
        server: name.into(),
        source: e,
    })?;
    let mut local = target.clone();
    local.set_scheme("http").ok();
    local.set_host(Some("127.0.0.1")).ok();
    local.set_port(Some(addr.port())).ok();
    let state = Arc::new(Proxy {
        name: name.into(),
        upstream,
        sink,
        next: AtomicU64::new(0),
    });
    let app = axum::Router::new().fallback(handle).with_state(state);
    let (tx, rx) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = rx.await;
            })
            .await;
    });
    Ok(HttpTap {
        name: name.into(),
        url: local.to_string(),
        stop: tx,
        task,
    })
}

fn header(h: &HeaderMap, name: &str) -> Option<String> {
    h.get(name)
        .and_then(|v| v.to_str().ok())
        .map(crate::trace::redact::redact_text)
}

impl Proxy {
    fn record(&self, direction: McpDirection, bytes: &[u8], http: &McpHttp, cut: bool) {
        self.record_sized(direction, bytes, bytes.len() as u64, http, cut);
    }

    /// [`Proxy::record`] of the first bytes of a message of `size` bytes (its wire size).
    fn record_sized(
        &self,
        direction: McpDirection,
        bytes: &[u8],
        size: u64,
        http: &McpHttp,
        cut: bool,
    ) {
        let mut r = McpRecord::message(&self.name, McpTransport::Http, direction, bytes, cut);
        r.size = size;
        if bytes.is_empty() {
            r.raw = None;
        }
        r.http = Some(http.clone());
        self.sink.write(r);
    }

    /// Request `n` failed (`why`): record it as an error event and answer `status`.
    fn failed(&self, n: u64, why: &str, status: u16) -> Response {
        let text = format!("request {n}: {why}");
        self.sink.write(McpRecord::event(
            &self.name,
            McpTransport::Http,
            "error",
            &text,
        ));
        status_only(status)
    }
}

/// Forward one request to the server and its answer back, recording every JSON-RPC
/// message both ways (an event stream's messages one event at a time, as they arrive).
async fn handle(State(p): State<Arc<Proxy>>, req: Request) -> Response {
    let n = p.next.fetch_add(1, Ordering::Relaxed);
    let (parts, body) = req.into_parts();
    let mut http = McpHttp {
        request: n,
        method: parts.method.to_string(),
        session_id: header(&parts.headers, "mcp-session-id"),
        protocol_version: header(&parts.headers, "mcp-protocol-version"),
        ..McpHttp::default()
    };
    let bytes = match http_body_util::Limited::new(body, MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return p.failed(n, &format!("body not read: {e}"), 413),
    };
    p.record(McpDirection::ToServer, &bytes, &http, false);
    let sent = p
        .upstream
        .request(parts.method.clone(), &parts.uri, &parts.headers)
        .body(bytes)
        .send()
        .await;
    let resp = match sent {
        Ok(r) => r,
        Err(e) => {
            let why = format!("server unreachable: {}", crate::capture::error_chain(&e));
            return p.failed(n, &why, 502);
        }
    };
    http.status = Some(resp.status().as_u16());
    if let Some(s) = header(resp.headers(), "mcp-session-id") {
        http.session_id = Some(s);
    }
    // Built from typed parts (reqwest's status and headers), so it cannot fail: a builder
    // error never turns into an empty 200.
    let upstream_status = resp.status();
    let mut head = HeaderMap::new();
    for (k, v) in resp.headers() {
        if !skip_response(k.as_str()) {
            head.append(k, v.clone());
        }
    }
    let is_sse = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(is_event_stream);
    let body = if is_sse {
        http.sse = true;
        relay_events(p.clone(), http, resp)
    } else {
        relay_answer(p.clone(), http, resp)
    };
    let mut r = Response::new(body);
    *r.status_mut() = upstream_status;
    *r.headers_mut() = head;
    r
}

/// The body of an event-stream answer, passed on as it arrives by a task that records
/// each event's message (the last ones marked cut when the stream broke off).
fn relay_events(p: Arc<Proxy>, http: McpHttp, resp: reqwest::Response) -> AxumBody {
    let mut parser = SseParser::new();
    let mut upstream = resp.bytes_stream();
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<bytes::Bytes, std::io::Error>>(16);
    tokio::spawn(async move {
        let mut events = Vec::new();
        let mut clean = true;
        while let Some(chunk) = upstream.next().await {
            let chunk = match chunk {
                Ok(c) => c,
                Err(e) => {
                    clean = false;
                    let _ = tx.send(Err(std::io::Error::other(e))).await;
                    break;
                }
            };
            parser.feed(&chunk, &mut events);
            for ev in events.drain(..).filter(|e| !e.data.is_empty()) {
                p.record(McpDirection::ToClient, ev.data.as_bytes(), &http, false);
            }
            if tx.send(Ok(chunk)).await.is_err() {
                clean = false;
                break;
            }
        }
        events.extend(parser.finish());
        for ev in events.drain(..).filter(|e| !e.data.is_empty()) {
            p.record(McpDirection::ToClient, ev.data.as_bytes(), &http, !clean);
        }
    });
    AxumBody::from_stream(tokio_stream_from(rx))
}

/// The body of a JSON (not event-stream) answer, passed on as it arrives by a task that
/// records it once whole: at most [`MAX_BODY`] bytes are kept for the record (a larger
/// answer is recorded cut, with an error event saying so), never the whole answer (a
/// 200 MB answer once took 1.1 GB). The last chunk is held back until the record is
/// written, so a client that has the whole answer finds it in the trace.
fn relay_answer(p: Arc<Proxy>, http: McpHttp, resp: reqwest::Response) -> AxumBody {
    let mut upstream = resp.bytes_stream();
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<bytes::Bytes, std::io::Error>>(16);
    tokio::spawn(async move {
        let (mut kept, mut total, mut clean) = (Vec::new(), 0u64, true);
        let mut held: Option<bytes::Bytes> = None;
        while let Some(chunk) = upstream.next().await {
            let chunk = match chunk {
                Ok(c) => c,
                Err(e) => {
                    clean = false;
                    if let Some(h) = held.take() {
                        let _ = tx.send(Ok(h)).await;
                    }
                    let _ = tx.send(Err(std::io::Error::other(e))).await;
                    break;
                }
            };
            total += chunk.len() as u64;
            let room = MAX_BODY.saturating_sub(kept.len()).min(chunk.len());
            kept.extend_from_slice(&chunk[..room]);
            if let Some(h) = held.replace(chunk) {
                if tx.send(Ok(h)).await.is_err() {
                    clean = false;
                    break;
                }
            }
        }
        let over = total > MAX_BODY as u64;
        p.record_sized(McpDirection::ToClient, &kept, total, &http, over || !clean);
        if over {
            let why = format!(
                "request {}: answer of {total} bytes relayed whole; recorded its first {MAX_BODY} bytes, the bound of a recorded MCP message",
                http.request
            );
            p.sink
                .write(McpRecord::event(&p.name, McpTransport::Http, "error", &why));
        }
        if let Some(h) = held {
            let _ = tx.send(Ok(h)).await;
        }
    });
    AxumBody::from_stream(tokio_stream_from(rx))
}

fn tokio_stream_from(
    mut rx: tokio::sync::mpsc::Receiver<Result<bytes::Bytes, std::io::Error>>,
) -> impl futures_util::Stream<Item = Result<bytes::Bytes, std::io::Error>> {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

fn status_only(status: u16) -> Response {
    let mut r = Response::new(AxumBody::empty());
    *r.status_mut() =
        axum::http::StatusCode::from_u16(status).unwrap_or(axum::http::StatusCode::BAD_GATEWAY);
    r
}
