//! The command glue: one file per subcommand (as `--help` lists them), converting parsed
//! arguments into library calls and renderer output; shared helpers live here.

mod analyze;
mod ca;
mod capture;
mod diff;
mod matrix;
mod pcap;
mod record;
mod replay;
mod serve;
mod show;

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use agentwire::capture::server::replay::{Replay, Timing};
use agentwire::capture::server::{Mode, Script, ServerConfig};
use agentwire::trace::Trace;

use crate::cli::{Cli, Command, LimitArgs, ReplyArgs};

/// Exit code for a run that finished but met bad input (records skipped).
pub const DEGRADED: u8 = 3;
/// Exit code of `diff` when a `--fail-on` gate tripped.
pub const GATE_TRIPPED: u8 = 4;

/// Run a parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Show(a) => show::show(a),
        Command::Serve(a) => serve::serve(a),
        Command::Record(a) => record::record(a),
        Command::Replay(a) => replay::replay(a),
        Command::Ca(a) => ca::ca(a),
        Command::Diff(a) => diff::diff(a),
        Command::Matrix(a) => matrix::matrix(a),
        Command::Analyze(a) => analyze::analyze(a),
        Command::Pcap(a) => pcap::pcap(a),
        Command::Capture(a) => capture::capture(a),
    }
}

/// Print to stdout; a closed pipe surfaces as an io error the binary maps to exit 0.
pub fn out(text: &str) -> Result<()> {
    let mut o = std::io::stdout().lock();
    o.write_all(text.as_bytes())?;
    o.flush()?;
    Ok(())
}

/// Print `warning: MSG` on stderr, secrets redacted and through the printable filter.
pub fn warn(msg: &str) {
    let msg = agentwire::trace::redact::redact_text(msg);
    eprintln!("warning: {}", agentwire::report::printable_lines(&msg));
}

/// Report a trace's unreadable lines on stderr; returns the exit code they imply.
pub fn report_problems(trace: &Trace) -> ExitCode {
    for p in &trace.problems {
        warn(&format!("{}: {p}", trace.path.display()));
    }
    if trace.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(DEGRADED)
    }
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
        ..ServerConfig::default()
    })
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

/// Check that an output may be written (the one policy: `--force` to overwrite).
pub(crate) fn check_output(path: &std::path::Path, force: bool) -> Result<()> {
    agentwire::output::check(path, force)?;
    Ok(())
}

/// Open the trace of a live recorder (`serve`, `capture`): written in place so a crash
/// keeps what was recorded, mode 0600; `-` is standard output.
pub(crate) fn live_trace(
    path: &std::path::Path,
    force: bool,
    context: &agentwire::trace::Context,
) -> Result<agentwire::trace::TraceWriter> {
    use agentwire::trace::TraceWriter;
    if agentwire::output::is_stdout(path) {
        return Ok(TraceWriter::from_writer(
            Box::new(std::io::stdout()),
            path,
            context,
        )?);
    }
    check_output(path, force)?;
    Ok(TraceWriter::create(path, context)?)
}

/// Print a report: on stdout, or on stderr when stdout carries the trace (`-o -`).
pub(crate) fn report_out(text: &str, output: &std::path::Path) -> Result<()> {
    if agentwire::output::is_stdout(output) {
        eprint!("{text}");
        Ok(())
    } else {
        out(text)
    }
}

pub(crate) fn progress_spinner() -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new_spinner();
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        pb.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}
