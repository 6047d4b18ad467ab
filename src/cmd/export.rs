//! `agentwire export --har`: a trace (or any input agentwire reads) as HAR 1.2, written
//! to a temporary file renamed into place (or to standard output).

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use anyhow::Result;

use agentwire::input::{open_input, InputOptions};
use agentwire::output::AtomicFile;
use agentwire::trace::export::HarWriter;
use agentwire::trace::Record;

use super::diag::Warnings;
use crate::cli::ExportArgs;

pub(super) fn export(a: ExportArgs) -> Result<ExitCode> {
    // Standard output too: a shell may have pointed it at the input.
    agentwire::output::check_not_input(&a.output, &[&a.input])?;
    if agentwire::output::is_stdout(&a.output) {
        let (_, code, _) = write_har(&a, agentwire::text::safe_json::stdout())?;
        return Ok(code);
    }
    let file = AtomicFile::create(&a.output, a.force)?;
    let (n, code, file) = write_har(&a, file)?;
    file.commit()?;
    message!(
        "wrote {} to {}",
        agentwire::text::fmt::plural_irregular(n as u64, "HAR entry", "HAR entries"),
        a.output.display()
    );
    Ok(code)
}

/// Write the HAR of `a.input` to `sink`; the entry count, exit code and the sink.
fn write_har<W: Write>(a: &ExportArgs, sink: W) -> Result<(usize, ExitCode, W)> {
    let mut input = open_input(&a.input, &InputOptions::default())?;
    let name = if agentwire::output::is_stdout(&a.output) {
        "standard output".to_string()
    } else {
        a.output.display().to_string()
    };
    let mut har = HarWriter::new(BufWriter::new(sink), a.base_url.as_str(), &name)?;
    let mut warnings = Warnings::new(&a.input.display().to_string());
    for rec in &mut input {
        match rec? {
            Record::Exchange(x) => har.write(&x)?,
            Record::Bad(p) => warnings.bad_line(&p),
            Record::Header { .. } | Record::Mcp(_) | Record::Other(_) => {}
        }
    }
    warnings.skipped(input.skipped());
    let (n, out) = har.finish()?;
    let sink = out.into_inner().map_err(|e| e.into_error())?;
    Ok((n, warnings.finish(), sink))
}
