//! What to record and how: [`RecordConfig`], and the agent and route it implies.

use std::path::PathBuf;
use std::time::Duration;

use super::RecordError;
use crate::capture::agent::Agent;
use crate::capture::npm::CliSpec;
use crate::capture::route::Route;
use crate::capture::server::{Mode, ServerConfig};

/// What to run.
#[derive(Clone, Debug)]
pub enum Target {
    /// An npm-published CLI version.
    Cli(CliSpec),
    /// Any command: program and arguments.
    Command(Vec<String>),
}

/// Configuration of one recording.
#[derive(Clone, Debug)]
pub struct RecordConfig {
    /// What to run.
    pub target: Target,
    /// Arguments for a [`Target::Cli`] (default `-p hello`).
    pub args: Vec<String>,
    /// Environment changes: `Some(v)` sets, `None` removes.
    pub env: Vec<(String, Option<String>)>,
    /// The server (mode, limits); its address should stay loopback.
    pub server: ServerConfig,
    /// Trace file to write.
    pub output: PathBuf,
    /// Wall-clock limit for the CLI.
    pub timeout: Duration,
    /// Free-form label stored in the context.
    pub label: Option<String>,
    /// How the CLI reaches agentwire; `None`: the CLI's default route
    /// ([`Agent::default_route`]; first-party for a command).
    pub route: Option<Route>,
    /// Replace an output that appears at `output` while the CLI runs (`--force`).
    pub force: bool,
    /// Run the CLI interactively in a pseudo-terminal (`record --tty`); `None`: stdin
    /// empty, output into a file (print mode).
    pub tty: Option<crate::capture::tty::TtyConfig>,
}

/// The agent a recording runs, for a fetched CLI.
pub(super) fn agent_of(cfg: &RecordConfig) -> Option<Agent> {
    match &cfg.target {
        Target::Cli(spec) => Agent::of(&spec.name),
        Target::Command(_) => None,
    }
}

/// The route a recording takes: the one asked, if the CLI can take it, else the CLI's
/// default. Errors: [`RecordError::Route`] for a route the CLI cannot take.
pub fn route_of(cfg: &RecordConfig) -> Result<Route, RecordError> {
    let Some(agent) = agent_of(cfg) else {
        return Ok(cfg.route.unwrap_or(Route::FirstParty));
    };
    let route = cfg.route.unwrap_or(agent.default_route());
    if agent.routes().contains(&route) {
        return Ok(route);
    }
    let cli = match &cfg.target {
        Target::Cli(spec) => spec.name.clone(),
        Target::Command(_) => String::new(),
    };
    Err(RecordError::Route {
        cli,
        route: route.name(),
        supported: agent
            .routes()
            .iter()
            .map(|r| r.name())
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// A scenario written per agent ([`crate::capture::server::script_agents`]) replaced by
/// the part for the agent this recording runs; the part's arguments are the run's when it
/// names none. Errors: [`RecordError::ScenarioPart`] when the scenario has no such part.
pub(super) fn take_scenario_part(cfg: &mut RecordConfig) -> Result<(), RecordError> {
    let Mode::Script(s) = &cfg.server.mode else {
        return Ok(());
    };
    if s.agents().is_empty() {
        return Ok(());
    }
    let Some(part) = agent_of(cfg).and_then(|a| s.for_agent(a)) else {
        let agent = match &cfg.target {
            Target::Cli(spec) => spec.name.clone(),
            Target::Command(c) => c.first().cloned().unwrap_or_default(),
        };
        let have: Vec<&str> = s.agents().iter().map(|p| p.name.as_str()).collect();
        return Err(RecordError::ScenarioPart {
            agent,
            have: have.join(", "),
        });
    };
    let (script, args) = (part.script.clone(), part.args.clone());
    cfg.server.mode = Mode::Script(script);
    if cfg.args.is_empty() {
        cfg.args = args;
    }
    Ok(())
}
