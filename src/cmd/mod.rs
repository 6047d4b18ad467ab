//! The command glue: one file per subcommand (as `--help` lists them), converting parsed
//! arguments into library calls and renderer output; shared helpers live here.

#[macro_use]
pub(crate) mod diag;
mod alloc;
mod analyze;
mod ca;
mod cache;
mod capture;
mod completions;
mod diff;
mod export;
mod history;
mod import;
mod man;
mod matrix;
mod mcp_tap;
mod pcap;
mod prompt;
mod record;
mod replay;
mod report;
mod serve;
mod show;
mod term;

pub use diag::{fail, report_problems, stderr_line, warn, Warnings};
pub(crate) use diag::{note_skipped, report_problems_ok, warn_problems};
pub(crate) use term::{progress_bytes, progress_files, progress_spinner, stdout_color};

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;

use agentwire::capture::server::playback::{Replay, Timing};
use agentwire::capture::server::{Mode, Script, ServerConfig};
use agentwire::input::open_trace;

use crate::cli::{Cli, Command, LimitArgs, ReplyArgs};

/// Exit code when the command could not do its job (see `cli::EXIT_CODES`).
pub const ERROR: u8 = 1;
/// Exit code for a wrong subcommand, flag or value.
pub const USAGE: u8 = 2;
/// Exit code for a run that finished but met bad input (records skipped).
pub const DEGRADED: u8 = 3;
/// Exit code when a check failed: a `--fail-on` gate, or `replay --compare` differences.
pub const GATE_TRIPPED: u8 = 4;

/// An error in what the user typed (a flag's value, a spec): exit [`USAGE`]. Displays the
/// wrapped error's whole chain.
#[derive(Debug, thiserror::Error)]
#[error("{0:#}")]
pub struct UsageError(anyhow::Error);

/// Mark an error as a usage error (exit 2).
pub fn usage(e: impl Into<anyhow::Error>) -> anyhow::Error {
    UsageError(e.into()).into()
}

/// A CLI spec's resolution error as the binary reports it: what the user wrote wrong
/// (syntax, unknown CLI or dist-tag, a range where one version is wanted) is a usage error;
/// registry and download failures are errors.
pub fn npm_error(e: agentwire::capture::npm::NpmError) -> anyhow::Error {
    use agentwire::capture::npm::NpmError as E;
    match e {
        E::BadSpec { .. }
        | E::UnknownCli { .. }
        | E::UnknownTag { .. }
        | E::RangeNotAllowed { .. } => usage(e),
        e => e.into(),
    }
}

/// Resolve a `diff`, `report diff` or `prompt` input: a `FILE#N` whose N is no exchange id
/// is a usage error (exit 2), other failures errors.
pub(crate) fn resolve_input(
    input: &str,
    resolvers: &[&dyn agentwire::diff::InputResolver],
) -> Result<agentwire::diff::Resolved> {
    agentwire::diff::resolve(input, resolvers).map_err(|e| match e {
        e @ agentwire::diff::DiffError::Selector { .. } => usage(e),
        e => e.into(),
    })
}

/// Run a parsed command line.
pub fn run(cli: Cli) -> Result<ExitCode> {
    alloc::tune();
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
        Command::Report(c) => report::report(c),
        Command::Prompt(a) => prompt::prompt(a),
        Command::History(a) => history::history(a),
        Command::Cache(c) => cache::cache(c),
        Command::Completions(a) => completions::completions(a),
        Command::Man(a) => man::man(a),
        Command::McpTap(a) => mcp_tap::mcp_tap(a),
        Command::Import(a) => import::import(a),
        Command::Export(a) => export::export(a),
    }
}

/// Print to stdout; a closed pipe surfaces as an io error the binary maps to exit 0.
pub fn out(text: &str) -> Result<()> {
    let mut o = std::io::stdout().lock();
    o.write_all(text.as_bytes())?;
    o.flush()?;
    Ok(())
}

/// True when an output path means standard output (`-`, `/dev/stdout`, …;
/// [`agentwire::output::is_stdout`]): the command's main output goes to stdout.
pub(crate) fn is_stdout(path: &std::path::Path) -> bool {
    agentwire::output::is_stdout(path)
}

/// A path as messages name it: `stdout` for `-`.
pub(crate) fn shown(path: &std::path::Path) -> String {
    if is_stdout(path) {
        "stdout".into()
    } else {
        path.display().to_string()
    }
}

/// Print a command's summary: on stdout, unless its main output goes to stdout (`-o -`),
/// where the summary would corrupt it; then on stderr.
pub(crate) fn summary(text: &str, output: &std::path::Path) -> Result<()> {
    if is_stdout(output) {
        diag::emit_text(text);
        Ok(())
    } else {
        out(text)
    }
}

/// The server configuration of `--script` / `--replay` and the limits, and whether the
/// replayed trace had unreadable parts. Those are reported on stderr as `show` reports
/// them, followed by how many recorded requests are replayed, so no recorded turn goes
/// missing without a word; the caller exits [`DEGRADED`] when the flag is set.
pub(crate) fn server_config(
    addr: String,
    reply: &ReplyArgs,
    limits: &LimitArgs,
) -> Result<(ServerConfig, bool)> {
    let mut degraded = false;
    let mode = if let Some(p) = &reply.script {
        Mode::Script(std::sync::Arc::new(Script::load(p)?))
    } else if let Some(p) = &reply.replay {
        let timing = Timing::parse(&reply.timing).ok_or_else(|| {
            usage(anyhow::anyhow!(
                "--timing {:?}: use recorded, none, or xN (e.g. x10)",
                reply.timing
            ))
        })?;
        let trace = open_trace(p)?;
        let (exchanges, unreadable) = (trace.exchanges.len(), trace.problems.len());
        degraded = !report_problems_ok(&trace);
        let r = Replay::from_trace(trace, timing);
        if r.is_empty() {
            anyhow::bail!(
                "{}: no /v1/messages exchange with a 200 response to replay",
                p.display()
            );
        }
        let mut why = Vec::new();
        if unreadable > 0 {
            why.push(format!(
                "{} unreadable",
                agentwire::text::fmt::plural(unreadable as u64, "line")
            ));
        }
        if exchanges > r.len() {
            why.push(format!(
                "{} not a /v1/messages request answered 200",
                exchanges - r.len()
            ));
        }
        note!(
            "{}: replaying {} of {} recorded requests{}{}",
            p.display(),
            r.len(),
            exchanges + unreadable,
            if why.is_empty() { "" } else { "; " },
            why.join("; ")
        );
        Mode::Replay(std::sync::Arc::new(r))
    } else {
        Mode::Stub
    };
    let config = ServerConfig {
        addr,
        mode,
        max_body: limits.max_body,
        body_timeout: std::time::Duration::from_secs(limits.body_timeout),
        diagnostics: diag::reporter(),
        ..ServerConfig::default()
    };
    Ok((config, degraded))
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

/// Check a shareable report's output before its inputs are read: it may be replaced only
/// with `--force`, and never when it is one of `inputs`.
pub(crate) fn check_doc_output(
    o: &crate::cli::DocOutputArgs,
    inputs: &[std::path::PathBuf],
) -> Result<()> {
    if let Some(p) = &o.output {
        agentwire::output::check(p, o.force)?;
    }
    // Without -o the report goes to standard output, which a shell may have pointed at
    // an input.
    let out = o.output.as_deref().unwrap_or(std::path::Path::new("-"));
    agentwire::output::check_not_input(out, inputs)?;
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
            agentwire::trace::trace_stdout(),
            path,
            context,
        )?);
    }
    check_output(path, force)?;
    Ok(TraceWriter::create(path, context)?)
}

/// The normalizer of `--rules FILE` / `--no-normalize` (default: the built-in rules).
pub(crate) fn normalizer(
    rules: Option<&std::path::Path>,
    none: bool,
) -> Result<agentwire::api::normalize::Normalizer> {
    use agentwire::api::normalize::Normalizer;
    Ok(match (rules, none) {
        (Some(p), _) => Normalizer::from_file(p)?,
        (None, true) => Normalizer::none(),
        (None, false) => Normalizer::defaults(),
    })
}

/// A normalizer being built while the caller reads its inputs ([`normalizer_soon`]).
pub(crate) enum NormalizerSoon {
    Ready(agentwire::api::normalize::Normalizer),
    Compiling(std::thread::JoinHandle<agentwire::api::normalize::Normalizer>),
}

impl NormalizerSoon {
    /// The normalizer (waits for the compiling thread).
    pub(crate) fn get(self) -> agentwire::api::normalize::Normalizer {
        match self {
            NormalizerSoon::Ready(n) => n,
            NormalizerSoon::Compiling(h) => {
                h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
            }
        }
    }
}

/// [`normalizer`], with the default rules compiled on another thread while the caller
/// reads its inputs (their regexes take a quarter of a whole-process diff of two 1 MB
/// bodies). A rules file is read and checked now, so a bad one fails before anything
/// slow starts.
pub(crate) fn normalizer_soon(
    rules: Option<&std::path::Path>,
    none: bool,
) -> Result<NormalizerSoon> {
    if rules.is_some() || none {
        return Ok(NormalizerSoon::Ready(normalizer(rules, none)?));
    }
    Ok(
        match std::thread::Builder::new()
            .name("agentwire-rules".into())
            .spawn(agentwire::api::normalize::Normalizer::defaults)
        {
            Ok(h) => NormalizerSoon::Compiling(h),
            Err(_) => NormalizerSoon::Ready(agentwire::api::normalize::Normalizer::defaults()),
        },
    )
}

/// The format of a shareable report: `--format`, else the output's extension, else
/// Markdown.
pub(crate) fn doc_format(o: &crate::cli::DocOutputArgs) -> Result<agentwire::report::DocFormat> {
    use agentwire::report::DocFormat;
    if let Some(f) = o.format {
        return Ok(f.into());
    }
    match &o.output {
        None => Ok(DocFormat::Markdown),
        Some(p) => DocFormat::from_path(p).ok_or_else(|| {
            usage(anyhow::anyhow!(
                "{}: cannot tell the format from the extension; name it .html, .md or .json, or pass --format",
                p.display()
            ))
        }),
    }
}

/// Write a shareable report to `-o FILE` (the one output policy: `--force` to overwrite,
/// written whole or not at all) or stdout.
pub(crate) fn write_doc(o: &crate::cli::DocOutputArgs, text: &str) -> Result<()> {
    match &o.output {
        None => out(text),
        Some(p) if agentwire::output::is_stdout(p) => out(text),
        Some(p) => {
            write_file(p, text.as_bytes(), o.force)?;
            message!("wrote {} ({} bytes)", p.display(), text.len());
            Ok(())
        }
    }
}

/// Write `bytes` to `path` through [`agentwire::output::AtomicFile`]: a temporary sibling
/// renamed over `path` when complete; an existing file only with `force`.
pub(crate) fn write_file(path: &std::path::Path, bytes: &[u8], force: bool) -> Result<()> {
    let mut f = agentwire::output::AtomicFile::create(path, force)?;
    f.write_all(bytes)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    f.commit()?;
    Ok(())
}
