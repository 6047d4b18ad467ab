//! Glue between parsed arguments and the library: one function per subcommand.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use agentwire::report;
use agentwire::trace::Trace;

use agentwire::capture::server::{self, Mode, Script, ServerConfig};
use agentwire::trace::{Context, TraceWriter};

use crate::cli::{Cli, Command, LimitArgs, RecordArgs, ServeArgs, ShowArgs};

/// Exit code for a run that finished but met bad input (records skipped).
pub const DEGRADED: u8 = 3;

/// Run a parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Show(a) => show(a),
        Command::Serve(a) => serve(a),
        Command::Record(a) => record(a),
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
    let trace = Trace::open(&a.trace)?;
    let rows = report::show::rows(&trace);
    out(&report::show::render(&rows, a.format.into()))?;
    Ok(report_problems(&trace))
}

fn server_config(
    addr: String,
    script: Option<&std::path::Path>,
    limits: &LimitArgs,
) -> Result<ServerConfig> {
    let mode = match script {
        Some(p) => Mode::Script(std::sync::Arc::new(Script::load(p)?)),
        None => Mode::Stub,
    };
    Ok(ServerConfig {
        addr,
        mode,
        max_body: limits.max_body,
        body_timeout: std::time::Duration::from_secs(limits.body_timeout),
    })
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

fn serve(a: ServeArgs) -> Result<ExitCode> {
    let config = server_config(a.addr, a.script.as_deref(), &a.limits)?;
    let mut context = Context::new();
    context.route = Some("base-url".into());
    runtime()?.block_on(async move {
        let writer = TraceWriter::create(&a.output, &context)?;
        let srv = server::start(config, writer).await?;
        out(&format!("{}\n", srv.base_url()))?;
        eprintln!(
            "agentwire: serving the Messages API on {}; recording to {} (Ctrl-C to stop)",
            srv.base_url(),
            a.output.display()
        );
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

fn record(a: RecordArgs) -> Result<ExitCode> {
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
    let limits = LimitArgs {
        max_body: 32 * 1024 * 1024,
        body_timeout: 30,
    };
    let cfg = RecordConfig {
        args: if a.cli.is_some() {
            a.args.clone()
        } else {
            Vec::new()
        },
        target,
        env,
        server: server_config("127.0.0.1:0".into(), a.script.as_deref(), &limits)?,
        output: a.output.clone(),
        timeout: std::time::Duration::from_secs(a.timeout),
        label: None,
    };
    let spinner = progress_spinner();
    let report = |msg: &str| spinner.set_message(msg.to_string());
    let outcome = runtime()?.block_on(record::record(cfg, &report))?;
    spinner.finish_and_clear();
    out(&format!("{}\n", outcome.summary(&a.output)))?;
    if outcome.timed_out || outcome.exit_code != Some(0) {
        eprintln!(
            "the CLI did not finish cleanly; last output lines:\n{}",
            outcome.output_tail
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// A spinner on stderr (hidden when stderr is not a terminal).
fn progress_spinner() -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new_spinner();
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        pb.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}
