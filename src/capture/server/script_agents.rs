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

use crate::capture::agent::Agent;

/// What a scenario says for one agent (`S`: the scenario type, [`super::script::Script`]).
#[derive(Clone, Debug)]
pub struct AgentPart<S> {
    /// The agent, as `--cli` names it (`claude-code`, `codex`, `gemini`, `opencode`).
    pub name: String,
    /// The agent it is for.
    pub agent: Agent,
    /// Its scenario.
    pub script: Arc<S>,
    /// The CLI's arguments for a run that names none (`${scenario_dir}` replaced).
    pub args: Vec<String>,
}

/// Where a part's scenario is: a file, or text written inline; both name their own part
/// files relative to the directory given.
pub(super) enum Source<'a> {
    /// A scenario file.
    File(&'a Path),
    /// Scenario JSON text, and the directory its relative paths start from.
    Inline(&'a str, &'a Path),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PartRepr {
    scenario: Value,
    #[serde(default)]
    args: Vec<String>,
}

/// Read the `agents` object of a scenario whose part files are named relative to `base`
/// (`None`: the current directory), each part's scenario read by `load`. The error names
/// the part and what is wrong.
pub(super) fn parts<S>(
    agents: BTreeMap<String, Value>,
    base: Option<&Path>,
    load: &dyn Fn(Source<'_>) -> Result<S, String>,
) -> Result<Vec<AgentPart<S>>, String> {
    if agents.is_empty() {
        return Ok(Vec::new());
    }
    let dir = absolute(base.filter(|b| !b.as_os_str().is_empty()));
    agents
        .into_iter()
        .map(|(name, v)| part(&name, v, &dir, load).map_err(|e| format!("agents.{name}: {e}")))
        .collect()
}

fn part<S>(
    name: &str,
    v: Value,
    dir: &Path,
    load: &dyn Fn(Source<'_>) -> Result<S, String>,
) -> Result<AgentPart<S>, String> {
    let agent = Agent::of(name)
        .ok_or("not an agent `--cli` runs; write claude-code, codex, gemini or opencode")?;
    let p: PartRepr = serde_json::from_value(v).map_err(|e| e.to_string())?;
    let script = match p.scenario {
        Value::String(file) => load(Source::File(&dir.join(file)))?,
        inline => load(Source::Inline(&inline.to_string(), dir))?,
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A loader that names what it was given: `file:NAME` or `inline:TEXT`.
    fn named(source: Source<'_>) -> Result<String, String> {
        Ok(match source {
            Source::File(p) => format!("file:{}", p.file_name().unwrap().to_string_lossy()),
            Source::Inline(text, _) => format!("inline:{text}"),
        })
    }

    fn agents(json: &str) -> BTreeMap<String, Value> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn parts_name_files_beside_the_scenario_and_replace_its_directory_in_args() {
        let dir = tempfile::tempdir().unwrap();
        let a = agents(
            r#"{"claude-code": {"scenario": "claude.json", "args": ["-p", "x"]},
                "gemini": {"scenario": [[]], "args": ["--mcp-config", "${scenario_dir}/m.json"]}}"#,
        );
        let p = parts(a, Some(dir.path()), &named).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(
            (p[0].agent, p[0].script.as_str()),
            (Agent::ClaudeCode, "file:claude.json")
        );
        assert_eq!(p[0].args, ["-p", "x"]);
        assert_eq!(
            (p[1].agent, p[1].script.as_str()),
            (Agent::Gemini, "inline:[[]]")
        );
        let abs = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(p[1].args[1], format!("{}/m.json", abs.display()));
    }

    #[test]
    fn a_bad_part_is_named() {
        let e = parts(agents(r#"{"cursor": {"scenario": []}}"#), None, &named).unwrap_err();
        assert!(e.contains("agents.cursor: not an agent"), "{e}");
        let e = parts(agents(r#"{"codex": {"args": []}}"#), None, &named).unwrap_err();
        assert!(e.contains("agents.codex: missing field `scenario`"), "{e}");
        let failing = |_: Source<'_>| -> Result<String, String> { Err("cannot read x".into()) };
        let e = parts(agents(r#"{"codex": {"scenario": "x"}}"#), None, &failing).unwrap_err();
        assert_eq!(e, "agents.codex: cannot read x");
    }
}
