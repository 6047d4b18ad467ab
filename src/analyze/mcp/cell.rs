//! One matrix cell's MCP facts (`matrix --mcp`): what a recorded run did on both layers,
//! reduced to the columns that decide whether a CLI version backgrounds MCP tasks.

use serde::Serialize;

use super::McpAnalysis;
use crate::trace::Trace;

/// The MCP facts of one recorded run.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct McpCell {
    /// Run label (CLI version and settings).
    pub run: String,
    /// Protocol versions negotiated with the MCP servers.
    pub protocol: Vec<String>,
    /// The CLI declared task support to some server.
    pub client_tasks: bool,
    /// Some server announced task support.
    pub server_tasks: bool,
    /// Protocol tasks created.
    pub protocol_tasks: usize,
    /// Tool jobs (ids handed out in a tool result and polled through a status tool).
    pub tool_jobs: usize,
    /// Tasks the CLI backgrounded (the model got control before the task ended).
    pub backgrounded: usize,
    /// Model-level status-tool polls (each costs a model turn).
    pub model_polls: usize,
    /// Of those, made after the task had ended.
    pub model_redundant_polls: usize,
    /// `tasks/get` requests.
    pub tasks_get: usize,
    /// `tasks/get` after the client had seen the end.
    pub polls_after_terminal: usize,
    /// `tasks/get` sooner than the server's poll interval.
    pub polls_too_fast: usize,
    /// Tasks whose result reached the model through a task notification.
    pub notified: usize,
    /// How the results reached the model (distinct values, in task order).
    pub result_via: Vec<String>,
    /// Longest `tools/call` that started a task, milliseconds (how long the model's turn
    /// was held).
    pub start_call_ms: Option<f64>,
    /// `/v1/messages` requests (model turns) in the run.
    pub model_requests: usize,
    /// First request to last response of the run, milliseconds.
    pub wall_ms: Option<i64>,
}

/// The cell for a recorded `trace` and its analysis.
pub fn cell(run: &str, trace: &Trace, a: &McpAnalysis) -> McpCell {
    let mut protocol: Vec<String> = a
        .servers
        .iter()
        .filter_map(|s| s.protocol_version.clone())
        .collect();
    protocol.dedup();
    let mut result_via: Vec<String> = Vec::new();
    for t in &a.tasks {
        if !result_via.iter().any(|v| v == t.result_via) {
            result_via.push(t.result_via.to_string());
        }
    }
    let start_call_ms = a
        .links
        .iter()
        .filter(|l| l.role == "start")
        .filter_map(|l| l.mcp_ms)
        .max_by(f64::total_cmp);
    let first = trace.exchanges.iter().map(|x| x.started_at).min();
    let last = trace.exchanges.iter().filter_map(|x| x.ended_at).max();
    McpCell {
        run: run.to_string(),
        protocol,
        client_tasks: a.servers.iter().any(|s| s.client_tasks),
        server_tasks: a.servers.iter().any(|s| s.server_tasks),
        protocol_tasks: a.summary.protocol_tasks,
        tool_jobs: a.summary.tasks - a.summary.protocol_tasks,
        backgrounded: a.summary.backgrounded,
        model_polls: a.summary.model_polls,
        model_redundant_polls: a.summary.model_redundant_polls,
        tasks_get: a.summary.tasks_get,
        polls_after_terminal: a.summary.polls_after_terminal,
        polls_too_fast: a.summary.polls_too_fast,
        notified: a.summary.notified,
        result_via,
        start_call_ms,
        model_requests: trace.exchanges.iter().filter(|x| x.is_messages()).count(),
        wall_ms: first.zip(last).map(|(f, l)| (l - f).num_milliseconds()),
    }
}
