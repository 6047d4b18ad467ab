//! Poll detection: tool calls that re-read state an earlier call already read, grouped
//! into episodes per thread and target, with redundant polls, polls after the job's
//! completion was notified, polls while a notification was pending, intervals, and the
//! cost of the model calls the polls triggered.
//!
//! Poll kinds:
//! - `same_call`: the same tool with the same normalized input again (an MCP
//!   `get_status(job)`; inputs compared as canonical JSON without `description`);
//! - `task_output`: `BashOutput` / `TaskOutput` of a task id, or a read (Read tool, or
//!   `cat`/`tail`/... in Bash) of a background task's output file;
//! - `shell_inspect`: a Bash command made only of inspecting commands (`tail`, `cat`,
//!   `head`, `wc`, `ls`, `grep`, `stat`, `echo`, `ps`, ..., optionally after `sleep N;`)
//!   on the same targets.
//!
//! Tools that change state (Write, Edit, Agent, ..., MCP tools named `start_…`,
//! `create_…`, `cancel_…`, ...) are never polls, however often they repeat.
//!
//! A group of calls with one target is an episode when it has two or more calls, or its
//! kind is `task_output`. Every call of an episode is a poll; a poll is *redundant* when
//! its result equals the previous poll's result after normalization (whitespace collapsed,
//! timestamps and clock times masked).

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use super::input::{Notification, ToolCall};
use super::jobs::{input_mentions, Job, JobState};

/// Commands that only inspect state.
pub const INSPECT_COMMANDS: &[&str] = &[
    "tail", "cat", "head", "wc", "ls", "grep", "egrep", "rg", "stat", "echo", "ps", "pgrep",
    "jobs", "test", "file", "du", "df", "date", "true", "pwd", "less", "more", "find", "awk",
];

/// Kind of poll.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PollKind {
    /// Same tool, same normalized input.
    SameCall,
    /// Reads a background task's output (by id or output file).
    TaskOutput,
    /// An inspect-only shell command on the same targets.
    ShellInspect,
}

impl PollKind {
    /// Name as in reports.
    pub fn name(self) -> &'static str {
        match self {
            PollKind::SameCall => "same_call",
            PollKind::TaskOutput => "task_output",
            PollKind::ShellInspect => "shell_inspect",
        }
    }
}

/// One poll.
#[derive(Clone, Debug, Serialize)]
pub struct Poll {
    /// `tool_use` id.
    pub call: String,
    /// When it was issued.
    pub at: DateTime<Utc>,
    /// Result identical to the previous poll's.
    pub redundant: bool,
    /// Issued after the job's completion was already notified (or reported).
    pub after_notified: bool,
    /// Its result reached the model together with the job's notification.
    pub while_pending: bool,
    /// `seq` of the model call its result triggered.
    #[serde(skip)]
    pub triggered: Option<usize>,
}

/// A group of polls of one target in one thread.
#[derive(Clone, Debug, Serialize)]
pub struct Episode {
    /// Global thread number.
    #[serde(skip)]
    pub thread: usize,
    /// Thread label.
    pub thread_label: String,
    /// Kind of poll.
    pub kind: PollKind,
    /// Tool name (of the first poll).
    pub tool: String,
    /// What is polled: `task:<id>`, a file, a command, or `tool(input)`.
    pub target: String,
    /// Job reference the target belongs to, if any.
    pub job: Option<String>,
    /// The polls in order.
    pub polls: Vec<Poll>,
}

impl Episode {
    /// Number of polls.
    pub fn count(&self) -> usize {
        self.polls.len()
    }
    /// Redundant polls.
    pub fn redundant(&self) -> usize {
        self.polls.iter().filter(|p| p.redundant).count()
    }
    /// Polls after the completion was notified.
    pub fn after_notified(&self) -> usize {
        self.polls.iter().filter(|p| p.after_notified).count()
    }
    /// Polls while a notification was pending.
    pub fn while_pending(&self) -> usize {
        self.polls.iter().filter(|p| p.while_pending).count()
    }
    /// Mean seconds between consecutive polls (`None` for one poll).
    pub fn mean_interval_s(&self) -> Option<f64> {
        let n = self.polls.len();
        (n > 1).then(|| {
            (self.polls[n - 1].at - self.polls[0].at)
                .num_microseconds()
                .unwrap_or(0) as f64
                / 1e6
                / (n - 1) as f64
        })
    }
}

/// Mask volatile parts of a result: ISO timestamps, clock times, whitespace runs.
pub fn normalize_result(s: &str) -> String {
    use std::sync::OnceLock;
    static RE: OnceLock<[regex::Regex; 2]> = OnceLock::new();
    let re = RE.get_or_init(|| {
        [
            regex::Regex::new(
                r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?",
            )
            .unwrap(),
            regex::Regex::new(r"\b\d{1,2}:\d{2}:\d{2}(\.\d+)?\b").unwrap(),
        ]
    });
    let s = re[0].replace_all(s, "<ts>");
    let s = re[1].replace_all(&s, "<time>");
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn canonical(v: &Value) -> String {
    match v {
        Value::Object(o) => {
            let m: BTreeMap<&String, String> = o
                .iter()
                .filter(|(k, _)| k.as_str() != "description")
                .map(|(k, v)| (k, canonical(v)))
                .collect();
            let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k:?}:{v}")).collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// Targets of an inspect-only shell command, or `None` when some part of it does more
/// than inspect. `sleep N` parts are dropped; a command with no file argument is its own
/// target.
pub fn shell_targets(command: &str) -> Option<Vec<String>> {
    let mut targets = Vec::new();
    let mut parts = Vec::new();
    for seg in command.split(['\n', ';', '|', '&']) {
        let words: Vec<&str> = seg.split_whitespace().collect();
        let Some(&cmd) = words.first() else { continue };
        if cmd == "sleep" {
            continue;
        }
        if !INSPECT_COMMANDS.contains(&cmd) || seg.contains('>') {
            return None;
        }
        parts.push(words.join(" "));
        if cmd == "echo" {
            continue;
        }
        // File-like arguments: not options, not pure numbers.
        let files: Vec<String> = words[1..]
            .iter()
            .filter(|w| !w.starts_with('-') && w.parse::<f64>().is_err())
            .map(|w| w.trim_matches(['"', '\'']).to_string())
            .collect();
        targets.extend(files.into_iter().last());
    }
    if parts.is_empty() {
        return None;
    }
    if targets.is_empty() {
        targets.push(parts.join("; "));
    }
    targets.sort();
    targets.dedup();
    Some(targets)
}

/// The poll target of a call: `(kind, target)`, or `None` when it cannot be a poll.
pub fn target_of(c: &ToolCall, task_files: &HashMap<String, String>) -> Option<(PollKind, String)> {
    if c.input.get("run_in_background").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    for k in ["bash_id", "task_id", "shell_id", "agentId"] {
        if let Some(id) = c.input.get(k).and_then(Value::as_str) {
            if matches!(c.name.as_str(), "BashOutput" | "TaskOutput" | "AgentOutput") {
                return Some((PollKind::TaskOutput, format!("task:{id}")));
            }
        }
    }
    let file_task = |path: &str| {
        task_files
            .get(path)
            .map(|id| (PollKind::TaskOutput, format!("task:{id}")))
    };
    if c.name == "Bash" {
        let cmd = c.input.get("command").and_then(Value::as_str)?;
        let targets = shell_targets(cmd)?;
        if let Some(t) = targets.iter().find_map(|t| file_task(t)) {
            return Some(t);
        }
        return Some((PollKind::ShellInspect, targets.join(" ")));
    }
    if let Some(p) = c.input.get("file_path").and_then(Value::as_str) {
        if let Some(t) = file_task(p) {
            return Some(t);
        }
    }
    if changes_state(&c.name) {
        return None;
    }
    Some((
        PollKind::SameCall,
        format!("{}({})", c.name, canonical(&c.input)),
    ))
}

/// Claude Code tools that change state or delegate work: calling them twice is work, not
/// a poll.
pub const STATE_CHANGING_TOOLS: &[&str] = &[
    "Edit",
    "MultiEdit",
    "Write",
    "NotebookEdit",
    "TodoWrite",
    "Agent",
    "Task",
    "Skill",
    "ToolSearch",
    "CronCreate",
    "CronDelete",
    "EnterWorktree",
    "ExitWorktree",
    "ExitPlanMode",
    "SendMessage",
    "TaskStop",
    "KillShell",
    "KillBash",
    "Workflow",
    "ScheduleWakeup",
];

/// Verbs that start the name of a state-changing MCP tool (`mcp__srv__start_job`).
const CHANGING_VERBS: &[&str] = &[
    "start", "create", "delete", "remove", "update", "set", "cancel", "stop", "kill", "write",
    "send", "post", "put", "launch", "submit", "run", "exec", "execute", "deploy", "edit",
];

/// True for a tool that changes state (by name), so repeated calls are not polls.
pub fn changes_state(name: &str) -> bool {
    if STATE_CHANGING_TOOLS.contains(&name) {
        return true;
    }
    let last = name
        .rsplit("__")
        .next()
        .unwrap_or(name)
        .to_ascii_lowercase();
    let verb = last.split(['_', '-']).next().unwrap_or("");
    CHANGING_VERBS.contains(&verb)
}

/// Group the calls into episodes. `jobs` gives task output files, notifications and
/// completion times; their `polls` counts are filled in.
pub fn find_episodes(
    calls: &[ToolCall],
    notes: &[Notification],
    jobs: &mut [Job],
    labels: &[String],
) -> Vec<Episode> {
    let task_files: HashMap<String, String> = jobs
        .iter()
        .filter_map(|j| {
            j.artifact
                .as_ref()
                .map(|a| (a.clone(), j.reference.clone()))
        })
        .collect();
    let job_starts: Vec<&str> = jobs.iter().map(|j| j.start_call.as_str()).collect();
    let mut groups: Vec<((usize, String), PollKind, Vec<&ToolCall>)> = Vec::new();
    let mut index: HashMap<(usize, String), usize> = HashMap::new();
    for c in calls {
        if job_starts.contains(&c.id.as_str()) {
            continue;
        }
        let Some((kind, target)) = target_of(c, &task_files) else {
            continue;
        };
        let key = (c.thread, target);
        match index.get(&key) {
            Some(&i) => groups[i].2.push(c),
            None => {
                index.insert(key.clone(), groups.len());
                groups.push((key, kind, vec![c]));
            }
        }
    }
    let mut episodes = Vec::new();
    for ((thread, target), kind, group) in groups {
        if group.len() < 2 && kind != PollKind::TaskOutput {
            continue;
        }
        // The job this episode watches: named in the target or inputs, else the latest
        // background job of the thread started before the first poll.
        let first = group[0];
        let job_idx = jobs
            .iter()
            .position(|j| {
                j.thread == thread
                    && (target == format!("task:{}", j.reference)
                        || input_mentions(&first.input, &j.reference))
            })
            .or_else(|| {
                jobs.iter()
                    .enumerate()
                    .rev()
                    .find(|(_, j)| {
                        j.thread == thread
                            && j.started_at <= first.issued_at
                            && j.kind != super::jobs::JobKind::McpJob
                            && j.notified_at.is_none_or(|t| t >= first.issued_at)
                    })
                    .map(|(i, _)| i)
            });
        let job = job_idx.map(|i| &jobs[i]);
        let mut polls = Vec::new();
        let mut prev: Option<String> = None;
        for c in &group {
            let norm = c.result.as_ref().map(|r| normalize_result(&r.text));
            let redundant = norm.is_some() && prev.is_some() && norm == prev;
            let after_notified = job.is_some_and(|j| {
                j.state != JobState::Running
                    && j.notified_seq.is_some_and(|s| s <= c.issued_by)
                    && j.notified_at.is_some()
            });
            let while_pending = job.is_some_and(|j| {
                j.kind != super::jobs::JobKind::McpJob
                    && c.result.as_ref().is_some_and(|r| {
                        notes
                            .iter()
                            .any(|n| n.carried_by == r.carried_by && (n.task_id == j.reference))
                    })
            });
            polls.push(Poll {
                call: c.id.clone(),
                at: c.issued_at,
                redundant,
                after_notified,
                while_pending,
                triggered: c.result.as_ref().map(|r| r.carried_by),
            });
            if norm.is_some() {
                prev = norm;
            }
        }
        if let Some(i) = job_idx {
            jobs[i].polls += polls.len();
        }
        episodes.push(Episode {
            thread,
            thread_label: labels.get(thread).cloned().unwrap_or_default(),
            kind,
            tool: first.name.clone(),
            target,
            job: job_idx.map(|i| jobs[i].reference.clone()),
            polls,
        });
    }
    episodes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_targets_and_normalization() {
        assert_eq!(
            shell_targets("sleep 2; tail -n 1 build.log"),
            Some(vec!["build.log".to_string()])
        );
        assert_eq!(
            shell_targets("tail -n 1 build.log"),
            Some(vec!["build.log".to_string()])
        );
        assert_eq!(
            shell_targets("sleep 1; echo checking"),
            Some(vec!["echo checking".to_string()])
        );
        assert_eq!(shell_targets("make build"), None);
        assert_eq!(shell_targets("cat a > b"), None);
        assert_eq!(
            normalize_result(" at 2026-11-29T12:00:01Z  running "),
            "at <ts> running"
        );
    }
}
