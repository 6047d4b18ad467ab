//! The live side: exchanges pushed by the recorder (`serve --ui`, `record --ui`) join the
//! index as they are written ([`ingest`]) and go to every open page over Server-Sent
//! Events ([`events`]); the index is re-analysed shortly after it changes
//! ([`analyse_while_live`]), and the pages told to refresh their badges. Also the export
//! of a set of turns as the self-contained HTML audit report ([`export_html`]).

use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream::{self, Stream};
use serde_json::{json, Value};
use tokio::sync::broadcast;

use crate::analyze::Analyzer;
use crate::report::meta::MetaCollector;
use crate::trace::{Exchange, Record};

use super::model::BodyRef;
use super::security::redact_value;
use super::state::ViewerState;
use super::ViewerError;

/// How long after a change the live index is analysed again, at most.
pub const ANALYSE_EVERY: Duration = Duration::from_millis(300);

/// Add (or, for an id already listed, update) a recorded exchange and tell the pages.
/// Its non-body strings are redacted first, as the trace writer redacts them.
pub fn ingest(st: &ViewerState, x: Exchange) {
    let x = Arc::new(crate::trace::redact::exchange(&x).unwrap_or(x));
    let row = {
        let mut m = st.write();
        let found = m
            .turns
            .iter()
            .rposition(|t| t.id == x.id && t.file.is_none());
        let n = match found {
            Some(n) => {
                m.update(n, &x, BodyRef::Held(x.clone()));
                n
            }
            None => {
                let key = m.input.display().to_string();
                m.push(&x, BodyRef::Held(x.clone()), &key, None)
            }
        };
        m.turns[n].clone()
    };
    st.dirty.store(true, Ordering::SeqCst);
    send(st, json!({"type": "turn", "row": row}));
}

/// Send an event to every open page (none open: dropped).
fn send(st: &ViewerState, mut v: Value) {
    redact_value(&mut v);
    let _ = st.events.send(v.to_string());
}

/// Feed `ingest` from a recorder's broadcast until it closes.
pub async fn follow(st: Arc<ViewerState>, mut rx: broadcast::Receiver<Arc<Exchange>>) {
    loop {
        match rx.recv().await {
            Ok(x) => ingest(&st, (*x).clone()),
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

/// Re-analyse the live index whenever it changed (every [`ANALYSE_EVERY`] at most) and
/// tell the pages; runs until the task is dropped.
pub async fn analyse_while_live(st: Arc<ViewerState>) {
    loop {
        tokio::time::sleep(ANALYSE_EVERY).await;
        if !st.dirty.swap(false, Ordering::SeqCst) {
            continue;
        }
        let st2 = st.clone();
        let done = tokio::task::spawn_blocking(move || reanalyse(&st2)).await;
        if done.is_ok() {
            send(&st, json!({"type": "analysis"}));
        }
    }
}

/// Analyse every exchange of the index again and put the answers on the turns.
fn reanalyse(st: &ViewerState) {
    let (held, key): (Vec<Arc<Exchange>>, String) = {
        let m = st.read();
        let held = m
            .extra
            .iter()
            .filter_map(|e| match &e.body {
                BodyRef::Held(x) => Some(x.clone()),
                BodyRef::At { .. } => None,
            })
            .collect();
        (held, m.input.display().to_string())
    };
    let mut a = Analyzer::new(st.cfg.clone());
    a.begin_trace(&key);
    for x in &held {
        a.push(x);
    }
    let analysis = a.finish();
    super::badges::attach(&mut st.write(), analysis);
}

/// `GET /api/events`: the live feed as Server-Sent Events (`message` events holding
/// JSON: `{"type":"turn","row":…}`, `{"type":"analysis"}`), with keep-alives.
pub async fn events(State(st): State<Arc<ViewerState>>) -> Response {
    let rx = st.events.subscribe();
    let hello =
        json!({"type": "hello", "live": st.live, "turns": st.read().turns.len()}).to_string();
    let first = stream::once(async move { Ok::<Event, Infallible>(Event::default().data(hello)) });
    let s = first.chain_events(rx);
    Sse::new(s)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

trait ChainEvents {
    fn chain_events(
        self,
        rx: broadcast::Receiver<String>,
    ) -> impl Stream<Item = Result<Event, Infallible>> + Send;
}

impl<S: Stream<Item = Result<Event, Infallible>> + Send> ChainEvents for S {
    fn chain_events(
        self,
        rx: broadcast::Receiver<String>,
    ) -> impl Stream<Item = Result<Event, Infallible>> + Send {
        use futures_util::StreamExt;
        let rest = stream::unfold(rx, |mut rx| async move {
            let text = match rx.recv().await {
                Ok(text) => text,
                // a page that fell behind reloads the list
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    json!({"type": "analysis"}).to_string()
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            };
            Some((Ok(Event::default().data(text)), rx))
        });
        self.chain(rest)
    }
}

/// The turns `only` (all without it) as the HTML audit report, analysed on their own.
///
/// Errors: a turn cannot be read back.
pub fn export_html(st: &ViewerState, only: Option<Vec<usize>>) -> Result<String, ViewerError> {
    let m = st.read();
    let turns = only.unwrap_or_else(|| (0..m.turns.len()).collect());
    let name = m.input.display().to_string();
    let mut a = Analyzer::new(st.cfg.clone());
    a.begin_trace(&name);
    let mut meta = MetaCollector::default();
    for n in turns {
        let x = super::detail::load(&m, n)?;
        a.push(&x);
        meta.record(&Record::Exchange(Box::new((*x).clone())));
    }
    let analysis = a.finish();
    let opts = crate::report::audit_page::Options { max_rows: None };
    Ok(crate::report::audit_page::render(
        &analysis,
        vec![meta.finish(&name)],
        crate::report::DocFormat::Html,
        &opts,
    ))
}
