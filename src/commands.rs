//! Glue between parsed arguments and the library: one function per subcommand.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use agentwire::report;
use agentwire::trace::Trace;

use agentwire::capture::server::{self, Mode, Script, ServerConfig};
use agentwire::trace::{Context, TraceWriter};

use agentwire::capture::server::replay::{Replay, Timing};

use crate::cli::{
    CaArgs, Cli, Command, LimitArgs, MatrixArgs, RecordArgs, ReplayArgs, ReplyArgs, ServeArgs,
    ShowArgs,
};

/// Exit code for a run that finished but met bad input (records skipped).
pub const DEGRADED: u8 = 3;
/// Exit code of `diff` when a `--fail-on` gate tripped.
pub const GATE_TRIPPED: u8 = 4;

/// Run a parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Show(a) => show(a),
        Command::Serve(a) => serve(a),
        Command::Record(a) => record(a),
        Command::Replay(a) => replay(a),
        Command::Ca(a) => ca(a),
        Command::Diff(a) => crate::diff_cmd::diff(a),
        Command::Matrix(a) => matrix(a),
        Command::Analyze(a) => crate::analyze_cmd::analyze(a),
        Command::Pcap(a) => crate::pcap_cmd::pcap(a),
        Command::Capture(a) => crate::pcap_cmd::capture(a),
    }
}

/// Print to stdout; a closed pipe surfaces as an io error the binary maps to exit 0.
pub fn out(text: &str) -> Result<()> {
    let mut o = std::io::stdout().lock();
    o.write_all(text.as_bytes())?;
    o.flush()?;
    Ok(())
}

/// Report a trace's unreadable lines on stderr; returns the exit code they imply.
pub fn report_problems(trace: &Trace) -> ExitCode {
    for p in &trace.problems {
        eprintln!("warning: {}: {p}", trace.path.display());
    }
    if trace.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(DEGRADED)
    }
}

fn show(a: ShowArgs) -> Result<ExitCode> {
    use agentwire::trace::{Record, TraceReader};
    // Stream: keep one small row per exchange, never the exchanges themselves.
    let mut builder = report::show::RowBuilder::default();
    let mut rows = Vec::new();
    let mut problems = 0;
    for rec in TraceReader::open(&a.trace)? {
        match rec? {
            Record::Exchange(x) => rows.push(builder.row(&x)),
            Record::Bad(p) => {
                problems += 1;
                eprintln!("warning: {}: {p}", a.trace.display());
            }
            Record::Header { .. } | Record::Other(_) => {}
        }
    }
    out(&report::show::render(&rows, a.format.into()))?;
    Ok(if problems == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(DEGRADED)
    })
}

pub(crate) fn server_config(
    addr: String,
    reply: &ReplyArgs,
    limits: &LimitArgs,
) -> Result<ServerConfig> {
    let mode = if let Some(p) = &reply.script {
        Mode::Script(std::sync::Arc::new(Script::load(p)?))
    } else if let Some(p) = &reply.replay {
        let timing = Timing::parse(&reply.timing).ok_or_else(|| {
            anyhow::anyhow!(
                "--timing {:?}: use recorded, none, or xN (e.g. x10)",
                reply.timing
            )
        })?;
        let r = Replay::load(p, timing)?;
        if r.is_empty() {
            anyhow::bail!(
                "{}: no /v1/messages exchange with a 200 response to replay",
                p.display()
            );
        }
        Mode::Replay(std::sync::Arc::new(r))
    } else {
        Mode::Stub
    };
    Ok(ServerConfig {
        addr,
        mode,
        max_body: limits.max_body,
        body_timeout: std::time::Duration::from_secs(limits.body_timeout),
        tls: None,
        intercept: None,
    })
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

fn serve(a: ServeArgs) -> Result<ExitCode> {
    let mut config = server_config(a.addr, &a.reply, &a.limits)?;
    if let Some(url) = &a.upstream {
        let timeout = std::time::Duration::from_secs(a.upstream_timeout);
        let up = server::proxy::Upstream::new(url, a.upstream_ca.as_deref(), timeout)?;
        config.mode = Mode::Proxy(std::sync::Arc::new(up));
    }
    if let Some(hosts) = &a.intercept {
        let ca = agentwire::capture::ca::CertificateAuthority::load_or_create(
            &agentwire::capture::ca::default_dir(),
        )?;
        let hosts = hosts
            .split(',')
            .map(|h| h.trim().to_ascii_lowercase())
            .filter(|h| !h.is_empty())
            .collect();
        config.intercept = Some(std::sync::Arc::new(server::intercept::InterceptConfig {
            hosts,
            ca: std::sync::Arc::new(ca),
            tunnel_others: a.tunnel_others,
        }));
    }
    if let (Some(cert), Some(key)) = (&a.tls_cert, &a.tls_key) {
        config.tls = Some(server::tls::server_config_from_pem(cert, key)?);
    }
    let mut context = Context::new();
    context.route = Some(
        if a.intercept.is_some() {
            "first-party"
        } else {
            "base-url"
        }
        .into(),
    );
    let intercepting = config.intercept.is_some();
    runtime()?.block_on(async move {
        let listener = server::bind(&config.addr).await?;
        check_output(&a.output, a.force)?;
        let writer = TraceWriter::create(&a.output, &context)?;
        let srv = server::start_on(listener, config, writer).await?;
        out(&format!("{}\n", srv.base_url()))?;
        if intercepting {
            eprintln!(
                "agentwire: CONNECT proxy on {} intercepting TLS for {}: use HTTPS_PROXY={} and trust {} (NODE_EXTRA_CA_CERTS); recording to {} (Ctrl-C to stop)",
                srv.addr,
                a.intercept.as_deref().unwrap_or_default(),
                srv.base_url(),
                agentwire::capture::ca::default_dir().join("ca.pem").display(),
                a.output.display()
            );
        } else {
            eprintln!(
                "agentwire: serving the Messages API on {}; recording to {} (Ctrl-C to stop)",
                srv.base_url(),
                a.output.display()
            );
        }
        wait_for_signal().await;
        let n = srv.shutdown().await?;
        eprintln!(
            "agentwire: recorded {n} exchanges to {}",
            a.output.display()
        );
        Ok(ExitCode::SUCCESS)
    })
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate()).expect("install SIGTERM handler");
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

/// Refuse to overwrite a non-empty trace unless `force`.
pub(crate) fn check_output(path: &std::path::Path, force: bool) -> Result<()> {
    if !force && std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
        anyhow::bail!(
            "{} already exists; pass --force to overwrite it or -o to write elsewhere",
            path.display()
        );
    }
    Ok(())
}

fn record(a: RecordArgs) -> Result<ExitCode> {
    check_output(&a.output, a.force)?;
    use agentwire::capture::npm::CliSpec;
    use agentwire::capture::record::{self, parse_env, RecordConfig, Target};
    let target = match &a.cli {
        Some(spec) => Target::Cli(CliSpec::parse(spec)?),
        None if a.args.is_empty() => anyhow::bail!(record::RecordError::NothingToRun),
        None => Target::Command(a.args.clone()),
    };
    let env = a
        .env
        .iter()
        .map(|kv| parse_env(kv))
        .collect::<Result<Vec<_>, _>>()?;
    let limits = LimitArgs::default();
    let cfg = RecordConfig {
        args: if a.cli.is_some() {
            a.args.clone()
        } else {
            Vec::new()
        },
        target,
        env,
        server: server_config("127.0.0.1:0".into(), &a.reply, &limits)?,
        output: a.output.clone(),
        timeout: std::time::Duration::from_secs(a.timeout),
        label: None,
        route: a.route.into(),
    };
    let spinner = progress_spinner();
    let report = |msg: &str| spinner.set_message(msg.to_string());
    let outcome = runtime()?.block_on(record::record(cfg, &report))?;
    spinner.finish_and_clear();
    out(&format!("{}\n", outcome.summary(&a.output)))?;
    if outcome.timed_out || outcome.exit_code != Some(0) {
        let tail = if outcome.output_tail.trim().is_empty() {
            "(it printed nothing)".to_string()
        } else {
            outcome.output_tail.clone()
        };
        eprintln!("error: the recorded command did not finish cleanly (the trace keeps what it sent); its last output lines:\n{tail}");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// A spinner on stderr (hidden when stderr is not a terminal).
pub(crate) fn progress_spinner() -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new_spinner();
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        pb.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}

fn replay(a: ReplayArgs) -> Result<ExitCode> {
    use agentwire::capture::resend::{resend, ResendConfig};
    let trace = Trace::open(&a.trace)?;
    let headers = a
        .headers
        .iter()
        .map(|h| {
            h.split_once(':')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .ok_or_else(|| anyhow::anyhow!("--header {h:?}: use \"Name: value\""))
        })
        .collect::<Result<Vec<_>>>()?;
    let cfg = ResendConfig {
        to: a.to.clone(),
        concurrency: a.concurrency,
        rate: a.rate,
        headers,
        compare: a.compare,
    };
    let summary = runtime()?.block_on(resend(&trace, &cfg))?;
    out(&report::replay::render(&summary, a.format.into()))?;
    let code = report_problems(&trace);
    if summary.statuses.keys().any(|k| k == "error") || summary.differing.unwrap_or(0) > 0 {
        return Ok(ExitCode::from(1));
    }
    Ok(code)
}

fn ca(a: CaArgs) -> Result<ExitCode> {
    use agentwire::capture::ca::{default_dir, CertificateAuthority};
    let dir = default_dir();
    let ca = if a.rotate {
        CertificateAuthority::rotate(&dir)?
    } else {
        CertificateAuthority::load_or_create(&dir)?
    };
    let path = ca.cert_path().unwrap_or_else(|| dir.join("ca.pem"));
    if a.path || a.rotate {
        out(&format!("{}\n", path.display()))?;
    } else {
        out(ca.cert_pem())?;
    }
    Ok(ExitCode::SUCCESS)
}

fn matrix(a: MatrixArgs) -> Result<ExitCode> {
    use agentwire::capture::matrix::{self, EnvAxis};
    use agentwire::capture::npm::CliSpec;
    let specs = a
        .cli
        .iter()
        .map(|s| CliSpec::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let axes = a
        .env
        .iter()
        .map(|e| EnvAxis::parse(e))
        .collect::<Result<Vec<_>, _>>()?;
    let routes: Vec<agentwire::capture::record::Route> =
        a.route.iter().map(|r| (*r).into()).collect();
    let cells = matrix::plan(&specs, &axes, &routes);
    std::fs::create_dir_all(&a.dir)?;
    let limits = LimitArgs::default();
    let server = server_config("127.0.0.1:0".into(), &ReplyArgs::default(), &limits)?;
    let spinner = std::sync::Arc::new(progress_spinner());
    let sp = spinner.clone();
    let progress: std::sync::Arc<dyn Fn(&str) + Send + Sync> =
        std::sync::Arc::new(move |m: &str| sp.set_message(m.to_string()));
    let results = runtime()?.block_on(matrix::run(
        &cells, &a.dir, &a.args, &server, a.parallel, progress,
    ));
    spinner.finish_and_clear();
    let mut traces = Vec::new();
    let mut failed = false;
    for (cell, (path, r)) in cells.iter().zip(results) {
        match r {
            Ok(o) => {
                eprintln!("{}", o.summary(&path));
                traces.push((cell.label.clone(), Trace::open(&path)?));
            }
            Err(e) => {
                failed = true;
                eprintln!("error: {}: {e:#}", cell.label);
            }
        }
    }
    let runs: Vec<(String, &Trace)> = traces.iter().map(|(l, t)| (l.clone(), t)).collect();
    let m = agentwire::diff::matrix::build(&runs, &agentwire::diff::Normalizer::defaults());
    out(&report::matrix::render_matrix(&m, a.format.into()))?;
    Ok(if failed || !m.problems.is_empty() {
        ExitCode::from(DEGRADED)
    } else {
        ExitCode::SUCCESS
    })
}
