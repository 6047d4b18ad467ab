//! What Codex's tool outputs say about a running process or script cell, as measured on
//! Codex 0.165.0 and 0.171.0 (`write_stdin`/`exec_command` text, code-mode `exec`/`wait`
//! text parts and their JSON part):
//!
//! | output | means |
//! | --- | --- |
//! | `Process running with session ID N` (or a JSON part with `session_id` and no `exit_code`) | process N still runs |
//! | `Process exited with code C` (or a JSON part with `exit_code`) | it exited with C |
//! | `write_stdin failed: Unknown process id N` | there is no process N (any more) |
//! | `Script running with cell ID N` | cell N still runs |
//! | `Script completed` | the cell finished (its JSON part may carry the command's `exit_code`) |
//! | `Script failed` … `exec cell N not found` | there is no cell N (any more) |
//! | `Script failed` otherwise | the cell's script threw |

use serde_json::Value;

/// What one tool output says about a process or a cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Report {
    /// Still running (`Process running with session ID N`, `Script running with cell ID
    /// N`, a JSON part with `session_id` and no `exit_code`).
    Running,
    /// The process exited with this code.
    Exited(i64),
    /// The cell's script completed; the command it ran exited with this code, when its
    /// JSON part says.
    Completed(Option<i64>),
    /// The cell's script failed (the error line, when there is one).
    Failed(String),
    /// Codex knows no such process or cell: it ended before this call.
    Gone,
}

impl Report {
    /// True for a report that the job ended (exited, completed or failed).
    pub fn is_end(&self) -> bool {
        matches!(
            self,
            Report::Exited(_) | Report::Completed(_) | Report::Failed(_)
        )
    }
}

/// The number after `marker` in `text` (`-?[0-9]+`).
pub fn number_after(text: &str, marker: &str) -> Option<String> {
    let i = text.find(marker)? + marker.len();
    let rest = text[i..].trim_start();
    let n = rest
        .char_indices()
        .take_while(|&(k, c)| c.is_ascii_digit() || (k == 0 && c == '-'))
        .count();
    (n > 0 && rest[..n] != *"-").then(|| rest[..n].to_string())
}

/// The JSON object parts of a tool output: each line that starts with `{` and parses as
/// a JSON object (code mode joins its `input_text` parts with newlines, and `text(r)` of
/// a tool's answer is one line of JSON).
pub fn json_parts(text: &str) -> Vec<Value> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.starts_with('{'))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(Value::is_object)
        .collect()
}

fn id_text(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// What `text` (a `write_stdin`/`exec_command` output, or a code-mode output whose JSON
/// part is their answer) says about process `session` (`None`: whichever process it
/// names).
pub fn session_report(text: &str, session: Option<&str>) -> Option<Report> {
    let is = |n: &Option<String>| n.is_some() && (session.is_none() || n.as_deref() == session);
    if let Some(code) = number_after(text, "Process exited with code") {
        return code.parse().ok().map(Report::Exited);
    }
    if is(&number_after(text, "Unknown process id")) {
        return Some(Report::Gone);
    }
    if is(&number_after(text, "Process running with session ID")) {
        return Some(Report::Running);
    }
    for v in json_parts(text) {
        if let Some(code) = v.get("exit_code").and_then(Value::as_i64) {
            return Some(Report::Exited(code));
        }
        if is(&v.get("session_id").and_then(id_text)) {
            return Some(Report::Running);
        }
    }
    None
}

/// The process a tool output says is running (`Process running with session ID N`, or a
/// JSON part with `session_id` and no `exit_code`).
pub fn running_session(text: &str) -> Option<String> {
    if let Some(n) = number_after(text, "Process running with session ID") {
        return Some(n);
    }
    json_parts(text)
        .into_iter()
        .find(|v| v.get("exit_code").is_none())
        .and_then(|v| v.get("session_id").and_then(id_text))
}

/// The cell a code-mode output says is running (`Script running with cell ID N`).
pub fn running_cell(text: &str) -> Option<String> {
    let i = text.find("Script running with cell ID")? + "Script running with cell ID".len();
    let id: String = text[i..]
        .trim_start()
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    (!id.is_empty()).then_some(id)
}

/// What a code-mode output (an `exec` or `wait` answer) says about cell `cell`.
pub fn cell_report(text: &str, cell: &str) -> Option<Report> {
    if let Some(id) = running_cell(text) {
        return (id == cell).then_some(Report::Running);
    }
    if text.contains(&format!("exec cell {cell} not found")) {
        return Some(Report::Gone);
    }
    if text.trim_start().starts_with("Script completed") {
        let code = json_parts(text)
            .iter()
            .find_map(|v| v.get("exit_code").and_then(Value::as_i64));
        return Some(Report::Completed(code));
    }
    if text.trim_start().starts_with("Script failed") {
        let error = text
            .lines()
            .map(str::trim)
            .rfind(|l| !l.is_empty())
            .unwrap_or("")
            .to_string();
        return Some(Report::Failed(error));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_outputs_in_both_modes() {
        let running = "Chunk ID: badcf1\nWall time: 0.5013 seconds\nProcess running with session ID 27907\nOriginal token count: 0\nOutput:\n";
        assert_eq!(running_session(running).as_deref(), Some("27907"));
        assert_eq!(
            session_report(running, Some("27907")),
            Some(Report::Running)
        );
        assert_eq!(session_report(running, Some("1")), None);
        let exited =
            "Chunk ID: 31523e\nWall time: 4.2 seconds\nProcess exited with code 2\nOutput:\nno\n";
        assert_eq!(
            session_report(exited, Some("27907")),
            Some(Report::Exited(2))
        );
        assert_eq!(running_session(exited), None);
        let gone = "write_stdin failed: Unknown process id 27907";
        assert_eq!(session_report(gone, Some("27907")), Some(Report::Gone));
        // Code mode: the answer is the JSON part.
        let js = "Script completed\nWall time 5.0 seconds\nOutput:\n\n{\"chunk_id\":\"bb59da\",\"wall_time_seconds\":5.0,\"session_id\":81003,\"output\":\"\"}";
        assert_eq!(running_session(js).as_deref(), Some("81003"));
        assert_eq!(session_report(js, Some("81003")), Some(Report::Running));
        let js_exit = "Script completed\nOutput:\n\n{\"chunk_id\":\"a75d1e\",\"exit_code\":0,\"output\":\"done\\n\"}";
        assert_eq!(
            session_report(js_exit, Some("81003")),
            Some(Report::Exited(0))
        );
        let js_gone =
            "Script failed\nOutput:\n\nScript error:\nwrite_stdin failed: Unknown process id 81003";
        assert_eq!(session_report(js_gone, Some("81003")), Some(Report::Gone));
        assert_eq!(number_after("code -", "code"), None);
    }

    #[test]
    fn cell_outputs() {
        let running = "Script running with cell ID 3\nWall time 1.5 seconds\nOutput:\n";
        assert_eq!(running_cell(running).as_deref(), Some("3"));
        assert_eq!(cell_report(running, "3"), Some(Report::Running));
        assert_eq!(cell_report(running, "4"), None);
        let done = "Script completed\nWall time 0.4 seconds\nOutput:\n\n{\"chunk_id\":\"9302e2\",\"exit_code\":0,\"output\":\"done\\n\"}";
        assert_eq!(cell_report(done, "3"), Some(Report::Completed(Some(0))));
        let gone =
            "Script failed\nWall time 0.0 seconds\nOutput:\n\nScript error:\nexec cell 3 not found";
        assert_eq!(cell_report(gone, "3"), Some(Report::Gone));
        let threw = "Script failed\nOutput:\n\nScript error:\nTypeError: x is undefined";
        assert_eq!(
            cell_report(threw, "3"),
            Some(Report::Failed("TypeError: x is undefined".into()))
        );
        assert!(Report::Failed(String::new()).is_end() && !Report::Gone.is_end());
    }
}
