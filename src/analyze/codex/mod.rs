//! Codex's shell tools read as jobs and polls (measured on Codex 0.165.0 and 0.171.0;
//! `docs/analyze.md`, "Codex"):
//!
//! - **classic mode**: `exec_command {cmd}` whose output says `Process running with
//!   session ID N` starts process N; `write_stdin {session_id: N, chars: ""}` polls it
//!   (`yield_time_ms` is only how long Codex waits); `Process exited with code C` ends it;
//!   `write_stdin failed: Unknown process id N` answers a poll after the end;
//! - **code mode**: the model writes JavaScript for the custom tool `exec`. An `exec`
//!   whose output says `Script running with cell ID N` starts cell N, polled with
//!   `wait {cell_id: N}` until `Script completed` / `Script failed` (`exec cell N not
//!   found` after the end). An `exec` whose script runs `tools.exec_command({…})` and
//!   answers with a JSON part holding `session_id` (no `exit_code`) starts process N,
//!   polled by `exec` scripts that call `tools.write_stdin({session_id: N, chars: ""})`
//!   ([`literal`] reads those calls' arguments from the source).
//!
//! [`report`] reads what an output says; [`lifecycle`] follows one process or cell from
//! its start to its end.

pub mod lifecycle;
pub mod literal;
pub mod report;

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::events::ToolCall;
use literal::{calls_of, member, Lit};

/// Something Codex runs on the model's behalf and names by an id.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Handle {
    /// A process of the unified exec tool (`session ID N`).
    Session(String),
    /// A code-mode script cell (`cell ID N`).
    Cell(String),
}

impl Handle {
    /// The job reference: `session:N` or `cell:N`.
    pub fn reference(&self) -> String {
        match self {
            Handle::Session(n) => format!("session:{n}"),
            Handle::Cell(n) => format!("cell:{n}"),
        }
    }
}

/// `name` without Codex's `functions.` namespace.
fn base(name: &str) -> &str {
    name.strip_prefix("functions.").unwrap_or(name)
}

/// An id member of a JSON input (`27907` or `"27907"`).
fn id_of(input: &Value, key: &str) -> Option<String> {
    match input.get(key)? {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

/// The JavaScript source of a code-mode `exec` call (its input is the source string).
pub fn exec_source(c: &ToolCall) -> Option<&str> {
    match (&c.input, base(&c.name)) {
        (Value::String(s), "exec") => Some(s),
        _ => None,
    }
}

/// The command of a classic `exec_command` call (`cmd`).
pub fn exec_command(c: &ToolCall) -> Option<&str> {
    (base(&c.name) == "exec_command")
        .then(|| c.input.get("cmd").and_then(Value::as_str))
        .flatten()
}

/// The process a `write_stdin` call addresses and whether it sends nothing (`chars`
/// empty or absent): classic calls and the `tools.write_stdin({…})` calls of an `exec`
/// source (one process named by a literal in every call; otherwise `None`).
fn stdin_target(c: &ToolCall) -> Option<(String, bool)> {
    if base(&c.name) == "write_stdin" {
        let id = id_of(&c.input, "session_id")?;
        let empty = c
            .input
            .get("chars")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty();
        return Some((id, empty));
    }
    let calls = calls_of(exec_source(c)?, "write_stdin");
    let mut target: Option<(String, bool)> = None;
    for m in &calls {
        let id = member(m, "session_id").and_then(Lit::as_id)?.to_string();
        let empty = match member(m, "chars") {
            None => true,
            Some(Lit::Str(s)) => s.is_empty(),
            Some(_) => false,
        };
        match &mut target {
            Some((t, e)) if *t == id => *e &= empty,
            Some(_) => return None,
            None => target = Some((id, empty)),
        }
    }
    target
}

/// The process or cell a call asks about, whatever it sends: `write_stdin` (classic or in
/// an `exec` source) on a session, `wait` on a cell.
pub fn refers_to(c: &ToolCall) -> Option<Handle> {
    if base(&c.name) == "wait" {
        return id_of(&c.input, "cell_id").map(Handle::Cell);
    }
    stdin_target(c).map(|(id, _)| Handle::Session(id))
}

/// The process or cell a call polls: an empty `write_stdin` (classic, or every
/// `tools.write_stdin` of an `exec` source) or a `wait` on a cell.
pub fn poll_of(c: &ToolCall) -> Option<Handle> {
    if base(&c.name) == "wait" {
        return id_of(&c.input, "cell_id").map(Handle::Cell);
    }
    match stdin_target(c)? {
        (id, true) => Some(Handle::Session(id)),
        (_, false) => None,
    }
}

/// The process or cell a call started, by what its result says: an `exec_command` whose
/// process is still running, an `exec` whose cell is still running, or an `exec` that
/// ran `tools.exec_command` and answered with a running process (and is no
/// `write_stdin` on it).
pub fn started(c: &ToolCall) -> Option<Handle> {
    let text = c.result.as_ref()?.text.as_str();
    if exec_command(c).is_some() {
        return report::running_session(text).map(Handle::Session);
    }
    let source = exec_source(c)?;
    if let Some(cell) = report::running_cell(text) {
        return Some(Handle::Cell(cell));
    }
    if calls_of(source, "exec_command").is_empty() {
        return None;
    }
    let session = report::running_session(text)?;
    (refers_to(c) != Some(Handle::Session(session.clone()))).then_some(Handle::Session(session))
}

/// The command a job runs: `exec_command`'s `cmd`; for a process started in code mode the
/// `cmd` of the script's `tools.exec_command` when it is a literal; else the script.
pub fn command(c: &ToolCall, h: &Handle) -> String {
    if let Some(cmd) = exec_command(c) {
        return cmd.to_string();
    }
    let source = exec_source(c).unwrap_or_default();
    if let Handle::Session(_) = h {
        let cmd = calls_of(source, "exec_command")
            .iter()
            .find_map(|m| match member(m, "cmd") {
                Some(Lit::Str(s)) => Some(s.clone()),
                _ => None,
            });
        if let Some(cmd) = cmd {
            return cmd;
        }
    }
    source.to_string()
}

/// True for a tool call of Codex's shell tools (`exec_command`, `write_stdin`, `exec`,
/// `wait` on a cell), whose outputs [`comparable`] reads.
pub fn is_codex_tool(c: &ToolCall) -> bool {
    exec_command(c).is_some() || exec_source(c).is_some() || refers_to(c).is_some()
}

static CHUNK_ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#""chunk_id":\s*"[^"]*""#).expect("static regex"));
static WALL_TIME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#""wall_time_seconds":\s*[0-9.eE+-]+"#).expect("static regex"));

/// A Codex tool output with the values that differ between two reads of one state
/// masked: the JSON part's `chunk_id` (`chunk-id`) and `wall_time_seconds`
/// (`wall-time`), with the names of the masks that fired. (The text lines `Chunk ID: …`
/// and `Wall time: … seconds` are the api normalizer's `task-id` and `duration` rules.)
pub fn comparable(text: &str) -> (Cow<'_, str>, Vec<&'static str>) {
    let mut fired = Vec::new();
    let mut out = Cow::Borrowed(text);
    for (re, name, with) in [
        (&*CHUNK_ID, "chunk-id", r#""chunk_id":"<id>""#),
        (&*WALL_TIME, "wall-time", r#""wall_time_seconds":<s>"#),
    ] {
        if re.is_match(&out) {
            out = Cow::Owned(re.replace_all(&out, with).into_owned());
            fired.push(name);
        }
    }
    (out, fired)
}

/// An `exec` source as a query: the `// @exec: {…}` pragma lines (how long Codex waits)
/// dropped and runs of whitespace collapsed.
pub fn source_query(source: &str) -> String {
    source
        .lines()
        .filter(|l| !l.trim_start().starts_with("// @exec:"))
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests;
