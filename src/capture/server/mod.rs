//! The fake `/v1/messages` server: answers like the Anthropic API (streaming included) so a
//! CLI runs to completion at no cost, and records every exchange — malformed ones too —
//! to a trace.
//!
//! Endpoints: `POST /v1/messages` (any query, e.g. `?beta=true`), `POST
//! /v1/messages/count_tokens`, `GET /v1/models`; everything else is recorded and answered
//! 404 in the API's error shape. Modes: stub (a short text reply) and script (see
//! [`script`]).

mod conn;
mod draft;
mod handler;
pub mod intercept;
pub mod proxy;
pub mod recorder;
pub mod replay;
pub mod reply;
pub mod script;
mod tee;
pub mod tls;

use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch, Semaphore};

use crate::trace::{TraceError, TraceWriter};
use recorder::{Recorder, RecorderSummary, RecorderThread};
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
    #[error("upstream {url:?} is not usable: {reason}")]
    BadUpstream { url: String, reason: String },
    #[error("cannot use CA file {path}: {message} (give a PEM file with the CA certificate)")]
    CaFile { path: String, message: String },
    #[error("TLS: cannot use {path}: {message} (give PEM files: --tls-cert chain, --tls-key private key)")]
    Tls { path: String, message: String },
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
    /// Forward to an upstream and record (the recording proxy).
    Proxy(Arc<proxy::Upstream>),
    /// Answer with the responses of a recorded trace.
    Replay(Arc<replay::Replay>),
}

impl Mode {
    /// Name recorded in each exchange's source.
    pub fn name(&self) -> &'static str {
        match self {
            Mode::Stub => "stub",
            Mode::Script(_) => "script",
            Mode::Proxy(_) => "proxy",
            Mode::Replay(_) => "replay",
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
    /// Serve HTTPS with this config instead of plain HTTP.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Act as a TLS-intercepting CONNECT proxy (the first-party route).
    pub intercept: Option<Arc<intercept::InterceptConfig>>,
    /// `--redact-body`: replace Anthropic-key-shaped strings inside bodies before writing.
    pub redact_body: bool,
    /// Most request-body bytes held in memory across all connections at once (bodies
    /// being read, and exchanges not yet handed to the writer); a request that would
    /// exceed it gets 503 `overloaded_error`.
    pub max_inflight: usize,
    /// Most bytes of finished exchanges waiting for the trace writer; new requests wait
    /// (backpressure) while the queue is this full.
    pub queue_limit: usize,
    /// Where the server reports what goes wrong while it runs (a trace that cannot be
    /// written, a failed accept, a client that rejects agentwire's CA); silent by default.
    pub diagnostics: crate::capture::Diagnostics,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            addr: "127.0.0.1:0".into(),
            mode: Mode::Stub,
            max_body: 32 * 1024 * 1024,
            body_timeout: Duration::from_secs(30),
            tls: None,
            intercept: None,
            redact_body: false,
            max_inflight: 96 << 20,
            queue_limit: 64 << 20,
            diagnostics: crate::capture::Diagnostics::silent(),
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
    /// The connection tasks.
    pub(crate) tasks: conn::Tasks,
    /// Request-body bytes that may be held at once, across connections (permits are
    /// bytes; see [`ServerConfig::max_inflight`]).
    pub(crate) bodies: Arc<Semaphore>,
}

impl AppState {
    /// The next exchange number (arrival order).
    pub(crate) fn take_id(&self) -> u64 {
        self.next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    }
}

/// Per-connection facts, attached to every request as an extension.
#[derive(Clone, Debug)]
pub(crate) struct ConnInfo {
    pub(crate) peer: SocketAddr,
    pub(crate) id: u64,
    /// `host:port` the client asked for, when the connection came through a CONNECT.
    pub(crate) host: Option<Arc<str>>,
    /// Bytes received since the last request the handler saw.
    pub(crate) recent: tee::Recent,
}

/// The router: one handler that records and dispatches every request.
pub(crate) fn app(state: Arc<AppState>) -> Router {
    Router::new().fallback(handler::handle).with_state(state)
}

/// A server running in the background of the current tokio runtime.
pub struct RunningServer {
    /// The bound address.
    pub addr: SocketAddr,
    tls: bool,
    state: Arc<AppState>,
    stop_accept: oneshot::Sender<()>,
    stop_conns: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
    thread: RecorderThread,
}

/// How long open exchanges may take to finish after a shutdown was asked for.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

impl RunningServer {
    /// `http://ADDR` (or `https://` when serving TLS), for `ANTHROPIC_BASE_URL`.
    pub fn base_url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// Exchanges recorded so far.
    pub fn recorded(&self) -> u64 {
        self.state.recorder.count()
    }

    /// Resolves when the trace's reader is gone (the output was a pipe, now closed): the
    /// caller should [`shutdown`](Self::shutdown), as any command stops when its output
    /// pipe closes.
    pub async fn output_closed(&self) {
        self.state.recorder.reader_gone().await;
    }

    /// Stop accepting, let open exchanges finish (up to [`SHUTDOWN_GRACE`]), then cut
    /// the rest — each is written with the error kind `shutdown` and what was seen so far
    /// — and flush the trace. Returns what the recorder did.
    ///
    /// Errors: [`ServerError::Trace`] when exchanges could not be written.
    pub async fn shutdown(self) -> Result<RecorderSummary, ServerError> {
        let _ = self.stop_accept.send(());
        let _ = self.task.await;
        let _ = self.stop_conns.send(true);
        self.state.tasks.wind_down(SHUTDOWN_GRACE).await;
        self.state.recorder.begin_shutdown();
        self.state.tasks.abort_all().await;
        self.state.recorder.stop();
        let thread = self.thread;
        Ok(tokio::task::spawn_blocking(move || thread.finish())
            .await
            .unwrap_or_else(|_| Ok(RecorderSummary::default()))?)
    }
}

/// Bind and start serving; exchanges go to `writer`.
pub async fn start(
    config: ServerConfig,
    writer: TraceWriter,
) -> Result<RunningServer, ServerError> {
    let listener = bind(&config.addr).await?;
    start_on(listener, config, writer).await
}

/// Bind the listen address (so a bad or busy address fails before any file is written).
pub async fn bind(addr: &str) -> Result<TcpListener, ServerError> {
    let parsed: SocketAddr = addr
        .parse()
        .map_err(|_| ServerError::BadAddr { addr: addr.into() })?;
    TcpListener::bind(parsed)
        .await
        .map_err(|e| ServerError::Bind {
            addr: addr.into(),
            source: e,
        })
}

/// Start serving on an already bound listener; exchanges go to `writer`.
pub async fn start_on(
    listener: TcpListener,
    config: ServerConfig,
    writer: TraceWriter,
) -> Result<RunningServer, ServerError> {
    let listen = listener.local_addr().map_err(|e| ServerError::Bind {
        addr: config.addr.clone(),
        source: e,
    })?;
    let (recorder, thread) = recorder::spawn(
        writer.redact_bodies(config.redact_body),
        config.queue_limit,
        config.diagnostics.clone(),
    );
    let tls = config.tls.clone();
    let intercept = config
        .intercept
        .clone()
        .map(|c| Arc::new(intercept::Interceptor::new(c)));
    let bodies = Arc::new(Semaphore::new(
        config.max_inflight.clamp(1, Semaphore::MAX_PERMITS),
    ));
    let state = Arc::new(AppState {
        config,
        listen,
        recorder,
        next_id: AtomicU64::new(0),
        script_state: Mutex::new(script::ScriptState::default()),
        tasks: conn::Tasks::default(),
        bodies,
    });
    let router = app(state.clone());
    let (tx, rx) = oneshot::channel();
    let (stop_conns, stop) = watch::channel(false);
    let conns = conn::Connections {
        state: state.clone(),
        router,
        intercept,
        stop,
    };
    let task = tokio::spawn(conn::accept_loop(listener, conns, tls.clone(), rx));
    Ok(RunningServer {
        addr: listen,
        tls: tls.is_some(),
        state,
        stop_accept: tx,
        stop_conns,
        task,
        thread,
    })
}
