//! Proxy mode over the Responses WebSocket: an upgrade to the recording proxy is relayed
//! to the upstream (`ws://` for an `http://` upstream, `wss://` through rustls for an
//! `https://` one, trusting the same roots as the HTTP proxy), and the messages are
//! relayed both ways and recorded as the server records its own ([`super::record`]).
//!
//! Neither leg is compressed: the client's `Sec-WebSocket-Extensions` is not forwarded
//! (tungstenite has no permessage-deflate), so the upstream answers without it, and the
//! client is answered without it. An upstream that refuses the upgrade (426, 401, …) has
//! its answer relayed as the upgrade's, so the client falls back as it would.

use std::sync::Arc;
use std::time::Duration;

use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use futures_util::{SinkExt, StreamExt};
use hyper::upgrade::OnUpgrade;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_tungstenite::tungstenite::handshake::client::generate_key;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::WebSocketStream;

use super::record::{Recording, Upgrade};
use super::session::{socket, Socket};
use crate::capture::server::draft::Draft;
use crate::capture::server::proxy::Upstream;
use crate::capture::server::reply::openai_error_response as error_response;
use crate::capture::server::state::{AppState, ConnInfo};
use crate::http::fields::skip_request;
use crate::http::Headers;
use crate::trace::redact::{redact_headers, redact_text};
use crate::trace::websocket::Direction;
use crate::trace::{Body, HttpResponse, SourceKind};

/// Any byte stream to the upstream (TCP or TLS).
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// The upstream leg.
type UpstreamSocket = WebSocketStream<Box<dyn Io>>;

/// Request headers never forwarded on the upstream handshake: the handshake's own (the
/// relay makes its key), and the extensions (neither leg is compressed).
fn own_handshake_field(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with("sec-websocket-") || n == "host" || n == "upgrade" || n == "connection"
}

/// Relay the upgrade in `draft` to `up`: connect, hand-shake, answer the client as the
/// upstream answered, and relay the messages in a tracked task.
pub(crate) async fn open(
    st: Arc<AppState>,
    up: Arc<Upstream>,
    mut draft: Draft,
    parts: Parts,
    on: OnUpgrade,
    conn: Option<ConnInfo>,
    rid: &str,
) -> Response {
    draft.source.kind = SourceKind::Proxy;
    draft.source.upstream = Some(up.display.clone());
    let Some(accept) = super::handshake::accept_key(&parts.headers) else {
        let msg = "a WebSocket upgrade needs Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key (RFC 6455 §4.1)";
        return error_response(draft, 400, msg, rid, "bad_websocket_handshake");
    };
    let (upstream, answered) = match dial(&st, &up, &parts).await {
        Ok(x) => x,
        Err(Failure::Ws(tungstenite::Error::Http(resp))) => return refused(draft, *resp),
        Err(e) => {
            let shown = redact_text(&e.to_string());
            let msg = format!("upstream {} WebSocket failed: {shown}", up.display);
            return error_response(draft, 502, &msg, rid, "upstream_error");
        }
    };
    let (headers, response) = switching_as(&accept, &answered);
    draft.notes.insert("websocket".into(), "upgrade".into());
    let upgrade = Upgrade {
        id: draft.id,
        request: draft.request.clone(),
        response_headers: headers.clone(),
        source: draft.source.clone(),
        conn: conn.clone(),
    };
    draft.finish(Some(super::handshake::switched(headers)), None);
    if let Some(c) = &conn {
        c.recent.tunnel();
    }
    let task_st = st.clone();
    st.tasks.spawn(async move {
        if let Ok(io) = on.await {
            let (client, rec) =
                socket(&task_st, io, upgrade, tungstenite::protocol::Role::Server).await;
            relay(task_st, client, upstream, rec).await;
        }
    });
    response
}

/// Open the upstream leg for the client's upgrade `parts`, within 20 s.
async fn dial(
    st: &AppState,
    up: &Upstream,
    parts: &Parts,
) -> Result<(UpstreamSocket, tungstenite::handshake::client::Response), Failure> {
    let request = handshake_request(up, parts)?;
    let config = tungstenite::protocol::WebSocketConfig::default()
        .max_message_size(Some(st.config.max_body))
        .max_frame_size(Some(st.config.max_body));
    tokio::time::timeout(Duration::from_secs(20), async {
        let io = connect(up).await?;
        tokio_tungstenite::client_async_with_config(request, io, Some(config))
            .await
            .map_err(Failure::Ws)
    })
    .await
    .unwrap_or_else(|_| Err(Failure::Other("no handshake within 20 s".into())))
}

/// The client's 101 (its own accept key) with the upstream's 101 headers other than
/// hop-by-hop and `Sec-WebSocket-*` ones; the recorded headers, redacted, and the response.
fn switching_as(
    accept: &str,
    answered: &tungstenite::handshake::client::Response,
) -> (Headers, Response) {
    let (mut headers, mut response) = super::handshake::switching(accept);
    let mut extra: Headers = (answered.headers().iter())
        .filter(|(k, _)| !crate::http::fields::is_hop_by_hop(k.as_str()))
        .filter(|(k, _)| !k.as_str().starts_with("sec-websocket-"))
        .map(|(k, v)| (k.to_string(), crate::http::fields::field_text(v.as_bytes())))
        .collect();
    for (k, v) in &extra {
        if let (Ok(k), Ok(v)) = (
            axum::http::HeaderName::from_bytes(k.as_bytes()),
            HeaderValue::from_str(v),
        ) {
            response.headers_mut().append(k, v);
        }
    }
    redact_headers(&mut extra);
    for kv in extra {
        headers.push(kv);
    }
    (headers, response)
}

/// Why the upstream leg could not be opened.
#[derive(Debug)]
enum Failure {
    Ws(tungstenite::Error),
    Other(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Ws(e) => write!(f, "{e}"),
            Failure::Other(s) => f.write_str(s),
        }
    }
}

impl From<String> for Failure {
    fn from(s: String) -> Self {
        Failure::Other(s)
    }
}

/// The upstream handshake request: the client's headers (less the handshake's own and
/// hop-by-hop ones), with a fresh key.
fn handshake_request(
    up: &Upstream,
    parts: &Parts,
) -> Result<tungstenite::handshake::client::Request, String> {
    let url = ws_url(up, &parts.uri)?;
    let mut b = tungstenite::http::Request::builder().uri(url.as_str());
    let named = connection_named(&parts.headers);
    for (k, v) in &parts.headers {
        let n = k.as_str();
        if !own_handshake_field(n) && !skip_request(n) && !named.iter().any(|x| x == n) {
            b = b.header(n, v.as_bytes());
        }
    }
    let host = match (url.host_str(), url.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_string(),
        _ => return Err("the upstream URL has no host".into()),
    };
    b.header("Host", host)
        .header("Connection", "Upgrade")
        .header("Upgrade", "websocket")
        .header("Sec-WebSocket-Version", "13")
        .header("Sec-WebSocket-Key", generate_key())
        .body(())
        .map_err(|e| e.to_string())
}

/// The upstream URL of a WebSocket request for `uri`: the HTTP URL with `ws` or `wss`.
fn ws_url(up: &Upstream, uri: &axum::http::Uri) -> Result<reqwest::Url, String> {
    let mut url = up.url_for(uri).map_err(|e| e.to_string())?;
    let scheme = if url.scheme() == "https" { "wss" } else { "ws" };
    url.set_scheme(scheme)
        .map_err(|()| format!("cannot make a {scheme}:// URL of the upstream"))?;
    Ok(url)
}

/// A connection to the upstream's host: TCP, with TLS for an `https://` upstream.
async fn connect(up: &Upstream) -> Result<Box<dyn Io>, String> {
    let host = up
        .base
        .host_str()
        .ok_or("the upstream URL has no host")?
        .to_string();
    let port = up.base.port_or_known_default().unwrap_or(80);
    let bare = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let tcp = tokio::time::timeout(
        Duration::from_secs(10),
        tokio::net::TcpStream::connect((bare.as_str(), port)),
    )
    .await
    .map_err(|_| "cannot be reached within 10 s".to_string())?
    .map_err(|e| format!("cannot be reached: {e}"))?;
    let _ = tcp.set_nodelay(true);
    if up.base.scheme() != "https" {
        return Ok(Box::new(tcp));
    }
    let name = rustls::pki_types::ServerName::try_from(bare)
        .map_err(|e| format!("{host} is no TLS server name: {e}"))?;
    let tls = tokio_rustls::TlsConnector::from(up.ws_tls.clone())
        .connect(name, tcp)
        .await
        .map_err(|e| format!("TLS with the upstream failed: {e}"))?;
    Ok(Box::new(tls))
}

/// Header names the client's `Connection` declares hop-by-hop.
fn connection_named(h: &HeaderMap) -> Vec<String> {
    h.get_all("connection")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(crate::http::fields::items)
        .collect()
}

/// Answer the client as the upstream refused the upgrade (status, headers, body).
fn refused(mut draft: Draft, resp: tungstenite::http::Response<Option<Vec<u8>>>) -> Response {
    let status = resp.status().as_u16();
    let body = resp.body().clone().unwrap_or_default();
    let mut headers: Headers = (resp.headers().iter())
        .filter(|(k, _)| !crate::http::fields::skip_response(k.as_str()))
        .map(|(k, v)| (k.to_string(), crate::http::fields::field_text(v.as_bytes())))
        .collect();
    let mut out = Response::new(axum::body::Body::from(body.clone()));
    *out.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    for (k, v) in resp.headers() {
        if !crate::http::fields::skip_response(k.as_str()) {
            out.headers_mut().append(k, v.clone());
        }
    }
    redact_headers(&mut headers);
    draft.notes.insert("websocket".into(), "refused".into());
    let recorded = HttpResponse {
        status,
        version: "HTTP/1.1".into(),
        headers,
        body: Body::new(body.clone()),
        chunks: vec![(draft.elapsed_us(), body.len() as u64)],
        first_byte_at: Some(chrono::Utc::now()),
    };
    draft.finish(Some(recorded), None);
    out
}

/// What the relay does after a message from either leg.
enum Step {
    Go,
    /// Stop relaying; `true`: the connection was cut (no close handshake).
    End(bool),
}

/// Relay messages both ways until either side ends, recording each client message as an
/// exchange with the upstream's messages until the next one.
async fn relay(
    st: Arc<AppState>,
    mut client: Socket,
    mut upstream: UpstreamSocket,
    mut rec: Recording,
) {
    let mut stop = st.stop.clone();
    let mut client_closed = false;
    let cut = loop {
        let step = tokio::select! {
            m = client.next() => from_client(m, &mut rec, &mut upstream, &mut client_closed).await,
            m = upstream.next() => from_upstream(m, &mut rec, &mut client, client_closed).await,
            _ = async { let _ = stop.wait_for(|s| *s).await; } => {
                let _ = upstream.close(None).await;
                let _ = client.close(None).await;
                Step::End(false)
            }
        };
        if let Step::End(cut) = step {
            break cut;
        }
    };
    rec.end(cut);
}

/// A client message (or its end), relayed to the upstream.
async fn from_client(
    m: Option<Result<Message, tungstenite::Error>>,
    rec: &mut Recording,
    upstream: &mut UpstreamSocket,
    client_closed: &mut bool,
) -> Step {
    let sent = match m {
        Some(Ok(Message::Text(t))) => {
            rec.begin(t.as_bytes().to_vec(), false);
            upstream.send(Message::Text(t)).await
        }
        Some(Ok(Message::Binary(b))) => {
            rec.begin(b.to_vec(), false);
            upstream.send(Message::Binary(b)).await
        }
        Some(Ok(Message::Close(cf))) => {
            rec.closed(super::handshake::close_of(Direction::Client, cf.as_ref()));
            *client_closed = true;
            let _ = upstream.send(Message::Close(cf)).await;
            Ok(())
        }
        // Pings are answered on each leg by its own side.
        Some(Ok(_)) => Ok(()),
        None => return Step::End(false),
        // The client ended without a close handshake (Codex does so when it exits):
        // `closed` records it.
        Some(Err(_)) => return Step::End(!*client_closed),
    };
    match sent {
        Ok(()) => Step::Go,
        Err(_) => Step::End(true),
    }
}

/// An upstream message (or its end), relayed to the client.
async fn from_upstream(
    m: Option<Result<Message, tungstenite::Error>>,
    rec: &mut Recording,
    client: &mut Socket,
    client_closed: bool,
) -> Step {
    let sent = match m {
        Some(Ok(Message::Text(t))) => {
            rec.server(t.as_bytes());
            client.send(Message::Text(t)).await
        }
        Some(Ok(Message::Binary(b))) => {
            rec.server(&b);
            client.send(Message::Binary(b)).await
        }
        Some(Ok(Message::Close(cf))) => {
            if !client_closed {
                rec.closed(super::handshake::close_of(Direction::Server, cf.as_ref()));
            }
            let _ = client.send(Message::Close(cf)).await;
            Ok(())
        }
        Some(Ok(_)) => Ok(()),
        None | Some(Err(_)) if client_closed => return Step::End(false),
        None | Some(Err(_)) => {
            let why = "the upstream's WebSocket ended without a close handshake";
            rec.error("upstream_reset", why.into());
            return Step::End(true);
        }
    };
    match sent {
        Ok(()) => Step::Go,
        Err(_) => Step::End(true),
    }
}
