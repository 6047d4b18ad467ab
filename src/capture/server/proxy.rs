//! Recording proxy mode: every request is forwarded to the one configured upstream (HTTPS
//! through rustls, or HTTP), the response streams back as it arrives — SSE events reach
//! the client without buffering — and both sides are recorded. Secrets are forwarded but
//! only their redaction markers are written. No open relay: absolute-form requests for
//! any other host and CONNECT are refused.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body as AxumBody;
use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;
use futures_util::StreamExt;

use super::draft::{Draft, RecordingStream, StreamFailure};
use super::error::ServerError;
use super::reply::error_response;
use crate::http::fields::{self, is_hop_by_hop, skip_request};
use crate::http::target::{normalize_path, TargetError};
use crate::http::Headers;
use crate::trace::redact::{redact_headers, redact_text};
use crate::trace::ExchangeError;

/// Header names a message declares hop-by-hop in its `Connection` field (RFC 9110
/// §7.6.1): they are for this hop only and never forwarded.
fn connection_named(h: &HeaderMap) -> Vec<String> {
    h.get_all("connection")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(fields::items)
        .collect()
}

/// The one upstream a proxy forwards to.
#[derive(Clone, Debug)]
pub struct Upstream {
    /// Base URL, e.g. `https://api.anthropic.com`; request targets are appended to it.
    /// May hold credentials (userinfo): never write or echo it; use [`Upstream::display`].
    pub base: reqwest::Url,
    /// The base URL with credentials redacted: what traces, error bodies and messages show.
    pub display: String,
    client: reqwest::Client,
    /// TLS for a `wss://` leg (the Responses WebSocket): the same roots as `client` (the
    /// bundled web PKI roots, plus the CA file).
    pub(crate) ws_tls: Arc<rustls::ClientConfig>,
}

impl Upstream {
    /// An upstream at `url`, trusting the system roots plus the PEM CA in `ca_file`, with
    /// `read_timeout` between received bytes.
    ///
    /// Errors: [`ServerError::BadUpstream`] for a URL that is not http(s) with a host;
    /// [`ServerError::CaFile`] when the CA file cannot be read or parsed.
    pub fn new(
        url: &str,
        ca_file: Option<&Path>,
        read_timeout: Duration,
    ) -> Result<Upstream, ServerError> {
        let bad = |reason: &str| ServerError::BadUpstream {
            url: redact_text(url),
            reason: redact_text(reason),
        };
        let base = reqwest::Url::parse(url).map_err(|e| bad(&e.to_string()))?;
        if !matches!(base.scheme(), "http" | "https") || base.host_str().is_none() {
            return Err(bad("use an http:// or https:// URL with a host"));
        }
        let mut b = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .read_timeout(read_timeout)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy();
        let mut roots =
            rustls::RootCertStore::from_iter(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        if let Some(path) = ca_file {
            let ca_err = |message: String| ServerError::CaFile {
                path: path.display().to_string(),
                message,
            };
            let pem = std::fs::read(path).map_err(|e| ca_err(e.to_string()))?;
            let certs =
                reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| ca_err(e.to_string()))?;
            if certs.is_empty() {
                return Err(ca_err("no PEM certificate in it".into()));
            }
            for c in certs {
                b = b.add_root_certificate(c);
            }
            use rustls::pki_types::pem::PemObject;
            for der in rustls::pki_types::CertificateDer::pem_slice_iter(&pem).flatten() {
                let _ = roots.add(der);
            }
        }
        let ws_tls = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(&e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
        let client = b.build().map_err(|e| bad(&e.to_string()))?;
        let display = redact_text(base.as_str());
        Ok(Upstream {
            base,
            display,
            client,
            ws_tls: Arc::new(ws_tls),
        })
    }

    /// The upstream URL for a request target `uri`: its path normalized once
    /// ([`crate::http::target::normalize_path`]) after the base's path, and its query.
    ///
    /// Errors: the path climbs above its root, so it would leave the base path.
    pub(crate) fn url_for(&self, uri: &Uri) -> Result<reqwest::Url, TargetError> {
        let path = normalize_path(uri.path())?;
        let mut u = self.base.clone();
        let prefix = self.base.path().trim_end_matches('/');
        u.set_path(&format!("{prefix}{path}"));
        u.set_query(uri.query());
        Ok(u)
    }

    /// A request for `uri` (path and query, appended to the base) carrying `headers`
    /// minus the hop-by-hop and proxy-only ones: the seam other recording proxies
    /// (Streamable HTTP MCP) forward through.
    pub(crate) fn request(
        &self,
        method: Method,
        uri: &Uri,
        headers: &HeaderMap,
    ) -> reqwest::RequestBuilder {
        // A target that would leave the base goes to the base itself, where no route
        // answers it; callers refuse such targets before ([`Upstream::url_for`]).
        let url = self.url_for(uri).unwrap_or_else(|_| self.base.clone());
        let mut req = self.client.request(method, url);
        for (k, v) in headers {
            if !skip_request(k.as_str()) {
                req = req.header(k, v);
            }
        }
        req
    }

    /// True when an absolute-form request target names this upstream.
    fn is_upstream_authority(&self, uri: &Uri) -> bool {
        match uri.authority() {
            None => true,
            Some(a) => {
                use crate::http::host::canonical_host;
                canonical_host(a.host()) == canonical_host(self.base.host_str().unwrap_or(""))
                    && a.port_u16().or_else(|| default_port(uri.scheme_str()))
                        == self.base.port_or_known_default()
            }
        }
    }
}

fn default_port(scheme: Option<&str>) -> Option<u16> {
    match scheme {
        Some("https") => Some(443),
        _ => Some(80),
    }
}

/// Forward one request and stream the answer back, recording both.
pub(crate) async fn forward(
    up: &Upstream,
    mut draft: Draft,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    rid: &str,
) -> Response {
    draft.source.kind = crate::trace::SourceKind::Proxy;
    draft.source.upstream = Some(up.display.clone());
    if method == Method::CONNECT || !up.is_upstream_authority(&uri) {
        let msg = format!(
            "this proxy only forwards to {}; {method} {} refused",
            up.display,
            redact_text(&uri.to_string())
        );
        return error_response(draft, 403, &msg, rid, "refused_upstream");
    }
    let (url, path) = match up
        .url_for(&uri)
        .and_then(|u| Ok((u, normalize_path(uri.path())?)))
    {
        Ok(x) => x,
        Err(e) => {
            let msg = redact_text(&e.to_string());
            return error_response(draft, 400, &msg, rid, "refused_target");
        }
    };
    // The target is recorded as forwarded: normalized once (as received when that
    // changed nothing, so an absolute-form target stays as the client wrote it).
    if path != uri.path() {
        draft.request.target = redact_text(&match uri.query() {
            Some(q) => format!("{path}?{q}"),
            None => path,
        });
    }
    let mut req = up.client.request(method, url);
    let named = connection_named(&headers);
    for (k, v) in &headers {
        if !skip_request(k.as_str()) && !named.iter().any(|n| n == k.as_str()) {
            req = req.header(k, v);
        }
    }
    // The body is shared with the upstream request, not copied, and taken back for the
    // recording once sent (a copy only if the client still holds it).
    let body = bytes::Bytes::from(std::mem::take(&mut draft.request.body.bytes));
    let sent = req.body(body.clone()).send().await;
    draft.request.body.bytes = match body.try_into_mut() {
        Ok(only) => only.into(),
        Err(shared) => shared.to_vec(),
    };
    match sent {
        Ok(resp) => relay(up, draft, resp),
        Err(e) => {
            let (status, what) = if e.is_timeout() {
                (504, "timed out")
            } else if e.is_connect() {
                (502, "cannot be reached")
            } else {
                (502, "failed")
            };
            let msg = format!(
                "upstream {} {what}: {}",
                up.display,
                redact_text(&crate::capture::error_chain(&e))
            );
            error_response(draft, status, &msg, rid, "upstream_error")
        }
    }
}

/// Stream the upstream's answer `resp` back, without its hop-by-hop fields, recording it
/// (headers redacted) as it goes.
fn relay(up: &Upstream, draft: Draft, resp: reqwest::Response) -> Response {
    let status = resp.status().as_u16();
    let named = connection_named(resp.headers());
    let hop = |k: &str| is_hop_by_hop(k) || named.iter().any(|n| n == k);
    let mut out_headers: Headers = resp
        .headers()
        .iter()
        .filter(|(k, _)| !hop(k.as_str()))
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                crate::http::fields::field_text(v.as_bytes()),
            )
        })
        .collect();
    // Built from typed parts (reqwest's status and headers), so it cannot fail: a builder
    // error never turns into an empty 200.
    let mut head = HeaderMap::new();
    for (k, v) in resp.headers() {
        if !hop(k.as_str()) {
            head.append(k, v.clone());
        }
    }
    let upstream_status = resp.status();
    redact_headers(&mut out_headers);
    let base = up.display.clone();
    let source = resp.bytes_stream().map(move |r| {
        r.map_err(|e| StreamFailure {
            error: ExchangeError {
                kind: "upstream_reset".into(),
                message: format!(
                    "upstream {base} broke off the response: {}",
                    redact_text(&crate::capture::error_chain(&e))
                ),
            },
            abort: true,
        })
    });
    let stream = RecordingStream::new(draft, status, out_headers, Box::pin(source));
    let mut r = Response::new(AxumBody::from_stream(stream));
    *r.status_mut() = upstream_status;
    *r.headers_mut() = head;
    r
}
