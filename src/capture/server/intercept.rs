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
use axum::Router;
use chrono::Utc;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tower::ServiceExt;

use super::draft::Draft;
use super::{AppState, ConnInfo};
use crate::capture::ca::CertificateAuthority;
use crate::trace::{Body, ExchangeError, HttpRequest, HttpResponse};

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
        if !self
            .config
            .hosts
            .iter()
            .any(|h| h.eq_ignore_ascii_case(host))
        {
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
        headers: Vec::new(),
        body: Body::default(),
    };
    let mut d = Draft::new(
        st,
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
        headers: Vec::new(),
        body: Body::default(),
        chunks: Vec::new(),
        first_byte_at: Some(Utc::now()),
    }
}

/// Handle a CONNECT request on the proxy port.
pub(crate) fn connect(
    st: Arc<AppState>,
    icpt: Arc<Interceptor>,
    router: Router,
    info: ConnInfo,
    req: hyper::Request<Incoming>,
) -> Response {
    let target = req
        .uri()
        .authority()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let (host, port) = match req.uri().authority() {
        Some(a) => (a.host().to_ascii_lowercase(), a.port_u16().unwrap_or(443)),
        None => (String::new(), 0),
    };
    let draft = connect_draft(&st, &info, &target);
    match icpt.leaf(&host) {
        Some(Ok(tls)) => {
            tokio::spawn(async move {
                let Ok(upgraded) = hyper::upgrade::on(req).await else {
                    return;
                };
                let acceptor = tokio_rustls::TlsAcceptor::from(tls);
                match acceptor.accept(TokioIo::new(upgraded)).await {
                    Ok(stream) => {
                        let mut draft = draft;
                        draft.notes.insert(
                            "tls".into(),
                            serde_json::json!({"intercepted": host, "port": port}),
                        );
                        draft.finish(Some(status_only(200)), None);
                        let inner = ConnInfo {
                            host: Some(format!("{host}:{port}").into()),
                            ..info
                        };
                        let svc =
                            hyper::service::service_fn(move |mut r: hyper::Request<Incoming>| {
                                r.extensions_mut().insert(inner.clone());
                                router.clone().oneshot(r.map(AxumBody::new))
                            });
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), svc)
                            .await;
                    }
                    Err(e) => {
                        let ca = icpt.config.ca.cert_path().map_or(
                            "agentwire's CA certificate (`agentwire ca --path`)".into(),
                            |p| p.display().to_string(),
                        );
                        let message = format!(
                            "TLS handshake for {host} failed: {e}. The client does not trust agentwire's CA: set NODE_EXTRA_CA_CERTS={ca} (Node.js and Claude Code), or SSL_CERT_FILE / REQUESTS_CA_BUNDLE to a bundle that includes it"
                        );
                        eprintln!("agentwire: {message}");
                        draft.finish(
                            Some(status_only(200)),
                            Some(ExchangeError {
                                kind: "tls_failed".into(),
                                message,
                            }),
                        );
                    }
                }
            });
            empty(200)
        }
        Some(Err(e)) => {
            let message = format!("cannot mint a certificate for {host}: {e}");
            draft.finish(
                Some(status_only(502)),
                Some(ExchangeError {
                    kind: "tls_failed".into(),
                    message,
                }),
            );
            empty(502)
        }
        None if icpt.config.tunnel_others && port != 0 => {
            tokio::spawn(async move {
                let Ok(upgraded) = hyper::upgrade::on(req).await else {
                    return;
                };
                let mut client = TokioIo::new(upgraded);
                let mut draft = draft;
                match tokio::net::TcpStream::connect((host.as_str(), port)).await {
                    Ok(mut server) => {
                        let r = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        let (up, down) = r.unwrap_or((0, 0));
                        draft.notes.insert("tunnel".into(), serde_json::json!({"host": host, "port": port, "bytes_up": up, "bytes_down": down}));
                        draft.finish(Some(status_only(200)), None);
                    }
                    Err(e) => {
                        let message = format!("cannot tunnel to {host}:{port}: {e}");
                        draft.finish(
                            None,
                            Some(ExchangeError {
                                kind: "tunnel_failed".into(),
                                message,
                            }),
                        );
                    }
                }
            });
            empty(200)
        }
        None => {
            let message = format!(
                "CONNECT {target} refused: agentwire intercepts only {} (offline mode; --tunnel-others passes other hosts through)",
                icpt.config.hosts.join(", ")
            );
            draft.finish(
                Some(status_only(403)),
                Some(ExchangeError {
                    kind: "refused_connect".into(),
                    message,
                }),
            );
            empty(403)
        }
    }
}

fn empty(status: u16) -> Response {
    let mut r = Response::new(AxumBody::empty());
    *r.status_mut() =
        axum::http::StatusCode::from_u16(status).unwrap_or(axum::http::StatusCode::OK);
    r
}
