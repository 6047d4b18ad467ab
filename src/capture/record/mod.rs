//! `record`: run a CLI under the fake server in a clean environment and write its trace.
//!
//! The run gets a clean but realistic environment ([`clean_env`]: a fresh HOME with the
//! usual folders and config dir, `SHELL`, `TERM`, `LANG`, `TZ`, `USER`, `PATH`), a fake
//! API key, `ANTHROPIC_BASE_URL` (or the first-party proxy variables) pointing at an
//! in-process server, telemetry and non-essential traffic off, the caller's `--env`
//! changes, and a timeout. The trace header records the context (CLI, version, platform,
//! route, every variable that was set, base URL, agentwire version). [`resolver`] records
//! the inputs of a command that takes traces when they name a CLI version instead.

pub mod resolver;

mod config;
mod env;
mod error;
mod finish;
mod run;

pub use config::{route_of, RecordConfig, Target};
pub use env::{chosen_env, clean_env, parse_env, sandbox_env, RouteEnv, HOME_FOLDERS};
pub use error::RecordError;
pub use finish::RecordOutcome;
pub use run::interrupted;

use super::agent::Agent;
use super::npm;
use crate::trace::Context;
use env::run_env;
use finish::{finalize_or_keep, outcome, set_context};
use run::{run_command, start_server, working_trace, Sandbox};

/// Run the target under a fresh server and write the trace. `progress` receives status
/// lines (downloads); what goes wrong on the way (an MCP server left unrecorded, lines
/// that did not read back) is reported to `cfg.server.diagnostics`.
pub async fn record(
    cfg: RecordConfig,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<RecordOutcome, RecordError> {
    record_observed(cfg, progress, |_| {}).await
}

/// The exchanges a recording writes, each just after its trace line
/// ([`crate::capture::server::RunningServer::subscribe`]).
pub type LiveExchanges = tokio::sync::broadcast::Receiver<std::sync::Arc<crate::trace::Exchange>>;

/// [`record`], handing `observe` the recording's exchanges as they are written, once the
/// server is up and before the target starts (`record --ui` feeds its live viewer so).
///
/// Errors: as [`record`].
pub async fn record_observed(
    mut cfg: RecordConfig,
    progress: &(dyn Fn(&str) + Sync),
    observe: impl FnOnce(LiveExchanges),
) -> Result<RecordOutcome, RecordError> {
    cfg.route = Some(route_of(&cfg)?);
    let (program, args, mut context) = program_and_context(&cfg, progress)?;
    let sandbox = Sandbox::create()?;
    let tmp_trace = working_trace(&cfg.output, sandbox.path())?;
    // Start the server first: the base URL goes into the context and the env.
    let (srv, ca_path) = start_server(&cfg, &tmp_trace).await?;
    observe(srv.subscribe());
    let base_url = srv.base_url();
    let env = run_env(
        &cfg,
        &sandbox.home,
        &sandbox.config,
        sandbox.path(),
        &base_url,
        ca_path.as_deref(),
    )?;
    let ran = run_command(&cfg, &sandbox, srv, (&program, &args), &env).await?;
    set_context(&mut context, &cfg, base_url, (&program, &args), &env);
    context.mcp_servers = ran.mcp_servers.clone();
    // The trace as written (sorted, final context): the summary is computed from it,
    // not by reading the file back.
    let trace = finalize_or_keep(&cfg, &tmp_trace, &context, &ran.mcp_dir)?;
    Ok(outcome(&trace, &ran.out_path, ran.exit_code, ran.timed_out))
}

/// The program to run, its arguments and the recording context naming it: a fetched CLI
/// (downloaded first if it is not cached; default arguments: one print-mode prompt,
/// `hello`) or a command.
fn program_and_context(
    cfg: &RecordConfig,
    progress: &(dyn Fn(&str) + Sync),
) -> Result<(String, Vec<String>, Context), RecordError> {
    Ok(match &cfg.target {
        Target::Cli(spec) => {
            let bin = tokio::task::block_in_place(|| npm::ensure(spec, progress))?;
            let args = if cfg.args.is_empty() {
                Agent::of(&spec.name)
                    .unwrap_or(Agent::ClaudeCode)
                    .print_args("hello")
            } else {
                cfg.args.clone()
            };
            let mut c = Context::new();
            c.cli = Some(spec.name.clone());
            c.cli_version = Some(spec.version.clone());
            c.cli_tag = spec.tag.clone();
            c.platform = Some(spec.platform.clone());
            (bin.to_string_lossy().into_owned(), args, c)
        }
        Target::Command(cmd) => {
            let (p, rest) = cmd.split_first().ok_or(RecordError::NothingToRun)?;
            let mut c = Context::new();
            c.cli = std::path::Path::new(p)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            (p.clone(), rest.to_vec(), c)
        }
    })
}
