//! `agentwire show`: one line per exchange of a trace (or of any input agentwire imports).

use std::process::ExitCode;

use anyhow::Result;

use agentwire::report;
use agentwire::trace::{open_input, InputOptions, Record};

use super::{out, Warnings};
use crate::cli::ShowArgs;

pub(super) fn show(a: ShowArgs) -> Result<ExitCode> {
    // Stream: keep one small row per exchange, never the exchanges themselves.
    let mut builder = report::show::RowBuilder::default();
    let mut rows = Vec::new();
    let mut warnings = Warnings::new(&a.trace.display().to_string());
    let opts = InputOptions {
        since: a.since,
        progress: None,
    };
    let mut input = open_input(&a.trace, &opts)?;
    for rec in &mut input {
        match rec? {
            Record::Exchange(x) => rows.push(builder.row(&x)),
            Record::Bad(p) => warnings.bad_line(&p),
            Record::Header { .. } | Record::Other(_) => {}
        }
    }
    warnings.skipped(input.skipped());
    out(&report::show::render(&rows, a.format.into()))?;
    Ok(warnings.finish())
}
