//! One Codex process or cell followed from the call that started it: every later call of
//! its thread that asks about it (`write_stdin` on the session, `wait` on the cell, in
//! either mode) and what each result said ([`JobEvent`]s), and the first result that
//! said it ended.

use chrono::{DateTime, Utc};

use super::report::{cell_report, session_report, Report};
use super::{refers_to, Handle};
use crate::analyze::events::{JobEvent, JobEventKind, ToolCall};

/// How a process or cell ended, as its results said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Exit code 0, or a completed script whose command did not fail.
    Completed,
    /// A non-zero exit code, or a failed script.
    Failed,
    /// Codex no longer knew it, and no earlier result said how it ended.
    Unknown,
}

/// The first result that said the job ended.
#[derive(Clone, Debug, PartialEq)]
pub struct End {
    /// How.
    pub outcome: Outcome,
    /// The exit code, when a result gave one.
    pub exit_code: Option<i64>,
    /// When the job is known to have ended: when that result reached the model, or, when
    /// the call that got it returned at once ([`already_ended`]), when that call was issued.
    pub at: DateTime<Utc>,
    /// `seq` of the request that carried the result, or of the response that issued the
    /// call that found the job already ended.
    pub seq: usize,
    /// The call found the job already ended: it was a poll after the exit.
    pub already: bool,
}

/// True when an output that reports the end took no time to come (`Wall time: 0.0000
/// seconds`, `Wall time 0.0 seconds`): Codex waits for a running process or cell until it
/// exits or the wait runs out (an empty `write_stdin` at least 5 s, measured on 0.165.0 and
/// 0.171.0), so an answer under [`ALREADY_ENDED_S`] means it had ended before the call.
pub fn already_ended(text: &str) -> bool {
    wall_time_s(text).is_some_and(|s| s < ALREADY_ENDED_S)
}

/// Below this many seconds of wall time, an end was there before the call.
pub const ALREADY_ENDED_S: f64 = 0.1;

/// The `Wall time` an output reports, seconds.
fn wall_time_s(text: &str) -> Option<f64> {
    let at = text.find("Wall time")?;
    let rest = text[at + "Wall time".len()..]
        .trim_start_matches(':')
        .trim_start();
    let n: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    n.parse().ok()
}

/// A job's lifecycle: its events in order and its end, if the trace shows one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lifecycle {
    /// What each result said, from the start call's on.
    pub events: Vec<JobEvent>,
    /// The first end.
    pub end: Option<End>,
}

/// Follow `h`, started by `start`, through the later `calls` of its thread.
pub fn follow(h: &Handle, start: &ToolCall, calls: &[ToolCall]) -> Lifecycle {
    let mut life = Lifecycle::default();
    if let Some(r) = &start.result {
        life.events.push(JobEvent {
            event: JobEventKind::Started,
            call: start.id.clone(),
            at: r.at,
            exit_code: None,
            detail: detail(h, &r.text),
        });
    }
    let later = calls.iter().filter(|c| {
        c.thread == start.thread
            && c.id != start.id
            && c.issued_by >= start.issued_by
            && refers_to(c).as_ref() == Some(h)
    });
    for c in later {
        let Some(r) = &c.result else { continue };
        let report = match h {
            Handle::Session(id) => session_report(&r.text, Some(id)),
            Handle::Cell(id) => cell_report(&r.text, id),
        };
        let Some(report) = report else { continue };
        let (event, exit_code, outcome) = reading(&report);
        if life.end.is_none() && (report.is_end() || report == Report::Gone) {
            let already = report.is_end() && already_ended(&r.text);
            life.end = Some(if already {
                End {
                    outcome,
                    exit_code,
                    at: c.issued_at,
                    seq: c.issued_by,
                    already,
                }
            } else {
                End {
                    outcome,
                    exit_code,
                    at: r.at,
                    seq: r.carried_by,
                    already,
                }
            });
        }
        life.events.push(JobEvent {
            event,
            call: c.id.clone(),
            at: r.at,
            exit_code,
            detail: detail(h, &r.text),
        });
    }
    life
}

/// The event a report is, its exit code, and the outcome it gives when it is an end.
fn reading(r: &Report) -> (JobEventKind, Option<i64>, Outcome) {
    let by_code = |c: Option<i64>| match c {
        Some(c) if c != 0 => Outcome::Failed,
        _ => Outcome::Completed,
    };
    match r {
        Report::Running => (JobEventKind::Running, None, Outcome::Unknown),
        Report::Exited(c) => (JobEventKind::Exited, Some(*c), by_code(Some(*c))),
        Report::Completed(c) => (JobEventKind::Completed, *c, by_code(*c)),
        Report::Failed(_) => (JobEventKind::Failed, None, Outcome::Failed),
        Report::Gone => (JobEventKind::NotFound, None, Outcome::Unknown),
    }
}

/// The phrases that say what an output reports about a process, in the order they are
/// looked for.
const SESSION_MARKERS: &[&str] = &[
    "Process running with session ID",
    "Process exited with code",
    "Unknown process id",
];

/// The same for a cell.
const CELL_MARKERS: &[&str] = &[
    "Script running with cell ID",
    "not found",
    "Script completed",
    "Script failed",
];

/// The line of an output that says what it reports about `h`: the first line with one of
/// its markers (in their order), else a JSON part's `exit_code` / `session_id`, else the
/// first line.
fn detail(h: &Handle, text: &str) -> String {
    let markers = match h {
        Handle::Session(_) => SESSION_MARKERS,
        Handle::Cell(_) => CELL_MARKERS,
    };
    for m in markers {
        if let Some(l) = text.lines().find(|l| l.contains(m)) {
            return l.trim().to_string();
        }
    }
    for v in super::report::json_parts(text) {
        for k in ["exit_code", "session_id"] {
            if let Some(x) = v.get(k) {
                return format!("{k}: {x}");
            }
        }
    }
    text.lines().next().unwrap_or("").trim().to_string()
}
