//! `agentwire replay`: re-send a trace's requests to a URL and report.

use std::process::ExitCode;

use anyhow::Result;

use agentwire::input::open_trace;
use agentwire::report;

use super::{out, report_problems, runtime, GATE_TRIPPED};
use crate::cli::ReplayArgs;

pub(super) fn replay(a: ReplayArgs) -> Result<ExitCode> {
    use agentwire::capture::resend::{resend, ResendConfig};
    let trace = open_trace(&a.trace)?;
    let cfg = ResendConfig {
        to: a.to.clone(),
        concurrency: usize::from(a.concurrency),
        rate: a.rate,
        headers: a.headers.clone(),
        compare: a.compare,
    };
    let summary = runtime()?.block_on(resend(&trace, &cfg))?;
    out(&report::replay::render(&summary, a.format.into()))?;
    for d in summary.dropped_headers() {
        super::stderr_line(
            "note",
            &format!("{}: recorded header not sent: {d}", a.trace.display()),
        );
    }
    let code = report_problems(&trace);
    if summary.statuses.keys().any(|k| k == "error") {
        error!("some requests got no response (transport errors; see the table)");
        return Ok(ExitCode::from(super::ERROR));
    }
    if summary.differing.unwrap_or(0) > 0 {
        return Ok(ExitCode::from(GATE_TRIPPED));
    }
    Ok(code)
}
