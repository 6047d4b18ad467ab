//! First-party route: an HTTP CONNECT proxy that terminates TLS for the listed hosts
//! (default `api.anthropic.com`) with leaf certificates minted on the fly by agentwire's
//! CA, then serves the decrypted requests like any other (stub, script, replay, proxy).
//! Other hosts are refused (offline, the default) or tunnelled untouched and logged as
//! host, port and bytes. A client that rejects the certificate is recorded as a TLS
//! failure whose message names the variable to set.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Body as AxumBody;
use axum::response::Response;
use chrono::Utc;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;

pub use super::config::InterceptConfig;
use super::draft::Draft;
use super::state::{AppState, ConnInfo};
pub use crate::http::host::canonical_host;
use crate::trace::redact::redact_authority;
use crate::trace::{Body, ExchangeError, HttpRequest, HttpResponse};

/// The stream an intercepted tunnel's inside is served on: TLS over the upgraded CONNECT.
pub(crate) type InnerStream = tokio_rustls::server::TlsStream<TokioIo<hyper::upgrade::Upgraded>>;

/// What serves the decrypted inside of an intercepted tunnel the same way as any
/// connection (`conn::Connections` implements it; the interceptor only calls it, so the
/// recursion CONNECT → inner connection → request stays one way between the files).
pub(crate) trait ServeInner: Clone + Send + Sync + 'static {
    /// The server's state (configuration, tasks, trace).
    fn app_state(&self) -> &Arc<AppState>;
    /// Serve `stream` until the client or a shutdown ends it.
    fn serve_inner(
        &self,
        stream: InnerStream,
        info: ConnInfo,
    ) -> impl std::future::Future<Output = ()> + Send;
}

/// Per-server interception state: the leaf configs minted so far, per host.
pub(crate) struct Interceptor {
    pub(crate) config: Arc<InterceptConfig>,
    leaves: Mutex<HashMap<String, Arc<rustls::ServerConfig>>>,
}

impl Interceptor {
    pub(crate) fn new(config: Arc<InterceptConfig>) -> Self {
        Interceptor {
            config,
            leaves: Mutex::new(HashMap::new()),
        }
    }

    /// The TLS config for a listed host (minted once, then cached). `None` for a host
    /// that is not listed: no certificate is ever issued for it.
    fn leaf(&self, host: &str) -> Option<Result<Arc<rustls::ServerConfig>, String>> {
        let host = canonical_host(host);
        let host = host.as_str();
        if !self.config.hosts.iter().any(|h| canonical_host(h) == host) {
            return None;
        }
        let mut leaves = self.leaves.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = leaves.get(host) {
            return Some(Ok(c.clone()));
        }
        let made = self
            .config
            .ca
            .mint_leaf(&[host.to_string()])
            .map_err(|e| e.to_string())
            .and_then(|(chain, key)| super::tls::server_config(chain, key));
        if let Ok(c) = &made {
            leaves.insert(host.to_string(), c.clone());
        }
        Some(made)
    }
}

fn connect_draft(st: &AppState, info: &ConnInfo, target: &str) -> Draft {
    let request = HttpRequest {
        method: "CONNECT".into(),
        target: target.into(),
        version: "HTTP/1.1".into(),
        headers: crate::http::Headers::new(),
        body: Body::default(),
    };
    let mut d = st.draft(
        Some(info),
        st.take_id(),
        Utc::now(),
        Instant::now(),
        request,
    );
    d.source.mode = Some("intercept".into());
    d
}

fn status_only(status: u16) -> HttpResponse {
    HttpResponse {
        status,
        version: "HTTP/1.1".into(),
        headers: crate::http::Headers::new(),
        body: Body::default(),
        chunks: Vec::new(),
        first_byte_at: Some(Utc::now()),
    }
}

/// `host:port` for messages and notes (IPv6 in brackets).
fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Handle a CONNECT request on the proxy port: intercept a listed host (TLS with a minted
/// leaf, then the same serving as any connection), tunnel another one (only after the
/// connection to it succeeded), or refuse it.
pub(crate) async fn connect<S: ServeInner>(
    conns: &S,
    icpt: Arc<Interceptor>,
    info: ConnInfo,
    req: hyper::Request<Incoming>,
) -> Response {
    let st = conns.app_state().clone();
    let target = req
        .uri()
        .authority()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let (host, port) = match req.uri().authority() {
        Some(a) => (canonical_host(a.host()), a.port_u16().unwrap_or(443)),
        None => (String::new(), 0),
    };
    let draft = connect_draft(&st, &info, &redact_authority(&target));
    if target.contains('@') {
        return refuse_userinfo(draft, &target);
    }
    let c = Connect {
        req,
        draft,
        host,
        port,
    };
    match icpt.leaf(&c.host) {
        Some(Ok(tls)) => {
            let conns = conns.clone();
            st.tasks
                .spawn(async move { intercept(&conns, icpt, tls, c, info).await });
            empty(200)
        }
        Some(Err(e)) => {
            let message = format!("cannot mint a certificate for {}: {e}", c.host);
            c.draft
                .finish(Some(status_only(502)), Some(tls_failed(message)));
            empty(502)
        }
        None if icpt.config.tunnel_others && c.port != 0 => tunnel(&st, c).await,
        None => {
            let message = format!(
                "CONNECT {} refused: agentwire intercepts only {} (offline mode; --tunnel-others passes other hosts through)",
                redact_authority(&target),
                icpt.config.hosts.join(", ")
            );
            refused(c.draft, message)
        }
    }
}

/// A CONNECT being answered: the request (to upgrade), its record, and the target.
struct Connect {
    req: hyper::Request<Incoming>,
    draft: Draft,
    /// Target host, canonical ([`canonical_host`]).
    host: String,
    port: u16,
}

/// RFC 9110 §9.3.6: a CONNECT target is host and port only. Credentials there (never
/// sent by a real client) are refused, not acted on; the trace holds the target redacted.
fn refuse_userinfo(draft: Draft, target: &str) -> Response {
    let message = format!(
        "CONNECT {} refused: the target must be host:port without user information (RFC 9110 §9.3.6); send proxy credentials in Proxy-Authorization",
        redact_authority(target)
    );
    draft.finish(
        Some(status_only(400)),
        Some(ExchangeError {
            kind: "refused_connect".into(),
            message,
        }),
    );
    empty(400)
}

/// Record a refused CONNECT with `message` and answer 403.
fn refused(draft: Draft, message: String) -> Response {
    draft.finish(
        Some(status_only(403)),
        Some(ExchangeError {
            kind: "refused_connect".into(),
            message,
        }),
    );
    empty(403)
}

/// Intercept a listed host (run as a task once the CONNECT was answered 200): TLS with
/// the minted leaf `tls` within the head timeout, then the decrypted stream is served as
/// any connection (`info`, marked with the host). A failed handshake is recorded on the
/// CONNECT's exchange.
async fn intercept<S: ServeInner>(
    conns: &S,
    icpt: Arc<Interceptor>,
    tls: Arc<rustls::ServerConfig>,
    c: Connect,
    info: ConnInfo,
) {
    let Connect {
        req,
        mut draft,
        host,
        port,
    } = c;
    let timeout = conns.app_state().config.body_timeout;
    let Ok(upgraded) = hyper::upgrade::on(req).await else {
        return;
    };
    let acceptor = tokio_rustls::TlsAcceptor::from(tls);
    let handshake = tokio::time::timeout(timeout, acceptor.accept(TokioIo::new(upgraded))).await;
    match handshake {
        Ok(Ok(stream)) => {
            draft.notes.insert(
                "tls".into(),
                serde_json::json!({"intercepted": host, "port": port}),
            );
            draft.finish(Some(status_only(200)), None);
            let inner = ConnInfo {
                host: Some(host_port(&host, port).into()),
                recent: Default::default(),
                ..info
            };
            conns.serve_inner(stream, inner).await;
        }
        Ok(Err(e)) => {
            let ca = icpt.config.ca.cert_path().map_or(
                "agentwire's CA certificate (`agentwire ca --path`)".into(),
                |p| p.display().to_string(),
            );
            let message = format!(
                "TLS handshake for {host} failed: {e}. The client does not trust agentwire's CA: set NODE_EXTRA_CA_CERTS={ca} (Node.js and Claude Code), or SSL_CERT_FILE / REQUESTS_CA_BUNDLE to a bundle that includes it"
            );
            let diagnostics = &conns.app_state().config.diagnostics;
            diagnostics.status(&format!("agentwire: {message}"));
            draft.finish(Some(status_only(200)), Some(tls_failed(message)));
        }
        Err(_) => {
            let message = format!(
                "no TLS handshake for {host} within {} s after CONNECT (--body-timeout); the tunnel was closed",
                timeout.as_secs()
            );
            draft.finish(Some(status_only(200)), Some(tls_failed(message)));
        }
    }
}

/// Tunnel a host that is not intercepted (`--tunnel-others`): connect first (a CONNECT is
/// answered 200 only once the tunnel exists), then copy bytes both ways in a task and
/// record how many.
async fn tunnel(st: &AppState, c: Connect) -> Response {
    let Connect {
        req,
        draft,
        host,
        port,
    } = c;
    let dial = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        tokio::net::TcpStream::connect((host.as_str(), port)),
    )
    .await;
    let mut server = match dial {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => return tunnel_failed(draft, &host, port, &e.to_string()),
        Err(_) => return tunnel_failed(draft, &host, port, "no answer within 10 s"),
    };
    st.tasks.spawn(async move {
        let mut draft = draft;
        let Ok(upgraded) = hyper::upgrade::on(req).await else {
            return;
        };
        let mut client = TokioIo::new(upgraded);
        let r = tokio::io::copy_bidirectional(&mut client, &mut server).await;
        let (up, down) = r.unwrap_or((0, 0));
        draft.notes.insert(
            "tunnel".into(),
            serde_json::json!({"host": host, "port": port, "bytes_up": up, "bytes_down": down}),
        );
        draft.finish(Some(status_only(200)), None);
    });
    empty(200)
}

fn tls_failed(message: String) -> ExchangeError {
    ExchangeError {
        kind: "tls_failed".into(),
        message,
    }
}

fn tunnel_failed(draft: Draft, host: &str, port: u16, why: &str) -> Response {
    let message = format!("cannot tunnel to {}: {why}", host_port(host, port));
    draft.finish(
        Some(status_only(502)),
        Some(ExchangeError {
            kind: "tunnel_failed".into(),
            message,
        }),
    );
    empty(502)
}

fn empty(status: u16) -> Response {
    let mut r = Response::new(AxumBody::empty());
    *r.status_mut() =
        axum::http::StatusCode::from_u16(status).unwrap_or(axum::http::StatusCode::OK);
    r
}
