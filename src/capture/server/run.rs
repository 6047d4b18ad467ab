//! Starting and stopping the server: bind the listen address, start serving on it
//! ([`start`], [`start_on`]), and shut down with a grace period ([`RunningServer`]).

use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch, Semaphore};

use super::config::ServerConfig;
use super::error::ServerError;
use super::recorder::{self, RecorderSummary, RecorderThread};
use super::state::{AppState, Tasks};
use super::{conn, handler, intercept, script};
use crate::trace::TraceWriter;

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

    /// Every exchange recorded from now on, once written ([`recorder::Recorder::subscribe`]).
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<Arc<crate::trace::Exchange>> {
        self.state.recorder.subscribe()
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
    let listener = bind(config.addr).await?;
    start_on(listener, config, writer).await
}

/// Bind the listen address (so a busy address fails before any file is written).
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, ServerError> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| ServerError::Bind {
            addr: addr.to_string(),
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
        addr: config.addr.to_string(),
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
    let (stop_conns, stop) = watch::channel(false);
    let state = Arc::new(AppState {
        config,
        listen,
        recorder,
        next_id: AtomicU64::new(0),
        script_state: Mutex::new(script::ScriptState::default()),
        tasks: Tasks::default(),
        bodies,
        stop: stop.clone(),
    });
    let router = app(state.clone());
    let (tx, rx) = oneshot::channel();
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
