//! `agentwire export --har`: a trace (or any input agentwire reads) as HAR 1.2.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use agentwire::trace::export::HarWriter;
use agentwire::trace::{open_input, InputOptions, Record};

use super::{check_output, Warnings};
use crate::cli::ExportArgs;

pub(super) fn export(a: ExportArgs) -> Result<ExitCode> {
    let to_stdout = super::is_stdout(&a.output);
    check_output(&a.output, a.force)?;
    // The input is opened before the output; the HAR file is written to a temporary file
    // (owner-only: it holds bodies) and renamed into place only when complete.
    let mut input = open_input(&a.input, &InputOptions::default())?;
    let mut file = None;
    let sink: Box<dyn Write> = if to_stdout {
        Box::new(std::io::stdout().lock())
    } else {
        let f = agentwire::output::AtomicFile::create(&a.output, a.force)?;
        Box::new(file.insert(f).file().try_clone()?)
    };
    let mut har = HarWriter::new(std::io::BufWriter::new(sink), &a.base_url)?;
    let mut warnings = Warnings::new(&a.input.display().to_string());
    for rec in &mut input {
        match rec? {
            Record::Exchange(x) => har.write(&x)?,
            Record::Bad(p) => warnings.bad_line(&p),
            // MCP messages are not HTTP exchanges of this trace: HAR has no place for them.
            Record::Header { .. } | Record::Mcp(_) | Record::Other(_) => {}
        }
    }
    warnings.skipped(input.skipped());
    let (n, sink) = har.finish()?;
    drop(sink);
    if let Some(f) = file {
        f.commit()?;
    }
    if !to_stdout {
        eprintln!("wrote {n} entries to {}", a.output.display());
    }
    Ok(warnings.finish())
}
