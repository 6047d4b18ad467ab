//! What to record and how: [`RecordConfig`], and the agent and route it implies.

use std::path::PathBuf;
use std::time::Duration;

use super::RecordError;
use crate::capture::agent::Agent;
use crate::capture::npm::CliSpec;
use crate::capture::route::Route;
use crate::capture::server::ServerConfig;

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
