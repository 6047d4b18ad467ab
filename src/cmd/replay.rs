//! `agentwire replay`: re-send a trace's requests to a URL and report.

use std::process::ExitCode;

use anyhow::Result;

use agentwire::capture::resend::resend;
use agentwire::input::open_trace;
use agentwire::report;

use super::diag::report_problems;
use super::io::{print_stdout, runtime};
use crate::cli::exit::{exit, ERROR, GATE_TRIPPED};
use crate::cli::{config, ReplayArgs};

pub(super) fn replay(a: ReplayArgs) -> Result<ExitCode> {
    let trace = open_trace(&a.trace)?;
    let summary = runtime()?.block_on(resend(&trace, &config::resend(&a)))?;
    print_stdout(&report::replay::render(&summary, a.format.into()))?;
    for d in summary.dropped_headers() {
        note!("{}: recorded header not sent: {d}", a.trace.display());
    }
    let code = report_problems(&trace);
    if summary.statuses.keys().any(|k| k == "error") {
        error!("some requests got no response (transport errors; see the table)");
        return Ok(exit(ERROR));
    }
    if summary.differing.unwrap_or(0) > 0 {
        return Ok(exit(GATE_TRIPPED));
    }
    Ok(code)
}
