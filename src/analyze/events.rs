//! What the conversation says happened: tool calls (`tool_use`), their results
//! (`tool_result`, as a later request carries them), Claude Code's
//! `<task-notification>` events, with the parser for the latter, and the lifecycle events
//! a job's tool results report ([`JobEvent`]).

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

/// A tool call (a `tool_use` block) and, once seen, its result.
#[derive(Clone, Debug)]
pub struct ToolCall {
    /// `tool_use` id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Tool input.
    pub input: Value,
    /// Session number.
    pub session: usize,
    /// Global thread number.
    pub thread: usize,
    /// `seq` of the request whose response issued the call.
    pub issued_by: usize,
    /// When the call was issued (end of that response, else its start).
    pub issued_at: DateTime<Utc>,
    /// The result, when a later request carried it.
    pub result: Option<ToolResult>,
}

/// Longest tool-result text kept, in bytes (longer ones keep a prefix plus a hash).
pub const RESULT_TEXT_CAP: usize = 4096;

/// A tool result as a later request carried it.
#[derive(Clone, Debug)]
pub struct ToolResult {
    /// The result text (capped at [`RESULT_TEXT_CAP`] bytes).
    pub text: String,
    /// Hash of the whole text.
    pub hash: u64,
    /// `is_error`.
    pub is_error: bool,
    /// `seq` of the request that carried it (the model call the result triggered).
    pub carried_by: usize,
    /// When that request started.
    pub at: DateTime<Utc>,
}

/// A `<task-notification>` the harness put into the conversation.
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    /// `<task-id>`.
    pub task_id: String,
    /// `<tool-use-id>`.
    pub tool_use_id: Option<String>,
    /// `<status>`: completed, failed, stopped (other values kept).
    pub status: String,
    /// Exit code from `<exit-code>` or the summary's "exit code N".
    pub exit_code: Option<i64>,
    /// `<output-file>`.
    pub output_file: Option<String>,
    /// `<summary>`.
    pub summary: Option<String>,
    /// Global thread number.
    pub thread: usize,
    /// `seq` of the request that carried it.
    pub carried_by: usize,
    /// When that request started.
    pub at: DateTime<Utc>,
}

/// What a tool result said about a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JobEventKind {
    /// The start call's result: the job runs (`Process running with session ID N`).
    Started,
    /// A later result: still running.
    Running,
    /// The process exited (`Process exited with code C`).
    Exited,
    /// The script cell completed (`Script completed`).
    Completed,
    /// The script cell failed (`Script failed`).
    Failed,
    /// The tool no longer knows the job (`Unknown process id N`, `exec cell N not
    /// found`): it had ended before this call.
    NotFound,
}

/// One event of a job's lifecycle: what one tool result said about it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JobEvent {
    /// What it said.
    pub event: JobEventKind,
    /// `tool_use` id of the call whose result said it.
    pub call: String,
    /// When that result reached the model (the start of the request that carried it).
    pub at: DateTime<Utc>,
    /// The exit code, when the result gives one.
    pub exit_code: Option<i64>,
    /// The line of the result that says it (`Process exited with code 0`).
    pub detail: String,
}

/// `s` cut to at most [`RESULT_TEXT_CAP`] bytes at a character boundary.
pub fn cap(s: &str) -> String {
    if s.len() <= RESULT_TEXT_CAP {
        return s.to_string();
    }
    let mut end = RESULT_TEXT_CAP;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

fn tag<'a>(s: &'a str, name: &str) -> Option<&'a str> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let a = s.find(&open)? + open.len();
    let b = s[a..].find(&close)? + a;
    Some(s[a..b].trim())
}

/// Parse every `<task-notification>…</task-notification>` in a text (Claude Code's
/// background-task event: `<task-id>`, `<tool-use-id>`, `<output-file>`, `<status>`,
/// `<summary>`, optionally `<exit-code>`). Thread and carrier fields are left zero.
pub fn parse_notifications(text: &str) -> Vec<Notification> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(a) = rest.find("<task-notification>") {
        let after = &rest[a..];
        let end = after
            .find("</task-notification>")
            .map_or(after.len(), |e| e + 20);
        let n = &after[..end];
        let summary = tag(n, "summary").map(str::to_string);
        let exit_code = tag(n, "exit-code")
            .and_then(|v| v.parse().ok())
            .or_else(|| summary.as_deref().and_then(exit_code_in));
        out.push(Notification {
            task_id: tag(n, "task-id").unwrap_or("").to_string(),
            tool_use_id: tag(n, "tool-use-id").map(str::to_string),
            status: tag(n, "status").unwrap_or("").to_ascii_lowercase(),
            exit_code,
            output_file: tag(n, "output-file").map(str::to_string),
            summary,
            thread: 0,
            carried_by: 0,
            at: DateTime::<Utc>::UNIX_EPOCH,
        });
        rest = &after[end..];
    }
    out
}

/// "exit code 3" / "exit code: 3" / "exited with code 3" → 3.
fn exit_code_in(s: &str) -> Option<i64> {
    let l = s.to_ascii_lowercase();
    let i = l
        .find("exit code")
        .map(|i| i + 9)
        .or_else(|| l.find("with code").map(|i| i + 9))?;
    let digits: String = l[i..]
        .trim_start_matches([':', ' '])
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notification_fields_and_exit_code_from_summary() {
        let t = "x <task-notification>\n<task-id>b1</task-id>\n<tool-use-id>toolu_1</tool-use-id>\n<output-file>/tmp/t/b1.output</output-file>\n<status>failed</status>\n<summary>Background command \"t\" failed with exit code 3</summary>\n</task-notification> y";
        let n = parse_notifications(t);
        assert_eq!(n.len(), 1);
        assert_eq!(n[0].task_id, "b1");
        assert_eq!(n[0].status, "failed");
        assert_eq!(n[0].exit_code, Some(3));
        assert_eq!(n[0].output_file.as_deref(), Some("/tmp/t/b1.output"));
        assert_eq!(n[0].tool_use_id.as_deref(), Some("toolu_1"));
    }
}
