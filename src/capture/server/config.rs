//! What the server is told: [`ServerConfig`] with its reply [`Mode`], and the
//! intercepting proxy's [`InterceptConfig`].

use std::sync::Arc;
use std::time::Duration;

use super::playback::Replay;
use super::proxy::Upstream;
use super::script::Script;
use crate::capture::ca::CertificateAuthority;

/// How the server answers model requests (Messages and Responses, over HTTP and the
/// Responses WebSocket).
#[derive(Clone, Debug)]
pub enum Mode {
    /// A short text reply, `stop_reason: end_turn`.
    Stub,
    /// Replies from a scenario.
    Script(Arc<Script>),
    /// Forward to an upstream and record (the recording proxy).
    Proxy(Arc<Upstream>),
    /// Answer with the responses of a recorded trace.
    Replay(Arc<Replay>),
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
    pub addr: std::net::SocketAddr,
    /// Reply mode.
    pub mode: Mode,
    /// Largest request body accepted, in bytes (larger: 413, first bytes kept).
    pub max_body: usize,
    /// Time a client may take to send its request head or body (then 408 / closed).
    pub body_timeout: Duration,
    /// Serve HTTPS with this config instead of plain HTTP.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Act as a TLS-intercepting CONNECT proxy (the first-party route).
    pub intercept: Option<Arc<InterceptConfig>>,
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
    /// What the Responses WebSocket (`GET …/responses` with `Upgrade: websocket`) does.
    pub websocket: WebSocketOptions,
}

/// How the server treats Responses WebSocket upgrades.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WebSocketOptions {
    /// Refuse every upgrade with `426 Upgrade Required` (an OpenAI error body saying why),
    /// so clients fall back to `POST …/responses`.
    pub refuse: bool,
    /// Close each connection (code 1000) after this many generated responses (prewarms
    /// not counted), to test reconnects; `None`: never.
    pub close_after: Option<usize>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            addr: std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
            mode: Mode::Stub,
            max_body: 32 * 1024 * 1024,
            body_timeout: Duration::from_secs(30),
            tls: None,
            intercept: None,
            redact_body: false,
            max_inflight: 96 << 20,
            queue_limit: 64 << 20,
            diagnostics: crate::capture::Diagnostics::silent(),
            websocket: WebSocketOptions::default(),
        }
    }
}

/// What the intercepting proxy does.
pub struct InterceptConfig {
    /// Hosts whose TLS is terminated (lowercase).
    pub hosts: Vec<String>,
    /// The CA that signs leaf certificates.
    pub ca: Arc<CertificateAuthority>,
    /// Tunnel other hosts untouched instead of refusing them.
    pub tunnel_others: bool,
}

impl std::fmt::Debug for InterceptConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InterceptConfig")
            .field("hosts", &self.hosts)
            .field("tunnel_others", &self.tunnel_others)
            .finish()
    }
}
