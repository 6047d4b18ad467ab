//! The Responses WebSocket (OpenAI "WebSocket mode"): `GET …/responses` with
//! `Upgrade: websocket`, then one `response.create` text message per request, each
//! answered with the response's events as JSON text messages (no `event:` line).
//!
//! The handshake is hyper's upgrade (`hyper::upgrade::on`), so the server's own
//! connection layer keeps counting bytes (the ledger hands the connection over as a
//! tunnel); the protocol is `tokio-tungstenite`'s, through a [`tap`] that notes every
//! frame for the trace ([`record`]). `permessage-deflate` is never accepted (tungstenite
//! has none): the 101 carries no `Sec-WebSocket-Extensions`, so clients send plain frames.
//!
//! Stub, script and replay modes answer here ([`session`]); in proxy mode the upgrade is
//! relayed to the upstream ([`relay`]). [`crate::capture::server::config::WebSocketOptions`]
//! can refuse the upgrade (426, so clients fall back to `POST`) or close a connection
//! after N generated responses.

mod chain;
mod record;
mod relay;
mod session;
mod tap;

use std::sync::Arc;

use axum::extract::Request;
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::Response;
use chrono::Utc;
use hyper::upgrade::OnUpgrade;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use super::config::Mode;
use super::draft::Draft;
use super::state::{AppState, ConnInfo};
use crate::http::Headers;
use crate::trace::{Body, HttpResponse};

pub(crate) use chain::{outcome, Chain};

/// True for a request to open a Responses WebSocket: `GET …/responses` whose `Upgrade`
/// names `websocket`.
pub(crate) fn wants(req: &Request) -> bool {
    req.method() == Method::GET
        && req.uri().path().ends_with("/responses")
        && upgrade_named(req.headers())
}

/// `Upgrade` lists `websocket` (RFC 6455 §4.1, case-insensitive).
pub(crate) fn upgrade_named(h: &HeaderMap) -> bool {
    h.get_all("upgrade")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| t.trim().eq_ignore_ascii_case("websocket"))
}

/// `Sec-WebSocket-Accept` for a valid handshake (version 13 and a key), else `None`.
fn accept_key(h: &HeaderMap) -> Option<String> {
    let version = h.get("sec-websocket-version")?.to_str().ok()?;
    let key = h.get("sec-websocket-key")?;
    (version.trim() == "13").then(|| derive_accept_key(key.as_bytes()))
}

/// The `101 Switching Protocols` head (no extensions: deflate is never accepted).
fn switching(accept: &str) -> (Headers, Response) {
    let headers: Headers = vec![
        ("upgrade".into(), "websocket".into()),
        ("connection".into(), "Upgrade".into()),
        ("sec-websocket-accept".into(), accept.to_string()),
    ]
    .into();
    let mut r = Response::new(axum::body::Body::empty());
    *r.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    for (k, v) in &headers {
        if let (Ok(k), Ok(v)) = (
            axum::http::HeaderName::from_bytes(k.as_bytes()),
            HeaderValue::from_str(v),
        ) {
            r.headers_mut().append(k, v);
        }
    }
    (headers, r)
}

/// The recorded `101` response of an upgrade.
fn switched(headers: Headers) -> HttpResponse {
    HttpResponse {
        status: 101,
        version: "HTTP/1.1".into(),
        headers,
        body: Body::default(),
        chunks: Vec::new(),
        first_byte_at: Some(Utc::now()),
    }
}

/// Answer a WebSocket upgrade (`draft` is its exchange, `on` hyper's handle on the
/// connection after it): relayed in proxy mode, refused 426 when the server is told to,
/// else accepted and served by [`session::run`] in a tracked task.
pub(crate) async fn upgrade(
    st: Arc<AppState>,
    mut draft: Draft,
    parts: Parts,
    on: OnUpgrade,
    conn: Option<ConnInfo>,
    rid: &str,
) -> Response {
    if let Mode::Proxy(up) = &st.config.mode {
        let up = up.clone();
        return relay::open(st, up, draft, parts, on, conn, rid).await;
    }
    if st.config.websocket.refuse {
        draft.notes.insert("websocket".into(), "refused".into());
        let msg = "agentwire serve --websocket refuse: this server answers the Responses API over HTTP only; send POST …/responses";
        return super::responses::error_response(draft, 426, msg, rid, "websocket_refused");
    }
    let Some(accept) = accept_key(&parts.headers) else {
        draft.notes.insert("websocket".into(), "refused".into());
        let msg = "a WebSocket upgrade needs Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key (RFC 6455 §4.1)";
        return super::responses::error_response(draft, 400, msg, rid, "bad_websocket_handshake");
    };
    let (headers, response) = switching(&accept);
    draft.notes.insert("websocket".into(), "upgrade".into());
    let upgrade = record::Upgrade {
        id: draft.id,
        request: draft.request.clone(),
        response_headers: headers.clone(),
        source: draft.source.clone(),
        conn: conn.clone(),
    };
    draft.finish(Some(switched(headers)), None);
    if let Some(c) = &conn {
        // What follows the 101 is frames, not requests.
        c.recent.tunnel();
    }
    let task_st = st.clone();
    st.tasks.spawn(async move {
        if let Ok(io) = on.await {
            session::run(task_st, io, upgrade).await;
        }
    });
    response
}

/// A close frame's facts for the trace.
fn close_of(
    by: crate::trace::websocket::Direction,
    cf: Option<&tokio_tungstenite::tungstenite::protocol::CloseFrame>,
) -> crate::trace::websocket::Close {
    crate::trace::websocket::Close {
        by: Some(by),
        code: cf.map(|c| u16::from(c.code)),
        reason: cf.map(|c| c.reason.to_string()).unwrap_or_default(),
    }
}
