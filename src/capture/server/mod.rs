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
    recorder: Recorder,
    shutdown: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
    thread: RecorderThread,
}

impl RunningServer {
    /// `http://ADDR` (or `https://` when serving TLS), for `ANTHROPIC_BASE_URL`.
    pub fn base_url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// Exchanges recorded so far.
    pub fn recorded(&self) -> u64 {
        self.recorder.count()
    }

    /// Stop accepting, let open exchanges finish (up to 5 s), flush the trace; returns the
    /// number of exchanges written. Exchanges still open after the grace period are not
    /// waited for.
    pub async fn shutdown(self) -> Result<u64, ServerError> {
        let _ = self.shutdown.send(());
        let _ = self.task.await;
        self.recorder.stop();
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
    let (recorder, thread) = recorder::spawn(writer.redact_bodies(config.redact_body));
    let timeout = config.body_timeout;
    let tls = config.tls.clone();
    let intercept = config
        .intercept
        .clone()
        .map(|c| Arc::new(intercept::Interceptor::new(c)));
    let state = Arc::new(AppState {
        config,
        listen,
        recorder: recorder.clone(),
        next_id: AtomicU64::new(0),
        script_state: Mutex::new(script::ScriptState::default()),
    });
    let router = app(state.clone());
    let (tx, rx) = oneshot::channel();
    let conns = Connections {
        state,
        router,
        header_timeout: timeout,
        intercept,
    };
    let task = tokio::spawn(accept_loop(listener, conns, tls.clone(), rx));
    Ok(RunningServer {
        addr: listen,
        tls: tls.is_some(),
        recorder,
        shutdown: tx,
        task,
        thread,
    })
}

/// What every accepted connection needs.
#[derive(Clone)]
struct Connections {
    state: Arc<AppState>,
    router: Router,
    header_timeout: Duration,
    intercept: Option<Arc<intercept::Interceptor>>,
}

impl Connections {
    /// The per-connection service: CONNECT goes to the interceptor (when on), everything
    /// else to the router with the connection's facts attached.
    fn service(
        &self,
        info: ConnInfo,
    ) -> impl hyper::service::Service<
        hyper::Request<Incoming>,
        Response = axum::response::Response,
        Error = std::convert::Infallible,
        Future = impl std::future::Future<
            Output = Result<axum::response::Response, std::convert::Infallible>,
        > + Send,
    > + Clone {
        let this = self.clone();
        hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
            let this = this.clone();
            let info = info.clone();
            async move {
                if let Some(icpt) = &this.intercept {
                    if req.method() == hyper::Method::CONNECT {
                        return Ok(intercept::connect(
                            this.state.clone(),
                            icpt.clone(),
                            this.router.clone(),
                            info,
                            req,
                        ));
                    }
                }
                req.extensions_mut().insert(info);
                this.router.oneshot(req.map(axum::body::Body::new)).await
            }
        })
    }
}

async fn accept_loop(
    listener: TcpListener,
    conns: Connections,
    tls: Option<Arc<rustls::ServerConfig>>,
    mut stop: oneshot::Receiver<()>,
) {
    let header_timeout = conns.header_timeout;
    let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
    let graceful = GracefulShutdown::new();
    let mut next_conn = 0u64;
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        // A client may shut down its write side after sending its request and still wait
        // for the answer.
        .half_close(true);
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
                let info = ConnInfo { peer, id: next_conn, host: None, recent: tee::Recent::default() };
                next_conn += 1;
                let svc = conns.service(info.clone());
                match &acceptor {
                    None if conns.intercept.is_some() => {
                        // CONNECT needs upgrades, which hyper-util's graceful shutdown does
                        // not track; these connections end with the client or the runtime.
                        let conn = builder.serve_connection(TokioIo::new(stream), svc).with_upgrades();
                        tokio::spawn(async move {
                            let _ = conn.await;
                        });
                    }
                    None => {
                        let io = TokioIo::new(tee::Tee::new(stream, info.recent.clone()));
                        let conn = graceful.watch(builder.serve_connection(io, svc));
                        let state = conns.state.clone();
                        tokio::spawn(async move {
                            if let Err(e) = conn.await {
                                tee::record_unparsed(&state, &info, &e);
                            }
                        });
                    }
                    Some(acceptor) => {
                        let (acceptor, builder, watcher) = (acceptor.clone(), builder.clone(), graceful.watcher());
                        tokio::spawn(async move {
                            let handshake = tokio::time::timeout(header_timeout, acceptor.accept(stream)).await;
                            let Ok(Ok(tls_stream)) = handshake else { return };
                            let _ = watcher.watch(builder.serve_connection(TokioIo::new(tls_stream), svc)).await;
                        });
                    }
                }
            }
            _ = &mut stop => break,
        }
    }
    drop(listener);
    let _ = tokio::time::timeout(Duration::from_secs(5), graceful.shutdown()).await;
}
