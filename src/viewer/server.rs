//! The viewer's axum app: the page and its assets (inside the binary), the JSON API the
//! page reads (turns, the analysis summary, one turn's detail, search), the live feed
//! ([`super::live`]) and the export of the current view as the self-contained HTML
//! report. Every request passes [`super::security::refusal`] first; every JSON string
//! passes the redaction function on its way out.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use serde_json::{json, Value};

use super::security::{self, redact_value};
use super::state::ViewerState;

const INDEX_HTML: &str = include_str!("assets/index.html");
const APP_JS: &str = include_str!("assets/app.js");
const APP_CSS: &str = include_str!("assets/app.css");

/// The app: every route behind the token, Host and Origin checks.
pub fn app(state: Arc<ViewerState>) -> Router {
    Router::new()
        .route("/", get(index))
        .route(
            "/app.js",
            get(|| async { asset(APP_JS, "text/javascript; charset=utf-8") }),
        )
        .route(
            "/app.css",
            get(|| async { asset(APP_CSS, "text/css; charset=utf-8") }),
        )
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .route("/api/turns", get(turns))
        .route("/api/summary", get(summary))
        .route("/api/turn/{n}", get(turn))
        .route("/api/search", get(search))
        .route("/api/events", get(super::live::events))
        .route("/export", get(export))
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

/// Refuse what [`security::refusal`] refuses; harden every response's headers.
async fn guard(State(st): State<Arc<ViewerState>>, req: Request, next: Next) -> Response {
    let why = security::refusal(req.headers(), req.uri().query(), &st.token, &st.hosts);
    let mut resp = match why {
        Some(why) => (security::REFUSED, why).into_response(),
        None => next.run(req).await,
    };
    security::harden(resp.headers_mut());
    resp
}

fn asset(text: &'static str, content_type: &'static str) -> Response {
    let mut r = Response::new(Body::from(text));
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    r
}

/// The page, with the token for its asset and API requests.
async fn index(State(st): State<Arc<ViewerState>>) -> Response {
    let html = INDEX_HTML.replace("{{TOKEN}}", &st.token);
    let mut r = Response::new(Body::from(html));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    r
}

/// A JSON response, every string redacted.
pub fn json_response(mut v: Value) -> Response {
    redact_value(&mut v);
    let mut r = Response::new(Body::from(serde_json::to_vec(&v).unwrap_or_default()));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn error_response(status: StatusCode, msg: String) -> Response {
    let mut r = json_response(json!({"error": msg}));
    *r.status_mut() = status;
    r
}

/// Every turn's row, the unreadable lines, and what the input is.
async fn turns(State(st): State<Arc<ViewerState>>) -> Response {
    let m = st.read();
    json_response(json!({
        "input": m.input.display().to_string(),
        "live": st.live,
        "turns": m.turns,
        "problems": m.problems,
    }))
}

/// `analyze`'s summary, its episodes (with the turns of their polls) and jobs.
async fn summary(State(st): State<Arc<ViewerState>>) -> Response {
    let m = st.read();
    let Some(a) = &m.analysis else {
        return json_response(json!({"summary": null}));
    };
    let episodes: Vec<Value> = a
        .episodes
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let turns: Vec<usize> = e.calls.iter().filter_map(|c| m.turn_of_call(c)).collect();
            json!({"i": i, "thread": e.thread, "kind": e.kind, "tool": e.tool, "target": e.target,
                "job": e.job, "polls": e.polls, "redundant": e.redundant,
                "wasted_cost_usd": e.wasted_cost_usd, "turns": turns})
        })
        .collect();
    json_response(json!({
        "summary": a.summary,
        "episodes": episodes,
        "jobs": a.jobs,
        "threads": a.threads,
        "warnings": a.warnings,
    }))
}

/// One turn's detail.
async fn turn(State(st): State<Arc<ViewerState>>, Path(n): Path<usize>) -> Response {
    let r = tokio::task::spawn_blocking(move || super::detail::detail(&st.read(), n)).await;
    match r {
        Ok(Ok(v)) => json_response(v),
        Ok(Err(e)) => error_response(StatusCode::NOT_FOUND, e.to_string()),
        Err(e) => error_response(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// Search: `?q=WORDS`, optionally `&turns=1,2,3` (the current view).
async fn search(
    State(st): State<Arc<ViewerState>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let query = q.get("q").cloned().unwrap_or_default();
    let only = q.get("turns").map(|t| parse_turns(t));
    let r = tokio::task::spawn_blocking(move || {
        let m = st.read();
        let all: Vec<usize> = only.unwrap_or_else(|| (0..m.turns.len()).collect());
        super::search::search(&m, &query, all.into_iter())
    })
    .await;
    match r {
        Ok(hits) => json_response(json!({"hits": hits})),
        Err(e) => error_response(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

fn parse_turns(t: &str) -> Vec<usize> {
    t.split(',').filter_map(|s| s.trim().parse().ok()).collect()
}

/// The current view (`?turns=1,2,3`; all turns without it) as the self-contained HTML
/// audit report of `agentwire report analyze`.
async fn export(
    State(st): State<Arc<ViewerState>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let only = q.get("turns").map(|t| parse_turns(t));
    let r = tokio::task::spawn_blocking(move || super::live::export_html(&st, only)).await;
    match r {
        Ok(Ok(html)) => {
            let mut r = Response::new(Body::from(html));
            let h = r.headers_mut();
            h.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            );
            h.insert(
                header::CONTENT_DISPOSITION,
                HeaderValue::from_static("attachment; filename=\"agentwire-view.html\""),
            );
            r
        }
        Ok(Err(e)) => error_response(StatusCode::NOT_FOUND, e.to_string()),
        Err(e) => error_response(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}
