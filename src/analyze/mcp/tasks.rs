//! Task lifecycles on the MCP layer and their link to the model layer.
//!
//! A task is either a **protocol task** (a `tools/call` answered with a task handle:
//! 2025-11-25 `result.task.taskId`, or 2026-07-28 `resultType: "task"` with `taskId`),
//! followed through `tasks/get`, `tasks/result`, `tasks/cancel` and task status
//! notifications; or a **tool job**: a `tools/call` whose result text carries an id that
//! a later call of another tool of the same server passes as an argument (a status tool
//! the model polls). A model-level `tool_use` of `mcp__SERVER__TOOL` is linked to the
//! `tools/call` that served it by Claude Code's `_meta["claudecode/toolUseId"]`, else by
//! tool name and equal arguments.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::calls::{Call, Note, TOOL_USE_ID_META};
use crate::analyze::events::{Notification, ToolCall};

/// Shortest string taken for a tool job's id (known task ids match at any length).
pub const MIN_JOB_ID: usize = 3;

/// Terminal task states.
pub const TERMINAL: &[&str] = &["completed", "failed", "cancelled"];

/// What a task is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskKind {
    /// A protocol task (CreateTaskResult).
    Protocol,
    /// A job id handed out in a tool result and polled through another tool.
    ToolJob,
}

/// One task as the analysis follows it.
#[derive(Clone, Debug)]
pub struct Task {
    /// Trace index.
    pub trace: usize,
    /// Server.
    pub server: String,
    /// Task id (protocol) or job id.
    pub id: String,
    /// Kind.
    pub kind: TaskKind,
    /// Index of the `tools/call` that started it.
    pub start: usize,
    /// States in the order observed, repeats folded: `(when, state, how)`.
    pub states: Vec<(DateTime<Utc>, String, &'static str)>,
    /// Server's suggested poll interval in milliseconds (last seen).
    pub poll_interval_ms: Option<u64>,
    /// Indexes of `tasks/get` calls for it.
    pub tasks_get: Vec<usize>,
    /// Indexes of `tasks/result` calls for it.
    pub tasks_result: Vec<usize>,
    /// Indexes of `tools/call`s of a status tool that name it.
    pub status_calls: Vec<usize>,
    /// `tasks/get` sent sooner after the previous look than the poll interval.
    pub polls_too_fast: usize,
    /// `tasks/get` sent after the client had seen a terminal state.
    pub polls_after_terminal: usize,
    /// Task status notifications received.
    pub notifications: usize,
}

impl Task {
    /// When a terminal state was first seen.
    pub fn terminal_at(&self) -> Option<DateTime<Utc>> {
        self.states
            .iter()
            .find(|(_, s, _)| TERMINAL.contains(&s.as_str()))
            .map(|(t, _, _)| *t)
    }

    /// The terminal state, if reached.
    pub fn terminal(&self) -> Option<&str> {
        self.states
            .iter()
            .map(|(_, s, _)| s.as_str())
            .find(|s| TERMINAL.contains(s))
    }

    /// Note a state seen at `at` (folded into [`Task::states`] by [`Task::settle`]).
    fn observe(&mut self, at: DateTime<Utc>, state: &str, how: &'static str) {
        self.states.push((at, state.to_string(), how));
    }

    /// Put the observations in time order and fold repeats.
    fn settle(&mut self) {
        self.states.sort_by_key(|(at, _, _)| *at);
        self.states.dedup_by(|b, a| a.1 == b.1);
    }
}

/// The task handle of a `tools/call` result, either generation:
/// `(task id, status, poll interval ms, generation)`.
pub fn task_handle(result: &Value) -> Option<(String, String, Option<u64>, &'static str)> {
    if result.get("resultType").and_then(Value::as_str) == Some("task") {
        let id = result.get("taskId")?.as_str()?;
        let st = result
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("working");
        let pi = result.get("pollIntervalMs").and_then(Value::as_u64);
        return Some((id.into(), st.into(), pi, "2026-07-28"));
    }
    let t = result.get("task")?;
    let id = t.get("taskId")?.as_str()?;
    let st = t.get("status").and_then(Value::as_str).unwrap_or("working");
    let pi = t.get("pollInterval").and_then(Value::as_u64);
    Some((id.into(), st.into(), pi, "2025-11-25"))
}

/// The state a status tool's result text reports: the first status word in it
/// (`completed`/`finished`/`done`/`succeeded` → completed, `failed` → failed,
/// `cancelled` → cancelled, `working`/`running`/`pending`/`started` → working).
pub fn state_in_text(text: &str) -> Option<&'static str> {
    const WORDS: &[(&str, &str)] = &[
        ("completed", "completed"),
        ("finished", "completed"),
        ("succeeded", "completed"),
        ("done", "completed"),
        ("failed", "failed"),
        ("cancelled", "cancelled"),
        ("canceled", "cancelled"),
        ("working", "working"),
        ("running", "working"),
        ("pending", "working"),
        ("started", "working"),
    ];
    let lower = text.to_ascii_lowercase();
    WORDS
        .iter()
        .filter_map(|(w, s)| lower.find(w).map(|i| (i, *s)))
        .min_by_key(|(i, _)| *i)
        .map(|(_, s)| s)
}

/// Text of a `CallToolResult` (its text content blocks joined).
pub fn result_text(result: &Value) -> String {
    result
        .get("content")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// True when `text` contains `word` not glued to other id characters.
fn mentions(text: &str, word: &str) -> bool {
    let id_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    text.match_indices(word).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(id_char)
            && !text[i + word.len()..].chars().next().is_some_and(id_char)
    })
}

/// Find every task in `calls` (sorted by time) and follow it.
pub fn find_tasks(calls: &[Call], notes: &[Note]) -> Vec<Task> {
    let mut f = Finder {
        calls,
        // Result texts of tools/call answers, computed once (job ids are looked up in
        // them).
        texts: calls
            .iter()
            .map(|c| match (&c.result, c.method.as_str()) {
                (Some(r), "tools/call") => result_text(r),
                _ => String::new(),
            })
            .collect(),
        tasks: Vec::new(),
        by_id: HashMap::new(),
    };
    for (i, c) in calls.iter().enumerate() {
        match c.method.as_str() {
            "tools/call" => f.tools_call(i),
            "tasks/get" | "tasks/result" | "tasks/cancel" => f.task_request(i),
            _ => {}
        }
    }
    f.notifications(notes);
    let mut tasks = f.tasks;
    // A poll sent after the client had seen the end (a poll's answer or a notification)
    // is redundant.
    for t in &mut tasks {
        t.settle();
        let end = t.terminal_at();
        t.polls_after_terminal = t
            .tasks_get
            .iter()
            .filter(|&&g| end.is_some_and(|e| e < calls[g].at))
            .count();
    }
    tasks
}

/// The tasks found so far, by `(trace, server, id)`.
struct Finder<'c> {
    calls: &'c [Call],
    texts: Vec<String>,
    tasks: Vec<Task>,
    by_id: HashMap<(usize, String, String), usize>,
}

fn key(c: &Call, id: &str) -> (usize, String, String) {
    (c.trace, c.server.clone(), id.to_string())
}

impl Finder<'_> {
    /// `tools/call` number `i`: a protocol task when answered with a task handle, else a
    /// status call of the first task (or new tool job) an argument names.
    fn tools_call(&mut self, i: usize) {
        let calls = self.calls;
        let c = &calls[i];
        if let Some((id, st, pi, _)) = c.result.as_ref().and_then(task_handle) {
            let mut t = new_task(c, i, &id, TaskKind::Protocol);
            t.poll_interval_ms = pi;
            t.observe(c.answered_at.unwrap_or(c.at), &st, "created");
            self.by_id.insert(key(c, &id), self.tasks.len());
            self.tasks.push(t);
            return;
        }
        let mut args = Vec::new();
        strings(c.params.get("arguments").unwrap_or(&Value::Null), &mut args);
        for v in args {
            let ti = match self.by_id.get(&key(c, v)) {
                Some(&ti) => Some(ti),
                // A new job id must be long enough not to be a common word.
                None if v.len() < MIN_JOB_ID => None,
                None => self.start_tool_job(i, v),
            };
            if let Some(ti) = ti {
                let t = &mut self.tasks[ti];
                t.status_calls.push(i);
                let text = c.result.as_ref().map(result_text).unwrap_or_default();
                if let (Some(st), Some(at)) = (state_in_text(&text), c.answered_at) {
                    t.observe(at, st, "status_tool");
                }
                break;
            }
        }
    }

    /// A tool job with id `v`, started by the earlier call whose result mentions it
    /// (see [`job_start`]); its index among the tasks.
    fn start_tool_job(&mut self, i: usize, v: &str) -> Option<usize> {
        let calls = self.calls;
        let j = job_start(calls, &self.texts, i, v)?;
        let mut t = new_task(&calls[j], j, v, TaskKind::ToolJob);
        let text = calls[j]
            .result
            .as_ref()
            .map(result_text)
            .unwrap_or_default();
        let at = calls[j].answered_at.unwrap_or(calls[j].at);
        t.observe(
            at,
            state_in_text(&text).unwrap_or("working"),
            "start_result",
        );
        self.by_id.insert(key(&calls[i], v), self.tasks.len());
        self.tasks.push(t);
        Some(self.tasks.len() - 1)
    }

    /// `tasks/get`, `tasks/result` or `tasks/cancel` number `i` of a known task.
    fn task_request(&mut self, i: usize) {
        let calls = self.calls;
        let c = &calls[i];
        let Some(id) = c.params.get("taskId").and_then(Value::as_str) else {
            return;
        };
        let Some(&ti) = self.by_id.get(&key(c, id)) else {
            return;
        };
        let t = &mut self.tasks[ti];
        let at = c.answered_at.unwrap_or(c.at);
        match c.method.as_str() {
            "tasks/get" => tasks_get(t, calls, i),
            "tasks/result" => {
                t.tasks_result.push(i);
                if c.result.is_some() {
                    t.observe(at, "completed", "tasks/result");
                } else if c.error.is_some() {
                    t.observe(at, "failed", "tasks/result");
                }
            }
            _ => {
                if c.result.is_some() {
                    t.observe(at, "cancelled", "tasks/cancel");
                }
            }
        }
    }

    /// The server's task status notifications.
    fn notifications(&mut self, notes: &[Note]) {
        for n in notes.iter().filter(|n| {
            !n.to_server
                && matches!(
                    n.method.as_str(),
                    "notifications/tasks/status" | "notifications/tasks"
                )
        }) {
            let Some(id) = n.params.get("taskId").and_then(Value::as_str) else {
                continue;
            };
            if let Some(t) = self
                .tasks
                .iter_mut()
                .find(|t| t.server == n.server && t.id == id)
            {
                t.notifications += 1;
                if let Some(st) = n.params.get("status").and_then(Value::as_str) {
                    t.observe(n.at, st, "notification");
                }
            }
        }
    }
}

/// `tasks/get` number `i` of task `t`: too fast when sent sooner than the poll interval
/// after the previous look; its answer's interval and status.
fn tasks_get(t: &mut Task, calls: &[Call], i: usize) {
    let c = &calls[i];
    let last_look = t
        .tasks_get
        .last()
        .map(|&g| calls[g].at)
        .or(calls[t.start].answered_at);
    if let (Some(prev), Some(pi)) = (last_look, t.poll_interval_ms) {
        if ((c.at - prev).num_milliseconds()) < pi as i64 {
            t.polls_too_fast += 1;
        }
    }
    t.tasks_get.push(i);
    if let Some(r) = &c.result {
        if let Some(p) = r
            .get("pollIntervalMs")
            .or(r.get("pollInterval"))
            .and_then(Value::as_u64)
        {
            t.poll_interval_ms = Some(p);
        }
        if let Some(st) = r.get("status").and_then(Value::as_str) {
            t.observe(c.answered_at.unwrap_or(c.at), st, "tasks/get");
        }
    }
}

fn new_task(c: &Call, i: usize, id: &str, kind: TaskKind) -> Task {
    Task {
        trace: c.trace,
        server: c.server.clone(),
        id: id.to_string(),
        kind,
        start: i,
        states: Vec::new(),
        poll_interval_ms: None,
        tasks_get: Vec::new(),
        tasks_result: Vec::new(),
        status_calls: Vec::new(),
        polls_too_fast: 0,
        polls_after_terminal: 0,
        notifications: 0,
    }
}

/// The earliest `tools/call` before `i` on the same server, of another tool, whose result
/// text mentions `id`.
fn job_start(calls: &[Call], texts: &[String], i: usize, id: &str) -> Option<usize> {
    let c = &calls[i];
    let tool = c.params.get("name");
    calls[..i].iter().zip(texts).position(|(p, text)| {
        p.trace == c.trace
            && p.server == c.server
            && p.method == "tools/call"
            && p.params.get("name") != tool
            && mentions(text, id)
    })
}

/// Claude Code's name of an MCP tool for the model: `mcp__SERVER__TOOL`, with characters
/// outside `[A-Za-z0-9_-]` replaced by `_`.
pub fn model_tool_name(server: &str, tool: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("mcp__{}__{}", clean(server), clean(tool))
}

/// For each model-level call of an MCP tool: the index of the `tools/call` that served
/// it and how it was found (`tool_use_id` or `arguments`).
pub fn link_model_calls(
    model: &[(usize, &ToolCall)],
    calls: &[Call],
) -> Vec<Option<(usize, &'static str)>> {
    let mut taken = vec![false; calls.len()];
    let tool_calls: Vec<usize> = (0..calls.len())
        .filter(|&i| calls[i].method == "tools/call" && calls[i].to_server)
        .collect();
    let name_of = |c: &Call| {
        model_tool_name(
            &c.server,
            c.params.get("name").and_then(Value::as_str).unwrap_or(""),
        )
    };
    let mut out = Vec::with_capacity(model.len());
    for (trace, m) in model {
        let by_id = tool_calls.iter().copied().find(|&i| {
            !taken[i]
                && calls[i].trace == *trace
                && calls[i].meta(TOOL_USE_ID_META).and_then(Value::as_str) == Some(m.id.as_str())
        });
        let found = by_id.map(|i| (i, "tool_use_id")).or_else(|| {
            tool_calls
                .iter()
                .copied()
                .find(|&i| {
                    let c = &calls[i];
                    !taken[i]
                        && c.trace == *trace
                        && name_of(c) == m.name
                        && c.params.get("arguments").unwrap_or(&Value::Null) == &m.input
                        && (c.at - m.issued_at).num_milliseconds() > -2000
                })
                .map(|i| (i, "arguments"))
        });
        if let Some((i, _)) = found {
            taken[i] = true;
        }
        out.push(found);
    }
    out
}

/// The conversation's `<task-notification>` for a task started by `tool_use_id`.
pub fn notification_for<'a>(
    notes: &'a [Notification],
    tool_use_id: &str,
    task_id: &str,
) -> Option<&'a Notification> {
    notes
        .iter()
        .find(|n| n.tool_use_id.as_deref() == Some(tool_use_id) || n.task_id == task_id)
}
