//! Poll detection: tool calls that repeat a status query, grouped into episodes per
//! thread and query, with redundant polls, polls after the job's completion was notified,
//! polls while a notification was pending, intervals, and the cost of the model calls the
//! polls triggered.
//!
//! The rule (docs/analyze.md, "What counts as a poll"): a poll repeats a status query —
//! - `same_call`: the same tool with the same input after normalization (an MCP
//!   `get_status(job)`; inputs compared by their comparison key without `description`,
//!   [`comparison_key`]);
//! - `shell_inspect`: the same inspect-only Bash (or Codex `exec_command`) command after
//!   normalization (`tail`, `cat`, `ls`, `grep`, `echo`, `ps`, ...; `sleep N` waits and
//!   whitespace dropped), so `grep -n foo a.rs` and `grep -n bar a.rs` are two queries —
//!   work, not polling;
//! - `task_output`: a documented status/read-output tool on the same job: `BashOutput` /
//!   `TaskOutput` / `AgentOutput` of a task id, or a read (Read tool, or `cat`/`tail`/...
//!   in Bash) of a background task's output file; Codex's empty `write_stdin` on a
//!   session and `wait` on a cell ([`codex::poll_of`]).
//!
//! Any other shell command or code-mode script is a `same_call` poll by repetition alone
//! ([`repeats`]): asked at least three times with the same normalized input, its answer
//! mostly unchanged. The inspect-command list adds confidence (two calls suffice), it does
//! not decide.
//!
//! Tools that change state (Write, Edit, Agent, ..., MCP tools named `start_…`,
//! `create_…`, `cancel_…`, ...) are never polls, however often they repeat.
//!
//! A group of calls with one query is an episode when it has two or more calls, or its
//! kind is `task_output`. Every call of an episode is a poll; a poll is *redundant* when
//! its result equals the previous poll's result after the api layer's normalization of
//! tool results ([`Normalizer::result`]: ids, dates, clock times, durations, counters,
//! attempt numbers, percentages, spinner frames, whitespace); the rules that made them
//! equal are kept with the poll.

use std::collections::{BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use super::events::{Notification, ToolCall};
use super::jobs::{input_mentions, Job, JobKind, JobState};
use super::{codex, repeats};
use crate::api::normalize::{comparison_key, Hits, Normalizer};

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
    /// Result equal to the previous poll's after normalization.
    pub redundant: bool,
    /// For a redundant poll, what made the two results equal: `identical` (byte for
    /// byte), or the names of the normalization rules that fired (`duration`, `counter`,
    /// `whitespace`, ...).
    pub equal_by: Vec<String>,
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

/// Whether `now` equals `prev` after normalization, and what made them equal
/// (`identical`, or the rules that fired on either side; `whitespace` when only layout
/// differed). `None` when they differ.
pub fn equal_results(norm: &Normalizer, prev: &str, now: &str) -> Option<Vec<String>> {
    if prev == now {
        return Some(vec!["identical".into()]);
    }
    let mut hits = Hits::new();
    let (a, b) = (norm.result(prev, &mut hits), norm.result(now, &mut hits));
    if a != b {
        return None;
    }
    let rules: Vec<String> = hits.into_keys().collect();
    Some(if rules.is_empty() {
        vec!["whitespace".into()]
    } else {
        rules
    })
}

/// [`equal_results`] for two outputs of Codex's shell tools, whose code-mode JSON parts
/// also carry a chunk id and a wall time ([`codex::comparable`]: `chunk-id`,
/// `wall-time` join the rules that made them equal).
pub fn equal_codex_outputs(norm: &Normalizer, prev: &str, now: &str) -> Option<Vec<String>> {
    if prev == now {
        return equal_results(norm, prev, now);
    }
    let ((a, masked_a), (b, masked_b)) = (codex::comparable(prev), codex::comparable(now));
    let mut rules = equal_results(norm, &a, &b)?;
    rules.retain(|r| r != "identical");
    rules.extend(masked_a.into_iter().chain(masked_b).map(str::to_string));
    rules.sort();
    rules.dedup();
    Some(rules)
}

/// An inspect-only shell command as a query: `sleep N` waits dropped, whitespace runs
/// collapsed, parts joined by `; `. `None` when some part does more than inspect.
pub fn shell_query(command: &str) -> Option<String> {
    shell_targets(command)?;
    let mut parts = Vec::new();
    for seg in command.split(['\n', ';', '&']) {
        let words: Vec<&str> = seg.split_whitespace().collect();
        let Some(&cmd) = words.first() else { continue };
        if cmd != "sleep" {
            parts.push(words.join(" "));
        }
    }
    Some(parts.join("; "))
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

/// What a call polls: its kind, the query it repeats (the grouping key) and the target
/// shown in reports (a task, the files a command reads, or `tool(input)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PollTarget {
    /// Kind of poll.
    pub kind: PollKind,
    /// The status query: calls with equal keys in one thread are polls of each other.
    pub key: String,
    /// What is polled, for reports.
    pub target: String,
}

/// The poll target of a call, or `None` when it cannot be a poll.
pub fn target_of(c: &ToolCall, task_files: &HashMap<String, String>) -> Option<PollTarget> {
    let task = |id: &str| PollTarget {
        kind: PollKind::TaskOutput,
        key: format!("task:{id}"),
        target: format!("task:{id}"),
    };
    if let Some(pid) = super::gemini::poll_of(c) {
        let (key, target) = match pid {
            Some(pid) => {
                let r = super::gemini::reference(&pid);
                (format!("task:{r}"), r)
            }
            None => (
                format!("task:{}", super::gemini::LIST),
                "background processes".to_string(),
            ),
        };
        return Some(PollTarget {
            kind: PollKind::TaskOutput,
            key,
            target,
        });
    }
    if let Some(h) = codex::poll_of(c) {
        let reference = h.reference();
        return Some(PollTarget {
            kind: PollKind::TaskOutput,
            key: format!("task:{reference}"),
            target: reference,
        });
    }
    if c.input.get("run_in_background").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    for k in ["bash_id", "task_id", "shell_id", "agentId"] {
        if let Some(id) = c.input.get(k).and_then(Value::as_str) {
            if matches!(c.name.as_str(), "BashOutput" | "TaskOutput" | "AgentOutput") {
                return Some(task(id));
            }
        }
    }
    let file_task = |path: &str| task_files.get(path).map(|id| task(id));
    let shell = match c.name.as_str() {
        "Bash" => Some(c.input.get("command").and_then(Value::as_str)),
        _ => codex::exec_command(c).map(Some),
    };
    if let Some(cmd) = shell {
        let cmd = cmd?;
        let targets = shell_targets(cmd)?;
        if let Some(t) = targets.iter().find_map(|t| file_task(t)) {
            return Some(t);
        }
        let query = shell_query(cmd)?;
        return Some(PollTarget {
            kind: PollKind::ShellInspect,
            key: format!("{}({query})", c.name),
            target: targets.join(" "),
        });
    }
    if let Some(p) = c.input.get("file_path").and_then(Value::as_str) {
        if let Some(t) = file_task(p) {
            return Some(t);
        }
    }
    if changes_state(&c.name) {
        return None;
    }
    let query = format!("{}({})", c.name, comparison_key(&c.input, &["description"]));
    Some(PollTarget {
        kind: PollKind::SameCall,
        key: query.clone(),
        target: query,
    })
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
    let norm = Normalizer::defaults();
    let groups = group_by_query(calls, jobs, &norm);
    let mut episodes = Vec::new();
    for g in groups {
        let few = if g.by_repetition {
            g.calls.len() < repeats::MIN_CALLS
        } else {
            g.calls.len() < 2 && g.target.kind != PollKind::TaskOutput
        };
        if few {
            continue;
        }
        let first = g.calls[0];
        let job_idx = watched_job(jobs, g.thread, &g.target.key, first);
        let polls = polls_of(&g.calls, job_idx.map(|i| &jobs[i]), notes, &norm);
        let redundant = polls.iter().filter(|p| p.redundant).count();
        if g.by_repetition && !repeats::is_poll_run(polls.len(), redundant) {
            continue;
        }
        if let Some(i) = job_idx {
            jobs[i].polls += polls.len();
        }
        episodes.push(Episode {
            thread: g.thread,
            thread_label: labels.get(g.thread).cloned().unwrap_or_default(),
            kind: g.target.kind,
            tool: first.name.clone(),
            target: g.target.target,
            job: job_idx.map(|i| jobs[i].reference.clone()),
            polls,
        });
    }
    episodes
}

/// The calls of one thread that ask one query.
struct Group<'c> {
    thread: usize,
    target: PollTarget,
    /// Found by repetition alone ([`repeats`]): an episode only if its answers repeat.
    by_repetition: bool,
    calls: Vec<&'c ToolCall>,
}

/// The calls that can be polls, grouped by thread and query in order of first call
/// (a job's start call is never a poll of it): by [`target_of`], else by the query
/// [`repeats::repeat_target`] reads (a `same_call` target).
fn group_by_query<'c>(calls: &'c [ToolCall], jobs: &[Job], norm: &Normalizer) -> Vec<Group<'c>> {
    let task_files: HashMap<String, String> = jobs
        .iter()
        .filter_map(|j| {
            j.artifact
                .as_ref()
                .map(|a| (a.clone(), j.reference.clone()))
        })
        .collect();
    let job_starts: BTreeSet<(usize, &str)> = jobs
        .iter()
        .map(|j| (j.thread, j.start_call.as_str()))
        .collect();
    let mut groups: Vec<Group> = Vec::new();
    let mut index: HashMap<(usize, bool, String), usize> = HashMap::new();
    for c in calls {
        if job_starts.contains(&(c.thread, c.id.as_str())) {
            continue;
        }
        let (t, by_repetition) = match target_of(c, &task_files) {
            Some(t) => (t, false),
            None => match repeats::repeat_target(c, norm) {
                Some((key, target)) => (
                    PollTarget {
                        kind: PollKind::SameCall,
                        key,
                        target,
                    },
                    true,
                ),
                None => continue,
            },
        };
        let key = (c.thread, by_repetition, t.key.clone());
        match index.get(&key) {
            Some(&i) => groups[i].calls.push(c),
            None => {
                index.insert(key, groups.len());
                groups.push(Group {
                    thread: c.thread,
                    target: t,
                    by_repetition,
                    calls: vec![c],
                });
            }
        }
    }
    groups
}

/// The job an episode of query `key` in `thread` watches: named in the target or the
/// first poll's input, else the latest background job of the thread started before the
/// first poll and not notified before it.
fn watched_job(jobs: &[Job], thread: usize, key: &str, first: &ToolCall) -> Option<usize> {
    jobs.iter()
        .position(|j| {
            j.thread == thread
                && (key == format!("task:{}", j.reference)
                    || input_mentions(&first.input, &j.reference))
        })
        .or_else(|| {
            jobs.iter()
                .enumerate()
                .rev()
                .find(|(_, j)| {
                    j.thread == thread
                        && j.started_at <= first.issued_at
                        && j.kind != JobKind::McpJob
                        && j.notified_at.is_none_or(|t| t >= first.issued_at)
                })
                .map(|(i, _)| i)
        })
}

/// The polls of one episode, in order: each compared with the last result seen before
/// it, and placed against the watched `job`'s notification.
fn polls_of(
    group: &[&ToolCall],
    job: Option<&Job>,
    notes: &[Notification],
    norm: &Normalizer,
) -> Vec<Poll> {
    let mut polls = Vec::new();
    let mut prev: Option<&str> = None;
    for c in group {
        let now = c.result.as_ref().map(|r| r.text.as_str());
        let equal_by = match (prev, now) {
            (Some(p), Some(n)) if codex::is_codex_tool(c) => equal_codex_outputs(norm, p, n),
            (Some(p), Some(n)) => equal_results(norm, p, n),
            _ => None,
        };
        let after_notified = job.is_some_and(|j| {
            j.state != JobState::Running
                && j.notified_seq.is_some_and(|s| s <= c.issued_by)
                && j.notified_at.is_some()
        });
        let while_pending = job.is_some_and(|j| {
            j.kind != JobKind::McpJob
                && c.result.as_ref().is_some_and(|r| {
                    notes
                        .iter()
                        .any(|n| n.carried_by == r.carried_by && (n.task_id == j.reference))
                })
        });
        polls.push(Poll {
            call: c.id.clone(),
            at: c.issued_at,
            redundant: equal_by.is_some(),
            equal_by: equal_by.unwrap_or_default(),
            after_notified,
            while_pending,
            triggered: c.result.as_ref().map(|r| r.carried_by),
        });
        if now.is_some() {
            prev = now;
        }
    }
    polls
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
        // A count after the file is an option's value, not the target.
        assert_eq!(
            shell_targets("tail build.log -n 20"),
            Some(vec!["build.log".to_string()])
        );
        assert_eq!(shell_targets("make build"), None);
        assert_eq!(shell_targets("cat a > b"), None);
        assert_eq!(
            shell_query("sleep 2;  tail -n 1   build.log"),
            Some("tail -n 1 build.log".to_string())
        );
        let n = Normalizer::defaults();
        assert_eq!(
            equal_results(
                &n,
                " at 2026-11-29T12:00:01Z  running ",
                "at 2026-11-29T12:00:09Z running"
            ),
            Some(vec!["timestamp".to_string()])
        );
        assert_eq!(
            equal_results(&n, "a", "a"),
            Some(vec!["identical".to_string()])
        );
        assert_eq!(
            equal_results(&n, "a  b", "a b"),
            Some(vec!["whitespace".to_string()])
        );
        assert_eq!(equal_results(&n, "running", "finished"), None);
    }

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    /// A call issued by request `seq` at `seq * 10` s whose result (if any) the next
    /// request carries.
    fn call(id: &str, name: &str, input: Value, seq: usize, result: Option<&str>) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            input,
            session: 0,
            thread: 0,
            issued_by: seq,
            issued_at: at(seq as i64 * 10),
            result: result.map(|t| super::super::events::ToolResult {
                text: t.into(),
                hash: 0,
                is_error: false,
                carried_by: seq + 1,
                at: at(seq as i64 * 10 + 10),
            }),
        }
    }

    fn status(id: &str, seq: usize, result: Option<&str>) -> ToolCall {
        call(
            id,
            "mcp__jobs__get_status",
            serde_json::json!({"job_id": "j1"}),
            seq,
            result,
        )
    }

    fn redundant(e: &Episode) -> Vec<bool> {
        e.polls.iter().map(|p| p.redundant).collect()
    }

    /// A poll whose result never came back (interrupted, or the trace ends) repeats
    /// nothing: it is a poll, not a redundant one, and the next poll is compared with the
    /// last result that was seen.
    #[test]
    fn a_poll_with_no_result_is_never_redundant() {
        let labels = vec!["main".to_string()];
        let calls = [status("p1", 1, None), status("p2", 2, None)];
        let e = find_episodes(&calls, &[], &mut [], &labels);
        assert_eq!(e.len(), 1);
        assert_eq!(e[0].count(), 2);
        assert_eq!(redundant(&e[0]), [false, false]);
        assert_eq!(e[0].redundant(), 0);

        let calls = [
            status("p1", 1, Some("running")),
            status("p2", 2, None),
            status("p3", 3, Some("running")),
            status("p4", 4, Some("done")),
        ];
        let e = find_episodes(&calls, &[], &mut [], &labels);
        assert_eq!(redundant(&e[0]), [false, false, true, false]);
        assert_eq!(e[0].redundant(), 1, "p3 repeated p1's result");
        assert_eq!(e[0].polls[2].equal_by, ["identical"]);
        assert!(e[0].polls[1].equal_by.is_empty());
        assert_eq!(e[0].polls[1].triggered, None);
        assert_eq!(e[0].polls[2].triggered, Some(4));
        // 4 polls 10 s apart: 30 s / 3 intervals.
        assert_eq!(e[0].mean_interval_s(), Some(10.0));
        assert_eq!(
            (e[0].kind, e[0].tool.as_str(), e[0].thread_label.as_str()),
            (PollKind::SameCall, "mcp__jobs__get_status", "main")
        );
    }

    fn job(reference: &str, kind: super::super::jobs::JobKind, start: &str, started: i64) -> Job {
        let start = call(start, "Bash", Value::Null, 0, None);
        Job {
            command: String::new(),
            ..Job::running(reference.into(), kind, &start, "main".into(), at(started))
        }
    }

    /// A background Bash task `t1` (output file `/tmp/t1.output`) notified completed with
    /// request 3: a `tail` of its output file and a `BashOutput` of its id are one
    /// task_output episode of the job; the poll whose result came with the notification is
    /// `while_pending`, the one issued after request 3 is `after_notified`. The job counts
    /// the 3 polls; the start call is no poll.
    #[test]
    fn task_output_polls_are_matched_to_their_job_and_to_its_notification() {
        use super::super::jobs::JobKind;
        let labels = vec!["main".to_string()];
        let mut j = job("t1", JobKind::BashBackground, "b0", 5);
        j.artifact = Some("/tmp/t1.output".into());
        j.state = JobState::Completed;
        j.notified_at = Some(at(30));
        j.notified_seq = Some(3);
        let mut jobs = vec![j];
        let bash = |id: &str, cmd: &str, seq: usize, r: Option<&str>| {
            call(id, "Bash", serde_json::json!({"command": cmd}), seq, r)
        };
        let calls = [
            bash("b0", "make", 0, Some("started")),
            bash(
                "k1",
                "sleep 5; tail -n 1 /tmp/t1.output",
                1,
                Some("building"),
            ),
            call(
                "k2",
                "BashOutput",
                serde_json::json!({"bash_id": "t1"}),
                2,
                Some("building"),
            ),
            bash("k3", "cat /tmp/t1.output", 3, Some("done")),
        ];
        let notes = [Notification {
            task_id: "t1".into(),
            tool_use_id: Some("b0".into()),
            status: "completed".into(),
            exit_code: Some(0),
            output_file: Some("/tmp/t1.output".into()),
            summary: None,
            thread: 0,
            carried_by: 3,
            at: at(30),
        }];
        jobs[0].start_call = "b0".into();
        let e = find_episodes(&calls, &notes, &mut jobs, &labels);
        assert_eq!(e.len(), 1, "{e:#?}");
        let e = &e[0];
        assert_eq!(
            (e.kind, e.target.as_str(), e.job.as_deref()),
            (PollKind::TaskOutput, "task:t1", Some("t1"))
        );
        let ids: Vec<&str> = e.polls.iter().map(|p| p.call.as_str()).collect();
        assert_eq!(ids, ["k1", "k2", "k3"]);
        assert_eq!(redundant(e), [false, true, false]);
        let pending: Vec<bool> = e.polls.iter().map(|p| p.while_pending).collect();
        assert_eq!(
            pending,
            [false, true, false],
            "k2's result came with request 3"
        );
        let after: Vec<bool> = e.polls.iter().map(|p| p.after_notified).collect();
        assert_eq!(after, [false, false, true], "k3 was issued by request 3");
        assert_eq!((e.while_pending(), e.after_notified()), (1, 1));
        assert_eq!(e.redundant(), 1, "k2 repeated k1's `building`");
        assert_eq!(jobs[0].polls, 3);
    }

    /// One status read of a task is already a (task_output) poll; one repeat of a command
    /// is not; state-changing tools and background starts never are.
    #[test]
    fn what_counts_as_a_poll_target() {
        let files = HashMap::from([("/tmp/t9.output".to_string(), "t9".to_string())]);
        let t = |name: &str, input: Value| {
            target_of(&call("c", name, input, 0, None), &files).map(|t| (t.kind, t.key, t.target))
        };
        let task = |id: &str| {
            Some((
                PollKind::TaskOutput,
                format!("task:{id}"),
                format!("task:{id}"),
            ))
        };
        assert_eq!(
            t("TaskOutput", serde_json::json!({"task_id": "a"})),
            task("a")
        );
        assert_eq!(
            t("AgentOutput", serde_json::json!({"agentId": "b"})),
            task("b")
        );
        assert_eq!(
            t("BashOutput", serde_json::json!({"shell_id": "c"})),
            task("c")
        );
        assert_eq!(
            t("Read", serde_json::json!({"file_path": "/tmp/t9.output"})),
            task("t9")
        );
        assert_eq!(
            t(
                "Bash",
                serde_json::json!({"command": "tail /tmp/t9.output"})
            ),
            task("t9")
        );
        assert_eq!(
            t("Bash", serde_json::json!({"command": "sleep 1;  ls   src"})),
            Some((PollKind::ShellInspect, "Bash(ls src)".into(), "src".into()))
        );
        assert_eq!(
            t(
                "mcp__s__get_status",
                serde_json::json!({"id": 1, "description": "x"})
            ),
            Some((
                PollKind::SameCall,
                r#"mcp__s__get_status({"id":1})"#.into(),
                r#"mcp__s__get_status({"id":1})"#.into()
            ))
        );
        assert_eq!(t("Bash", serde_json::json!({"command": "make"})), None);
        assert_eq!(
            t(
                "Bash",
                serde_json::json!({"command": "tail x", "run_in_background": true})
            ),
            None
        );
        assert_eq!(t("Edit", serde_json::json!({"file_path": "a"})), None);
        assert_eq!(t("mcp__jobs__start_job", serde_json::json!({})), None);
        assert_eq!(t("mcp__jobs__Cancel-job", serde_json::json!({})), None);
        assert!(!changes_state("mcp__jobs__get_status"));
        assert!(!changes_state("mcp__jobs__status_of_run"));
        assert!(changes_state("TodoWrite"));
        // a BashOutput without an id field is a same_call poll of its input
        assert_eq!(
            t("BashOutput", serde_json::json!({"x": 1})).map(|t| t.0),
            Some(PollKind::SameCall)
        );

        // A single repeat of a shell query in two threads is no poll; two in one thread is.
        let labels = vec!["main".to_string(), "sub-1".to_string()];
        let mut a = call(
            "a",
            "Bash",
            serde_json::json!({"command": "ls"}),
            1,
            Some("x"),
        );
        let b = call(
            "b",
            "Bash",
            serde_json::json!({"command": "ls"}),
            2,
            Some("x"),
        );
        a.thread = 1;
        assert!(find_episodes(&[a.clone(), b.clone()], &[], &mut [], &labels).is_empty());
        let mut c = b.clone();
        c.id = "c".into();
        c.thread = 1;
        let e = find_episodes(&[a, b, c], &[], &mut [], &labels);
        assert_eq!(e.len(), 1);
        assert_eq!(
            (e[0].thread, e[0].thread_label.as_str(), e[0].count()),
            (1, "sub-1", 2)
        );
    }

    /// The counts of an episode where no poll was issued after or while a notification,
    /// and the interval of a single poll: none (not a division by zero).
    #[test]
    fn one_poll_has_no_interval_and_an_unnotified_episode_counts_no_late_polls() {
        let labels = vec!["main".to_string()];
        let e = find_episodes(
            &[
                status("p1", 1, Some("running")),
                status("p2", 2, Some("done")),
            ],
            &[],
            &mut [],
            &labels,
        );
        assert_eq!(e[0].count(), 2);
        assert_eq!(
            (
                e[0].after_notified(),
                e[0].while_pending(),
                e[0].redundant()
            ),
            (0, 0, 0)
        );
        let mut one = e[0].clone();
        one.polls.truncate(1);
        assert_eq!(one.mean_interval_s(), None);
    }

    /// The poll kinds are named in reports as the JSON Schema's `episodes[].kind` enum
    /// (`schemas/analyze.schema.json`) lists them.
    #[test]
    fn poll_kind_names_are_the_schema_terms() {
        let schema: Value = serde_json::from_str(include_str!("../../schemas/analyze.schema.json"))
            .expect("schema parses");
        let enums = schema.to_string();
        let names = [
            PollKind::SameCall,
            PollKind::TaskOutput,
            PollKind::ShellInspect,
        ]
        .map(PollKind::name);
        assert_eq!(names, ["same_call", "task_output", "shell_inspect"]);
        assert!(
            enums.contains(r#"["same_call","task_output","shell_inspect"]"#),
            "the schema's kind enum"
        );
        for k in [
            PollKind::SameCall,
            PollKind::TaskOutput,
            PollKind::ShellInspect,
        ] {
            assert_eq!(
                serde_json::to_value(k).unwrap(),
                k.name(),
                "JSON and tables agree"
            );
        }
    }

    /// An episode belongs to the job its input names, in its own thread: polls of
    /// `get_status(j1)` in thread 0 count for thread 0's `j1`, not for thread 1's `j1`
    /// nor for `j2`.
    #[test]
    fn polls_count_for_the_job_their_input_names_in_their_thread() {
        use super::super::jobs::JobKind;
        let labels = vec!["main".to_string(), "sub-1".to_string()];
        let mut jobs = vec![
            job("j2", JobKind::McpJob, "s2", 0),
            job("j1", JobKind::McpJob, "s1b", 0),
            job("j1", JobKind::McpJob, "s1", 0),
        ];
        jobs[1].thread = 1;
        let calls = [
            status("p1", 1, Some("running")),
            status("p2", 2, Some("done")),
        ];
        let e = find_episodes(&calls, &[], &mut jobs, &labels);
        assert_eq!(e[0].job.as_deref(), Some("j1"));
        let polls: Vec<(usize, usize)> = jobs.iter().map(|j| (j.thread, j.polls)).collect();
        assert_eq!(polls, [(0, 0), (1, 0), (0, 2)]);
    }

    /// A shell poll that names no job belongs to the latest background job of its thread
    /// that was started before the first poll, is no MCP job, and was not yet notified:
    /// of bg1 (thread 0, started at 5 s, running), other-thread (thread 1), late (started
    /// after the poll), mcp (an MCP job) and done (notified at 9 s, before the first poll
    /// at 10 s), only bg1 qualifies.
    #[test]
    fn an_unnamed_shell_poll_belongs_to_the_latest_running_background_job_of_its_thread() {
        use super::super::jobs::JobKind;
        let labels = vec!["main".to_string(), "sub-1".to_string()];
        let mut jobs = vec![
            job("bg1", JobKind::BashBackground, "b1", 5),
            job("other-thread", JobKind::BashBackground, "b2", 6),
            job("late", JobKind::BashBackground, "b3", 100),
            job("mcp", JobKind::McpJob, "b4", 7),
            job("done", JobKind::BashBackground, "b5", 8),
        ];
        jobs[1].thread = 1;
        jobs[4].notified_at = Some(at(9));
        let tail = |id: &str, seq: usize| {
            call(
                id,
                "Bash",
                serde_json::json!({"command": "tail build.log"}),
                seq,
                Some("building"),
            )
        };
        let e = find_episodes(&[tail("k1", 1), tail("k2", 2)], &[], &mut jobs, &labels);
        assert_eq!(e.len(), 1);
        assert_eq!(
            (e[0].kind, e[0].job.as_deref()),
            (PollKind::ShellInspect, Some("bg1"))
        );
        let polls: Vec<usize> = jobs.iter().map(|j| j.polls).collect();
        assert_eq!(polls, [2, 0, 0, 0, 0]);
    }
}
