//! Scenario files for `serve --script`: per thread of a session, the assistant content of
//! each turn, an optional delay, and injected failures; values captured from earlier tool
//! results by regex can be reused in later tool inputs (`${name}`).
//!
//! Format (JSON), documented in `docs/scenario-format.md`:
//! ```json
//! {"captures": [{"name": "out", "regex": "Output is being written to: (\\S+)"}],
//!  "threads": [{"name": "main", "match": {"has_tools": true, "first_user_contains": "build"},
//!               "turns": [{"content": [{"type":"text","text":"hi"}], "delay_ms": 0,
//!                          "fail": {"status": 529}}]}],
//!  "default_text": "ok"}
//! ```
//! A bare JSON array of replies (each a list of content blocks) is also accepted: one reply
//! per request that carries tools, in arrival order (the form the shared captures used).
//!
//! A thread's turn is the number of assistant messages in the request, so a retried
//! request gets the same turn again; an injected failure fires once per turn.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

use super::script_agents::{self, AgentPart, Source};
use crate::api::{BlockKind, MessagesRequest};
use crate::capture::agent::Agent;

/// Errors reading a scenario file.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The scenario file cannot be read.
    #[error("cannot read scenario {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The scenario is not valid.
    #[error("scenario {path} is not valid: {message} (see docs/scenario-format.md)")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong, where.
        message: String,
    },
}

/// How a scenario turn fails instead of (or while) answering.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    /// Answer with this HTTP status and the API's error body (429, 500, 529, ...).
    #[serde(default)]
    pub status: Option<u16>,
    /// Stream this many events, then an `error` event of this type.
    #[serde(default)]
    pub sse_error: Option<String>,
    /// Stream this many events, then drop the connection (with `drop: true`).
    #[serde(default)]
    pub after_events: Option<usize>,
    /// Drop the connection (after `after_events` events, default 0).
    #[serde(default)]
    pub drop: bool,
    /// Error message for `status` / `sse_error`.
    #[serde(default)]
    pub message: Option<String>,
}

impl Failure {
    /// Exactly one kind of failure, and a status the API can answer with.
    fn check(&self) -> Result<(), String> {
        let kinds = usize::from(self.status.is_some())
            + usize::from(self.sse_error.is_some())
            + usize::from(self.drop);
        if kinds != 1 {
            return Err("give exactly one of `status`, `sse_error` or `drop: true`".into());
        }
        if let Some(s) = self.status {
            if !(400..=599).contains(&s) {
                return Err(format!(
                    "status {s} is not an error status; use 400-599 (e.g. 429, 500, 529)"
                ));
            }
        }
        Ok(())
    }
}

/// One scripted turn.
#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// Assistant content blocks (API shape).
    #[serde(default)]
    pub content: Vec<Value>,
    /// Milliseconds to wait before answering.
    #[serde(default)]
    pub delay_ms: u64,
    /// Override the stop reason (default: `tool_use` if a tool is called, else `end_turn`).
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// Failure to inject (once) at this turn.
    #[serde(default)]
    pub fail: Option<Failure>,
}

/// Which requests belong to a thread; every given condition must hold.
#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Matcher {
    /// The request carries tools (or not).
    #[serde(default)]
    pub has_tools: Option<bool>,
    /// The system prompt contains this text.
    #[serde(default)]
    pub system_contains: Option<String>,
    /// The first user message contains this text.
    #[serde(default)]
    pub first_user_contains: Option<String>,
    /// A tool of this name is defined.
    #[serde(default)]
    pub tool: Option<String>,
}

impl Matcher {
    fn matches(&self, r: &MessagesRequest) -> bool {
        self.has_tools.is_none_or(|h| h != r.tools.is_empty())
            && self
                .system_contains
                .as_ref()
                .is_none_or(|s| r.system.as_ref().is_some_and(|sys| sys.text().contains(s)))
            && self
                .first_user_contains
                .as_ref()
                .is_none_or(|s| r.first_user_text().contains(s.as_str()))
            && self
                .tool
                .as_ref()
                .is_none_or(|t| r.tools.iter().any(|x| &x.name == t))
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThreadRepr {
    name: String,
    #[serde(default, rename = "match")]
    matcher: Matcher,
    turns: Vec<Turn>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaptureRepr {
    name: String,
    regex: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a scenario object with `threads` (or a list of replies)"
)]
struct ScriptRepr {
    #[serde(default)]
    captures: Vec<CaptureRepr>,
    #[serde(default)]
    threads: Vec<ThreadRepr>,
    #[serde(default)]
    default_text: Option<String>,
    /// A part per agent ([`super::script_agents`]).
    #[serde(default)]
    agents: std::collections::BTreeMap<String, Value>,
    /// What `record --tty` types and waits for (read by [`crate::capture::tty::scenario`]).
    #[serde(default, rename = "terminal")]
    _terminal: Option<serde_json::Value>,
}

/// A loaded scenario.
#[derive(Clone, Debug)]
pub struct Script {
    threads: Vec<ThreadRepr>,
    captures: Vec<(String, Regex)>,
    default_text: String,
    /// Bare-array form: turns are counted by arrival order.
    arrival_order: bool,
    /// The parts of a scenario written per agent (empty: one scenario for every agent).
    agents: Vec<AgentPart<Script>>,
}

/// The scripted answer for one request.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// Thread name (`None`: no thread matched, default reply).
    pub thread: Option<String>,
    /// Turn number within the thread.
    pub turn: usize,
    /// Content to send (variables substituted).
    pub content: Vec<Value>,
    /// Delay before answering, in milliseconds.
    pub delay_ms: u64,
    /// Stop reason override.
    pub stop_reason: Option<String>,
    /// Failure to inject now.
    pub fail: Option<Failure>,
    /// `${name}` references that had no captured value yet.
    pub unresolved: Vec<String>,
}

/// Mutable scenario state shared by all connections.
#[derive(Default)]
pub struct ScriptState {
    vars: HashMap<String, String>,
    fired: HashSet<(usize, usize)>,
    arrivals: usize,
}

impl Script {
    /// Load a scenario file.
    pub fn load(path: &Path) -> Result<Script, ScriptError> {
        let text = std::fs::read_to_string(path).map_err(|e| ScriptError::Read {
            path: path.display().to_string(),
            source: e,
        })?;
        Self::parse_at(&text, path.parent()).map_err(|message| ScriptError::Invalid {
            path: path.display().to_string(),
            message,
        })
    }

    /// Parse scenario text; the error is a message naming what is wrong.
    pub fn parse(text: &str) -> Result<Script, String> {
        Self::parse_at(text, None)
    }

    /// Parse scenario text whose part files (`agents`) are named relative to `base`.
    pub(super) fn parse_at(text: &str, base: Option<&Path>) -> Result<Script, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if let Value::Array(replies) = v {
            let turns = replies
                .into_iter()
                .enumerate()
                .map(|(i, r)| match r {
                    Value::Array(content) => Ok(Turn {
                        content,
                        ..Turn::default()
                    }),
                    _ => Err(format!("reply {i} is not a list of content blocks")),
                })
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Script {
                threads: vec![ThreadRepr {
                    name: "main".into(),
                    matcher: Matcher {
                        has_tools: Some(true),
                        ..Matcher::default()
                    },
                    turns,
                }],
                captures: Vec::new(),
                default_text: "ok".into(),
                arrival_order: true,
                agents: Vec::new(),
            });
        }
        let r: ScriptRepr = serde_json::from_value(v).map_err(|e| e.to_string())?;
        for t in &r.threads {
            for (i, turn) in t.turns.iter().enumerate() {
                if let Some(f) = &turn.fail {
                    f.check()
                        .map_err(|m| format!("thread {:?}, turn {i}: fail: {m}", t.name))?;
                }
            }
        }
        let captures = r
            .captures
            .into_iter()
            .map(|c| {
                Regex::new(&c.regex)
                    .map(|re| (c.name.clone(), re))
                    .map_err(|e| format!("capture {:?}: bad regex: {e}", c.name))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let agents = script_agents::parts(r.agents, base, &part_scenario)?;
        if !agents.is_empty() && !r.threads.is_empty() {
            return Err("a scenario with `agents` has its threads in each agent's part; move the top-level `threads` into the parts".into());
        }
        Ok(Script {
            threads: r.threads,
            captures,
            default_text: r.default_text.unwrap_or_else(|| "ok".into()),
            arrival_order: false,
            agents,
        })
    }

    /// Decide the answer to `req`, updating captured values and fired failures.
    pub fn decide(&self, req: &MessagesRequest, state: &mut ScriptState) -> Decision {
        self.capture(req, state);
        let default = |thread: Option<String>, turn| Decision {
            thread,
            turn,
            content: vec![serde_json::json!({"type":"text","text": self.default_text})],
            delay_ms: 0,
            stop_reason: None,
            fail: None,
            unresolved: Vec::new(),
        };
        let Some((ti, t)) = self
            .threads
            .iter()
            .enumerate()
            .find(|(_, t)| t.matcher.matches(req))
        else {
            return default(None, req.turn());
        };
        let turn = if self.arrival_order {
            state.arrivals += 1;
            state.arrivals - 1
        } else {
            req.turn()
        };
        let Some(spec) = t.turns.get(turn) else {
            return default(Some(t.name.clone()), turn);
        };
        let fail = match &spec.fail {
            Some(f) if state.fired.insert((ti, turn)) => Some(f.clone()),
            _ => None,
        };
        let mut unresolved = Vec::new();
        let content = spec
            .content
            .iter()
            .map(|b| substitute(b, &state.vars, &mut unresolved))
            .collect();
        Decision {
            thread: Some(t.name.clone()),
            turn,
            content,
            delay_ms: spec.delay_ms,
            stop_reason: spec.stop_reason.clone(),
            fail,
            unresolved,
        }
    }

    fn capture(&self, req: &MessagesRequest, state: &mut ScriptState) {
        if self.captures.is_empty() {
            return;
        }
        for m in &req.messages {
            for b in &m.content {
                let text = match &b.kind {
                    BlockKind::ToolResult { text, .. } | BlockKind::Text { text } => text,
                    _ => continue,
                };
                for (name, re) in &self.captures {
                    if let Some(c) = re.captures(text) {
                        let v = c.get(1).or_else(|| c.get(0)).map_or("", |m| m.as_str());
                        state.vars.insert(name.clone(), v.to_string());
                    }
                }
            }
        }
    }
}

/// Replace `${name}` in every string of `v` by its captured value.
///
/// A string that is exactly `${name:json}` becomes the captured value read as JSON (a
/// number stays a number: `"session_id": "${sid:json}"` gives `"session_id": 99109`).
/// A part's scenario ([`script_agents`]): one scenario, not parts of its own.
fn part_scenario(source: Source<'_>) -> Result<Script, String> {
    let script = match source {
        Source::File(path) => Script::load(path).map_err(|e| e.to_string())?,
        Source::Inline(text, dir) => Script::parse_at(text, Some(dir))?,
    };
    if !script.agents.is_empty() {
        return Err("a part's scenario has parts per agent itself; give it one scenario".into());
    }
    Ok(script)
}

impl Script {
    /// The parts of a scenario written per agent (empty: one scenario for every agent).
    pub fn agents(&self) -> &[AgentPart<Script>] {
        &self.agents
    }

    /// The part for `agent`, if the scenario has one.
    pub fn for_agent(&self, agent: Agent) -> Option<&AgentPart<Script>> {
        self.agents.iter().find(|p| p.agent == agent)
    }
}

fn substitute(v: &Value, vars: &HashMap<String, String>, unresolved: &mut Vec<String>) -> Value {
    let typed = (v.as_str())
        .and_then(|s| s.strip_prefix("${"))
        .and_then(|s| s.strip_suffix(":json}"));
    if let Some(name) = typed {
        let Some(val) = vars.get(name) else {
            unresolved.push(name.to_string());
            return v.clone();
        };
        return serde_json::from_str(val).unwrap_or_else(|_| Value::String(val.clone()));
    }
    match v {
        Value::String(s) if s.contains("${") => {
            let mut out = s.clone();
            for (k, val) in vars {
                out = out.replace(&format!("${{{k}}}"), val);
            }
            let mut rest = out.as_str();
            while let Some(i) = rest.find("${") {
                let tail = &rest[i + 2..];
                let end = tail.find('}').unwrap_or(tail.len());
                unresolved.push(tail[..end].to_string());
                rest = &tail[end..];
            }
            Value::String(out)
        }
        Value::Array(a) => {
            Value::Array(a.iter().map(|x| substitute(x, vars, unresolved)).collect())
        }
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| (k.clone(), substitute(x, vars, unresolved)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(body: &str) -> MessagesRequest {
        MessagesRequest::parse(body.as_bytes()).unwrap()
    }

    const SCRIPT: &str = r#"{
      "captures": [{"name":"out","regex":"written to: (\\S+)"}],
      "threads": [
        {"name":"sub","match":{"has_tools":true,"first_user_contains":"list files"},
         "turns":[{"content":[{"type":"text","text":"sub done"}]}]},
        {"name":"main","match":{"has_tools":true},
         "turns":[{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"x"}}],"fail":{"status":529}},
                  {"content":[{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"${out}"}}]}]}
      ]}"#;

    #[test]
    fn threads_turns_failures_and_captures() {
        let s = Script::parse(SCRIPT).unwrap();
        let mut st = ScriptState::default();
        let first =
            req(r#"{"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"}]}"#);
        let d = s.decide(&first, &mut st);
        assert_eq!((d.thread.as_deref(), d.turn), (Some("main"), 0));
        assert_eq!(d.fail.as_ref().unwrap().status, Some(529));
        // the retry of the same request gets the same turn, without the failure
        let d = s.decide(&first, &mut st);
        assert_eq!(d.turn, 0);
        assert!(d.fail.is_none());
        let second = req(
            r#"{"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"},
            {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"Output is being written to: /tmp/x.output"}]}]}"#,
        );
        let d = s.decide(&second, &mut st);
        assert_eq!(d.turn, 1);
        assert_eq!(d.content[0]["input"]["file_path"], "/tmp/x.output");
        assert!(d.unresolved.is_empty());
        let sub = req(
            r#"{"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"please list files"}]}"#,
        );
        assert_eq!(s.decide(&sub, &mut st).thread.as_deref(), Some("sub"));
        let side = req(r#"{"messages":[{"role":"user","content":"title"}]}"#);
        let d = s.decide(&side, &mut st);
        assert_eq!(d.thread, None);
        assert_eq!(d.content[0]["text"], "ok");
    }

    #[test]
    fn a_json_reference_keeps_the_captured_type() {
        let vars = HashMap::from([("sid".to_string(), "99109".to_string())]);
        let mut unresolved = Vec::new();
        let v = serde_json::json!({"session_id": "${sid:json}", "note": "id ${sid}", "x": "${nope:json}"});
        let out = substitute(&v, &vars, &mut unresolved);
        assert_eq!(out["session_id"], 99109);
        assert_eq!(out["note"], "id 99109");
        assert_eq!(unresolved, ["nope"]);
    }

    #[test]
    fn bare_array_counts_arrivals() {
        let s = Script::parse(r#"[[{"type":"text","text":"a"}],[{"type":"text","text":"b"}]]"#)
            .unwrap();
        let mut st = ScriptState::default();
        let r = req(r#"{"tools":[{"name":"X"}],"messages":[{"role":"user","content":"q"}]}"#);
        let texts: Vec<Value> = (0..3)
            .map(|_| s.decide(&r, &mut st).content[0]["text"].clone())
            .collect();
        assert_eq!(texts, vec!["a", "b", "ok"]);
    }

    #[test]
    fn bad_failures_are_rejected_with_their_location() {
        for (fail, want) in [
            (r#"{"status":0}"#, "not an error status"),
            (r#"{}"#, "exactly one"),
            (r#"{"status":529,"drop":true}"#, "exactly one"),
        ] {
            let text = format!(
                r#"{{"threads":[{{"name":"m","turns":[{{"content":[]}},{{"content":[],"fail":{fail}}}]}}]}}"#
            );
            let e = Script::parse(&text).unwrap_err();
            assert!(
                e.contains("thread \"m\", turn 1") && e.contains(want),
                "{e}"
            );
        }
    }

    #[test]
    fn a_scenario_per_agent_keeps_its_threads_in_the_parts_and_one_level_deep() {
        let s =
            Script::parse(r#"{"agents":{"codex":{"scenario":[[{"type":"text","text":"c"}]]}}}"#)
                .unwrap();
        assert!(s.for_agent(Agent::Codex).is_some() && s.for_agent(Agent::Gemini).is_none());
        let e = Script::parse(
            r#"{"threads":[],"agents":{"codex":{"scenario":{"threads":[{"name":"m","turns":[]}]}}},"default_text":"x","captures":[]}"#,
        );
        assert!(e.is_ok(), "empty top-level threads are no threads");
        let e = Script::parse(
            r#"{"threads":[{"name":"m","turns":[]}],"agents":{"codex":{"scenario":[]}}}"#,
        )
        .unwrap_err();
        assert!(e.contains("move the top-level `threads`"), "{e}");
        let e = Script::parse(
            r#"{"agents":{"codex":{"scenario":{"agents":{"gemini":{"scenario":[]}}}}}}"#,
        )
        .unwrap_err();
        assert!(
            e.contains("agents.codex: a part's scenario has parts per agent itself"),
            "{e}"
        );
    }

    #[test]
    fn bad_scenario_names_the_problem() {
        let e =
            Script::parse(r#"{"threads":[{"name":"m","turns":[{"contnet":[]}]}]}"#).unwrap_err();
        assert!(e.contains("contnet"), "{e}");
    }
}
