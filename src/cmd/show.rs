//! `agentwire show`: one line per exchange of a trace.

use std::process::ExitCode;

use anyhow::Result;

use agentwire::report;

use super::{out, DEGRADED};
use crate::cli::ShowArgs;

pub(super) fn show(a: ShowArgs) -> Result<ExitCode> {
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
                super::warn(&format!("{}: {p}", a.trace.display()));
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
