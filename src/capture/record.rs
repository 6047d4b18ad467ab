//! `record`: run a CLI under the fake server in a clean environment and write its trace.
//!
//! The run gets a clean but realistic environment ([`clean_env`]: a fresh HOME with the
//! usual folders and config dir, `SHELL`, `TERM`, `LANG`, `TZ`, `USER`, `PATH`), a fake
//! API key, `ANTHROPIC_BASE_URL` (or the first-party proxy variables) pointing at an
//! in-process server, telemetry and non-essential traffic off, the caller's `--env`
//! changes, and a timeout. The trace header records the context (CLI, version, platform,
//! route, every variable that was set, base URL, agentwire version). [`resolver`] records
//! the inputs of a command that takes traces when they name a CLI version instead.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

pub mod resolver;

use super::agent::Agent;
use super::npm::{self, CliSpec, NpmError};
use super::server::{self, ServerConfig, ServerError};
use super::Diagnostics;
use crate::api::view::Canonicalizer;
use crate::trace::redact::redact_env;
use crate::trace::{Context, Trace, TraceError, TraceWriter};

/// The API key given to recorded CLIs. It is fake, and the tests check it never reaches a
/// trace.
pub const FAKE_API_KEY: &str = "sk-ant-api03-agentwire-FAKE-KEY-0000000000000000000000";

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
    Ca(#[from] super::ca::CaError),
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
    Mcp(#[from] super::mcp::McpError),
    /// The terminal session (`--tty`) failed.
    #[error(transparent)]
    Tty(#[from] super::tty::TtyError),
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

/// How the recorded CLI reaches agentwire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Route {
    /// `HTTPS_PROXY` to agentwire's intercepting proxy, trusting agentwire's CA
    /// (`NODE_EXTRA_CA_CERTS`, `SSL_CERT_FILE`): the client believes it talks to
    /// api.anthropic.com.
    FirstParty,
    /// `ANTHROPIC_BASE_URL` pointing at agentwire.
    BaseUrl,
    /// Codex: a custom model provider in `$CODEX_HOME/config.toml` whose `base_url` is
    /// agentwire (HTTP `POST /v1/responses` with SSE), as a gateway user configures it.
    CustomProvider,
    /// Codex: the built-in OpenAI provider with `openai_base_url` at agentwire (the
    /// Responses WebSocket first, HTTP after a refused upgrade), as a user of OpenAI's own
    /// endpoint runs it.
    Builtin,
    /// opencode's `anthropic` provider with `baseURL` at agentwire (`POST /v1/messages`).
    Anthropic,
    /// opencode's `openai` provider with `baseURL` at agentwire (`POST /v1/responses`).
    OpenAi,
    /// An `@ai-sdk/openai-compatible` provider of opencode at agentwire
    /// (`POST /v1/chat/completions`).
    Compatible,
}

impl Route {
    /// `first-party` or `base-url`, as written in trace contexts.
    pub fn name(&self) -> &'static str {
        match self {
            Route::FirstParty => "first-party",
            Route::BaseUrl => "base-url",
            Route::CustomProvider => "custom-provider",
            Route::Builtin => "builtin",
            Route::Anthropic => "anthropic",
            Route::OpenAi => "openai",
            Route::Compatible => "compatible",
        }
    }

    /// The route a request took, told from its `Host` header (for traces that did not
    /// record it: pcap files, imports): first-party when it names [`FIRST_PARTY_HOST`]
    /// (with or without a port), else a base URL pointing elsewhere.
    pub fn of_host(host: &str) -> Route {
        if host.split(':').next() == Some(FIRST_PARTY_HOST) {
            Route::FirstParty
        } else {
            Route::BaseUrl
        }
    }
}

/// The host the first-party route intercepts.
pub const FIRST_PARTY_HOST: &str = "api.anthropic.com";

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
    /// ([`super::agent::Agent::default_route`]; first-party for a command).
    pub route: Option<Route>,
    /// Replace an output that appears at `output` while the CLI runs (`--force`).
    pub force: bool,
    /// Run the CLI interactively in a pseudo-terminal (`record --tty`); `None`: stdin
    /// empty, output into a file (print mode).
    pub tty: Option<super::tty::TtyConfig>,
}

/// Folders a user's home usually has; the recorded CLI finds them in its fresh HOME.
pub const HOME_FOLDERS: &[&str] = &[
    ".config",
    ".cache",
    ".local/share",
    ".local/bin",
    "Desktop",
    "Documents",
    "Downloads",
];

/// The ordinary variables every recorded run gets, before the route's and the caller's:
/// a shell (`SHELL`, the CLIs describe it in their prompts), a terminal type, a UTF-8
/// locale, UTC, a user name, the fresh `HOME` and the caller's `PATH` (so the CLI finds
/// its tools). Fixed values, so two recordings of one version agree; `--env K=V` or
/// `K=unset` changes any of them.
pub fn clean_env(home: &std::path::Path) -> BTreeMap<String, String> {
    let shell = ["/bin/bash", "/usr/bin/bash", "/bin/sh"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .unwrap_or("/bin/sh");
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into());
    [
        ("HOME", home.to_string_lossy().into_owned()),
        ("SHELL", shell.to_string()),
        ("TERM", "xterm-256color".to_string()),
        ("LANG", "C.UTF-8".to_string()),
        ("TZ", "UTC".to_string()),
        ("USER", "user".to_string()),
        ("LOGNAME", "user".to_string()),
        ("PATH", path),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// How the recorded CLI reaches agentwire, as environment variables.
pub enum RouteEnv<'a> {
    /// `ANTHROPIC_BASE_URL` names agentwire's server.
    BaseUrl(&'a str),
    /// The CLI talks to `api.anthropic.com` through agentwire's proxy, trusting its CA.
    FirstParty {
        /// The proxy URL (`HTTPS_PROXY`).
        proxy: &'a str,
        /// agentwire's CA certificate (`NODE_EXTRA_CA_CERTS`).
        ca: &'a std::path::Path,
        /// The system bundle plus that CA (`SSL_CERT_FILE`).
        bundle: &'a std::path::Path,
    },
}

/// The environment agentwire gives every recorded run before the caller's `--env`
/// changes: [`clean_env`], the config directory, the fake API key, the route's
/// variables, and telemetry, error reporting, auto-update and non-essential traffic off.
pub fn sandbox_env(
    home: &std::path::Path,
    config: &std::path::Path,
    route: &RouteEnv,
) -> BTreeMap<String, String> {
    let mut env = clean_env(home);
    let mut set = |k: &str, v: &str| {
        env.insert(k.to_string(), v.to_string());
    };
    set("CLAUDE_CONFIG_DIR", &config.to_string_lossy());
    set("ANTHROPIC_API_KEY", FAKE_API_KEY);
    match route {
        RouteEnv::FirstParty { proxy, ca, bundle } => {
            set("HTTPS_PROXY", proxy);
            set("https_proxy", proxy);
            set("NODE_EXTRA_CA_CERTS", &ca.to_string_lossy());
            set("SSL_CERT_FILE", &bundle.to_string_lossy());
        }
        RouteEnv::BaseUrl(url) => set("ANTHROPIC_BASE_URL", url),
    }
    set("DISABLE_TELEMETRY", "1");
    set("DISABLE_ERROR_REPORTING", "1");
    set("DISABLE_AUTOUPDATER", "1");
    set("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    env
}

/// The settings a user chose for a recorded run: the variables of a recorded environment
/// (a trace context's `env`) that agentwire's sandbox does not set on either route
/// ([`sandbox_env`]), in the environment's order.
pub fn chosen_env(env: &BTreeMap<String, String>) -> impl Iterator<Item = (&String, &String)> {
    let sandbox = sandbox_vars();
    env.iter()
        .filter(move |(k, _)| !sandbox.contains(k.as_str()))
}

/// Names of the variables [`sandbox_env`] sets on either route: agentwire's sandbox, as
/// opposed to settings a user chose with `--env` ([`chosen_env`]).
fn sandbox_vars() -> std::collections::BTreeSet<String> {
    let p = std::path::Path::new("/");
    let first_party = RouteEnv::FirstParty {
        proxy: "",
        ca: p,
        bundle: p,
    };
    [RouteEnv::BaseUrl(""), first_party]
        .iter()
        .flat_map(|r| sandbox_env(p, p, r).into_keys())
        .collect()
}

/// Parse `K=V` (with `K=unset` meaning remove K).
pub fn parse_env(kv: &str) -> Result<(String, Option<String>), RecordError> {
    let (k, v) = kv
        .split_once('=')
        .filter(|(k, _)| !k.is_empty())
        .ok_or_else(|| RecordError::BadEnv(kv.into()))?;
    Ok((k.into(), (v != "unset").then(|| v.to_string())))
}

/// What a recording produced.
#[derive(Clone, Debug)]
pub struct RecordOutcome {
    /// The CLI's exit code (`None`: killed by a signal or the timeout).
    pub exit_code: Option<i32>,
    /// True when the timeout killed it.
    pub timed_out: bool,
    /// Exchanges recorded.
    pub exchanges: usize,
    /// Model requests recorded (`/v1/messages`, `/v1/responses` and the other dialects';
    /// a Responses WebSocket message counts as one, its prewarm too).
    pub messages: usize,
    /// Where the model requests went, as the summary names them: `/v1/messages`,
    /// `/v1/responses`, or `model requests` when they went to several APIs.
    pub endpoint: String,
    /// Tools in the first main-thread Messages request (`None`: no such request).
    pub tools: Option<usize>,
    /// Sum of request body sizes, in bytes.
    pub body_bytes: u64,
    /// MCP records (messages and server events) merged into the trace.
    pub mcp_records: usize,
    /// Last lines of the CLI's stderr and stdout (for failures).
    pub output_tail: String,
    /// The recording context written to the trace.
    pub context: Context,
    /// Lines of the working trace that could not be read back when it was rewritten into
    /// the output (each warned about; the working trace is then kept, see `finalize`).
    pub unreadable_lines: usize,
    /// The terminal session, for `record --tty`.
    pub tty: Option<super::tty::TtyOutcome>,
}

impl RecordOutcome {
    /// The one-line summary `record` prints.
    pub fn summary(&self, output: &std::path::Path) -> String {
        let who = match (&self.context.cli, &self.context.cli_version) {
            (Some(c), Some(v)) => match &self.context.cli_tag {
                Some(t) => format!("{c}@{t} ({v})"),
                None => format!("{c}@{v}"),
            },
            (Some(c), None) => c.clone(),
            _ => "command".into(),
        };
        let exit = match (self.exit_code, self.timed_out, &self.tty) {
            (_, _, Some(t)) => format!(
                "terminal session: {} after {:.1} s ({} cast events in {}{})",
                t.end.reason(),
                t.seconds,
                t.cast_events,
                t.cast.display(),
                if t.cast_dropped > 0 {
                    format!(", {} output events past the cast's bound left out", t.cast_dropped)
                } else {
                    String::new()
                }
            ),
            (_, true, _) => "timed out".to_string(),
            (Some(c), _, _) => format!("exit {c}"),
            (None, _, _) => "killed".to_string(),
        };
        format!(
            "{who}: {exit}; {} ({} {}), {} tools, {} request body bytes{} -> {}",
            crate::text::fmt::plural(self.exchanges as u64, "exchange"),
            self.messages,
            self.endpoint,
            self.tools.map_or("-".into(), |t| t.to_string()),
            self.body_bytes,
            if self.mcp_records > 0 {
                format!(
                    ", {}",
                    crate::text::fmt::plural(self.mcp_records as u64, "MCP record")
                )
            } else {
                String::new()
            },
            output.display()
        )
    }
}

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
/// ([`server::RunningServer::subscribe`]).
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
    let mut out = outcome(&trace, &ran.out_path, ran.exit_code, ran.timed_out);
    if let Some(t) = &ran.tty {
        out.output_tail = t.screen.trim_end().to_string();
    }
    out.tty = ran.tty;
    Ok(out)
}

/// The directory a recorded run lives in (removed when dropped): a fresh HOME with the
/// usual folders ([`HOME_FOLDERS`]), a config directory, and an empty working directory.
struct Sandbox {
    dir: tempfile::TempDir,
    home: PathBuf,
    config: PathBuf,
    work: PathBuf,
}

impl Sandbox {
    /// A fresh sandbox under the system's temporary directory.
    fn create() -> Result<Sandbox, RecordError> {
        let dir = tempfile::Builder::new()
            .prefix("agentwire-record-")
            .tempdir()
            .map_err(RecordError::Sandbox)?;
        let (home, config, work) = (
            dir.path().join("home"),
            dir.path().join("config"),
            dir.path().join("work"),
        );
        for d in [&home, &config, &work] {
            std::fs::create_dir_all(d).map_err(RecordError::Sandbox)?;
        }
        for f in HOME_FOLDERS {
            std::fs::create_dir_all(home.join(f)).map_err(RecordError::Sandbox)?;
        }
        Ok(Sandbox {
            dir,
            home,
            config,
            work,
        })
    }

    fn path(&self) -> &std::path::Path {
        self.dir.path()
    }
}

/// The working trace, rewritten into `output` at the end: next to the output (a crash
/// leaves it where the user looks), or in the sandbox when the output is written through
/// (stdout, a device such as /dev/null, a FIFO: no directory of its own).
///
/// Errors: [`RecordError::WorkingTraceExists`]: an earlier run's working trace is never
/// truncated, since it may be the only copy of that run.
fn working_trace(
    output: &std::path::Path,
    sandbox: &std::path::Path,
) -> Result<PathBuf, RecordError> {
    let tmp_trace = if crate::output::writes_through(output) {
        sandbox.join("trace.jsonl.tmp")
    } else {
        output.with_extension("jsonl.tmp")
    };
    if tmp_trace.symlink_metadata().is_ok() {
        return Err(RecordError::WorkingTraceExists {
            path: tmp_trace.display().to_string(),
        });
    }
    Ok(tmp_trace)
}

/// What the recorded command did, and where its MCP records and output are.
struct Ran {
    exit_code: Option<i32>,
    timed_out: bool,
    mcp_dir: PathBuf,
    out_path: PathBuf,
    /// MCP servers moved into the CLI's own configuration (opencode).
    mcp_servers: Vec<String>,
    /// The terminal session (`record --tty`).
    tty: Option<super::tty::TtyOutcome>,
}

/// Run the command in the sandbox, its MCP servers under agentwire's tap or proxy, until
/// it exits, times out or agentwire is interrupted; then stop it and everything it
/// started, the server and the MCP taps. The server is shut down on every way out.
async fn run_command(
    cfg: &RecordConfig,
    sandbox: &Sandbox,
    srv: server::RunningServer,
    (program, args): (&str, &[String]),
    env: &BTreeMap<String, String>,
) -> Result<Ran, RecordError> {
    let diagnostics = &cfg.server.diagnostics;
    // A fetched CLI runs in an empty directory (so no project files steer it); any other
    // command runs where agentwire was started, so its relative paths work.
    let cwd = match &cfg.target {
        Target::Cli(_) => sandbox.work.clone(),
        Target::Command(_) => std::env::current_dir().map_err(RecordError::Sandbox)?,
    };
    // MCP servers named by `--mcp-config` run under agentwire's tap or behind its proxy.
    let here = std::env::current_dir().map_err(RecordError::Sandbox)?;
    let mcp_dir = sandbox.path().join("mcp");
    let mcp =
        super::mcp::config::prepare_reporting(args, &mcp_dir, &tap_exe(), &here, diagnostics).await;
    let mcp = match mcp {
        Ok(m) => m,
        Err(e) => {
            let _ = srv.shutdown().await;
            return Err(e.into());
        }
    };
    for s in &mcp.skipped {
        diagnostics.warn(&format!("MCP server {s}"));
    }
    let mut mcp = mcp;
    let mut mcp_servers = Vec::new();
    if agent_of(cfg) == Some(Agent::Opencode) {
        match super::opencode::adopt_mcp(&mut mcp.args, &sandbox.home) {
            Ok(names) => mcp_servers = names,
            Err(e) => diagnostics.warn(&format!("MCP servers not given to opencode: {e}")),
        }
    }
    let out_path = sandbox.path().join("output.txt");
    if let Some(tty) = &cfg.tty {
        let spawn = (program.to_string(), mcp.args.clone(), env.clone(), cwd);
        let ran = in_terminal(cfg, tty, sandbox, &srv, spawn).await;
        srv.shutdown().await?;
        let mcp_dir = mcp.dir.clone();
        mcp.stop().await;
        let t = ran?;
        return Ok(Ran {
            exit_code: t.exit_code,
            timed_out: matches!(t.end, super::tty::End::Timeout { .. } | super::tty::End::Step { .. }),
            mcp_dir,
            out_path,
            mcp_servers,
            tty: Some(t),
        });
    }
    let mut cmd = command(program, &mcp.args, env, &cwd, &out_path)?;
    // Listen before the child runs: an interrupt from then on stops it and saves the trace.
    let stop = interrupted();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let _ = srv.shutdown().await;
            return Err(RecordError::Spawn {
                program: program.to_string(),
                source: e,
            });
        }
    };
    let pgid = child.id();
    let (exit_code, timed_out) = wait_for(&mut child, cfg.timeout, stop, diagnostics).await;
    // The command and everything it started (background jobs) end with the recording.
    kill_group(pgid);
    let _ = child.kill().await;
    srv.shutdown().await?;
    let mcp_dir = mcp.dir.clone();
    mcp.stop().await;
    Ok(Ran {
        exit_code,
        timed_out,
        mcp_dir,
        out_path,
        mcp_servers,
        tty: None,
    })
}

/// The command in a terminal session ([`super::tty`]); Claude Code finds its onboarding
/// done, the key approved and its folder trusted ([`super::tty::seed_claude`]).
async fn in_terminal(
    cfg: &RecordConfig,
    tty: &super::tty::TtyConfig,
    sandbox: &Sandbox,
    srv: &server::RunningServer,
    spawn: (String, Vec<String>, BTreeMap<String, String>, PathBuf),
) -> Result<super::tty::TtyOutcome, RecordError> {
    if matches!(agent_of(cfg), None | Some(Agent::ClaudeCode)) {
        let key = spawn.2.get("ANTHROPIC_API_KEY").map(String::as_str);
        super::tty::seed_claude(&sandbox.config, key, &[&spawn.3])?;
    }
    Ok(super::tty::run(spawn, tty, srv.subscribe(), interrupted()).await?)
}

/// The recorded command: in its own process group, with exactly `env`, in `cwd`, stdin
/// empty, stdout and stderr both into `out_path` (the tail a failure shows).
fn command(
    program: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: &std::path::Path,
    out_path: &std::path::Path,
) -> Result<tokio::process::Command, RecordError> {
    let mut cmd = tokio::process::Command::new(program);
    #[cfg(unix)]
    cmd.process_group(0);
    cmd.args(args)
        .env_clear()
        .envs(env)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let out_file = std::fs::File::create(out_path).map_err(RecordError::Sandbox)?;
    let err_file = out_file.try_clone().map_err(RecordError::Sandbox)?;
    cmd.stdout(Stdio::from(out_file))
        .stderr(Stdio::from(err_file));
    Ok(cmd)
}

/// The recording context as the trace header holds it: the route and base URL, the
/// label, the command line, and the environment with secrets redacted.
fn set_context(
    context: &mut Context,
    cfg: &RecordConfig,
    base_url: String,
    (program, args): (&str, &[String]),
    env: &BTreeMap<String, String>,
) {
    let route = cfg.route.unwrap_or(Route::FirstParty);
    context.route = Some(route.name().into());
    context.base_url = Some(match route {
        Route::FirstParty => format!("https://{FIRST_PARTY_HOST} (via proxy {base_url})"),
        Route::CustomProvider
        | Route::Builtin
        | Route::Anthropic
        | Route::OpenAi
        | Route::Compatible => {
            format!("{}/v1", base_url.trim_end_matches('/'))
        }
        Route::BaseUrl => base_url,
    });
    context.label = cfg.label.clone();
    context.command = std::iter::once(program.to_string())
        .chain(args.iter().cloned())
        .collect();
    context.env = env
        .iter()
        .map(|(k, v)| (k.clone(), redact_env(k, v)))
        .collect();
}

/// [`finalize_reporting`] into `cfg.output`; when the final trace cannot be written, the
/// error names where the working trace is kept (one in the sandbox, removed on return, is
/// copied out first).
fn finalize_or_keep(
    cfg: &RecordConfig,
    tmp_trace: &std::path::Path,
    context: &Context,
    mcp_dir: &std::path::Path,
) -> Result<Trace, RecordError> {
    let diagnostics = &cfg.server.diagnostics;
    finalize_reporting(
        tmp_trace,
        &cfg.output,
        cfg.force,
        context,
        mcp_dir,
        diagnostics,
    )
    .map_err(|source| {
        let kept = if crate::output::writes_through(&cfg.output) {
            keep_copy(tmp_trace)
        } else {
            Ok(tmp_trace.to_path_buf())
        };
        match kept {
            Ok(k) => RecordError::Finalize {
                kept: k.display().to_string(),
                output: cfg.output.display().to_string(),
                source,
            },
            Err(_) => RecordError::Trace(source),
        }
    })
}

/// Start the recording server, writing to the working trace `tmp_trace`; for the
/// first-party route it intercepts TLS for the API host with agentwire's CA. Returns the
/// server and the CA certificate the client must trust (first-party route only).
async fn start_server(
    cfg: &RecordConfig,
    tmp_trace: &std::path::Path,
) -> Result<(server::RunningServer, Option<PathBuf>), RecordError> {
    let placeholder = Context::new();
    let writer = TraceWriter::create(tmp_trace, &placeholder)?;
    let mut server_cfg = cfg.server.clone();
    let mut ca_path = None;
    if cfg.route == Some(Route::FirstParty) {
        let ca = super::ca::CertificateAuthority::load_or_create_reporting(
            &super::ca::default_dir(),
            &cfg.server.diagnostics,
        )?;
        ca_path = ca.cert_path();
        server_cfg.intercept = Some(std::sync::Arc::new(
            super::server::intercept::InterceptConfig {
                hosts: vec![FIRST_PARTY_HOST.into()],
                ca: std::sync::Arc::new(ca),
                tunnel_others: false,
            },
        ));
    }
    Ok((server::start(server_cfg, writer).await?, ca_path))
}

/// The agent a recording runs, for a fetched CLI.
fn agent_of(cfg: &RecordConfig) -> Option<Agent> {
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

/// Variables of [`sandbox_env`] that only Claude Code reads.
const CLAUDE_ONLY: &[&str] = &[
    "CLAUDE_CONFIG_DIR",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
];

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
            let args = if cfg.args.is_empty() && cfg.tty.is_none() {
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

/// The recorded run's whole environment: [`sandbox_env`] (with the CA bundle written for
/// the first-party route), then the caller's `--env` changes.
fn run_env(
    cfg: &RecordConfig,
    home: &std::path::Path,
    config: &std::path::Path,
    sandbox: &std::path::Path,
    base_url: &str,
    ca_path: Option<&std::path::Path>,
) -> Result<BTreeMap<String, String>, RecordError> {
    let bundle = sandbox.join("ca-bundle.pem");
    let route = match (cfg.route.unwrap_or(Route::FirstParty), ca_path) {
        (Route::FirstParty, Some(ca)) => {
            write_bundle(&bundle, ca).map_err(RecordError::Sandbox)?;
            RouteEnv::FirstParty {
                proxy: base_url,
                ca,
                bundle: &bundle,
            }
        }
        _ => RouteEnv::BaseUrl(base_url),
    };
    let mut env = sandbox_env(home, config, &route);
    if let Some(agent) = agent_of(cfg) {
        agent
            .prepare(
                cfg.route.unwrap_or(agent.default_route()),
                home,
                base_url,
                &mut env,
            )
            .map_err(RecordError::Sandbox)?;
        if agent != Agent::ClaudeCode {
            // Claude Code's variables mean nothing to another agent; its fake key would
            // only sit in its environment.
            for k in CLAUDE_ONLY {
                env.remove(*k);
            }
        }
    }
    for (k, v) in &cfg.env {
        match v {
            Some(v) => {
                env.insert(k.clone(), v.clone());
            }
            None => {
                env.remove(k);
            }
        }
    }
    Ok(env)
}

/// Wait for the recorded command until it exits, `timeout` passes (`timed_out`), or
/// agentwire is interrupted (said to `diagnostics`); returns (exit code, timed out).
async fn wait_for(
    child: &mut tokio::process::Child,
    timeout: Duration,
    stop: impl std::future::Future<Output = ()>,
    diagnostics: &Diagnostics,
) -> (Option<i32>, bool) {
    tokio::select! {
        r = tokio::time::timeout(timeout, child.wait()) => match r {
            Ok(Ok(status)) => (status.code(), false),
            Ok(Err(_)) => (None, false),
            Err(_) => (None, true),
        },
        _ = stop => {
            diagnostics.status(
                "agentwire: interrupted; stopping the recorded command and saving the trace",
            );
            (None, false)
        }
    }
}

/// The outcome of a run: the command's exit, the last lines it printed (from `out_path`),
/// and counts from the trace as written.
fn outcome(
    trace: &Trace,
    out_path: &std::path::Path,
    exit_code: Option<i32>,
    timed_out: bool,
) -> RecordOutcome {
    let text = std::fs::read_to_string(out_path).unwrap_or_default();
    let tail: Vec<&str> = text.lines().rev().take(20).collect();
    let mut canon = Canonicalizer::new();
    let mut tools = None;
    let mut messages = 0;
    let mut dialects = std::collections::BTreeSet::new();
    for x in &trace.exchanges {
        let v = canon.view(x);
        if let Some(d) = crate::api::Dialect::of(x) {
            messages += 1;
            dialects.insert(d);
        }
        if let Some(c) = v.request.filter(|_| v.place.thread_label == "main") {
            tools.get_or_insert(c.req.tools.len());
        }
    }
    RecordOutcome {
        exit_code,
        timed_out,
        exchanges: trace.exchanges.len(),
        messages,
        endpoint: match dialects.len() {
            0 => "/v1/messages".into(),
            1 if dialects.contains(&crate::api::Dialect::Responses) => "/v1/responses".into(),
            1 if dialects.contains(&crate::api::Dialect::Messages) => "/v1/messages".into(),
            1 if dialects.contains(&crate::api::Dialect::ChatCompletions) => {
                "/v1/chat/completions".into()
            }
            _ => "model requests".into(),
        },
        tools,
        body_bytes: trace
            .exchanges
            .iter()
            .map(|x| x.request.body.len() as u64)
            .sum(),
        mcp_records: trace.mcp.len(),
        output_tail: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
        context: trace.context.clone(),
        unreadable_lines: trace.problems.len(),
        tty: None,
    }
}

/// Kill a process group (the recorded command and its children).
fn kill_group(pgid: Option<u32>) {
    #[cfg(unix)]
    if let Some(p) = pgid.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: kill(2) with a negative pid signals the process group; no memory is
        // shared with the callee.
        unsafe {
            libc::kill(-p, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pgid;
}

/// Listen for SIGINT, SIGTERM and SIGHUP (a closed terminal or dropped ssh session;
/// not when the process ignores it, as under `nohup`) from now on; the future resolves
/// on any. The handlers are installed when this is called, not when the future is first
/// polled: a signal that arrives in between (a test or supervisor stopping a server
/// right after it announced itself) would otherwise meet the default action and end the
/// process without saving the trace. Call it inside a tokio runtime, before announcing
/// readiness.
pub fn interrupted() -> impl std::future::Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use crate::output::cleanup;
        use tokio::signal::unix::{signal, SignalKind};
        let hangup = !cleanup::is_ignored(libc::SIGHUP);
        // Outputs are committed or dropped by the caller: no cleanup-and-exit on these.
        cleanup::handled_by_caller(&[libc::SIGINT, libc::SIGTERM]);
        if hangup {
            cleanup::handled_by_caller(&[libc::SIGHUP]);
        }
        let i = signal(SignalKind::interrupt());
        let t = signal(SignalKind::terminate());
        let h = hangup.then(|| signal(SignalKind::hangup()));
        async move {
            let hup = async move {
                match h {
                    Some(Ok(mut h)) => {
                        h.recv().await;
                    }
                    _ => std::future::pending::<()>().await,
                }
            };
            match (i, t) {
                (Ok(mut i), Ok(mut t)) => {
                    tokio::select! {
                        _ = i.recv() => {}
                        _ = t.recv() => {}
                        _ = hup => {}
                    }
                }
                _ => std::future::pending::<()>().await,
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// The system CA bundle (when there is one) plus agentwire's CA, for `SSL_CERT_FILE`.
fn write_bundle(path: &std::path::Path, ca: &std::path::Path) -> std::io::Result<()> {
    let mut pem = std::fs::read("/etc/ssl/certs/ca-certificates.crt").unwrap_or_default();
    pem.extend_from_slice(b"\n");
    pem.extend(std::fs::read(ca)?);
    std::fs::write(path, pem)
}

/// The agentwire binary stdio MCP servers run under (`AGENTWIRE_EXE` overrides, for
/// callers that are not the agentwire binary).
fn tap_exe() -> PathBuf {
    std::env::var_os("AGENTWIRE_EXE")
        .map(PathBuf::from)
        .or_else(|| std::env::current_exe().ok())
        .unwrap_or_else(|| "agentwire".into())
}

/// Copy a working trace kept in the sandbox (which is removed) to the current directory,
/// as `agentwire-record-PID.jsonl.tmp`; returns where.
fn keep_copy(tmp: &std::path::Path) -> std::io::Result<PathBuf> {
    let keep = std::env::current_dir()
        .unwrap_or_default()
        .join(format!("agentwire-record-{}.jsonl.tmp", std::process::id()));
    std::fs::copy(tmp, &keep).map(|_| keep)
}

/// [`finalize_reporting`] with nothing reported.
#[cfg(test)]
fn finalize(
    tmp: &std::path::Path,
    output: &std::path::Path,
    force: bool,
    context: &Context,
    mcp_dir: &std::path::Path,
) -> Result<Trace, TraceError> {
    finalize_reporting(tmp, output, force, context, mcp_dir, &Diagnostics::silent())
}

/// Rewrite the temporary trace with the final context in its header, sorted by exchange
/// id (arrival order), followed by the MCP records found in `mcp_dir` (time order), and
/// move it into place. Lines that did not read back, of either, are reported to
/// `diagnostics` ([`report_unread`]).
fn finalize_reporting(
    tmp: &std::path::Path,
    output: &std::path::Path,
    force: bool,
    context: &Context,
    mcp_dir: &std::path::Path,
    diagnostics: &Diagnostics,
) -> Result<Trace, TraceError> {
    let mut t = Trace::read(tmp)?;
    t.exchanges.sort_by_key(|x| x.id);
    let (mcp, problems) = super::mcp::collect(mcp_dir, diagnostics);
    for (file, p) in &problems {
        diagnostics.warn(&format!("MCP records {}: {p}", file.display()));
    }
    t.mcp = mcp;
    // (`record` checked at its start that `output` may be written; one that appeared
    // since is replaced only with `force`.)
    let mut w = TraceWriter::create_atomic(output, force, context)?;
    for x in &t.exchanges {
        w.write_exchange(x)?;
    }
    for m in &t.mcp {
        w.write_record(&m.line())?;
    }
    for o in &t.others {
        w.write_record(o)?;
    }
    w.finish()?;
    if t.problems.is_empty() {
        let _ = std::fs::remove_file(tmp);
    } else {
        report_unread(tmp, output, &t.problems, diagnostics);
    }
    t.path = output.to_path_buf();
    t.context = crate::trace::redact::context(context);
    Ok(t)
}

/// Warn about the lines of the working trace `tmp` that did not read back, and keep it
/// where the user can find it: nothing is lost, the lines stay in the working trace (next
/// to the output; the sandbox holding it for `-o -` is removed, so it is copied out
/// first).
fn report_unread(
    tmp: &std::path::Path,
    output: &std::path::Path,
    problems: &[crate::trace::ReadProblem],
    diagnostics: &Diagnostics,
) {
    let name = tmp.display().to_string();
    for p in problems {
        diagnostics.warn(&p.located(&name));
    }
    let kept = if crate::output::writes_through(output) {
        keep_copy(tmp)
    } else {
        Ok(tmp.to_path_buf())
    };
    let lines = crate::text::fmt::plural(problems.len() as u64, "line");
    diagnostics.warn(&match kept {
        Ok(k) => format!(
            "{lines} of the recording could not be read back and are missing from the trace; the recording as written is kept at {}",
            k.display()
        ),
        Err(e) => format!(
            "{lines} of the recording could not be read back, and its working trace could not be kept ({e})"
        ),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_the_working_trace_that_do_not_read_back_are_kept_not_dropped() {
        // Found in review (the kind of an adversarial test's finding: a reader's problems
        // collected and never reported): `finalize` rewrote the working trace without its
        // unreadable lines and deleted it.
        let dir = tempfile::tempdir().unwrap();
        let (tmp, out) = (dir.path().join("t.jsonl.tmp"), dir.path().join("t.jsonl"));
        let mut w = TraceWriter::create(&tmp, &Context::new()).unwrap();
        let x = crate::trace::test_exchange("POST", "/v1/messages", &[], b"{}");
        w.write_exchange(&x).unwrap();
        w.finish().unwrap();
        let mut bytes = std::fs::read(&tmp).unwrap();
        bytes.extend_from_slice(b"{\"type\":\"exchange\",\"id\":1,\"cut");
        std::fs::write(&tmp, &bytes).unwrap();
        let t = finalize(
            &tmp,
            &out,
            false,
            &Context::new(),
            &dir.path().join("no-mcp"),
        )
        .unwrap();
        assert_eq!(t.exchanges.len(), 1);
        assert_eq!(t.problems.len(), 1);
        assert_eq!(
            std::fs::read(&tmp).unwrap(),
            bytes,
            "the working trace is kept as written"
        );
        assert_eq!(Trace::read(&out).unwrap().exchanges.len(), 1);
    }

    #[test]
    fn sandbox_vars_are_what_either_route_sets_and_nothing_a_user_chooses() {
        let home = std::path::Path::new("/h");
        let base = sandbox_env(home, home, &RouteEnv::BaseUrl("http://127.0.0.1:1"));
        let vars = sandbox_vars();
        assert!(base.keys().all(|k| vars.contains(k)));
        for k in [
            "HOME",
            "TZ",
            "PATH",
            "ANTHROPIC_BASE_URL",
            "HTTPS_PROXY",
            "SSL_CERT_FILE",
        ] {
            assert!(vars.contains(k), "{k}");
        }
        assert!(!base.contains_key("HTTPS_PROXY"));
        assert!(!vars.contains("ENABLE_TOOL_SEARCH"));
    }

    #[test]
    fn the_route_is_told_from_the_host_and_chosen_env_leaves_the_sandbox_out() {
        assert_eq!(Route::of_host("api.anthropic.com"), Route::FirstParty);
        assert_eq!(Route::of_host("api.anthropic.com:443"), Route::FirstParty);
        assert_eq!(Route::of_host("127.0.0.1:8080"), Route::BaseUrl);
        assert_eq!(Route::of_host("api.anthropic.com.evil"), Route::BaseUrl);
        let env: BTreeMap<String, String> = [("HOME", "/h"), ("ENABLE_TOOL_SEARCH", "true")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let chosen: Vec<_> = chosen_env(&env).collect();
        assert_eq!(
            chosen,
            [(&"ENABLE_TOOL_SEARCH".to_string(), &"true".to_string())]
        );
    }

    #[test]
    fn env_parsing() {
        assert_eq!(parse_env("A=1").unwrap(), ("A".into(), Some("1".into())));
        assert_eq!(parse_env("A=unset").unwrap(), ("A".into(), None));
        assert_eq!(parse_env("A=").unwrap(), ("A".into(), Some(String::new())));
        assert!(parse_env("=1").is_err());
        assert!(parse_env("A").is_err());
    }
}
