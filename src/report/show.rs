//! `agentwire show`: one line per exchange — time, session, thread, method, path, model,
//! status, body bytes, tools, stop reason, usage.

use serde::Serialize;

use crate::api::view::{exchange_response, Canonicalizer};
use crate::api::ResponseBody;
use crate::trace::{Exchange, Trace};

use super::Format;

/// One row of `show`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ShowRow {
    /// The file the exchange is in, for an input of several files (a directory): with
    /// [`ShowRow::id`] it makes the `FILE#N` other commands take. A first column then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Exchange id.
    pub id: u64,
    /// Request start, RFC 3339 UTC with milliseconds.
    pub time: String,
    /// Session label (`s1`, `s2`, …; see `docs/analyze.md`, "Sessions").
    pub session: String,
    /// Thread label (`main`, `sub-N`, `side-N`, `side`).
    pub thread: String,
    /// HTTP method.
    pub method: String,
    /// Request target.
    pub path: String,
    /// `model` of a Messages request.
    pub model: Option<String>,
    /// Response status (`None`: no response, or no status known: a response whose head
    /// the capture missed, or an HTTP/0.9 one, recorded with status 0).
    pub status: Option<u16>,
    /// Request body size in bytes.
    pub body_bytes: usize,
    /// Number of tool definitions.
    pub tools: Option<usize>,
    /// Response stop reason, or the error kind.
    pub stop: Option<String>,
    /// Usage `in/cache_read/cache_write/out` in tokens.
    pub usage: Option<String>,
    /// What answered: `script THREAD/TURN`, `replay #N` (exact) or `replay ~#N: why`
    /// (an approximate match: the divergence log), `tunnel`, `tls`.
    pub note: Option<String>,
    /// Stream events skipped as impossible (see `ResponseMessage::stream_problems`): the
    /// command warns and exits degraded. Not a column.
    #[serde(skip)]
    pub problems: Vec<String>,
}

/// Rows for every exchange of a trace.
pub fn rows(trace: &Trace) -> Vec<ShowRow> {
    let mut b = RowBuilder::default();
    let mut rows = Vec::with_capacity(trace.exchanges.len());
    for (i, x) in trace.exchanges.iter().enumerate() {
        if trace.starts_context(i) {
            b.new_context();
        }
        rows.push(b.row(x));
    }
    rows
}

/// Builds rows one exchange at a time (sessions and threads need the exchanges in order),
/// so a trace can be shown while it streams: only the small rows are kept.
#[derive(Default)]
pub struct RowBuilder {
    canon: Canonicalizer,
}

impl RowBuilder {
    /// The row of the next exchange.
    pub fn row(&mut self, x: &Exchange) -> ShowRow {
        row(x, &mut self.canon)
    }

    /// The next exchanges come from another recording context (a trace header line).
    pub fn new_context(&mut self) {
        self.canon.new_context();
    }
}

fn row(x: &Exchange, canon: &mut Canonicalizer) -> ShowRow {
    let view = canon.view(x);
    // What the canonical view says of a Responses request that is not a plain turn.
    let canonical_note = view.request.as_ref().and_then(|c| {
        let rebuilt = c.rebuilt_from.as_ref().map(|prev| {
            format!(
                "continues {prev}: rebuilt to {} bytes",
                c.decoded.as_ref().map_or(0, Vec::len)
            )
        });
        match (c.prewarm, rebuilt, &c.chain_problem) {
            (true, _, _) => Some("prewarm (generate: false)".to_string()),
            (false, Some(r), Some(p)) => Some(format!("{r} ({p})")),
            (false, r, p) => r.or_else(|| p.clone()),
        }
    });
    let parsed = view.request.map(|c| c.req);
    let thread = view.place.thread_label;
    let session = canon.session(view.place.session).label.clone();
    let (mut stop, mut usage, mut problems) = (None, None, Vec::new());
    // The API's own error (an error body, or a stream's `error` event) names the stop.
    let mut api_error = None;
    if let Some(body) = exchange_response(x) {
        api_error = body.api_error();
        match body {
            ResponseBody::Message(m) => {
                stop = m.stop_reason.clone().or(Some("(incomplete)".into()));
                problems = m.stream_problems.clone();
                let u = &m.usage;
                // Usage the answer never reported is not recorded, never zero.
                let reported = u.input_tokens.is_some() || u.output_tokens.is_some();
                usage = reported.then(|| {
                    format!(
                        "{}/{}/{}/{}",
                        u.input_tokens.unwrap_or(0),
                        u.cache_read_input_tokens.unwrap_or(0),
                        u.cache_creation_input_tokens.unwrap_or(0),
                        u.output_tokens.unwrap_or(0)
                    )
                });
            }
            ResponseBody::Error { error_type, .. } => stop = Some(error_type),
            ResponseBody::Other => {}
            ResponseBody::Undecodable { reason } => {
                stop = Some("(undecodable)".into());
                problems = vec![reason];
            }
        }
    }
    if let Some(e) = &x.error {
        if api_error.is_some() {
            problems.push(format!("{}: {}", e.kind, e.message));
        } else {
            stop = Some(e.kind.clone());
        }
    }
    if let Some(e) = api_error {
        stop = Some(e.split(": ").next().unwrap_or(&e).to_string());
        problems.insert(0, format!("API error: {e}"));
    }
    let note = match (note(x), canonical_note) {
        (Some(a), Some(b)) => Some(format!("{b}; {a}")),
        (a, b) => b.or(a),
    };
    ShowRow {
        file: None,
        note,
        id: x.id,
        time: x
            .started_at
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        session,
        thread,
        // Printed as every other command prints them: through the one redaction function
        // (a trace written by hand or by another tool may hold a key in its target).
        // A WebSocket message is shown as one (`WS`), not as its upgrade's GET.
        method: if x.websocket.is_some() {
            "WS".into()
        } else if x.request.captured() {
            crate::trace::redact::redact_text(&x.request.method)
        } else {
            "-".into()
        },
        path: if x.request.captured() {
            crate::trace::redact::redact_text(&x.request.target)
        } else {
            "(request not captured)".into()
        },
        model: parsed.as_ref().and_then(|r| r.model.clone()),
        status: x.response.as_ref().and_then(|r| r.known_status()),
        body_bytes: x.request.body.len(),
        tools: parsed.as_ref().map(|r| r.tools.len()),
        stop,
        usage,
        problems,
    }
}

fn note(x: &Exchange) -> Option<String> {
    if let Some(e) = x.error.as_ref().filter(|e| e.kind == "tls_failed") {
        return Some(e.message.clone());
    }
    if let Some(r) = x.notes.get("replay") {
        let id = r["recorded_id"].as_u64().unwrap_or(0);
        let rewritten = r["rewritten"].as_array().map_or(0, Vec::len);
        return Some(if r["exact"] == true && rewritten > 0 {
            let values = crate::text::fmt::plural(rewritten as u64, "value");
            format!("replay #{id} ({values} of this run rewritten)")
        } else if r["exact"] == true {
            format!("replay #{id}")
        } else {
            let why: Vec<&str> = r["differences"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|d| d.as_str())
                .collect();
            format!("replay ~#{id}: {}", why.join("; "))
        });
    }
    if let Some(s) = x.notes.get("script") {
        let thread = s["thread"].as_str().unwrap_or("default");
        return Some(format!("script {thread}/{}", s["turn"]));
    }
    if let Some(t) = x.notes.get("tunnel") {
        return Some(format!(
            "tunnel {} bytes up, {} down",
            t["bytes_up"], t["bytes_down"]
        ));
    }
    x.notes.get("tls").map(|_| "tls intercepted".to_string())
}

const HEADER: [&str; 13] = [
    "#",
    "time",
    "session",
    "thread",
    "method",
    "path",
    "model",
    "status",
    "req bytes",
    "tools",
    "stop",
    "usage in/read/write/out",
    "note",
];

fn cells(r: &ShowRow, with_file: bool) -> Vec<String> {
    let opt = |o: &Option<String>| o.clone().unwrap_or_else(|| "-".into());
    let file = with_file.then(|| opt(&r.file));
    let cells: Vec<String> = file
        .into_iter()
        .chain([
            r.id.to_string(),
            r.time.clone(),
            r.session.clone(),
            r.thread.clone(),
            r.method.clone(),
            r.path.clone(),
            opt(&r.model),
            r.status.map_or("-".into(), |s| s.to_string()),
            r.body_bytes.to_string(),
            r.tools.map_or("-".into(), |t| t.to_string()),
            opt(&r.stop),
            opt(&r.usage),
            opt(&r.note),
        ])
        .collect();
    cells.iter().map(|c| crate::text::printable(c)).collect()
}

/// Render rows in a format.
pub fn render(rows: &[ShowRow], format: Format) -> String {
    format.finish(render_unchecked(rows, format))
}

fn render_unchecked(rows: &[ShowRow], format: Format) -> String {
    let with_file = rows.iter().any(|r| r.file.is_some());
    let header: Vec<&str> = with_file
        .then_some("file")
        .into_iter()
        .chain(HEADER)
        .collect();
    match format {
        Format::Json => crate::text::safe_json::pretty(rows),
        Format::Markdown => {
            let body: Vec<Vec<String>> = rows.iter().map(|r| cells(r, with_file)).collect();
            super::table::markdown_table(&header, &body)
        }
        Format::Table => {
            let mut t = super::table::table(&header);
            for r in rows {
                t.add_row(cells(r, with_file));
            }
            super::table::table_text(&t)
        }
    }
}
