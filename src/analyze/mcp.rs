//! MCP analysis: the protocol layer between the CLI and its MCP servers (the `mcp` records
//! of a trace) and its link to the model layer (`tool_use` blocks in `/v1/messages`).
//!
//! Per server: generation, task support on each side, calls by method with latency. Per
//! task ([`tasks`]): lifecycle (created → working → completed/failed/cancelled), `tasks/get`
//! polls, polls faster than the server's `pollIntervalMs`, polls after the terminal state,
//! model-level status-tool polls and whether those were redundant, whether the CLI handed
//! the model control before the task ended (backgrounded), and how the result reached the
//! model: `tool_result` (the call returned it), `notification` (a `<task-notification>`),
//! `model_poll` (a status tool the model called), or `none`.

pub mod calls;
pub mod cell;
pub mod tasks;
#[cfg(test)]
mod tests;

use std::collections::HashMap;

use serde::Serialize;

use crate::analyze::events::{Notification, ToolCall};
use crate::trace::mcp::McpTransport;
use crate::trace::McpRecord;
use calls::{Call, Outcome};
use tasks::{Task, TaskKind, TERMINAL};

/// The MCP part of `analyze`'s report (`mcp` in its JSON).
#[derive(Clone, Debug, Default, Serialize)]
pub struct McpAnalysis {
    /// Totals.
    pub summary: McpSummary,
    /// One row per server and trace.
    pub servers: Vec<ServerRow>,
    /// One row per server and method.
    pub methods: Vec<MethodRow>,
    /// One row per task.
    pub tasks: Vec<TaskRow>,
    /// One row per model-level call of an MCP tool.
    pub links: Vec<LinkRow>,
}

impl McpAnalysis {
    /// True when the inputs held no MCP records.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }
}

/// Totals over all traces.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct McpSummary {
    /// MCP messages recorded.
    pub messages: usize,
    /// Requests (both directions).
    pub requests: usize,
    /// Requests answered with a JSON-RPC error.
    pub errors: usize,
    /// Requests never answered (and not cancelled).
    pub unanswered: usize,
    /// Requests their sender cancelled (`notifications/cancelled`) that got no reply.
    pub cancelled: usize,
    /// Requests answered after their sender cancelled them (the reply is to be ignored).
    pub answered_after_cancel: usize,
    /// Tasks (protocol tasks and tool jobs).
    pub tasks: usize,
    /// Protocol tasks.
    pub protocol_tasks: usize,
    /// `tasks/get` requests.
    pub tasks_get: usize,
    /// `tasks/get` sooner than the poll interval.
    pub polls_too_fast: usize,
    /// `tasks/get` after a terminal state was seen.
    pub polls_after_terminal: usize,
    /// Model-level polls of a status tool for a task.
    pub model_polls: usize,
    /// Of those, polls made after the task had ended.
    pub model_redundant_polls: usize,
    /// Tasks the CLI backgrounded (the model got control before the task ended).
    pub backgrounded: usize,
    /// Tasks whose result reached the model through a task notification.
    pub notified: usize,
    /// Model-level MCP tool calls linked to the `tools/call` that served them.
    pub linked_calls: usize,
    /// Model-level MCP tool calls with no recorded `tools/call`.
    pub unlinked_calls: usize,
}

/// One server.
#[derive(Clone, Debug, Serialize)]
pub struct ServerRow {
    /// Input trace index (from 0).
    pub trace: usize,
    /// Server name.
    pub server: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// Negotiated protocol version (`2025-11-25`, `2026-07-28`, …).
    pub protocol_version: Option<String>,
    /// The client declared task support.
    pub client_tasks: bool,
    /// The server announced task support.
    pub server_tasks: bool,
    /// Messages recorded.
    pub messages: usize,
    /// Messages kept raw (not JSON or cut short).
    pub raw_messages: usize,
    /// Last lifecycle event of the server process.
    pub last_event: Option<String>,
}

/// One method of one server.
#[derive(Clone, Debug, Serialize)]
pub struct MethodRow {
    /// Server name.
    pub server: String,
    /// Method (`tools/call`, `tasks/get`, …).
    pub method: String,
    /// `client` (sent by the CLI) or `server`.
    pub sender: &'static str,
    /// Requests.
    pub calls: usize,
    /// Answered with a JSON-RPC error.
    pub errors: usize,
    /// Never answered (and not cancelled).
    pub unanswered: usize,
    /// Cancelled by the sender, no reply.
    pub cancelled: usize,
    /// Answered after the sender cancelled them.
    pub answered_after_cancel: usize,
    /// Median latency, milliseconds.
    pub p50_ms: Option<f64>,
    /// Largest latency, milliseconds.
    pub max_ms: Option<f64>,
}

/// One task.
#[derive(Clone, Debug, Serialize)]
pub struct TaskRow {
    /// Input trace index.
    pub trace: usize,
    /// Server name.
    pub server: String,
    /// Task id or job id.
    pub task_id: String,
    /// `protocol` or `tool_job`.
    pub kind: &'static str,
    /// Tool that started it.
    pub tool: String,
    /// States in order (`working`, `completed`).
    pub states: Vec<String>,
    /// Terminal state, if reached.
    pub terminal: Option<String>,
    /// From the start call to the first terminal state seen, milliseconds.
    pub duration_ms: Option<i64>,
    /// Server's suggested poll interval, milliseconds.
    pub poll_interval_ms: Option<u64>,
    /// `tasks/get` requests.
    pub tasks_get: usize,
    /// `tasks/get` sooner than the poll interval after the previous look.
    pub polls_too_fast: usize,
    /// `tasks/get` after a terminal state was seen.
    pub polls_after_terminal: usize,
    /// `tasks/result` requests.
    pub tasks_result: usize,
    /// Task status notifications from the server.
    pub notifications: usize,
    /// Model-level status-tool polls of this task.
    pub model_polls: usize,
    /// Of those, made after the task had ended.
    pub model_redundant_polls: usize,
    /// The model got the start call's result (not an error) before the task ended.
    pub backgrounded: bool,
    /// How the result reached the model: `tool_result`, `notification`, `model_poll`,
    /// `none`.
    pub result_via: &'static str,
    /// `tool_use` id of the model's call that started it, when linked.
    pub started_by: Option<String>,
}

/// One model-level call of an MCP tool.
#[derive(Clone, Debug, Serialize)]
pub struct LinkRow {
    /// Thread label.
    pub thread: String,
    /// `tool_use` id.
    pub tool_use_id: String,
    /// Model-side tool name (`mcp__jobs__get_status`).
    pub tool: String,
    /// Server that served it (when linked).
    pub server: Option<String>,
    /// How the link was found: `tool_use_id` (Claude Code's `_meta`) or `arguments`.
    pub linked_by: Option<&'static str>,
    /// `start` (started a task), `status_poll` (named a running or ended task), `call`.
    pub role: &'static str,
    /// The task it started or polled.
    pub task_id: Option<String>,
    /// Latency of the `tools/call`, milliseconds.
    pub mcp_ms: Option<f64>,
}

/// Analyse `records` (tagged with their trace index) against the model layer: `model`
/// calls (with trace index), conversation notifications, thread labels by global thread.
pub fn analyze(
    records: &[(usize, McpRecord)],
    model: &[(usize, &ToolCall)],
    notes: &[Notification],
    labels: &[String],
) -> McpAnalysis {
    let mut sorted: Vec<(usize, McpRecord)> = records.to_vec();
    sorted.sort_by_key(|(t, r)| (*t, r.at));
    let (calls, mcp_notes, facts) = calls::pair(&sorted);
    let mut a = McpAnalysis {
        servers: server_rows(&facts),
        methods: method_rows(&calls),
        ..McpAnalysis::default()
    };
    a.summary.messages = facts.iter().map(|(_, f)| f.messages).sum();
    for m in &a.methods {
        a.summary.requests += m.calls;
        a.summary.errors += m.errors;
        a.summary.unanswered += m.unanswered;
        a.summary.cancelled += m.cancelled;
        a.summary.answered_after_cancel += m.answered_after_cancel;
    }
    let found = tasks::find_tasks(&calls, &mcp_notes);
    let links = tasks::link_model_calls(model, &calls);
    let served_by: HashMap<usize, usize> = links
        .iter()
        .enumerate()
        .filter_map(|(m, l)| l.map(|(c, _)| (c, m)))
        .collect();
    for t in &found {
        let start_model = served_by.get(&t.start).map(|&m| model[m].1);
        let linked_polls: Vec<usize> = t
            .status_calls
            .iter()
            .filter(|c| served_by.contains_key(c))
            .copied()
            .collect();
        let row = task_row(t, &calls, start_model, &linked_polls, notes);
        a.summary.add_task(&row, t.kind == TaskKind::Protocol);
        a.tasks.push(row);
    }
    a.links = link_rows(model, &links, &found, &calls, labels);
    a.summary.linked_calls = links.iter().filter(|l| l.is_some()).count();
    a.summary.unlinked_calls = links.len() - a.summary.linked_calls;
    a
}

impl McpSummary {
    /// Count one task's row.
    fn add_task(&mut self, row: &TaskRow, protocol: bool) {
        self.tasks += 1;
        self.protocol_tasks += usize::from(protocol);
        self.tasks_get += row.tasks_get;
        self.polls_too_fast += row.polls_too_fast;
        self.polls_after_terminal += row.polls_after_terminal;
        self.model_polls += row.model_polls;
        self.model_redundant_polls += row.model_redundant_polls;
        self.backgrounded += usize::from(row.backgrounded);
        self.notified += usize::from(row.result_via == "notification");
    }
}

/// One row per server and trace.
fn server_rows(facts: &calls::FactsByServer) -> Vec<ServerRow> {
    facts
        .iter()
        .map(|((trace, server), f)| ServerRow {
            trace: *trace,
            server: server.clone(),
            transport: match f.transport {
                Some(McpTransport::Http) => "http".into(),
                Some(McpTransport::Stdio) => "stdio".into(),
                _ => "unknown".into(),
            },
            protocol_version: f.protocol_version.clone(),
            client_tasks: f.client_tasks,
            server_tasks: f.server_tasks,
            messages: f.messages,
            raw_messages: f.raw_messages,
            last_event: f.last_event.clone(),
        })
        .collect()
}

/// The row of task `t`: `start_model` is the model's call that started it and
/// `linked_polls` the status calls the model made, when linked.
fn task_row(
    t: &Task,
    calls: &[Call],
    start_model: Option<&ToolCall>,
    linked_polls: &[usize],
    notes: &[Notification],
) -> TaskRow {
    let terminal_at = t.terminal_at();
    let redundant = linked_polls
        .iter()
        .filter(|&&c| terminal_at.is_some_and(|ta| ta <= calls[c].at))
        .count();
    let (backgrounded, result_via) = result_path(t, calls, start_model, linked_polls, notes);
    let start = &calls[t.start];
    TaskRow {
        trace: t.trace,
        server: t.server.clone(),
        task_id: t.id.clone(),
        kind: match t.kind {
            TaskKind::Protocol => "protocol",
            TaskKind::ToolJob => "tool_job",
        },
        tool: start
            .params
            .get("name")
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .into(),
        states: t.states.iter().map(|(_, s, _)| s.clone()).collect(),
        terminal: t.terminal().map(str::to_string),
        duration_ms: terminal_at.map(|ta| (ta - start.at).num_milliseconds()),
        poll_interval_ms: t.poll_interval_ms,
        tasks_get: t.tasks_get.len(),
        polls_too_fast: t.polls_too_fast,
        polls_after_terminal: t.polls_after_terminal,
        tasks_result: t.tasks_result.len(),
        notifications: t.notifications,
        model_polls: linked_polls.len(),
        model_redundant_polls: redundant,
        backgrounded,
        result_via,
        started_by: start_model.map(|m| m.id.clone()),
    }
}

/// Whether the CLI handed the model control before task `t` ended (backgrounded), and
/// how the result reached the model: `tool_result`, `notification`, `model_poll` or
/// `none`.
fn result_path(
    t: &Task,
    calls: &[Call],
    start_model: Option<&ToolCall>,
    linked_polls: &[usize],
    notes: &[Notification],
) -> (bool, &'static str) {
    let terminal_at = t.terminal_at();
    // An error result (the CLI refused the task handle) hands nothing back to wait for.
    let model_result_at = start_model
        .and_then(|m| m.result.as_ref())
        .filter(|r| !r.is_error)
        .map(|r| r.at);
    let backgrounded = match (model_result_at, terminal_at) {
        (Some(r), Some(ta)) => r < ta,
        (Some(_), None) => true,
        _ => false,
    };
    let notified = start_model
        .and_then(|m| tasks::notification_for(notes, &m.id, &t.id))
        .is_some_and(|n| TERMINAL.contains(&n.status.as_str()) || n.status == "stopped");
    let polled_to_end = linked_polls.iter().any(|&c| {
        let text = calls[c]
            .result
            .as_ref()
            .map(tasks::result_text)
            .unwrap_or_default();
        tasks::state_in_text(&text).is_some_and(|s| TERMINAL.contains(&s))
    });
    let via = if model_result_at.is_some() && !backgrounded {
        "tool_result"
    } else if notified {
        "notification"
    } else if polled_to_end {
        "model_poll"
    } else {
        "none"
    };
    (backgrounded, via)
}

/// One row per model-level MCP tool call: the `tools/call` that served it (`links`, by
/// model call) and the task it started or polled.
fn link_rows(
    model: &[(usize, &ToolCall)],
    links: &[Option<(usize, &'static str)>],
    found: &[Task],
    calls: &[Call],
    labels: &[String],
) -> Vec<LinkRow> {
    model
        .iter()
        .zip(links)
        .map(|((_, call), link)| {
            let served = link.map(|(c, _)| c);
            let task = served.and_then(|c| {
                found.iter().find_map(|t| {
                    if t.start == c {
                        Some(("start", t.id.clone()))
                    } else if t.status_calls.contains(&c) {
                        Some(("status_poll", t.id.clone()))
                    } else {
                        None
                    }
                })
            });
            LinkRow {
                thread: labels.get(call.thread).cloned().unwrap_or_default(),
                tool_use_id: call.id.clone(),
                tool: call.name.clone(),
                server: served.map(|c| calls[c].server.clone()),
                linked_by: link.map(|(_, how)| how),
                role: task.as_ref().map_or("call", |(r, _)| *r),
                task_id: task.map(|(_, id)| id),
                mcp_ms: served.and_then(|c| calls[c].latency_ms()),
            }
        })
        .collect()
}

/// One row per server, method and sender, with latencies.
fn method_rows(calls: &[Call]) -> Vec<MethodRow> {
    let mut rows: Vec<(MethodRow, Vec<f64>)> = Vec::new();
    for c in calls {
        let sender = if c.to_server { "client" } else { "server" };
        let i = match rows
            .iter()
            .position(|(r, _)| r.server == c.server && r.method == c.method && r.sender == sender)
        {
            Some(i) => i,
            None => {
                rows.push((
                    MethodRow {
                        server: c.server.clone(),
                        method: c.method.clone(),
                        sender,
                        calls: 0,
                        errors: 0,
                        unanswered: 0,
                        cancelled: 0,
                        answered_after_cancel: 0,
                        p50_ms: None,
                        max_ms: None,
                    },
                    Vec::new(),
                ));
                rows.len() - 1
            }
        };
        let (r, lat) = &mut rows[i];
        r.calls += 1;
        match c.outcome() {
            Outcome::Error => r.errors += 1,
            Outcome::Unanswered => r.unanswered += 1,
            Outcome::Cancelled => r.cancelled += 1,
            Outcome::AnsweredAfterCancel => r.answered_after_cancel += 1,
            Outcome::Answered => {}
        }
        // A reply to a cancelled request says nothing of the server's speed.
        if c.cancelled_at.is_none() {
            lat.extend(c.latency_ms());
        }
    }
    rows.into_iter()
        .map(|(mut r, mut lat)| {
            lat.sort_by(f64::total_cmp);
            r.p50_ms = (!lat.is_empty()).then(|| lat[(lat.len() - 1) / 2]);
            r.max_ms = lat.last().copied();
            r
        })
        .collect()
}
