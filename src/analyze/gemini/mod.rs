//! Gemini CLI's background shell read as jobs and polls (measured on Gemini CLI 0.61.0 with
//! `--yolo`, `../shared/agents.md` §2.3; `docs/analyze.md`, "Gemini CLI"):
//!
//! - `run_shell_command {command, is_background: true}` whose result says `Command moved
//!   to background (PID: N)` starts process N (the job `pid:N`);
//! - `read_background_output {pid: N}` polls it: `Log is empty.` while there is nothing
//!   yet, `Full Log Output:` and the log once there is;
//! - `list_background_processes {}` polls every background process: one line per process,
//!   `[PID N] RUNNING: …`; another status word there ends job N with that state.
//!
//! A poll is redundant when it got the same answer as the previous poll of the same query
//! (the polling analysis compares them, [`super::polling`]).

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::events::ToolCall;
use super::jobs::{state_word, JobState};

/// The shell tool.
pub const SHELL: &str = "run_shell_command";
/// The poll of one process's output.
pub const READ_OUTPUT: &str = "read_background_output";
/// The poll of every background process.
pub const LIST: &str = "list_background_processes";

static MOVED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Command moved to background \(PID: (\d+)\)").expect("static regex")
});
static LISTED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[PID (\d+)\] ([A-Za-z_]+)").expect("static regex"));

/// The process a `run_shell_command {is_background: true}` started, by its result.
pub fn started(c: &ToolCall) -> Option<String> {
    if c.name != SHELL || c.input.get("is_background").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    let text = c.result.as_ref()?.text.as_str();
    MOVED.captures(text).map(|m| m[1].to_string())
}

/// The job reference of process `pid`.
pub fn reference(pid: &str) -> String {
    format!("pid:{pid}")
}

/// The command of a start call.
pub fn command(c: &ToolCall) -> String {
    c.input
        .get("command")
        .and_then(Value::as_str)
        .map_or_else(|| c.input.to_string(), str::to_string)
}

/// What a call polls: `Some(Some(pid))` for `read_background_output {pid}`,
/// `Some(None)` for `list_background_processes` (every process), `None` for other calls.
pub fn poll_of(c: &ToolCall) -> Option<Option<String>> {
    match c.name.as_str() {
        READ_OUTPUT => Some(match c.input.get("pid")? {
            Value::Number(n) => Some(n.to_string()),
            Value::String(s) => Some(s.clone()),
            _ => None,
        }),
        LIST => Some(None),
        _ => None,
    }
}

/// The state a `list_background_processes` result gives process `pid`, when it lists it.
pub fn listed_state(text: &str, pid: &str) -> Option<JobState> {
    LISTED
        .captures_iter(text)
        .find(|m| &m[1] == pid)
        .and_then(|m| state_word(&m[2]).or(Some(JobState::Ended)))
}

/// The first later result that says process `pid` ended (a listing with a status other
/// than running), among `calls` of `thread`: its state and the call.
pub fn end_of<'c>(
    pid: &str,
    thread: usize,
    calls: &'c [ToolCall],
) -> Option<(JobState, &'c ToolCall)> {
    calls
        .iter()
        .filter(|c| c.thread == thread && c.name == LIST)
        .find_map(|c| {
            let s = listed_state(&c.result.as_ref()?.text, pid)?;
            (s != JobState::Running).then_some((s, c))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_name_the_process_and_its_state() {
        let text = "<untrusted_context>\nCommand moved to background (PID: 8183). Output hidden. Press Ctrl+B to view.\n</untrusted_context>";
        assert_eq!(
            MOVED.captures(text).map(|m| m[1].to_string()).as_deref(),
            Some("8183")
        );
        let list = "- [PID 8183] RUNNING: `sleep 5; echo finished`\n- [PID 9] EXITED: `true`";
        assert_eq!(listed_state(list, "8183"), Some(JobState::Running));
        assert_eq!(listed_state(list, "9"), Some(JobState::Ended));
        assert_eq!(listed_state(list, "1"), None);
    }
}
