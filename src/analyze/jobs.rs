//! Background jobs: Bash `run_in_background` commands and background agents (task id and
//! output file from the tool result, `<task-notification>` status and exit code), MCP
//! jobs (a call whose result carries a job id, later calls that pass it), and Codex's
//! processes and script cells (a call whose result says it still runs, until a result
//! says it ended: [`super::codex`]). For each job: start, end as observed, status, exit
//! code, polls, duplicates, lifecycle events (Codex), and one decision record.
//!
//! Not covered: MCP Tasks protocol messages (`tasks/get`, `tasks/update`, `tasks/cancel`,
//! `tasks/result`) travel between the client and the MCP server, not in `/v1/messages`
//! traffic; they appear here only as the tool calls that wrap them.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use super::codex::{self, lifecycle::Outcome, Handle};
use super::events::{JobEvent, Notification, ToolCall, ToolResult};

/// What kind of background work a job is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// A Bash command with `run_in_background: true`.
    BashBackground,
    /// Any other tool run with `run_in_background: true` (background agents, workflows).
    BackgroundAgent,
    /// An MCP tool whose result returned a job id that later calls pass back.
    McpJob,
    /// A Codex process still running when its start call returned (`Process running
    /// with session ID N`): polled with `write_stdin` on the session.
    CodexExecSession,
    /// A Codex code-mode script cell still running when its `exec` returned (`Script
    /// running with cell ID N`): polled with `wait` on the cell.
    CodexExecCell,
    /// A Gemini CLI process moved to the background (`run_shell_command` with
    /// `is_background: true`: `PID N`), polled with `read_background_output` and
    /// `list_background_processes` ([`super::gemini`]).
    GeminiBackground,
}

impl JobKind {
    /// True for Codex's kinds, whose end is read from tool results, not notifications.
    pub fn is_codex(self) -> bool {
        matches!(self, JobKind::CodexExecSession | JobKind::CodexExecCell)
    }
}

/// Observed state of a job at the end of the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// Notified (or reported) completed.
    Completed,
    /// Notified (or reported) failed.
    Failed,
    /// Notified (or reported) stopped / cancelled.
    Stopped,
    /// Last report says it is still running.
    Running,
    /// No notification and no status before the trace ends.
    NoNotification,
    /// Ended, but how is not in the trace: a poll found it gone (Codex's `Unknown process
    /// id N`) and no earlier result gave its exit.
    Ended,
}

impl JobState {
    /// Name as in reports.
    pub fn name(self) -> &'static str {
        match self {
            JobState::Completed => "completed",
            JobState::Failed => "failed",
            JobState::Stopped => "stopped",
            JobState::Running => "running",
            JobState::NoNotification => "no_notification",
            JobState::Ended => "ended",
        }
    }
}

/// One background job.
#[derive(Clone, Debug, Serialize)]
pub struct Job {
    /// Task id / job id.
    pub reference: String,
    /// Kind of job.
    pub kind: JobKind,
    /// Global thread number.
    #[serde(skip)]
    pub thread: usize,
    /// Thread label.
    pub thread_label: String,
    /// Tool that started it.
    pub tool: String,
    /// The command (Bash) or the start call's input (JSON text).
    pub command: String,
    /// `tool_use` id of the start call.
    pub start_call: String,
    /// When the start call's result was carried (the job was running by then).
    pub started_at: DateTime<Utc>,
    /// When the notification (or terminal status) was carried.
    pub notified_at: Option<DateTime<Utc>>,
    /// Status from the notification or the last status result.
    pub state: JobState,
    /// Exit code, if the notification gave one.
    pub exit_code: Option<i64>,
    /// Output file (Bash) or artifact path (MCP), if known.
    pub artifact: Option<String>,
    /// Polls of this job (filled by the polling analysis).
    pub polls: usize,
    /// Reference of an earlier job with the same command still running at this start.
    pub duplicate_of: Option<String>,
    /// Text of the first tool result with `is_error` among the job's calls.
    pub tool_result_error: Option<String>,
    /// `seq` of the request that carried the notification.
    #[serde(skip)]
    pub notified_seq: Option<usize>,
    /// The assistant said something finished while the job ran, before its notification.
    pub claimed_done_early: bool,
    /// What the job's tool results said, in order (Codex jobs; absent from the JSON for
    /// the others, whose lifecycle is their notification).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<JobEvent>,
}

impl Job {
    /// A job `start` started in thread `thread_label`, running since `started_at` (when
    /// the start call's result was carried): nothing of its end seen yet (no
    /// notification, exit code, artifact, polls or duplicate); its command is the start
    /// call's input as JSON text.
    pub fn running(
        reference: String,
        kind: JobKind,
        start: &ToolCall,
        thread_label: String,
        started_at: DateTime<Utc>,
    ) -> Job {
        Job {
            reference,
            kind,
            thread: start.thread,
            thread_label,
            tool: start.name.clone(),
            command: start.input.to_string(),
            start_call: start.id.clone(),
            started_at,
            notified_at: None,
            state: JobState::Running,
            exit_code: None,
            artifact: None,
            polls: 0,
            duplicate_of: None,
            tool_result_error: None,
            notified_seq: None,
            claimed_done_early: false,
            events: Vec::new(),
        }
    }
}

/// One decision record per job (the fields the issue fixes).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DecisionRecord {
    /// Task id or job id.
    pub job_reference: String,
    /// `completed`, `failed`, `stopped`, `running`, `no_notification`.
    pub observed_state: String,
    /// Output file or artifact path, if any.
    pub artifact_reference: Option<String>,
    /// What was checked to accept the job.
    pub acceptance_check: String,
    /// `pass`, `fail` or `unavailable`.
    pub acceptance_result: String,
    /// `keep`, `continue`, `investigate` or `stop`.
    pub decision: String,
    /// What the trace cannot tell, if anything.
    pub unresolved_fact: Option<String>,
    /// Text of a tool result with `is_error`, if any.
    pub tool_result_error: Option<String>,
}

fn after<'a>(s: &'a str, marker: &str) -> Option<&'a str> {
    let i = s.find(marker)? + marker.len();
    let rest = s[i..].trim_start();
    let end = rest.find(|c: char| c.is_whitespace()).unwrap_or(rest.len());
    Some(rest[..end].trim_end_matches(['.', ',', ';']))
}

/// Task id and output file from Claude Code's "Command running in background with ID: X.
/// Output is being written to: PATH" result (also `agentId: X` for agents).
pub fn background_ids(text: &str) -> (Option<String>, Option<String>) {
    let id = after(text, "with ID:")
        .or_else(|| after(text, "agentId:"))
        .or_else(|| after(text, "task ID:"))
        .or_else(|| after(text, "ID:"))
        .map(str::to_string);
    let file = after(text, "written to:").map(str::to_string);
    (id.filter(|s| !s.is_empty()), file)
}

/// A job id in a tool result: a JSON result with `job_id` / `jobId` / `task_id` / `taskId`.
pub fn mcp_job_id(text: &str) -> Option<String> {
    let v: Value = serde_json::from_str(text.trim()).ok()?;
    ["job_id", "jobId", "task_id", "taskId"]
        .iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))
        .map(str::to_string)
}

/// Terminal or running state named by a status word.
pub fn state_word(s: &str) -> Option<JobState> {
    match s.to_ascii_lowercase().as_str() {
        "completed" | "complete" | "finished" | "done" | "succeeded" | "success" => {
            Some(JobState::Completed)
        }
        "failed" | "failure" | "error" | "errored" => Some(JobState::Failed),
        "stopped" | "cancelled" | "canceled" | "killed" | "aborted" => Some(JobState::Stopped),
        "running" | "pending" | "queued" | "in_progress" | "accepted" | "started" | "working" => {
            Some(JobState::Running)
        }
        _ => None,
    }
}

fn artifact_in(v: &Value) -> Option<String> {
    for k in [
        "artifact",
        "artifact_path",
        "output_path",
        "result_path",
        "path",
        "output",
        "url",
        "file",
    ] {
        if let Some(s) = v.get(k).and_then(Value::as_str) {
            return Some(s.to_string());
        }
    }
    None
}

fn is_background(c: &ToolCall) -> bool {
    c.input.get("run_in_background").and_then(Value::as_bool) == Some(true)
}

/// Find the jobs among the tool calls (in issue order) and match notifications to them.
///
/// `claims` are `(thread, seq)` of responses whose text says something finished.
pub fn find_jobs(
    calls: &[ToolCall],
    notes: &[Notification],
    claims: &[(usize, usize)],
    labels: &[String],
    session_of: &[usize],
) -> Vec<Job> {
    let mut jobs = start_jobs(calls, labels);
    for j in &mut jobs {
        if j.kind == JobKind::McpJob {
            follow_status_calls(j, calls);
        } else if j.kind == JobKind::GeminiBackground {
            follow_gemini(j, calls);
        } else if j.kind.is_codex() {
            follow_codex(j, calls);
            j.claimed_done_early = claimed_done_early(j, calls, claims);
        } else {
            match_notification(j, notes, session_of);
            j.claimed_done_early = claimed_done_early(j, calls, claims);
        }
    }
    mark_duplicates(&mut jobs);
    jobs
}

/// The jobs the calls start, in issue order: background commands and agents, and MCP
/// calls whose result hands out a job id that a later call passes back.
fn start_jobs(calls: &[ToolCall], labels: &[String]) -> Vec<Job> {
    let mut jobs: Vec<Job> = Vec::new();
    for c in calls {
        let Some(res) = &c.result else { continue };
        let label = labels.get(c.thread).cloned().unwrap_or_default();
        let job = if is_background(c) {
            Some(background_job(c, res, label))
        } else if let Some(pid) = super::gemini::started(c) {
            Some(Job {
                command: super::gemini::command(c),
                ..Job::running(
                    super::gemini::reference(&pid),
                    JobKind::GeminiBackground,
                    c,
                    label,
                    res.at,
                )
            })
        } else if let Some(h) = codex::started(c) {
            codex_job(c, &h, res, label, &jobs)
        } else {
            mcp_job(c, res, label, calls, &jobs)
        };
        jobs.extend(job);
    }
    jobs
}

/// The job a `run_in_background` call started (its result names the task id and output
/// file); `NoNotification` until a notification says otherwise.
fn background_job(c: &ToolCall, res: &ToolResult, label: String) -> Job {
    let (id, file) = background_ids(&res.text);
    let command = c
        .input
        .get("command")
        .or_else(|| c.input.get("prompt"))
        .and_then(Value::as_str)
        .map_or_else(|| c.input.to_string(), str::to_string);
    let kind = if c.name == "Bash" {
        JobKind::BashBackground
    } else {
        JobKind::BackgroundAgent
    };
    Job {
        command,
        state: JobState::NoNotification,
        artifact: file,
        tool_result_error: res.is_error.then(|| res.text.clone()),
        ..Job::running(id.unwrap_or_else(|| c.id.clone()), kind, c, label, res.at)
    }
}

/// The MCP job `c` started: its result carries a job id that a later call of the same
/// thread passes back (a status call), and no earlier job has that id.
fn mcp_job(
    c: &ToolCall,
    res: &ToolResult,
    label: String,
    calls: &[ToolCall],
    jobs: &[Job],
) -> Option<Job> {
    let id = mcp_job_id(&res.text)?;
    let passed_back = calls.iter().any(|o| {
        o.thread == c.thread
            && o.id != c.id
            && o.issued_at >= c.issued_at
            && input_mentions(&o.input, &id)
    });
    if !passed_back || jobs.iter().any(|j| j.reference == id) {
        return None;
    }
    Some(Job {
        tool_result_error: res.is_error.then(|| res.text.clone()),
        ..Job::running(id, JobKind::McpJob, c, label, res.at)
    })
}

/// The Codex job `c` started (process or cell `h`), unless the thread already has one
/// of that id.
fn codex_job(
    c: &ToolCall,
    h: &Handle,
    res: &ToolResult,
    label: String,
    jobs: &[Job],
) -> Option<Job> {
    let reference = h.reference();
    if jobs
        .iter()
        .any(|j| j.thread == c.thread && j.kind.is_codex() && j.reference == reference)
    {
        return None;
    }
    let kind = match h {
        Handle::Session(_) => JobKind::CodexExecSession,
        Handle::Cell(_) => JobKind::CodexExecCell,
    };
    Some(Job {
        command: codex::command(c, h),
        ..Job::running(reference, kind, c, label, res.at)
    })
}

/// A Codex job's lifecycle from the results of the calls that ask about it: its events,
/// and the first result that said it ended (state, exit code, when).
fn follow_codex(j: &mut Job, calls: &[ToolCall]) {
    let Some(start) = calls
        .iter()
        .find(|c| c.thread == j.thread && c.id == j.start_call)
    else {
        return;
    };
    let Some(h) = codex::started(start) else {
        return;
    };
    let life = codex::lifecycle::follow(&h, start, calls);
    j.events = life.events;
    if let Some(end) = life.end {
        j.state = match end.outcome {
            Outcome::Completed => JobState::Completed,
            Outcome::Failed => JobState::Failed,
            Outcome::Unknown => JobState::Ended,
        };
        j.exit_code = end.exit_code;
        j.notified_at = Some(end.at);
        j.notified_seq = Some(end.seq);
    }
}

/// A Gemini job's end: the first `list_background_processes` result that lists its
/// process with a status other than running.
fn follow_gemini(j: &mut Job, calls: &[ToolCall]) {
    let pid = j.reference.trim_start_matches("pid:").to_string();
    if let Some((state, c)) = super::gemini::end_of(&pid, j.thread, calls) {
        j.state = state;
        if let Some(r) = &c.result {
            j.notified_at = Some(r.at);
            j.notified_seq = Some(r.carried_by);
        }
    }
}

/// A background task's notification (same session, by task id or start call): its
/// time, state, exit code and output file.
fn match_notification(j: &mut Job, notes: &[Notification], session_of: &[usize]) {
    let n = notes.iter().find(|n| {
        session_of.get(n.thread) == session_of.get(j.thread)
            && (n.task_id == j.reference || n.tool_use_id.as_deref() == Some(j.start_call.as_str()))
    });
    if let Some(n) = n {
        j.notified_at = Some(n.at);
        j.notified_seq = Some(n.carried_by);
        j.state = state_word(&n.status).unwrap_or(JobState::NoNotification);
        j.exit_code = n.exit_code;
        if j.artifact.is_none() {
            j.artifact = n.output_file.clone();
        }
    }
}

/// Status results of an MCP job's later calls: the first terminal status ends the job;
/// the first error result is kept.
fn follow_status_calls(j: &mut Job, calls: &[ToolCall]) {
    for c in calls
        .iter()
        .filter(|c| c.thread == j.thread && c.id != j.start_call)
    {
        if !input_mentions(&c.input, &j.reference) {
            continue;
        }
        let Some(res) = &c.result else { continue };
        if res.is_error && j.tool_result_error.is_none() {
            j.tool_result_error = Some(res.text.clone());
        }
        let v: Value = serde_json::from_str(res.text.trim()).unwrap_or(Value::Null);
        let st = v
            .get("status")
            .or_else(|| v.get("state"))
            .and_then(Value::as_str)
            .and_then(state_word);
        if let Some(st) = st {
            if st != JobState::Running && j.notified_at.is_none() {
                j.state = st;
                j.notified_at = Some(res.at);
                j.notified_seq = Some(res.carried_by);
                j.artifact = artifact_in(&v);
                j.exit_code = v.get("exit_code").and_then(Value::as_i64);
            }
        }
    }
}

/// True when the assistant said something finished in the job's thread between its
/// start and its notification.
fn claimed_done_early(j: &Job, calls: &[ToolCall], claims: &[(usize, usize)]) -> bool {
    let start = calls
        .iter()
        .find(|c| c.id == j.start_call)
        .and_then(|c| c.result.as_ref())
        .map(|r| r.carried_by);
    match (start, j.notified_seq) {
        (Some(a), Some(b)) => claims
            .iter()
            .any(|&(t, s)| t == j.thread && s >= a && s < b),
        _ => false,
    }
}

/// Duplicates: the same command started again while an earlier start still ran.
fn mark_duplicates(jobs: &mut [Job]) {
    for i in 0..jobs.len() {
        for k in 0..i {
            let (a, b) = (&jobs[k], &jobs[i]);
            let running = a.notified_at.is_none_or(|t| t > b.started_at);
            if a.thread == b.thread && a.tool == b.tool && a.command == b.command && running {
                jobs[i].duplicate_of = Some(jobs[k].reference.clone());
                break;
            }
        }
    }
}

/// True when `id` appears in a string of `input` as a whole token (not inside a longer
/// identifier).
pub fn input_mentions(input: &Value, id: &str) -> bool {
    let is_id = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    match input {
        Value::String(s) => s.match_indices(id).any(|(i, _)| {
            !s[..i].chars().next_back().is_some_and(is_id)
                && !s[i + id.len()..].chars().next().is_some_and(is_id)
        }),
        Value::Array(a) => a.iter().any(|v| input_mentions(v, id)),
        Value::Object(o) => o.values().any(|v| input_mentions(v, id)),
        _ => false,
    }
}

/// The decision record of a job.
pub fn decide(j: &Job) -> DecisionRecord {
    let check = match j.kind {
        JobKind::McpJob => "final status returned by the job's status calls",
        JobKind::CodexExecSession => "exit code in the process's write_stdin results",
        JobKind::CodexExecCell => "script status in the cell's wait results",
        _ => "task notification status and exit code",
    };
    let (result, decision, unresolved) = match &j.duplicate_of {
        Some(first) => (
            "unavailable",
            "stop",
            Some(format!(
                "started again while {first} still ran: which run's output counts"
            )),
        ),
        None => verdict(j),
    };
    DecisionRecord {
        job_reference: j.reference.clone(),
        observed_state: j.state.name().to_string(),
        artifact_reference: j.artifact.clone(),
        acceptance_check: check.to_string(),
        acceptance_result: result.to_string(),
        decision: decision.to_string(),
        unresolved_fact: unresolved,
        tool_result_error: j.tool_result_error.clone(),
    }
}

/// The acceptance result, decision and unresolved fact of a job that is no duplicate,
/// by its state.
fn verdict(j: &Job) -> (&'static str, &'static str, Option<String>) {
    let failed_exit = j.exit_code.is_some_and(|c| c != 0);
    match j.state {
        JobState::Completed if !failed_exit && j.tool_result_error.is_none() => ("pass", "keep", None),
        JobState::Completed | JobState::Failed | JobState::Stopped => (
            "fail",
            "investigate",
            Some(format!(
                "why the job ended {}{}{}",
                j.state.name(),
                j.exit_code.map(|c| format!(" with exit code {c}")).unwrap_or_default(),
                if j.claimed_done_early {
                    "; the assistant reported it finished before the notification arrived"
                } else {
                    ""
                }
            )),
        ),
        JobState::Running => (
            "unavailable",
            "continue",
            Some("the last status says running: the outcome is not in the trace".to_string()),
        ),
        JobState::Ended => (
            "unavailable",
            "investigate",
            Some("a poll found the job gone, but how it ended (its exit code) is not in the trace".to_string()),
        ),
        JobState::NoNotification => (
            "unavailable",
            "continue",
            Some("no notification before the trace ends: whether the job finished, and how, is unknown (a missing response is no proof it did not run)".to_string()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn background_result_ids() {
        let (id, f) = background_ids("Command running in background with ID: b7x. Output is being written to: /tmp/t/b7x.output. You will be notified.");
        assert_eq!(id.as_deref(), Some("b7x"));
        assert_eq!(f.as_deref(), Some("/tmp/t/b7x.output"));
        assert_eq!(
            mcp_job_id(r#"{"job_id": "job-1", "status": "accepted"}"#).as_deref(),
            Some("job-1")
        );
        assert_eq!(state_word("finished"), Some(JobState::Completed));
    }
}
