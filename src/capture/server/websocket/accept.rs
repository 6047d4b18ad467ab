//! Answering a Responses WebSocket upgrade: relayed in proxy mode, refused (426) when the
//! server is told to, else accepted and served in a tracked task.

use std::sync::Arc;

use axum::http::request::Parts;
use axum::response::Response;
use hyper::upgrade::OnUpgrade;

use super::handshake::{accept_key, switched, switching};
use super::{record, relay, session};
use crate::capture::server::config::Mode;
use crate::capture::server::draft::Draft;
use crate::capture::server::reply::openai_error_response;
use crate::capture::server::state::{AppState, ConnInfo};

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
        return openai_error_response(draft, 426, msg, rid, "websocket_refused");
    }
    let Some(accept) = accept_key(&parts.headers) else {
        draft.notes.insert("websocket".into(), "refused".into());
        let msg = "a WebSocket upgrade needs Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key (RFC 6455 §4.1)";
        return openai_error_response(draft, 400, msg, rid, "bad_websocket_handshake");
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
