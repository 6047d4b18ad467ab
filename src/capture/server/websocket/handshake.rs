//! The WebSocket handshake on the server side (RFC 6455 §4): recognising an upgrade
//! request, the `Sec-WebSocket-Accept` key, the `101 Switching Protocols` head (no
//! extensions: permessage-deflate is never accepted), and close frames as the trace
//! records them.

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::Response;
use chrono::Utc;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;

use crate::http::Headers;
use crate::trace::{Body, HttpResponse};

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
pub(crate) fn accept_key(h: &HeaderMap) -> Option<String> {
    let version = h.get("sec-websocket-version")?.to_str().ok()?;
    let key = h.get("sec-websocket-key")?;
    (version.trim() == "13").then(|| derive_accept_key(key.as_bytes()))
}

/// The `101 Switching Protocols` head (no extensions: deflate is never accepted).
pub(crate) fn switching(accept: &str) -> (Headers, Response) {
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
pub(crate) fn switched(headers: Headers) -> HttpResponse {
    HttpResponse {
        status: 101,
        version: "HTTP/1.1".into(),
        headers,
        body: Body::default(),
        chunks: Vec::new(),
        first_byte_at: Some(Utc::now()),
    }
}

/// A close frame's facts for the trace.
pub(crate) fn close_of(
    by: crate::trace::websocket::Direction,
    cf: Option<&tokio_tungstenite::tungstenite::protocol::CloseFrame>,
) -> crate::trace::websocket::Close {
    crate::trace::websocket::Close {
        by: Some(by),
        code: cf.map(|c| u16::from(c.code)),
        reason: cf.map(|c| c.reason.to_string()).unwrap_or_default(),
    }
}
