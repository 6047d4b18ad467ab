//! Glue between parsed arguments and the library: one function per subcommand.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use agentwire::report;
use agentwire::trace::Trace;

use crate::cli::{AnalyzeArgs, Cli, Command, ShowArgs};

/// Exit code for a run that finished but met bad input (records skipped).
pub const DEGRADED: u8 = 3;
/// Exit code when a `--fail-on` gate trips.
pub const GATE_FAILED: u8 = 4;

/// Run a parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Show(a) => show(a),
        Command::Analyze(a) => analyze(a),
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

fn analyze(a: AnalyzeArgs) -> Result<ExitCode> {
    use agentwire::analyze::{self, AnalyzeConfig, FailOn, PriceTable};
    let gates = a
        .fail_on
        .iter()
        .map(|e| FailOn::parse(e))
        .collect::<Result<Vec<_>, _>>()?;
    let prices = match &a.prices {
        Some(p) => PriceTable::from_file(p)?,
        None => PriceTable::builtin(),
    };
    let cfg = AnalyzeConfig {
        ttl: a.ttl.into(),
        usage: a.usage.into(),
        prices,
    };
    let paths: Vec<&std::path::Path> = a.traces.iter().map(|p| p.as_path()).collect();
    let result = analyze::analyze_files(&paths, cfg)?;
    out(&report::analyze::render(&result, a.format.into()))?;
    if let Some(dir) = &a.parquet {
        let files = report::parquet::write_tables(&result, dir)?;
        eprintln!("wrote {} Parquet tables to {}", files.len(), dir.display());
    }
    let mut code = ExitCode::SUCCESS;
    for i in &result.inputs {
        if i.bad_lines > 0 {
            eprintln!(
                "warning: {}: {} unreadable lines skipped",
                i.path, i.bad_lines
            );
            code = ExitCode::from(DEGRADED);
        }
        for b in &i.bad_bodies {
            eprintln!("warning: {}: {b}; the request was skipped", i.path);
            code = ExitCode::from(DEGRADED);
        }
    }
    let tripped: Vec<String> = gates
        .iter()
        .filter_map(|g| g.check(&result.summary))
        .collect();
    for t in &tripped {
        eprintln!("{t}");
    }
    if !tripped.is_empty() {
        code = ExitCode::from(GATE_FAILED);
    }
    Ok(code)
}
