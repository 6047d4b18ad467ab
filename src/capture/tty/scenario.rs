//! The terminal part of a scenario: what `record --tty` types into the pseudo-terminal,
//! what it waits for, the answers it gives to prompts, and its bounds. It sits under the
//! scenario file's `terminal` key, beside the `threads` the fake server answers from
//! (`docs/scenario-format.md` documents both):
//!
//! ```json
//! "terminal": {
//!   "cols": 120, "rows": 40, "timeout_s": 60, "step_timeout_s": 15, "idle_ms": 800,
//!   "answers": [{"when": "Do you want to proceed\\?", "send": "1"}],
//!   "steps": [{"wait": "❯"}, {"type": "run the build"}, {"key": "enter"},
//!             {"wait": "build finished"}, {"idle": 1000}, {"type": "/exit"},
//!             {"key": "enter"}, {"exit": true}]
//! }
//! ```

use std::time::Duration;

use regex::Regex;
use serde::Deserialize;

use super::TtyError;

/// Terminal width when the scenario names none, in columns.
pub const DEFAULT_COLS: u16 = 120;
/// Terminal height when the scenario names none, in rows.
pub const DEFAULT_ROWS: u16 = 40;

/// One step of a terminal scenario, run in order.
#[derive(Clone, Debug)]
pub enum Step {
    /// Type this text (sent as it is, no Enter).
    Type(String),
    /// Press keys: the bytes of named keys (`enter`, `ctrl-d`, …, see [`key_bytes`]).
    Key(Vec<u8>),
    /// Wait until the screen shows a match of the pattern (at most the step timeout).
    Wait(Regex),
    /// Wait until the terminal printed nothing for this long, counted from the CLI's first
    /// output (at most the step timeout).
    Idle(Duration),
    /// Wait for the CLI to exit (at most the step timeout).
    Exit,
}

/// A prompt the CLI may show at any time and the keys that answer it: whenever the
/// screen shows `when` (and did not when it was last answered), `send` is typed.
#[derive(Clone, Debug)]
pub struct Answer {
    /// The prompt, a regular expression over the screen's text.
    pub when: Regex,
    /// What to type (text; named keys as in [`Step::Key`] with `keys`).
    pub send: Vec<u8>,
}

/// The terminal scenario: size, bounds, answers and steps.
#[derive(Clone, Debug)]
pub struct Terminal {
    /// Width in columns.
    pub cols: u16,
    /// Height in rows.
    pub rows: u16,
    /// The whole session's bound: the CLI is stopped when it passes.
    pub timeout: Duration,
    /// The bound of one waiting step.
    pub step_timeout: Duration,
    /// Prompts answered whenever they appear.
    pub answers: Vec<Answer>,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TerminalRepr {
    cols: Option<u16>,
    rows: Option<u16>,
    timeout_s: Option<f64>,
    step_timeout_s: Option<f64>,
    #[serde(default)]
    answers: Vec<AnswerRepr>,
    #[serde(default)]
    steps: Vec<StepRepr>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerRepr {
    when: String,
    #[serde(default)]
    send: String,
    #[serde(default)]
    keys: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "lowercase")]
enum StepRepr {
    Type(String),
    Key(KeysRepr),
    Wait(String),
    Idle(u64),
    Exit(bool),
}

#[derive(Deserialize)]
#[serde(untagged)]
enum KeysRepr {
    One(String),
    Many(Vec<String>),
}

impl Terminal {
    /// The default session when the scenario has no `terminal` part: wait for the CLI to
    /// go idle, type `prompt` and Enter, wait for idle again, then Ctrl-D twice and wait
    /// for the exit; 120×40, 60 s in all, 20 s a step.
    pub fn default_for(prompt: &str) -> Terminal {
        let idle = Step::Idle(Duration::from_millis(1500));
        Terminal {
            cols: DEFAULT_COLS,
            rows: DEFAULT_ROWS,
            timeout: Duration::from_secs(60),
            step_timeout: Duration::from_secs(20),
            answers: Vec::new(),
            steps: vec![
                idle.clone(),
                Step::Type(prompt.to_string()),
                Step::Key(b"\r".to_vec()),
                idle,
                Step::Key(vec![4]),
                Step::Key(vec![4]),
                Step::Exit,
            ],
        }
    }

    /// The `terminal` part of a scenario file's text (`None` when it has none).
    ///
    /// Errors: [`TtyError::Scenario`] naming the file and what is wrong in it.
    pub fn from_scenario(path: &str, text: &str) -> Result<Option<Terminal>, TtyError> {
        let bad = |why: String| TtyError::Scenario {
            path: path.to_string(),
            why,
        };
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        let Some(t) = v.get("terminal") else {
            return Ok(None);
        };
        let r: TerminalRepr =
            serde_json::from_value(t.clone()).map_err(|e| bad(format!("terminal: {e}")))?;
        Terminal::from_repr(r).map(Some).map_err(bad)
    }

    fn from_repr(r: TerminalRepr) -> Result<Terminal, String> {
        let secs = |s: Option<f64>, d: f64, what: &str| {
            let s = s.unwrap_or(d);
            if !(0.1..=86_400.0).contains(&s) {
                return Err(format!(
                    "{what} {s} is out of range: give 0.1 to 86400 seconds"
                ));
            }
            Ok(Duration::from_secs_f64(s))
        };
        let regex = |p: &str| Regex::new(p).map_err(|e| format!("pattern {p:?}: {e}"));
        let (cols, rows) = (
            r.cols.unwrap_or(DEFAULT_COLS),
            r.rows.unwrap_or(DEFAULT_ROWS),
        );
        if !(20..=1000).contains(&cols) || !(5..=1000).contains(&rows) {
            return Err(format!(
                "size {cols}x{rows} is out of range: cols 20 to 1000, rows 5 to 1000"
            ));
        }
        let answers = r
            .answers
            .iter()
            .map(|a| {
                let mut send = a.send.as_bytes().to_vec();
                for k in &a.keys {
                    send.extend(key_bytes(k)?);
                }
                Ok(Answer {
                    when: regex(&a.when)?,
                    send,
                })
            })
            .collect::<Result<_, String>>()?;
        let steps = r
            .steps
            .into_iter()
            .map(|s| {
                Ok(match s {
                    StepRepr::Type(t) => Step::Type(t),
                    StepRepr::Key(KeysRepr::One(k)) => Step::Key(key_bytes(&k)?),
                    StepRepr::Key(KeysRepr::Many(ks)) => {
                        let mut b = Vec::new();
                        for k in &ks {
                            b.extend(key_bytes(k)?);
                        }
                        Step::Key(b)
                    }
                    StepRepr::Wait(p) => Step::Wait(regex(&p)?),
                    StepRepr::Idle(ms) => Step::Idle(Duration::from_millis(ms.clamp(10, 600_000))),
                    StepRepr::Exit(true) => Step::Exit,
                    StepRepr::Exit(false) => {
                        return Err("a step {\"exit\": false} does nothing: write {\"exit\": true} or leave it out".into())
                    }
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Terminal {
            cols,
            rows,
            timeout: secs(r.timeout_s, 60.0, "timeout_s")?,
            step_timeout: secs(r.step_timeout_s, 20.0, "step_timeout_s")?,
            answers,
            steps,
        })
    }
}

/// The bytes a named key sends on an xterm: `enter`, `tab`, `esc`, `backspace`, `space`,
/// `up`, `down`, `right`, `left`, `shift-tab`, and `ctrl-A` … `ctrl-Z`.
///
/// Errors: the name is none of these (the message lists them).
pub fn key_bytes(name: &str) -> Result<Vec<u8>, String> {
    let n = name.to_ascii_lowercase();
    let b: &[u8] = match n.as_str() {
        "enter" | "return" => b"\r",
        "tab" => b"\t",
        "esc" | "escape" => b"\x1b",
        "backspace" => b"\x7f",
        "space" => b" ",
        "up" => b"\x1b[A",
        "down" => b"\x1b[B",
        "right" => b"\x1b[C",
        "left" => b"\x1b[D",
        "shift-tab" => b"\x1b[Z",
        _ => {
            if let Some(c) = n.strip_prefix("ctrl-").filter(|c| c.len() == 1) {
                let c = c.as_bytes()[0];
                if c.is_ascii_lowercase() {
                    return Ok(vec![c - b'a' + 1]);
                }
            }
            return Err(format!(
                "unknown key {name:?}: use enter, tab, esc, backspace, space, up, down, right, left, shift-tab or ctrl-a … ctrl-z"
            ));
        }
    };
    Ok(b.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_terminal_part_reads_its_steps_keys_and_bounds() {
        let text = r#"{"threads": [], "terminal": {"cols": 100, "rows": 30, "timeout_s": 9,
            "answers": [{"when": "proceed\\?", "send": "1", "keys": ["enter"]}],
            "steps": [{"wait": "❯"}, {"type": "hi"}, {"key": ["ctrl-b", "enter"]},
                      {"idle": 500}, {"exit": true}]}}"#;
        let t = Terminal::from_scenario("s.json", text).unwrap().unwrap();
        assert_eq!((t.cols, t.rows, t.timeout.as_secs()), (100, 30, 9));
        assert_eq!(t.answers[0].send, b"1\r");
        assert!(matches!(&t.steps[2], Step::Key(k) if k == &[2, b'\r']));
        assert!(matches!(t.steps[3], Step::Idle(d) if d.as_millis() == 500));
        assert!(Terminal::from_scenario("s.json", r#"{"threads": []}"#)
            .unwrap()
            .is_none());
        let e = Terminal::from_scenario("s.json", r#"{"terminal": {"steps": [{"key": "f13"}]}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("s.json") && e.contains("unknown key \"f13\""),
            "{e}"
        );
        let e = Terminal::from_scenario("s.json", r#"{"terminal": {"cols": 3}}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cols 20 to 1000"), "{e}");
    }
}
