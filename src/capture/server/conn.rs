//! Connections: accepting, TLS handshakes, and serving HTTP/1.1 on any stream — a plain
//! TCP connection, a TLS connection (`--tls-cert`), or the decrypted inside of an
//! intercepted CONNECT tunnel — with the same limits (head timeout, handshake timeout) and
//! the same accounting of received bytes ([`super::tee`], recorded by [`super::unclaimed`])
//! everywhere. Every connection task is tracked ([`super::state::Tasks`]), so a shutdown can
//! let them finish and then cut the rest (their open exchanges are recorded as `shutdown`).

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tower::ServiceExt;

use super::state::{AppState, ConnInfo};
use super::{intercept, tee, unclaimed};

/// The future answering one request.
type ResponseFuture = std::pin::Pin<
    Box<dyn Future<Output = Result<axum::response::Response, std::convert::Infallible>> + Send>,
>;

/// The per-connection service: every request claims its bytes in the connection's ledger;
/// CONNECT goes to the interceptor (when on, and not inside a tunnel already), everything
/// else to the router with the connection's facts attached.
#[derive(Clone)]
struct Service {
    conns: Connections,
    info: ConnInfo,
}

impl hyper::service::Service<hyper::Request<Incoming>> for Service {
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    // Boxed: a CONNECT's future serves the tunnel's inside with this same service.
    type Future = ResponseFuture;

    fn call(&self, mut req: hyper::Request<Incoming>) -> ResponseFuture {
        let this = self.conns.clone();
        let info = self.info.clone();
        Box::pin(async move {
            info.recent.claim();
            if let Some(icpt) = &this.intercept {
                if req.method() == hyper::Method::CONNECT && info.host.is_none() {
                    return Ok(intercept::connect(&this, icpt.clone(), info, req).await);
                }
            }
            req.extensions_mut().insert(info);
            this.router.oneshot(req.map(axum::body::Body::new)).await
        })
    }
}

/// What every connection needs.
#[derive(Clone)]
pub(crate) struct Connections {
    pub(crate) state: Arc<AppState>,
    pub(crate) router: Router,
    pub(crate) intercept: Option<Arc<intercept::Interceptor>>,
    pub(crate) stop: watch::Receiver<bool>,
}

impl Connections {
    /// Serve HTTP/1.1 on `io` until the client or a shutdown ends it; then record what the
    /// connection sent that no handler received.
    pub(crate) async fn serve<T>(&self, io: T, info: ConnInfo)
    where
        T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let timeout = self.state.config.body_timeout;
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(timeout)
            // The ledger frames heads with the same limit (a longer head is not a request).
            .max_buf_size(tee::MAX_HEAD)
            .max_headers(tee::MAX_HEADERS)
            // A client may shut down its write side after sending its request and still
            // wait for the answer.
            .half_close(true);
        let io = TokioIo::new(tee::Tee::new(io, info.recent.clone()));
        let svc = Service {
            conns: self.clone(),
            info: info.clone(),
        };
        let mut conn = pin!(builder.serve_connection(io, svc).with_upgrades());
        let mut stop = self.stop.clone();
        let result = tokio::select! {
            r = conn.as_mut() => r,
            _ = async { let _ = stop.wait_for(|s| *s).await; } => {
                conn.as_mut().graceful_shutdown();
                conn.await
            }
        };
        unclaimed::record(&self.state, &info, result.as_ref().err());
    }

    /// TLS-accept `stream` within the head timeout, then [`serve`](Self::serve) it. A
    /// client that never completes the handshake is dropped when the time is up.
    pub(crate) async fn serve_tls<T>(
        &self,
        acceptor: tokio_rustls::TlsAcceptor,
        stream: T,
        info: ConnInfo,
    ) -> Result<(), String>
    where
        T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let timeout = self.state.config.body_timeout;
        match tokio::time::timeout(timeout, acceptor.accept(stream)).await {
            Ok(Ok(tls)) => {
                self.serve(tls, info).await;
                Ok(())
            }
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!(
                "no TLS handshake within {} s (--body-timeout)",
                timeout.as_secs()
            )),
        }
    }
}

impl intercept::ServeInner for Connections {
    fn app_state(&self) -> &Arc<AppState> {
        &self.state
    }

    fn serve_inner(
        &self,
        stream: intercept::InnerStream,
        info: ConnInfo,
    ) -> impl Future<Output = ()> + Send {
        self.serve(stream, info)
    }
}

/// Accept connections until `stop` fires; each is served in a tracked task.
pub(crate) async fn accept_loop(
    listener: TcpListener,
    conns: Connections,
    tls: Option<Arc<rustls::ServerConfig>>,
    mut stop: oneshot::Receiver<()>,
) {
    let acceptor = tls.map(tokio_rustls::TlsAcceptor::from);
    let mut next_conn = 0u64;
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(x) => x,
                    Err(e) => {
                        // Out of file descriptors and the like: back off, keep serving
                        // (stalled connections are closed by their timeouts).
                        conns.state.config.diagnostics.warn(&format!("accept failed: {e}"));
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let info = ConnInfo { peer, id: next_conn, host: None, recent: tee::Recent::default() };
                next_conn += 1;
                let c = conns.clone();
                match &acceptor {
                    None => conns.state.tasks.spawn(async move { c.serve(stream, info).await }),
                    Some(a) => {
                        let a = a.clone();
                        conns.state.tasks.spawn(async move {
                            let _ = c.serve_tls(a, stream, info).await;
                        });
                    }
                }
            }
            _ = &mut stop => break,
        }
    }
}
