//! Polls found by repetition (issue 31): a command asked again and again with the same
//! input, whose answer does not change, is a poll whatever the command. The list of
//! inspect-only commands ([`super::polling::INSPECT_COMMANDS`]) only adds confidence: a
//! listed command is a poll from its second call whatever it answers; any other shell
//! command (`gh api …`, `kubectl get …`, `curl …`) or code-mode script is one when it
//! repeats at least [`MIN_CALLS`] times and at least half of its repeats (and two or
//! more) returned what the call before returned ([`is_poll_run`]). Running `cargo build`
//! twice is still work.
//!
//! Inputs are compared after normalization: a shell command with its `sleep N` parts
//! dropped and runs of whitespace collapsed, a code-mode `exec` script without its
//! `// @exec:` pragma ([`super::codex::source_query`]), then the api normalizer's text
//! rules (ids, timestamps, temporary paths: [`Normalizer::text`]). Only calls the other
//! poll rules do not take reach this one, so it never changes what they find; tools
//! that change state by name (Edit, Write, `mcp__…__start_job`, …) stay out, as does
//! `write_stdin` that sends input.

use serde_json::Value;

use super::codex;
use super::events::ToolCall;
use crate::api::normalize::{Hits, Normalizer};

/// The fewest calls of one query that repetition alone makes a poll episode.
pub const MIN_CALLS: usize = 3;

/// The command a shell tool call runs: Claude Code's `Bash` (`command`) or Codex's
/// `exec_command` (`cmd`, in its working directory `workdir` when given).
pub fn shell_command(c: &ToolCall) -> Option<String> {
    if c.name == "Bash" {
        return c
            .input
            .get("command")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    let cmd = codex::exec_command(c)?;
    Some(match c.input.get("workdir").and_then(Value::as_str) {
        Some(dir) => format!("cd {dir}; {cmd}"),
        None => cmd.to_string(),
    })
}

/// A shell command as a query: `sleep N` parts dropped, whitespace runs collapsed, parts
/// joined by `; `.
pub fn command_query(command: &str) -> String {
    let mut parts = Vec::new();
    for seg in command.split(['\n', ';']) {
        let words: Vec<&str> = seg.split_whitespace().collect();
        match words.first() {
            None | Some(&"sleep") => {}
            Some(_) => parts.push(words.join(" ")),
        }
    }
    parts.join("; ")
}

/// The query a call repeats, as `(key, target)`: its tool and normalized command or
/// script (`Bash(gh api repos/o/r/actions/runs/1)`); `None` for calls this rule does not
/// judge (not a shell command or an `exec` script, a background start, a `write_stdin`).
pub fn repeat_target(c: &ToolCall, norm: &Normalizer) -> Option<(String, String)> {
    if c.input.get("run_in_background").and_then(Value::as_bool) == Some(true)
        || codex::refers_to(c).is_some()
    {
        return None;
    }
    let query = match shell_command(c) {
        Some(cmd) => command_query(&cmd),
        None => codex::source_query(codex::exec_source(c)?),
    };
    if query.is_empty() {
        return None;
    }
    let query = norm.text(&query, &mut Hits::new()).into_owned();
    let key = format!("{}({query})", c.name);
    Some((key.clone(), key))
}

/// True when `polls` calls of one query, `redundant` of which returned what the call
/// before returned, are polls by repetition: at least [`MIN_CALLS`] calls, and at least
/// two and at least half of the repeats unchanged.
pub fn is_poll_run(polls: usize, redundant: usize) -> bool {
    polls >= MIN_CALLS && redundant >= 2 && 2 * redundant >= polls - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, input: Value) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: name.into(),
            input,
            session: 0,
            thread: 0,
            issued_by: 0,
            issued_at: chrono::DateTime::UNIX_EPOCH,
            result: None,
        }
    }

    #[test]
    fn queries_of_shell_commands_and_scripts() {
        let n = Normalizer::defaults();
        let t = |name: &str, input: Value| repeat_target(&call(name, input), &n).map(|t| t.0);
        assert_eq!(
            t(
                "Bash",
                serde_json::json!({"command": "sleep 30;  gh api repos/o/r/actions/runs/1", "description": "x"})
            ),
            Some("Bash(gh api repos/o/r/actions/runs/1)".into())
        );
        assert_eq!(
            t(
                "exec_command",
                serde_json::json!({"cmd": "kubectl get pods", "workdir": "/w", "yield_time_ms": 500})
            ),
            Some("exec_command(cd /w; kubectl get pods)".into())
        );
        // The api normalizer's rules: a timestamp in the command is not a new query.
        assert_eq!(
            t(
                "Bash",
                serde_json::json!({"command": "gh run list --created 2026-11-29T12:00:01Z"})
            ),
            Some("Bash(gh run list --created <timestamp>)".into())
        );
        assert_eq!(
            t("exec", Value::String("// @exec: {\"yield_time_ms\": 1000}\nconst r = await tools.exec_command({cmd: \"gh pr checks\"});\ntext(r);".into())),
            Some(r#"exec(const r = await tools.exec_command({cmd: "gh pr checks"}); text(r);)"#.into())
        );
        // Not judged by this rule.
        assert_eq!(
            t(
                "Bash",
                serde_json::json!({"command": "make", "run_in_background": true})
            ),
            None
        );
        assert_eq!(t("Bash", serde_json::json!({"command": "sleep 5"})), None);
        assert_eq!(
            t(
                "write_stdin",
                serde_json::json!({"session_id": 1, "chars": "y\n"})
            ),
            None
        );
        assert_eq!(t("Edit", serde_json::json!({"file_path": "a"})), None);
    }

    #[test]
    fn repetition_needs_three_calls_and_mostly_unchanged_answers() {
        assert!(!is_poll_run(2, 1), "cargo build twice, same answer: work");
        assert!(is_poll_run(3, 2));
        assert!(!is_poll_run(3, 1));
        assert!(is_poll_run(12, 11));
        assert!(is_poll_run(12, 6), "6 of 11 repeats unchanged");
        assert!(!is_poll_run(12, 5));
        assert!(
            !is_poll_run(10, 2),
            "ten runs, mostly different answers: work"
        );
    }
}
