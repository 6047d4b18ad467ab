//! Running the recorded command: its sandbox, the server it talks to, its MCP servers, the
//! wait (exit, timeout, interrupt) and the cleanup of everything it started.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use super::config::{agent_of, RecordConfig, Target};
use super::env::HOME_FOLDERS;
use super::RecordError;
use crate::capture::agent::Agent;
use crate::capture::route::{Route, FIRST_PARTY_HOST};
use crate::capture::server;
use crate::capture::Diagnostics;
use crate::trace::{Context, TraceWriter};

/// The directory a recorded run lives in (removed when dropped): a fresh HOME with the
/// usual folders ([`HOME_FOLDERS`]), a config directory, and an empty working directory.
pub(super) struct Sandbox {
    pub(super) dir: tempfile::TempDir,
    pub(super) home: PathBuf,
    pub(super) config: PathBuf,
    pub(super) work: PathBuf,
}

impl Sandbox {
    /// A fresh sandbox under the system's temporary directory.
    pub(super) fn create() -> Result<Sandbox, RecordError> {
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

    pub(super) fn path(&self) -> &std::path::Path {
        self.dir.path()
    }
}

/// The working trace, rewritten into `output` at the end: next to the output (a crash
/// leaves it where the user looks), or in the sandbox when the output is written through
/// (stdout, a device such as /dev/null, a FIFO: no directory of its own).
///
/// Errors: [`RecordError::WorkingTraceExists`]: an earlier run's working trace is never
/// truncated, since it may be the only copy of that run.
pub(super) fn working_trace(
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
pub(super) struct Ran {
    pub(super) exit_code: Option<i32>,
    pub(super) timed_out: bool,
    pub(super) mcp_dir: PathBuf,
    pub(super) out_path: PathBuf,
    /// MCP servers moved into the CLI's own configuration (opencode).
    pub(super) mcp_servers: Vec<String>,
}

/// Run the command in the sandbox, its MCP servers under agentwire's tap or proxy, until
/// it exits, times out or agentwire is interrupted; then stop it and everything it
/// started, the server and the MCP taps. The server is shut down on every way out.
pub(super) async fn run_command(
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
    let mcp = crate::capture::mcp::config::prepare_reporting(
        args,
        &mcp_dir,
        &tap_exe(),
        &here,
        diagnostics,
    )
    .await;
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
        match crate::capture::opencode::adopt_mcp(&mut mcp.args, &sandbox.home) {
            Ok(names) => mcp_servers = names,
            Err(e) => diagnostics.warn(&format!("MCP servers not given to opencode: {e}")),
        }
    }
    let out_path = sandbox.path().join("output.txt");
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
    })
}

/// The recorded command: in its own process group, with exactly `env`, in `cwd`, stdin
/// empty, stdout and stderr both into `out_path` (the tail a failure shows).
pub(super) fn command(
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

/// Start the recording server, writing to the working trace `tmp_trace`; for the
/// first-party route it intercepts TLS for the API host with agentwire's CA. Returns the
/// server and the CA certificate the client must trust (first-party route only).
pub(super) async fn start_server(
    cfg: &RecordConfig,
    tmp_trace: &std::path::Path,
) -> Result<(server::RunningServer, Option<PathBuf>), RecordError> {
    let placeholder = Context::new();
    let writer = TraceWriter::create(tmp_trace, &placeholder)?;
    let mut server_cfg = cfg.server.clone();
    let mut ca_path = None;
    if cfg.route == Some(Route::FirstParty) {
        let ca = crate::capture::ca::CertificateAuthority::load_or_create_reporting(
            &crate::capture::ca::default_dir(),
            &cfg.server.diagnostics,
        )?;
        ca_path = ca.cert_path();
        server_cfg.intercept = Some(std::sync::Arc::new(
            crate::capture::server::intercept::InterceptConfig {
                hosts: vec![FIRST_PARTY_HOST.into()],
                ca: std::sync::Arc::new(ca),
                tunnel_others: false,
            },
        ));
    }
    Ok((server::start(server_cfg, writer).await?, ca_path))
}

/// Wait for the recorded command until it exits, `timeout` passes (`timed_out`), or
/// agentwire is interrupted (said to `diagnostics`); returns (exit code, timed out).
pub(super) async fn wait_for(
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

/// Kill a process group (the recorded command and its children).
pub(super) fn kill_group(pgid: Option<u32>) {
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

/// The agentwire binary stdio MCP servers run under (`AGENTWIRE_EXE` overrides, for
/// callers that are not the agentwire binary).
pub(super) fn tap_exe() -> PathBuf {
    std::env::var_os("AGENTWIRE_EXE")
        .map(PathBuf::from)
        .or_else(|| std::env::current_exe().ok())
        .unwrap_or_else(|| "agentwire".into())
}
