//! Rendering of the MCP layer: `show`'s list of `mcp` records, the MCP sections of
//! `analyze` (servers, methods, tasks, model-level links) and `matrix --mcp`. Every
//! recorded value passes [`crate::text::printable()`] before it reaches a terminal.

use serde::Serialize;

use super::writer::Writer;
use super::Format;
use crate::analyze::mcp::cell::McpCell;
use crate::analyze::mcp::McpAnalysis;
use crate::text::printable;
use crate::trace::mcp::{McpDirection, McpTransport};
use crate::trace::McpRecord;

/// One line of `show` for an `mcp` record.
#[derive(Clone, Debug, Serialize)]
pub struct McpShowRow {
    /// Record number in the file that captured it.
    pub seq: u64,
    /// When it was seen (RFC 3339, milliseconds).
    pub time: String,
    /// Server name.
    pub server: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// `->` (to the server), `<-` (to the client) or `*` (event).
    pub dir: &'static str,
    /// `request`, `response`, `notification`, `error`, `batch`, `raw`, `event`, `status`.
    pub kind: &'static str,
    /// Method, or for a response the id it answers.
    pub what: String,
    /// Bytes on the wire.
    pub bytes: u64,
    /// Task id and status, JSON-RPC error, HTTP status and SSE, truncation, event detail.
    pub note: String,
}

/// `show`'s rows for MCP records.
pub fn show_rows(records: &[McpRecord]) -> Vec<McpShowRow> {
    records.iter().map(show_row).collect()
}

fn show_row(r: &McpRecord) -> McpShowRow {
    let m = r.message.as_ref();
    let (kind, what) = match (r.direction, m) {
        (McpDirection::Event, _) => ("event", r.event.clone().unwrap_or_default()),
        // A bodiless HTTP request (GET stream, DELETE session) or answer (202).
        (McpDirection::ToServer, None) if r.size == 0 => (
            "request",
            r.http
                .as_ref()
                .map(|h| h.method.clone())
                .unwrap_or_default(),
        ),
        (_, None) if r.size == 0 => ("status", String::new()),
        (_, None) => ("raw", String::new()),
        (_, Some(serde_json::Value::Array(a))) => ("batch", format!("{} messages", a.len())),
        (_, Some(_)) if r.is_request() => ("request", r.method().unwrap_or("").into()),
        (_, Some(_)) if r.is_notification() => ("notification", r.method().unwrap_or("").into()),
        (_, Some(v)) => (
            if v.get("error").is_some() {
                "error"
            } else {
                "response"
            },
            r.id().map(|i| format!("id {i}")).unwrap_or_default(),
        ),
    };
    let mut note = Vec::new();
    if let Some(v) = m {
        let task = v
            .pointer("/params/taskId")
            .or(v.pointer("/result/taskId"))
            .or(v.pointer("/result/task/taskId"));
        if let Some(t) = task.and_then(|t| t.as_str()) {
            note.push(format!("task {t}"));
        }
        let status = v
            .pointer("/params/status")
            .or(v.pointer("/result/status"))
            .or(v.pointer("/result/task/status"));
        if let Some(s) = status.and_then(|s| s.as_str()) {
            note.push(s.to_string());
        }
        if let Some(name) = v.pointer("/params/name").and_then(|s| s.as_str()) {
            note.push(format!("tool {name}"));
        }
        if let Some(msg) = v.pointer("/error/message").and_then(|s| s.as_str()) {
            note.push(msg.to_string());
        }
    }
    if let Some(h) = &r.http {
        if let Some(s) = h.status {
            note.push(format!("HTTP {s}{}", if h.sse { " sse" } else { "" }));
        }
    }
    if r.truncated {
        note.push("truncated".into());
    }
    if let Some(d) = &r.detail {
        note.push(d.clone());
    }
    McpShowRow {
        seq: r.seq,
        time: r.at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        server: r.server.clone(),
        transport: match r.transport {
            McpTransport::Stdio => "stdio",
            McpTransport::Http => "http",
            McpTransport::Unknown => "unknown",
        }
        .into(),
        dir: match r.direction {
            McpDirection::ToServer => "->",
            McpDirection::ToClient => "<-",
            McpDirection::Event => "*",
        },
        kind,
        what,
        bytes: r.size,
        note: note.join("; "),
    }
}

const SHOW_HEADER: [&str; 9] = [
    "seq",
    "time",
    "server",
    "transport",
    "dir",
    "kind",
    "method/id",
    "bytes",
    "note",
];

/// Render `show`'s MCP rows; `heading` puts an "MCP messages" title above the table.
pub fn render_show(rows: &[McpShowRow], format: Format, heading: bool) -> String {
    format.finish(render_show_unchecked(rows, format, heading))
}

fn render_show_unchecked(rows: &[McpShowRow], format: Format, heading: bool) -> String {
    if format == Format::Json {
        return crate::text::safe_json::pretty(rows);
    }
    let mut w = writer(format);
    if heading {
        w.heading(1, "MCP messages");
    }
    let body = rows
        .iter()
        .map(|r| {
            [
                r.seq.to_string(),
                r.time.clone(),
                r.server.clone(),
                r.transport.clone(),
                r.dir.to_string(),
                r.kind.to_string(),
                r.what.clone(),
                r.bytes.to_string(),
                r.note.clone(),
            ]
            .iter()
            .map(|c| printable(c))
            .collect()
        })
        .collect();
    w.table(&SHOW_HEADER, body);
    w.out
}

fn writer(format: Format) -> Writer {
    Writer {
        md: format == Format::Markdown,
        color: false,
        out: String::new(),
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".into(), |x| x.to_string())
}

fn yes(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

fn ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.1}"))
}

fn clean(rows: Vec<Vec<String>>) -> Vec<Vec<String>> {
    rows.into_iter()
        .map(|r| r.iter().map(|c| printable(c)).collect())
        .collect()
}

/// A table, or `(none)` when it has no rows; cells pass the printable filter.
fn table_or_none(w: &mut Writer, header: &[&str], rows: Vec<Vec<String>>) {
    if rows.is_empty() {
        w.bullet("(none)");
    } else {
        w.table(header, clean(rows));
    }
}

/// The MCP sections of `analyze`'s text and Markdown report (empty without MCP records).
pub fn analysis_text(a: &McpAnalysis, md: bool) -> String {
    if a.servers.is_empty() {
        return String::new();
    }
    let mut w = writer(if md { Format::Markdown } else { Format::Table });
    summary_table(&mut w, &a.summary);
    servers_table(&mut w, a);
    methods_table(&mut w, a);
    tasks_table(&mut w, a);
    links_table(&mut w, a);
    w.blank();
    w.out
}

/// The MCP summary: one row per figure.
fn summary_table(w: &mut Writer, s: &crate::analyze::mcp::McpSummary) {
    w.heading(1, "MCP summary");
    w.table(
        &["metric", "value"],
        vec![
            vec!["MCP messages".into(), s.messages.to_string()],
            vec![
                "requests (errors, unanswered, cancelled, answered after cancel)".into(),
                format!(
                    "{} ({}, {}, {}, {})",
                    s.requests, s.errors, s.unanswered, s.cancelled, s.answered_after_cancel
                ),
            ],
            vec![
                "tasks (protocol)".into(),
                format!("{} ({})", s.tasks, s.protocol_tasks),
            ],
            vec![
                "tasks/get (too fast, after end)".into(),
                format!(
                    "{} ({}, {})",
                    s.tasks_get, s.polls_too_fast, s.polls_after_terminal
                ),
            ],
            vec![
                "model status polls (redundant)".into(),
                format!("{} ({})", s.model_polls, s.model_redundant_polls),
            ],
            vec!["backgrounded tasks".into(), s.backgrounded.to_string()],
            vec!["results by notification".into(), s.notified.to_string()],
            vec![
                "model MCP calls linked (unlinked)".into(),
                format!("{} ({})", s.linked_calls, s.unlinked_calls),
            ],
        ],
    );
}

/// One row per MCP server: transport, protocol version, task support, messages.
fn servers_table(w: &mut Writer, a: &McpAnalysis) {
    w.heading(1, "MCP servers");
    let rows = a
        .servers
        .iter()
        .map(|r| {
            vec![
                r.server.clone(),
                r.transport.clone(),
                opt(r.protocol_version.clone()),
                yes(r.client_tasks),
                yes(r.server_tasks),
                r.messages.to_string(),
                opt(r.last_event.clone()),
            ]
        })
        .collect();
    w.table(
        &[
            "server",
            "transport",
            "protocol",
            "client tasks",
            "server tasks",
            "messages",
            "last event",
        ],
        clean(rows),
    );
}

/// One row per server and method: calls, errors, unanswered, cancelled, answered after
/// cancel, latency (of requests not cancelled).
fn methods_table(w: &mut Writer, a: &McpAnalysis) {
    w.heading(1, "MCP methods");
    let rows = a
        .methods
        .iter()
        .map(|m| {
            vec![
                m.server.clone(),
                m.method.clone(),
                m.sender.to_string(),
                m.calls.to_string(),
                m.errors.to_string(),
                m.unanswered.to_string(),
                m.cancelled.to_string(),
                m.answered_after_cancel.to_string(),
                ms(m.p50_ms),
                ms(m.max_ms),
            ]
        })
        .collect();
    w.table(
        &[
            "server",
            "method",
            "sender",
            "calls",
            "errors",
            "unanswered",
            "cancelled",
            "answered after cancel",
            "p50 ms",
            "max ms",
        ],
        clean(rows),
    );
}

/// One row per MCP task (`(none)` without): kind, states, polls, notifications.
fn tasks_table(w: &mut Writer, a: &McpAnalysis) {
    w.heading(1, "MCP tasks");
    let rows: Vec<Vec<String>> = a
        .tasks
        .iter()
        .map(|t| {
            vec![
                t.server.clone(),
                t.task_id.clone(),
                t.kind.to_string(),
                t.tool.clone(),
                t.states.join(">"),
                opt(t.duration_ms),
                opt(t.poll_interval_ms),
                format!(
                    "{}/{}/{}",
                    t.tasks_get, t.polls_too_fast, t.polls_after_terminal
                ),
                t.notifications.to_string(),
                format!("{}/{}", t.model_polls, t.model_redundant_polls),
                yes(t.backgrounded),
                t.result_via.to_string(),
            ]
        })
        .collect();
    table_or_none(
        w,
        &[
            "server",
            "task",
            "kind",
            "tool",
            "states",
            "ms",
            "interval ms",
            "tasks/get fast/late",
            "notifications",
            "model polls/redundant",
            "backgrounded",
            "result via",
        ],
        rows,
    );
}

/// One row per model-level MCP call (`(none)` without) and the task it is linked to.
fn links_table(w: &mut Writer, a: &McpAnalysis) {
    w.heading(1, "Model-level MCP calls");
    let rows = a
        .links
        .iter()
        .map(|l| {
            vec![
                l.thread.clone(),
                l.tool_use_id.clone(),
                l.tool.clone(),
                l.role.to_string(),
                opt(l.task_id.clone()),
                opt(l.linked_by),
                ms(l.mcp_ms),
            ]
        })
        .collect();
    table_or_none(
        w,
        &[
            "thread",
            "tool_use",
            "tool",
            "role",
            "task",
            "linked by",
            "mcp ms",
        ],
        rows,
    );
}
/// Render `matrix --mcp`: one row per run.
pub fn render_cells(cells: &[McpCell], format: Format) -> String {
    format.finish(render_cells_unchecked(cells, format))
}

fn render_cells_unchecked(cells: &[McpCell], format: Format) -> String {
    if format == Format::Json {
        return crate::text::safe_json::pretty(cells);
    }
    let mut w = writer(format);
    let rows = cells
        .iter()
        .map(|c| {
            vec![
                c.run.clone(),
                c.protocol.join(","),
                yes(c.client_tasks),
                format!("{}/{}", c.protocol_tasks, c.tool_jobs),
                c.backgrounded.to_string(),
                format!("{}/{}", c.model_polls, c.model_redundant_polls),
                format!(
                    "{}/{}/{}",
                    c.tasks_get, c.polls_after_terminal, c.polls_too_fast
                ),
                c.notified.to_string(),
                c.result_via.join(","),
                ms(c.start_call_ms),
                c.model_requests.to_string(),
                c.wall_ms
                    .map_or("-".into(), |m| format!("{:.1}", m as f64 / 1000.0)),
            ]
        })
        .collect();
    w.table(
        &[
            "run",
            "protocol",
            "client tasks",
            "tasks protocol/job",
            "backgrounded",
            "model polls/redundant",
            "tasks/get after-end/fast",
            "notified",
            "result via",
            "start call ms",
            "model turns",
            "wall s",
        ],
        clean(rows),
    );
    w.out
}
