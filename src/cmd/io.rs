//! The output glue the commands share: printing to stdout (a closed pipe ends the run
//! quietly), a command's summary (moved to stderr when stdout carries the output), the
//! live trace of a recorder, shareable reports written through the one output policy
//! ([`agentwire::output`]), and the few steps between a command and the library that
//! report on the way: a server's setup, a diff input's resolution, the tokio runtime.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use agentwire::capture::server::ServerConfig;
use agentwire::output;
use agentwire::trace::{Context, TraceWriter};

use crate::cli::config::{Replayed, ServerSetup};
use crate::cli::exit::usage;
use crate::cli::DocOutputArgs;

/// Print to stdout; a closed pipe surfaces as an io error the binary maps to exit 0.
pub fn print_stdout(text: &str) -> Result<()> {
    let mut o = std::io::stdout().lock();
    o.write_all(text.as_bytes())?;
    o.flush()?;
    Ok(())
}

/// A path as messages name it: `stdout` for `-` (and the other names of stdout).
pub(crate) fn display_name(path: &Path) -> String {
    if output::is_stdout(path) {
        "stdout".into()
    } else {
        path.display().to_string()
    }
}

/// Print a command's summary: on stdout, unless its main output goes to stdout (`-o -`),
/// where the summary would corrupt it; then on stderr.
pub(crate) fn print_summary(text: &str, output: &Path) -> Result<()> {
    if output::is_stdout(output) {
        super::diag::emit_text(text);
        Ok(())
    } else {
        print_stdout(text)
    }
}

/// A server's configuration ([`config::server`], [`config::reply_server`]), and whether
/// the trace it replays had unreadable parts: those are reported on stderr as `show`
/// reports them, followed by how many recorded requests are replayed, so no recorded turn
/// goes missing without a word; the caller exits degraded when it is true.
pub(crate) fn report_setup(setup: ServerSetup) -> Result<(ServerConfig, bool)> {
    let degraded = match &setup.replayed {
        Some(r) => report_replayed(r)?,
        None => false,
    };
    Ok((setup.config, degraded))
}

/// Report a replayed trace's unreadable parts and what of it is replayed; true when it
/// had unreadable parts. Errors: nothing to replay.
fn report_replayed(r: &Replayed) -> Result<bool> {
    let code = super::diag::report_problems_of(&r.path, &r.lines, &r.exchanges);
    r.coverage.check(&r.path)?;
    note!("{}: {}", r.path.display(), r.coverage);
    Ok(code != std::process::ExitCode::SUCCESS)
}

/// A tokio runtime for the commands that serve or send.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?)
}

/// Resolve a `diff`, `report diff` or `prompt` input: a `FILE#N` whose N is no exchange id
/// is a usage error, other failures errors.
pub(crate) fn resolve_input(
    input: &str,
    resolvers: &[&dyn agentwire::diff::InputResolver],
) -> Result<agentwire::diff::Resolved> {
    agentwire::diff::resolve(input, resolvers).map_err(|e| match e {
        e @ agentwire::diff::DiffError::Selector { .. } => usage(e),
        e => e.into(),
    })
}

/// Check a shareable report's output before its inputs are read: it may be replaced only
/// with `--force`, and never when it is one of `inputs`.
pub(crate) fn check_doc_output(o: &DocOutputArgs, inputs: &[PathBuf]) -> Result<()> {
    if let Some(p) = &o.output {
        output::check(p, o.force)?;
    }
    // Without -o the report goes to standard output, which a shell may have pointed at
    // an input.
    let out = o.output.as_deref().unwrap_or(Path::new("-"));
    output::check_not_input(out, inputs)?;
    Ok(())
}

/// Open the trace of a live recorder (`serve`, `capture`): written in place so a crash
/// keeps what was recorded, mode 0600; `-` is standard output.
pub(crate) fn live_trace(path: &Path, force: bool, context: &Context) -> Result<TraceWriter> {
    if output::is_stdout(path) {
        return Ok(TraceWriter::from_writer(
            agentwire::trace::trace_stdout(),
            path,
            context,
        )?);
    }
    output::check(path, force)?;
    Ok(TraceWriter::create(path, context)?)
}

/// Write a shareable report to `-o FILE` (the one output policy: `--force` to overwrite,
/// written whole or not at all) or stdout.
pub(crate) fn write_doc(o: &DocOutputArgs, text: &str) -> Result<()> {
    match &o.output {
        None => print_stdout(text),
        Some(p) if output::is_stdout(p) => print_stdout(text),
        Some(p) => {
            write_file(p, text.as_bytes(), o.force)?;
            message!("wrote {} ({} bytes)", p.display(), text.len());
            Ok(())
        }
    }
}

/// Write `bytes` to `path` through [`agentwire::output::AtomicFile`]: a temporary sibling
/// renamed over `path` when complete; an existing file only with `force`.
pub(crate) fn write_file(path: &Path, bytes: &[u8], force: bool) -> Result<()> {
    let mut f = output::AtomicFile::create(path, force)?;
    f.write_all(bytes)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    f.commit()?;
    Ok(())
}
