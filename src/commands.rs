//! Glue between parsed arguments and the library: one function per subcommand.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use agentwire::report;
use agentwire::trace::Trace;

use crate::cli::{Cli, Command, ShowArgs};

/// Exit code for a run that finished but met bad input (records skipped).
pub const DEGRADED: u8 = 3;

/// Run a parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Show(a) => show(a),
        Command::Pcap(a) => crate::pcap_cmd::pcap(a),
        Command::Capture(a) => crate::pcap_cmd::capture(a),
        Command::Serve(_) | Command::Record(_) => anyhow::bail!("not built yet"),
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
