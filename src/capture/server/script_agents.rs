//! Scenarios written per agent: one file that drives Claude Code, Codex, Gemini CLI and
//! opencode through the same story, each with its own tools (`matrix --cli A,B,C --script
//! FILE`, `record --cli A --script FILE`).
//!
//! ```json
//! {"agents": {
//!   "claude-code": {"scenario": "bg-build.json", "args": ["-p", "run the build"]},
//!   "gemini": {"scenario": {"threads": [...]}, "args": ["-p", "build it", "--yolo"]}}}
//! ```
//! A part's `scenario` is a scenario file (a path relative to this file) or a scenario
//! written inline; its `args` are the CLI's arguments when the run names none of its own,
//! with `${scenario_dir}` replaced by this file's directory (absolute). Keys are the agent
//! names `--cli` takes (`claude-code`, `codex`, `gemini`, `opencode`). Documented in
//! `docs/scenario-format.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::script::Script;
use crate::capture::agent::Agent;

/// What a scenario says for one agent.
#[derive(Clone, Debug)]
pub struct AgentPart {
    /// The agent, as `--cli` names it (`claude-code`, `codex`, `gemini`, `opencode`).
    pub name: String,
    /// The agent it is for.
    pub agent: Agent,
    /// Its scenario.
    pub script: Arc<Script>,
    /// The CLI's arguments for a run that names none (`${scenario_dir}` replaced).
    pub args: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PartRepr {
    scenario: Value,
    #[serde(default)]
    args: Vec<String>,
}

/// Read the `agents` object of a scenario whose part files are named relative to `base`
/// (`None`: the current directory). The error names the part and what is wrong.
pub(super) fn parts(
    agents: BTreeMap<String, Value>,
    base: Option<&Path>,
) -> Result<Vec<AgentPart>, String> {
    if agents.is_empty() {
        return Ok(Vec::new());
    }
    let dir = absolute(base.filter(|b| !b.as_os_str().is_empty()));
    agents
        .into_iter()
        .map(|(name, v)| part(&name, v, &dir).map_err(|e| format!("agents.{name}: {e}")))
        .collect()
}

fn part(name: &str, v: Value, dir: &Path) -> Result<AgentPart, String> {
    let agent = Agent::of(name)
        .ok_or("not an agent `--cli` runs; write claude-code, codex, gemini or opencode")?;
    let p: PartRepr = serde_json::from_value(v).map_err(|e| e.to_string())?;
    let script = match p.scenario {
        Value::String(file) => {
            let path = dir.join(file);
            Script::load(&path).map_err(|e| e.to_string())?
        }
        inline => Script::parse_at(&inline.to_string(), Some(dir))?,
    };
    if !script.agents.is_empty() {
        return Err("a part's scenario has parts per agent itself; give it one scenario".into());
    }
    let dir_text = dir.display().to_string();
    Ok(AgentPart {
        name: name.to_string(),
        agent,
        script: Arc::new(script),
        args: p
            .args
            .iter()
            .map(|a| a.replace("${scenario_dir}", &dir_text))
            .collect(),
    })
}

/// `base` made absolute against the current directory.
fn absolute(base: Option<&Path>) -> PathBuf {
    let here = std::env::current_dir().unwrap_or_default();
    match base {
        Some(b) => std::fs::canonicalize(b).unwrap_or_else(|_| here.join(b)),
        None => here,
    }
}

impl Script {
    /// The parts of a scenario written per agent (empty: one scenario for every agent).
    pub fn agents(&self) -> &[AgentPart] {
        &self.agents
    }

    /// The part for `agent`, if the scenario has one.
    pub fn for_agent(&self, agent: Agent) -> Option<&AgentPart> {
        self.agents.iter().find(|p| p.agent == agent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_load_inline_and_from_files_beside_the_scenario() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("claude.json"),
            r#"{"threads":[{"name":"main","turns":[{"content":[{"type":"text","text":"c"}]}]}]}"#,
        )
        .unwrap();
        let file = dir.path().join("all.json");
        std::fs::write(
            &file,
            r#"{"agents":{"claude-code":{"scenario":"claude.json","args":["-p","x"]},
                "gemini":{"scenario":[[{"type":"text","text":"g"}]],
                          "args":["--mcp-config","${scenario_dir}/m.json"]}}}"#,
        )
        .unwrap();
        let s = Script::load(&file).unwrap();
        assert_eq!(s.agents().len(), 2);
        assert!(s.for_agent(Agent::Codex).is_none());
        let g = s.for_agent(Agent::Gemini).unwrap();
        let abs = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(g.args[1], format!("{}/m.json", abs.display()));
        assert_eq!(s.for_agent(Agent::ClaudeCode).unwrap().args, ["-p", "x"]);
    }

    #[test]
    fn a_bad_part_is_named() {
        let e = Script::parse(r#"{"agents":{"cursor":{"scenario":[]}}}"#).unwrap_err();
        assert!(e.contains("agents.cursor: not an agent"), "{e}");
        let e = Script::parse(r#"{"agents":{"codex":{"scenario":"/nonexistent/x.json"}}}"#)
            .unwrap_err();
        assert!(
            e.contains("agents.codex: cannot read scenario /nonexistent/x.json"),
            "{e}"
        );
        let e = Script::parse(
            r#"{"threads":[{"name":"m","turns":[]}],"agents":{"codex":{"scenario":[]}}}"#,
        )
        .unwrap_err();
        assert!(e.contains("move the top-level `threads`"), "{e}");
    }
}
