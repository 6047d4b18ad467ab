//! [`RecordError`]: what can go wrong in `record`.

use crate::capture::npm::NpmError;
use crate::capture::server::ServerError;
use crate::trace::TraceError;

/// Errors of `record`.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    /// A route the CLI cannot take.
    #[error("{cli} cannot take the route {route}; its routes: {supported}")]
    Route {
        /// The CLI.
        cli: String,
        /// The route asked.
        route: &'static str,
        /// The routes it can take, the default first.
        supported: String,
    },
    /// Resolving or fetching the CLI failed.
    #[error(transparent)]
    Npm(#[from] NpmError),
    /// The server the CLI runs under failed.
    #[error(transparent)]
    Server(#[from] ServerError),
    /// The trace cannot be written or read back.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// The command cannot be started.
    #[error("cannot start {program}: {source} (check the command and PATH)")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The CLI's version could not be fetched (a `matrix` cell whose version failed before
    /// any cell ran).
    #[error("cannot fetch {spec}: {reason}")]
    Fetch {
        /// The CLI and version (`NAME@VERSION`).
        spec: String,
        /// Why (the npm step's error).
        reason: String,
    },
    /// Neither a CLI nor a command was given.
    #[error("nothing to run: give --cli NAME@VERSION or a command after `--`")]
    NothingToRun,
    /// An environment change is not `K=V` (the CLI names the flag it came from).
    #[error("{0:?} is not K=V; write it as NAME=value (or NAME=unset to remove NAME)")]
    BadEnv(String),
    /// The sandbox (fresh HOME, config and working directories) cannot be made.
    #[error("cannot prepare the sandbox directory: {0}")]
    Sandbox(#[source] std::io::Error),
    /// agentwire's CA (the first-party route) cannot be loaded or made.
    #[error(transparent)]
    Ca(#[from] crate::capture::ca::CaError),
    /// The output policy refused the trace's path.
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
    /// The directory for the recordings of spec inputs cannot be created.
    #[error("cannot create {path} for the recordings: {source}")]
    RecordDir {
        /// The directory.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The recorded CLI sent no `/v1/messages` request: there is nothing to compare.
    #[error("the CLI sent no /v1/messages request; last output lines:\n{output_tail}")]
    NoMessages {
        /// The last lines of its output.
        output_tail: String,
    },
    /// The run's MCP servers cannot be recorded.
    #[error(transparent)]
    Mcp(#[from] crate::capture::mcp::McpError),
    /// The working trace next to the output exists: an earlier run did not finish.
    #[error("{path} exists: it is the working trace of an earlier `record` run that did not finish, and may hold that run's exchanges; recover them with `agentwire import {path} -o FILE` or remove it, then run again")]
    WorkingTraceExists {
        /// The working trace.
        path: String,
    },
    /// The final trace could not be written; the recording is kept in the working trace.
    #[error("{source}; the recording is kept in {kept}: once that is fixed, recover it with `agentwire import {kept} -o {output}`")]
    Finalize {
        /// The working trace, kept.
        kept: String,
        /// The output that could not be written.
        output: String,
        /// Why.
        #[source]
        source: TraceError,
    },
}
