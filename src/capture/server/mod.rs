//! The fake `/v1/messages` server: answers like the Anthropic API (streaming included) so a
//! CLI runs to completion at no cost, and records every exchange — malformed ones too —
//! to a trace.
//!
//! Endpoints: `POST /v1/messages` (any query, e.g. `?beta=true`), `POST
//! /v1/messages/count_tokens`, `GET /v1/models`; everything else is recorded and answered
//! 404 in the API's error shape. Modes: stub (a short text reply) and script (see
//! [`script`]).

mod draft;
mod handler;
pub mod recorder;
pub mod reply;
pub mod script;

use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tower::ServiceExt;

use crate::trace::{TraceError, TraceWriter};
use recorder::{Recorder, RecorderThread};
pub use script::Script;

/// Errors of the server.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error(
        "cannot listen on {addr}: {source} (pick another address or port 0 for any free port)"
    )]
    Bind {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{addr:?} is not an address to listen on; use IP:PORT, e.g. 127.0.0.1:8080")]
    BadAddr { addr: String },
    #[error(transparent)]
    Trace(#[from] TraceError),
}

/// How the server answers Messages requests.
#[derive(Clone, Debug)]
pub enum Mode {
    /// A short text reply, `stop_reason: end_turn`.
    Stub,
    /// Replies from a scenario.
    Script(Arc<Script>),
}

impl Mode {
    /// Name recorded in each exchange's source.
    pub fn name(&self) -> &'static str {
        match self {
            Mode::Stub => "stub",
            Mode::Script(_) => "script",
        }
    }
}

/// Server configuration.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Address to bind (`127.0.0.1:0` by default: loopback, any free port).
    pub addr: String,
    /// Reply mode.
    pub mode: Mode,
    /// Largest request body accepted, in bytes (larger: 413, first bytes kept).
    pub max_body: usize,
    /// Time a client may take to send its request head or body (then 408 / closed).
    pub body_timeout: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            addr: "127.0.0.1:0".into(),
            mode: Mode::Stub,
            max_body: 32 * 1024 * 1024,
            body_timeout: Duration::from_secs(30),
        }
    }
}

/// State shared by all connections.
pub(crate) struct AppState {
    pub(crate) config: ServerConfig,
    pub(crate) listen: SocketAddr,
    pub(crate) recorder: Recorder,
    pub(crate) next_id: AtomicU64,
    pub(crate) script_state: Mutex<script::ScriptState>,
}

/// Per-connection facts, attached to every request as an extension.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ConnInfo {
    pub(crate) peer: SocketAddr,
    pub(crate) id: u64,
}

/// The router: one handler that records and dispatches every request.
pub(crate) fn app(state: Arc<AppState>) -> Router {
    Router::new().fallback(handler::handle).with_state(state)
}

/// A server running in the background of the current tokio runtime.
pub struct RunningServer {
    /// The bound address.
    pub addr: SocketAddr,
    recorder: Recorder,
    shutdown: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
    thread: RecorderThread,
}

impl RunningServer {
    /// `http://ADDR`, for `ANTHROPIC_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Exchanges recorded so far.
    pub fn recorded(&self) -> u64 {
        self.recorder.count()
    }

    /// Stop accepting, let open exchanges finish (up to 5 s), flush the trace; returns the
    /// number of exchanges written.
    pub async fn shutdown(self) -> Result<u64, ServerError> {
        let _ = self.shutdown.send(());
        let _ = self.task.await;
        drop(self.recorder);
        let thread = self.thread;
        Ok(tokio::task::spawn_blocking(move || thread.finish())
            .await
            .unwrap_or(Ok(0))?)
    }
}

/// Bind and start serving; exchanges go to `writer`.
pub async fn start(
    config: ServerConfig,
    writer: TraceWriter,
) -> Result<RunningServer, ServerError> {
    let addr: SocketAddr = config.addr.parse().map_err(|_| ServerError::BadAddr {
        addr: config.addr.clone(),
    })?;
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| ServerError::Bind {
            addr: config.addr.clone(),
            source: e,
        })?;
    let listen = listener.local_addr().map_err(|e| ServerError::Bind {
        addr: config.addr.clone(),
        source: e,
    })?;
    let (recorder, thread) = recorder::spawn(writer);
    let timeout = config.body_timeout;
    let state = Arc::new(AppState {
        config,
        listen,
        recorder: recorder.clone(),
        next_id: AtomicU64::new(0),
        script_state: Mutex::new(script::ScriptState::default()),
    });
    let router = app(state);
    let (tx, rx) = oneshot::channel();
    let task = tokio::spawn(accept_loop(listener, router, timeout, rx));
    Ok(RunningServer {
        addr: listen,
        recorder,
        shutdown: tx,
        task,
        thread,
    })
}

async fn accept_loop(
    listener: TcpListener,
    router: Router,
    header_timeout: Duration,
    mut stop: oneshot::Receiver<()>,
) {
    let graceful = GracefulShutdown::new();
    let mut next_conn = 0u64;
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(x) => x,
                    Err(e) => {
                        // Out of file descriptors and the like: back off, keep serving.
                        eprintln!("warning: accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let info = ConnInfo { peer, id: next_conn };
                next_conn += 1;
                let router = router.clone();
                let svc = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
                    req.extensions_mut().insert(info);
                    router.clone().oneshot(req.map(axum::body::Body::new))
                });
                let conn = graceful.watch(builder.serve_connection(TokioIo::new(stream), svc));
                tokio::spawn(async move {
                    let _ = conn.await;
                });
            }
            _ = &mut stop => break,
        }
    }
    drop(listener);
    let _ = tokio::time::timeout(Duration::from_secs(5), graceful.shutdown()).await;
}
